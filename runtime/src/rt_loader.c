/*
 * rt_loader.c — loads kernel shared objects and resolves their `tritium_kernel` entry.
 *
 * dlopen(RTLD_NOW | RTLD_LOCAL): unresolved symbols fail at load time, not mid-launch,
 * and kernels never see each other's symbols. glibc reuses an already-loaded object
 * whose name matches the path string, even when the file at that path has since been
 * replaced (TRITON_ALWAYS_COMPILE, a repaired cache entry). We keep a list of what we
 * loaded with the file's (device, inode); when the path names a different file than a
 * live load of the same string, we open it as "dir/./name" (then "dir/././name", ...),
 * an equivalent path that glibc does not match by name, so the new inode is loaded
 * while the old kernel stays valid for whoever still holds it.
 */
#include "rt_int.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct RtKernel {
    void *handle;
    RtKernelFn fn;
    RtKernelFn fn_nt; /* tritium_kernel_nt (streaming stores) or NULL */
    unsigned flags;   /* RT_LAUNCH_* the kernel wants */
    char *path;   /* as given */
    char *dlname; /* the string passed to dlopen */
    dev_t dev;
    ino_t ino;
    RtKernel *next;
};

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static RtKernel *live; /* every loaded kernel, guarded by live_lock */

/* Nonzero when a live kernel was loaded under 'name' from another file than (dev, ino). */
static int
name_taken(const char *name, dev_t dev, ino_t ino)
{
    for (RtKernel *k = live; k; k = k->next)
        if (strcmp(k->dlname, name) == 0 && (k->dev != dev || k->ino != ino))
            return 1;
    return 0;
}

/* Returns the string to dlopen for 'path' (caller frees): the path itself (made
 * explicitly relative when it has no '/', so dlopen does not search library paths), or
 * an equivalent spelling with "./" components that no stale live kernel uses. */
static char *
dl_name(const char *path, const struct stat *st)
{
    const char *slash = strrchr(path, '/');
    const char *dir = slash ? path : ".", *base = slash ? slash + 1 : path;
    int dirlen = slash ? (int)(slash - path) : 1;
    char *name = slash ? rt_xstrdup(path) : rt_xasprintf("./%s", path);

    for (int dots = 1; name_taken(name, st->st_dev, st->st_ino); dots++) {
        char *p;
        free(name);
        name = rt_xmalloc((size_t)dirlen + 2 * (size_t)dots + strlen(base) + 2);
        p = name + sprintf(name, "%.*s/", dirlen, dir);
        for (int i = 0; i < dots; i++)
            p = stpcpy(p, "./");
        strcpy(p, base);
    }
    return name;
}

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#endif

static const char *
machine_name(unsigned m)
{
    return m == EM_X86_64 ? "x86-64" : m == EM_RISCV ? "RISC-V" : m == EM_AARCH64 ? "AArch64" : "another CPU";
}

/* 0, or -1 with the error set when the file is an ELF object for another CPU
 * (dlopen would only say "cannot open shared object file"). */
