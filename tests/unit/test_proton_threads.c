/*
 * test_proton_threads.c — concurrency, bounded memory and process exit:
 * 8 threads recording at once lose nothing; drops are counted exactly at a small
 * PROTON_TRACE_LIMIT; the budget of a finished session is reused; the capture
 * store is written at exit and on SIGTERM (the process still dies by SIGTERM), with
 * the scopes still open; traces written while other threads open and close scopes
 * give every kernel its whole call_stack;
 * an existing SIGINT handler is left alone; with nothing enabled nothing is
 * printed or written. Exit paths run in fresh processes: this binary re-executes
 * itself with a role in argv[1] and the environment of that role.
 */
#include "test_proton_util.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static int
setup(void **state)
{
    (void)state;
    unsetenv("PROTON_KERNEL_CAPTURE");
    unsetenv("PROTON_TRACE_LIMIT");
    unsetenv("PROTON_OUTPUT");
    setenv("PROTON_EVENTS", "none", 1);
    pn_test_reset();
    pn_clock_force(PN_CLK_GETTIME); /* real time: threads run concurrently */
    return 0;
}

/* a launch of 'gx' programs on the calling thread, with scope 0 in every program */
static void
launch(uint32_t site, int gx)
{
    PnLaunch l;
    int32_t g[3] = { gx, 1, 1 };
    PnThread *t;
    pn_launch_begin(&l, site, g, 1);
    t = pn_worker_begin(&l, 0);
    for (int p = 0; p < gx; p++) {
        int32_t pid[3] = { p, 0, 0 };
        if (pn_launch_wants_programs(&l))
            pn_program_begin(t, pid);
        t->record(t, 0, PN_REC_START);
        t->record(t, 0, PN_REC_END);
        if (pn_launch_wants_programs(&l))
            pn_program_end(t);
    }
    pn_worker_end(&l, t);
    pn_launch_end(&l);
}

static int
count_cat(const cJSON *j, const char *cat)
{
    const cJSON *e;
    int n = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents"))
    {
        const cJSON *c = cJSON_GetObjectItem(e, "cat");
        if (c && strcmp(c->valuestring, cat) == 0)
            n++;
    }
    return n;
}

/* ---- 8 threads ------------------------------------------------------------------------ */

#define NTHREADS 8
#define LAUNCHES 300

static uint32_t conc_site;

static void *
recorder(void *arg)
{
    char name[32];
    uint64_t s;
    snprintf(name, sizeof name, "thread%ld", (long)(intptr_t)arg);
    s = pn_scope_enter(name);
    for (int i = 0; i < LAUNCHES; i++)
        launch(conc_site, 3);
    pn_scope_exit(s);
    return NULL;
}

static void
test_eight_threads(void **state)
{
    static const char *sc[] = { "body" };
    pthread_t th[NTHREADS];
    int tree, trace;
    PtBuf b = { 0 };
    cJSON *t, *j, *r;
    (void)state;
    conc_site = pt_kernel("conc", 1, sc);
    pn_capture_enable(1);
    tree = pn_session_start(pt_path("conc_tree"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
    trace = pn_session_start(pt_path("conc_trace"), PN_CONTEXT_SHADOW, PN_DATA_TRACE);
    for (long i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, recorder, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    t = pt_tree(tree);
    for (int i = 0; i < NTHREADS; i++) {
        char path[64];
        snprintf(path, sizeof path, "thread%d/conc", i);
        assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), path), "count"), LAUNCHES);
        assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), path), "programs"), 3 * LAUNCHES);
        snprintf(path, sizeof path, "thread%d/conc/body", i);
        assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), path), "scope_count"), 3 * LAUNCHES);
    }
    cJSON_Delete(t);
    assert_int_equal(pn_session_finalize(trace, ""), 0);
    j = pt_parse_file(pt_path("conc_trace.chrome_trace"));
    assert_non_null(j);
    assert_int_equal(count_cat(j, "kernel"), NTHREADS * LAUNCHES);
    assert_int_equal(count_cat(j, "program"), NTHREADS * LAUNCHES * 3);
    assert_int_equal(count_cat(j, "scope"), NTHREADS * LAUNCHES * 3);
    assert_int_equal(count_cat(j, "host_scope"), NTHREADS);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "otherData"), "dropped_events")->valueint, 0);
    cJSON_Delete(j);
    assert_int_equal(pn_capture_results_json(pt_buf_write, &b), 0);
    j = cJSON_Parse(b.s);
    r = cJSON_GetObjectItem(j, "conc[3,1,1]");
    assert_int_equal(cJSON_GetObjectItem(r, "count")->valueint, NTHREADS * LAUNCHES);
    cJSON_Delete(j);
    free(b.s);
    pn_session_finalize(tree, "");
    pn_capture_enable(0);
}

