/*
 * rt_hash.c — the 64-bit checksum of cache files: XXH64 with seed 0, streaming.
 *
 * Written from the published algorithm description (Yann Collet, "xxHash fast digest
 * algorithm", doc/xxhash_spec.md, XXH64 section); results match the reference
 * `xxhsum -H64`. It detects truncation and bit flips, not tampering: the cache trusts
 * the local user.
 */
#include "rt_int.h"

#include <string.h>

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t
rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

/* Little-endian loads (memcpy keeps them alignment-safe and UBSan-clean). */
static inline uint64_t
rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint32_t
rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

/* One lane step: multiply-rotate-multiply mixes 8 input bytes into an accumulator. */
static inline uint64_t
round64(uint64_t acc, uint64_t in)
{
    acc += in * P2;
    return rotl(acc, 31) * P1;
}

/* Folds one lane's final value into the digest (inputs of 32 bytes or more). */
static inline uint64_t
merge(uint64_t acc, uint64_t v)
{
    acc ^= round64(0, v);
    return acc * P1 + P4;
}

/* Consumes one 32-byte stripe into the four lanes. */
static inline void
stripe(uint64_t v[4], const unsigned char *p)
{
    v[0] = round64(v[0], rd64(p));
    v[1] = round64(v[1], rd64(p + 8));
    v[2] = round64(v[2], rd64(p + 16));
    v[3] = round64(v[3], rd64(p + 24));
}

/* Starts a digest: four independent lanes (seed 0) let the CPU overlap the multiplies. */
void
rt_hash_init(RtHash *h)
{
    memset(h, 0, sizeof *h);
    h->v[0] = P1 + P2;
    h->v[1] = P2;
    h->v[2] = 0;
    h->v[3] = -P1;
}

/* Adds n bytes. Whole 32-byte stripes go straight to the lanes; a partial stripe waits
 * in h->buf, so any split of the input gives the same digest. */
void
rt_hash_update(RtHash *h, const void *data, size_t n)
{
    const unsigned char *p = data;

    h->total += n;
    if (h->nbuf) { /* top up a partial stripe first */
        size_t k = 32 - h->nbuf < n ? 32 - h->nbuf : n;
        memcpy(h->buf + h->nbuf, p, k);
        h->nbuf += k;
        p += k;
        n -= k;
        if (h->nbuf < 32)
            return;
        stripe(h->v, h->buf);
        h->nbuf = 0;
    }
    for (; n >= 32; p += 32, n -= 32)
        stripe(h->v, p);
    memcpy(h->buf, p, n);
    h->nbuf = n;
}

/* Returns the digest of everything added so far; 'h' is not modified. */
uint64_t
rt_hash_final(const RtHash *h)
{
    const unsigned char *p = h->buf, *end = h->buf + h->nbuf;
    uint64_t acc;

    if (h->total >= 32) {
        acc = rotl(h->v[0], 1) + rotl(h->v[1], 7) + rotl(h->v[2], 12) + rotl(h->v[3], 18);
        for (int i = 0; i < 4; i++)
            acc = merge(acc, h->v[i]);
    } else {
        acc = P5;
    }
    acc += h->total;
    /* the 0..31 buffered tail bytes: 8 at a time, then 4, then single bytes */
    for (; p + 8 <= end; p += 8)
        acc = rotl(acc ^ round64(0, rd64(p)), 27) * P1 + P4;
    if (p + 4 <= end) {
        acc = rotl(acc ^ (uint64_t)rd32(p) * P1, 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; p++)
        acc = rotl(acc ^ *p * P5, 11) * P1;
    /* avalanche */
    acc ^= acc >> 33;
    acc *= P2;
    acc ^= acc >> 29;
    acc *= P3;
    acc ^= acc >> 32;
    return acc;
}

/* One-shot digest of a buffer. */
uint64_t
rt_hash64(const void *p, size_t n)
{
    RtHash h;

    rt_hash_init(&h);
    rt_hash_update(&h, p, n);
    return rt_hash_final(&h);
}
