/*
 * pn_exit.c — pending output at exit and on SIGTERM/SIGINT, and the lock that
 * guards it (pn_lock / pn_unlock around every use of pn_mu).
 *
 * Nothing is installed until something records; then pn_arm_exit registers an atexit
 * handler, starts the exit thread and takes SIGTERM and SIGINT where their disposition
 * is still the default (Python owns SIGINT; a user's handler is never replaced). An
 * uncaught KeyboardInterrupt ends Python by re-raising SIGINT after finalisation, which
 * skips C atexit handlers, so the triton package calls pn_flush_at_exit from a Python
 * atexit hook as well; the exit flush takes the two signals again where Python's
 * finalisation gave them back to the default.
 *
 * A signal never writes from the handler and never waits for a lock there:
 *  - if a thread holds pn_mu (a writer, or any short critical section; the handler may
 *    have interrupted it), the handler records the signal and returns; pn_unlock, on
 *    the way out of that section, writes everything still pending and then ends the
 *    process with the signal (SIG_DFL + kill), so a write in progress always finishes;
 *  - otherwise the handler wakes the exit thread (one byte on a pipe: write() is
 *    async-signal-safe) and sleeps; that thread takes pn_mu, writes, and ends the
 *    process the same way.
 * Who acts is decided by one atomic exchange (claimed), so the output is written once.
 * The seq_cst store of 'pending' before the load of 'held' in the handler, and of
 * 'held' before the load of 'pending' in pn_unlock, make sure one of them sees the
 * other. The exit status still says "killed by SIGTERM" (or SIGINT).
 *
 * After fork() the child has no exit thread (threads do not survive fork) and a fresh
 * pipe is needed; pn_arm_exit starts them again when the child first records. A
 * child that recorded nothing dies by the default action: it has nothing to write.
 */
#include "pn_int.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int pn_mu_held;                    /* some thread holds pn_mu (read by the handler) */
static __thread int mu_mine;       /* this thread holds it, or is just releasing it */
static volatile sig_atomic_t pending; /* signal waiting for the output to be written */
static int claimed;                /* someone is writing the output for it */
static int sig_pipe[2] = { -1, -1 };
static pid_t armed_pid;            /* the process the exit thread and pipe belong to */
static int atexit_done;
static pthread_mutex_t arm_mu = PTHREAD_MUTEX_INITIALIZER;

static void flush_locked(int at_exit);

/* ---- dying by the signal -------------------------------------------------------------- */

/* Ends the process with 'sig' as if Proton had not caught it. */
static void
die(int sig)
{
    struct sigaction dfl;
    sigset_t set;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    kill(getpid(), sig);
    raise(sig);
    for (int i = 0; i < 100; i++) { /* delivery to another thread takes a moment */
        struct timespec t = { 0, 10000000 };
        nanosleep(&t, NULL);
    }
    _exit(128 + sig);
}

/* The caller holds pn_mu: when a signal is pending and nobody took it yet, writes
 * everything and dies by it. */
static void
act_if_pending(void)
{
    int sig = pending;
    if (sig && !__atomic_exchange_n(&claimed, 1, __ATOMIC_SEQ_CST)) {
        flush_locked(1);
        die(sig);
    }
}

/* ---- the lock ----------------------------------------------------------------------------- */

void
pn_lock(void)
{
    pthread_mutex_lock(&pn_mu);
    mu_mine = 1;
    __atomic_store_n(&pn_mu_held, 1, __ATOMIC_SEQ_CST);
}

int
pn_trylock(void)
{
    if (pthread_mutex_trylock(&pn_mu) != 0)
        return -1;
    mu_mine = 1;
    __atomic_store_n(&pn_mu_held, 1, __ATOMIC_SEQ_CST);
    return 0;
}

/* Releases pn_mu; a signal that arrived meanwhile is acted on first (or, when it
 * arrived during the release, after it, by taking the lock again). */
void
pn_unlock(void)
{
    act_if_pending();
    __atomic_store_n(&pn_mu_held, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&pn_mu);
    mu_mine = 0; /* after the unlock: a handler running before this line leaves it to us */
    if (__atomic_load_n(&pending, __ATOMIC_SEQ_CST) && !__atomic_load_n(&claimed, __ATOMIC_SEQ_CST)) {
        pn_lock();
        pn_unlock();
    }
}

/* ---- output at exit ----------------------------------------------------------------------- */

/* The output a session inherited across fork() is written only when this process
 * recorded into it (pn_session_has_data); finalizes every session and dumps the
 * capture store if it has unwritten data. Holds pn_mu. */