/* ---- traces written while other threads have scopes open -------------------------------- */

static pthread_mutex_t op_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t op_cv = PTHREAD_COND_INITIALIZER;
static int op_state;               /* 1: "bg" is open, 2: it may close */
static int op_stop;
static int op_left;                /* churn iterations left before the next dump */
static uint32_t op_site;

static void
op_set(int st)
{
    pthread_mutex_lock(&op_mu);
    op_state = st;
    pthread_cond_broadcast(&op_cv);
    pthread_mutex_unlock(&op_mu);
}

static void
op_wait(int st)
{
    pthread_mutex_lock(&op_mu);
    while (op_state != st)
        pthread_cond_wait(&op_cv, &op_mu);
    pthread_mutex_unlock(&op_mu);
}

/* one scope, one launch in it, open until the main thread is done writing */
static void *
open_scope_thread(void *arg)
{
    uint64_t s = pn_scope_enter("bg");
    (void)arg;
    launch(op_site, 1);
    op_set(1);
    op_wait(2);
    pn_scope_exit(s);
    return NULL;
}

/* scopes opening and closing as fast as possible, a launch in each, as many as the
 * main thread allows per dump (so the files stay small) */
static void *
churn_thread(void *arg)
{
    (void)arg;
    while (!PN_LD(&op_stop)) {
        uint64_t a, b;
        if (__atomic_sub_fetch(&op_left, 1, __ATOMIC_RELAXED) < 0) {
            sched_yield();
            continue;
        }
        a = pn_scope_enter("loop");
        b = pn_scope_enter("body");
        launch(op_site, 1);
        pn_scope_exit(b);
        pn_scope_exit(a);
    }
    return NULL;
}

/* checks one trace written during the churn: every kernel has its whole call_stack,
 * no scope appears twice; returns the number of open "bg" scopes */
static int
check_open_trace(const char *path)
{
    cJSON *j = pt_parse_file(path), *e;
    uint64_t ids[4096];
    int nids = 0, bg = 0;
    assert_non_null(j);
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents"))
    {
        const cJSON *cat = cJSON_GetObjectItem(e, "cat"), *args = cJSON_GetObjectItem(e, "args");
        const cJSON *cs = cJSON_GetObjectItem(args, "call_stack");
        char b[256] = "";
        size_t l = 0;
        const cJSON *c;
        if (!cat)
            continue;
        cJSON_ArrayForEach(c, cs) l += (size_t)snprintf(b + l, sizeof b - l, "/%s", c->valuestring);
        if (strcmp(cat->valuestring, "kernel") == 0) {
            if (strcmp(b, "/ROOT/bg/open_k") != 0 && strcmp(b, "/ROOT/loop/body/open_k") != 0)
                fail_msg("kernel with call_stack %s", b);
        } else if (strcmp(cat->valuestring, "host_scope") == 0) {
            uint64_t id = (uint64_t)cJSON_GetObjectItem(args, "scope_id")->valuedouble;
            for (int i = 0; i < nids; i++)
                if (ids[i] == id)
                    fail_msg("scope %llu twice", (unsigned long long)id);
            if (nids < 4096)
                ids[nids++] = id;
            if (strcmp(b, "/ROOT/bg") == 0 && cJSON_IsTrue(cJSON_GetObjectItem(args, "open")))
                bg++;
        }
    }
    cJSON_Delete(j);
    return bg;
}

