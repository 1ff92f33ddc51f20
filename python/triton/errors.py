"""triton.TritonError: the base class of the errors Triton raises (upstream's name)."""


class TritonError(Exception):
    """Base of CompilationError, OutOfResources, InterpreterError and friends."""
