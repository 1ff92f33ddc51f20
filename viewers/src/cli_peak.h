/*
 * cli_peak.h — measuring this machine's roofs: peak FMA rate per element type and
 * streaming read bandwidth (cli_peak.c).
 *
 * Role: the one measuring code both `proton-cli roofline`/`html` (through the cache in
 * cli_roofline.c) and bench/fma_peak.c (bench_matmul.py's FMA peak) use. It depends on
 * nothing but libc and pthreads, so the benchmark compiles it on its own.
 * Thread safety: each call starts and joins its own threads; calls must not overlap.
 */
#ifndef CLI_PEAK_H
#define CLI_PEAK_H

#include <stddef.h>

typedef enum CliPeakType { CLI_PEAK_FP32 = 0, CLI_PEAK_FP64, CLI_PEAK_BF16, CLI_PEAK_NTYPES } CliPeakType;

/* "fp32", "fp64", "bf16". */
const char *cli_peak_type_name(CliPeakType t);
/* Widest vector (bytes) this CPU runs FMAs of type t on: 64 (AVX-512), 32 (AVX2+FMA),
 * 8 (scalar fallback), or 0 when there is no such instruction (bf16 needs the AVX-512
 * BF16 pair-dot vdpbf16ps). */
int cli_peak_widest(CliPeakType t);
/* GFLOP/s of CHAINS independent FMA chains per thread (enough to hide the latency) of
 * type t in vectors of vec_bytes (0: the widest; an unsupported width: 0 returned) on
 * 'threads' threads at once: the sum over the threads of each one's flops per second of
 * its own CPU time (so waiting for a CPU on a shared machine does not count), the best
 * of 'reps' runs of about 'secs' seconds each. An FMA counts 2 flops per lane; a bf16
 * pair-dot 4 per fp32 lane. */
double cli_peak_fma(CliPeakType t, int vec_bytes, int threads, double secs, int reps);
/* GB/s (1e9 bytes) of 'threads' threads summing disjoint parts of one buffer of 'bytes'
 * bytes (first touched by the same threads), the best of 'reps' passes after one warm-up
 * pass. Returns 0 when the buffer cannot be allocated. */
double cli_peak_read(int threads, size_t bytes, int reps);
/* A buffer size for cli_peak_read() well past the last-level cache: 4 x the largest
 * cache sysfs reports for cpu0, at least 128 MiB. */
size_t cli_peak_read_bytes(void);

#endif /* CLI_PEAK_H */
