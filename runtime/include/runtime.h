/*
 * runtime.h — Tritium's kernel runtime: the on-disk kernel cache, the kernel loader
 * and the OpenMP grid launcher.
 *
 * Callers: python/src (the CPython extension). It computes the cache key, compiles on a
 * miss (through the compiler), then uses this module to store, look up, load and launch
 * kernels. The runtime knows nothing about Python or the compiler: a cache entry is a
 * directory of named files with a manifest, and a kernel is a shared object exporting
 * `tritium_kernel` (the entry ABI of docs/compiler.md §1.2). Launches call the Proton
 * launch hooks (proton.h) only while pn_active() is true; pn_init() is the embedder's job.
 *
 * Ownership: `_create`/`_load` results belong to the caller and are freed with the
 * matching `_destroy`/`_unload`; `_dup` strings are freed with free(); every other
 * returned string is borrowed and its lifetime is stated at the function.
 * Thread safety: every function may be called from any thread. Cache operations are
 * also safe across processes sharing one cache directory (atomic rename).
 * Errors: functions returning int give 0 (or a documented non-negative status) on
 * success and -errno on failure; the text is in rt_last_error() (per thread).
 * Environment (docs/runtime.md §5): TRITON_CACHE_DIR, TRITON_HOME, TRITON_ALWAYS_COMPILE,
 * OMP_NUM_THREADS, TRITIUM_OMP_LIB, TRITIUM_DEBUG.
 */
#ifndef RUNTIME_H
#define RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors, environment, statistics --------------------------------------------- */

/* Text of the last error on this thread ("" when none); borrowed, valid until the next
 * rt_ call on this thread. */
const char *rt_last_error(void);

/* Nonzero when TRITON_ALWAYS_COMPILE is 1/true/yes/on: the caller should ignore disk
 * hits and store with RT_STORE_REPLACE. Reads the environment on every call. */
int rt_env_always_compile(void);
/* Nonzero when TRITIUM_DEBUG is 1/true/yes/on: cache and loader events are logged on
 * stderr as "[tritium] ...". Reads the environment on every call. */
int rt_env_debug(void);

/* Process-wide cache and launch counters, incremented by the caller (which knows what happened)
 * and read by tests and the Python API. ORDER RT_STATS. */
#define RT_STATS(X)                                                                      \
    X(COMPILE, "compiles")                                                               \
    X(DISK_HIT, "disk_hits")                                                             \
    X(MEMORY_HIT, "memory_hits")                                                         \
    X(CORRUPT_REBUILD, "corrupt_rebuilds")                                                \
    X(STREAM_LAUNCH, "streaming_launches")                                               \
    X(CG_SERVER, "compile_servers")                                                      \
    X(CG_FORK, "compile_forks")

typedef enum RtStat {
#define RT_STAT_ENUM(e, s) RT_STAT_##e,
    RT_STATS(RT_STAT_ENUM)
#undef RT_STAT_ENUM
    RT_STAT_COUNT
} RtStat;

typedef struct RtStats {
    uint64_t count[RT_STAT_COUNT]; /* indexed by RtStat */
} RtStats;

/* Adds one to a counter (relaxed atomic; cheap enough for every launch). */
void rt_stats_add(RtStat kind);
/* Copies the counters into caller-provided storage. */
void rt_stats_get(RtStats *out);
/* Sets every counter to zero (tests). */
void rt_stats_reset(void);
/* "compiles", "disk_hits", ...; borrowed static string, NULL for a bad kind. */
const char *rt_stat_name(RtStat kind);

/* ---- cache --------------------------------------------------------------------- */

/* Root directory of the cache: $TRITON_CACHE_DIR, else $TRITON_HOME/.triton/cache, else
 * ~/.triton/cache. Read on every call (not cached). Caller owns the result; free(). */
char *rt_cache_root_dup(void);

/* Role of a file in an entry: at most one KERNEL (the .so) and one METADATA (the JSON
 * the caller writes; returned as text by lookups). Everything else is DATA (stage dumps
 * such as .ttir, .llir, .s). */
typedef enum RtFileRole {
    RT_FILE_DATA = 0,
    RT_FILE_KERNEL,
    RT_FILE_METADATA,
    RT_FILE_ROLE_COUNT
} RtFileRole;

/* One file to store. 'name' is a plain file name: characters [A-Za-z0-9._+-], not
 * starting with '.', at most 200 bytes, not "manifest.json". Give either the contents
 * (data, len) or src_path, an existing file that is moved into the entry: hard-linked
 * (copied across file systems) and unlinked once the store succeeds; on failure it is
 * left where it was. */