static void
test_open_scopes_other_threads(void **state)
{
    static const char *sc[] = { "body" };
    pthread_t bg, ch[2];
    (void)state;
    op_site = pt_kernel("open_k", 1, sc);
    op_state = 0;
    op_stop = 0;
    pn_capture_enable(1);
    pthread_create(&bg, NULL, open_scope_thread, NULL);
    op_wait(1);
    for (int i = 0; i < 2; i++)
        pthread_create(&ch[i], NULL, churn_thread, NULL);
    for (int i = 0; i < 30; i++) {
        PN_ST(&op_left, 100);
        assert_int_equal(pn_capture_dump(pt_path("open_threads.json")), 0);
        assert_int_equal(check_open_trace(pt_path("open_threads.json")), 1);
    }
    PN_ST(&op_stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(ch[i], NULL);
    op_set(2);
    pthread_join(bg, NULL);
    pn_capture_enable(0);
}

/* ---- drops ------------------------------------------------------------------------------ */

/* limit 100: 150 launches x 4 programs → kept 100 + 100, dropped 50 + 500, exactly;
 * the tree still counts all 150 */
static void
test_drop_exact(void **state)
{
    uint32_t k = pt_kernel("dropk", 0, NULL);
    int id;
    cJSON *j, *t;
    (void)state;
    setenv("PROTON_TRACE_LIMIT", "100", 1);
    pn_test_reset();
    id = pn_session_start(pt_path("drops"), PN_CONTEXT_SHADOW, PN_DATA_TRACE);
    for (int i = 0; i < 150; i++) {
        PnLaunch l;
        int32_t g[3] = { 4, 1, 1 };
        PnThread *th;
        pn_launch_begin(&l, k, g, 1);
        th = pn_worker_begin(&l, 0);
        for (int p = 0; p < 4; p++) {
            int32_t pid[3] = { p, 0, 0 };
            pn_program_begin(th, pid);
            pn_program_end(th);
        }
        pn_worker_end(&l, th);
        pn_launch_end(&l);
    }
    assert_int_equal(pn_session_finalize(id, ""), 0);
    j = pt_parse_file(pt_path("drops.chrome_trace"));
    assert_int_equal(count_cat(j, "kernel"), 100);
    assert_int_equal(count_cat(j, "program"), 100);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "otherData"), "dropped_events")->valueint, 550);
    cJSON_Delete(j);
    /* the budget of a finished session is given back: a new one records again, and
     * a tree session next to it stays exact */
    id = pn_session_start(pt_path("drops2"), PN_CONTEXT_SHADOW, PN_DATA_TRACE);
    {
        int tid = pn_session_start(pt_path("drops_tree"), PN_CONTEXT_SHADOW, PN_DATA_TREE);
        for (int i = 0; i < 150; i++)
            launch(k, 1);
        t = pt_tree(tid);
        assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(t, 0), "dropk"), "count"), 150);
        cJSON_Delete(t);
        pn_session_finalize(tid, "");
    }
    assert_int_equal(pn_session_finalize(id, ""), 0);
    j = pt_parse_file(pt_path("drops2.chrome_trace"));
    assert_int_equal(count_cat(j, "kernel"), 100);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "otherData"), "dropped_events")->valueint, 50 + 50);
    cJSON_Delete(j);
}

static void *
drop_worker(void *arg)
{
    uint32_t k = (uint32_t)(uintptr_t)arg;
    for (int i = 0; i < 500; i++)
        launch(k, 2);
    return NULL;
}

/* 4 threads share a limit of 1000: kept + dropped == recorded, exactly */
static void
test_drop_threads(void **state)
{
    uint32_t k = pt_kernel("dropt", 1, (const char *const[]){ "s" });
    pthread_t th[4];
    int id, kept, dropped;
    cJSON *j;
    (void)state;
    setenv("PROTON_TRACE_LIMIT", "1000", 1);
    pn_test_reset();
    pn_clock_force(PN_CLK_GETTIME);
    id = pn_session_start(pt_path("drops_mt"), PN_CONTEXT_SHADOW, PN_DATA_TRACE);
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, drop_worker, (void *)(uintptr_t)k);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(pn_session_finalize(id, ""), 0);
    j = pt_parse_file(pt_path("drops_mt.chrome_trace"));
    kept = count_cat(j, "kernel") + count_cat(j, "program") + count_cat(j, "scope");
    dropped = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "otherData"), "dropped_events")->valueint;
    assert_int_equal(kept + dropped, 4 * 500 * (1 + 2 + 2));
    assert_true(count_cat(j, "kernel") <= 1000);
    assert_true(count_cat(j, "program") + count_cat(j, "scope") <= 1000);
    cJSON_Delete(j);
    unsetenv("PROTON_TRACE_LIMIT");
}


