/*
 * pn_output.c — output paths and atomic files.
 *
 * Paths expand %p (process id), %r (rank, 0 when no rank variable is set) and %%.
 * When a rank variable (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK) is set and the path has
 * no %r, ".rank<N>" is inserted before the suffix, so processes of one parallel job
 * never write the same file. Files are written to "<path>.tmp.<pid>.<n>" in the same
 * directory and renamed over the final name only when complete; "" and "-" mean
 * stdout.
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    size_t cap = strlen(path) * 6 + 64, n = 0; /* %p: 2 chars -> up to 10 */
    char *out = malloc(cap), *dot, *slash;
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
        dot = strrchr(out, '.');
        slash = strrchr(out, '/');
        if (!dot || (slash && dot < slash) || dot == out || dot[-1] == '/')
            dot = out + n;
        snprintf(tail, sizeof tail, ".rank%d", rank);
        memmove(dot + strlen(tail), dot, strlen(dot) + 1);
        memcpy(dot, tail, strlen(tail));
    }
    return out;
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

/* Finishes the file: renamed into place when 'ok' and everything was written,
 * removed otherwise. 0 or -errno. */
int
pn_out_close(PnOut *o, int ok)
{
    int rc = 0;
    if (!o->f)
        return -EINVAL;
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
