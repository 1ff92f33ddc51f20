/*
 * proton.h — Proton, Tritium's CPU profiler core.
 *
 * Records kernel launches (automatic capture), host scopes and sessions, in-kernel
 * scopes and perf_event counter deltas, aggregates them into call-path trees and
 * writes Chrome-trace JSON, .hatchet trees and a console table (docs/formats.md).
 *
 * Callers: runtime/ (launch hooks, around every kernel launch and inside each OpenMP
 * worker), python/src (session, scope and compatibility APIs), compiled kernels
 * (in-kernel scopes, through the PnThread record function pointer). Proton does not
 * know about Python or the compiler.
 *
 * Hot path: pn_launch_begin/end, pn_worker_begin/end and PnThread.record never take a
 * lock, format strings or make syscalls other than the counter reads the chosen counter
 * mode needs (none with rdpmc; one read() of the thread's group per worker begin/end
 * with software events). They allocate only on a thread's first event, when a new
 * tree node appears (a new kernel/scope path), and once per 4096 timeline records.
 * When nothing records (pn_active() is false) the runtime calls none of them.
 *
 * Ownership: strings passed in are copied unless stated. Handles are small integers.
 * Thread safety: every function may be called from any thread unless stated.
 * Errors: functions returning int give 0 on success and -errno on failure; the text is
 * available from pn_last_error() (per thread).
 */
#ifndef PROTON_H
#define PROTON_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exported even when the library is built with -fvisibility=hidden and linked into
 * a shared object (the Python extension; ctypes users). */
#define PN_API __attribute__((visibility("default")))

/* ---- init and the global switch ------------------------------------------------- */

/* Reads the environment once (PROTON_KERNEL_CAPTURE, PROTON_OUTPUT, PROTON_VERBOSE,
 * PROTON_EVENTS, PROTON_TRACE_LIMIT, TRITON_DISABLE_PROTON / TRITON_PROTON_DISABLE)
 * and anchors the clock (the rate is calibrated lazily, by the first conversion).
 * As soon as something records (capture on here, or later a session or
 * pn_capture_enable) it registers an atexit handler and takes SIGTERM/SIGINT where
 * their disposition is still the default, to write pending output; an existing
 * handler (Python's SIGINT) is never replaced. Idempotent; cheap after the first
 * call. The other entry points call it themselves. Returns 0. */
PN_API int pn_init(void);

/* Nonzero while anything records: kernel capture is on or at least one session is
 * active. One load; the runtime checks it before calling any launch hook. */
PN_API extern volatile int pn_active_flag;
static inline int pn_active(void) { return pn_active_flag; }

/* Nonzero when Proton was disabled by TRITON_DISABLE_PROTON / TRITON_PROTON_DISABLE. */
PN_API int pn_disabled(void);

/* Text of the last error on this thread; borrowed, valid until the next pn_ call. */
PN_API const char *pn_last_error(void);
/* The file the last error on this thread is about ("" when it is not about a file):
 * an output that could not be written. Borrowed, as pn_last_error. */
PN_API const char *pn_last_error_path(void);

/* ---- clocks ------------------------------------------------------------------- */

/* Raw timestamp in clock ticks (rdtsc, rdtime, cntvct_el0 or clock_gettime ns). */
PN_API uint64_t pn_ticks(void);
/* Converts a tick difference to nanoseconds with the calibrated rate. */
PN_API uint64_t pn_ticks_to_ns(uint64_t ticks);
/* Wall-clock (CLOCK_REALTIME) ns of a tick value, for baseTimeNanoseconds. */
PN_API uint64_t pn_ticks_to_epoch_ns(uint64_t ticks);
/* "tsc", "rdtime", "cntvct" or "clock_gettime"; borrowed static string. */
PN_API const char *pn_clock_source(void);

/* ---- kernel sites ---------------------------------------------------------------- */

/* Static description of one compiled kernel specialisation, registered once when the
 * runtime loads it. All strings are copied. */
/* Cost of one launch from its packed arguments (rt_cost_eval's contract): out[0]
 * bytes, out[1..3] flops fp16/fp32/fp64 summed over the grid, then four per in-kernel
 * scope id up to nout; returns 1 exact, 0 when some loop counted once, < 0 on failure. */
