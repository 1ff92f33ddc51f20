/*
 * rt_add_kernel.c — a hand-written kernel with the tritium_kernel ABI (docs/compiler.md
 * §1.2) for the launcher benchmarks: out[i] = a[i] + b[i] over one BLOCK per program.
 * Slots: 0 out (float *), 1 a, 2 b, 3 n (int64), 4 BLOCK (int64). Memory-bound, like
 * tutorial 01's vector add.
 */
#include <stdint.h>

__attribute__((visibility("default"))) void
tritium_kernel(const uint64_t *args, int32_t pid_x, int32_t pid_y, int32_t pid_z,
               int32_t num_x, int32_t num_y, int32_t num_z, void *pctx)
{
    float *restrict out = (float *)(uintptr_t)args[0];
    const float *restrict a = (const float *)(uintptr_t)args[1];
    const float *restrict b = (const float *)(uintptr_t)args[2];
    int64_t n = (int64_t)args[3], block = (int64_t)args[4];
    int64_t lo = (int64_t)pid_x * block, hi = lo + block < n ? lo + block : n;

    (void)pid_y, (void)pid_z, (void)num_x, (void)num_y, (void)num_z, (void)pctx;
    for (int64_t i = lo; i < hi; i++)
        out[i] = a[i] + b[i];
}
