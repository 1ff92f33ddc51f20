/*
 * test_runtime.c — unit tests of the runtime's cache, loader, checksum, statistics and
 * environment helpers (the launcher is in test_runtime_launch.c).
 *
 * Every test gets a fresh temp dir with TRITON_CACHE_DIR pointing inside it. Kernels
 * for the loader tests are compiled at test time with `cc -shared -fPIC`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt_int.h"
#include "runtime.h"

typedef struct Fx {
    char dir[64];    /* the test's temp dir */
    char cache[128]; /* dir/cache = TRITON_CACHE_DIR (created by the first store) */
} Fx;

static int
setup(void **state)
{
    Fx *fx = calloc(1, sizeof *fx);

    snprintf(fx->dir, sizeof fx->dir, "/tmp/tritium-rt-XXXXXX");
    if (!mkdtemp(fx->dir))
        return -1;
    snprintf(fx->cache, sizeof fx->cache, "%s/cache", fx->dir);
    setenv("TRITON_CACHE_DIR", fx->cache, 1);
    unsetenv("TRITIUM_DEBUG");
    umask(022);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    Fx *fx = *state;

    rt_fs_remove_tree(fx->dir);
    free(fx);
    return 0;
}

/* ---- helpers ---------------------------------------------------------------------- */

static const char KERNEL_BYTES[] = "\177ELF pretend kernel bytes, long enough to matter 0123456789";
static const char META[] = "{\"name\": \"add_kernel\", \"num_warps\": 1}";
static const char TTIR[] = "module { tt.func @add_kernel() { tt.return } }\n";

/* Stores the standard three-file entry; returns the store status. */
static int
store3(const char *key, unsigned flags, const char *kernel, RtCacheEntry **out)
{
    RtCacheFile f[3] = {
        {.name = "add_kernel.so", .role = RT_FILE_KERNEL, .data = kernel, .len = strlen(kernel)},
        {.name = "add_kernel.json", .role = RT_FILE_METADATA, .data = META, .len = strlen(META)},
        {.name = "add_kernel.ttir", .role = RT_FILE_DATA, .data = TTIR, .len = strlen(TTIR)},
    };
    return rt_cache_store(key, f, 3, flags, out);
}

static char *
slurp(const char *path)
{
    char *buf;
    size_t len;

    return rt_fs_read(path, 1 << 26, &buf, &len) == 0 ? buf : NULL;
}

static void
spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Number of names in 'dir' starting with 'prefix'. */
static int
count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    if (!d)
        return 0;
    while ((de = readdir(d)))
        n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

static void
expect_hit(const char *key, const char *kernel)
{
    RtCacheEntry *e = NULL;
    RtCacheCheck why;
    char *text;

    assert_int_equal(rt_cache_lookup(key, &e, &why), RT_CACHE_HIT);
    assert_int_equal(why.reason, RT_CORRUPT_NONE);
    assert_non_null(e);
    text = slurp(rt_cache_entry_kernel_path(e));
    assert_non_null(text);
    assert_string_equal(text, kernel);
    free(text);
    rt_cache_entry_destroy(e);
}

/* ---- checksum, environment, statistics -------------------------------------------- */

static void
test_hash_vectors(void **state)
{
    unsigned char buf[1000];
    RtHash h;

    (void)state;
    /* reference values from xxhsum -H64 */
    assert_true(rt_hash64("", 0) == 0xef46db3751d8e999ULL);
    assert_true(rt_hash64("a", 1) == 0xd24ec4f1a98c6e5bULL);
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    for (size_t step = 1; step < 70; step += 6) { /* streaming == one shot */
        rt_hash_init(&h);
        for (size_t i = 0; i < sizeof buf; i += step)
            rt_hash_update(&h, buf + i, sizeof buf - i < step ? sizeof buf - i : step);
        assert_true(rt_hash_final(&h) == rt_hash64(buf, sizeof buf));
    }
}

