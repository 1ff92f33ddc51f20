/*
 * pn_output.c — output paths and atomic files.
 *
 * Paths expand %p (process id), %r (rank, 0 when no rank variable is set) and %%.
 * When a rank variable (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK) is set and the path has
 * no %r, ".rank<N>" is inserted before the suffix, so processes of one parallel job
 * never write the same file. A process never writes its parent's file either: a child
 * forked from a process that records gets ".<pid>" before the suffix of every output
 * (pn_fork_child), and so does a process started by one (spawn, forkserver,
 * subprocess) whose capture output would be the one its ancestor writes (named in
 * PROTON_OUTPUT_TAKEN, which the owner of a capture output sets for its descendants);
 * not when the name already has %p. Such a process says so once. Files are written to
 * "<path>.tmp.<pid>.<n>" in the same directory and renamed over the final name only
 * when complete; temporary files of that name whose process is gone (killed mid-write)
 * are removed when the path is written next. "" and "-" mean stdout.
 */
#include "pn_int.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int pn_fork_child;
static char *taken;                /* the ancestor's capture output (absolute), or NULL */
static int owner;                  /* this process set PROTON_OUTPUT_TAKEN itself */

/* 'path' made absolute (relative to the working directory); caller frees, NULL on OOM */
static char *
absolute(const char *path)
{
    char cwd[4096];
    size_t n;
    char *a;
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        return strdup(path);
    n = strlen(cwd) + strlen(path) + 2;
    if ((a = malloc(n)))
        snprintf(a, n, "%s/%s", cwd, path);
    return a;
}

/* At pn_init with capture on: PROTON_OUTPUT_TAKEN names the file an ancestor writes;
 * when it is not set, this process owns its capture output and names it there for
 * its descendants (unless the name has %p: then every process has its own). */
void
pn_output_claim(void)
{
    const char *v;
    char *mine;
    if (owner) /* set by this process before (tests re-read the environment) */
        unsetenv("PROTON_OUTPUT_TAKEN");
    v = getenv("PROTON_OUTPUT_TAKEN");
    free(taken);
    taken = NULL;
    owner = 0;
    if (v && *v) {
        taken = strdup(v);
        return;
    }
    if (!pn_cfg.output || strstr(pn_cfg.output, "%p") || !(mine = pn_path_expand(pn_cfg.output)))
        return;
    char *a = absolute(mine);
    if (a && *pn_cfg.output && strcmp(pn_cfg.output, "-") != 0) {
        setenv("PROTON_OUTPUT_TAKEN", a, 1);
        owner = 1;
    }
    free(a);
    free(mine);
}

const char *
pn_output_taken(void)
{
    pn_init();
    return owner ? getenv("PROTON_OUTPUT_TAKEN") : NULL;
}

/* ".<pid>" before the suffix of the expanded 'out' (capacity 'cap'), as for ranks */
static void
insert_before_suffix(char *out, size_t cap, const char *tail)
{
    size_t n = strlen(out), t = strlen(tail);
    char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
    if (n + t + 1 > cap)
        return;
    if (!dot || (slash && dot < slash) || dot == out || dot[-1] == '/')
        dot = out + n;
    memmove(dot + t, dot, strlen(dot) + 1);
    memcpy(dot, tail, t);
}

/* the one line a child says about its own output names */
static void
child_notice(const char *was, const char *now)
{
    static int said;
    if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        return;
    if (pn_fork_child)
        fprintf(stderr, "proton: pid %d was forked from pid %d, which records too: its output goes "
                "to %s, not %s (add %%p to the name to choose)\n", (int)getpid(), (int)getppid(), now, was);
    else
        fprintf(stderr, "proton: pid %d was started by a process that writes %s: its output goes "
                "to %s (add %%p to PROTON_OUTPUT to choose)\n", (int)getpid(), was, now);
}

/* The rank of this process from RANK / OMPI_COMM_WORLD_RANK / PMI_RANK, or -1. */
int
pn_rank(void)
{
    static const char *vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long r;
        if (!v || !*v)
            continue;
        r = strtol(v, &end, 10);
        if (*end == '\0' && r >= 0 && r < 1000000000)
            return (int)r;
    }
    return -1;
}

