"""triton.language.extra.smt — SpacemiT's SMT extension (spine-triton), on the CPU.

The packed ("micro-tiled") layout: a 2-D tile X[R, C] packed with (p0, p1) is the 4-D
tile P[ceil(R/p0), ceil(C/p1), p0, p1] with P[i, j, r, c] = X[i*p0 + r, j*p1 + c], zero
where that falls outside X (reference/spine-triton.md §1.2). Packed tiles are ordinary
4-D tiles: element-wise ops, tl.where, reductions, .to(), reshape and permute apply.

Everything here is built from core tile ops: a pack is a reshape and a permute (after
cutting out or zero-padding a window when offsets, shapes or tails ask for it), an
unpack the inverse, and `smt.dot` is `tl.dot` of the unpacked operands packed again.
The compiler folds pack/unpack pairs and carries packed loop accumulators unpacked
(ir_layout.c), so the seed's matmul runs on the same packed micro-kernel as tl.dot.
"""
from __future__ import annotations

from triton.language import core as tl
from triton.language.core import builtin, constexpr, tensor, _unwrap, _to_tensor, _builder

__all__ = ["compile_hint", "parallel", "descriptor_load", "view", "alloc", "alloc_copies", "dot", "mbarrier",
           "mbarrier_copies", "barrier_arrive", "barrier_wait", "get_num_of_thread", "global_mbarrier",
           "barrier_set_expect"]


def _seq(v):
    v = _unwrap(v)
    if isinstance(v, (list, tuple)):
        return [_unwrap(x) for x in v]
    return [v]


def _ints(v, what):
    out = []
    for x in _seq(v):
        if not isinstance(x, int) or isinstance(x, bool):
            raise TypeError(f"{what} entries must be constexpr ints, got {x!r}")
        out.append(x)
    return out


