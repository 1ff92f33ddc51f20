/*
 * rt_store.c — atomic cache stores.
 *
 * A store writes every file and the manifest into <root>/.tmp.<pid>.<random>/, fsyncs
 * them and the directory, then rename(2)s the directory to <root>/<key>: readers see
 * either no entry or a complete one. rename fails with ENOTEMPTY when an entry exists;
 * then a valid entry wins (another process raced us) and a corrupt one is renamed aside
 * to .old.<pid>.<random>, replaced, and deleted. Temp dirs of dead processes are swept.
 * Same protocol as upstream Triton's FileCacheManager.put (temp dir + rename).
 */
#include "rt_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Temp dirs older than this whose process is gone are removed by the next store. */
#define STALE_SECONDS 600
/* Rename attempts before giving up on a key that keeps changing under us. */
#define INSTALL_TRIES 8

/* Checks names, roles and contents of the files to store before anything touches the
 * disk, so a bad call leaves no temp dir and moves no src_path. Returns 0 or -EINVAL. */
static int
check_files(const RtCacheFile *f, size_t n)
{
    int seen[RT_FILE_ROLE_COUNT] = {0};

    for (size_t i = 0; i < n; i++) {
        if (!rt_name_ok(f[i].name) || strcmp(f[i].name, RT_MANIFEST_NAME) == 0)
            return rt_fail(EINVAL, "bad cache file name '%s'", f[i].name ? f[i].name : "(null)");
        if ((unsigned)f[i].role >= RT_FILE_ROLE_COUNT ||
            (f[i].role != RT_FILE_DATA && seen[f[i].role]++))
            return rt_fail(EINVAL, "bad or repeated role for cache file %s", f[i].name);
        if ((f[i].src_path && f[i].data) || (!f[i].src_path && !f[i].data && f[i].len))
            return rt_fail(EINVAL, "cache file %s needs either data or src_path", f[i].name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(f[i].name, f[j].name) == 0)
                return rt_fail(EINVAL, "cache file %s given twice", f[i].name);
    }
    return 0;
}

/* <root>/.<what>.<pid>.<16 random hex digits>; caller frees. */
static char *
temp_name(const char *root, const char *what)
{
    static _Atomic uint64_t counter;
    uint64_t r;

    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r)
        r = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)clock();
    r ^= counter++; /* distinct names for threads of one process even if getrandom fails */
    return rt_xasprintf("%s/.%s.%ld.%016" PRIx64, root, what, (long)getpid(), r);
}

/* Removes .tmp.* / .old.* directories left by processes that died mid-store. Both
 * tests matter: a live pid may belong to a store in progress, and a recent mtime
 * protects stores in another pid namespace sharing the cache (whose pids we cannot
 * see). A store lasts milliseconds, so ten minutes is generous. Best effort. */
static void
sweep_stale(const char *root)
{
    DIR *d = opendir(root);
    struct dirent *de;
    struct stat st;
    time_t now = time(NULL);

    if (!d)
        return;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        char *end, *path;
        long pid;

        if (strncmp(n, ".tmp.", 5) != 0 && strncmp(n, ".old.", 5) != 0)
            continue;
        pid = strtol(n + 5, &end, 10);
        if (end == n + 5 || *end != '.' || pid <= 0 || pid == (long)getpid())
            continue;
        /* alive, or not ours to signal: leave it */
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            now - st.st_mtime < STALE_SECONDS)
            continue;
        path = rt_xasprintf("%s/%s", root, n);
        if (rt_fs_remove_tree(path) == 0)
            rt_log("cache removed stale %s", path);
        free(path);
    }
    closedir(d);
}

/* Writes the files and the manifest into 'tmp', fsyncing each, then the directory;
 * *m gets the manifest (caller frees, also on failure). Returns 0 or -errno. */
static int
fill_temp(const char *tmp, const char *key, const RtCacheFile *files, size_t n, RtManifest *m)
{
    char *path, *text;
    int rc = 0;

    m->files = rt_xcalloc(n, sizeof *m->files);
    for (size_t i = 0; i < n && rc == 0; i++) {
        RtManFile *mf = &m->files[m->nfiles++];
        mf->name = rt_xstrdup(files[i].name);
        mf->role = files[i].role;
        path = rt_xasprintf("%s/%s", tmp, files[i].name);
        if (files[i].src_path) {
            rc = rt_fs_move_in(files[i].src_path, path, &mf->size, &mf->hash);
        } else {
            mf->size = files[i].len;
            rc = rt_fs_write(path, files[i].data ? files[i].data : "", files[i].len, &mf->hash);
        }
        free(path);
    }
    if (rc < 0)
        return rc;
    /* the manifest goes last: an entry with a manifest has all its files */
    text = rt_manifest_print(m, key);
    path = rt_xasprintf("%s/" RT_MANIFEST_NAME, tmp);
    rc = rt_fs_write(path, text, strlen(text), NULL);
    free(path);
    free(text);
    return rc < 0 ? rc : rt_fs_sync_dir(tmp);
}

/* Deletes a renamed-aside old entry, if any. Processes that dlopen'ed files from it
 * keep their mappings (unlinked inodes live on). */
static void
drop_aside(char **aside)
{
    if (*aside) {
        rt_fs_remove_tree(*aside);
        free(*aside);
        *aside = NULL;
    }
}

