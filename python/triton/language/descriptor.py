"""Device-side tensor descriptors: tl.make_tensor_descriptor, desc.load / desc.store,
tl.load_tensor_descriptor / tl.store_tensor_descriptor (upstream's names).

A descriptor is a global tensor (base pointer, shape, strides) read and written in
blocks of a fixed shape at run-time offsets, out-of-bounds elements padded (loads) or
skipped (stores). On a CPU that is exactly a block pointer with every dim boundary
checked, so a descriptor builds one per access (docs/compiler.md: block pointers).
"""
from . import core as tl


def _ints(v):
    v = tl._unwrap(v)
    return list(v) if isinstance(v, (list, tuple)) else [v]


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


@tl.builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    return tensor_descriptor(base, shape, strides, block_shape, padding_option)


@tl.builtin
def load_tensor_descriptor(desc, offsets):
    return desc.load(offsets)


@tl.builtin
def store_tensor_descriptor(desc, offsets, value):
    return desc.store(offsets, value)