static void
test_env_flags(void **state)
{
    (void)state;
    unsetenv("TRITON_ALWAYS_COMPILE");
    assert_false(rt_env_always_compile());
    setenv("TRITON_ALWAYS_COMPILE", "1", 1);
    assert_true(rt_env_always_compile());
    setenv("TRITON_ALWAYS_COMPILE", " True ", 1);
    assert_true(rt_env_always_compile());
    setenv("TRITON_ALWAYS_COMPILE", "0", 1);
    assert_false(rt_env_always_compile());
    unsetenv("TRITON_ALWAYS_COMPILE");
    setenv("TRITIUM_DEBUG", "on", 1);
    assert_true(rt_env_debug());
    unsetenv("TRITIUM_DEBUG");
    assert_false(rt_env_debug());
}

static void
test_stats(void **state)
{
    RtStats s;

    (void)state;
    rt_stats_reset();
    rt_stats_add(RT_STAT_COMPILE);
    rt_stats_add(RT_STAT_DISK_HIT);
    rt_stats_add(RT_STAT_DISK_HIT);
    rt_stats_add(RT_STAT_MEMORY_HIT);
    rt_stats_add(RT_STAT_COUNT); /* ignored */
    rt_stats_get(&s);
    assert_int_equal(s.count[RT_STAT_COMPILE], 1);
    assert_int_equal(s.count[RT_STAT_DISK_HIT], 2);
    assert_int_equal(s.count[RT_STAT_MEMORY_HIT], 1);
    assert_int_equal(s.count[RT_STAT_CORRUPT_REBUILD], 0);
    assert_string_equal(rt_stat_name(RT_STAT_CORRUPT_REBUILD), "corrupt_rebuilds");
    assert_null(rt_stat_name(RT_STAT_COUNT));
    rt_stats_reset();
    rt_stats_get(&s);
    assert_int_equal(s.count[RT_STAT_DISK_HIT], 0);
}

static void
test_cache_root(void **state)
{
    char *r, *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

    (void)state;
    unsetenv("TRITON_CACHE_DIR");
    unsetenv("TRITON_HOME");
    setenv("HOME", "/home/someone", 1);
    r = rt_cache_root_dup();
    assert_string_equal(r, "/home/someone/.triton/cache");
    free(r);
    setenv("TRITON_HOME", "/opt/th", 1);
    r = rt_cache_root_dup();
    assert_string_equal(r, "/opt/th/.triton/cache");
    free(r);
    setenv("TRITON_CACHE_DIR", "/var/cache/x", 1);
    r = rt_cache_root_dup();
    assert_string_equal(r, "/var/cache/x");
    free(r);
    unsetenv("TRITON_HOME");
    if (home)
        setenv("HOME", home, 1);
    free(home);
}

/* ---- cache ------------------------------------------------------------------------- */

