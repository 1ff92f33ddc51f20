/*
 * rt_int.h — runtime internals shared by the files of runtime/src; not installed.
 *
 * Groups each file's cross-file exports under a comment naming the file, so this header
 * is also the index of the module.
 */
#ifndef RT_INT_H
#define RT_INT_H

#include "runtime.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RT_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Longest key or file name accepted (bytes). */
#define RT_NAME_MAX 200
/* The manifest's file name inside an entry, and its format tag. */
#define RT_MANIFEST_NAME "manifest.json"
#define RT_MANIFEST_FORMAT "tritium-cache/1"

/* rt_util.c */
int rt_fail(int err, const char *fmt, ...) RT_PRINTF(2, 3);
void rt_log(const char *fmt, ...) RT_PRINTF(1, 2);
void rt_warn(const char *fmt, ...) RT_PRINTF(1, 2);
int rt_env_flag(const char *name);
void *rt_xmalloc(size_t n);
void *rt_xcalloc(size_t n, size_t size);
char *rt_xstrdup(const char *s);
char *rt_xasprintf(const char *fmt, ...) RT_PRINTF(1, 2);
int rt_name_ok(const char *s);

/* rt_hash.c — XXH64 (seed 0), streaming. */
typedef struct RtHash {
    uint64_t v[4];
    uint64_t total;
    unsigned char buf[32];
    size_t nbuf;
} RtHash;
void rt_hash_init(RtHash *h);
void rt_hash_update(RtHash *h, const void *p, size_t n);
uint64_t rt_hash_final(const RtHash *h);
uint64_t rt_hash64(const void *p, size_t n);

/* rt_fs.c */
int rt_fs_mkdirs(const char *path, mode_t mode);
int rt_fs_remove_tree(const char *path);
int rt_fs_write(const char *path, const void *data, size_t len, uint64_t *hash);
int rt_fs_move_in(const char *src, const char *dst, uint64_t *size, uint64_t *hash);
int rt_fs_hash(const char *path, uint64_t max, uint64_t *size, uint64_t *hash);
int rt_fs_read(const char *path, size_t max, char **out, size_t *len);
int rt_fs_sync_dir(const char *path);

/* rt_manifest.c */
typedef struct RtManFile {
    char *name;
    RtFileRole role;
    uint64_t size;
    uint64_t hash;
} RtManFile;

typedef struct RtManifest {
    RtManFile *files;
    size_t nfiles;
} RtManifest;

char *rt_manifest_print(const RtManifest *m, const char *key);
int rt_manifest_parse(RtManifest *m, const char *text, size_t len, const char *key, char *why,
                      size_t whylen);
void rt_manifest_fini(RtManifest *m);
const char *rt_role_name(RtFileRole role);

/* rt_cache.c — helpers shared with rt_store.c. */
struct RtCacheEntry {
    char *key;
    char *dir;
    RtManifest man;
    char **paths;    /* one per manifest file */
    char *metadata;  /* NUL-terminated contents of the METADATA file, or NULL */
    size_t metadata_len;
};
int rt_cache_key_dir(const char *key, char **root, char **dir);
int rt_cache_verify(const char *dir, const char *key, RtCacheEntry **out, RtCacheCheck *why);
RtCacheEntry *rt_cache_entry_new(const char *dir, const char *key, RtManifest *man);
const char *rt_cache_entry_label(const RtCacheEntry *e);

/* rt_omp.c — the OpenMP runtime in use (valid once rt_omp_ready is set). */
typedef void (*RtOmpParallelFn)(void (*fn)(void *), void *data, unsigned nthreads,
                                unsigned flags);
typedef struct RtOmp {
    RtOmpParallelFn parallel; /* GOMP_parallel; NULL: run serially */
    int (*thread_num)(void);  /* omp_get_thread_num */
    int (*num_threads)(void); /* omp_get_num_threads */
} RtOmp;
extern RtOmp rt_omp;
extern _Atomic int rt_omp_ready;       /* set (release) once rt_omp is final */
extern _Atomic int rt_default_threads; /* >= 1 once rt_threads_default() ran */
extern _Atomic int rt_omp_forked;      /* set in forked children: launch serially */

/* rt_team.c — one program's team for its smt.parallel loops (rt_launch.c builds one per
 * program when a launch has fewer programs than threads). */
typedef struct PnThread PnThread;
typedef struct RtTeam {
    /* the posted loop: written by the leader before it publishes a generation */
    RtParallelBody body;
    void *data;
    int64_t n, chunk;
    int size;                        /* threads, the leader included */
    int32_t pid[3];                  /* the program the leader runs */
    _Alignas(64) _Atomic int64_t next; /* next iteration to claim */
    _Alignas(64) _Atomic uint32_t gen; /* futex: bumped per loop; top bit: program done */
    _Atomic uint32_t gen_sleepers;
    _Alignas(64) _Atomic uint32_t left; /* futex: helpers still in the posted loop */
    _Atomic uint32_t left_sleepers;
} RtTeam;
void rt_team_init(RtTeam *tm, int size);
/* Team g (0..programs-1) of thread t when nthreads threads run 'programs' < nthreads
 * programs: contiguous groups of nthreads/programs or one more; *member is t's index in
 * it (0: the leader). */
int rt_team_of(int64_t t, int64_t nthreads, int64_t programs, int *member);
int rt_team_size(int g, int64_t nthreads, int64_t programs);
/* Leader: smt.parallel loops of this thread use tm until rt_team_release, which also
 * sends the helpers home. */
void rt_team_lead(RtTeam *tm, const int32_t pid[3]);
void rt_team_release(RtTeam *tm);
/* Helper: runs chunks of the leader's loops with pctx until the leader releases the
 * team; 'proton' when pctx records (its scopes are then tagged with the leader's pid). */
void rt_team_help(RtTeam *tm, PnThread *pctx, int proton);

/* rt_debug.c — device_print / device_assert state. One RtDebugLaunch per launch of a
 * kernel with prints or asserts (RT_LAUNCH_DEBUG), on the launching thread's stack;
 * one RtDebugFrame per thread taking part, while it does. */
typedef struct RtDebugLaunch {
    pthread_mutex_t lock;
    _Atomic int failed;   /* an assert failed: the other programs stop */
    char report[1024];    /* the first failure, "file:line: kernel: program (...): ..." */
} RtDebugLaunch;
typedef struct RtDebugFrame {
    RtDebugLaunch *launch;
    int armed;            /* a failing assert longjmps to jb (the thread runs a program) */
    jmp_buf jb;
    struct RtDebugFrame *saved;
} RtDebugFrame;
void rt_debug_launch_init(RtDebugLaunch *l);
void rt_debug_launch_fini(RtDebugLaunch *l);
/* This thread takes part in launch l until rt_debug_leave (which also writes its
 * pending print output); 'armed': jb is set before each program. */
void rt_debug_enter(RtDebugFrame *f, RtDebugLaunch *l, int armed);
void rt_debug_leave(RtDebugFrame *f);
/* Writes this thread's pending print output to fd 1 (one write, under a lock). */
void rt_debug_flush(void);
/* Around code a longjmp may not cross (a team's parallel loop): returns the state
 * rt_debug_rearm restores. */
int rt_debug_disarm(void);
void rt_debug_rearm(int armed);

#endif /* RT_INT_H */
