"""Runtime errors (upstream's names), all triton.TritonError subclasses."""
from triton.errors import TritonError


class OutOfResources(TritonError):
    def __init__(self, required, limit, name):
        self.required, self.limit, self.name = required, limit, name
        super().__init__(f"out of resource: {name}, Required: {required}, Hardware limit: {limit}")


class PTXASError(TritonError):
    pass


class InterpreterError(TritonError):
    """Raised by upstream's interpreter; Tritium compiles, so it raises CompilationError."""

    def __init__(self, error_message=None):
        self.error_message = error_message
        super().__init__(error_message)