/* Renames 'tmp' to 'dir'. Returns a RT_STORE_* status (with *kept set for
 * KEPT_EXISTING) or -errno. Each round either installs ours, adopts a valid entry
 * that beat us, or moves the existing one aside and retries; a concurrent writer can
 * make a round fail, hence the bounded loop. */
static int
install(const char *root, const char *dir, const char *key, const char *tmp, unsigned flags,
        RtCacheEntry **kept)
{
    int status = RT_STORE_INSTALLED, rc, err;
    char *aside = NULL;
    RtCacheCheck why;

    for (int i = 0; i < INSTALL_TRIES; i++) {
        rc = rename(tmp, dir);
        err = errno;
        drop_aside(&aside); /* the old entry is deleted only once ours is in place */
        if (rc == 0)
            return status;
        if (err != ENOTEMPTY && err != EEXIST && err != ENOTDIR && err != EISDIR)
            return rt_fail(err, "cannot rename %s to %s: %s", tmp, dir, strerror(err));
        if (!(flags & RT_STORE_REPLACE)) {
            rc = rt_cache_verify(dir, key, kept, &why);
            if (rc == RT_CACHE_HIT)
                return RT_STORE_KEPT_EXISTING;
            if (rc < 0)
                return rc;
            if (rc == RT_CACHE_MISS) /* removed meanwhile: try again */
                continue;
            rt_log("cache replacing corrupt %s: %s: %s", key, rt_corrupt_name(why.reason),
                   why.detail);
        }
        aside = temp_name(root, "old");
        if (rename(dir, aside) != 0) {
            err = errno;
            free(aside);
            aside = NULL;
            if (err != ENOENT)
                return rt_fail(err, "cannot move %s aside: %s", dir, strerror(err));
        }
        status = RT_STORE_REPLACED;
    }
    drop_aside(&aside);
    return rt_fail(EBUSY, "cache entry %s kept changing; gave up after %d attempts", key,
                   INSTALL_TRIES);
}

/* The entry we just installed, with its metadata (from memory, or read back when it
 * was moved in from a file). Takes over *m. Manifest order = 'files' order. */
static RtCacheEntry *
installed_entry(const char *dir, const char *key, RtManifest *m, const RtCacheFile *files,
                size_t n)
{
    RtCacheEntry *e = rt_cache_entry_new(dir, key, m);

    for (size_t i = 0; i < n; i++) {
        if (files[i].role != RT_FILE_METADATA)
            continue;
        if (files[i].src_path) {
            if (rt_fs_read(e->paths[i], SIZE_MAX / 2, &e->metadata, &e->metadata_len) < 0)
                e->metadata = NULL, e->metadata_len = 0;
        } else {
            e->metadata = rt_xmalloc(files[i].len + 1);
            memcpy(e->metadata, files[i].data ? files[i].data : "", files[i].len);
            e->metadata[files[i].len] = 0;
            e->metadata_len = files[i].len;
        }
    }
    return e;
}

/* Documented in runtime.h: validate, write the temp dir, install, then clean up. */
int
rt_cache_store(const char *key, const RtCacheFile *files, size_t nfiles, unsigned flags,
               RtCacheEntry **out)
{
    char *root = NULL, *dir = NULL, *tmp = NULL;
    RtCacheEntry *kept = NULL;
    RtManifest m = {0};
    int rc;

    if (out)
        *out = NULL;
    if ((rc = rt_cache_key_dir(key, &root, &dir)) < 0 || (rc = check_files(files, nfiles)) < 0 ||
        (rc = rt_fs_mkdirs(root, 0755)) < 0)
        goto out;
    sweep_stale(root);
    tmp = temp_name(root, "tmp");
    if (mkdir(tmp, 0755) != 0) {
        rc = rt_fail(errno, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    if ((rc = fill_temp(tmp, key, files, nfiles, &m)) < 0 ||
        (rc = install(root, dir, key, tmp, flags, &kept)) < 0)
        goto out;
    rt_fs_sync_dir(root); /* best effort: the entry is complete either way */
    /* the sources were hard links (or copies): drop them only now that we succeeded */
    for (size_t i = 0; i < nfiles; i++)
        if (files[i].src_path)
            unlink(files[i].src_path);
    if (rc == RT_STORE_KEPT_EXISTING) {
        rt_log("cache kept existing %s %s", key, rt_cache_entry_label(kept));
        if (out)
            *out = kept, kept = NULL;
    } else {
        RtCacheEntry *e = installed_entry(dir, key, &m, files, nfiles);
        rt_log("cache %s %s %s", rc == RT_STORE_REPLACED ? "replaced" : "store", key,
               rt_cache_entry_label(e));
        if (out)
            *out = e;
        else
            rt_cache_entry_destroy(e);
    }
out:
    /* our temp dir survives only a failure or a lost race; keep the first error text */
    if (tmp && (rc < 0 || rc == RT_STORE_KEPT_EXISTING)) {
        char saved[sizeof(RtCacheCheck)];
        snprintf(saved, sizeof saved, "%s", rt_last_error());
        rt_fs_remove_tree(tmp);
        if (rc < 0)
            rt_fail(-rc, "%s", saved);
    }
    rt_cache_entry_destroy(kept);
    rt_manifest_fini(&m);
    free(tmp);
    free(root);
    free(dir);
    return rc;
}
