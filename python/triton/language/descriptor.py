"""Device-side tensor descriptors: tl.make_tensor_descriptor, desc.load / desc.store,
tl.load_tensor_descriptor / tl.store_tensor_descriptor (upstream's names).

A descriptor is a global tensor (base pointer, shape, strides) read and written in
blocks of a fixed shape at run-time offsets, out-of-bounds elements padded (loads) or
skipped (stores). On a CPU that is exactly a block pointer with every dim boundary
checked, so a descriptor builds one per access (docs/compiler.md: block pointers).

A host descriptor (triton.tools.tensor_descriptor.TensorDescriptor) passed to a kernel
arrives as the kernel parameters arg_types() lists: the base pointer, then the shape
and stride entries the specialisation did not make constants (python/src/py_desc.c
keys and packs them); from_args() turns them back into a tensor_descriptor.
"""
from . import core as tl


def _ints(v):
    v = tl._unwrap(v)
    return list(v) if isinstance(v, (list, tuple)) else [v]


# element types of descriptor atomics (upstream's: what a TMA reduction or its fallback takes)
_INTS = {"int32", "uint32", "int64", "uint64"}
_REDUCE_DTYPES = {"add": {"int32", "uint32", "uint64", "fp32", "fp16", "bf16"}, "min": _INTS, "max": _INTS,
                  "and": _INTS, "or": _INTS, "xor": _INTS}


class tensor_descriptor:
    """What tl.make_tensor_descriptor returns inside a kernel."""

    def __init__(self, base, shape, strides, block_shape, padding_option="zero"):
        self.base = base
        self.shape = _ints(shape)
        self.strides = _ints(strides)
        self.block_shape = [int(tl._unwrap(s)) for s in _ints(block_shape)]
        self.padding_option = tl._unwrap(padding_option)
        if not (len(self.shape) == len(self.strides) == len(self.block_shape)):
            raise ValueError("make_tensor_descriptor: shape, strides and block_shape must have the same rank")
        ety = tl._to_tensor(base).dtype
        if not ety.is_ptr():
            raise TypeError("make_tensor_descriptor: base must be a pointer")
        self.dtype = ety.element_ty

    def _block_ptr(self, offsets):
        offs = _ints(offsets)
        if len(offs) != len(self.shape):
            raise ValueError(f"descriptor of rank {len(self.shape)} indexed with {len(offs)} offsets")
        order = list(range(len(self.shape) - 1, -1, -1))
        return tl.make_block_ptr(self.base, self.shape, self.strides, offs, self.block_shape, order)

    @tl.builtin
    def load(self, offsets):
        pad = "nan" if self.padding_option == "nan" else "zero"
        return tl.load(self._block_ptr(offsets), boundary_check=tuple(range(len(self.shape))), padding_option=pad)

    @tl.builtin
    def store(self, offsets, value):
        value = tl._to_tensor(value)
        if value.dtype != self.dtype:
            value = tl.cast(value, self.dtype)
        return tl.store(self._block_ptr(offsets), value, boundary_check=tuple(range(len(self.shape))))


    def _elements(self, offsets):
        """Pointers to every element of the block at offsets and the mask of those
        inside the tensor (the element-wise form the atomics need)."""
        offs = _ints(offsets)
        rank = len(self.shape)
        if len(offs) != rank:
            raise ValueError(f"descriptor of rank {rank} indexed with {len(offs)} offsets")
        ptrs, mask = self.base, None
        for j in range(rank):
            idx = tl.arange(0, self.block_shape[j]) + offs[j]
            for k in range(rank):
                if k != j:
                    idx = tl.expand_dims(idx, k)
            ptrs = ptrs + idx.to(tl.int64) * self.strides[j]
            inside = (idx >= 0) & (idx < self.shape[j])
            mask = inside if mask is None else mask & inside
        return ptrs, mask

    def _reduce(self, kind, fn, offsets, value):
        if self.dtype.name not in _REDUCE_DTYPES[kind]:
            raise TypeError(f"tensor descriptor atomic_{kind} does not support {self.dtype.name} (supported: "
                            f"{', '.join(sorted(_REDUCE_DTYPES[kind]))})")
        ptrs, mask = self._elements(offsets)
        value = tl._to_tensor(value)
        if value.dtype != self.dtype:
            value = tl.cast(value, self.dtype)
        fn(ptrs, value, mask=mask)

    @tl.builtin
    def atomic_add(self, offsets, value):
        self._reduce("add", tl.atomic_add, offsets, value)

    @tl.builtin
    def atomic_min(self, offsets, value):
        self._reduce("min", tl.atomic_min, offsets, value)

    @tl.builtin
    def atomic_max(self, offsets, value):
        self._reduce("max", tl.atomic_max, offsets, value)

    @tl.builtin
    def atomic_and(self, offsets, value):
        self._reduce("and", tl.atomic_and, offsets, value)

    @tl.builtin
    def atomic_or(self, offsets, value):
        self._reduce("or", tl.atomic_or, offsets, value)

    @tl.builtin
    def atomic_xor(self, offsets, value):
        self._reduce("xor", tl.atomic_xor, offsets, value)


