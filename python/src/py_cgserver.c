/*
 * py_cgserver.c — crash isolation of code generation: a long-lived forked compile
 * server, with a one-shot fork when the server is busy.
 *
 * A crash inside MLIR or LLVM must fail one compile with a clear error, not kill
 * the user's process (TRITIUM_COMPILE_FORK=0 compiles in process instead). Forking
 * a process that has torch loaded costs 20-40 ms (page tables and copy-on-write
 * faults), so the first compile forks a server and later compiles send it their
 * Linalg text over a pipe: one fork per process instead of one per compile. A
 * compile that finds the server busy (another thread is compiling) forks a
 * one-shot child as before. The server answers with the CgResult as tagged fields
 * ending with F_END; when it dies (a crash), the compile reports the signal and
 * the next one starts a new server.
 *
 * The server is a fork of the user's process: it ignores SIGINT (Ctrl-C reaches
 * the whole process group; the compile in flight finishes and the parent raises
 * KeyboardInterrupt), dies on SIGTERM/SIGHUP without running the parent's handlers
 * (Proton's would write the parent's profile), never runs Python or atexit
 * handlers (_exit), and leaves when the parent's end of the request pipe closes.
 * Parent ends are close-on-exec, and a pthread_atfork handler drops them in forked
 * children (e.g. multiprocessing), so the server sees that end close.
 */
#include "py_int.h"

#include "codegen.h"
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum { F_RC = 1, F_ERROR, F_LLMLIR, F_LLVMIR, F_ASM, F_OBJ, F_TIMES, F_STREAMED, F_END };

/* ---- framed pipe I/O ------------------------------------------------------------- */

static int
write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 1 when all n bytes were read, 0 on end of file before them, -1 on error. */
static int
read_exact(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0 ? 0 : -1;
        c += r;
        n -= (size_t)r;
    }
    return 1;
}

static int
put_field(int fd, uint8_t tag, const void *p, uint64_t n)
{
    if (write_all(fd, &tag, 1) || write_all(fd, &n, 8))
        return -1;
    return n ? write_all(fd, p, n) : 0;
}

static int
put_str(int fd, uint8_t tag, const char *s)
{
    return s ? put_field(fd, tag, s, strlen(s)) : 0;
}

/* Sends the result of one compile (child side). */
static int
put_result(int fd, int rc, const CgResult *r)
{
    double t[3] = {r->ms_mlir, r->ms_llvm, r->ms_link};
    if (put_field(fd, F_RC, &rc, sizeof rc) || put_str(fd, F_ERROR, r->error) ||
        put_str(fd, F_LLMLIR, r->ll_mlir) || put_str(fd, F_LLVMIR, r->llvm_ir) ||
        put_str(fd, F_ASM, r->asm_text) || (r->obj && put_field(fd, F_OBJ, r->obj, r->obj_len)) ||
        put_field(fd, F_TIMES, t, sizeof t) ||
        put_field(fd, F_STREAMED, &r->streamed_stores, sizeof r->streamed_stores))
        return -1;
    return put_field(fd, F_END, NULL, 0);
}

/* Reads one result (parent side) into res (malloc'ed fields). Returns 1 when it
 * ended with F_END and *rc is set, 0 when the pipe ended first (the child died). */