def _cdiv(a, b):
    return -(-a // b)


def _is_zero(o):
    return isinstance(o, int) and not isinstance(o, bool) and o == 0


def _is_block_ptr(x):
    t = _unwrap(x).type if isinstance(_unwrap(x), tensor) else None
    return t is not None and t.is_ptr() and t.element_ty.is_block()


# ---- windows, packs and unpacks of tiles --------------------------------------------------

def _window(x, offsets, shape, tile):
    """The shape[0] x shape[1] window of 2-D tile x at (offsets), zero where it leaves x,
    in a tile of shape `tile` (>= shape, the extra rows and columns zero)."""
    R, C = (int(s) for s in x.shape)
    if all(_is_zero(o) for o in offsets) and list(shape) == [R, C] and list(tile) == [R, C]:
        return x
    for t in tile:
        if t & (t - 1):
            raise ValueError(f"smt.view: a window of {list(shape)} in tiles of {list(tile)} needs power-of-2 "
                             f"tile extents on the CPU")
    buf = alloc([R, C], x.dtype)
    tl.store(buf, x)
    w = tl.load(_reblock(buf, offsets, tile), boundary_check=(0, 1), padding_option="zero")
    if list(shape) != list(tile):
        r = tl.arange(0, tile[0])[:, None]
        c = tl.arange(0, tile[1])[None, :]
        w = tl.where((r < shape[0]) & (c < shape[1]), w, tl.zeros(list(tile), w.dtype))
    return w


def _pack(x, offsets, shape, packed):
    p0, p1 = packed
    t0, t1 = _cdiv(shape[0], p0) * p0, _cdiv(shape[1], p1) * p1
    w = _window(x, offsets, shape, [t0, t1])
    return tl.permute(tl.reshape(w, [t0 // p0, p0, t1 // p1, p1]), (0, 2, 1, 3))


def _unpack_full(x4):
    a, b, q0, q1 = (int(s) for s in x4.shape)
    return tl.reshape(tl.permute(x4, (0, 2, 1, 3)), [a * q0, b * q1])


def _unpack(x4, offsets, shape):
    full = _unpack_full(x4)
    return _window(full, offsets, shape, shape)


# ---- packed block pointers ---------------------------------------------------------------

class _PackedPtr(tensor):
    """A block pointer seen through smt.view: loads give the packed 4-D tile of its
    window, stores take one (xsmt.subview / subview_pack semantics)."""

    def __init__(self, base, offsets, shape, packed):
        super().__init__(base.handle, base.type)
        self.base, self.offsets, self.window, self.packed = base, list(offsets), list(shape), list(packed)
        n0, n1 = _cdiv(shape[0], packed[0]), _cdiv(shape[1], packed[1])
        self.shape = tuple(constexpr(s) for s in (n0, n1, packed[0], packed[1]))

    def _reblocked(self):
        return _reblock(self.base, self.offsets, self.window)

    def __tl_load__(self, boundary_check=(), **_):
        return _pack(tl.load(self._reblocked(), boundary_check=(0, 1), padding_option="zero"), [0, 0],
                     self.window, self.packed)

    def __tl_store__(self, value, **_):
        v = _unwrap(value)
        if len(v.shape) != 4:
            raise ValueError(f"storing through a packed pointer needs a packed (4-D) tile, got shape {list(v.shape)}")
        tl.store(self._reblocked(), _unpack(v, [0, 0], self.window), boundary_check=(0, 1))

    def __tl_advance__(self, offsets):
        return _PackedPtr(self.base, [_add(o, d) for o, d in zip(self.offsets, _seq(offsets))], self.window,
                          self.packed)


def _add(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return tl._binop(tl._ADD, a, b)


def _reblock(bp, offsets, block):
    """A block pointer over bp's tensor at bp's offsets + `offsets`, of block shape `block`."""
    b = _builder()
    return b.wrap(b.c.block_ptr_reblock(_to_tensor(bp).handle, [tl._opnd(o) for o in offsets], list(block)))


# ---- the API ---------------------------------------------------------------------------------

def _deliver(v, destination):
    """v itself, or with a destination (a block pointer, packed or not) None after
    storing v there with boundary checks on every dim."""
    destination = _unwrap(destination)
    if destination is None:
        return v
    if isinstance(destination, _PackedPtr):
        destination.__tl_store__(v)
    else:
        tl.store(destination, v, boundary_check=tuple(range(len(v.shape))))
    return None


@builtin
def descriptor_load(base, offsets, destination=None):
    """tl.load(tl.advance(base, offsets), boundary_check=every dim); with `destination`
    (a block pointer) the tile is stored there instead and None is returned."""
    base = _unwrap(base)
    offs = _seq(offsets)
    if isinstance(base, _PackedPtr):
        v = base.__tl_advance__(offs).__tl_load__()
    else:
        if not _is_block_ptr(base):
            raise TypeError("smt.descriptor_load: base must be a block pointer (tl.make_block_ptr)")
        rank = len(base.type.element_ty.shape)
        if len(offs) != rank:
            raise ValueError(f"smt.descriptor_load: {rank} offsets expected, got {len(offs)}")
        v = tl.load(tl.advance(base, offs), boundary_check=tuple(range(rank)))
    return _deliver(v, destination)


@builtin
def view(base, offsets, shape, packed_size=None, destination=None):
    """Pack, unpack or repack a tile (or view a block pointer packed); see the module
    docstring and reference/spine-triton.md §1.4. With `destination` (a block pointer)
    the result is stored there and None is returned."""
    base = _unwrap(base)
    shape = _ints(shape, "shape")
    packed = _ints(packed_size, "packed_size") if _unwrap(packed_size) is not None else [0] * len(shape)
    offs = _seq(offsets)
    if len(packed) != len(shape):
        raise ValueError(f"smt.view: shape {shape} and packed_size {packed} must have the same length")
    if len(shape) != 2 or len(offs) != 2:
        raise ValueError(f"smt.view takes a 2-D shape and two offsets, got shape {shape} and {len(offs)} offsets")
    if any(p < 0 for p in packed) or (0 in packed and any(packed)):
        raise ValueError(f"smt.view: packed_size {packed} must be positive (or None)")
    if any(s <= 0 for s in shape):
        raise ValueError(f"smt.view: shape {shape} must be positive")
    return _deliver(_view(base, offs, shape, packed), destination)


def _view(base, offs, shape, packed):
    if isinstance(base, _PackedPtr):
        if not any(packed) or packed == base.packed:
            return _PackedPtr(base.base, [_add(o, d) for o, d in zip(base.offsets, offs)], shape, base.packed)
        return _PackedPtr(base.base, [_add(o, d) for o, d in zip(base.offsets, offs)], shape, packed)
    if _is_block_ptr(base):
        rank = len(base.type.element_ty.shape)
        if rank != 2:
            raise ValueError("smt.view on a block pointer needs a 2-D block pointer (or one smt.view made)")
        if not any(packed):
            raise ValueError("smt.view on a 2-D block pointer needs packed_size")
        if shape[0] % packed[0] or shape[1] % packed[1]:
            raise ValueError(f"smt.view on a block pointer: shape {shape} must be a multiple of packed_size {packed}")
        return _PackedPtr(base, offs, shape, packed)
    x = _to_tensor(base)
    rank = len(x.shape)
    if rank == 2:
        if not any(packed) or packed == [1, 1]:
            raise ValueError(f"smt.view of a 2-D tile needs a packed_size other than {packed}")
        return _pack(x, offs, shape, packed)
    if rank != 4:
        raise ValueError(f"smt.view takes a 2-D or a packed 4-D tile, got shape {[int(s) for s in x.shape]}")
    a, b, q0, q1 = (int(s) for s in x.shape)
    if packed == [1, 1]:
        return _unpack(x, offs, shape)
    tile = [q0, q1] if not any(packed) else packed
    if tile == [q0, q1] and shape == [a * q0, b * q1] and all(_is_zero(o) for o in offs):
        return x
    return _pack(_unpack(x, offs, shape), [0, 0], shape, tile)


_ACC = {"fp16": tl.float32, "bf16": tl.float32, "fp32": tl.float32, "fp64": tl.float64}


@builtin
def dot(a, b, out=None):
    """4-D packed matmul (linalg.mmt4d): a [MB, KB, mb, kb] with b [KB, NB, kb, nb] or
    [NB, KB, nb, kb], giving [MB, NB, mb, nb] in a's dtype. fp16/bf16 products are
    accumulated in fp32 and rounded once; `out` is the destination spine-triton
    overwrites (its values are not added)."""
    a, b = _to_tensor(a), _to_tensor(b)
    if len(a.shape) != 4 or len(b.shape) != 4:
        raise ValueError(f"smt.dot takes packed 4-D tiles, got {[int(s) for s in a.shape]} and "
                         f"{[int(s) for s in b.shape]}")
    sa, sb = [int(s) for s in a.shape], [int(s) for s in b.shape]
    mb_, kb_, m0, k0 = sa
    if sa[1] == sb[0] and sa[3] == sb[2]:      # b: [KB, NB, kb, nb]
        nb_, n0 = sb[1], sb[3]
        b2 = tl.reshape(tl.permute(b, (0, 2, 1, 3)), [kb_ * k0, nb_ * n0])
    elif sa[1] == sb[1] and sa[3] == sb[3]:    # b: [NB, KB, nb, kb]
        nb_, n0 = sb[0], sb[2]
        b2 = tl.reshape(tl.permute(b, (1, 3, 0, 2)), [kb_ * k0, nb_ * n0])
    else:
        raise ValueError(f"Unsupported packing shapes for smt.dot: a {sa}, b {sb} (b must be [KB, NB, kb, nb] "
                         f"or [NB, KB, nb, kb])")
    if a.dtype != b.dtype:
        raise TypeError(f"smt.dot: both operands must have the same dtype, got {a.dtype} and {b.dtype}")
    a2 = _unpack_full(a)
    name = a.dtype.name
    if a.dtype.is_int():
        c2 = tl.dot(a2, b2)
    else:
        if name not in _ACC:
            raise TypeError(f"smt.dot: unsupported dtype {a.dtype}")
        c2 = tl.dot(a2, b2, out_dtype=_ACC[name])
    if c2.dtype != a.dtype:
        c2 = c2.to(a.dtype)
    out = _unwrap(out)
    if out is not None and [int(s) for s in _to_tensor(out).shape] != [mb_, nb_, m0, n0]:
        raise ValueError(f"smt.dot: out has shape {[int(s) for s in _to_tensor(out).shape]}, the product "
                         f"{[mb_, nb_, m0, n0]}")
    return tl.permute(tl.reshape(c2, [mb_, m0, nb_, n0]), (0, 2, 1, 3))


@builtin
def alloc(shape, type=tl.float32, storage="l2"):
    """A local buffer of `shape` (row-major) and `type`, private to the program, as a
    block pointer over the whole buffer; `storage` is recorded."""
    shape = _ints(shape, "shape")
    dt = _unwrap(type)
    st = _unwrap(storage)
    if not isinstance(st, str):
        raise TypeError(f"smt.alloc: storage must be a string, got {st!r}")
    b = _builder()
    base = b.wrap(b.c.smt_alloc(shape, dt.code, st))
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return tl.make_block_ptr(base=base, shape=shape, strides=strides, offsets=[0] * len(shape), block_shape=shape,
                             order=list(range(len(shape) - 1, -1, -1)))


class _Buffers:
    """smt.alloc_copies: `copies` buffers of one shape; buf[i] is a block pointer to copy i."""

    def __init__(self, base, shape, copies):
        self.base, self.shape, self.copies = base, shape, copies
        self.numel = 1
        for s in shape:
            self.numel *= s

    def __getitem__(self, i):
        i = _unwrap(i)
        if isinstance(i, int) and not 0 <= i < self.copies:
            raise IndexError(f"smt.alloc_copies: index {i} out of range [0, {self.copies})")
        ptr = tl._binop(tl._ADD, self.base, i * self.numel)
        strides = [1] * len(self.shape)
        for k in range(len(self.shape) - 2, -1, -1):
            strides[k] = strides[k + 1] * self.shape[k + 1]
        return tl.make_block_ptr(base=ptr, shape=self.shape, strides=strides, offsets=[0] * len(self.shape),
                                 block_shape=self.shape, order=list(range(len(self.shape) - 1, -1, -1)))


@builtin
def alloc_copies(shape, dtype=tl.float32, storage="l2", copies=1):
    shape = _ints(shape, "shape")
    copies = _unwrap(copies)
    if not isinstance(copies, int) or copies < 1:
        raise ValueError(f"smt.alloc_copies: copies must be a positive int, got {copies!r}")
    b = _builder()
    base = b.wrap(b.c.smt_alloc([copies] + shape, _unwrap(dtype).code, _unwrap(storage)))
    return _Buffers(base, shape, copies)


class parallel(tl.range):
    """for i in smt.parallel(start, end, step): iterations are independent (a loop that
    carries a value from one iteration to the next is an error). With bind_sub_block
    (the default) they run on the launch's idle threads when the grid has fewer programs
    than threads, else on the program's thread (docs/runtime.md §4.6); with
    bind_sub_block=False the loop is an ordinary range."""

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None, bind_sub_block=True):
        super().__init__(arg1, arg2, step, num_stages=num_stages, loop_unroll_factor=loop_unroll_factor)
        self.bind_sub_block = bind_sub_block


@builtin
def compile_hint(ptr, hint_name, hint_val=None):
    """Accepted and checked as spine-triton checks it; the CPU backend has no use for it."""
    name, val = _unwrap(hint_name), _unwrap(hint_val)
    if not isinstance(name, str):
        raise TypeError(f"smt.compile_hint: hint_name must be a string, got {name!r}")
    if val and not isinstance(val, (bool, int)):
        raise ValueError(f"smt.compile_hint: hint_val must be a bool or an int, got {val!r}")
    return None


# Barriers synchronise SMT's asynchronous copies with the matrix engine. On the CPU every
# smt op is synchronous and complete when the next statement runs, so a barrier has
# nothing to wait for: they are accepted and do nothing (global_mbarrier raises, as in
# spine-triton).

@builtin
def mbarrier(flag=0, arrive_count=0, transaction_count=0, expect_count=1):
    return tl.cast(_to_tensor(0), tl.int64)


@builtin
def mbarrier_copies(flag=0, arrive_count=0, transaction_count=0, expect_count=1, copies=1):
    copies = _unwrap(copies)
    return [mbarrier() for _ in range(copies)]


@builtin
def barrier_arrive(bar):
    return None


@builtin
def barrier_wait(bar, flag=0, arrive_count=0):
    return None


@builtin
def barrier_set_expect(bar, expect_count=1):
    return None


@builtin
def global_mbarrier(id):
    raise NotImplementedError("smt.global_mbarrier is not implemented (spine-triton does not lower it either)")


@builtin
def get_num_of_thread():
    raise NotImplementedError("smt.get_num_of_thread: the CPU backend does not pass the launch's thread count "
                              "into kernels; use tl.num_programs() to size work")