/* thread i records 40 * (i + 1) one-program launches, then waits until every thread is
 * done (so no thread exits and gives its budget back early) */
static pthread_barrier_t share_done;

static void *
share_worker(void *arg)
{
    uintptr_t a = (uintptr_t)arg;
    uint32_t k = (uint32_t)(a & 0xffffffffu);
    int n = 40 * (int)(a >> 32);
    for (int i = 0; i < n; i++)
        launch(k, 1);
    pthread_barrier_wait(&share_done);
    return NULL;
}

/* 8 threads, limit 1000, 1440 launches: the budget is one pool, so exactly 1000
 * launches and 1000 programs are kept (budget a thread took but did not use goes to
 * the threads that need it) */
static void
test_drop_budget_shared(void **state)
{
    uint32_t k = pt_kernel("share", 0, NULL);
    pthread_t th[8];
    int id;
    cJSON *j;
    (void)state;
    setenv("PROTON_TRACE_LIMIT", "1000", 1);
    pn_test_reset();
    pn_clock_force(PN_CLK_GETTIME);
    pthread_barrier_init(&share_done, NULL, 8);
    id = pn_session_start(pt_path("drops_share"), PN_CONTEXT_SHADOW, PN_DATA_TRACE);
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, share_worker, (void *)(((uintptr_t)(i + 1) << 32) | k));
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&share_done);
    assert_int_equal(pn_session_finalize(id, ""), 0);
    j = pt_parse_file(pt_path("drops_share.chrome_trace"));
    assert_int_equal(count_cat(j, "kernel"), 1000);
    assert_int_equal(count_cat(j, "program"), 1000);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "otherData"), "dropped_events")->valueint,
                     2 * (1440 - 1000));
    cJSON_Delete(j);
    unsetenv("PROTON_TRACE_LIMIT");
}


static void *
prepare_worker(void *arg)
{
    int *ok = arg;
    pn_thread_prepare();
    ok[0] = pn_tls_cur && pn_tls_cur->grp.state != 0 && pn_tls_cur->buf.spare != NULL;
    return NULL;
}

/* pn_thread_prepare: a worker's state, counter group and first timeline chunk exist
 * before its first launch; a session start asks for it again (pn_prepare_epoch) */
static void
test_thread_prepare(void **state)
{
    uint32_t e0 = pn_prepare_epoch;
    int ok[1] = { 0 };
    pthread_t th;
    int id;
    (void)state;
    id = pn_session_start(pt_path("prep"), PN_CONTEXT_SHADOW, PN_DATA_TRACE);
    assert_true(pn_prepare_epoch != e0);
    pthread_create(&th, NULL, prepare_worker, ok);
    pthread_join(th, NULL);
    assert_true(ok[0]);
    assert_int_equal(pn_session_finalize(id, ""), 0);
}

/* ---- exit paths, in fresh processes ---------------------------------------------------- */

static char self_exe[1024];

/* runs this binary as 'role' with extra environment; returns its wait status and,
 * when 'err' is given, its stderr */
static int
run_child(const char *role, const char *const *env, char **err, int kill_after_ready)
{
    int ready[2], errp[2], status = 0;
    pid_t pid;
    char fdnum[16];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(errp), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        close(errp[0]);
        dup2(errp[1], 2);
        snprintf(fdnum, sizeof fdnum, "%d", ready[1]);
        setenv("PN_TEST_READY_FD", fdnum, 1);
        unsetenv("PROTON_EVENTS");
        for (int i = 0; env && env[i]; i += 2)
            setenv(env[i], env[i + 1], 1);
        execl(self_exe, self_exe, role, (char *)NULL);
        _exit(127);
    }
    close(ready[1]);
    close(errp[1]);
    if (kill_after_ready) {
        char c;
        assert_int_equal(read(ready[0], &c, 1), 1);
        kill(pid, kill_after_ready);
    }
    {
        PtBuf b = { 0 };
        char buf[4096];
        ssize_t n;
        pt_buf_write("", 0, &b);
        while ((n = read(errp[0], buf, sizeof buf)) > 0)
            pt_buf_write(buf, (size_t)n, &b);
        if (err)
            *err = b.s;
        else
            free(b.s);
    }
    waitpid(pid, &status, 0);
    close(ready[0]);
    close(errp[0]);
    return status;
}

