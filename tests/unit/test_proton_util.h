/*
 * test_proton_util.h — helpers shared by the Proton unit tests (test_proton*.c):
 * synthetic launches on the fake clock, reading trees and files back with cJSON,
 * and a scratch directory ($PN_TEST_OUT when set, so tests/proton/run.sh can
 * validate the files afterwards; a fresh /tmp directory otherwise).
 */
#ifndef TEST_PROTON_UTIL_H
#define TEST_PROTON_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pn_int.h"
#include "proton.h"

/* ---- scratch files ------------------------------------------------------------------- */

static char pt_dir[512];
static pid_t pt_dir_owner;

static inline int
pt_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(p);
}

/* removes the scratch directory this process created (not $PN_TEST_OUT) */
static inline void
pt_rm_dir(void)
{
    if (pt_dir_owner == getpid())
        nftw(pt_dir, pt_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline const char *
pt_tmpdir(void)
{
    const char *keep = getenv("PN_TEST_OUT");
    if (pt_dir[0])
        return pt_dir;
    if (keep && *keep) {
        mkdir(keep, 0755);
        snprintf(pt_dir, sizeof pt_dir, "%s", keep);
    } else {
        snprintf(pt_dir, sizeof pt_dir, "/tmp/pn_test_XXXXXX");
        if (!mkdtemp(pt_dir))
            abort();
        pt_dir_owner = getpid();
        atexit(pt_rm_dir);
    }
    return pt_dir;
}

static inline char *
pt_path(const char *name)
{
    static char buf[8][700];
    static int i;
    char *b = buf[i++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", pt_tmpdir(), name);
    return b;
}

static inline char *
pt_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    char *s;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    s = malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    s[n] = '\0';
    fclose(f);
    return s;
}

static inline cJSON *
pt_parse_file(const char *path)
{
    char *s = pt_read(path);
    cJSON *j = s ? cJSON_Parse(s) : NULL;
    free(s);
    return j;
}

/* ---- strings through the writer callbacks --------------------------------------------- */

typedef struct PtBuf {
    char *s;
    size_t n, cap;
} PtBuf;

static inline void
pt_buf_write(const char *s, size_t n, void *user)
{
    PtBuf *b = user;
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

/* the session's hatchet JSON (pn_session_tree_json), parsed; caller deletes */
static inline cJSON *
pt_tree(int id)
{
    PtBuf b = { 0 };
    cJSON *j;
    if (pn_session_tree_json(id, pt_buf_write, &b) != 0)
        return NULL;
    j = cJSON_Parse(b.s);
    free(b.s);
    return j;
}

/* node at "a/b/c" below 'node' by frame names ("" = node itself) */
static inline cJSON *
pt_find(cJSON *node, const char *path)
{
    char buf[512], *save = NULL;
    snprintf(buf, sizeof buf, "%s", path);
    for (char *tok = strtok_r(buf, "/", &save); tok && node; tok = strtok_r(NULL, "/", &save)) {
        cJSON *c, *found = NULL;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(node, "children"))
        {
            cJSON *fr = cJSON_GetObjectItem(c, "frame");
            if (strcmp(cJSON_GetObjectItem(fr, "name")->valuestring, tok) == 0)
                found = c;
        }
        node = found;
    }
    return node;
}

static inline double
pt_metric(cJSON *node, const char *name)
{
    cJSON *m = node ? cJSON_GetObjectItem(cJSON_GetObjectItem(node, "metrics"), name) : NULL;
    return m && cJSON_IsNumber(m) ? m->valuedouble : -1;
}

/* integral metric value (assert_int_equal needs an integer; -1 = absent) */
static inline long long
pt_im(cJSON *node, const char *name)
{
    return (long long)pt_metric(node, name);
}

static inline int
pt_nchildren(cJSON *node)
{
    return node ? cJSON_GetArraySize(cJSON_GetObjectItem(node, "children")) : -1;
}

/* ---- synthetic kernels on the fake clock ---------------------------------------------- */

static inline uint32_t
pt_kernel(const char *name, uint32_t nscopes, const char *const *scopes)
{
    PnKernelDesc d = { 0 };
    d.name = name;
    d.nscopes = nscopes;
    d.scope_names = scopes;
    return pn_kernel_register(&d);
}

static inline void
pt_tick(uint64_t ns)
{
    pn_fake_ticks += ns;
}

/* one launch of 'gx' programs on the calling thread lasting exactly 'dur' ns; each
 * program runs scope 0 for 'scope_ns' when the kernel has scopes */
static inline void
pt_launch(uint32_t site, int gx, uint64_t dur, uint64_t scope_ns)
{
    PnLaunch l;
    int32_t g[3] = { gx, 1, 1 };
    const PnSite *s = pn_site_get(site);
    uint64_t t0;
    PnThread *t;
    pt_tick(10);
    pn_launch_begin(&l, site, g, 1);
    t0 = pn_fake_ticks;
    t = pn_worker_begin(&l, 0);
    for (int p = 0; p < gx; p++) {
        int32_t pid[3] = { p, 0, 0 };
        if (pn_launch_wants_programs(&l))
            pn_program_begin(t, pid);
        pt_tick(1);
        if (s && s->nscopes) {
            t->record(t, 0, PN_REC_START);
            pt_tick(scope_ns);
            t->record(t, 0, PN_REC_END);
        }
        pt_tick(1);
        if (pn_launch_wants_programs(&l))
            pn_program_end(t);
    }
    pn_worker_end(&l, t);
    pn_fake_ticks = t0 + dur;
    pn_launch_end(&l);
    pt_tick(10);
}

/* the usual fixture: fake clock, nothing recording, environment re-read */
static inline void
pt_reset(void)
{
    pn_test_reset();
    pn_clock_force(PN_CLK_FAKE);
    pn_fake_ticks += 1000000;
}

#endif /* TEST_PROTON_UTIL_H */