static void
flush_locked(int at_exit)
{
    for (int i = 1; i < PN_NSLOTS; i++) {
        if (!pn_slots[i].used || !pn_slots[i].current)
            continue;
        if (pn_slots[i].inherited && !pn_session_has_data(i)) {
            pn_slot_finalize(i, "", 0);
            continue;
        }
        if (pn_slot_finalize(i, "", 1) < 0)
            fprintf(stderr, "proton: %s\n", pn_last_error());
    }
    if (pn_slots[PN_CAPTURE_SLOT].used && PN_LD(&pn_capture_dirty)) {
        const char *p = pn_cfg.output;
        if (pn_capture_dump_locked(NULL) < 0) {
            fprintf(stderr, "proton: %s\n", pn_last_error());
            /* said once: the next exit hook (C's after Python's) would fail the same way */
            PN_ST(&pn_capture_dirty, 0);
        } else if (at_exit && p) {
            char *e = pn_path_expand(p);
            fprintf(stderr, "proton: wrote %s\n", e ? e : p);
            free(e);
        }
    }
}

void
pn_flush_all(void)
{
    pn_lock();
    flush_locked(0);
    pn_unlock();
}

static void take_signal(int sig);

void
pn_flush_at_exit(void)
{
    /* after Python's finalisation SIGINT is back at the default: hold it off too */
    if (PN_LD(&armed_pid) == getpid()) {
        take_signal(SIGTERM);
        take_signal(SIGINT);
    }
    pn_lock();
    flush_locked(1);
    pn_unlock();
}

static void
on_exit_handler(void)
{
    pn_flush_at_exit();
}

/* ---- signals ------------------------------------------------------------------------------ */

static void
on_signal(int sig)
{
    int saved = errno;
    unsigned char c = (unsigned char)sig;
    __atomic_store_n(&pending, sig, __ATOMIC_SEQ_CST);
    if (mu_mine || __atomic_load_n(&pn_mu_held, __ATOMIC_SEQ_CST)) {
        errno = saved; /* the holder writes and dies at pn_unlock */
        return;
    }
    if (__atomic_exchange_n(&claimed, 1, __ATOMIC_SEQ_CST)) {
        for (;;) /* someone else is writing; it ends the process */
            pause();
    }
    if (armed_pid != getpid() || write(sig_pipe[1], &c, 1) != 1)
        die(sig); /* no exit thread in this process: it recorded nothing to write */
    for (int i = 0; i < 6000; i++) { /* the exit thread ends the process; give up after 60 s */
        struct timespec t = { 0, 10000000 };
        nanosleep(&t, NULL);
    }
    die(sig);
}

static void
take_signal(int sig)
{
    struct sigaction old, sa;
    if (sigaction(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, NULL);
}

/* Waits for a byte from the handler, then writes everything and ends the process. */
static void *
exit_thread(void *arg)
{
    unsigned char sig;
    (void)arg;
    while (read(sig_pipe[0], &sig, 1) != 1)
        if (errno != EINTR)
            return NULL;
    pn_lock();
    flush_locked(1);
    die(sig);
    return NULL;
}

/* Starts the exit thread with every signal blocked (so handlers never run on it). */
static int
start_exit_thread(void)
{
    pthread_t th;
    pthread_attr_t at;
    sigset_t all, old;
    int rc;
    if (pipe(sig_pipe) != 0)
        return -1;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, 256 << 10);
    rc = pthread_create(&th, &at, exit_thread, NULL);
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(sig_pipe[0]);
        close(sig_pipe[1]);
        sig_pipe[0] = sig_pipe[1] = -1;
        return -1;
    }
    return 0;
}

/* Registers the exit handler (once per program), starts the exit thread and takes
 * SIGTERM/SIGINT where they are default (once per process: again in a forked child
 * that records). Cheap when already done. */
void
pn_arm_exit(void)
{
    pid_t me = getpid();
    if (PN_LD(&armed_pid) == me)
        return;
    pn_tls_init_once(); /* fork handlers: a child must not write the parent's files */
    pthread_mutex_lock(&arm_mu);
    if (armed_pid != me) {
        if (!atexit_done++)
            atexit(on_exit_handler);
        if (start_exit_thread() == 0) {
            PN_ST(&armed_pid, me);
            take_signal(SIGTERM);
            take_signal(SIGINT);
        }
    }
    pthread_mutex_unlock(&arm_mu);
}

/* In the child after fork(): the parent's exit thread is gone and its pipe belongs to
 * the parent; nothing is pending here. Only async-signal-safe calls. */
void
pn_exit_after_fork(void)
{
    if (sig_pipe[0] >= 0) {
        close(sig_pipe[0]);
        close(sig_pipe[1]);
        sig_pipe[0] = sig_pipe[1] = -1;
    }
    pending = 0;
    claimed = 0;
    pn_mu_held = 0;
    mu_mine = 0;
    pthread_mutex_init(&arm_mu, NULL);
}