typedef int (*PnCostFn)(const void *cost, const uint64_t *args, const int32_t grid[3], double *out, int nout);

typedef struct PnKernelDesc {
    const char *name;            /* kernel function name */
    const char *constexprs;      /* JSON object text {"BLOCK": 1024, ...}, or NULL */
    uint64_t bytes_per_program;  /* static estimate of bytes loaded + stored, 0 = unknown */
    double flops_per_program[3]; /* fp16, fp32, fp64 flops per program, 0 = unknown */
    uint32_t nscopes;            /* in-kernel scopes; their ids are 0..nscopes-1 */
    const char *const *scope_names;
    PnCostFn cost_fn;            /* NULL: bytes/flops_per_program x programs is the cost */
    const void *cost;            /* borrowed; must outlive every launch of the site */
    const char *remarks;         /* compiler remarks, one "file:line:col: message" per line,
                                  * or NULL (the .hatchet kernel node's "remarks") */
} PnKernelDesc;

/* Registers a kernel site; returns its id (>= 1) or 0 on failure. Thread-safe. */
PN_API uint32_t pn_kernel_register(const PnKernelDesc *d);

/* ---- launch hooks (runtime) -------------------------------------------------------- */

/* Per-thread context. A compiled kernel receives a PnThread* as its last argument and,
 * for each in-kernel scope boundary, calls t->record(t, scope_id, flags) with
 * PN_REC_START or PN_REC_END. Fields after 'record' are private to Proton. */
typedef struct PnThread PnThread;
typedef void (*PnRecordFn)(PnThread *t, uint32_t scope_id, uint32_t flags);
enum { PN_REC_START = 1, PN_REC_END = 0 };
struct PnThread {
    PnRecordFn record; /* first field: the ABI compiled kernels rely on */
};

#define PN_MAX_WORKERS 256

/* One launch in flight, owned by the launching thread (stack storage). Opaque size
 * large enough for Proton's bookkeeping; callers only pass its address. */
typedef struct PnLaunch {
    uint64_t opaque[16];
} PnLaunch;

/* Called by the launching thread before and after the grid runs. 'nthreads' is the
 * number of OpenMP threads that will run programs (1 for an inline launch). */
PN_API void pn_launch_begin(PnLaunch *l, uint32_t site, const int32_t grid[3], int nthreads);
PN_API void pn_launch_end(PnLaunch *l);
/* Between pn_launch_begin and pn_launch_end: the launch's packed arguments, from
 * which a site registered with a cost_fn computes this launch's bytes and flops
 * (only while recording; a site without cost_fn ignores it). */
PN_API void pn_launch_args(PnLaunch *l, const uint64_t *args);

/* Called by every thread that runs programs of the launch (including the launching
 * thread for inline launches), around its share of the grid. 'worker' is the OpenMP
 * thread number (0..nthreads-1); each worker number at most once per launch. Returns
 * the PnThread to pass to the kernel (pn_thread_noop() when the launch is not
 * recorded); counter deltas between begin and end are added to the launch. All
 * workers must have ended before pn_launch_end (the parallel region's join). */
PN_API PnThread *pn_worker_begin(PnLaunch *l, int worker);
PN_API void pn_worker_end(PnLaunch *l, PnThread *t);

/* Changes whenever threads that run launches should call pn_thread_prepare again
 * (a session or the capture store started recording, the counter set changed). One
 * load: the runtime compares it with the value it last prepared for. */
PN_API extern volatile uint32_t pn_prepare_epoch;

/* Gets the calling thread ready to record, so its first launch does not time it:
 * creates its state, opens its counter group and keeps a timeline chunk at hand.
 * The runtime calls it on every OpenMP thread (one empty parallel region) before the
 * first recorded launch of each pn_prepare_epoch. Safe to call any time. */
PN_API void pn_thread_prepare(void);

/* A PnThread whose record function does nothing: what an instrumented kernel gets
 * when it runs while nothing records (pn_worker_begin also returns it then).
 * Borrowed, process lifetime. */
