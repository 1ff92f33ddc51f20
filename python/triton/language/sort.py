"""tl.sort and tl.flip, built from existing tile ops: a bitonic compare-exchange network
along the last dim. Each exchange step pairs element i with i ^ j by reshaping the dim to
[.., 2, j], moving the 2-axis last and splitting it; no new IR op is needed. Floats sort
with NaN greater than every number (torch.sort's order: last ascending, first descending)."""
import builtins as _py

from . import core as tl
from .core import _member, _to_tensor, _unwrap, builtin


def _pow2_extent(x, dim, what):
    n = int(x.shape[dim])
    if n < 1 or n & (n - 1):
        raise ValueError(f"{what}: dim {dim} has size {n}; it must be a power of two")
    return n


def _to_last(x, dim):
    """x with dim moved last and the others flattened: ([outer, n], restore function)."""
    r = len(x.shape)
    dim = dim + r if dim < 0 else dim
    if not 0 <= dim < r:
        raise ValueError(f"dim {dim} out of range for a rank-{r} tensor")
    order = [d for d in _py.range(r) if d != dim] + [dim]
    moved = tl.permute(x, order) if order != list(_py.range(r)) else x
    shape = [int(s) for s in moved.shape]
    outer = 1
    for s in shape[:-1]:
        outer *= s
    flat = tl.reshape(moved, [outer, shape[-1]])
    inverse = [order.index(d) for d in _py.range(r)]

    def restore(y):
        y = tl.reshape(y, shape)
        return tl.permute(y, inverse) if order != list(_py.range(r)) else y
    return flat, dim, restore


def _halves(x, j):
    """[outer, n] -> (lo, hi), each [outer, n / (2j), j]: the elements at i and i + j for the
    i whose bit j is clear."""
    outer, n = int(x.shape[0]), int(x.shape[1])
    t = tl.permute(tl.reshape(x, [outer, n // (2 * j), 2, j]), [0, 1, 3, 2])
    return tl.split(t)


def _unhalves(lo, hi):
    outer, m, j = (int(s) for s in lo.shape)
    t = tl.permute(tl.join(lo, hi), [0, 1, 3, 2])
    return tl.reshape(t, [outer, m * 2 * j])


def _greater(a, b):
    """a > b, with NaN above every number (for floats)."""
    if not a.dtype.is_floating():
        return a > b
    return (a > b) | ((a != a) & (b == b))


@_member
@builtin
def flip(x, dim=None):
    """x reversed along dim (default the last); the dim's size must be a power of two."""
    x = _to_tensor(x)
    dim = len(x.shape) - 1 if _unwrap(dim) is None else int(_unwrap(dim))
    flat, dim, restore = _to_last(x, dim)
    n = _pow2_extent(x, dim, "flip")
    j = 1
    while j < n:  # i -> i ^ j for every bit: i -> n - 1 - i
        lo, hi = _halves(flat, j)
        flat = _unhalves(hi, lo)
        j *= 2
    return restore(flat)


@_member
@builtin
def sort(x, dim=None, descending=False):
    """x sorted along dim (only the last dim, as upstream), ascending unless descending."""
    x = _to_tensor(x)
    r = len(x.shape)
    dim = r - 1 if _unwrap(dim) is None else int(_unwrap(dim))
    if dim + (r if dim < 0 else 0) != r - 1:
        raise ValueError(f"sort: only the last dim can be sorted, got dim={dim}")
    descending = bool(_unwrap(descending))
    flat, dim, restore = _to_last(x, dim)
    n = _pow2_extent(x, dim, "sort")
    idx = tl.reshape(tl.arange(0, n), [1, n])
    k = 2
    while k <= n:  # bitonic merges of blocks of k
        j = k // 2
        while j >= 1:
            lo, hi = _halves(flat, j)
            ilo, _ = _halves(idx, j)
            # blocks alternate direction: a block with bit k set runs the other way
            down = ((ilo & k) == 0) if descending else ((ilo & k) != 0)
            swap = _greater(lo, hi) != down
            flat = _unhalves(tl.where(swap, hi, lo), tl.where(swap, lo, hi))
            j //= 2
        k *= 2
    return restore(flat)
