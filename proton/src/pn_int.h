/*
 * pn_int.h — internal structures of Proton, and the index of proton/src.
 *
 * In the style of QBE's all.h: every internal struct is here, and each .c file's
 * cross-file functions are declared below under a comment naming the file.
 *
 * Shape of the data. Every recording thread owns a PnTls (thread_local pointer). It
 * holds the thread's perf_event group, its timeline buffer (chunks of fixed-size
 * PnRec records) and, per consumer slot, a partial call-path tree (PnTSlot). Only the
 * owner writes into its PnTls; writers read other threads' data lock-free through
 * release/acquire-published counts, while holding pn_mu. Memory is freed only by the
 * owner (or, for exited threads, by whoever holds pn_mu), and only when the data is
 * stale: so a reader holding pn_mu never sees memory disappear.
 *
 * Consumers. Slot 0 is the kernel-capture store, slots 1..PN_NSLOTS-1 hold sessions.
 * A slot is identified over time by its creation tick (pn_slot_ctick[i], 0 = unused):
 * per-thread data and timeline records carry the tick at which they were taken, and
 * belong to the slot's current consumer iff ctick <= that tick. Reusing a slot or
 * resetting the capture store only has to bump the tick.
 */
#ifndef PN_INT_H
#define PN_INT_H

#include "proton.h"

#include <cjson/cJSON.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define PN_VERSION "0.1.0"

/* ---- limits ---------------------------------------------------------------------- */

#define PN_NSLOTS 32          /* consumers: 0 = capture store, 1..31 = sessions */
#define PN_CAPTURE_SLOT 0
#define PN_MAX_COUNTERS 7     /* events per group (one PnRec extension holds 7) */
#define PN_MAX_DEPTH 256      /* host scope stack per thread */
#define PN_KDEPTH 32          /* in-kernel scope stack per thread */
#define PN_KNODES 64          /* distinct in-kernel scope paths per worker per launch */
#define PN_LAUNCH_NEST 4      /* launches in flight on one launching thread */
#define PN_CHUNK_RECS 4096    /* timeline records per chunk */
#define PN_BUDGET_GRAIN 256   /* timeline budget taken from the global pool at once */
#define PN_NODE_CHUNK 256     /* per-thread tree nodes per chunk */
#define PN_NODE_CHUNKS 1024   /* chunks per per-thread tree (262144 nodes) */

/* relaxed / acquire / release accessors for fields read by other threads */
#define PN_LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define PN_ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define PN_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define PN_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define PN_LIKELY(x) __builtin_expect(!!(x), 1)
#define PN_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- clocks (pn_clock.c) ------------------------------------------------------------ */

enum { PN_CLK_GETTIME = 0, PN_CLK_TSC, PN_CLK_RDTIME, PN_CLK_CNTVCT, PN_CLK_FAKE };
extern int pn_clk_kind;
extern uint64_t pn_fake_ticks;     /* tests: PN_CLK_FAKE reads this (1 tick = 1 ns) */

/* the raw timestamp, inlined into every hook */
static inline uint64_t
pn_now(void)
{
#if defined(__x86_64__)
    if (PN_LIKELY(pn_clk_kind == PN_CLK_TSC)) {
        uint32_t lo, hi;
        __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
        return ((uint64_t)hi << 32) | lo;
    }
#elif defined(__riscv) && __riscv_xlen == 64
    if (PN_LIKELY(pn_clk_kind == PN_CLK_RDTIME)) {
        uint64_t t;
        __asm__ __volatile__("rdtime %0" : "=r"(t));
        return t;
    }
#elif defined(__aarch64__)
    if (PN_LIKELY(pn_clk_kind == PN_CLK_CNTVCT)) {
        uint64_t t;
        __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(t)::"memory");
        return t;
    }
