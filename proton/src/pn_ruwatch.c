/*
 * pn_ruwatch.c — "has anything happened to this thread?" without a system call.
 *
 * The getrusage path of pn_counters.c reads page faults and context switches with
 * one getrusage(RUSAGE_THREAD) at each end of a worker's interval (~0.3 us each).
 * Most intervals see neither: then the end-of-interval call returns what the start
 * one did. The watcher tells those intervals apart from user space: one software
 * PAGE_FAULTS event of this thread with sample_period = 1 and sample_type = 0 writes
 * a PERF_RECORD_SAMPLE (just a header) into a small mmapped ring on every fault, and
 * with context_switch = 1 also a PERF_RECORD_SWITCH when the thread is switched out
 * or in. A look at the ring's data_head tells whether any record came since the
 * previous look; every look consumes what it saw (data_tail = data_head), so the
 * ring is empty after it and the next record always moves data_head (a full ring
 * could drop records without moving it; an empty one cannot).
 *
 * exclude_kernel = 0: page faults are counted in kernel context. That needs
 * perf_event_paranoid <= 1 or CAP_PERFMON; without it pn_ruwatch_open fails and the
 * caller keeps the second getrusage. Faults taken by the kernel on the thread's
 * behalf without a user register set (get_user_pages from a syscall) fire no perf
 * event; getrusage counts them, so a look can miss such a fault: the value read is
 * then the start's (documented in docs/proton.md § Counters).
 * Throttling does not apply: perf throttles hardware overflow interrupts; software
 * events with period 1 take each overflow as a first (PERF_RECORD_THROTTLE would be
 * a record too, and moves data_head like any other).
 * Reference: perf_event_open(2) (context_switch, the mmap ring), kernel
 * include/uapi/linux/perf_event.h, kernel/events/core.c (perf_swevent_event).
 */
#include "pn_int.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RUWATCH_DATA_PAGES 1 /* a power of two; one page holds 512 bare samples */

/* Opens the watcher; 0, or -1 (w stays closed, the caller reads getrusage twice). */
int
pn_ruwatch_open(PnRuWatch *w)
{
    struct perf_event_attr a;
    long page = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)page * (1 + RUWATCH_DATA_PAGES);
    void *p;
    memset(w, 0, sizeof *w);
    w->fd = -1;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_PAGE_FAULTS;
    a.sample_period = 1;
    a.sample_type = 0;
    a.context_switch = 1;
    a.exclude_hv = 1;
    a.disabled = 0;
    if ((w->fd = pn_event_open(&a, -1, NULL, 0)) < 0) {
        w->fd = -1;
        return -1;
    }
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, 0);
    if (p == MAP_FAILED) {
        close(w->fd);
        w->fd = -1;
        return -1;
    }
    w->pc = p;
    w->len = len;
    w->seen = PN_ACQ(&w->pc->data_head);
    PN_REL(&w->pc->data_tail, w->seen);
    return 0;
}

void
pn_ruwatch_close(PnRuWatch *w)
{
    if (w->pc)
        munmap((void *)w->pc, w->len);
    if (w->fd >= 0)
        close(w->fd);
    memset(w, 0, sizeof *w);
    w->fd = -1;
}

/* 1 when no record (fault, switch) came since the previous look; either way the
 * ring is consumed. The acquire load of data_head pairs with the kernel's write
 * barrier before it publishes the head (perf_event.h, "User-space reading"). */
int
pn_ruwatch_quiet(PnRuWatch *w)
{
    uint64_t head = PN_ACQ(&w->pc->data_head);
    if (PN_LIKELY(head == w->seen))
        return 1;
    w->seen = head;
    PN_REL(&w->pc->data_tail, head);
    w->looks_busy++;
    return 0;
}
