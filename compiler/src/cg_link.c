/*
 * cg_link.c — links a kernel object into a shared library with ld.lld-19.
 *
 * The object is written next to the output, ld.lld runs through posix_spawn with
 * its output captured, and the library appears at its final path only through
 * rename(), so a concurrent reader never sees a partial file. libm and libc are
 * passed --as-needed so a kernel calling libm (f64 math) records the dependency,
 * and its memcpy/memset references (LLVM's lowering of tile copies and fills) bind
 * to glibc's current versioned symbols: an unversioned reference binds to the
 * oldest version, memcpy@GLIBC_2.2.5, which on x86-64 resolves to the SSE2 memmove
 * (a load scope's snapshot copy then ran at ~0.6 of the read bandwidth).
 */
#include "cg_int.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int
is_exec(const char *p)
{
    return access(p, X_OK) == 0;
}

/* Searches PATH for 'name'; writes the full path into buf. */
static int
find_on_path(const char *name, char *buf, size_t cap)
{
    const char *path = getenv("PATH");
    if (!path)
        return -1;
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 0 && (size_t)snprintf(buf, cap, "%.*s/%s", (int)n, p, name) < cap && is_exec(buf))
            return 0;
        p += n + (e != NULL);
    }
    return -1;
}

static int
find_ld(const CgOptions *o, char *buf, size_t cap)
{
    if (o->ld_path && o->ld_path[0]) {
        snprintf(buf, cap, "%s", o->ld_path);
        return 0;
    }
    if (find_on_path("ld.lld-19", buf, cap) == 0)
        return 0;
    snprintf(buf, cap, "%s", "/usr/lib/llvm-19/bin/ld.lld");
    if (is_exec(buf))
        return 0;
    return find_on_path("ld.lld", buf, cap);
}

/* The target's shared library 'name' (libm.so.6, libc.so.6), or NULL when it
 * cannot be found. */
static const char *
find_lib(const CgTarget *t, const char *name, char *buf, size_t cap)
{
    static const char *const riscv[] = {"/usr/riscv64-linux-gnu/lib", "/lib/riscv64-linux-gnu",
                                        "/usr/lib/riscv64-linux-gnu", NULL};
    static const char *const x86[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", NULL};
    const char *const *c = cg_target_is_riscv(t) ? riscv : x86;
    for (; *c; c++) {
        snprintf(buf, cap, "%s/%s", *c, name);
        if (access(buf, R_OK) == 0)
            return buf;
    }
    return NULL;
}

/* The target's compiler runtime archive (soft conversions such as
 * __truncdfhf2 for f64 -> f16 that LLVM calls out to), or NULL. */
static const char *
find_builtins(const CgTarget *t)
{
    static const char *const riscv[] = {"/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.builtins-riscv64.a",
                                        "/usr/lib/gcc-cross/riscv64-linux-gnu/12/libgcc.a", NULL};
    static const char *const x86[] = {"/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.builtins-x86_64.a",
                                      "/usr/lib/gcc/x86_64-linux-gnu/12/libgcc.a", NULL};
    const char *const *c = cg_target_is_riscv(t) ? riscv : x86;
    for (; *c; c++)
        if (access(*c, R_OK) == 0)
            return *c;
    return NULL;
}

static int
write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Runs argv, appending its stdout and stderr to out; returns the exit status
 * or -1 when it could not run. */
static int
run(char *const argv[], CgStr *out)
{
    int fds[2];
    if (pipe(fds))
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    pid_t pid;
    int err = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (err) {
        close(fds[0]);
        cg_str_printf(out, "cannot run %s: %s\n", argv[0], strerror(err));
        return -1;
    }
    char buf[4096];
    for (;;) {
        ssize_t r = read(fds[0], buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        cg_str_append(out, buf, (size_t)r);
    }
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int
cg_link(const uint8_t *obj, size_t len, const CgOptions *o, const char *so_path, CgStr *err)
{
    char ld[4096];
    if (find_ld(o, ld, sizeof ld)) {
        cg_str_printf(err, "[link] ld.lld-19 not found on PATH or in /usr/lib/llvm-19/bin\n");
        return -1;
    }
    size_t n = strlen(so_path);
    char *tobj = malloc(n + 16), *tso = malloc(n + 16);
    if (!tobj || !tso)
        abort();
    snprintf(tobj, n + 16, "%s.XXXXXX.o", so_path);
    snprintf(tso, n + 16, "%s.XXXXXX", so_path);
    int rc = -1, ofd = mkstemps(tobj, 2), sfd = -1;
    if (ofd < 0 || (sfd = mkstemp(tso)) < 0) {
        cg_str_printf(err, "[link] cannot create a temporary file next to %s: %s\n", so_path,
                      strerror(errno));
        goto out;
    }
    close(sfd);
    if (write_all(ofd, obj, len)) {
        cg_str_printf(err, "[link] cannot write %s: %s\n", tobj, strerror(errno));
        goto out;
    }
    char mbuf[256], cbuf[256];
    const char *libm = find_lib(&o->target, "libm.so.6", mbuf, sizeof mbuf);
    const char *libc = find_lib(&o->target, "libc.so.6", cbuf, sizeof cbuf);
    char *argv[16];
    int a = 0;
    argv[a++] = ld;
    if (cg_target_is_riscv(&o->target)) {
        argv[a++] = "-m";
        argv[a++] = "elf64lriscv";
    }
    argv[a++] = "-shared";
    argv[a++] = "-z";
    argv[a++] = "noexecstack";
    argv[a++] = "-o";
    argv[a++] = tso;
    argv[a++] = tobj;
    const char *builtins = find_builtins(&o->target);
    if (builtins) {
        argv[a++] = "--exclude-libs=ALL"; /* keep the runtime's symbols private */
        argv[a++] = (char *)builtins;
    }
    if (libm || libc)
        argv[a++] = "--as-needed";
    if (libm)
        argv[a++] = (char *)libm;
    if (libc)
        argv[a++] = (char *)libc;
    argv[a] = NULL;
    CgStr out = {0};
    int st = run(argv, &out);
    if (st != 0) {
        cg_str_printf(err, "[link] %s failed (status %d):\n%s", ld, st, out.p ? out.p : "");
    } else if (chmod(tso, 0755) || rename(tso, so_path)) {
        cg_str_printf(err, "[link] cannot move %s to %s: %s\n", tso, so_path, strerror(errno));
    } else {
        rc = 0;
    }
    cg_str_fini(&out);
out:
    if (ofd >= 0) {
        close(ofd);
        unlink(tobj);
    }
    if (rc)
        unlink(tso);
    free(tobj);
    free(tso);
    return rc;
}