static int
get_result(int fd, CgResult *res, int *rc)
{
    int got_rc = 0;
    for (;;) {
        uint8_t tag;
        uint64_t len;
        if (read_exact(fd, &tag, 1) <= 0 || read_exact(fd, &len, 8) <= 0)
            return 0;
        if (tag == F_END)
            return got_rc;
        char *p = malloc(len + 1);
        if (!p)
            return 0;
        if (len && read_exact(fd, p, len) <= 0) {
            free(p);
            return 0;
        }
        p[len] = 0;
        char **dst = tag == F_ERROR ? &res->error : tag == F_LLMLIR ? &res->ll_mlir : tag == F_LLVMIR ? &res->llvm_ir
                   : tag == F_ASM   ? &res->asm_text : NULL;
        if (dst) {
            free(*dst);
            *dst = p;
            continue;
        }
        if (tag == F_OBJ) {
            free(res->obj);
            res->obj = (uint8_t *)p;
            res->obj_len = (size_t)len;
            continue;
        }
        if (tag == F_RC && len == sizeof *rc)
            memcpy(rc, p, sizeof *rc), got_rc = 1;
        else if (tag == F_TIMES && len == 3 * sizeof(double)) {
            double t[3];
            memcpy(t, p, sizeof t);
            res->ms_mlir = t[0], res->ms_llvm = t[1], res->ms_link = t[2];
        } else if (tag == F_STREAMED && len == sizeof res->streamed_stores)
            memcpy(&res->streamed_stores, p, sizeof res->streamed_stores);
        free(p);
    }
}

/* ---- the child's side ------------------------------------------------------------------ */

static void
close_between(unsigned lo, unsigned hi)
{
    if (lo <= hi)
        syscall(SYS_close_range, lo, hi, 0);
}

/* A forked child's set-up: the signal dispositions above, and no descriptors but
 * stderr and the two pipe ends it uses — holding a copy of, say, the write end of
 * a pipe to one of the user's subprocesses would keep that subprocess from ever
 * seeing end of file. stdin and stdout become /dev/null. */
static void
child_setup(int keep1, int keep2)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    unsigned a = (unsigned)(keep1 < keep2 ? keep1 : keep2), b = (unsigned)(keep1 < keep2 ? keep2 : keep1);
    if (a < 3)
        return; /* the parent ran with stdio closed: leave everything as it is */
    close_between(3, a - 1);
    close_between(a + 1, b - 1);
    close_between(b + 1, ~0u);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        if (null > 2)
            close(null);
    }
}

/* TRITIUM_CG_CRASH_FOR_TESTING=<text>: crash on Linalg input containing it (a
 * kernel name), as a bug in MLIR or LLVM would (tests/python/test_compile_isolation.py) */
static void
crash_if_testing(const char *linalg)
{
    const char *t = getenv("TRITIUM_CG_CRASH_FOR_TESTING");
    if (t && *t && strstr(linalg, t))
        raise(SIGSEGV);
}

static void
compile_and_reply(const CgApi *cg, int out, const char *linalg, size_t len, const CgOptions *co, const char *so)
{
    CgResult r;
    memset(&r, 0, sizeof r);
    crash_if_testing(linalg);
    int rc = cg->compile(linalg, len, co, so, &r);
    put_result(out, rc, &r);
    cg->result_fini(&r);
}

/* The server: one request at a time until the parent closes its end. */
static void __attribute__((noreturn))
serve(const CgApi *cg, int in, int out)
{
    for (;;) {
        uint64_t len;
        uint32_t plen;
        CgOptions co;
        char so[PATH_MAX];
        if (read_exact(in, &len, sizeof len) <= 0)
            _exit(0);
        char *text = malloc(len + 1);
        if (!text || read_exact(in, text, len) <= 0 || read_exact(in, &co, sizeof co) <= 0 ||
            read_exact(in, &plen, sizeof plen) <= 0 || plen >= sizeof so || read_exact(in, so, plen) <= 0)
            _exit(1);
        text[len] = 0;
        so[plen] = 0;
        co.ld_path = NULL; /* a pointer into the parent */
        compile_and_reply(cg, out, text, len, &co, so);
        free(text);
    }
}

/* ---- the parent's side ----------------------------------------------------------------- */

typedef struct Server {
    pid_t pid;   /* 0: none */
    pid_t owner; /* the process that started it */
    int req, resp;
} Server;

static Server srv;
static pthread_mutex_t srv_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* In any forked child: the parent's server is not ours. */
static void
forget_server(void)
{
    if (srv.pid) {
        close(srv.req);
        close(srv.resp);
    }
    memset(&srv, 0, sizeof srv);
    pthread_mutex_init(&srv_mu, NULL);
}

