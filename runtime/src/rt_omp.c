/*
 * rt_omp.c — which OpenMP runtime runs our parallel launches, and how many threads.
 *
 * We do not link libgomp. At the first multi-threaded launch we look for an OpenMP
 * runtime already mapped into the process (dl_iterate_phdr: libgomp*, e.g. the copy in
 * torch/lib or a renamed libgomp-<hash>.so.1 of other wheels; else LLVM's libomp or
 * Intel's libiomp5, which export the same GOMP_ entry points) and take GOMP_parallel,
 * omp_get_thread_num and omp_get_num_threads from it, so that torch and our kernels
 * share one thread pool. Only when none is loaded do we dlopen("libgomp.so.1").
 * TRITIUM_OMP_LIB=<path or soname> forces a runtime, "none" forces serial launches.
 * docs/runtime.md §4.2 has the measurements behind this choice.
 */
#include "rt_int.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Upper bound for OMP_NUM_THREADS, a guard against typos like 10000000. */
#define MAX_THREADS 4096

RtOmp rt_omp;
_Atomic int rt_omp_ready;
_Atomic int rt_default_threads;
_Atomic int rt_omp_forked;

static pthread_once_t omp_once = PTHREAD_ONCE_INIT;
static pthread_once_t threads_once = PTHREAD_ONCE_INIT;
static const char *runtime_name = "none";
static int omp_rc;

/* ---- thread count -------------------------------------------------------------------- */

/* OMP_NUM_THREADS (first entry of a list such as "4,2"), else the CPUs this thread may
 * run on (sched_getaffinity: taskset, cgroups cpusets), else the online CPUs. */
static int
threads_from_env(void)
{
    const char *v = getenv("OMP_NUM_THREADS");
    cpu_set_t set;
    long n;
    char *end;

    if (v) {
        n = strtol(v, &end, 10);
        if (end != v && n >= 1 && (*end == 0 || *end == ',' || isspace((unsigned char)*end)))
            return n > MAX_THREADS ? MAX_THREADS : (int)n;
    }
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n > MAX_THREADS ? MAX_THREADS : n) : 1;
}

/* pthread_once body for the default thread count. */
static void
threads_resolve(void)
{
    atomic_store(&rt_default_threads, threads_from_env());
}

int
rt_threads_default(void)
{
    pthread_once(&threads_once, threads_resolve);
    return atomic_load_explicit(&rt_default_threads, memory_order_relaxed);
}

void
rt_threads_set_default(int n)
{
    pthread_once(&threads_once, threads_resolve);
    atomic_store(&rt_default_threads, n > 0 ? (n > MAX_THREADS ? MAX_THREADS : n)
                                            : threads_from_env());
}

/* ---- fork ------------------------------------------------------------------------------ */

/* libgomp is not fork-safe: in a child of a process whose thread used the pool (ours or
 * torch's: we share it), the next parallel region waits forever for pool threads that
 * were not copied. We cannot know whether torch used it, so every forked child runs
 * its launches on one thread (torch's DataLoader workers do the same). */
static void
on_fork_child(void)
{
    atomic_store_explicit(&rt_omp_forked, 1, memory_order_relaxed);
}

/* Registered at load time, before any fork we must survive. */
__attribute__((constructor)) static void
register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}

/* ---- runtime discovery ----------------------------------------------------------------- */

static void
noop_region(void *data)
{
    (void)data;
}

/* Starts the runtime's thread team with an empty region, so that the first
 * launch (and its Proton record) does not include creating the threads
 * (~0.3 ms for two threads here, more on bigger machines). */
static void
warm_team(void)
{
    int n = rt_threads_default();
    if (rt_omp.parallel && n > 1)
        rt_omp.parallel(noop_region, NULL, (unsigned)n, 0);
}

