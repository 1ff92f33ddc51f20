"""States (upstream `proton.state`). On the CPU backend a state is recorded as a scope
named after it, so work done while it is active is grouped under that name."""
from .scope import scope, enter_scope, exit_scope

COMPUTE_METADATA_SCOPE_NAME = "__proton_launch_metadata"


class state(scope):
    __slots__ = ()


def enter_state(name: str) -> None:
    enter_scope(name)


def exit_state() -> None:
    exit_scope()


class metadata_state(scope):
    __slots__ = ()

    def __init__(self, kernel_name=None):
        super().__init__(COMPUTE_METADATA_SCOPE_NAME if kernel_name is None
                         else f"{COMPUTE_METADATA_SCOPE_NAME}:{kernel_name}")
