"""triton.compiler: the ahead-of-time API and compilation errors."""
from .compiler import ASTSource, CompiledKernel, compile
from .errors import CompilationError, CompileTimeAssertionFailure

__all__ = ["ASTSource", "CompiledKernel", "compile", "CompilationError", "CompileTimeAssertionFailure"]
