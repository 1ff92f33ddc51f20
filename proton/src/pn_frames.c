/*
 * pn_frames.c — Python call paths for context="python" sessions.
 *
 * The Python launcher (and the scope binding) hands Proton the frames of the
 * current Python stack, outermost first, as interned frame names
 * ("<file>:<line>@<function>"). The path is interned too, in a process-lifetime
 * table like the names' (appends under a mutex, lock-free reads), so a launch
 * record carries one 32-bit path id and the Chrome writer can rebuild the
 * call_stack. A thread compares the new path with its previous one first, so
 * repeated launches from one call site take no lock. The path stays pending on the
 * thread until the next pn_launch_begin (which gives it to the launch) or
 * pn_scope_enter (which keeps it on the host frame, for the scope's metrics). In a
 * python-context session's tree the path becomes a chain of host nodes below ROOT
 * (pn_tslot_path, with a one-entry cache per tree).
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 1024
#define NCHUNKS 4096

typedef struct PnPath {
    uint32_t n;
    uint32_t f[];                  /* frame name ids, outermost first */
} PnPath;

static pthread_mutex_t paths_mu = PTHREAD_MUTEX_INITIALIZER;
static PnPath **path_chunk[NCHUNKS];
static uint32_t npaths;             /* published with release */
static uint32_t *path_hash;         /* ids, 0 = empty; guarded by paths_mu */
static uint32_t path_hcap;

static uint64_t
hash_ids(const uint32_t *f, uint32_t n)
{
    uint64_t h = 1469598103934665603ull ^ n;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ f[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static const PnPath *
path_at(uint32_t id)
{
    return path_chunk[(id - 1) / CHUNK][(id - 1) % CHUNK];
}

static int
path_eq(const PnPath *p, const uint32_t *f, uint32_t n)
{
    return p->n == n && memcmp(p->f, f, n * sizeof *f) == 0;
}

static int
path_hash_grow(void)
{
    uint32_t cap = path_hcap ? path_hcap * 2 : 256;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return -1;
    for (uint32_t i = 0; i < path_hcap; i++) {
        uint32_t id = path_hash[i], j;
        const PnPath *p;
        if (!id)
            continue;
        p = path_at(id);
        for (j = (uint32_t)hash_ids(p->f, p->n) & (cap - 1); h[j]; j = (j + 1) & (cap - 1))
            ;
        h[j] = id;
    }
    free(path_hash);
    path_hash = h;
    path_hcap = cap;
    return 0;
}

/* appends a copy of the path at hash slot j; the new id or 0. Holds paths_mu. */
static uint32_t
path_add(uint32_t j, const uint32_t *f, uint32_t n)
{
    PnPath *p;
    if (npaths >= (uint32_t)CHUNK * NCHUNKS)
        return 0;
    if (!path_chunk[npaths / CHUNK] && !(path_chunk[npaths / CHUNK] = calloc(CHUNK, sizeof(PnPath *))))
        return 0;
    if (!(p = malloc(sizeof *p + n * sizeof *f)))
        return 0;
    p->n = n;
    memcpy(p->f, f, n * sizeof *f);
    path_chunk[npaths / CHUNK][npaths % CHUNK] = p;
    path_hash[j] = npaths + 1;
    PN_REL(&npaths, npaths + 1);
    return npaths;
}

/* Interned id (>= 1) of the path f[0..n), n >= 1; 0 on allocation failure. */
static uint32_t
path_intern(const uint32_t *f, uint32_t n)
{
    uint32_t id = 0, j;
    pthread_mutex_lock(&paths_mu);
    if ((npaths + 1) * 2 > path_hcap && path_hash_grow() < 0)
        goto out;
    for (j = (uint32_t)hash_ids(f, n) & (path_hcap - 1); path_hash[j]; j = (j + 1) & (path_hcap - 1))
        if (path_eq(path_at(path_hash[j]), f, n)) {
            id = path_hash[j];
            goto out;
        }
    id = path_add(j, f, n);
out:
    pthread_mutex_unlock(&paths_mu);
    return id;
}

/* The frames of path 'id', outermost first, and their number in *n; NULL (and
 * *n = 0) for 0 or unknown ids. Lock-free; process lifetime. */
const uint32_t *
pn_path_get(uint32_t id, uint32_t *n)
{
    const PnPath *p;
    if (id == 0 || id > PN_ACQ(&npaths)) {
        *n = 0;
        return NULL;
    }
    p = path_at(id);
    *n = p->n;
    return p->f;
}

/* ---- api ------------------------------------------------------------------------------- */

uint32_t
pn_frame_intern(const char *name)
{
    return pn_name_intern(name);
}

int
pn_python_frames(const uint32_t *frames, int n)
{
    const uint32_t *last;
    uint32_t id, nlast;
    PnTls *t;
    if (n < 0 || (n && !frames)) {
        pn_set_error(EINVAL, "pn_python_frames: bad frame array");
        return -EINVAL;
    }
    if (n == 0) {
        if ((t = pn_tls_cur))
            t->pypend = 0;
        return 0;
    }
    if (n > PN_MAX_FRAMES) { /* the innermost frames: the call site stays exact */
        frames += n - PN_MAX_FRAMES;
        n = PN_MAX_FRAMES;
    }
    if (!(t = pn_tls()))
        return -ENOMEM;
    last = pn_path_get(t->pylast, &nlast);
    if (last && nlast == (uint32_t)n && memcmp(last, frames, (size_t)n * sizeof *frames) == 0)
        id = t->pylast;
    else if (!(id = path_intern(frames, (uint32_t)n)))
        return -ENOMEM;
    t->pylast = id;
    t->pypend = id;
    return 0;
}

/* ---- trees ------------------------------------------------------------------------------ */

/* The node of path 'path' in tree 's' (ROOT for 0), created when absent (owner only);
 * -1 when the tree is full or memory runs out. */
int32_t
pn_tslot_path(PnTSlot *s, uint32_t path)
{
    const uint32_t *f;
    uint32_t n;
    int32_t node = 0;
    if (!path)
        return 0;
    if (s->py_path == path)
        return s->py_node;
    f = pn_path_get(path, &n);
    for (uint32_t i = 0; i < n && node >= 0; i++)
        node = pn_tslot_child(s, node, PN_NODE_HOST, f[i], NULL);
    if (node >= 0) {
        s->py_path = path;
        s->py_node = node;
    }
    return node;
}