static void
test_store_lookup_roundtrip(void **state)
{
    Fx *fx = *state;
    RtCacheEntry *e = NULL;
    struct stat st;
    char path[256];
    size_t len;

    assert_int_equal(rt_cache_lookup("abc123", &e, NULL), RT_CACHE_MISS); /* no root yet */
    assert_null(e);
    assert_int_equal(store3("abc123", 0, KERNEL_BYTES, &e), RT_STORE_INSTALLED);
    assert_non_null(e);
    rt_cache_entry_destroy(e);
    assert_int_equal(stat(fx->cache, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);

    assert_int_equal(rt_cache_lookup("abc123", &e, NULL), RT_CACHE_HIT);
    snprintf(path, sizeof path, "%s/abc123", fx->cache);
    assert_string_equal(rt_cache_entry_dir(e), path);
    assert_string_equal(rt_cache_entry_key(e), "abc123");
    assert_int_equal(rt_cache_entry_num_files(e), 3);
    assert_string_equal(rt_cache_entry_file_name(e, 2), "add_kernel.ttir");
    assert_int_equal(rt_cache_entry_file_role(e, 0), RT_FILE_KERNEL);
    snprintf(path, sizeof path, "%s/abc123/add_kernel.so", fx->cache);
    assert_string_equal(rt_cache_entry_kernel_path(e), path);
    assert_string_equal(rt_cache_entry_file_path(e, 0), path);
    assert_string_equal(rt_cache_entry_metadata(e, &len), META);
    assert_int_equal(len, strlen(META));
    assert_non_null(rt_cache_entry_path(e, "add_kernel.ttir"));
    assert_null(rt_cache_entry_path(e, "nope.llir"));
    assert_null(rt_cache_entry_file_name(e, 3));
    rt_cache_entry_destroy(e);

    assert_int_equal(rt_cache_lookup("abc124", &e, NULL), RT_CACHE_MISS);
    assert_int_equal(count_prefixed(fx->cache, ".tmp."), 0);
    expect_hit("abc123", KERNEL_BYTES);
}

static void
test_store_without_metadata(void **state)
{
    RtCacheFile f = {.name = "k.so", .role = RT_FILE_KERNEL, .data = "x", .len = 1};
    RtCacheFile empty = {.name = "empty.txt", .role = RT_FILE_DATA};
    RtCacheEntry *e;
    size_t len = 99;

    (void)state;
    assert_int_equal(rt_cache_store("nometa", &f, 1, 0, &e), RT_STORE_INSTALLED);
    assert_null(rt_cache_entry_metadata(e, &len));
    assert_int_equal(len, 0);
    rt_cache_entry_destroy(e);
    assert_int_equal(rt_cache_store("empty", &empty, 1, 0, NULL), RT_STORE_INSTALLED);
    assert_int_equal(rt_cache_lookup("empty", &e, NULL), RT_CACHE_HIT);
    assert_null(rt_cache_entry_kernel_path(e));
    rt_cache_entry_destroy(e);
}

static void
test_bad_arguments(void **state)
{
    RtCacheFile ok = {.name = "k.so", .role = RT_FILE_KERNEL, .data = "x", .len = 1};
    RtCacheFile two[2] = {ok, ok};
    RtCacheFile bad = ok;
    RtCacheEntry *e = (RtCacheEntry *)1;
    const char *keys[] = {"", ".hidden", "a/b", "../x", "sp ace", NULL};
    const char *names[] = {"../k.so", ".k.so", "manifest.json", "a/b", ""};

    (void)state;
    for (int i = 0; i < 6; i++) {
        assert_int_equal(rt_cache_lookup(keys[i], &e, NULL), -EINVAL);
        assert_null(e);
        assert_int_equal(rt_cache_store(keys[i], &ok, 1, 0, NULL), -EINVAL);
        assert_non_null(strstr(rt_last_error(), "bad cache key"));
    }
    for (int i = 0; i < 5; i++) {
        bad.name = names[i];
        assert_int_equal(rt_cache_store("key", &bad, 1, 0, NULL), -EINVAL);
    }
    two[1].name = "k2.so"; /* two kernels */
    assert_int_equal(rt_cache_store("key", two, 2, 0, NULL), -EINVAL);
    two[1] = ok; /* same name twice */
    two[1].role = RT_FILE_DATA;
    assert_int_equal(rt_cache_store("key", two, 2, 0, NULL), -EINVAL);
    bad = ok;
    bad.data = NULL; /* no contents */
    assert_int_equal(rt_cache_store("key", &bad, 1, 0, NULL), -EINVAL);
    bad.src_path = "/tmp/x"; /* and both */
    bad.data = "x";
    assert_int_equal(rt_cache_store("key", &bad, 1, 0, NULL), -EINVAL);
    assert_int_equal(rt_cache_lookup("key", &e, NULL), RT_CACHE_MISS);
}

static void
test_store_moves_files(void **state)
{
    Fx *fx = *state;
    char src[128], missing[128];
    RtCacheFile f[2] = {{.name = "m.so", .role = RT_FILE_KERNEL},
                        {.name = "m.json", .role = RT_FILE_METADATA}};
    RtCacheEntry *e;

    snprintf(src, sizeof src, "%s/compiled.so", fx->dir);
    snprintf(missing, sizeof missing, "%s/never-written.json", fx->dir);
    spit(src, KERNEL_BYTES);
    f[0].src_path = src;
    f[1].src_path = missing;
    /* a failed store leaves the source where it was, and no entry */
    assert_int_equal(rt_cache_store("moved", f, 2, 0, NULL), -ENOENT);
    assert_int_equal(access(src, F_OK), 0);
    assert_int_equal(count_prefixed(fx->cache, ".tmp."), 0);
    assert_int_equal(rt_cache_lookup("moved", &e, NULL), RT_CACHE_MISS);

    spit(missing, META);
    assert_int_equal(rt_cache_store("moved", f, 2, 0, &e), RT_STORE_INSTALLED);
    assert_string_equal(rt_cache_entry_metadata(e, NULL), META);
    rt_cache_entry_destroy(e);
    assert_int_equal(access(src, F_OK), -1);
    assert_int_equal(access(missing, F_OK), -1);
    expect_hit("moved", KERNEL_BYTES);
}

static void
test_existing_entry_kept_or_replaced(void **state)
{
    RtCacheEntry *e;
    char *text;

    (void)state;
    assert_int_equal(store3("k1", 0, "version one", NULL), RT_STORE_INSTALLED);
    /* a valid entry wins: the second compile's result is dropped */
    assert_int_equal(store3("k1", 0, "version two", &e), RT_STORE_KEPT_EXISTING);
    text = slurp(rt_cache_entry_kernel_path(e));
    assert_string_equal(text, "version one");
    free(text);
    assert_string_equal(rt_cache_entry_metadata(e, NULL), META);
    rt_cache_entry_destroy(e);
    expect_hit("k1", "version one");
    /* TRITON_ALWAYS_COMPILE: the caller asks to replace */
    assert_int_equal(store3("k1", RT_STORE_REPLACE, "version three", NULL), RT_STORE_REPLACED);
    expect_hit("k1", "version three");
    assert_int_equal(count_prefixed(((Fx *)*state)->cache, ".old."), 0);
}

/* ---- corruption ------------------------------------------------------------------------- */

typedef void (*Corrupter)(const char *dir);

static void
truncate_so(const char *dir)
{
    char p[256];
    snprintf(p, sizeof p, "%s/add_kernel.so", dir);
    assert_int_equal(truncate(p, 10), 0);
}

static void
flip_byte(const char *dir)
{
    char p[256], c;
    int fd;
    snprintf(p, sizeof p, "%s/add_kernel.so", dir);
    fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &c, 1, 20), 1);
    c ^= 0x10;
    assert_int_equal(pwrite(fd, &c, 1, 20), 1);
    close(fd);
}

