/*
 * drv_server.c — crash isolation of a compile: a long-lived forked compile server,
 * with a one-shot fork when the server is busy.
 *
 * A crash inside MLIR or LLVM (or the lowering) must fail one compile with a clear
 * error, not kill the caller's process (python/src/py_compile.c isolates unless
 * TRITIUM_COMPILE_FORK=0; tritium-opt with --isolate). Forking a process that has
 * torch loaded costs 20-40 ms (page tables and copy-on-write faults), so the first
 * compile forks a server and later compiles send it their TTIR and options over a
 * socket: one fork per process instead of one per compile. A compile that finds
 * the server busy (another thread is compiling) forks a one-shot child as before.
 * The child answers with the DrvResult as tagged fields ending with F_END, the
 * Linalg text sent ahead of code generation; when it dies (a crash), the compile
 * reports the signal with whatever arrived, and the next one starts a new server.
 *
 * The server is a fork of the caller's process: it ignores SIGINT (Ctrl-C reaches
 * the whole process group; the compile in flight finishes and the parent raises
 * KeyboardInterrupt), dies on SIGTERM/SIGHUP without running the parent's handlers
 * (Proton's would write the parent's profile), never runs Python or atexit
 * handlers (_exit), and leaves when the parent's end of the socket closes. Parent
 * ends are close-on-exec, and the owner's pthread_atfork child handler calls
 * drv_server_forget() to drop them in forked children (e.g. multiprocessing), so
 * the server sees that end close. The socket is an AF_UNIX stream pair written with
 * MSG_NOSIGNAL: a dead peer is EPIPE, never a SIGPIPE in a caller that did not
 * ignore it. The owner counts what happened from DrvResult.servers_started and
 * .forked (the runtime's compile_servers and compile_forks statistics).
 */
#include "drv_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* ORDER F_: request fields (Q_; the strings first: Request.str[tag - Q_TEXT]), result
 * fields (R_), then the end of either */
enum {
    Q_TEXT = 1, Q_NAME, Q_SO, Q_DUMP, Q_OPTS, Q_TARGET,
    R_NUMS, R_ERROR, R_STAGE, R_OBJ, R_COST, R_SCOPE, R_DIAG, R_DUMP,
    F_END
};
#define Q_NSTR (Q_DUMP - Q_TEXT + 1)

#define FIELD_MAX ((uint64_t)1 << 34) /* larger lengths mean a broken stream */

typedef struct WireOpts {
    int32_t instrument, stream, vector_bytes, want_stages, last, skip_passes, ttir_locs;
} WireOpts;

typedef struct WireNums {
    int32_t status, vector_bytes;
    uint64_t stream_bytes;
    double ms[DRV_PHASE_COUNT];
} WireNums;

typedef struct WireCost {
    uint64_t bytes_loaded, bytes_stored;
    double flops[3];
    int32_t exact, atomics; /* the scope names follow as R_SCOPE fields */
    char trips[IR_COST_PROGRAM_MAX];
} WireCost;

typedef struct WireDiag {
    int32_t severity, line, col;
    uint32_t file_len; /* then the file name, then the message */
} WireDiag;

/* One compile as the child sees it: pointers into the parent's memory (one-shot
 * child) or into the decoded request (server). */
typedef struct Request {
    const char *text;
    size_t len;
    DrvOptions opts;
    CgTarget target;
    char *str[Q_NSTR]; /* the server's decoded strings */
} Request;

/* ---- framed socket I/O ------------------------------------------------------------------- */

static int
write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
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

/* A field: tag, length, then a head of hn bytes and a body of bn bytes. */
static int
put_field2(int fd, uint8_t tag, const void *head, size_t hn, const void *body, size_t bn)
{
    uint64_t n = hn + bn;
    if (write_all(fd, &tag, 1) || write_all(fd, &n, 8))
        return -1;
    return (hn && write_all(fd, head, hn)) || (bn && write_all(fd, body, bn)) ? -1 : 0;
}

static int
put_field(int fd, uint8_t tag, const void *p, size_t n)
{
    return put_field2(fd, tag, p, n, NULL, 0);
}

static int
put_str(int fd, uint8_t tag, const char *s)
{
    return s ? put_field(fd, tag, s, strlen(s)) : 0;
}

