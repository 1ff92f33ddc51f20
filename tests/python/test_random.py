"""tl.randint / randint4x / rand / randn against an independent numpy Philox-4x32-10 (written
from the paper's round function) and the published Random123 known-answer vectors, so the
bits match upstream Triton's for the same seed and offsets."""
import numpy as np
import pytest
import torch

import triton
import triton.language as tl

M64 = (1 << 64) - 1


def philox4x32_10(ctr, key):
    """ctr: 4 uint32 arrays, key: 2 uint32 arrays (broadcastable); returns 4 uint32 arrays."""
    c = [np.asarray(x, dtype=np.uint64) for x in ctr]
    k0, k1 = (np.asarray(x, dtype=np.uint64) for x in key)
    for _ in range(10):
        p0 = c[0] * np.uint64(0xD2511F53)
        p1 = c[2] * np.uint64(0xCD9E8D57)
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & np.uint64(0xFFFFFFFF), p1 & np.uint64(0xFFFFFFFF),
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & np.uint64(0xFFFFFFFF), p0 & np.uint64(0xFFFFFFFF)]
        k0 = (k0 + np.uint64(0x9E3779B9)) & np.uint64(0xFFFFFFFF)
        k1 = (k1 + np.uint64(0xBB67AE85)) & np.uint64(0xFFFFFFFF)
    return [x.astype(np.uint32) for x in c]


def test_reference_matches_random123_known_answers():
    z = [np.uint32(0)] * 4
    assert [int(x) for x in philox4x32_10(z, z[:2])] == [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    f = [np.uint32(0xFFFFFFFF)] * 4
    assert [int(x) for x in philox4x32_10(f, f[:2])] == [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]


def ref_words(seed, offsets):
    s = seed & M64
    off = offsets.astype(np.int64).view(np.uint64)
    ctr = [off & np.uint64(0xFFFFFFFF), off >> np.uint64(32), np.zeros_like(off), np.zeros_like(off)]
    key = [np.uint64(s & 0xFFFFFFFF), np.uint64(s >> 32)]
    return philox4x32_10(ctr, key)


def ref_uniform(w):
    i = w.view(np.int32)
    i = np.where(i < 0, ~i, i)
    return i.astype(np.float32) * np.float32(4.6566127342e-10)


@triton.jit
def _rand_kernel(seed, out_i, out_u, out_n, out4, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_i + offs, tl.randint(seed, offs), mask=m)
    tl.store(out_u + offs, tl.rand(seed, offs), mask=m)
    tl.store(out_n + offs, tl.randn(seed, offs), mask=m)
    a, b, c, d = tl.randint4x(seed, offs)
    tl.store(out4 + offs * 4 + 0, a, mask=m)
    tl.store(out4 + offs * 4 + 1, b, mask=m)
    tl.store(out4 + offs * 4 + 2, c, mask=m)
    tl.store(out4 + offs * 4 + 3, d, mask=m)


@pytest.mark.parametrize("seed", [0, 42, 0xFFFFFFFF, 0x123456789ABC, -7])
def test_rand_bits_match_philox(seed):
    n = 1000
    out_i = torch.empty(n, dtype=torch.int32)
    out_u = torch.empty(n, dtype=torch.float32)
    out_n = torch.empty(n, dtype=torch.float32)
    out4 = torch.empty(4 * n, dtype=torch.int32)
    _rand_kernel[(triton.cdiv(n, 256), )](seed, out_i, out_u, out_n, out4, n, BLOCK=256)
    w = ref_words(seed, np.arange(n))
    np.testing.assert_array_equal(out_i.numpy().view(np.uint32), w[0])
    np.testing.assert_array_equal(out4.numpy().view(np.uint32).reshape(n, 4), np.stack(w, axis=1))
    np.testing.assert_array_equal(out_u.numpy(), ref_uniform(w[0]))
    u1 = np.maximum(np.float32(1e-7), ref_uniform(w[0])).astype(np.float64)
    u2 = ref_uniform(w[1]).astype(np.float64)
    normal = np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * np.pi * u2)
    np.testing.assert_allclose(out_n.numpy(), normal, rtol=1e-4, atol=1e-4)
    assert out_u.min() >= 0 and out_u.max() < 1


@triton.jit
def _rand64_kernel(seed, offs_ptr, out, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out + i, tl.randint(seed, tl.load(offs_ptr + i)))


def test_rand_int64_offsets_use_the_high_word():
    offs = torch.tensor([0, 1, (1 << 32) + 1, (5 << 40) + 3] * 4, dtype=torch.int64)
    out = torch.empty(16, dtype=torch.int32)
    _rand64_kernel[(1, )](1234, offs, out, BLOCK=16)
    np.testing.assert_array_equal(out.numpy().view(np.uint32), ref_words(1234, offs.numpy())[0])