static void
remove_manifest(const char *dir)
{
    char p[256];
    snprintf(p, sizeof p, "%s/manifest.json", dir);
    assert_int_equal(unlink(p), 0);
}

static void
garbage_manifest(const char *dir)
{
    char p[256];
    snprintf(p, sizeof p, "%s/manifest.json", dir);
    unlink(p);
    spit(p, "\x01\x02 this is { not json");
}

static void
truncate_manifest(const char *dir)
{
    char p[256];
    struct stat st;
    snprintf(p, sizeof p, "%s/manifest.json", dir);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(truncate(p, st.st_size / 2), 0);
}

static void
unsafe_manifest(const char *dir)
{
    char p[256];
    snprintf(p, sizeof p, "%s/manifest.json", dir);
    unlink(p);
    spit(p, "{\"format\": \"tritium-cache/1\", \"key\": \"victim\", \"files\": "
            "[{\"name\": \"../../etc/passwd\", \"role\": \"data\", \"size\": 1, "
            "\"xxh64\": \"0000000000000000\"}]}");
}

static void
remove_ttir(const char *dir)
{
    char p[256];
    snprintf(p, sizeof p, "%s/add_kernel.ttir", dir);
    assert_int_equal(unlink(p), 0);
}

static void
replace_with_file(const char *dir)
{
    assert_int_equal(rt_fs_remove_tree(dir), 0);
    spit(dir, "not a directory");
}

/* FIFOs would block a naive open/read forever */
static void
fifo_manifest(const char *dir)
{
    char p[256];
    snprintf(p, sizeof p, "%s/manifest.json", dir);
    assert_int_equal(unlink(p), 0);
    assert_int_equal(mkfifo(p, 0644), 0);
}

static void
fifo_kernel(const char *dir)
{
    char p[256];
    snprintf(p, sizeof p, "%s/add_kernel.so", dir);
    assert_int_equal(unlink(p), 0);
    assert_int_equal(mkfifo(p, 0644), 0);
}

