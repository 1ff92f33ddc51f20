/*
 * cgc.c — command-line driver for cg_compile, used by tests/codegen/run.sh and
 * for measuring compile times: compiles a Linalg sample (math ops expanded with
 * lo_math_emit, see expand.h) into a kernel .so for the host, or for RISC-V with
 * SPINE_TRITON_TARGET_ARCH=riscv64.
 *
 *   cgc [-o out.so] [-r runs] [-S|-I|-M] [-n] file.mlir
 *     -r N  compile N times, print each phase's time and the medians
 *     -S -I -M  print the assembly, the optimised LLVM IR or the LLVM-dialect MLIR
 *     -n    do not expand math ops
 */
#include "codegen.h"
#include "expand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int
main(int argc, char **argv)
{
    const char *out = "/tmp/cgc_out.so";
    int runs = 1, show = 0, expand = 1, c;
    while ((c = getopt(argc, argv, "o:r:SIMn")) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'r': runs = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
        case 'S': case 'I': case 'M': show = c; break;
        case 'n': expand = 0; break;
        default: fprintf(stderr, "usage: cgc [-o out.so] [-r N] [-S|-I|-M] [-n] file.mlir\n"); return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "cgc: no input file\n");
        return 2;
    }
    size_t len;
    char *text = cgt_read_file(argv[optind], &len);
    if (!text) {
        fprintf(stderr, "cgc: cannot read %s\n", argv[optind]);
        return 1;
    }
    if (expand) {
        char *t = cgt_expand_math(text, len, &len);
        free(text);
        text = t;
    }
    CgOptions o = {.opt_level = 3, .want_stages = show != 0};
    cg_host_target(&o.target);
    double *ms[4];
    for (int k = 0; k < 4; k++)
        ms[k] = calloc((size_t)runs, sizeof(double));
    int rc = 0;
    for (int i = 0; i < runs && rc == 0; i++) {
        CgResult res;
        if (cg_compile(text, len, &o, out, &res)) {
            fprintf(stderr, "cgc: %s\n", res.error ? res.error : "failed");
            rc = 1;
        } else {
            ms[0][i] = res.ms_mlir, ms[1][i] = res.ms_llvm, ms[2][i] = res.ms_link;
            ms[3][i] = res.ms_mlir + res.ms_llvm + res.ms_link;
            if (runs > 1 || !show)
                printf("run %d: mlir %.1f ms, llvm %.1f ms, link %.1f ms, total %.1f ms\n", i,
                       ms[0][i], ms[1][i], ms[2][i], ms[3][i]);
            const char *s = show == 'S' ? res.asm_text : show == 'I' ? res.llvm_ir
                            : show == 'M' ? res.ll_mlir : NULL;
            if (s && i == runs - 1)
                fputs(s, stdout);
        }
        cg_result_fini(&res);
    }
    if (rc == 0 && runs > 1)
        printf("median of %d: mlir %.1f ms, llvm %.1f ms, link %.1f ms, total %.1f ms\n", runs,
               median(ms[0], runs), median(ms[1], runs), median(ms[2], runs), median(ms[3], runs));
    for (int k = 0; k < 4; k++)
        free(ms[k]);
    free(text);
    return rc;
}
