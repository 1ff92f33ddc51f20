/*
 * rt_fs.c — file-system helpers for the cache: mkdir -p, rm -rf, durable writes,
 * moving files in, checksumming and bounded reads.
 *
 * Every function returns 0 or -errno with the text in rt_last_error(). Reads use read()
 * rather than mmap so that a file truncated under us gives a short read, never SIGBUS.
 */
#include "rt_int.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

/* Opens an existing file for reading; -EINVAL when it is not a regular file. O_NONBLOCK
 * keeps a FIFO planted in the cache from blocking the open (and the whole process). */
static int
open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;

    if (fd < 0)
        return rt_fail(errno, "cannot open %s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return rt_fail(EINVAL, "%s is not a regular file", path);
    }
    return fd;
}

/* Creates 'path' and its missing parents with 'mode' (umask applies). */
int
rt_fs_mkdirs(const char *path, mode_t mode)
{
    char *p = rt_xstrdup(path);
    struct stat st;
    int rc = 0;

    if (!*p) {
        rc = rt_fail(EINVAL, "empty directory name");
        goto out;
    }
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != 0)
            continue;
        char c = *s;
        *s = 0;
        /* EEXIST also covers another process creating it between our calls */
        if (mkdir(p, mode) != 0 && errno != EEXIST) {
            rc = rt_fail(errno, "cannot create %s: %s", p, strerror(errno));
            goto out;
        }
        *s = c;
        if (!c)
            break;
    }
    /* a regular file named like the root also "exists": say so clearly */
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        rc = rt_fail(ENOTDIR, "%s is not a directory", path);
out:
    free(p);
    return rc;
}

/* nftw callback: FTW_DEPTH visits children first, so directories are empty by now. */
static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    if (remove(path) != 0 && errno != ENOENT)
        return rt_fail(errno, "cannot remove %s: %s", path, strerror(errno));
    return 0;
}

/* Removes 'path' (file or directory tree, symlinks not followed); a missing path is
 * not an error. */
int
rt_fs_remove_tree(const char *path)
{
    struct stat st;

    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : rt_fail(errno, "cannot stat %s: %s", path, strerror(errno));
    int rc = nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    if (rc == -1) /* nftw's own failure, or a callback's -EPERM: errno is right for both */
        return rt_fail(errno, "cannot remove %s: %s", path, strerror(errno));
    return rc;
}

/* write(2) until everything is written; retries EINTR and short writes. */
static int
write_all(int fd, const void *data, size_t len)
{
    const char *p = data;

    while (len) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

/* Writes a new file (O_EXCL, mode 0644), fsyncs it and returns its checksum in *hash
 * (if not NULL). */
int
rt_fs_write(const char *path, const void *data, size_t len, uint64_t *hash)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int rc;

    if (fd < 0)
        return rt_fail(errno, "cannot create %s: %s", path, strerror(errno));
    rc = write_all(fd, data, len);
    /* durable before the rename publishes it; close can report delayed write errors */
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc < 0)
        return rt_fail(-rc, "cannot write %s: %s", path, strerror(-rc));
    if (hash)
        *hash = rt_hash64(data, len);
    return 0;
}

/* Copies src to a new file dst while checksumming, then fsyncs it (the fallback of
 * rt_fs_move_in across file systems). *size and *hash describe the bytes copied. */
static int
copy_file(const char *src, const char *dst, uint64_t *size, uint64_t *hash)
{
    int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, rc = 0;
    char *buf = rt_xmalloc(CHUNK);
    RtHash h;

    rt_hash_init(&h);
    *size = 0;
    if (in < 0) {
        rc = rt_fail(errno, "cannot open %s: %s", src, strerror(errno));
        goto out;
    }
    out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) {
        rc = rt_fail(errno, "cannot create %s: %s", dst, strerror(errno));
        goto out;
    }
    for (;;) {
        ssize_t k = read(in, buf, CHUNK);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            rc = k < 0 ? rt_fail(errno, "cannot read %s: %s", src, strerror(errno)) : 0;
            break;
        }
        rt_hash_update(&h, buf, (size_t)k);
        *size += (uint64_t)k;
        if ((rc = write_all(out, buf, (size_t)k)) < 0) {
            rc = rt_fail(-rc, "cannot write %s: %s", dst, strerror(-rc));
            break;
        }
    }
    if (rc == 0 && fsync(out) != 0)
        rc = rt_fail(errno, "cannot sync %s: %s", dst, strerror(errno));
    *hash = rt_hash_final(&h);