static void
test_corruption_detected_and_replaced(void **state)
{
    static const struct {
        Corrupter fn;
        RtCorrupt reason;
        const char *detail;
    } cases[] = {
        {truncate_so, RT_CORRUPT_SIZE, "add_kernel.so: 10 bytes"},
        {flip_byte, RT_CORRUPT_CHECKSUM, "add_kernel.so: xxh64"},
        {remove_manifest, RT_CORRUPT_NO_MANIFEST, "manifest.json is missing"},
        {garbage_manifest, RT_CORRUPT_BAD_MANIFEST, "not valid JSON"},
        {truncate_manifest, RT_CORRUPT_BAD_MANIFEST, "not valid JSON"},
        {unsafe_manifest, RT_CORRUPT_BAD_MANIFEST, "unsafe file name"},
        {remove_ttir, RT_CORRUPT_MISSING_FILE, "add_kernel.ttir is missing"},
        {replace_with_file, RT_CORRUPT_NOT_DIRECTORY, "not a directory"},
        {fifo_manifest, RT_CORRUPT_BAD_MANIFEST, "not a regular file"},
        {fifo_kernel, RT_CORRUPT_MISSING_FILE, "add_kernel.so is not a regular file"},
    };
    Fx *fx = *state;
    char dir[256];
    RtCacheEntry *e;
    RtCacheCheck why;

    snprintf(dir, sizeof dir, "%s/victim", fx->cache);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_true(store3("victim", 0, KERNEL_BYTES, NULL) >= 0);
        cases[i].fn(dir);
        e = (RtCacheEntry *)1;
        assert_int_equal(rt_cache_lookup("victim", &e, &why), RT_CACHE_CORRUPT);
        assert_null(e);
        assert_int_equal(why.reason, cases[i].reason);
        if (!strstr(why.detail, cases[i].detail))
            fail_msg("case %zu: detail '%s' lacks '%s'", i, why.detail, cases[i].detail);
        assert_non_null(rt_corrupt_name(why.reason));
        /* the caller rebuilds and stores: the corrupt entry is replaced */
        assert_int_equal(store3("victim", 0, KERNEL_BYTES, NULL), RT_STORE_REPLACED);
        expect_hit("victim", KERNEL_BYTES);
        assert_int_equal(count_prefixed(fx->cache, ".old."), 0);
        assert_int_equal(rt_fs_remove_tree(dir), 0);
    }
}

static void
test_manifest_of_other_key(void **state)
{
    Fx *fx = *state;
    char from[256], to[256];
    RtCacheCheck why;
    RtCacheEntry *e;

    assert_int_equal(store3("orig", 0, KERNEL_BYTES, NULL), RT_STORE_INSTALLED);
    snprintf(from, sizeof from, "%s/orig", fx->cache);
    snprintf(to, sizeof to, "%s/copy", fx->cache);
    assert_int_equal(rename(from, to), 0);
    assert_int_equal(rt_cache_lookup("copy", &e, &why), RT_CACHE_CORRUPT);
    assert_int_equal(why.reason, RT_CORRUPT_BAD_MANIFEST);
    assert_non_null(strstr(why.detail, "another key"));
}

/* Children store the same key at the same moment, each with its own contents. Exactly
 * one installs; the others keep its entry; the files all come from one child. */
static void
test_concurrent_store_fork(void **state)
{
    enum { N = 8 };
    Fx *fx = *state;
    pid_t pids[N];
    int go[2], installed = 0, kept = 0, status;
    RtCacheEntry *e;
    char *kernel;

    assert_int_equal(pipe(go), 0);
    for (int i = 0; i < N; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            char k[64], m[64], c;
            close(go[1]);
            if (read(go[0], &c, 1) != 0) /* EOF: everyone starts together */
                _exit(9);
            snprintf(k, sizeof k, "kernel from child %d", i);
            snprintf(m, sizeof m, "{\"child\": %d}", i);
            RtCacheFile f[2] = {
                {.name = "k.so", .role = RT_FILE_KERNEL, .data = k, .len = strlen(k)},
                {.name = "k.json", .role = RT_FILE_METADATA, .data = m, .len = strlen(m)}};
            int rc = rt_cache_store("race", f, 2, 0, NULL);
            _exit(rc == RT_STORE_INSTALLED ? 0 : rc == RT_STORE_KEPT_EXISTING ? 1 : 2);
        }
    }
    close(go[0]);
    close(go[1]);
    for (int i = 0; i < N; i++) {
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        installed += WEXITSTATUS(status) == 0;
        kept += WEXITSTATUS(status) == 1;
    }
    assert_int_equal(installed, 1);
    assert_int_equal(kept, N - 1);
    assert_int_equal(rt_cache_lookup("race", &e, NULL), RT_CACHE_HIT);
    kernel = slurp(rt_cache_entry_kernel_path(e));
    int child = atoi(strchr(rt_cache_entry_metadata(e, NULL), ':') + 1);
    char want[64];
    snprintf(want, sizeof want, "kernel from child %d", child);
    assert_string_equal(kernel, want);
    free(kernel);
    rt_cache_entry_destroy(e);
    assert_int_equal(count_prefixed(fx->cache, ".tmp."), 0);
    assert_int_equal(count_prefixed(fx->cache, ".old."), 0);
}