PN_API PnThread *pn_thread_noop(void);

/* Names the next launch recorded by this thread and attaches per-launch metrics to
 * its kernel node: upstream's hook="triton" (a kernel's launch_metadata gives the
 * node name, e.g. "matmul_1024", and its flops and bytes). Applies to the next
 * pn_launch_begin on this thread only; 'name' may be NULL (keep the kernel's name).
 * At most PN_NEXT_METRICS metrics; flops are doubles, bytes an int (upstream
 * coercions). Returns 0, or -EINVAL for too many metrics. */
#define PN_NEXT_METRICS 8
PN_API int pn_launch_next(const char *name, int n, const char *const *names, const double *values);

/* Optional per-program-instance timeline events (when the launch asked for them:
 * pn_launch_wants_programs()). pid is the program id. */
PN_API int pn_launch_wants_programs(const PnLaunch *l);
PN_API void pn_program_begin(PnThread *t, const int32_t pid[3]);
PN_API void pn_program_end(PnThread *t);
/* Worker t is about to run part of program pid (iterations of its smt.parallel loop)
 * outside a program event of its own: the in-kernel scopes it records until its next
 * pn_program_begin or pn_worker_assist carry pid. No event is recorded. */
PN_API void pn_worker_assist(PnThread *t, const int32_t pid[3]);

/* ---- sessions (triton.profiler) ------------------------------------------------------ */

enum { PN_DATA_TREE = 0, PN_DATA_TRACE = 1 };
enum { PN_CONTEXT_SHADOW = 0, PN_CONTEXT_PYTHON = 1 };

/* Starts (and activates) a session writing to 'path' + format suffix at finalize
 * ("" or "-": stdout; NULL: "proton"). The calling thread is the session's main
 * thread: another thread's stack for the session starts as a copy of the main
 * thread's open scopes (taken when it first records into the session). A live
 * session with the same path is
 * re-activated and its id returned. Ids start at 0 and are never reused. Returns the
 * id (>= 0) or -errno (message in pn_last_error): -ECANCELED when Proton is disabled,
 * -EINVAL for an unknown context or data, -EMFILE beyond 31 live sessions.
 * context PN_CONTEXT_SHADOW: call paths are host scope names. PN_CONTEXT_PYTHON: a
 * kernel's call path is the Python stack given with pn_python_frames (ROOT when none
 * was given); host scopes add no nodes, their metrics go to the node of the path
 * given at their enter. */
PN_API int pn_session_start(const char *path, int context, int data);
/* id < 0: all sessions. -EINVAL "Session has not been initialized: <id>" otherwise. */
PN_API int pn_session_activate(int id);
PN_API int pn_session_deactivate(int id);
/* Writes the session's file(s) and deletes it. fmt: "" (tree → .hatchet, trace →
 * .chrome_trace), "hatchet", "hatchet_msgpack", "chrome_trace"; a session that advanced
 * past phase 0 writes <path>.part_<phase>.<format> per phase it still holds; a
 * mismatch or unknown format returns
 * -EINVAL (upstream messages) and keeps the session. id < 0: all sessions. Unknown ids
 * are ignored (returns 0). */
PN_API int pn_session_finalize(int id, const char *fmt);
/* Number of frames on the session's context stack for this thread, or -1 (0 for a
 * python-context session: its stack is Python's, counted by the Python layer). */
PN_API int pn_session_depth(int id);
/* Writes the session's tree (phase 0) as hatchet JSON text to the callback (for
 * data.get()); -EINVAL for data=trace sessions ("Only TreeData is supported ...") and
 * unknown ids. */
PN_API int pn_session_tree_json(int id, void (*write)(const char *s, size_t n, void *user), void *user);

/* ---- phases (triton.profiler.data, reference/proton.md §1.6) --------------------------
 *
 * A session records into its current phase (0 at start). pn_session_advance_phase
 * starts the next one (returns its number); earlier phases keep their data until
 * cleared or finalized, and finalize then writes every remaining phase to
 * <path>.part_<phase>.<format>. Each phase a session holds takes one of the 31
 * consumer slots (-EMFILE when none is free). Open host scopes carry over into the
 * new phase. A phase is complete once flushed: pn_session_flush (deactivate with
 * flushing=True) completes every phase before the current one. */
