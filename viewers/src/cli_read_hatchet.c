/*
 * cli_read_hatchet.c — reads a .hatchet tree (docs/formats.md §1; upstream Proton's
 * `[root, device_info]` and a plain hatchet literal list of roots) into a CliProfile.
 *
 * Follows proton-viewer's reading rules: nodes named __proton_launch_metadata (or
 * "__proton_launch_metadata:...") are dropped with their subtrees, nodes with neither
 * metrics nor children are dropped, and a parent whose children were all dropped goes too.
 * The root's metric keys are the "hints" that make a metric summed up the tree.
 * Recursion is bounded by CLI_MAX_DEPTH (and by cJSON's own nesting limit).
 */
#include "cli.h"

#include <math.h>
#include <string.h>

typedef struct Reader {
    CliProfile *p;
    CliErr *e;
} Reader;

static int
is_metadata(const char *name)
{
    size_t n = strlen(CLI_LAUNCH_METADATA);
    return strncmp(name, CLI_LAUNCH_METADATA, n) == 0 && (name[n] == 0 || name[n] == ':');
}

static const char *
frame_name(Reader *r, const cJSON *j)
{
    const cJSON *frame = cJSON_GetObjectItemCaseSensitive(j, "frame");
    const cJSON *name = NULL;
    if (frame && !cJSON_IsObject(frame)) {
        cli_err_set(r->e, "a node's \"frame\" is not an object");
        return NULL;
    }
    if (frame)
        name = cJSON_GetObjectItemCaseSensitive(frame, "name");
    if (!name)
        name = cJSON_GetObjectItemCaseSensitive(j, "name");
    if (!name) {
        cli_err_set(r->e, "a node has no frame name");
        return NULL;
    }
    if (!cJSON_IsString(name)) {
        cli_err_set(r->e, "a frame name is not a string");
        return NULL;
    }
    return name->valuestring;
}

static int
read_value(Reader *r, CliNode *n, const cJSON *m)
{
    CliProfile *p = r->p;
    CliVal v = {0};
    if (strcmp(m->string, "_hatchet_nid") == 0 || cJSON_IsNull(m))
        return 0;
    if (cJSON_IsNumber(m)) {
        v.kind = CLI_V_NUM;
        v.num = m->valuedouble;
    } else if (cJSON_IsString(m)) {
        v.kind = CLI_V_STR;
        v.str = cli_arena_strdup(&p->arena, m->valuestring);
    } else if (cJSON_IsArray(m)) {
        int k = cJSON_GetArraySize(m), i = 0;
        double *vec = cli_arena_alloc(&p->arena, sizeof(double) * (size_t)(k ? k : 1));
        const cJSON *x;
        cJSON_ArrayForEach(x, m) {
            if (!cJSON_IsNumber(x)) {
                cli_err_set(r->e, "metric \"%s\" of node \"%s\" is a list with a non-number",
                            m->string, n->name);
                return -1;
            }
            vec[i++] = x->valuedouble;
            v.num += x->valuedouble;
        }
        v.kind = CLI_V_VEC;
        v.vec = vec;
        v.nvec = k;
        if (!isfinite(v.num)) {
            cli_err_set(r->e, "metric \"%s\" of node \"%s\" overflows", m->string, n->name);
            return -1;
        }
    } else {
        cli_err_set(r->e, "metric \"%s\" of node \"%s\" is not a number, string or list",
                    m->string, n->name);
        return -1;
    }
    if (p->nmetrics >= CLI_MAX_METRICS && cli_profile_metric_find(p, m->string) < 0) {
        cli_err_set(r->e, "more than %d distinct metrics", CLI_MAX_METRICS);
        return -1;
    }
    cli_node_set_val(p, n, cli_profile_metric_id(p, m->string), &v);
    return 0;
}

/* Drops the last child of parent, restoring the previous tail. */
static void
unlink_last(CliNode *parent, CliNode *prev_last)
{
    parent->last = prev_last;
    if (prev_last)
        prev_last->next = NULL;
    else
        parent->first = NULL;
    parent->nkids--;
}

/* Reads node j under parent (NULL for the root, which then becomes p->root's content).
 * Returns 0 or -1 with r->e set. */