out:
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0 && rc == 0)
        rc = rt_fail(errno, "cannot write %s: %s", dst, strerror(errno));
    free(buf);
    return rc;
}

/* Makes src appear at dst without touching src: a hard link when the file system
 * allows it (then fsync and checksum the shared inode), else a copy. */
int
rt_fs_move_in(const char *src, const char *dst, uint64_t *size, uint64_t *hash)
{
    int fd, rc;

    /* a link shares the inode: no copy, and src stays valid until the store succeeds */
    if (link(src, dst) != 0) {
        if (errno == ENOENT)
            return rt_fail(errno, "cannot move %s: %s", src, strerror(errno));
        return copy_file(src, dst, size, hash); /* EXDEV, EPERM, EMLINK, ... */
    }
    fd = open(dst, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return rt_fail(errno, "cannot open %s: %s", dst, strerror(errno));
    rc = fsync(fd) != 0 ? rt_fail(errno, "cannot sync %s: %s", dst, strerror(errno)) : 0;
    close(fd);
    return rc ? rc : rt_fs_hash(dst, UINT64_MAX, size, hash);
}

/* Checksums a regular file by reading it in chunks: *size gets the bytes read. Stops
 * with -EFBIG past 'max' bytes (a file larger than the manifest says cannot match);
 * -EINVAL for a non-regular file. */
int
rt_fs_hash(const char *path, uint64_t max, uint64_t *size, uint64_t *hash)
{
    int fd = open_regular(path), rc = 0;
    char *buf;
    RtHash h;

    if (fd < 0)
        return fd;
    buf = rt_xmalloc(CHUNK);
    rt_hash_init(&h);
    *size = 0;
    for (;;) {
        ssize_t k = read(fd, buf, CHUNK);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = rt_fail(errno, "cannot read %s: %s", path, strerror(errno));
            break;
        }
        if (k == 0)
            break;
        *size += (uint64_t)k;
        if (*size > max) {
            rc = rt_fail(EFBIG, "%s is larger than %llu bytes", path, (unsigned long long)max);
            break;
        }
        rt_hash_update(&h, buf, (size_t)k);
    }
    *hash = rt_hash_final(&h);
    close(fd);
    free(buf);
    return rc;
}

/* Reads a whole regular file of at most 'max' bytes into a NUL-terminated buffer
 * (caller owns *out; free()). -EFBIG when larger, -EINVAL when not a regular file. The
 * buffer doubles from 4 KiB, so a file that grows while we read is still bounded. */
int
rt_fs_read(const char *path, size_t max, char **out, size_t *len)
{
    int fd = open_regular(path), rc = 0;
    size_t n = 0, cap = 4096;
    char *buf;

    *out = NULL;
    *len = 0;
    if (fd < 0)
        return fd;
    buf = rt_xmalloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                rc = rt_fail(EFBIG, "%s is larger than %zu bytes", path, max);
                break;
            }
            cap *= 2;
            char *nb = realloc(buf, cap + 1);
            if (!nb) {
                rc = rt_fail(ENOMEM, "out of memory reading %s", path);
                break;
            }
            buf = nb;
        }
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            rc = rt_fail(errno, "cannot read %s: %s", path, strerror(errno));
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    if (rc == 0 && n > max)
        rc = rt_fail(EFBIG, "%s is larger than %zu bytes", path, max);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 0;
}

/* fsyncs a directory so that the names created or renamed in it are durable. */
int
rt_fs_sync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

    if (fd < 0)
        return rt_fail(errno, "cannot open %s: %s", path, strerror(errno));
    /* some file systems (tmpfs-like overlays) refuse fsync on directories: harmless */
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
        rc = rt_fail(errno, "cannot sync %s: %s", path, strerror(errno));
    close(fd);
    return rc;
}
