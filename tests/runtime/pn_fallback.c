/*
 * pn_fallback.c — weak stand-ins for the Proton functions the runtime's tests and
 * benchmarks link against, used only while libproton.a does not define them yet.
 *
 * Linked as an archive after libproton.a (runtime/build.mk), so it is pulled in only
 * for symbols Proton still lacks, and its weak definitions lose to Proton's. They
 * behave like "Proton disabled": nothing is active, nothing is recorded.
 */
#include "proton.h"

#include <errno.h>

#define WEAK __attribute__((weak))

WEAK volatile int pn_active_flag;

WEAK int pn_init(void) { return -ENOSYS; }
WEAK int pn_disabled(void) { return 1; }
WEAK const char *pn_last_error(void) { return "libproton.a has no implementation yet"; }
WEAK uint32_t pn_kernel_register(const PnKernelDesc *d) { (void)d; return 0; }

static void fallback_record(PnThread *t, uint32_t id, uint32_t flags) { (void)t, (void)id, (void)flags; }
static PnThread fallback_thread = {fallback_record};

WEAK void pn_launch_begin(PnLaunch *l, uint32_t site, const int32_t grid[3], int nthreads)
{
    (void)l, (void)site, (void)grid, (void)nthreads;
}
WEAK void pn_launch_end(PnLaunch *l) { (void)l; }
WEAK void pn_launch_args(PnLaunch *l, const uint64_t *args) { (void)l; (void)args; }
WEAK PnThread *pn_worker_begin(PnLaunch *l, int worker) { (void)l, (void)worker; return &fallback_thread; }
WEAK void pn_worker_end(PnLaunch *l, PnThread *t) { (void)l, (void)t; }
WEAK int pn_launch_wants_programs(const PnLaunch *l) { (void)l; return 0; }
WEAK void pn_program_begin(PnThread *t, const int32_t pid[3]) { (void)t, (void)pid; }
WEAK void pn_program_end(PnThread *t) { (void)t; }
WEAK void pn_capture_reset(void) {}
WEAK void pn_capture_enable(int on) { (void)on; }
WEAK const char *pn_clock_source(void) { return "none"; }