static void
test_stale_temp_dirs_swept(void **state)
{
    Fx *fx = *state;
    char old[256], fresh[256], live[256];
    struct timespec t[2] = {{.tv_sec = time(NULL) - 3600}, {.tv_sec = time(NULL) - 3600}};

    assert_int_equal(rt_fs_mkdirs(fx->cache, 0755), 0);
    /* pid 2^22+1 is above Linux's pid_max limit: never alive */
    snprintf(old, sizeof old, "%s/.tmp.4194305.00000000000000aa", fx->cache);
    snprintf(fresh, sizeof fresh, "%s/.tmp.4194305.00000000000000bb", fx->cache);
    snprintf(live, sizeof live, "%s/.tmp.1.00000000000000cc", fx->cache); /* init: alive */
    assert_int_equal(mkdir(old, 0755), 0);
    assert_int_equal(mkdir(fresh, 0755), 0);
    assert_int_equal(mkdir(live, 0755), 0);
    assert_int_equal(utimensat(AT_FDCWD, old, t, 0), 0);
    assert_int_equal(utimensat(AT_FDCWD, live, t, 0), 0);
    assert_int_equal(store3("sweeper", 0, KERNEL_BYTES, NULL), RT_STORE_INSTALLED);
    assert_int_equal(access(old, F_OK), -1);
    assert_int_equal(access(fresh, F_OK), 0);
    assert_int_equal(access(live, F_OK), 0);
}

/* TRITIUM_DEBUG=1 logs "[tritium] cache hit <key> <name>" on stderr. */
static void
test_debug_log(void **state)
{
    Fx *fx = *state;
    char logpath[128], *log;
    RtCacheEntry *e;
    int saved, fd;

    snprintf(logpath, sizeof logpath, "%s/stderr.txt", fx->dir);
    assert_int_equal(store3("dbg", 0, KERNEL_BYTES, NULL), RT_STORE_INSTALLED);
    fflush(stderr);
    saved = dup(2);
    fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    setenv("TRITIUM_DEBUG", "1", 1);
    assert_int_equal(rt_cache_lookup("dbg", &e, NULL), RT_CACHE_HIT);
    rt_cache_entry_destroy(e);
    assert_int_equal(rt_cache_lookup("dbg2", &e, NULL), RT_CACHE_MISS);
    unsetenv("TRITIUM_DEBUG");
    assert_int_equal(rt_cache_lookup("dbg", &e, NULL), RT_CACHE_HIT); /* silent again */
    rt_cache_entry_destroy(e);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    log = slurp(logpath);
    assert_string_equal(log, "[tritium] cache hit dbg add_kernel\n[tritium] cache miss dbg2\n");
    free(log);
}

/* ---- loader --------------------------------------------------------------------------- */

/* Compiles C source 'src' into <dir>/<name> with cc -shared -fPIC. */
static void
build_so(const char *dir, const char *name, const char *src, char *out, size_t outlen)
{
    char c[256], cmd[1024];

    snprintf(c, sizeof c, "%s/%s.c", dir, name);
    snprintf(out, outlen, "%s/%s", dir, name);
    spit(c, src);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -O1 -o '%s' '%s'", out, c);
    assert_int_equal(system(cmd), 0);
}

#define KERNEL_SRC(v)                                                                     \
    "#include <stdint.h>\n"                                                               \
    "void tritium_kernel(const uint64_t *a, int32_t x, int32_t y, int32_t z, int32_t nx,"  \
    " int32_t ny, int32_t nz, void *p) { *(int64_t *)(uintptr_t)a[0] = " #v "; }\n"