/* Reads one field into a malloc'ed, NUL-terminated *p. 1 on success, 0 when the
 * stream ended or broke. */
static int
get_field(int fd, uint8_t *tag, char **p, uint64_t *len)
{
    *p = NULL;
    if (read_exact(fd, tag, 1) <= 0 || read_exact(fd, len, 8) <= 0 || *len > FIELD_MAX)
        return 0;
    if (!(*p = malloc(*len + 1)))
        return 0;
    if (*len && read_exact(fd, *p, *len) <= 0) {
        free(*p);
        *p = NULL;
        return 0;
    }
    (*p)[*len] = 0;
    return 1;
}

/* ---- requests ----------------------------------------------------------------------------- */

static int
put_request(int fd, const char *text, size_t len, const DrvOptions *o, const CgTarget *t)
{
    WireOpts w = {o->instrument, o->stream, o->vector_bytes, o->want_stages, o->last, o->skip_passes, o->ttir_locs};
    return put_field(fd, Q_TEXT, text, len) || put_field(fd, Q_OPTS, &w, sizeof w) ||
           put_field(fd, Q_TARGET, t, sizeof *t) || put_str(fd, Q_NAME, o->name) || put_str(fd, Q_SO, o->so_path) ||
           put_str(fd, Q_DUMP, o->dump_pass) || put_field(fd, F_END, NULL, 0);
}

static void
request_fini(Request *q)
{
    for (int i = 0; i < Q_NSTR; i++)
        free(q->str[i]);
    memset(q, 0, sizeof *q);
}

/* The options of a decoded request; its strings point into q->str. */
static void
request_options(Request *q, const WireOpts *w)
{
    q->opts = (DrvOptions){.name = q->str[Q_NAME - Q_TEXT], .instrument = w->instrument,
                           .stream = (DrvStream)w->stream, .vector_bytes = w->vector_bytes,
                           .want_stages = w->want_stages, .last = (DrvLast)w->last,
                           .so_path = q->str[Q_SO - Q_TEXT], .skip_passes = w->skip_passes,
                           .dump_pass = q->str[Q_DUMP - Q_TEXT], .ttir_locs = w->ttir_locs};
    q->text = q->str[0];
}

/* Reads one request (server side). 1: q is filled; 0: the parent closed its end or
 * the stream broke (q is empty). */
static int
get_request(int fd, Request *q)
{
    memset(q, 0, sizeof *q);
    WireOpts w;
    bool have_opts = false, have_target = false;
    for (;;) {
        uint8_t tag;
        char *p;
        uint64_t n;
        if (!get_field(fd, &tag, &p, &n))
            break;
        if (tag >= Q_TEXT && tag <= Q_DUMP) {
            free(q->str[tag - Q_TEXT]);
            q->str[tag - Q_TEXT] = p;
            if (tag == Q_TEXT)
                q->len = (size_t)n;
            continue;
        }
        if (tag == Q_OPTS && n == sizeof w)
            memcpy(&w, p, sizeof w), have_opts = true;
        else if (tag == Q_TARGET && n == sizeof q->target)
            memcpy(&q->target, p, sizeof q->target), have_target = true;
        free(p);
        if (tag == F_END) {
            if (!have_opts || !have_target || !q->str[0])
                break;
            request_options(q, &w);
            return 1;
        }
    }
    request_fini(q);
    return 0;
}

/* ---- results ----------------------------------------------------------------------------- */

static int
put_stage(int fd, const DrvResult *r, int i)
{
    uint8_t idx = (uint8_t)i;
    return r->stage[i] ? put_field2(fd, R_STAGE, &idx, 1, r->stage[i], r->stage_len[i]) : 0;
}

