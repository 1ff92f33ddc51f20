"""tl.rand / tl.randn / tl.randint / tl.randint4x / tl.rand4x / tl.randn4x: counter-based
random numbers from Philox-4x32 (Salmon et al., "Parallel random numbers: as easy as
1, 2, 3", SC'11), with upstream Triton's contract so the same seed and offsets give the
same bits: key = (seed low 32 bits, seed high 32 bits), counter = (offset low, offset
high, 0, 0), 10 rounds; randint is the first output word; a uniform float is the word
read as int32, folded to non-negative by ~x and scaled by 4.6566127342e-10; a normal
is Box-Muller on the first two uniforms. Written as @jit helpers that kernels inline.
"""
from triton.runtime.jit import jit

from . import core as tl

N_ROUNDS_DEFAULT = tl.constexpr(10)
_M0 = tl.constexpr(0xD2511F53)   # multiplier of counter word 0
_M1 = tl.constexpr(0xCD9E8D57)   # multiplier of counter word 2
_W0 = tl.constexpr(0x9E3779B9)   # key schedule (Weyl) increments
_W1 = tl.constexpr(0xBB67AE85)


@jit
def _philox(c0, c1, c2, c3, k0, k1, n_rounds: tl.constexpr):
    for _ in tl.static_range(n_rounds):
        p0 = c0
        p2 = c2
        c0 = tl.umulhi(p2, _M1) ^ c1 ^ k0
        c2 = tl.umulhi(p0, _M0) ^ c3 ^ k1
        c1 = p2 * _M1
        c3 = p0 * _M0
        k0 = k0 + _W0
        k1 = k1 + _W1
    return c0, c1, c2, c3


@jit
def philox(seed, c0, c1, c2, c3, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Philox-4x32 of the counter (c0..c3, 32-bit) under the key made of the 64-bit seed."""
    s = tl.to_tensor(seed).to(tl.uint64)
    k0 = (s & 0xFFFFFFFF).to(tl.uint32)
    k1 = (s >> 32).to(tl.uint32)
    return _philox(c0.to(tl.uint32, bitcast=True), c1.to(tl.uint32, bitcast=True), c2.to(tl.uint32, bitcast=True),
                   c3.to(tl.uint32, bitcast=True), k0, k1, n_rounds)


@jit
def randint4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random uint32 for a seed and a block of offsets."""
    lo = offset.to(tl.uint32)
    zero = lo * 0
    if tl.constexpr(offset.dtype.primitive_bitwidth > 32):
        hi = (offset >> 32).to(tl.uint32)
    else:
        hi = zero
    return philox(seed, lo, hi, zero, zero, n_rounds)


@jit
def randint(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A block of random uint32 (the first word of randint4x)."""
    r, _, _, _ = randint4x(seed, offset, n_rounds)
    return r


@jit
def uint_to_uniform_float(x):
    """A random 32-bit word to a float32 in [0, 1)."""
    i = x.to(tl.int32, bitcast=True)
    i = tl.where(i < 0, ~i, i)
    return i.to(tl.float32) * 4.6566127342e-10


@jit
def rand(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A block of float32 uniform in [0, 1)."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@jit
def rand4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    a, b, c, d = randint4x(seed, offset, n_rounds)
    return uint_to_uniform_float(a), uint_to_uniform_float(b), uint_to_uniform_float(c), uint_to_uniform_float(d)


@jit
def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two uniforms to two standard normals."""
    u1 = tl.maximum(1.0e-7, u1)
    th = 6.283185307179586 * u2
    r = tl.sqrt(-2.0 * tl.log(u1))
    return r * tl.cos(th), r * tl.sin(th)


@jit
def randn(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A block of float32 drawn from N(0, 1)."""
    a, b, _, _ = randint4x(seed, offset, n_rounds)
    n, _ = pair_uniform_to_normal(uint_to_uniform_float(a), uint_to_uniform_float(b))
    return n


@jit
def randn4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4