static int64_t
run_version(RtKernel *k)
{
    int64_t v = -1;
    uint64_t args[1] = {(uint64_t)(uintptr_t)&v};

    rt_kernel_fn(k)(args, 0, 0, 0, 1, 1, 1, NULL);
    return v;
}

static void
test_loader_errors(void **state)
{
    Fx *fx = *state;
    char path[256], junk[256];
    RtKernel *k = (RtKernel *)1;

    snprintf(path, sizeof path, "%s/missing.so", fx->dir);
    assert_int_equal(rt_kernel_load(path, &k), -ENOENT);
    assert_null(k);
    assert_non_null(strstr(rt_last_error(), "missing.so"));

    build_so(fx->dir, "nosym.so", "int not_the_kernel(void) { return 1; }\n", path, sizeof path);
    assert_int_equal(rt_kernel_load(path, &k), -ENOEXEC);
    assert_null(k);
    assert_non_null(strstr(rt_last_error(), "tritium_kernel"));

    snprintf(junk, sizeof junk, "%s/junk.so", fx->dir);
    spit(junk, "this is not an ELF file");
    assert_int_equal(rt_kernel_load(junk, &k), -ENOEXEC);
    assert_non_null(strstr(rt_last_error(), "junk.so"));
    rt_kernel_unload(NULL);
}

static void
test_loader_replaced_file(void **state)
{
    Fx *fx = *state;
    char v1[256], v2[256];
    RtKernel *k1, *k2, *k3;

    build_so(fx->dir, "k.so", KERNEL_SRC(1), v1, sizeof v1);
    build_so(fx->dir, "k2.so", KERNEL_SRC(2), v2, sizeof v2);
    assert_int_equal(rt_kernel_load(v1, &k1), 0);
    assert_int_equal(run_version(k1), 1);
    assert_string_equal(rt_kernel_path(k1), v1);
    /* replace the file under the loaded kernel (new inode, as the cache does) */
    assert_int_equal(rename(v2, v1), 0);
    assert_int_equal(run_version(k1), 1);
    assert_int_equal(rt_kernel_load(v1, &k2), 0);
    assert_int_equal(run_version(k2), 2);
    assert_int_equal(run_version(k1), 1);
    /* the same file again shares the mapping */
    assert_int_equal(rt_kernel_load(v1, &k3), 0);
    assert_int_equal(run_version(k3), 2);
    assert_int_equal(unlink(v1), 0); /* deleting the file does not matter either */
    assert_int_equal(run_version(k2), 2);
    rt_kernel_unload(k1);
    rt_kernel_unload(k3);
    assert_int_equal(run_version(k2), 2);
    rt_kernel_unload(k2);
}

/* The caller's whole path: store the .so in the cache, look it up, load, run. */
static void
test_loader_from_cache(void **state)
{
    Fx *fx = *state;
    char so[256];
    RtCacheFile f[1] = {{.name = "seven.so", .role = RT_FILE_KERNEL}};
    RtCacheEntry *e;
    RtKernel *k;

    build_so(fx->dir, "seven.so", KERNEL_SRC(7), so, sizeof so);
    f[0].src_path = so;
    assert_int_equal(rt_cache_store("seven", f, 1, 0, NULL), RT_STORE_INSTALLED);
    assert_int_equal(rt_cache_lookup("seven", &e, NULL), RT_CACHE_HIT);
    assert_int_equal(rt_kernel_load(rt_cache_entry_kernel_path(e), &k), 0);
    rt_cache_entry_destroy(e);
    assert_int_equal(run_version(k), 7);
    rt_kernel_unload(k);
}

/* A launch's cost from the compiler's trip-count program: a loop over parameter 1
 * (int32) in steps of 256 inside a loop over the program id, with cells outside,
 * in the outer and in the inner loop; malformed programs are refused. */
