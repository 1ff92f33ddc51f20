/*
 * rv_harness.c — runs compiled samples on RISC-V (under qemu-riscv64): dlopens
 * each kernel .so given on the command line as <sample>=<path.so>, runs it over
 * its grid with samples.h and prints one line per sample. Exit status 1 if any
 * sample failed. Cross-compiled by tests/codegen/run.sh with riscv64-linux-gnu-gcc.
 */
#include "samples.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *eq = strchr(argv[i], '=');
        if (!eq || (size_t)(eq - argv[i]) >= sizeof name) {
            fprintf(stderr, "usage: rv_harness sample=path.so...\n");
            return 2;
        }
        memcpy(name, argv[i], (size_t)(eq - argv[i]));
        name[eq - argv[i]] = '\0';
        const CgtSample *s = cgt_sample(name);
        void *h = dlopen(eq + 1, RTLD_NOW | RTLD_LOCAL);
        CgtEntry fn = h ? (CgtEntry)(uintptr_t)dlsym(h, "tritium_kernel") : NULL;
        char msg[256] = "";
        if (!s || !fn) {
            printf("%-10s FAILED: %s\n", name, !s ? "unknown sample" : dlerror());
            failed = 1;
            continue;
        }
        if (s->run(fn, msg, sizeof msg)) {
            printf("%-10s FAILED: %s\n", name, msg);
            failed = 1;
        } else {
            printf("%-10s ok\n", name);
        }
        dlclose(h);
    }
    return failed;
}