static void
test_sigterm_writes(void **state)
{
    const char *env[] = { "PROTON_KERNEL_CAPTURE", "1", "PROTON_OUTPUT", pt_path("sigterm.json"), NULL };
    int st;
    cJSON *j;
    (void)state;
    unlink(pt_path("sigterm.json"));
    st = run_child("child-sigterm", env, NULL, SIGTERM);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGTERM);
    j = pt_parse_file(pt_path("sigterm.json"));
    assert_non_null(j);
    assert_int_equal(count_cat(j, "kernel"), 10);
    assert_int_equal(count_cat(j, "host_scope"), 1);
    {
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents"))
        {
            const cJSON *cat = cJSON_GetObjectItem(e, "cat"), *args = cJSON_GetObjectItem(e, "args");
            if (cat && strcmp(cat->valuestring, "host_scope") == 0)
                assert_true(cJSON_IsTrue(cJSON_GetObjectItem(args, "open")));
            if (cat && strcmp(cat->valuestring, "kernel") == 0)
                assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(args, "call_stack"), 1)->valuestring,
                                    "sig_scope");
        }
    }
    cJSON_Delete(j);
}

static void
test_exit_writes(void **state)
{
    const char *env[] = { "PROTON_KERNEL_CAPTURE", "1", "PROTON_OUTPUT", pt_path("atexit.hatchet"), NULL };
    char *err = NULL;
    int st;
    cJSON *j;
    (void)state;
    unlink(pt_path("atexit.hatchet"));
    st = run_child("child-exit", env, &err, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_non_null(strstr(err, "proton: wrote"));
    j = pt_parse_file(pt_path("atexit.hatchet"));
    assert_int_equal(pt_im(pt_find(cJSON_GetArrayItem(j, 0), "exit_k"), "count"), 3);
    cJSON_Delete(j);
    free(err);
    /* no PROTON_OUTPUT: the console table on stderr */
    {
        const char *env2[] = { "PROTON_KERNEL_CAPTURE", "1", NULL };
        st = run_child("child-exit", env2, &err, 0);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        assert_non_null(strstr(err, "== Proton: 1 kernel, 3 launches"));
        assert_non_null(strstr(err, "exit_k[2,1,1]"));
        free(err);
    }
}

/* SIGINT and SIGTERM while the exit-time write is in progress (held open by
 * PROTON_TEST_WRITE_STALL_MS, sent once the temporary file exists): the write
 * finishes, no temporary file is left, and the process still dies by the signal */
static void
test_signal_during_exit_write(void **state)
{
    static const int sigs[] = { SIGINT, SIGTERM };
    (void)state;
    for (int k = 0; k < 2; k++) {
        const char *out = pt_path(k ? "stall_term.json" : "stall_int.json");
        const char *env[] = { "PROTON_KERNEL_CAPTURE", "1", "PROTON_OUTPUT", out,
                              "PROTON_TEST_WRITE_STALL_MS", "2500", NULL };
        char tmp[800];
        pid_t pid;
        int st, seen = 0;
        cJSON *j;
        unlink(out);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            for (int i = 0; env[i]; i += 2)
                setenv(env[i], env[i + 1], 1);
            unsetenv("PROTON_EVENTS");
            execl(self_exe, self_exe, "child-exit", (char *)NULL);
            _exit(127);
        }
        snprintf(tmp, sizeof tmp, "%s.tmp.%d.1", out, (int)pid);
        for (int i = 0; i < 3000 && !seen; i++) {
            struct timespec t = { 0, 5000000 };
            seen = access(tmp, F_OK) == 0;
            if (!seen)
                nanosleep(&t, NULL);
        }
        assert_true(seen);
        kill(pid, sigs[k]);
        waitpid(pid, &st, 0);
        assert_true(WIFSIGNALED(st));
        assert_int_equal(WTERMSIG(st), sigs[k]);
        assert_int_equal(access(tmp, F_OK), -1);
        j = pt_parse_file(out);
        assert_non_null(j);
        assert_int_equal(count_cat(j, "kernel"), 3);
        cJSON_Delete(j);
    }
}