/* Expanded copy of 'path'; caller frees. NULL when out of memory. */
char *
pn_path_expand(const char *path)
{
    size_t cap = strlen(path) * 6 + 96, n = 0; /* %p: 2 chars -> up to 10; .rank<N>, .<pid> */
    char *out = malloc(cap);
    int rank = pn_rank(), has_r = 0;
    if (!out)
        return NULL;
    for (const char *s = path; *s; s++) {
        char tmp[24];
        const char *ins = NULL;
        if (*s == '%' && s[1] == 'p') {
            snprintf(tmp, sizeof tmp, "%d", (int)getpid());
            ins = tmp;
        } else if (*s == '%' && s[1] == 'r') {
            snprintf(tmp, sizeof tmp, "%d", rank < 0 ? 0 : rank);
            ins = tmp;
            has_r = 1;
        } else if (*s == '%' && s[1] == '%') {
            ins = "%";
        }
        if (ins) {
            size_t l = strlen(ins);
            memcpy(out + n, ins, l);
            n += l;
            s++;
        } else {
            out[n++] = *s;
        }
    }
    out[n] = '\0';
    if (rank >= 0 && !has_r && n && strcmp(out, "-") != 0) {
        char tail[64];
        snprintf(tail, sizeof tail, ".rank%d", rank);
        insert_before_suffix(out, cap, tail);
    }
    if (n && strcmp(out, "-") != 0 && !strstr(path, "%p") && (pn_fork_child || (taken && !owner))) {
        char *a = pn_fork_child ? NULL : absolute(out), was[4096], tail[24];
        if (pn_fork_child || (a && strcmp(a, taken) == 0)) {
            snprintf(was, sizeof was, "%s", out);
            snprintf(tail, sizeof tail, ".%d", (int)getpid());
            insert_before_suffix(out, cap, tail);
            child_notice(was, out);
        }
        free(a);
    }
    return out;
}

/* Removes "<path>.tmp.<pid>.<n>" files of processes that no longer exist (a write
 * killed by SIGKILL); live processes' files, ours included, stay. */
static void
remove_stale(const char *path)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char dir[4096];
    size_t bl = strlen(base);
    DIR *d;
    struct dirent *e;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    if (!(d = opendir(dir)))
        return;
    while ((e = readdir(d))) {
        char *end, full[8192];
        long pid;
        if (strncmp(e->d_name, base, bl) != 0 || strncmp(e->d_name + bl, ".tmp.", 5) != 0)
            continue;
        pid = strtol(e->d_name + bl + 5, &end, 10);
        if (end == e->d_name + bl + 5 || *end != '.' || pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* alive, or not ours to know */
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        unlink(full);
    }
    closedir(d);
}

/* Opens 'path' (already expanded) for an atomic write. 0 or -errno. */
int
pn_out_open(PnOut *o, const char *path)
{
    static unsigned seq;
    size_t l = strlen(path) + 48;
    memset(o, 0, sizeof *o);
    if (!*path || strcmp(path, "-") == 0) {
        o->f = stdout;
        o->to_stdout = 1;
        return 0;
    }
    o->path = strdup(path);
    o->tmp = malloc(l);
    if (!o->path || !o->tmp)
        goto nomem;
    remove_stale(path);
    snprintf(o->tmp, l, "%s.tmp.%d.%u", path, (int)getpid(),
             __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
    if (!(o->f = fopen(o->tmp, "w"))) {
        int e = errno;
        pn_set_file_error(e, path);
        free(o->path);
        free(o->tmp);
        memset(o, 0, sizeof *o);
        return -e;
    }
    return 0;
nomem:
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return -ENOMEM;
}

/* Tests: PROTON_TEST_WRITE_STALL_MS holds every file write this long between writing
 * the temporary file and renaming it (the window a signal must not spoil). */
static void
test_stall(void)
{
    static long ms = -1;
    struct timespec t;
    if (ms < 0) {
        const char *v = getenv("PROTON_TEST_WRITE_STALL_MS");
        ms = v ? strtol(v, NULL, 10) : 0;
    }
    t.tv_sec = ms / 1000;
    t.tv_nsec = ms % 1000 * 1000000;
    while (ms > 0 && nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

/* Finishes the file: renamed into place when 'ok' and everything was written,
 * removed otherwise. 0 or -errno. */
int
pn_out_close(PnOut *o, int ok)
{
    int rc = 0;
    if (!o->f)
        return -EINVAL;
    if (!o->to_stdout) {
        fflush(o->f); /* the partial file is visible during the stall */
        test_stall();
    }
    if (o->to_stdout) {
        fflush(stdout);
        memset(o, 0, sizeof *o);
        return 0;
    }
    if (fflush(o->f) != 0 || ferror(o->f))
        rc = -(errno ? errno : EIO);
    if (fclose(o->f) != 0 && rc == 0)
        rc = -(errno ? errno : EIO);
    if (ok && rc == 0 && rename(o->tmp, o->path) != 0)
        rc = -errno;
    if (rc < 0)
        pn_set_file_error(-rc, o->path);
    if (!ok || rc < 0)
        unlink(o->tmp);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return rc;
}
