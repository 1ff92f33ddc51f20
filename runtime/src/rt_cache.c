/*
 * rt_cache.c — cache lookup: where the cache lives, verifying an entry against its
 * manifest, and the entry object handed to the caller.
 *
 * An entry <root>/<key>/ is valid when manifest.json parses and every file it lists
 * exists with the recorded size and XXH64 checksum; anything else is reported as
 * RT_CACHE_CORRUPT with a reason (docs/runtime.md §2). Stores live in rt_store.c.
 */
#include "rt_int.h"

#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Largest manifest and metadata file read into memory. */
#define MANIFEST_MAX (1u << 20)
#define METADATA_MAX (64u << 20)

/* ORDER RT_CORRUPT */
static const char *const corrupt_names[RT_CORRUPT_COUNT] = {
    "not corrupt",      "not a directory", "missing manifest", "unparsable manifest",
    "missing file",     "size mismatch",   "checksum mismatch",
};

const char *
rt_corrupt_name(RtCorrupt reason)
{
    return (unsigned)reason < RT_CORRUPT_COUNT ? corrupt_names[reason] : "?";
}

/* ---- locations ------------------------------------------------------------------- */

/* $HOME, else the passwd entry (daemons, `env -i`), else /tmp as a last resort. */
static const char *
home_dir(void)
{
    const char *h = getenv("HOME");
    struct passwd *pw;

    if (h && *h)
        return h;
    pw = getpwuid(getuid());
    return pw && pw->pw_dir ? pw->pw_dir : "/tmp";
}

char *
rt_cache_root_dup(void)
{
    const char *d = getenv("TRITON_CACHE_DIR");
    const char *th = getenv("TRITON_HOME");

    if (d && *d)
        return rt_xstrdup(d);
    return rt_xasprintf("%s/.triton/cache", th && *th ? th : home_dir());
}

/* Validates 'key' and returns the root and the entry directory (caller frees both). */
int
rt_cache_key_dir(const char *key, char **root, char **dir)
{
    *root = *dir = NULL;
    if (!rt_name_ok(key))
        return rt_fail(EINVAL, "bad cache key '%s' (want [A-Za-z0-9._+-], 1..%d bytes)",
                       key ? key : "(null)", RT_NAME_MAX);
    *root = rt_cache_root_dup();
    *dir = rt_xasprintf("%s/%s", *root, key);
    return 0;
}

/* ---- entries ------------------------------------------------------------------------ */

/* Builds an entry for 'dir', taking over the contents of *man (left empty). The
 * metadata is not read here. */
RtCacheEntry *
rt_cache_entry_new(const char *dir, const char *key, RtManifest *man)
{
    RtCacheEntry *e = rt_xcalloc(1, sizeof *e);

    e->key = rt_xstrdup(key);
    e->dir = rt_xstrdup(dir);
    e->man = *man;
    memset(man, 0, sizeof *man);
    e->paths = rt_xcalloc(e->man.nfiles, sizeof *e->paths);
    for (size_t i = 0; i < e->man.nfiles; i++)
        e->paths[i] = rt_xasprintf("%s/%s", dir, e->man.files[i].name);
    return e;
}

void
rt_cache_entry_destroy(RtCacheEntry *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->man.nfiles; i++)
        free(e->paths[i]);
    free(e->paths);
    rt_manifest_fini(&e->man);
    free(e->metadata);
    free(e->dir);
    free(e->key);
    free(e);
}

/* Name used in log lines: the kernel file without its extension, or "-". */
const char *
rt_cache_entry_label(const RtCacheEntry *e)
{
    static _Thread_local char buf[RT_NAME_MAX + 1];
    const char *k = NULL, *dot;

    for (size_t i = 0; i < e->man.nfiles && !k; i++)
        if (e->man.files[i].role == RT_FILE_KERNEL)
            k = e->man.files[i].name;
    if (!k)
        return "-";
    dot = strrchr(k, '.');
    snprintf(buf, sizeof buf, "%.*s", (int)(dot ? dot - k : (long)strlen(k)), k);
    return buf;
}