PN_API int pn_session_advance_phase(int id);
/* id < 0: every session. */
PN_API int pn_session_flush(int id);
/* 1 when 'phase' is complete, 0 when not, -EINVAL for an unknown session. */
PN_API int pn_session_phase_complete(int id, int phase);
/* Drops the data of 'phase' (up_to: of every phase <= 'phase'); the current phase
 * starts over empty (open scopes carry over). */
PN_API int pn_session_clear(int id, int phase, int up_to);
/* The tree of one phase (an empty tree for a phase the session does not hold) as
 * hatchet JSON text (msgpack = 0) or MessagePack bytes of the same structure
 * (msgpack = 1). Errors as pn_session_tree_json. */
PN_API int pn_session_phase_tree(int id, int phase, int msgpack,
                                 void (*write)(const char *s, size_t n, void *user), void *user);

/* ---- states (proton.state) -------------------------------------------------------------
 *
 * At most one state per thread. While it is set, the state names the last element of
 * the call path of everything recorded on the thread: a kernel node hangs below
 * <scopes>/<state>, and a scope entered meanwhile keeps its node but its metrics go to
 * the leaf <scopes>/<scope>/<state>. "__proton_launch_metadata:<k>" is two elements
 * (__proton_launch_metadata, then <k>). pn_state_exit clears it. */
PN_API int pn_state_enter(const char *name);
PN_API void pn_state_exit(void);

/* ---- Python call paths (context="python" sessions) ------------------------------------ */

/* Nonzero while a python-context session records. One load: the Python launcher
 * checks it before walking the Python stack. */
PN_API extern volatile int pn_python_flag;
static inline int pn_python_active(void) { return pn_python_flag; }

#define PN_MAX_FRAMES 256

/* Interned id (>= 1) of a frame name, "<file>:<line>@<function>"; 0 on allocation
 * failure. Thread-safe (takes a lock: callers cache the ids). */
PN_API uint32_t pn_frame_intern(const char *name);
/* The Python stack of this thread's next pn_launch_begin or pn_scope_enter, whichever
 * comes first: n frame ids from pn_frame_intern, outermost first (beyond
 * PN_MAX_FRAMES only the innermost are kept). n = 0 clears a pending stack. A
 * repeated stack costs a compare, a new one a lock. 0, -EINVAL or -ENOMEM. */
PN_API int pn_python_frames(const uint32_t *frames, int n);

/* ---- host scopes ------------------------------------------------------------------- */

/* Pushes a scope named 'name' on this thread's stack in every recording consumer
 * (active sessions, kernel capture); returns a fresh scope id (process-wide counter
 * starting at 1) whether or not anything records. */
PN_API uint64_t pn_scope_enter(const char *name);
/* Pops the innermost scope on this thread (from exactly the consumers it was pushed
 * on). -EINVAL "Context stack is empty" when this thread has no open scope (also when
 * the matching enter happened before anything recorded: callers may ignore it), and
 * -EINVAL "Context stack is not balanced" (after popping) when scope_id is nonzero and
 * not the innermost scope's id. */
PN_API int pn_scope_exit(uint64_t scope_id);

/* Adds a metric to the innermost scope node of this thread (or the root when none) in
 * every recording consumer. kind: PN_METRIC_INT, _DOUBLE; exclusive/property flags
 * follow the upstream "(exc)" / "(pty)" suffix rules and are parsed from 'name'
 * (and stripped); flops* are stored as doubles and bytes as ints. Mixing kinds for one
 * name on one node returns -EINVAL with the upstream message ("Metric value type
 * mismatch for valueId 0 (<name>): current=double, new=int64_t") and adds nothing. */