static void
test_sigint_left_alone(void **state)
{
    const char *env[] = { "PROTON_KERNEL_CAPTURE", "1", "PROTON_OUTPUT", pt_path("sigint.json"), NULL };
    int st;
    (void)state;
    st = run_child("child-sigint", env, NULL, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void
test_quiet_when_off(void **state)
{
    const char *env[] = { "PROTON_OUTPUT", pt_path("quiet.json"), NULL };
    char *err = NULL;
    int st;
    (void)state;
    unlink(pt_path("quiet.json"));
    st = run_child("child-quiet", env, &err, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_string_equal(err, "");
    assert_int_equal(access(pt_path("quiet.json"), F_OK), -1);
    free(err);
}

/* a forked child starts with an empty capture store and counts only its own launches */
static void
test_fork_child_capture(void **state)
{
    uint32_t k = pt_kernel("forked", 0, NULL);
    PtBuf b = { 0 };
    pid_t pid;
    int st;
    cJSON *j;
    (void)state;
    pn_capture_enable(1);
    launch(k, 1);
    launch(k, 1);
    pid = fork();
    if (pid == 0) {
        PtBuf c = { 0 };
        cJSON *cj;
        int n;
        launch(k, 1);
        pn_capture_results_json(pt_buf_write, &c);
        cj = cJSON_Parse(c.s);
        n = cJSON_GetObjectItem(cJSON_GetObjectItem(cj, "forked[1,1,1]"), "count")->valueint;
        _exit(n == 1 ? 0 : 10 + n);
    }
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    pn_capture_results_json(pt_buf_write, &b);
    j = cJSON_Parse(b.s);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "forked[1,1,1]"), "count")->valueint, 2);
    cJSON_Delete(j);
    free(b.s);
    pn_capture_enable(0);
}

/* ---- child roles --------------------------------------------------------------------- */

static void
child_ready(void)
{
    const char *fd = getenv("PN_TEST_READY_FD");
    if (fd && write(atoi(fd), "r", 1) != 1)
        _exit(3);
}

static int
child_main(const char *role)
{
    uint32_t k;
    pn_init();
    if (strcmp(role, "child-sigint") == 0) {
        /* a handler installed before Proton arms (as Python's is) stays */
        struct sigaction sa, now;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_IGN;
        sigaction(SIGINT, &sa, NULL);
        pn_capture_enable(1);
        sigaction(SIGINT, NULL, &now);
        if (now.sa_handler != SIG_IGN)
            return 1;
        sigaction(SIGTERM, NULL, &now);
        if (now.sa_handler == SIG_DFL) /* default SIGTERM is taken over */
            return 2;
        pn_capture_enable(0);
        return 0;
    }
    k = pt_kernel(strcmp(role, "child-exit") == 0 ? "exit_k" : "sig_k", 0, NULL);
    if (strcmp(role, "child-sigterm") == 0) {
        pn_scope_enter("sig_scope"); /* still open when SIGTERM writes the trace */
        for (int i = 0; i < 10; i++)
            launch(k, 2);
        child_ready();
        for (;;)
            pause();
    }
    if (strcmp(role, "child-exit") == 0) {
        for (int i = 0; i < 3; i++)
            launch(k, 2);
        return 0;
    }
    if (strcmp(role, "child-quiet") == 0) {
        for (int i = 0; i < 3; i++)
            launch(k, 2);
        return pn_active() ? 1 : 0;
    }
    return 100;
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_eight_threads, setup),
        cmocka_unit_test_setup(test_open_scopes_other_threads, setup),
        cmocka_unit_test_setup(test_drop_exact, setup),
        cmocka_unit_test_setup(test_drop_threads, setup),
        cmocka_unit_test_setup(test_drop_budget_shared, setup),
        cmocka_unit_test_setup(test_thread_prepare, setup),
        cmocka_unit_test_setup(test_sigterm_writes, setup),
        cmocka_unit_test_setup(test_exit_writes, setup),
        cmocka_unit_test_setup(test_signal_during_exit_write, setup),
        cmocka_unit_test_setup(test_sigint_left_alone, setup),
        cmocka_unit_test_setup(test_quiet_when_off, setup),
        cmocka_unit_test_setup(test_fork_child_capture, setup),
    };
    ssize_t n;
    if (argc > 1 && strncmp(argv[1], "child-", 6) == 0)
        return child_main(argv[1]);
    n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    self_exe[n > 0 ? n : 0] = '\0';
    pt_tmpdir(); /* children inherit PN_TEST_OUT through pt_path() names */
    return cmocka_run_group_tests_name("proton threads and exit", tests, NULL, NULL);
}
