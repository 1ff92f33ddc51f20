"""Errors raised while compiling a kernel, located at the user's source line."""
from __future__ import annotations

from triton.errors import TritonError


class CompilationError(TritonError):
    """A mistake in a kernel: `file:line:col: message`, the source line and a caret."""

    def __init__(self, jitfn, node, message):
        self.filename = getattr(jitfn, "file", "<unknown>")
        line0 = getattr(jitfn, "def_line", 1)
        rel = getattr(node, "lineno", 1) or 1
        self.lineno = line0 + rel - 1
        self.col = (getattr(node, "col_offset", 0) or 0) + 1
        self.error_message = message
        lines = getattr(jitfn, "src", "").splitlines()
        self.src_line = lines[rel - 1] if 0 < rel <= len(lines) else ""
        self.src = getattr(jitfn, "src", "")
        self.node = node
        super().__init__(self._format())

    def _format(self):
        text = f"{self.filename}:{self.lineno}:{self.col}: {self.error_message}"
        if self.src_line:
            stripped = self.src_line.rstrip()
            text += f"\n    {stripped}\n    {' ' * (self.col - 1)}^"
        return text

    @classmethod
    def at(cls, jitfn, line, col, message):
        """An error at absolute source line/column (from C diagnostics)."""
        class _Loc:
            pass
        n = _Loc()
        n.lineno = line - getattr(jitfn, "def_line", 1) + 1
        n.col_offset = max(col - 1, 0)
        return cls(jitfn, n, message)

    def __reduce__(self):
        return (Exception, (str(self),))


class CompileTimeAssertionFailure(CompilationError):
    pass


class UnsupportedLanguageConstruct(CompilationError):
    pass