#endif
    if (PN_UNLIKELY(pn_clk_kind == PN_CLK_FAKE))
        return PN_LD(&pn_fake_ticks);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The raw timestamp at the end of an in-kernel scope, taken once the scope's work is
 * done: on x86 rdtsc is not ordered with earlier loads and can run while the scope's
 * last cache misses are still out (a load scope over 16 KB tiles then read 1.04-1.09x
 * the machine's streaming read), so an lfence (dispatch-serialising on AMD since the
 * Spectre mitigations, as on Intel) waits for everything before it; about 8 ns more
 * per record on Zen 4. A start needs no fence: at worst it counts some of the work
 * before it. Elsewhere pn_now() (aarch64's already has an isb). */
static inline uint64_t
pn_now_after(void)
{
#if defined(__x86_64__)
    if (PN_LIKELY(pn_clk_kind == PN_CLK_TSC)) {
        uint32_t lo, hi;
        __asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
        return ((uint64_t)hi << 32) | lo;
    }
#endif
    return pn_now();
}

void pn_clock_init(void);          /* chooses the source, takes the first anchors */
double pn_clock_hz(void);          /* ticks per second; fixes the rate on first use */
int pn_clock_exact(void);          /* rate known exactly (not calibrated) */
uint64_t pn_clock_unique_tick(void); /* strictly increasing tick, for slot identities */
void pn_clock_force(int kind);     /* tests: PN_CLK_GETTIME or PN_CLK_FAKE, exact 1 GHz */
/* A device-tree timebase-frequency file (big-endian u32 or u64) in Hz; 0 when it is
 * missing or not 4 or 8 bytes. rdtime's rate on RISC-V (/proc/device-tree/cpus/...). */
double pn_clock_timebase_hz(const char *path);

/* ---- events and counters (pn_events.c, pn_counters.c) ---------------------------- */

typedef struct PnEvent {
    char spec[64];                 /* as the user wrote it ("cycles", "skl::...") */
    char name[72];                 /* as printed: spec, + " (ns)" for time events */
    struct perf_event_attr attr;
    uint8_t is_ns, is_hw;
} PnEvent;

typedef struct PnCounterSet {
    int n;
    PnEvent ev[PN_MAX_COUNTERS];
    const char *source;            /* "hardware", "software", "none" */
    char notice[512];              /* printed once when something first records */
    int absent;                    /* perf_event_open itself is missing (ENOSYS) */
    uint32_t gen;                  /* bumped when the set changes (tests) */
    int ru;                        /* every event served by getrusage (pn_counters.c) */
    int ruwatch;                   /* ru: open the watcher (not PROTON_SW_COUNTERS=rusage) */
} PnCounterSet;

extern PnCounterSet pn_ctrs;

/* pn_events.c */
void pn_counters_setup(void);      /* once: resolves PROTON_EVENTS and probes */
void pn_counters_reset(void);      /* tests: forget the set; next use re-resolves */
int pn_event_resolve(const char *spec, PnEvent *ev, char *why, size_t whylen);
int pn_event_open(const struct perf_event_attr *a, int group_fd, char *why, size_t whylen);
void pn_counters_notice(void);     /* prints pn_ctrs.notice once */

/* pn_ruwatch.c: a sampling page-fault event whose ring tells, without a system call,
 * whether the thread faulted or was switched since the last look */
typedef struct PnRuWatch {
    int fd;                        /* -1: closed */
    struct perf_event_mmap_page *pc;
    size_t len;
    uint64_t seen;                 /* data_head at the last look */
    uint64_t looks_busy;           /* looks that saw a record (tests) */
} PnRuWatch;
int pn_ruwatch_open(PnRuWatch *w);
void pn_ruwatch_close(PnRuWatch *w);
int pn_ruwatch_quiet(PnRuWatch *w); /* 1: nothing since the last look; consumes */

/* pn_counters.c: one group per thread */
typedef struct PnCtrGroup {
    int8_t state;                  /* 0 closed, 1 open, -1 failed */
    int8_t rdpmc;                  /* every member readable with rdpmc */
    uint8_t n;
    int8_t ru;                     /* served by getrusage (+ task-clock through fd[0]) */
    uint32_t gen;                  /* pn_ctrs.gen at open */
    int fd[PN_MAX_COUNTERS];
    struct perf_event_mmap_page *pc[PN_MAX_COUNTERS];
    uint8_t rukind[PN_MAX_COUNTERS]; /* ru: what member i is (PN_RU_*) */
    int8_t ru_base;                /* ru: base_* hold a task-clock reading */
    uint64_t base_tc, base_ns, base_cs; /* task-clock at time base_ns (ru_now: ticks or
                                        * ns), valid while the switch count stays base_cs */
    uint64_t last_tc;              /* ru: the last task-clock value returned */
    PnRuWatch w;                   /* ru: open when w.pc; else every read is a getrusage */
    uint64_t ru_skips;             /* ru: end reads served without getrusage (tests) */
} PnCtrGroup;

enum { PN_RU_TASK_CLOCK = 1, PN_RU_FAULTS, PN_RU_MINFLT, PN_RU_MAJFLT, PN_RU_CSW };
int pn_ru_kind(const struct perf_event_attr *a); /* PN_RU_*, or 0: perf only */

typedef struct PnCtrVal {
    uint64_t v[PN_MAX_COUNTERS];
    uint64_t enabled, running;
} PnCtrVal;

int pn_ctr_open(PnCtrGroup *g);
void pn_ctr_close(PnCtrGroup *g);
int pn_ctr_read(PnCtrGroup *g, PnCtrVal *out);       /* rdpmc or read(); 0 or -1 */
/* the end of an interval that began with since = pn_ctr_read(g): may skip the system
 * call when nothing happened to the thread in between (getrusage path + watcher) */
int pn_ctr_read_after(PnCtrGroup *g, const PnCtrVal *since, PnCtrVal *out);
int pn_ctr_read_rdpmc(PnCtrGroup *g, PnCtrVal *out); /* rdpmc only; -1 = not now */
struct perf_event_mmap_page;
int pn_ctr_read_page(volatile struct perf_event_mmap_page *pc, uint64_t *val, uint64_t *ena,
                     uint64_t *run); /* one event in user space; -1 = not now */
void pn_ctr_delta(const PnCtrVal *a, const PnCtrVal *b, int n, uint64_t *d);

/* ---- kernel sites and interned names (pn_site.c) ------------------------------------ */

typedef struct PnSite {
    const char *name;              /* owned copy */
    uint32_t name_id;              /* interned name */
    char *constexprs;              /* JSON text or NULL */
    char *remarks;                 /* compiler remarks, one per line, or NULL */
    uint64_t bytes_per_program;
    double flops_per_program[3];
    uint32_t nscopes;
    uint32_t *scope_name_ids;
    PnCostFn cost_fn;              /* per-launch cost from the arguments, or NULL */
    const void *cost;
} PnSite;

const PnSite *pn_site_get(uint32_t site);   /* NULL when unknown; lock-free */
/* The site 'site' renamed to interned name 'name_id' (created once, then cached);
 * returns 'site' itself on failure. */
uint32_t pn_site_derive(uint32_t site, uint32_t name_id);
uint32_t pn_name_intern(const char *s);     /* 0 on failure; ids start at 1 */
const char *pn_name_get(uint32_t id);       /* "" when unknown; lock-free */
void pn_sites_fini(void);

/* ---- timeline records (pn_buffer.c) ---------------------------------------------- */

enum { PN_EV_LAUNCH = 1, PN_EV_PROGRAM, PN_EV_SCOPE, PN_EV_HOST, PN_EV_CTR };
enum { PN_BUDGET_WORK = 0, PN_BUDGET_HOST = 1 }; /* programs+scopes / launches+host scopes */

typedef struct PnRec {             /* 64 bytes */
    uint8_t kind;
    uint8_t nctr;                  /* counters in the following PN_EV_CTR record */
    uint16_t depth;                /* in-kernel scope depth */
    uint32_t mask;                 /* consumer slots this event belongs to */
    uint32_t id;                   /* launch: site; scope: scope id; host: name id */
    uint32_t site;                 /* program/scope: kernel site; launch: threads used */
    uint64_t t0, t1;               /* ticks */
    uint64_t mtick;                /* tick at which 'mask' was taken */
    uint64_t seq;                  /* launch: launch id; program/scope: its launch; host: scope id */
    int32_t xyz[3];                /* launch: grid; program/scope: program id */
    uint32_t aux;                  /* host: PN_REC_OPEN when made up by a writer; launch:
                                    * Python path id (pn_frames.c); else 0 */
} PnRec;

#define PN_REC_OPEN 1u             /* a host scope still open when the file was written */

typedef struct PnCtrRec {          /* 64 bytes, follows a record with nctr > 0 */
    uint8_t kind;
    uint8_t pad[7];
    uint64_t v[PN_MAX_COUNTERS];
} PnCtrRec;

typedef struct PnChunk {
    struct PnChunk *next;          /* published with release */
    uint32_t n;                    /* records published (release) */
    uint32_t cap;
    uint32_t nev[2];               /* events per budget class, for the pool */
    uint32_t umask;                /* union of the records' masks */
    uint64_t max_mtick;
    PnRec rec[];
} PnChunk;

typedef struct PnBuf {
    PnChunk *head, *tail;
    PnChunk *spare;                /* a freed chunk kept for the next one (no mmap per session) */
    int64_t avail[2];              /* budget taken from the pool, not used yet: the owner
                                    * takes one with an atomic decrement, a thread that
                                    * found the pool empty may take half (pn_buffer.c) */
} PnBuf;

extern uint64_t pn_trace_limit;
extern uint64_t pn_budget_used[2];
extern uint64_t pn_budget_gen[2];  /* bumped whenever budget goes back to the pool */
extern uint64_t pn_budget_dry[2];  /* pn_budget_gen + 1 when a steal last found nothing */

/* one unit of the thread's own budget; 0 when it has none */
static inline int
pn_budget_use(int64_t *avail)
{
    if (PN_LD(avail) <= 0)
        return 0;
    if (PN_LIKELY(__atomic_sub_fetch(avail, 1, __ATOMIC_RELAXED) >= 0))
        return 1;
    __atomic_add_fetch(avail, 1, __ATOMIC_RELAXED); /* a thief was faster */
    return 0;
}

typedef struct PnTls PnTls;
PnRec *pn_buf_reserve_slow(PnTls *t, int cls, int nrec, uint32_t mask, int have_budget);
void pn_buf_gc(PnBuf *b);          /* frees dead chunks; caller holds pn_mu, owns 'b' */
void pn_buf_free(PnBuf *b);
void pn_buf_return_budget(PnBuf *b);
void pn_buf_keep_spare(PnBuf *b);  /* owner: makes sure a spare chunk exists */
void pn_drop(PnTls *t, uint32_t mask, uint64_t n);
int pn_budget_exhausted(const PnTls *t, int cls);
uint64_t pn_dropped(int slot, uint64_t ctick); /* sum over threads; caller holds pn_mu */
typedef int (*PnRecFn)(const PnRec *r, const PnCtrRec *c, void *user);
int pn_buf_foreach(const PnTls *t, int slot, uint64_t ctick, PnRecFn fn, void *user);
typedef struct PnBufPos {
    const PnChunk *c;              /* chunk reached; NULL = start at the head */
    uint32_t i;                    /* records of it already visited */
} PnBufPos;
int pn_buf_scan(const PnTls *t, int slot, uint64_t ctick, PnBufPos *pos, PnRecFn fn, void *user);

/* ---- per-thread partial trees (pn_tree.c) ------------------------------------------- */

enum { PN_NODE_ROOT = 0, PN_NODE_HOST, PN_NODE_KERNEL, PN_NODE_KSCOPE };
enum { PN_MF_EXC = 1, PN_MF_PTY = 2 };
/* metric kinds: PN_METRIC_INT / _DOUBLE, or'ed with PN_MK_VEC for vectors */
enum {
    PN_MK_VEC = 2,
    PN_MK_INT_VEC = PN_METRIC_INT | PN_MK_VEC,
    PN_MK_DOUBLE_VEC = PN_METRIC_DOUBLE | PN_MK_VEC,
};

typedef union PnMVal {
    int64_t i;
    double d;
} PnMVal;

typedef struct PnMetric {
    struct PnMetric *next;         /* published with release */
    uint32_t name;                 /* interned, suffix stripped */
    uint8_t kind;                  /* PN_METRIC_INT / _DOUBLE [| PN_MK_VEC] */
    uint8_t flags;                 /* PN_MF_* */
    uint32_t len;                  /* vectors: elements (fixed at creation) */
    PnMVal v;                      /* scalars */
    PnMVal vec[];                  /* vectors: 'len' values, same allocation */
} PnMetric;

typedef struct PnPNode {
    int32_t parent;                /* -1 for the root */
    uint8_t kind;
    uint32_t key;                  /* host: name id; kernel: site; kscope: scope id */
    int32_t grid[3];               /* kernel nodes */
    uint64_t count, ticks, tmin, tmax, programs;
    uint32_t threads;
    uint32_t ctr_n;                /* counter values summed (0 = none) */
    uint64_t ctr[PN_MAX_COUNTERS];
    double norm;                   /* kscope: sum over launches of ticks / programs */
    uint64_t wall;                 /* kscope: sum over launches of the longest time one thread spent in it */
    double cost[4];                /* kernel: bytes, flops16/32/64 of launches with a cost_fn */
    uint32_t cost_n, cost_inexact; /* launches costed that way; of them, with a loop counted once */
    PnMetric *metrics;             /* host nodes: user metrics */
} PnPNode;

typedef struct PnTSlot {
    uint64_t ctick;                /* identity of the consumer this data belongs to */
    struct PnTSlot *stale_next;    /* owner's list of replaced slots, freed by pn_tls_gc */
    uint32_t nnodes;               /* published with release */
    PnPNode *chunk[PN_NODE_CHUNKS];
    int32_t *hidx;                 /* owner-only hash: node indices, -1 empty */
    uint32_t hcap, hn;
    uint32_t depth;                /* host scope stack (node indices) */
    int32_t stack[PN_MAX_DEPTH];
    int32_t mnode[PN_MAX_DEPTH];   /* where each scope's metrics go: its node, or the leaf of
                                    * the state active when it was entered (pn_state_enter) */
    uint64_t sid[PN_MAX_DEPTH];    /* scope id of the frame that pushed each entry (the pop
                                    * checks it); 0 = inherited from the session's main thread */
    int32_t c_parent, c_node;      /* last kernel lookup */
    uint32_t c_site;
    int32_t c_grid[3];
    uint32_t py_path;              /* last Python path looked up (0 = none) */
    int32_t py_node;
} PnTSlot;

static inline PnPNode *
pn_pnode(PnTSlot *s, int32_t i)
{
    return &s->chunk[(uint32_t)i / PN_NODE_CHUNK][(uint32_t)i % PN_NODE_CHUNK];
}

PnTSlot *pn_tslot_create(uint64_t ctick);    /* node 0 = root */
void pn_tslot_destroy(PnTSlot *s);
int32_t pn_tslot_child(PnTSlot *s, int32_t parent, int kind, uint32_t key, const int32_t grid[3]);
PnMetric *pn_node_metric(PnPNode *n, uint32_t name); /* NULL when absent */
int pn_node_metric_add(PnPNode *n, uint32_t name, int kind, int flags, int64_t i, double d);
int pn_node_metric_add_vec(PnPNode *n, uint32_t name, int kind, int flags, const PnMVal *v,
                           uint32_t len);

/* ---- Python call paths (pn_frames.c) ------------------------------------------------- */

const uint32_t *pn_path_get(uint32_t id, uint32_t *n); /* frames, outermost first; lock-free */
int32_t pn_tslot_path(PnTSlot *s, uint32_t path);      /* the path's node (ROOT for 0) */

/* ---- thread state (pn_thread.c) -------------------------------------------------- */

typedef struct PnKNode {           /* one in-kernel scope path, per worker per launch */
    uint16_t scope;
    int16_t parent;                /* index in the same array, -1 = the kernel */
    uint32_t pad;
    uint64_t count, ticks;
    uint64_t ctr[PN_MAX_COUNTERS];
} PnKNode;

typedef struct PnWorkerSlot {      /* written only by the worker that owns it */
    uint32_t used, tid;
    uint32_t nknodes, ctr_ok;
    uint64_t ctr[PN_MAX_COUNTERS];
    PnKNode *kn;                   /* PN_KNODES entries, or NULL when no scopes */
    uint64_t klost;                /* scope records not aggregated (overflow, unbalanced) */
} __attribute__((aligned(64))) PnWorkerSlot;

typedef struct PnLaunchInt {
    PnTls *t;                      /* launching thread */
    PnWorkerSlot *ws;
    uint32_t on, site, nscopes, nthreads;
    int32_t grid[3];
    uint32_t mask, tmask;          /* consumers; those that keep a timeline */
    uint32_t programs;             /* program events wanted (budget left) */
    uint32_t path;                 /* Python call path (pn_python_frames), 0 = none */
    uint32_t state[2];             /* the launching thread's state (pn_state_enter), 0 = none */
    uint64_t t0, mtick, seq;
    const uint64_t *args;          /* pn_launch_args: the packed arguments, or NULL */
} PnLaunchInt;

typedef struct PnKFrame {
    uint32_t scope;
    int32_t node;
    int ctr_ok;
    uint64_t t0;
    uint64_t ctr[PN_MAX_COUNTERS];
} PnKFrame;

typedef struct PnHostFrame {      /* read by writers while the owner runs: see pn_scope_open */
    uint32_t name;
    uint32_t mask, tmask;          /* slots this scope was pushed on; timeline slots */
    uint32_t pypath;               /* Python call path at enter (owner only), 0 = none */
    uint32_t state[2];             /* the thread's state at enter (owner only) */
    uint64_t id, t0, mtick;        /* id: 0 while the frame is being written */
} PnHostFrame;

typedef struct PnScratch {
    PnWorkerSlot *ws;
    uint32_t cap;
    PnKNode *kn;
    uint32_t kcap;                 /* workers covered by kn */
} PnScratch;

struct PnTls {
    PnThread pub;                  /* first: compiled kernels call pub.record */
    uint32_t tid;                  /* 0 = first thread that recorded */
    int os_tid;
    int is_main;
    int retired;
    PnTls *next;                   /* registry: published with release */
    uint64_t gc_epoch;
    PnCtrGroup grp;
    PnBuf buf;
    /* worker side */
    PnLaunchInt *cur;
    PnWorkerSlot *wslot;
    PnCtrVal wc0;
    int wc_ok;
    uint32_t kdepth;
    PnKFrame kstack[PN_KDEPTH];
    int8_t *kids;                  /* [(PN_KNODES+1) * nscopes] child lookup, -1 empty */
    uint32_t kids_ns;
    uint64_t prog_t0;
    int32_t prog_pid[3];
    /* launching side */
    uint32_t lnest;
    PnScratch scr[PN_LAUNCH_NEST];
    uint64_t lseq;
    /* host scopes */
    uint32_t hdepth, hover;        /* hdepth published with release (writers read it) */
    PnHostFrame hstack[PN_MAX_DEPTH];
    /* Python call paths: pending for the next launch / scope enter; the last one given */
    uint32_t pypend, pylast;
    /* the thread's state (upstream proton.state): interned path elements, 0 = none; a
     * "__proton_launch_metadata:<k>" state is two elements */
    uint32_t state[2];
    /* consumers */
    PnTSlot *slot[PN_NSLOTS];      /* published with release; freed under pn_mu */
    PnTSlot *stale;
    uint64_t drop[PN_NSLOTS], drop_ctick[PN_NSLOTS];
    /* pn_launch_next: pending override, and the one in effect for the current launch */
    struct PnNext {
        int set;
        uint32_t site_name;        /* interned override name, 0 = keep */
        int n;
        uint32_t mid[PN_NEXT_METRICS];
        int kind[PN_NEXT_METRICS];
        double val[PN_NEXT_METRICS];
    } lnext, cur_next;
    /* name cache (owner-only) */
    struct PnNameEnt *ncache;
    uint32_t ncap, nn;
};

extern pthread_mutex_t pn_mu;      /* sessions, readers of per-thread data, unlinking */
extern PnTls *pn_tls_list;         /* appended under a registry mutex, read lock-free */
extern __thread PnTls *pn_tls_cur;
extern PnTls pn_tls_noop;          /* what hooks return when nothing records */
extern uint64_t pn_gc_epoch;

/* the registry in creation order; a new thread may be appended meanwhile */
static inline PnTls *
pn_tls_first(void)
{
    return PN_ACQ(&pn_tls_list);
}
static inline PnTls *
pn_tls_next(const PnTls *t)
{
    return PN_ACQ(&t->next);
}

PnTls *pn_tls_slow(void);          /* creates and registers this thread's state */
void pn_record_plain(PnThread *pt, uint32_t scope, uint32_t flags); /* pn_launch.c */
static inline PnTls *
pn_tls(void)
{
    PnTls *t = pn_tls_cur;
    return PN_LIKELY(t != NULL) ? t : pn_tls_slow();
}
void pn_tls_gc(PnTls *t);          /* owner: frees stale data (takes pn_mu if free) */
static inline void
pn_tls_maybe_gc(PnTls *t)
{
    if (PN_UNLIKELY(t->gc_epoch != PN_LD(&pn_gc_epoch)))
        pn_tls_gc(t);
}
PnTSlot *pn_tls_slot(PnTls *t, int slot, uint64_t ctick); /* current data for a slot */
void pn_tls_collect(void);         /* frees exited threads with nothing live; holds pn_mu */
uint32_t pn_name_cached(PnTls *t, const char *s);         /* interned id via the cache */
/* pn_scope.c: "(exc)"/"(pty)" suffix → flags (name stripped into out); upstream kind
 * coercion of flops* (double) and bytes (int). */
int pn_metric_flags(const char *name, char *out, size_t n);
int pn_metric_kind(const char *name, int kind);
PnRec *pn_scope_open(const PnTls *t, int slot, uint64_t ctick, uint32_t *n); /* holds pn_mu */
/* Every frame open on thread 't' (one consistent stack, outermost first) as PN_EV_HOST
 * records whose 'site' field holds the frame's full consumer mask. Holds pn_mu. */
PnRec *pn_scope_open_all(const PnTls *t, uint32_t *n);
/* The node below 'node' for state 'st' (one or two path elements), created when
 * absent; 'node' itself when no state is set, -1 when the tree is full. Owner only. */
int32_t pn_state_node(PnTSlot *s, int32_t node, const uint32_t st[2]);
void pn_tls_reset_self(void);      /* tests */
void pn_tls_init_once(void);       /* the thread key and the fork handlers */

/* timeline append, inlined: NULL when dropped */
static inline PnRec *
pn_buf_reserve(PnTls *t, int cls, int nrec, uint32_t mask, uint64_t mtick)
{
    PnChunk *c = t->buf.tail;
    PnRec *r;
    int have = pn_budget_use(&t->buf.avail[cls]);
    if (PN_UNLIKELY(!have || !c || c->n + (uint32_t)nrec > c->cap)) {
        r = pn_buf_reserve_slow(t, cls, nrec, mask, have);
        if (!r)
            return NULL;
        c = t->buf.tail;
    } else {
        r = &c->rec[c->n];
    }
    c->nev[cls]++;
    c->umask |= mask;
    if (mtick > c->max_mtick)
        c->max_mtick = mtick;
    return r;
}
static inline void
pn_buf_commit(PnTls *t, int nrec)
{
    PnChunk *c = t->buf.tail;
    PN_REL(&c->n, c->n + (uint32_t)nrec);
}

/* ---- consumers: sessions and the capture store (pn_session.c) ---------------------- */

/* A session is one slot per phase it still holds (data.advance_phase allocates a
 * slot for the new phase; data.clear of an old phase frees it). All slots of a
 * session share id, path, data, context, main and sess_tick. */
typedef struct PnSlot {
    int used;
    int id;                        /* session id; -1 for the capture store */
    int data, context;
    int active;                    /* only the current phase's slot is ever active */
    char *path;
    int phase;                     /* this slot's phase */
    int current;                   /* the session's current phase */
    int complete_upto;             /* phases below it are complete (flushed) */
    int advanced;                  /* the session went past phase 0: .part_<phase> files */
    PnTls *main;                   /* the thread that started the session */
    uint64_t sess_tick;            /* when the session started */
    int inherited;                 /* came across fork(): written only if this process
                                    * recorded into it (pn_session_has_data) */
} PnSlot;

extern PnSlot pn_slots[PN_NSLOTS];       /* guarded by pn_mu */
extern uint64_t pn_slot_ctick[PN_NSLOTS]; /* read lock-free by hooks */
extern uint32_t pn_rec_mask;             /* slots recording now */
extern uint32_t pn_trace_mask;           /* slots that keep a timeline */
extern uint32_t pn_py_mask;              /* recording slots with context=python */

enum { PN_FMT_HATCHET = 0, PN_FMT_CHROME, PN_FMT_CONSOLE, PN_FMT_MSGPACK };

void pn_mask_update(void);               /* recompute masks from pn_slots; holds pn_mu */
int pn_slot_write(int slot, uint64_t ctick, int fmt, const char *path); /* holds pn_mu */
int pn_slot_finalize(int slot, const char *fmt, int write); /* holds pn_mu */
void pn_sessions_drop_all(void);         /* tests */
void pn_sessions_after_fork(void);       /* child: sessions start empty (fork_child) */
int pn_session_has_data(int slot);       /* some thread recorded into it; holds pn_mu */
/* A thread's first touch of session slot 'slot' (or of a new phase, or after the
 * current phase was cleared): fills its new tree 's' with the session's main thread's
 * open scopes and then its own. Takes pn_mu. */
void pn_session_inherit(PnTls *t, int slot, PnTSlot *s);

/* pn_capture.c */
extern int pn_capture_dirty;             /* slot 0 recorded something not dumped yet */
extern int pn_capture_timeline;          /* slot 0 keeps a timeline (its output needs one) */
extern int pn_capture_timeline_late;     /* ... switched on after slot 0 recorded launches */
int pn_format_for_path(const char *p);   /* PN_FMT_* from the suffix */
void pn_capture_enable_locked(int on);   /* holds pn_mu */
int pn_capture_dump_locked(const char *path); /* holds pn_mu */

/* ---- merged trees (pn_merge.c) --------------------------------------------------- */

typedef struct PnUMetric {
    struct PnUMetric *next;
    uint32_t name;
    uint8_t kind, flags;           /* as PnMetric */
    uint32_t len;
    PnMVal v;
    PnMVal vec[];                  /* vectors: 'len' values, same allocation */
} PnUMetric;

typedef struct PnTNode {
    uint32_t name;                 /* interned */
    uint8_t kind;
    int32_t parent, first, last, next;
    uint32_t site;                 /* kernel nodes: first site seen */
    int32_t grid[3];
    uint64_t count, ticks, tmin, tmax, programs;
    uint32_t threads;
    uint32_t ctr_n;
    uint64_t ctr[PN_MAX_COUNTERS];
    double norm;
    double bytes, flops[3];
    int has_bytes, has_flops[3];
    uint64_t cost_inexact;         /* launches whose cost counted some loop once */
    uint64_t wall;                 /* kscope: as PnPNode.wall */
    PnUMetric *um;
} PnTNode;

typedef struct PnTree {
    PnTNode *nodes;                /* nodes[0] is ROOT */
    uint32_t n, cap;
    int32_t *hidx;
    uint32_t hcap;
    int by_grid;                   /* kernel nodes keyed by (name, grid) */
    uint64_t launches;
} PnTree;

int pn_tree_build(PnTree *tr, int slot, uint64_t ctick, int by_grid); /* holds pn_mu */
void pn_tree_fini(PnTree *tr);

typedef struct PnKRow {            /* one console / results row: kernel name + grid */
    uint32_t name;
    int32_t grid[3];
    uint64_t count, ticks, tmin, tmax;
    uint32_t ctr_n;
    uint64_t ctr[PN_MAX_COUNTERS];
} PnKRow;
int pn_tree_kernel_rows(const PnTree *tr, PnKRow **rows, uint32_t *nrows);

typedef struct PnSRow {            /* one in-kernel scope path below a kernel row */
    char path[256];                /* "compute/inner" */
    uint32_t depth;                /* 1: directly in the kernel */
    uint64_t count, wall, cpu;     /* executions; ticks: wall (see PnPNode.wall), summed over threads */
} PnSRow;
/* The scope paths below every kernel node of row k's name and grid, in tree order,
 * summed over those nodes. Caller owns *rows (free()); *n = 0 when none. */
int pn_tree_scope_rows(const PnTree *tr, const PnKRow *k, PnSRow **rows, uint32_t *n);

/* ---- JSON and files (pn_json.c, pn_output.c, pn_device.c) ------------------------ */

typedef void (*PnWriteFn)(const char *s, size_t n, void *user);

typedef struct PnJOut {                  /* buffered JSON text for a writer callback */
    PnWriteFn w;
    void *user;
    size_t n;
    char buf[65536];
} PnJOut;
void pn_jout_put(PnJOut *o, const char *s, size_t n);
void pn_jout_puts(PnJOut *o, const char *s);
void pn_jout_str(PnJOut *o, const char *s);   /* a quoted, escaped string */
void pn_jout_uint(PnJOut *o, uint64_t v);
void pn_jout_int(PnJOut *o, int64_t v);
void pn_jout_double(PnJOut *o, double v);     /* as pn_json_double */
void pn_jout_us(PnJOut *o, uint64_t ns);      /* ns / 1000, as pn_json_double would print it */
void pn_jout_json(PnJOut *o, const cJSON *j); /* compact */
void pn_jout_pretty(PnJOut *o, const cJSON *j, int depth); /* dump(4) layout at 'depth' */
void pn_jout_newline(PnJOut *o, int depth);   /* a newline and 4 * depth spaces */
void pn_jout_flush(PnJOut *o);
cJSON *pn_json_int(int64_t v);           /* numbers kept as exact text (raw items) */
cJSON *pn_json_uint(uint64_t v);
cJSON *pn_json_double(double v);         /* shortest round-trip, ".0" when integral */
void pn_json_print(const cJSON *j, int pretty, PnWriteFn w, void *user);
void pn_json_file_write(const char *s, size_t n, void *user); /* user = FILE* */

typedef struct PnOut {                   /* a file being written atomically */
    FILE *f;
    char *path, *tmp;
    int to_stdout;
} PnOut;

char *pn_path_expand(const char *path);  /* %p, %r, %%, .rank<N>, .<pid> in children; caller frees */
extern int pn_fork_child;                /* forked from a process that records */
void pn_output_claim(void);              /* PROTON_OUTPUT_TAKEN: this process's capture output */
int pn_out_open(PnOut *o, const char *path);
int pn_out_close(PnOut *o, int ok);      /* rename on ok, unlink otherwise */
int pn_rank(void);                       /* -1 when no rank variable is set */

typedef struct PnDevice {
    char arch[72];
    char model[128];
    int num_cores;
    uint64_t clock_khz;
} PnDevice;
const PnDevice *pn_device(void);

/* ---- writers (pn_hatchet.c, pn_chrome.c, pn_console.c) ---------------------------- */

cJSON *pn_hatchet_build(const PnTree *tr);  /* [root, device info]; caller deletes */
int pn_hatchet_write(const PnTree *tr, PnWriteFn w, void *user);
int pn_msgpack_write(const cJSON *j, PnWriteFn w, void *user); /* pn_msgpack.c */
int pn_chrome_write(int slot, uint64_t ctick, PnWriteFn w, void *user); /* holds pn_mu */
int pn_console_write(const PnTree *tr, int slot, uint64_t ctick, FILE *f);
void pn_drop_notice(uint64_t dropped);   /* once per process */

/* ---- init and configuration (pn_init.c) -------------------------------------------- */

typedef struct PnConfig {
    int disabled;
    int capture;
    int verbose;
    char *output;                  /* PROTON_OUTPUT or NULL */
} PnConfig;

extern PnConfig pn_cfg;
void pn_set_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* pn_exit.c: pn_mu with the bookkeeping signals need (every use of pn_mu but the fork
 * handlers goes through these) */
extern int pn_mu_held;
void pn_lock(void);
int pn_trylock(void);              /* 0 when taken */
void pn_unlock(void);              /* acts on a pending SIGTERM/SIGINT first */
void pn_exit_after_fork(void);     /* child side of fork (async-signal-safe) */
void pn_set_file_error(int err, const char *path); /* "cannot write PATH: why", and the path */
void pn_arm_exit(void);            /* pn_exit.c: atexit, exit thread, signals (per process) */
int pn_env_flag(const char *name); /* set and not "", "0", "false", "off", "no" */

/* tests (always built, declared only here) */
void pn_test_reset(void);          /* forget everything, re-read the environment */

#endif /* PN_INT_H */
