"""Combine functions of the standard scans (upstream's triton.language.standard names),
as @jit helpers the code generator inlines into scan regions."""
from triton.runtime.jit import jit


@jit
def _sum_combine(a, b):
    return a + b


@jit
def _prod_combine(a, b):
    return a * b


@jit
def _pick_first(a, b):
    return a