_PLAIN, _DIV16, _ONE = 0, 1, 2  # int facts of a shape/stride entry (py_desc.c)


def _spec_parts(spec):
    """("tensordesc", dtype code, block_shape, padding, shape facts, stride facts, base aligned)"""
    _, code, block, padding, sf, tf, aligned = spec
    return tl._DTYPES[code], list(block), padding, list(sf), list(tf), aligned


def arg_types(spec):
    """(tl type, divisibility) of each kernel parameter a descriptor argument passes."""
    dt, _, _, sf, tf, aligned = _spec_parts(spec)
    out = [(tl.pointer_type(dt), 16 if aligned else 0)]
    out += [(tl.int64, 16 if f == _DIV16 else 0) for f in sf + tf if f != _ONE]
    return out


def arg_mask(spec):
    """Which shape (bit j) and stride (bit 5 + j) entries are passed: the launcher's plan."""
    _, _, _, sf, tf, _ = _spec_parts(spec)
    m = 0
    for j, f in enumerate(sf):
        m |= (f != _ONE) << j
    for j, f in enumerate(tf):
        m |= (f != _ONE) << (5 + j)
    return m


def spec_of_signature(ty):
    """The spec entry of upstream's signature spelling "tensordesc<fp32[16, 32]>" (an
    optional ",padding=nan" inside the brackets picks NaN padding): every shape and
    stride entry passed, the last stride 1, no alignment assumed."""
    import re
    m = re.fullmatch(r"tensordesc<\s*(\w+)\s*\[([\d,\s]+)\]\s*(?:,\s*padding\s*=\s*(zero|nan)\s*)?>", ty.strip())
    if not m:
        raise ValueError(f"malformed tensor descriptor signature {ty!r} (expected e.g. 'tensordesc<fp32[16, 32]>')")
    dt = tl.str_to_ty(m.group(1))
    block = tuple(int(b) for b in m.group(2).split(",") if b.strip())
    if not 1 <= len(block) <= 5 or any(b < 1 or b & (b - 1) for b in block):
        raise ValueError(f"{ty!r}: the block shape needs 1 to 5 powers of two")
    r = len(block)
    return ("tensordesc", dt.code, block, m.group(3) or "zero", (_PLAIN, ) * r, (_PLAIN, ) * (r - 1) + (_ONE, ), 0)


def from_args(spec, values):
    """The in-kernel descriptor of a host descriptor argument whose parameters are values."""
    _, block, padding, sf, tf, _ = _spec_parts(spec)
    it = iter(values[1:])
    shape = [1 if f == _ONE else next(it) for f in sf]
    strides = [1 if f == _ONE else next(it) for f in tf]
    return tensor_descriptor(values[0], shape, strides, block, padding)


@tl.builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    desc = tensor_descriptor(base, shape, strides, block_shape, padding_option)
    # upstream's rules for a device descriptor (a TMA descriptor's), kept so kernels
    # that compile here compile there
    ndim = len(desc.block_shape)
    if not 1 <= ndim <= 5:
        raise ValueError(f"Expected 1 <= ndim <= 5 but got {ndim} dimensions")
    elem = desc.dtype.primitive_bitwidth // 8
    if desc.block_shape[-1] * elem < 16:
        raise ValueError(f"Descriptor block shape must have at least 16 bytes in the last dimension, but got "
                         f"{desc.block_shape[-1]} * {elem} = {desc.block_shape[-1] * elem} bytes")
    last = tl._unwrap(desc.strides[-1])
    if isinstance(last, int) and last != 1:
        raise ValueError(f"Tensor descriptor last dim must be 1 but got {last}")
    return desc


@tl.builtin
def load_tensor_descriptor(desc, offsets):
    return desc.load(offsets)


@tl.builtin
def store_tensor_descriptor(desc, offsets, value):
    return desc.store(offsets, value)