enum { PN_METRIC_INT = 0, PN_METRIC_DOUBLE = 1 };
PN_API int pn_scope_add_metric(const char *name, int kind, int64_t ival, double dval);
/* The same for a vector metric of n elements (ivals for PN_METRIC_INT, dvals for
 * PN_METRIC_DOUBLE; flops* become doubles, bytes ints). Repeated additions sum element
 * by element ("(pty)": overwrite). Errors (-EINVAL, nothing added): a scalar and a
 * vector, or int and double elements, for one name on one node ("Metric value type
 * mismatch for valueId 0 (<name>): current=std::vector<int64_t>, new=double"), or a
 * different length ("Vector metric size mismatch for valueId 0 (<name>): current=3,
 * new=2"). */
PN_API int pn_scope_add_metric_vec(const char *name, int kind, const int64_t *ivals,
                                   const double *dvals, uint32_t n);

/* ---- kernel capture / spine-triton compatibility ----------------------------------- */

/* Nonzero while the capture store records (PROTON_KERNEL_CAPTURE, profiler.start()). */
PN_API int pn_capture_active(void);
/* Clears everything recorded by kernel capture and the compatibility profiler. */
PN_API void pn_capture_reset(void);
/* Starts / stops recording into the capture store (profiler.start()/stop()). Starting
 * also keeps a timeline from then on (pn_capture_keep_timeline). */
PN_API void pn_capture_enable(int on);
/* The capture store keeps a timeline from now on, whatever PROTON_OUTPUT says: for
 * callers that may dump it as a Chrome trace later (the spine-triton profiler module
 * calls it when imported). Otherwise it keeps one only when PROTON_OUTPUT names a
 * Chrome trace or PROTON_VERBOSE lists launches; never at PROTON_TRACE_LIMIT=0. */
PN_API void pn_capture_keep_timeline(void);
/* Writes the capture store: path NULL → PROTON_OUTPUT, or the console table on
 * stderr when that is unset too. Format by suffix: .json / .chrome_trace → Chrome
 * trace, .hatchet → tree, anything else → the console table into that file. Marks the
 * store as written (the exit handler will not write it again unless more is
 * recorded). 0 or -errno. */
PN_API int pn_capture_dump(const char *path);
/* Aggregated capture results as JSON text {"kernel[grid]": {"count":..,"total_ns":..,
 * "min_ns":..,"max_ns":..,"avg_ns":..}, ...}, through the callback. */
PN_API int pn_capture_results_json(void (*write)(const char *s, size_t n, void *user), void *user);

/* The capture output this process named in PROTON_OUTPUT_TAKEN for its descendants
 * (which then write <name>.<pid> instead), or NULL. Borrowed. For hosts that keep a
 * copy of the environment (Python's os.environ). */
PN_API const char *pn_output_taken(void);

/* Writes all pending output now (finalizes every session, dumps the capture store
 * when it holds undumped data). The exit and signal handlers do the same; safe to
 * call more than once. */
PN_API void pn_flush_all(void);
/* The same as the process exit handler: pn_flush_all, and "proton: wrote PATH"
 * for the capture file. For hosts whose exit path skips C atexit handlers
 * (Python re-raises SIGINT after an uncaught KeyboardInterrupt). */
PN_API void pn_flush_at_exit(void);

/* ---- counters -------------------------------------------------------------------- */

/* Events in use (names as printed in outputs: "task-clock (ns)" for time events) and
 * where they come from. Resolves PROTON_EVENTS on first use (probing perf_event);
 * prints nothing. pn_counter_name returns NULL out of range; borrowed strings. */
PN_API int pn_counter_count(void);
PN_API const char *pn_counter_name(int i);
PN_API const char *pn_counter_source(void); /* "hardware", "software" or "none" */

/* Every event libpfm4 knows for the PMUs of this machine (plus the generic perf
 * software events), through the callback: name, description, pmu name, and whether
 * it is a hardware event. Returns the number of events or -errno. */
typedef void (*PnEventFn)(const char *name, const char *desc, const char *pmu, int is_hw,
                          void *user);
PN_API int pn_events_foreach(PnEventFn fn, void *user);
/* Tries to open 'name' (libpfm4 syntax) for this thread now and closes it again.
 * Returns 0 when it opens, else -errno with the reason in 'why'. */
PN_API int pn_event_probe(const char *name, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif /* PROTON_H */
