"""Combine functions of the standard scans (upstream's triton.language.standard names),
as @jit helpers the code generator inlines into scan regions."""
from triton.runtime.jit import jit

from . import core as tl


@jit
def _sum_combine(a, b):
    return a + b


@jit
def _prod_combine(a, b):
    return a * b


@jit
def _pick_first(a, b):
    return a


@jit
def atomic_poll(pointer, value, sem=None, scope=None, timeout_ns=None):
    """Reads *pointer atomically until it equals value; returns whether it did. With
    timeout_ns, gives up after about that many nanoseconds, counted as polls of ~50 ns
    (a CPU kernel has no global timer); timeout_ns=0 reads once."""
    # an atomic read: compare-and-swap of value with itself changes nothing
    v = tl.atomic_cas(pointer, value, value, sem=sem, scope=scope)
    if timeout_ns is None:
        while v != value:
            v = tl.atomic_cas(pointer, value, value, sem=sem, scope=scope)
    else:
        n = timeout_ns // 50
        while v != value and n > 0:
            v = tl.atomic_cas(pointer, value, value, sem=sem, scope=scope)
            n -= 1
    return v == value
