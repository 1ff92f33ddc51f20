/*
 * pn_hatchet.c — the .hatchet writer (docs/formats.md §1).
 *
 * [root, device info], every node {"children", "frame": {"name", "type"},
 * "metrics"} with keys sorted, exclusive values, the root carrying zero hints for
 * the summable metrics that occur anywhere (count, time (ns), counters, bytes,
 * flops*), so upstream proton-viewer and hatchet's GraphFrame.from_literal compute
 * inclusive columns for them. Vector user metrics are JSON arrays (no root hints:
 * they are not summable columns). Printed in nlohmann's dump(4) layout between a
 * leading and a trailing newline, like upstream Proton. The file is written node by
 * node (only one node's frame and metrics exist as cJSON at a time); the whole
 * document as cJSON is built only for MessagePack (pn_hatchet_build).
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *flops_names[5] = { "flops", "flops8", "flops16", "flops32", "flops64" };

typedef struct Hints {
    int time;                      /* count and time (ns) */
    int ctr[PN_MAX_COUNTERS];
    int bytes;
    int flops[5];
} Hints;

typedef struct Ent {
    const char *k;
    cJSON *v;
} Ent;

typedef struct Ents {
    Ent *e;
    int n, cap;
} Ents;

static void
ent_add(Ents *m, const char *k, cJSON *v)
{
    if (!v)
        return;
    for (int i = 0; i < m->n; i++) {
        if (strcmp(m->e[i].k, k) == 0) { /* first value wins (user metrics over hints) */
            cJSON_Delete(v);
            return;
        }
    }
    if (m->n == m->cap) {
        int cap = m->cap ? m->cap * 2 : 16;
        Ent *e = realloc(m->e, (size_t)cap * sizeof *e);
        if (!e) {
            cJSON_Delete(v);
            return;
        }
        m->e = e;
        m->cap = cap;
    }
    m->e[m->n].k = k;
    m->e[m->n].v = v;
    m->n++;
}

static int
ent_cmp(const void *a, const void *b)
{
    return strcmp(((const Ent *)a)->k, ((const Ent *)b)->k);
}

static cJSON *
ents_object(Ents *m)
{
    cJSON *o = cJSON_CreateObject();
    if (m->n)
        qsort(m->e, (size_t)m->n, sizeof *m->e, ent_cmp);
    for (int i = 0; i < m->n; i++)
        cJSON_AddItemToObject(o, m->e[i].k, m->e[i].v);
    free(m->e);
    return o;
}

static int
flops_index(const char *name)
{
    for (int k = 0; k < 5; k++)
        if (strcmp(name, flops_names[k]) == 0)
            return k;
    return -1;
}

static void
collect_hints(const PnTree *tr, Hints *h)
{
    memset(h, 0, sizeof *h);
    for (uint32_t i = 0; i < tr->n; i++) {
        const PnTNode *x = &tr->nodes[i];
        if (x->kind == PN_NODE_KERNEL && x->count)
            h->time = 1;
        for (uint32_t c = 0; x->kind == PN_NODE_KERNEL && c < x->ctr_n && c < PN_MAX_COUNTERS; c++)
            h->ctr[c] = 1;
        h->bytes |= x->has_bytes;
        for (int k = 0; k < 3; k++)
            h->flops[k + 2] |= x->has_flops[k];
        for (const PnUMetric *u = x->um; u; u = u->next) {
            const char *n = pn_name_get(u->name);
            if ((u->flags & PN_MF_EXC) || (u->kind & PN_MK_VEC))
                continue;
            if (strcmp(n, "bytes") == 0)
                h->bytes = 1;
            else if (flops_index(n) >= 0)
                h->flops[flops_index(n)] = 1;
        }
    }
}

static cJSON *
vec_json(const PnUMetric *u)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t k = 0; a && k < u->len; k++)
        cJSON_AddItemToArray(a, u->kind == PN_MK_INT_VEC ? pn_json_int(u->vec[k].i)
                                                          : pn_json_double(u->vec[k].d));
    return a;
}

static void
user_metrics(Ents *m, const PnTNode *x)
{
    for (const PnUMetric *u = x->um; u; u = u->next)
        ent_add(m, pn_name_get(u->name),
                u->kind & PN_MK_VEC    ? vec_json(u)
                : u->kind == PN_METRIC_INT ? pn_json_int(u->v.i)
                                           : pn_json_double(u->v.d));
}