static void
test_cost_program(void **state)
{
    (void)state;
    const char *text = "cost 1 2 3 0\n"
                       "L -1 #0 , p0 #1 + , #1 ;\n"            /* pid + 1 trips */
                       "L 0 #0 , a1:s , #256 ;\n"              /* cdiv(n, 256) trips */
                       "C -1 0 4 0 1 0 ;\nC 0 8 0 0 0 0 ;\nC 1 1024 0 0 256 0 ;\n";
    RtCost *c = rt_cost_create(text);
    assert_non_null(c);
    uint64_t args[2] = {0, (uint64_t)(int64_t)1000};
    int32_t grid[3] = {3, 1, 1};
    double out[4];
    assert_int_equal(rt_cost_eval(c, args, grid, out, 4), 1);
    /* programs 0..2 run their outer loop 1, 2, 3 times (6 in all), each 4 inner trips */
    assert_true(out[0] == 3 * 4 + 6 * 8 + 6 * 4 * 1024.0);
    assert_true(out[2] == 3 * 1 + 6 * 4 * 256.0);
    assert_true(out[1] == 0 && out[3] == 0);
    args[1] = (uint64_t)(int64_t)-5; /* no inner trips */
    assert_int_equal(rt_cost_eval(c, args, grid, out, 4), 1);
    assert_true(out[0] == 3 * 4 + 6 * 8);
    rt_cost_destroy(c);
    c = rt_cost_create("cost 1 1 2 0\nL -1 ? ;\nC -1 4 0 0 0 0 ;\nC 0 8 0 0 0 0 ;\n");
    assert_non_null(c);
    assert_int_equal(rt_cost_eval(c, args, grid, out, 4), 0); /* counted once, inexact */
    assert_true(out[0] == 3 * 12.0);
    rt_cost_destroy(c);
    c = rt_cost_create("cost 1 1 1 0\nL -1 #0 , a0:s #0 / , #1 ;\nC 0 8 0 0 0 0 ;\n");
    assert_non_null(c);
    assert_int_equal(rt_cost_eval(c, args, grid, out, 4), 0); /* division by zero: counted once */
    rt_cost_destroy(c);
    /* scope cells: scope 0 open around the inner loop, scope 1 nested in it over its body */
    c = rt_cost_create("cost 1 1 1 2\nL -1 #0 , a1:s , #100 ;\nC 0 8 0 0 2 0 ;\n"
                       "S -1 1 4 0 0 0 0 ;\nS 0 3 8 0 0 2 0 ;\n");
    assert_non_null(c);
    double sc[12];
    args[1] = 1000; /* 10 trips */
    assert_int_equal(rt_cost_eval(c, args, grid, sc, 12), 1);
    assert_true(sc[0] == 3 * 80.0 && sc[2] == 3 * 20.0);        /* the kernel */
    assert_true(sc[4] == 3 * (4 + 80.0) && sc[6] == 3 * 20.0);  /* scope 0 includes scope 1 */
    assert_true(sc[8] == 3 * 80.0 && sc[10] == 3 * 20.0);       /* scope 1 */
    assert_int_equal(rt_cost_eval(c, args, grid, sc, 8), 1);     /* room for scope 0 only */
    assert_true(sc[4] == 3 * 84.0);
    rt_cost_destroy(c);
    assert_null(rt_cost_create("cost 1 0 1 1\nC -1 4 0 0 0 0 ;\nS -1 0 4 0 0 0 0 ;\n")); /* no scope */
    assert_null(rt_cost_create(""));
    assert_null(rt_cost_create("cost 1 1 1 0\nL 0 #0 , #1 , #1 ;\nC 0 1 0 0 0 0 ;\n")); /* its own parent */
    assert_null(rt_cost_create("cost 1 1 1 0\nL -1 #0 , #1 ;\nC 0 1 0 0 0 0 ;\n"));     /* no step */
    assert_null(rt_cost_create("cost 1 1 1 0\nL -1 #0 , x , #1 ;\nC 0 1 0 0 0 0 ;\n"));  /* bad token */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_vectors),
        cmocka_unit_test(test_cost_program),
        cmocka_unit_test(test_env_flags),
        cmocka_unit_test(test_stats),
        cmocka_unit_test_setup_teardown(test_cache_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_lookup_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_without_metadata, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_moves_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_existing_entry_kept_or_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corruption_detected_and_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manifest_of_other_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_store_fork, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_temp_dirs_swept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_debug_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_replaced_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader_from_cache, setup, teardown),
    };
    return cmocka_run_group_tests_name("runtime", tests, NULL, NULL);
}