/* Sends a result (child side); the stage 'sent' went ahead and is skipped (-1: none). */
static int
put_result(int fd, const DrvResult *r, int sent)
{
    WireNums nums = {r->status, r->vector_bytes, r->stream_bytes, {0}};
    memcpy(nums.ms, r->ms, sizeof nums.ms);
    const IrCost *c = &r->cost;
    WireCost cost = {c->bytes_loaded, c->bytes_stored, {c->flops[0], c->flops[1], c->flops[2]}, c->exact, c->atomics, ""};
    memcpy(cost.trips, c->trips, sizeof cost.trips);
    if (put_field(fd, R_NUMS, &nums, sizeof nums) || put_str(fd, R_ERROR, r->error) ||
        put_field(fd, R_COST, &cost, sizeof cost) || put_str(fd, R_DUMP, r->pass_dump) ||
        (r->obj && put_field(fd, R_OBJ, r->obj, r->obj_len)))
        return -1;
    for (int i = 0; i < DRV_STAGE_COUNT; i++)
        if (i != sent && put_stage(fd, r, i))
            return -1;
    for (int i = 0; i < c->nscopes; i++) {
        uint32_t idx = (uint32_t)i;
        if (put_field2(fd, R_SCOPE, &idx, sizeof idx, c->scope_names[i], strlen(c->scope_names[i])))
            return -1;
    }
    for (int i = 0; i < r->ndiags; i++) {
        const DrvDiag *d = &r->diags[i];
        size_t fl = strlen(d->file), ml = strlen(d->msg);
        char *body = malloc(fl + ml + 1);
        if (!body)
            return -1;
        memcpy(body, d->file, fl);
        memcpy(body + fl, d->msg, ml);
        WireDiag h = {d->severity, d->line, d->col, (uint32_t)fl};
        int rc = put_field2(fd, R_DIAG, &h, sizeof h, body, fl + ml);
        free(body);
        if (rc)
            return -1;
    }
    return put_field(fd, F_END, NULL, 0);
}

static char *
dup_range(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        abort();
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static void
add_diag(DrvResult *res, const char *p, uint64_t n)
{
    WireDiag h;
    if (n < sizeof h)
        return;
    memcpy(&h, p, sizeof h);
    if (h.file_len > n - sizeof h)
        return;
    DrvDiag *nd = realloc(res->diags, sizeof *nd * (size_t)(res->ndiags + 1));
    if (!nd)
        abort();
    res->diags = nd;
    const char *file = p + sizeof h;
    nd[res->ndiags++] = (DrvDiag){.severity = h.severity, .line = h.line, .col = h.col,
                                  .file = dup_range(file, h.file_len),
                                  .msg = dup_range(file + h.file_len, n - sizeof h - h.file_len)};
}

/* Applies one result field to res; takes ownership of p. */
static void
apply_field(DrvResult *res, uint8_t tag, char *p, uint64_t n)
{
    if (tag == R_NUMS && n == sizeof(WireNums)) {
        WireNums w;
        memcpy(&w, p, sizeof w);
        res->status = (DrvStatus)w.status;
        res->vector_bytes = w.vector_bytes;
        res->stream_bytes = w.stream_bytes;
        memcpy(res->ms, w.ms, sizeof res->ms);
    } else if (tag == R_COST && n == sizeof(WireCost)) {
        WireCost w;
        memcpy(&w, p, sizeof w);
        res->cost.bytes_loaded = w.bytes_loaded, res->cost.bytes_stored = w.bytes_stored;
        memcpy(res->cost.flops, w.flops, sizeof w.flops);
        res->cost.exact = w.exact, res->cost.atomics = w.atomics;
        memcpy(res->cost.trips, w.trips, sizeof w.trips);
        res->cost.trips[sizeof res->cost.trips - 1] = 0;
    } else if (tag == R_SCOPE && n >= 4) {
        uint32_t idx;
        memcpy(&idx, p, 4);
        if (idx == (uint32_t)res->cost.nscopes && idx < IR_MAX_SCOPES)
            res->cost.scope_names[res->cost.nscopes++] = dup_range(p + 4, n - 4);
    } else if (tag == R_STAGE && n >= 1 && (uint8_t)p[0] < DRV_STAGE_COUNT) {
        int i = (uint8_t)p[0];
        memmove(p, p + 1, n); /* the text and its NUL */
        free(res->stage[i]);
        res->stage[i] = p;
        res->stage_len[i] = n - 1;
        return;
    } else if (tag == R_DIAG) {
        add_diag(res, p, n);
    } else if (tag == R_ERROR || tag == R_DUMP || tag == R_OBJ) {
        char **dst = tag == R_ERROR ? &res->error : tag == R_DUMP ? &res->pass_dump : (char **)&res->obj;
        free(*dst);
        *dst = p;
        if (tag == R_OBJ)
            res->obj_len = (size_t)n;
        return;
    }
    free(p);
}

/* Reads one result (parent side) into res. Returns 1 when it ended with F_END, 0
 * when the stream ended first (the child died): res keeps what arrived. */
static int
get_result(int fd, DrvResult *res)
{
    for (;;) {
        uint8_t tag;
        char *p;
        uint64_t n;
        if (!get_field(fd, &tag, &p, &n))
            return 0;
        if (tag == F_END) {
            free(p);
            return 1;
        }
        apply_field(res, tag, p, n);
    }
}

/* ---- the child's side --------------------------------------------------------------------- */

static void
close_between(unsigned lo, unsigned hi)
{
    if (lo <= hi)
        syscall(SYS_close_range, lo, hi, 0);
}

/* A forked child's set-up: the signal dispositions above, and no descriptors but
 * stderr and the socket it uses — holding a copy of, say, the write end of a pipe
 * to one of the user's subprocesses would keep that subprocess from ever seeing
 * end of file. stdin and stdout become /dev/null. */
static void
child_setup(int keep)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    if (keep < 3)
        return; /* the parent ran with stdio closed: leave everything as it is */
    close_between(3, (unsigned)keep - 1);
    close_between((unsigned)keep + 1, ~0u);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        if (null > 2)
            close(null);
    }
}