/* Takes the three entry points from 'h'; 0 on success. GOMP_parallel(fn, data, n, 0)
 * is what GCC emits for `#pragma omp parallel num_threads(n)`: fn runs on n threads,
 * the caller being thread 0, and returns after the implicit barrier. The handle is
 * never closed. */
static int
bind(void *h, const char *name)
{
    RtOmp o;

    o.parallel = (RtOmpParallelFn)(uintptr_t)dlsym(h, "GOMP_parallel");
    o.thread_num = (int (*)(void))(uintptr_t)dlsym(h, "omp_get_thread_num");
    o.num_threads = (int (*)(void))(uintptr_t)dlsym(h, "omp_get_num_threads");
    if (!o.parallel || !o.thread_num || !o.num_threads)
        return -1;
    rt_omp = o;
    runtime_name = rt_xstrdup(name);
    return 0;
}

typedef struct Found {
    char path[PATH_MAX];
    int rank; /* 1 libgomp, 2 libomp/libiomp5, 0 none yet */
} Found;

/* dl_iterate_phdr callback: remembers the first loaded object of the best rank. */
static int
find_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
    Found *f = data;
    const char *name = info->dlpi_name, *base;
    int rank;

    (void)size;
    if (!name || !*name)
        return 0;
    base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (strncmp(base, "libgomp", 7) == 0)
        rank = 1;
    else if (strncmp(base, "libomp.", 7) == 0 || strncmp(base, "libiomp5", 8) == 0)
        rank = 2;
    else
        return 0;
    if ((!f->rank || rank < f->rank) && strlen(name) < sizeof f->path) {
        strcpy(f->path, name);
        f->rank = rank;
    }
    return 0;
}

/* Tries TRITIUM_OMP_LIB; returns 0 when it named a usable runtime (or "none"). */
static int
try_forced(void)
{
    const char *env = getenv("TRITIUM_OMP_LIB");
    void *h;

    if (!env || !*env)
        return -1;
    if (strcmp(env, "none") == 0)
        return 0;
    h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (h && bind(h, env) == 0)
        return 0;
    rt_warn("TRITIUM_OMP_LIB=%s is not a usable OpenMP runtime (%s); searching", env,
            h ? "no GOMP_parallel" : dlerror());
    return -1;
}

/* pthread_once body: forced runtime, else an already-loaded one, else libgomp.so.1,
 * else serial. Publishes rt_omp with a release store that rt_launch acquires. */
static void
omp_resolve(void)
{
    Found f = {{0}, 0};
    void *h;

    if (try_forced() == 0)
        goto done;
    dl_iterate_phdr(find_loaded, &f);
    /* RTLD_NOLOAD: a handle to the mapped copy (by its path), never a second load */
    if (f.rank && (h = dlopen(f.path, RTLD_NOW | RTLD_NOLOAD)) && bind(h, f.path) == 0)
        goto done;
    /* same soname torch's libgomp has: a torch loaded later reuses this copy */
    if ((h = dlopen("libgomp.so.1", RTLD_NOW | RTLD_LOCAL)) && bind(h, "libgomp.so.1") == 0)
        goto done;
    omp_rc = -ENOENT;
    rt_warn("no OpenMP runtime found (libgomp.so.1: %s); kernels run on one thread",
            dlerror());
done:
    rt_log("OpenMP runtime %s, default %d threads", runtime_name, rt_threads_default());
    warm_team();
    atomic_store_explicit(&rt_omp_ready, 1, memory_order_release);
}

/* Both onces: the thread count may be wanted (rt_threads_default) long before the
 * first parallel launch, and must not force the runtime choice that early. */
int
rt_threads_init(void)
{
    pthread_once(&threads_once, threads_resolve);
    pthread_once(&omp_once, omp_resolve);
    return omp_rc < 0 ? rt_fail(-omp_rc, "no OpenMP runtime") : 0;
}

const char *
rt_threads_runtime(void)
{
    rt_threads_init();
    return runtime_name;
}