static int
check_machine(const char *so_path)
{
#ifdef HOST_MACHINE
    Elf64_Ehdr h;
    int fd = open(so_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0; /* dlopen reports it */
    ssize_t n = read(fd, &h, sizeof h);
    close(fd);
    if (n == (ssize_t)sizeof h && !memcmp(h.e_ident, ELFMAG, SELFMAG) && h.e_machine != HOST_MACHINE)
        return rt_fail(ENOEXEC,
                       "cannot load kernel %s: it is %s code and this process runs on %s "
                       "(compiled with SPINE_TRITON_TARGET_ARCH? run it on the target or under qemu; "
                       "triton.compile() cross-compiles without loading)",
                       so_path, machine_name(h.e_machine), machine_name(HOST_MACHINE));
#else
    (void)so_path;
#endif
    return 0;
}

typedef void (*ParallelForFn)(RtParallelBody body, void *data, int64_t n, void *pctx);

/* A kernel with smt.parallel loops exports the pointer it calls them through
 * (docs/compiler.md §1.2), initially a serial loop of its own: point it at ours. Every
 * load of the object stores the same value. */
static void
bind_parallel_for(RtKernel *k)
{
    ParallelForFn *slot = dlsym(k->handle, "tritium_parallel_for");
    if (slot) {
        *slot = rt_parallel_for;
        k->flags |= RT_LAUNCH_TEAMS;
    }
}

typedef void (*DebugPrintFn)(const char *, int32_t, int32_t, int32_t, const uint64_t *);
typedef void (*DebugAssertFn)(const char *, int32_t, int32_t, int32_t);

/* A kernel with tl.device_print / tl.device_assert exports the pointers it calls them
 * through (docs/compiler.md §1.2), initially functions of its own that do nothing. */
static void
bind_debug(RtKernel *k)
{
    DebugPrintFn *p = dlsym(k->handle, "tritium_debug_print");
    DebugAssertFn *a = dlsym(k->handle, "tritium_debug_assert");
    if (p)
        *p = rt_debug_print;
    if (a)
        *a = rt_debug_assert;
    if (p || a)
        k->flags |= RT_LAUNCH_DEBUG;
}

/* Documented in runtime.h. The lock covers choosing the name and dlopen, so two
 * threads loading replaced files cannot pick the same alias. */
int
rt_kernel_load(const char *so_path, RtKernel **out)
{
    RtKernel *k = NULL;
    struct stat st;
    const char *err;
    int rc = 0;

    *out = NULL;
    if (!so_path || stat(so_path, &st) != 0)
        return rt_fail(so_path ? errno : EINVAL, "cannot load kernel %s: %s",
                       so_path ? so_path : "(null)", strerror(so_path ? errno : EINVAL));
    if (!S_ISREG(st.st_mode)) /* dlopen would block on a FIFO */
        return rt_fail(ENOEXEC, "cannot load kernel %s: not a regular file", so_path);
    if ((rc = check_machine(so_path)) < 0)
        return rc;
    pthread_mutex_lock(&live_lock);
    k = rt_xcalloc(1, sizeof *k);
    k->path = rt_xstrdup(so_path);
    k->dlname = dl_name(so_path, &st);
    k->dev = st.st_dev;
    k->ino = st.st_ino;
    dlerror();
    k->handle = dlopen(k->dlname, RTLD_NOW | RTLD_LOCAL);
    if (!k->handle) {
        err = dlerror();
        rc = rt_fail(ENOEXEC, "cannot load kernel %s: %s", so_path, err ? err : "dlopen failed");
        goto out;
    }
    dlerror();
    k->fn = (RtKernelFn)(uintptr_t)dlsym(k->handle, "tritium_kernel");
    if (!k->fn) {
        err = dlerror();
        rc = rt_fail(ENOEXEC, "kernel %s has no tritium_kernel: %s", so_path,
                     err ? err : "symbol is NULL");
        dlclose(k->handle);
        goto out;
    }
    k->fn_nt = (RtKernelFn)(uintptr_t)dlsym(k->handle, "tritium_kernel_nt");
    bind_parallel_for(k);
    bind_debug(k);
    dlerror();
    k->next = live;
    live = k;
    rt_log("loaded %s%s%s", so_path, strcmp(k->dlname, so_path) ? " as " : "",
           strcmp(k->dlname, so_path) ? k->dlname : "");
    *out = k;
    k = NULL;
out:
    pthread_mutex_unlock(&live_lock);
    if (k) {
        free(k->dlname);
        free(k->path);
        free(k);
    }
    return rc;
}

/* dlclose drops one reference; glibc unmaps the object when the last one goes. */
void
rt_kernel_unload(RtKernel *k)
{
    if (!k)
        return;
    pthread_mutex_lock(&live_lock);
    for (RtKernel **p = &live; *p; p = &(*p)->next)
        if (*p == k) {
            *p = k->next;
            break;
        }
    dlclose(k->handle);
    pthread_mutex_unlock(&live_lock);
    free(k->dlname);
    free(k->path);
    free(k);
}

RtKernelFn
rt_kernel_fn(const RtKernel *k)
{
    return k->fn;
}

RtKernelFn
rt_kernel_fn_streaming(const RtKernel *k)
{
    return k->fn_nt;
}

const char *
rt_kernel_path(const RtKernel *k)
{
    return k->path;
}

unsigned
rt_kernel_launch_flags(const RtKernel *k)
{
    return k->flags;
}