/* TRITIUM_CG_CRASH_FOR_TESTING=<text>: crash on Linalg input containing it (a
 * kernel name), as a bug in MLIR or LLVM would (tests/python/test_compile_isolation.py,
 * tests/unit/test_driver.c); with the default action, so that a sanitizer's SIGSEGV
 * handler does not turn the crash into an exit. */
static void
crash_if_testing(const char *linalg)
{
    const char *t = getenv("TRITIUM_CG_CRASH_FOR_TESTING");
    if (t && *t && linalg && strstr(linalg, t)) {
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
    }
}

/* Runs one compile and answers on fd. The Linalg text goes ahead of code
 * generation, so that a crash there is still reported with its input. */
static void
compile_and_reply(int fd, const Request *q)
{
    DrvResult r;
    memset(&r, 0, sizeof r);
    int sent = -1;
    if (drv_front(q->text, q->len, &q->opts, &q->target, &r) == DRV_OK && q->opts.last == DRV_LAST_NATIVE) {
        if (put_stage(fd, &r, DRV_STAGE_LINALG) == 0)
            sent = DRV_STAGE_LINALG;
        crash_if_testing(r.stage[DRV_STAGE_LINALG]);
        drv_codegen(&q->opts, &q->target, &r);
    }
    (void)put_result(fd, &r, sent); /* on failure the parent sees the stream end: a crash */
    drv_result_fini(&r);
}

/* The server: one request at a time until the parent closes its end. */
static void __attribute__((noreturn))
serve(int fd)
{
    for (;;) {
        Request q;
        if (!get_request(fd, &q))
            _exit(0);
        compile_and_reply(fd, &q);
        request_fini(&q);
    }
}

/* ---- the parent's side -------------------------------------------------------------------- */

struct DrvServer {
    pthread_mutex_t mu; /* held for a whole exchange with the server */
    pid_t pid;          /* 0: none */
    pid_t owner;        /* the process that started it */
    int fd;             /* our end of the socket */
};

static int
socket_pair(int sv[2])
{
    return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
}

static int
start_server(DrvServer *s, DrvResult *res)
{
    int sv[2];
    if (socket_pair(sv) < 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]), close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        child_setup(sv[1]);
        serve(sv[1]);
    }
    close(sv[1]);
    s->pid = pid;
    s->owner = getpid();
    s->fd = sv[0];
    res->servers_started++;
    return 0;
}

static int
wait_child(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return status;
}

/* The signal that ended the server (reaped), or -1. A server still alive after a
 * broken exchange is killed first, so this never waits for a live process. */