/* the name of counter 'c' on kernel nodes, or (scope) on in-kernel scope nodes */
static const char *
counter_name(int c, int scope)
{
    static char names[PN_MAX_COUNTERS][80];
    if (!scope)
        return pn_ctrs.ev[c].name;
    snprintf(names[c], sizeof names[c], "scope_%s", pn_ctrs.ev[c].name);
    return names[c];
}

static void
counter_metrics(Ents *m, const PnTNode *x, int scope)
{
    for (uint32_t c = 0; c < x->ctr_n && c < (uint32_t)pn_ctrs.n; c++)
        ent_add(m, counter_name((int)c, scope), pn_json_uint(x->ctr[c]));
}

static cJSON *
metrics_json(const PnTNode *x, const Hints *h)
{
    static const char *fl[3] = { "flops16", "flops32", "flops64" };
    static const char *sfl[3] = { "scope_flops16", "scope_flops32", "scope_flops64" };
    Ents m = { 0 };
    user_metrics(&m, x);
    if (x->kind == PN_NODE_KERNEL) {
        ent_add(&m, "count", pn_json_uint(x->count));
        ent_add(&m, "time (ns)", pn_json_uint(pn_ticks_to_ns(x->ticks)));
        ent_add(&m, "device_id", cJSON_CreateString("0"));
        ent_add(&m, "device_type", cJSON_CreateString("CPU"));
        ent_add(&m, "time_kind", cJSON_CreateString("wall"));
        ent_add(&m, "programs", pn_json_uint(x->programs));
        ent_add(&m, "threads", pn_json_uint(x->threads));
        counter_metrics(&m, x, 0);
        if (x->has_bytes)
            ent_add(&m, "bytes", pn_json_uint((uint64_t)(x->bytes + 0.5)));
        for (int k = 0; k < 3; k++)
            if (x->has_flops[k])
                ent_add(&m, fl[k], pn_json_double(x->flops[k]));
        const PnSite *site = pn_site_get(x->site);
        if (site && site->remarks) /* a string, like device_type: not a summed column */
            ent_add(&m, "remarks", cJSON_CreateString(site->remarks));
        if (x->cost_inexact) /* launches whose bytes/flops counted a loop of unknown trips once */
            ent_add(&m, "cost_per_iteration_launches", pn_json_uint(x->cost_inexact));
    } else if (x->kind == PN_NODE_KSCOPE) {
        ent_add(&m, "scope_count", pn_json_uint(x->count));
        ent_add(&m, "scope_time (ns)", pn_json_uint(pn_ticks_to_ns(x->wall)));
        ent_add(&m, "scope_cpu_time (ns)", pn_json_uint(pn_ticks_to_ns(x->ticks)));
        ent_add(&m, "time_kind", cJSON_CreateString("wall"));
        if (x->has_bytes) /* scope_ names: hatchet must not add them to the kernel's */
            ent_add(&m, "scope_bytes", pn_json_uint((uint64_t)(x->bytes + 0.5)));
        for (int k = 0; k < 3; k++)
            if (x->has_flops[k])
                ent_add(&m, sfl[k], pn_json_double(x->flops[k]));
        ent_add(&m, "normalized_time (ns)", pn_json_double(x->norm * 1e9 / pn_clock_hz()));
        counter_metrics(&m, x, 1);
    } else if (h) {
        if (h->time) {
            ent_add(&m, "count", pn_json_int(0));
            ent_add(&m, "time (ns)", pn_json_int(0));
        }
        for (int c = 0; c < pn_ctrs.n; c++)
            if (h->ctr[c])
                ent_add(&m, counter_name(c, 0), pn_json_int(0));
        if (h->bytes)
            ent_add(&m, "bytes", pn_json_int(0));
        for (int k = 0; k < 5; k++)
            if (h->flops[k])
                ent_add(&m, flops_names[k], pn_json_int(0));
    }
    return ents_object(&m);
}

static cJSON *
node_json(const PnTree *tr, int32_t i, const Hints *h)
{
    const PnTNode *x = &tr->nodes[i];
    cJSON *o = cJSON_CreateObject(), *ch = cJSON_CreateArray(), *fr = cJSON_CreateObject();
    for (int32_t c = x->first; c >= 0; c = tr->nodes[c].next)
        cJSON_AddItemToArray(ch, node_json(tr, c, h));
    cJSON_AddItemToObject(o, "children", ch);
    cJSON_AddStringToObject(fr, "name", pn_name_get(x->name));
    cJSON_AddStringToObject(fr, "type", "function");
    cJSON_AddItemToObject(o, "frame", fr);
    cJSON_AddItemToObject(o, "metrics", metrics_json(x, i == 0 ? h : NULL));
    return o;
}

