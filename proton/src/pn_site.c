/*
 * pn_site.c — kernel sites and interned names.
 *
 * Both are process-lifetime tables that only grow: appends take a mutex, reads are
 * lock-free (chunked arrays whose chunks never move, counts published with release).
 * Names (host scope names, kernel names, in-kernel scope names, metric names) get
 * small integer ids starting at 1, so per-thread trees and records store integers
 * and the writers look the text up at the end.
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 1024
#define NCHUNKS 4096

static pthread_mutex_t names_mu = PTHREAD_MUTEX_INITIALIZER;
static char **name_chunk[NCHUNKS];
static uint32_t nnames;             /* published with release */
static uint32_t *name_hash;         /* ids, 0 = empty; guarded by names_mu */
static uint32_t name_hcap;

static PnSite **site_chunk[NCHUNKS];
static uint32_t nsites;             /* published with release */

static uint64_t
hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static const char *
name_at(uint32_t id)
{
    return name_chunk[(id - 1) / CHUNK][(id - 1) % CHUNK];
}

static int
name_hash_grow(void)
{
    uint32_t cap = name_hcap ? name_hcap * 2 : 1024;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return -1;
    for (uint32_t i = 0; i < name_hcap; i++) {
        uint32_t id = name_hash[i], j;
        if (!id)
            continue;
        for (j = (uint32_t)hash_str(name_at(id)) & (cap - 1); h[j]; j = (j + 1) & (cap - 1))
            ;
        h[j] = id;
    }
    free(name_hash);
    name_hash = h;
    name_hcap = cap;
    return 0;
}

/* Interned id of 's' (>= 1), creating it; 0 on allocation failure. Thread-safe. */
uint32_t
pn_name_intern(const char *s)
{
    uint32_t id = 0, j;
    char *copy;
    if (!s)
        s = "";
    pthread_mutex_lock(&names_mu);
    if (nnames * 2 >= name_hcap && name_hash_grow() < 0)
        goto out;
    for (j = (uint32_t)hash_str(s) & (name_hcap - 1); name_hash[j]; j = (j + 1) & (name_hcap - 1)) {
        if (strcmp(name_at(name_hash[j]), s) == 0) {
            id = name_hash[j];
            goto out;
        }
    }
    if (nnames >= (uint32_t)CHUNK * NCHUNKS)
        goto out;
    if (!name_chunk[nnames / CHUNK] && !(name_chunk[nnames / CHUNK] = calloc(CHUNK, sizeof(char *))))
        goto out;
    if (!(copy = strdup(s)))
        goto out;
    name_chunk[nnames / CHUNK][nnames % CHUNK] = copy;
    id = nnames + 1;
    name_hash[j] = id;
    PN_REL(&nnames, id);
out:
    pthread_mutex_unlock(&names_mu);
    return id;
}

/* Text of an interned name; "" for 0 or unknown ids. Borrowed, process lifetime. */
const char *
pn_name_get(uint32_t id)
{
    if (id == 0 || id > PN_ACQ(&nnames))
        return "";
    return name_at(id);
}

/* ---- sites --------------------------------------------------------------------------- */

static void
site_free(PnSite *s)
{
    if (!s)
        return;
    free((char *)s->name);
    free(s->constexprs);
    free(s->remarks);
    free(s->scope_name_ids);
    free(s);
}

static PnSite *
site_create(const PnKernelDesc *d)
{
    PnSite *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->name = strdup(d->name);
    s->constexprs = d->constexprs ? strdup(d->constexprs) : NULL;
    s->remarks = d->remarks && *d->remarks ? strdup(d->remarks) : NULL;
    s->bytes_per_program = d->bytes_per_program;
    memcpy(s->flops_per_program, d->flops_per_program, sizeof s->flops_per_program);
    s->nscopes = d->nscopes;
    s->cost_fn = d->cost_fn;
    s->cost = d->cost;
    s->name_id = pn_name_intern(d->name);
    if (d->nscopes)
        s->scope_name_ids = calloc(d->nscopes, sizeof(uint32_t));
    if (!s->name || (d->constexprs && !s->constexprs) || (d->remarks && *d->remarks && !s->remarks) ||
        !s->name_id ||
        (d->nscopes && !s->scope_name_ids))
        goto fail;
    for (uint32_t i = 0; i < d->nscopes; i++) {
        char tmp[32];
        const char *n = d->scope_names && d->scope_names[i] ? d->scope_names[i] : NULL;
        if (!n) {
            snprintf(tmp, sizeof tmp, "scope_%u", i);
            n = tmp;
        }
        if (!(s->scope_name_ids[i] = pn_name_intern(n)))
            goto fail;
    }
    return s;
fail:
    site_free(s);
    return NULL;
}

