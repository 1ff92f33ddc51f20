/*
 * aot_vadd.c — runs an ahead-of-time vector add with libtritium (tritium_aot.h), no
 * Python: load the exported kernel, bind its arguments, launch a grid on N threads,
 * check the result, write the Proton trace.
 *
 *   python3 examples/aot/export_vadd.py out/ [riscv64]      (on the development machine)
 *   aot_vadd out/add_kernel.json [threads] [trace.json]     (on the board, or under qemu)
 *
 * Build: cc aot_vadd.c -Iruntime/include -Lbuild/lib -ltritium -o aot_vadd
 * (make builds build/bin/aot-vadd, make riscv64 build/riscv64/bin/aot-vadd).
 */
#include "tritium_aot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 100000

static int
bind(RtAot *k, const char *name, void *ptr)
{
    int i = rt_aot_param_index(k, name);
    return i < 0 ? i : rt_aot_bind_ptr(k, i, ptr);
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: aot_vadd kernel.json [threads] [trace.json]\n");
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 0;
    const char *trace = argc > 3 ? argv[3] : NULL;
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = calloc(N, sizeof *out);
    for (int i = 0; i < N; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = (float)(N - i);
    }
    RtAot *k;
    int rc = rt_aot_load(argv[1], &k);
    if (rc < 0) {
        fprintf(stderr, "aot_vadd: %s\n", rt_aot_last_error());
        return 1;
    }
    /* the grid: one program per BLOCK elements (the constexpr the kernel was compiled with) */
    const char *block = rt_aot_constexpr(k, rt_aot_param_index(k, "BLOCK"));
    int32_t grid[3] = {(N + atoi(block ? block : "1024") - 1) / atoi(block ? block : "1024"), 1, 1};
    if ((rc = bind(k, "x_ptr", x)) < 0 || (rc = bind(k, "y_ptr", y)) < 0 || (rc = bind(k, "out_ptr", out)) < 0 ||
        (rc = rt_aot_bind_int(k, rt_aot_param_index(k, "n"), N)) < 0 || (trace && (rc = rt_aot_trace_begin()) < 0) ||
        (rc = rt_aot_launch(k, grid, threads)) < 0 || (trace && (rc = rt_aot_trace_write(trace)) < 0)) {
        fprintf(stderr, "aot_vadd: %s\n", rt_aot_last_error());
        rt_aot_unload(k);
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += fabsf(out[i] - (x[i] + y[i])) > 1e-3f * fabsf(x[i] + y[i]);
    printf("%s: %d elements, grid %d, %s\n", rt_aot_name(k), N, grid[0], bad ? "WRONG" : "ok");
    rt_aot_unload(k);
    free(x);
    free(y);
    free(out);
    return bad != 0;
}