/* {"CPU": {"0": {...}}} when any kernel was recorded, else {} */
static cJSON *
device_json(const PnTree *tr)
{
    const PnDevice *d = pn_device();
    cJSON *o = cJSON_CreateObject(), *cpu, *z;
    if (!tr->launches)
        return o;
    cpu = cJSON_AddObjectToObject(o, "CPU");
    z = cJSON_AddObjectToObject(cpu, "0");
    cJSON_AddStringToObject(z, "arch", d->arch);
    cJSON_AddItemToObject(z, "clock_rate", pn_json_uint(d->clock_khz));
    cJSON_AddStringToObject(z, "clock_source", pn_clock_source());
    cJSON_AddStringToObject(z, "counter_source", pn_counter_source());
    cJSON_AddStringToObject(z, "model", d->model);
    cJSON_AddItemToObject(z, "num_cores", pn_json_int(d->num_cores));
    cJSON_AddItemToObject(z, "num_sms", pn_json_int(d->num_cores));
    cJSON_AddStringToObject(z, "tritium_version", PN_VERSION);
    return o;
}

/* [root, device info] of 'tr'; caller deletes. NULL when out of memory. */
cJSON *
pn_hatchet_build(const PnTree *tr)
{
    Hints h;
    cJSON *a = cJSON_CreateArray();
    if (!a)
        return NULL;
    collect_hints(tr, &h);
    cJSON_AddItemToArray(a, node_json(tr, 0, &h));
    cJSON_AddItemToArray(a, device_json(tr));
    return a;
}

/* node i at 'depth', as pn_json_print would lay out node_json(tr, i, h): the keys
 * children, frame, metrics in sorted order */
static void
node_write(PnJOut *o, const PnTree *tr, int32_t i, const Hints *h, int depth)
{
    const PnTNode *x = &tr->nodes[i];
    cJSON *fr = cJSON_CreateObject(), *m;
    pn_jout_put(o, "{", 1);
    pn_jout_newline(o, depth + 1);
    pn_jout_put(o, "\"children\": ", 12);
    if (x->first < 0) {
        pn_jout_put(o, "[]", 2);
    } else {
        pn_jout_put(o, "[", 1);
        for (int32_t c = x->first; c >= 0; c = tr->nodes[c].next) {
            pn_jout_newline(o, depth + 2);
            node_write(o, tr, c, h, depth + 2); /* depth <= the tree's, bounded when recording */
            if (tr->nodes[c].next >= 0)
                pn_jout_put(o, ",", 1);
        }
        pn_jout_newline(o, depth + 1);
        pn_jout_put(o, "]", 1);
    }
    pn_jout_put(o, ",", 1);
    pn_jout_newline(o, depth + 1);
    pn_jout_put(o, "\"frame\": ", 9);
    cJSON_AddStringToObject(fr, "name", pn_name_get(x->name));
    cJSON_AddStringToObject(fr, "type", "function");
    pn_jout_pretty(o, fr, depth + 1);
    cJSON_Delete(fr);
    pn_jout_put(o, ",", 1);
    pn_jout_newline(o, depth + 1);
    pn_jout_put(o, "\"metrics\": ", 11);
    m = metrics_json(x, i == 0 ? h : NULL);
    pn_jout_pretty(o, m, depth + 1);
    cJSON_Delete(m);
    pn_jout_newline(o, depth);
    pn_jout_put(o, "}", 1);
}

/* Writes the .hatchet text of 'tr', streamed. 0 or -ENOMEM. */
int
pn_hatchet_write(const PnTree *tr, PnWriteFn w, void *user)
{
    PnJOut *o = malloc(sizeof *o);
    cJSON *dev;
    Hints h;
    if (!o)
        return -ENOMEM;
    o->w = w;
    o->user = user;
    o->n = 0;
    collect_hints(tr, &h);
    pn_jout_put(o, "\n[", 2);
    pn_jout_newline(o, 1);
    node_write(o, tr, 0, &h, 1);
    pn_jout_put(o, ",", 1);
    pn_jout_newline(o, 1);
    dev = device_json(tr);
    pn_jout_pretty(o, dev, 1);
    cJSON_Delete(dev);
    pn_jout_put(o, "\n]\n", 3);
    pn_jout_flush(o);
    free(o);
    return 0;
}