static void
register_atfork(void)
{
    pthread_atfork(NULL, NULL, forget_server);
}

static int
start_server(const CgApi *cg)
{
    int req[2], resp[2];
    if (pipe2(req, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(resp, O_CLOEXEC) < 0) {
        close(req[0]), close(req[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(req[0]), close(req[1]), close(resp[0]), close(resp[1]);
        return -1;
    }
    if (pid == 0) {
        child_setup(req[0], resp[1]);
        serve(cg, req[0], resp[1]);
    }
    close(req[0]);
    close(resp[1]);
    srv = (Server){.pid = pid, .owner = getpid(), .req = req[1], .resp = resp[0]};
    rt_stats_add(RT_STAT_CG_SERVER);
    return 0;
}

static int
send_request(const char *linalg, size_t len, const CgOptions *co, const char *so_path)
{
    uint64_t n = len;
    uint32_t plen = (uint32_t)strlen(so_path);
    return write_all(srv.req, &n, sizeof n) || write_all(srv.req, linalg, len) || write_all(srv.req, co, sizeof *co) ||
           write_all(srv.req, &plen, sizeof plen) || write_all(srv.req, so_path, plen);
}

/* The signal that ended the server (reaped), or -1. A server still alive after a
 * broken exchange is killed first, so this never waits for a live process. */
static int
server_died(void)
{
    int status = 0;
    pid_t pid = srv.pid;
    close(srv.req);
    close(srv.resp);
    srv.pid = 0;
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
        return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
    if (w < 0)
        return -1; /* reaped elsewhere (os.wait() in the script): the pid may be reused */
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
}

/* A one-shot child for this compile. */
static int
compile_once(const CgApi *cg, const char *linalg, size_t len, const CgOptions *co, const char *so_path,
             CgResult *res, int *crash)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        *crash = -1;
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        *crash = -1;
        return -1;
    }
    if (pid == 0) {
        child_setup(fds[1], fds[1]);
        compile_and_reply(cg, fds[1], linalg, len, co, so_path);
        _exit(0);
    }
    close(fds[1]);
    rt_stats_add(RT_STAT_CG_FORK);
    int rc = -1, ok = get_result(fds[0], res, &rc), status = 0;
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!ok) {
        *crash = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
        return -1;
    }
    return rc;
}

int
py_cg_isolated_compile(const CgApi *cg, const char *linalg, size_t len, const CgOptions *co, const char *so_path,
                       CgResult *res, int *crash)
{
    *crash = 0;
    pthread_once(&atfork_once, register_atfork);
    if (pthread_mutex_trylock(&srv_mu) != 0) /* another thread is using the server */
        return compile_once(cg, linalg, len, co, so_path, res, crash);
    if (srv.pid && srv.owner != getpid())
        memset(&srv, 0, sizeof srv); /* inherited without the atfork handler (vfork, clone) */
    if (srv.pid) { /* died while idle (killed)? then it is reaped here: just forget it */
        pid_t w = waitpid(srv.pid, NULL, WNOHANG);
        if (w == srv.pid || (w < 0 && errno == ECHILD)) {
            close(srv.req);
            close(srv.resp);
            srv.pid = 0;
        }
    }
    int rc = -1;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!srv.pid && start_server(cg) < 0)
            break;
        if (send_request(linalg, len, co, so_path) == 0) {
            if (get_result(srv.resp, res, &rc)) {
                pthread_mutex_unlock(&srv_mu);
                return rc;
            }
            *crash = server_died(); /* it took the request and died: this compile crashed */
            pthread_mutex_unlock(&srv_mu);
            return -1;
        }
        server_died(); /* could not even take the request: start another */
    }
    pthread_mutex_unlock(&srv_mu);
    return compile_once(cg, linalg, len, co, so_path, res, crash);
}

pid_t
py_cg_server_pid(void)
{
    pthread_mutex_lock(&srv_mu);
    pid_t pid = srv.owner == getpid() ? srv.pid : 0;
    pthread_mutex_unlock(&srv_mu);
    return pid;
}