/* ---- verification -------------------------------------------------------------------- */

static int
corrupt(RtCacheCheck *why, RtCorrupt reason, const char *fmt, ...) RT_PRINTF(3, 4);

/* Fills *why and returns RT_CACHE_CORRUPT, so checks read `return corrupt(...)`. */
static int
corrupt(RtCacheCheck *why, RtCorrupt reason, const char *fmt, ...)
{
    va_list ap;

    why->reason = reason;
    va_start(ap, fmt);
    vsnprintf(why->detail, sizeof why->detail, fmt, ap);
    va_end(ap);
    return RT_CACHE_CORRUPT;
}

/* Checks one listed file against its manifest line; returns RT_CACHE_HIT, _CORRUPT
 * (with *why) or -errno. The METADATA file is read whole, checksummed in memory and
 * kept in e->metadata, so a hit costs one read of every file and no second pass. */
static int
verify_file(RtCacheEntry *e, size_t i, RtCacheCheck *why)
{
    const RtManFile *f = &e->man.files[i];
    uint64_t size = 0, hash = 0;
    struct stat st;
    size_t len;
    int rc;

    if (stat(e->paths[i], &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return corrupt(why, RT_CORRUPT_MISSING_FILE, "%s is missing", f->name);
        return rt_fail(errno, "cannot stat %s: %s", e->paths[i], strerror(errno));
    }
    /* a directory or FIFO under a listed name would fail or block the read */
    if (!S_ISREG(st.st_mode))
        return corrupt(why, RT_CORRUPT_MISSING_FILE, "%s is not a regular file", f->name);
    /* the size check is free; only same-size files pay for a full read */
    size = (uint64_t)st.st_size;
    if (size != f->size)
        goto size;
    if (f->role == RT_FILE_METADATA) {
        rc = rt_fs_read(e->paths[i], METADATA_MAX, &e->metadata, &len);
        if (rc == 0) {
            size = e->metadata_len = len;
            hash = rt_hash64(e->metadata, len);
        }
    } else {
        rc = rt_fs_hash(e->paths[i], f->size, &size, &hash);
    }
    if (rc == -EFBIG || (rc == 0 && size != f->size))
        goto size; /* changed while we read it */
    /* deleted or swapped for a non-regular file between our stat and open */
    if (rc == -ENOENT || rc == -EINVAL)
        return corrupt(why, RT_CORRUPT_MISSING_FILE, "%s is missing", f->name);
    if (rc < 0)
        return rc;
    if (hash != f->hash)
        return corrupt(why, RT_CORRUPT_CHECKSUM,
                       "%s: xxh64 %016" PRIx64 ", manifest says %016" PRIx64, f->name, hash,
                       f->hash);
    return RT_CACHE_HIT;
size:
    return corrupt(why, RT_CORRUPT_SIZE, "%s: %llu bytes, manifest says %llu", f->name,
                   (unsigned long long)size, (unsigned long long)f->size);
}

/* Verifies the entry directory 'dir' written for 'key'. Returns RT_CACHE_HIT with *out
 * (caller owns it), RT_CACHE_MISS when 'dir' does not exist, RT_CACHE_CORRUPT with
 * *why filled, or -errno when it cannot be read. */
int
rt_cache_verify(const char *dir, const char *key, RtCacheEntry **out, RtCacheCheck *why)
{
    RtManifest man;
    RtCacheEntry *e;
    struct stat st;
    char *mpath, *text = NULL;
    size_t len;
    int rc;

    *out = NULL;
    why->reason = RT_CORRUPT_NONE;
    why->detail[0] = 0;
    if (lstat(dir, &st) != 0)
        return errno == ENOENT ? RT_CACHE_MISS
                               : rt_fail(errno, "cannot stat %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return corrupt(why, RT_CORRUPT_NOT_DIRECTORY, "%s is not a directory", dir);
    mpath = rt_xasprintf("%s/" RT_MANIFEST_NAME, dir);
    rc = rt_fs_read(mpath, MANIFEST_MAX, &text, &len);
    free(mpath);
    if (rc == -ENOENT)
        return corrupt(why, RT_CORRUPT_NO_MANIFEST, RT_MANIFEST_NAME " is missing");
    if (rc == -EFBIG || rc == -EINVAL)
        return corrupt(why, RT_CORRUPT_BAD_MANIFEST, RT_MANIFEST_NAME " is %s",
                       rc == -EFBIG ? "too large" : "not a regular file");
    if (rc < 0)
        return rc;
    rc = rt_manifest_parse(&man, text, len, key, why->detail, sizeof why->detail);
    free(text);
    if (rc != 0)
        return why->reason = RT_CORRUPT_BAD_MANIFEST, RT_CACHE_CORRUPT;
    e = rt_cache_entry_new(dir, key, &man);
    for (size_t i = 0; i < e->man.nfiles; i++)
        if ((rc = verify_file(e, i, why)) != RT_CACHE_HIT) {
            rt_cache_entry_destroy(e);
            return rc;
        }
    *out = e;
    return RT_CACHE_HIT;
}

/* The public lookup: rt_cache_verify on <root>/<key> plus the TRITIUM_DEBUG event. */
int
rt_cache_lookup(const char *key, RtCacheEntry **out, RtCacheCheck *why)
{
    RtCacheCheck local;
    char *root, *dir;
    int rc;

    *out = NULL;
    if (!why)
        why = &local;
    why->reason = RT_CORRUPT_NONE;
    why->detail[0] = 0;
    if ((rc = rt_cache_key_dir(key, &root, &dir)) < 0)
        return rc;
    rc = rt_cache_verify(dir, key, out, why);
    if (rc == RT_CACHE_HIT)
        rt_log("cache hit %s %s", key, rt_cache_entry_label(*out));
    else if (rc == RT_CACHE_MISS)
        rt_log("cache miss %s", key);
    else if (rc == RT_CACHE_CORRUPT)
        rt_log("cache corrupt %s: %s: %s", key, rt_corrupt_name(why->reason), why->detail);
    free(root);
    free(dir);
    return rc;
}

/* ---- accessors ------------------------------------------------------------------------- */

/* Documented in runtime.h. Index accessors return NULL (role: DATA) past the end rather
 * than asserting, so a caller iterating with a stale count cannot crash. */

const char *
rt_cache_entry_key(const RtCacheEntry *e)
{
    return e->key;
}

const char *
rt_cache_entry_dir(const RtCacheEntry *e)
{
    return e->dir;
}

size_t
rt_cache_entry_num_files(const RtCacheEntry *e)
{
    return e->man.nfiles;
}

const char *
rt_cache_entry_file_name(const RtCacheEntry *e, size_t i)
{
    return i < e->man.nfiles ? e->man.files[i].name : NULL;
}

const char *
rt_cache_entry_file_path(const RtCacheEntry *e, size_t i)
{
    return i < e->man.nfiles ? e->paths[i] : NULL;
}

RtFileRole
rt_cache_entry_file_role(const RtCacheEntry *e, size_t i)
{
    return i < e->man.nfiles ? e->man.files[i].role : RT_FILE_DATA;
}

const char *
rt_cache_entry_path(const RtCacheEntry *e, const char *name)
{
    for (size_t i = 0; i < e->man.nfiles; i++)
        if (strcmp(e->man.files[i].name, name) == 0)
            return e->paths[i];
    return NULL;
}

const char *
rt_cache_entry_kernel_path(const RtCacheEntry *e)
{
    for (size_t i = 0; i < e->man.nfiles; i++)
        if (e->man.files[i].role == RT_FILE_KERNEL)
            return e->paths[i];
    return NULL;
}

const char *
rt_cache_entry_metadata(const RtCacheEntry *e, size_t *len)
{
    if (len)
        *len = e->metadata ? e->metadata_len : 0;
    return e->metadata;
}