/* Registers a kernel site; returns its id (>= 1), or 0 on failure. Thread-safe. */
uint32_t
pn_kernel_register(const PnKernelDesc *d)
{
    PnSite *s;
    uint32_t id = 0;
    if (!d || !d->name || (d->nscopes && d->nscopes > 65535)) {
        pn_set_error(EINVAL, "pn_kernel_register: missing name or too many scopes");
        return 0;
    }
    if (!(s = site_create(d))) {
        pn_set_error(ENOMEM, "pn_kernel_register: out of memory");
        return 0;
    }
    pthread_mutex_lock(&names_mu);
    if (nsites < (uint32_t)CHUNK * NCHUNKS &&
        (site_chunk[nsites / CHUNK] || (site_chunk[nsites / CHUNK] = calloc(CHUNK, sizeof(PnSite *))))) {
        site_chunk[nsites / CHUNK][nsites % CHUNK] = s;
        id = nsites + 1;
        PN_REL(&nsites, id);
    }
    pthread_mutex_unlock(&names_mu);
    if (!id) {
        site_free(s);
        pn_set_error(ENOMEM, "pn_kernel_register: out of memory");
    }
    return id;
}

/* The site, or NULL for 0 / unknown ids. Lock-free; process lifetime. */
const PnSite *
pn_site_get(uint32_t site)
{
    if (site == 0 || site > PN_ACQ(&nsites))
        return NULL;
    return site_chunk[(site - 1) / CHUNK][(site - 1) % CHUNK];
}

/* Frees the tables (tests, end of process). No other thread may be recording. */
void
pn_sites_fini(void)
{
    pthread_mutex_lock(&names_mu);
    for (uint32_t i = 0; i < nsites; i++)
        site_free(site_chunk[i / CHUNK][i % CHUNK]);
    for (uint32_t i = 0; i < nnames; i++)
        free(name_chunk[i / CHUNK][i % CHUNK]);
    for (int c = 0; c < NCHUNKS; c++) {
        free(site_chunk[c]);
        free(name_chunk[c]);
        site_chunk[c] = NULL;
        name_chunk[c] = NULL;
    }
    free(name_hash);
    name_hash = NULL;
    name_hcap = 0;
    PN_REL(&nsites, 0);
    PN_REL(&nnames, 0);
    pthread_mutex_unlock(&names_mu);
}

/* ---- renamed sites (pn_launch_next) ------------------------------------------------ */

typedef struct Derived {
    uint32_t site, name_id, id;
} Derived;

static Derived *derived;
static uint32_t nderived, capderived;

uint32_t
pn_site_derive(uint32_t site, uint32_t name_id)
{
    const PnSite *s = pn_site_get(site);
    uint32_t id = site;
    if (!s || !name_id || s->name_id == name_id)
        return site;
    pthread_mutex_lock(&names_mu);
    for (uint32_t i = 0; i < nderived; i++)
        if (derived[i].site == site && derived[i].name_id == name_id) {
            id = derived[i].id;
            pthread_mutex_unlock(&names_mu);
            return id;
        }
    pthread_mutex_unlock(&names_mu);
    /* build a descriptor from the original (scope names by id) */
    const char **snames = s->nscopes ? calloc(s->nscopes, sizeof(char *)) : NULL;
    if (s->nscopes && !snames)
        return site;
    for (uint32_t i = 0; i < s->nscopes; i++)
        snames[i] = pn_name_get(s->scope_name_ids[i]);
    PnKernelDesc d = {.name = pn_name_get(name_id), .constexprs = s->constexprs, .remarks = s->remarks,
                      .bytes_per_program = 0, .nscopes = s->nscopes, .scope_names = snames};
    uint32_t nid = pn_kernel_register(&d);
    free(snames);
    if (!nid)
        return site;
    pthread_mutex_lock(&names_mu);
    if (nderived == capderived) {
        uint32_t cap = capderived ? capderived * 2 : 16;
        Derived *nd = realloc(derived, cap * sizeof *nd);
        if (!nd) {
            pthread_mutex_unlock(&names_mu);
            return nid;
        }
        derived = nd;
        capderived = cap;
    }
    derived[nderived++] = (Derived){site, name_id, nid};
    pthread_mutex_unlock(&names_mu);
    return nid;
}
