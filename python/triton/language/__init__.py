"""triton.language (tl): the kernel DSL."""
from . import core, math, extra  # noqa: F401
from .core import (
    PropagateNan, abs, advance, arange, argmax, argmin, associative_scan, assume, atomic_add, atomic_and,
    atomic_cas, atomic_max, atomic_min, atomic_or, atomic_xchg, atomic_xor, bfloat16, block_type, broadcast,
    broadcast_to, builtin, cast, condition, const, cat, cdiv, ceil, clamp, constexpr, cos, cumprod, cumsum, debug_barrier, device_assert,
    device_print, dot, dot_scaled, dtype, erf, gather, histogram, interleave, item, exp, exp2, expand_dims, fdiv, float16, float32, float64, floor, fma, full,
    full_like, int1, int8, int16, int32, int64, join, load, log, log2, make_block_ptr, map_elementwise, max, max_constancy,
    max_contiguous, maximum, min, minimum, multiple_of, num_programs, permute, pointer_type, program_id, range,
    pi32_t, ravel, reduce, reduce_and, reduce_or, reshape, rsqrt, sigmoid, sin, softmax, split, splat, squeeze, sqrt, sqrt_rn,
    static_assert, static_print, static_range, store, str_to_ty, sum, tanh, tensor, trans, uint8, uint16, uint32,
    uint64, umulhi, unsqueeze, view, void, where, xor_sum, zeros, zeros_like, div_rn, to_tensor,
)
from .descriptor import (  # noqa: F401
    load_tensor_descriptor, make_tensor_descriptor, store_tensor_descriptor, tensor_descriptor,
)
from .standard import atomic_poll  # noqa: F401
from .sort import flip, sort  # noqa: F401
from .random import (  # noqa: F401
    pair_uniform_to_normal, philox, rand, rand4x, randint, randint4x, randn, randn4x, uint_to_uniform_float,
)

from .core import float8e4b8, float8e4b15, float8e4nv, float8e5, float8e5b16  # noqa: F401
TRITON_MAX_TENSOR_NUMEL = 1048576