static int
read_node(Reader *r, CliNode *parent, const cJSON *j, int depth)
{
    if (!cJSON_IsObject(j)) {
        cli_err_set(r->e, "a tree node is not an object");
        return -1;
    }
    if (depth > CLI_MAX_DEPTH) {
        cli_err_set(r->e, "tree deeper than %d levels", CLI_MAX_DEPTH);
        return -1;
    }
    const char *name = frame_name(r, j);
    if (!name)
        return -1;
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(j, "metrics");
    const cJSON *kids = cJSON_GetObjectItemCaseSensitive(j, "children");
    if (metrics && !cJSON_IsObject(metrics) && !cJSON_IsNull(metrics)) {
        cli_err_set(r->e, "\"metrics\" of node \"%s\" is not an object", name);
        return -1;
    }
    if (kids && !cJSON_IsArray(kids) && !cJSON_IsNull(kids)) {
        cli_err_set(r->e, "\"children\" of node \"%s\" is not a list", name);
        return -1;
    }
    int nmet = cJSON_IsObject(metrics) ? cJSON_GetArraySize(metrics) : 0;
    int nkid = cJSON_IsArray(kids) ? cJSON_GetArraySize(kids) : 0;
    if (parent && (is_metadata(name) || (nmet == 0 && nkid == 0)))
        return 0;

    CliNode *prev_last = parent ? parent->last : NULL;
    CliNode *n;
    if (parent) {
        n = cli_node_new(r->p, parent, name);
    } else {
        n = r->p->root;
        n->name = cli_arena_strdup(&r->p->arena, name);
    }
    const cJSON *m, *c;
    if (nmet) {
        cJSON_ArrayForEach(m, metrics) {
            if (read_value(r, n, m) != 0)
                return -1;
        }
    }
    if (nkid) {
        cJSON_ArrayForEach(c, kids) {
            if (read_node(r, n, c, depth + 1) != 0)
                return -1;
        }
    }
    if (parent && nkid > 0 && n->nkids == 0)
        unlink_last(parent, prev_last);
    return 0;
}

static const char *
dev_str(CliProfile *p, const cJSON *d, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(d, key);
    return cJSON_IsString(x) ? cli_arena_strdup(&p->arena, x->valuestring) : NULL;
}

static double
dev_num(const cJSON *d, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(d, key);
    return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

/* Summary fields from device info (the first device of the first type wins). */
static void
read_device_info(CliProfile *p, const cJSON *dev)
{
    p->device_info = cJSON_Duplicate(dev, 1);
    const cJSON *type = dev->child;
    if (!type || !cJSON_IsObject(type) || !type->child || !cJSON_IsObject(type->child))
        return;
    const cJSON *d = type->child;
    p->device_type = cli_arena_strdup(&p->arena, type->string);
    p->cpu_model = dev_str(p, d, "model");
    p->counter_source = dev_str(p, d, "counter_source");
    p->clock_source = dev_str(p, d, "clock_source");
    p->clock_khz = dev_num(d, "clock_rate");
    double cores = dev_num(d, "num_cores");
    if (cores <= 0)
        cores = dev_num(d, "num_sms");
    p->num_cores = cores > 0 && cores < 1e7 ? (int)cores : 0;
    if (cJSON_GetObjectItemCaseSensitive(d, "tritium_version"))
        p->tool = "tritium-proton";
}

int
cli_read_hatchet(CliProfile *p, const cJSON *top, CliErr *e)
{
    Reader r = {p, e};
    const cJSON *x;
    const cJSON *roots[2] = {0};
    int nroots = 0;
    if (!cJSON_IsArray(top) || !top->child) {
        cli_err_set(e, "expected [tree, device_info]");
        return -1;
    }
    cJSON_ArrayForEach(x, top) {
        if (!cJSON_IsObject(x)) {
            cli_err_set(e, "expected [tree, device_info]: element is not an object");
            return -1;
        }
        if (cJSON_GetObjectItemCaseSensitive(x, "frame") ||
            cJSON_GetObjectItemCaseSensitive(x, "children")) {
            if (nroots < 2)
                roots[nroots] = x;
            nroots++;
        } else if (!p->device_info) {
            read_device_info(p, x);
        }
    }
    if (nroots == 0) {
        cli_err_set(e, "no tree in the file");
        return -1;
    }
    if (nroots == 1)
        return read_node(&r, NULL, roots[0], 0);
    /* a hatchet literal with several roots: hang them under one synthetic ROOT */
    cJSON_ArrayForEach(x, top) {
        if (cJSON_GetObjectItemCaseSensitive(x, "frame") ||
            cJSON_GetObjectItemCaseSensitive(x, "children"))
            if (read_node(&r, p->root, x, 1) != 0)
                return -1;
    }
    return 0;
}
