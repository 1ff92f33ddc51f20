/*
 * fma_peak.c — the machine's measured FMA peak, for bench_matmul.py: GFLOP/s of
 * independent vector FMA chains per element type, on one thread and on every thread,
 * for each vector width the CPU has. The measuring code is viewers/src/cli_peak.c,
 * the one `proton-cli roofline` uses; this is only its command-line front.
 *
 * Built by the benchmark: gcc -O2 bench/fma_peak.c viewers/src/cli_peak.c -Iviewers/src
 * -lpthread -lm. Prints one line per measurement: "<dtype> <vector bytes> <threads>
 * <GFLOP/s>"; an optional argument is the thread count (default: online CPUs).
 */
#include "cli_peak.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    int nt = argc > 1 ? atoi(argv[1]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    static const int widths[] = {32, 64};
    nt = nt < 1 ? 1 : nt;
    for (int t = 0; t < CLI_PEAK_NTYPES; t++)
        for (int w = 0; w < 2; w++)
            for (int threads = 1; threads <= nt; threads = threads == nt ? nt + 1 : nt) {
                double g = cli_peak_fma((CliPeakType)t, widths[w], threads, 0.05, 3);
                if (g > 0)
                    printf("%s %d %d %.1f\n", cli_peak_type_name((CliPeakType)t), widths[w], threads, g);
                fflush(stdout);
            }
    return 0;
}