typedef struct RtCacheFile {
    const char *name;
    RtFileRole role;
    const void *data;
    size_t len;
    const char *src_path;
} RtCacheFile;

/* Why an entry is corrupt. ORDER RT_CORRUPT (rt_corrupt_name). */
typedef enum RtCorrupt {
    RT_CORRUPT_NONE = 0,
    RT_CORRUPT_NOT_DIRECTORY, /* <root>/<key> exists but is not a directory */
    RT_CORRUPT_NO_MANIFEST,   /* manifest.json missing */
    RT_CORRUPT_BAD_MANIFEST,  /* unparsable, wrong format/key, bad file names */
    RT_CORRUPT_MISSING_FILE,  /* a file listed in the manifest is missing */
    RT_CORRUPT_SIZE,          /* a file's size differs from the manifest */
    RT_CORRUPT_CHECKSUM,      /* a file's 64-bit checksum differs from the manifest */
    RT_CORRUPT_COUNT
} RtCorrupt;

/* "missing manifest", "size mismatch", ...; borrowed static string. */
const char *rt_corrupt_name(RtCorrupt reason);

/* Filled by rt_cache_lookup when it returns RT_CACHE_CORRUPT (reason NONE otherwise);
 * 'detail' names the file and the mismatch, for the caller's warning. */
typedef struct RtCacheCheck {
    RtCorrupt reason;
    char detail[512];
} RtCacheCheck;

/* A verified cache entry: the directory, its files and the metadata text. Opaque. */
typedef struct RtCacheEntry RtCacheEntry;

enum { RT_CACHE_HIT = 0, RT_CACHE_MISS = 1, RT_CACHE_CORRUPT = 2 };

/* Looks up 'key' ([A-Za-z0-9._+-], 1..200 bytes, not starting with '.') and verifies
 * the entry: every file of the manifest must exist with the recorded size and checksum
 * (files are read in full: a lookup costs one read of the entry). Returns
 *   RT_CACHE_HIT      *out is the entry (caller owns it: rt_cache_entry_destroy()),
 *   RT_CACHE_MISS     no entry (also when the root does not exist),
 *   RT_CACHE_CORRUPT  *why (if not NULL) says why; the caller warns and rebuilds, and
 *                     rt_cache_store() replaces the entry,
 *   -errno            the cache could not be read (bad key: -EINVAL).
 * *out is NULL unless HIT. Never crashes on any file content. Logs with TRITIUM_DEBUG. */
int rt_cache_lookup(const char *key, RtCacheEntry **out, RtCacheCheck *why);

/* Store flags. RT_STORE_REPLACE replaces an existing entry even when it is valid
 * (TRITON_ALWAYS_COMPILE); without it a valid existing entry is kept. */
enum { RT_STORE_REPLACE = 1 };
/* Store results (non-negative). */
enum { RT_STORE_INSTALLED = 0, RT_STORE_KEPT_EXISTING = 1, RT_STORE_REPLACED = 2 };

/* Stores 'files' as entry 'key': everything is written (and fsynced) into
 * <root>/.tmp.<pid>.<random>/ with a manifest of sizes and checksums, then the directory
 * is renamed to <root>/<key> atomically. If another process installed a valid entry
 * first, theirs is kept and ours deleted (RT_STORE_KEPT_EXISTING); a corrupt existing
 * entry (or any, with RT_STORE_REPLACE) is renamed aside, replaced and deleted
 * (RT_STORE_REPLACED). Creates the root (mode 0755) when missing and removes temp dirs
 * left behind by dead processes. If 'out' is not NULL, *out receives the entry now in
 * place (ours or the kept one; caller owns it). Returns a RT_STORE_* status or -errno
 * (-EINVAL: bad key, name, role or missing contents). */
int rt_cache_store(const char *key, const RtCacheFile *files, size_t nfiles, unsigned flags,
                   RtCacheEntry **out);

/* Frees an entry; NULL is ignored. Strings obtained from it become invalid. */
void rt_cache_entry_destroy(RtCacheEntry *e);

/* Accessors; all strings are borrowed and valid until rt_cache_entry_destroy(). */
const char *rt_cache_entry_key(const RtCacheEntry *e);
const char *rt_cache_entry_dir(const RtCacheEntry *e); /* <root>/<key> */
size_t rt_cache_entry_num_files(const RtCacheEntry *e);
const char *rt_cache_entry_file_name(const RtCacheEntry *e, size_t i);
const char *rt_cache_entry_file_path(const RtCacheEntry *e, size_t i);
RtFileRole rt_cache_entry_file_role(const RtCacheEntry *e, size_t i);
/* Path of the file called 'name', or NULL when the entry has none. */
const char *rt_cache_entry_path(const RtCacheEntry *e, const char *name);
/* Path of the KERNEL file, or NULL when the entry has none. */
const char *rt_cache_entry_kernel_path(const RtCacheEntry *e);
/* Contents of the METADATA file, NUL-terminated, length in *len (if not NULL); NULL
 * (and *len = 0) when the entry has none. */