static int
server_died(DrvServer *s)
{
    int status = 0;
    pid_t pid = s->pid;
    close(s->fd);
    s->pid = 0;
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
        return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
    if (w < 0)
        return -1; /* reaped elsewhere (os.wait() in the script): the pid may be reused */
    kill(pid, SIGKILL);
    status = wait_child(pid);
    return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
}

/* A child that died in the middle of a compile: DRV_ERR_CRASH, res keeping what arrived. */
static DrvStatus
crashed(DrvResult *res, int sig)
{
    res->crash_signal = sig;
    if (sig > 0)
        return drv_fail(res, DRV_ERR_CRASH,
                        "internal compiler error: code generation crashed (signal %d, %s); this process is unaffected.",
                        sig, strsignal(sig));
    return drv_fail(res, DRV_ERR_CRASH, "internal compiler error: code generation ended without an answer.");
}

static DrvStatus
no_child(DrvResult *res, const char *what)
{
    return drv_fail(res, DRV_ERR_SYSTEM, "internal compiler error: could not run code generation (%s: %s)", what,
                    strerror(errno));
}

/* A one-shot child for this compile. */
static DrvStatus
compile_once(const Request *q, DrvResult *res)
{
    int sv[2];
    if (socket_pair(sv) < 0)
        return no_child(res, "socketpair");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]), close(sv[1]);
        return no_child(res, "fork");
    }
    if (pid == 0) {
        child_setup(sv[1]);
        compile_and_reply(sv[1], q);
        _exit(0);
    }
    close(sv[1]);
    res->forked = true;
    int ok = get_result(sv[0], res);
    close(sv[0]);
    int status = wait_child(pid);
    if (!ok)
        return crashed(res, WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    return res->status;
}

/* The exchange with the server, s->mu held. 1 when it answered (res filled), 0
 * when this compile crashed it (res->status set), -1 when no server could run. */
static int
ask_server(DrvServer *s, const Request *q, DrvResult *res)
{
    if (s->pid && s->owner != getpid())
        s->pid = 0; /* inherited without the atfork handler (vfork, clone) */
    if (s->pid) { /* died while idle (killed)? then it is reaped here: just forget it */
        pid_t w = waitpid(s->pid, NULL, WNOHANG);
        if (w == s->pid || (w < 0 && errno == ECHILD)) {
            close(s->fd);
            s->pid = 0;
        }
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!s->pid && start_server(s, res) < 0)
            return -1;
        if (put_request(s->fd, q->text, q->len, &q->opts, &q->target) == 0) {
            if (get_result(s->fd, res))
                return 1;
            crashed(res, server_died(s)); /* it took the request and died: this compile crashed */
            return 0;
        }
        server_died(s); /* could not even take the request: start another */
    }
    return -1;
}

DrvStatus
drv_isolated_compile(const char *ttir, size_t len, const DrvOptions *o, const CgTarget *t, DrvServer *s,
                     DrvResult *res)
{
    Request q = {.text = ttir, .len = len, .opts = *o, .target = *t};
    if (!s || pthread_mutex_trylock(&s->mu) != 0) /* none, or another thread is using it */
        return compile_once(&q, res);
    int rc = ask_server(s, &q, res);
    pthread_mutex_unlock(&s->mu);
    return rc >= 0 ? res->status : compile_once(&q, res);
}

/* ---- api ------------------------------------------------------------------------------------ */

DRV_EXPORT DrvServer *
drv_server_create(void)
{
    DrvServer *s = calloc(1, sizeof *s);
    if (s)
        pthread_mutex_init(&s->mu, NULL);
    return s;
}

DRV_EXPORT void
drv_server_destroy(DrvServer *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    if (s->pid && s->owner == getpid()) {
        close(s->fd); /* the server reads end of file and exits */
        wait_child(s->pid);
    }
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

DRV_EXPORT pid_t
drv_server_pid(DrvServer *s)
{
    pthread_mutex_lock(&s->mu);
    pid_t pid = s->owner == getpid() ? s->pid : 0;
    pthread_mutex_unlock(&s->mu);
    return pid;
}

DRV_EXPORT void
drv_server_forget(DrvServer *s)
{
    if (s->pid)
        close(s->fd);
    s->pid = 0;
    s->owner = 0;
    s->fd = -1;
    pthread_mutex_init(&s->mu, NULL); /* another thread of the parent may have held it */
}