const char *rt_cache_entry_metadata(const RtCacheEntry *e, size_t *len);

/* ---- loader -------------------------------------------------------------------- */

/* The kernel entry (docs/compiler.md §1.2): runs one program instance. */
typedef void (*RtKernelFn)(const uint64_t *args, int32_t pid_x, int32_t pid_y, int32_t pid_z,
                           int32_t num_x, int32_t num_y, int32_t num_z, void *pctx);

/* A loaded kernel shared object. Opaque. */
typedef struct RtKernel RtKernel;

/* Loads 'so_path' (dlopen RTLD_NOW | RTLD_LOCAL) and resolves "tritium_kernel". The
 * kernel stays valid when the file is later replaced or deleted; loading a path whose
 * file was replaced (new inode) while the old one is still loaded gives the new code.
 * Returns 0 and *out (caller owns it: rt_kernel_unload()), or -ENOENT (no such file) /
 * -ENOEXEC (dlopen failed or no tritium_kernel symbol; dlerror text in rt_last_error). */
int rt_kernel_load(const char *so_path, RtKernel **out);
/* Unloads the kernel (dlclose); NULL is ignored. Do not launch it afterwards. */
void rt_kernel_unload(RtKernel *k);
/* The entry point; valid until rt_kernel_unload(). */
RtKernelFn rt_kernel_fn(const RtKernel *k);
/* The optional second entry "tritium_kernel_nt": the same kernel with non-temporal
 * (streaming) stores to its outputs, for launches that store more than the cache
 * holds (docs/runtime.md). NULL when the library has none. */
RtKernelFn rt_kernel_fn_streaming(const RtKernel *k);
/* Bytes a launch must store before the streaming entry pays off (rt_stream.c:
 * TRITIUM_STREAM_STORES, default half the last-level cache; INFINITY: never). */
double rt_stream_threshold(void);
/* ---- launch cost (rt_cost.c) ------------------------------------------------------ */

/* A kernel's cost with the trip counts of loops known only at launch. */
typedef struct RtCost RtCost;

/* Parses the compiler's trip-count program (IrCost.trips); NULL when text is empty
 * or malformed (then the static per-program cost is all there is). Caller owns the
 * result; free with rt_cost_destroy(). */
RtCost *rt_cost_create(const char *text);
void rt_cost_destroy(RtCost *c);

/* The cost of one launch of 'grid' with packed arguments 'args', summed over its
 * programs: out[0] bytes loaded + stored, out[1..3] flops fp16, fp32, fp64, then the
 * same four for each in-kernel scope id (out[4 + 4 * id ...], an outer scope's
 * including its nested scopes') as far as nout (a multiple of 4) reaches. Returns
 * 1 when every trip count was known, 0 when some loop was counted once (a while
 * loop, bounds read from memory), -ENOMEM / -EINVAL (nout < 4). Thread-safe (c is
 * read only). Matches PnCostFn (proton.h). */
int rt_cost_eval(const RtCost *c, const uint64_t *args, const int32_t grid[3], double *out, int nout);

/* Size of the last-level data cache in bytes (sysfs; 8 MiB when unknown). */
double rt_llc_bytes(void);
/* The path given to rt_kernel_load; borrowed, valid until rt_kernel_unload(). */
const char *rt_kernel_path(const RtKernel *k);
/* Launch flags the kernel wants (rt_launch_ex): RT_LAUNCH_TEAMS when its library
 * exports tritium_parallel_for (it has smt.parallel loops; the loader pointed that
 * at rt_parallel_for); RT_LAUNCH_DEBUG when it exports tritium_debug_print or
 * tritium_debug_assert (tl.device_print, tl.device_assert; pointed at rt_debug_*). */
unsigned rt_kernel_launch_flags(const RtKernel *k);

/* ---- smt.parallel loops --------------------------------------------------------- */

/* A parallel loop's body: runs iterations [lo, hi) of the loop, with pctx the
 * Proton context of the thread running it. */
typedef void (*RtParallelBody)(void *data, int64_t lo, int64_t hi, void *pctx);
/* Runs body over iterations [0, n) — each exactly once, in chunks, returning when all
 * are done. Inside a launch with RT_LAUNCH_TEAMS that gave this program a team of
 * threads, the chunks are spread over the team (the calling thread, the program's,
 * takes part with its own pctx; the others pass theirs); otherwise, and for a loop
 * inside a parallel loop's body, body(data, 0, n, pctx) runs on the calling thread.
 * The function compiled kernels call through their tritium_parallel_for pointer
 * (docs/compiler.md §1.2). */
void rt_parallel_for(RtParallelBody body, void *data, int64_t n, void *pctx);

/* ---- tl.device_print / tl.device_assert ------------------------------------------ */

/* What compiled kernels call through their tritium_debug_print pointer (set by the
 * loader): prints every element of each operand, data[i] the address of operand i
 * (dense, row-major), 'desc' the print's constant descriptor (rt_debug.c). Output
 * goes to fd 1, per program in one write when called inside a launch. */
void rt_debug_print(const char *desc, int32_t px, int32_t py, int32_t pz, const uint64_t *data);
/* Through tritium_debug_assert, when an assert's condition is false somewhere:
 * records the failure for the launch and leaves the program (see RT_LAUNCH_DEBUG).
 * Called outside a launch, prints the report on stderr and returns. */
void rt_debug_assert(const char *desc, int32_t px, int32_t py, int32_t pz);

/* ---- launcher ------------------------------------------------------------------ */

/* Runs every program instance of 'grid' (x fastest, then y, then z) exactly once and
 * returns when all have finished. 'args' is the 8-byte slot array handed to every
 * program unchanged. A grid with 0 programs returns at once; a 1-program grid or
 * nthreads == 1 runs inline on the calling thread; otherwise an OpenMP team of
 * min(nthreads, programs) threads (nthreads 0 = rt_threads_default()) splits the
 * linearised range into contiguous chunks (static schedule). 'pn_site' is the id from
 * pn_kernel_register() (0 if none). When pn_active() is false no Proton hook is called
 * and pctx points to a static no-op PnThread; otherwise the launch is recorded and each
 * worker's PnThread is passed. Returns 0, or -EINVAL for a negative grid size or
 * nthreads (or more than 2^63 programs). Thread-safe; may be called from inside an
 * OpenMP region (then runs on one thread). In a forked child every launch runs on one
 * thread: libgomp's pool does not survive fork. */
int rt_launch(RtKernelFn fn, const uint64_t *args, const int32_t grid[3], int nthreads,
              uint32_t pn_site);
/* Launch flags (rt_kernel_launch_flags). RT_LAUNCH_DEBUG: the kernel calls
 * rt_debug_print / rt_debug_assert (tl.device_print, tl.device_assert): its programs
 * run one by one under a guard, each program's print output is written when it ends,
 * and a failing assert stops the launch, which returns -ECANCELED with the report
 * ("file:line: kernel: program (x, y, z): Assertion `msg` failed") as
 * rt_last_error(). RT_LAUNCH_TEAMS: the kernel runs smt.parallel
 * loops through rt_parallel_for; when the grid has fewer programs than threads
 * (nthreads, or the default), every thread joins the launch and each program gets a
 * team of threads/programs of them (the remainder to the first teams) to spread its
 * loops over. With as many programs as threads, or one thread, as rt_launch. */
enum { RT_LAUNCH_TEAMS = 1, RT_LAUNCH_DEBUG = 2 };
/* rt_launch with flags. */
int rt_launch_ex(RtKernelFn fn, const uint64_t *args, const int32_t grid[3], int nthreads,
                 uint32_t pn_site, unsigned flags);

/* Resolves the OpenMP runtime (docs/runtime.md §4.2: an already-loaded libgomp, such as
 * torch's, else libgomp.so.1, or TRITIUM_OMP_LIB) and the default thread count. Called
 * automatically by the first multi-threaded launch; idempotent. Returns 0, or -ENOENT
 * when no OpenMP runtime could be loaded (launches then run on one thread). */
int rt_threads_init(void);
/* Default thread count: OMP_NUM_THREADS if set (first value of a list), else the CPUs
 * in this thread's affinity mask. */
int rt_threads_default(void);
/* Sets the default thread count; n <= 0 re-reads OMP_NUM_THREADS and the CPU mask. */
void rt_threads_set_default(int n);
/* Path of the OpenMP runtime in use, or "none"; borrowed static string. Calls
 * rt_threads_init(). */
const char *rt_threads_runtime(void);

#ifdef __cplusplus
}
#endif
#endif /* RUNTIME_H */
