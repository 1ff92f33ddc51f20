/*
 * rt_aot.c — ahead-of-time kernels: the metadata file ("tritium-aot/1", written by
 * triton.tools.aot.export), argument binding into the 8-byte slots of the kernel ABI
 * (docs/compiler.md §1.2), launches through rt_launch_ex and Proton capture around them.
 * API and ownership in tritium_aot.h; the format in docs/aot.md.
 */
#include "tritium_aot.h"

#include "proton.h"
#include "rt_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Slot kinds, as the metadata names them ("slot" of a parameter). ORDER RT_AOT_KIND */
typedef enum AotKind { AK_CONSTEXPR, AK_PTR, AK_I1, AK_I32, AK_I64, AK_F16, AK_BF16, AK_F32, AK_F64, AK_COUNT } AotKind;
static const char *const kind_names[AK_COUNT] = {"constexpr", "ptr", "i1", "i32", "i64", "fp16", "bf16", "fp32", "fp64"};

typedef struct AotParam {
    char *name, *type; /* type: "*fp32", "i32", "constexpr", ... */
    char *constexpr_json;
    AotKind kind;
    int slot;          /* index into RtAot.slots, -1 for constexprs */
} AotParam;

struct RtAot {
    char *name;
    RtKernel *kernel;
    AotParam *params;
    int nparams, nslots;
    uint64_t *slots;
    uint8_t *bound; /* one per slot */
    int has_grid;
    int32_t grid[3];
    uint64_t bytes;
    double flops[3];
    char **scopes;
    int nscopes;
    char *remarks; /* "file:line:col: message" lines (Proton's PnKernelDesc.remarks), or NULL */
    uint32_t site;
};

/* ---- metadata ---------------------------------------------------------------------- */

static const char *
str_field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double
num_field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static int
kind_of(const char *s)
{
    for (int i = 0; s && i < AK_COUNT; i++)
        if (!strcmp(s, kind_names[i]))
            return i;
    return -1;
}

/* Fills k->params from the "params" array; -EINVAL naming the bad entry. */
static int
parse_params(RtAot *k, const cJSON *arr, const char *path)
{
    int n = cJSON_GetArraySize(arr);
    if (!cJSON_IsArray(arr) || n > 4096)
        return rt_fail(EINVAL, "%s: \"params\" must be an array", path);
    k->params = rt_xcalloc((size_t)n + 1, sizeof *k->params);
    k->nparams = n;
    for (int i = 0; i < n; i++) {
        const cJSON *p = cJSON_GetArrayItem(arr, i);
        const char *name = str_field(p, "name"), *type = str_field(p, "type");
        int kind = kind_of(str_field(p, "slot"));
        if (!name || !type || kind < 0)
            return rt_fail(EINVAL, "%s: params[%d] needs \"name\", \"type\" and a known \"slot\"", path, i);
        AotParam *a = &k->params[i];
        a->name = rt_xstrdup(name);
        a->type = rt_xstrdup(type);
        a->kind = (AotKind)kind;
        a->slot = kind == AK_CONSTEXPR ? -1 : k->nslots++;
        if (kind == AK_CONSTEXPR) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, "value");
            a->constexpr_json = v ? cJSON_PrintUnformatted(v) : rt_xstrdup("null");
        }
    }
    k->slots = rt_xcalloc((size_t)k->nslots + 1, sizeof *k->slots);
    k->bound = rt_xcalloc((size_t)k->nslots + 1, 1);
    return 0;
}

/* The optional constant grid, the cost and the scope names. */
static int
parse_extras(RtAot *k, const cJSON *root, const char *path)
{
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "grid");
    if (cJSON_IsArray(g)) {
        int n = cJSON_GetArraySize(g);
        if (n < 1 || n > 3)
            return rt_fail(EINVAL, "%s: \"grid\" must have 1 to 3 entries", path);
        k->grid[0] = k->grid[1] = k->grid[2] = 1;
        for (int i = 0; i < n; i++) {
            const cJSON *v = cJSON_GetArrayItem(g, i);
            if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > INT32_MAX)
                return rt_fail(EINVAL, "%s: grid[%d] is not a grid size", path, i);
            k->grid[i] = (int32_t)v->valuedouble;
        }
        k->has_grid = 1;
    }
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "cost");
    k->bytes = (uint64_t)(num_field(c, "bytes_loaded") + num_field(c, "bytes_stored"));
    k->flops[0] = num_field(c, "flops16");
    k->flops[1] = num_field(c, "flops32");
    k->flops[2] = num_field(c, "flops64");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "scopes");
    int ns = cJSON_IsArray(s) ? cJSON_GetArraySize(s) : 0;
    k->scopes = rt_xcalloc((size_t)ns + 1, sizeof *k->scopes);
    for (int i = 0; i < ns; i++) {
        const cJSON *v = cJSON_GetArrayItem(s, i);
        if (!cJSON_IsString(v))
            return rt_fail(EINVAL, "%s: scopes[%d] is not a string", path, i);
        k->scopes[k->nscopes++] = rt_xstrdup(v->valuestring);
    }
    /* remarks: [[file, line, col, message], ...] as the JIT's metadata holds them */
    const cJSON *rm = cJSON_GetObjectItemCaseSensitive(root, "remarks"), *r;
    if (!cJSON_IsArray(rm))
        rm = NULL;
    cJSON_ArrayForEach(r, rm) {
        const cJSON *f = cJSON_GetArrayItem(r, 0), *ln = cJSON_GetArrayItem(r, 1), *col = cJSON_GetArrayItem(r, 2),
                    *msg = cJSON_GetArrayItem(r, 3);
        if (!cJSON_IsString(f) || !cJSON_IsNumber(ln) || !cJSON_IsNumber(col) || !cJSON_IsString(msg))
            return rt_fail(EINVAL, "%s: remarks entries are [file, line, column, message]", path);
        char *prev = k->remarks;
        k->remarks = rt_xasprintf("%s%s%s:%d:%d: %s", prev ? prev : "", prev ? "\n" : "", f->valuestring,
                                  (int)ln->valuedouble, (int)col->valuedouble, msg->valuestring);
        free(prev);
    }
    return 0;
}

/* The kernel .so named by the metadata, relative to the metadata's directory. */
static char *
kernel_path(const char *meta_path, const char *so)
{
    const char *slash = strrchr(meta_path, '/');
    if (so[0] == '/' || !slash)
        return rt_xstrdup(so);
    return rt_xasprintf("%.*s/%s", (int)(slash - meta_path), meta_path, so);
}

/* Registers the kernel as a Proton site (name, constexprs, cost, scopes). */
static void
register_site(RtAot *k)
{
    cJSON *ce = cJSON_CreateObject();
    for (int i = 0; i < k->nparams; i++)
        if (k->params[i].kind == AK_CONSTEXPR)
            cJSON_AddItemToObject(ce, k->params[i].name, cJSON_Parse(k->params[i].constexpr_json));
    char *ce_text = cJSON_PrintUnformatted(ce);
    PnKernelDesc d = {.name = k->name, .constexprs = ce_text, .bytes_per_program = k->bytes,
                      .flops_per_program = {k->flops[0], k->flops[1], k->flops[2]},
                      .nscopes = (uint32_t)k->nscopes, .scope_names = (const char *const *)k->scopes,
                      .remarks = k->remarks};
    k->site = pn_kernel_register(&d);
    cJSON_free(ce_text);
    cJSON_Delete(ce);
}

/* Documented in tritium_aot.h. */
int
rt_aot_load(const char *meta_path, RtAot **out)
{
    char *text = NULL, *so = NULL;
    size_t len = 0;
    cJSON *root = NULL;
    RtAot *k = NULL;
    *out = NULL;
    int rc = rt_fs_read(meta_path, 16u << 20, &text, &len);
    if (rc < 0) {
        rc = rt_fail(-rc, "cannot read kernel metadata %s: %s", meta_path, strerror(-rc));
        goto out;
    }
    root = cJSON_ParseWithLength(text, len);
    const char *fmt = str_field(root, "format"), *name = str_field(root, "name"), *sofile = str_field(root, "kernel");
    if (!root || !fmt || strcmp(fmt, RT_AOT_FORMAT) != 0 || !name || !sofile) {
        rc = rt_fail(EINVAL, "%s is not tritium kernel metadata (format \"%s\" with \"name\" and \"kernel\")",
                     meta_path, RT_AOT_FORMAT);
        goto out;
    }
    k = rt_xcalloc(1, sizeof *k);
    k->name = rt_xstrdup(name);
    if ((rc = parse_params(k, cJSON_GetObjectItemCaseSensitive(root, "params"), meta_path)) < 0 ||
        (rc = parse_extras(k, root, meta_path)) < 0)
        goto out;
    so = kernel_path(meta_path, sofile);
    if ((rc = rt_kernel_load(so, &k->kernel)) < 0)
        goto out; /* rt_last_error names the file and why */
    register_site(k);
    *out = k;
    k = NULL;
out:
    rt_aot_unload(k);
    cJSON_Delete(root);
    free(text);
    free(so);
    return rc;
}

void
rt_aot_unload(RtAot *k)
{
    if (!k)
        return;
    rt_kernel_unload(k->kernel);
    for (int i = 0; i < k->nparams; i++) {
        free(k->params[i].name);
        free(k->params[i].type);
        cJSON_free(k->params[i].constexpr_json);
    }
    for (int i = 0; i < k->nscopes; i++)
        free(k->scopes[i]);
    free(k->scopes);
    free(k->remarks);
    free(k->params);
    free(k->slots);
    free(k->bound);
    free(k->name);
    free(k);
}

/* ---- accessors --------------------------------------------------------------------- */

const char *
rt_aot_last_error(void)
{
    return rt_last_error();
}

const char *
rt_aot_name(const RtAot *k)
{
    return k->name;
}

int
rt_aot_num_params(const RtAot *k)
{
    return k->nparams;
}

const char *
rt_aot_param_name(const RtAot *k, int i)
{
    return i >= 0 && i < k->nparams ? k->params[i].name : NULL;
}

const char *
rt_aot_param_type(const RtAot *k, int i)
{
    return i >= 0 && i < k->nparams ? k->params[i].type : NULL;
}

int
rt_aot_param_index(const RtAot *k, const char *name)
{
    for (int i = 0; i < k->nparams; i++)
        if (!strcmp(k->params[i].name, name))
            return i;
    return rt_fail(ENOENT, "kernel %s has no parameter '%s'", k->name, name);
}

const char *
rt_aot_constexpr(const RtAot *k, int i)
{
    return i >= 0 && i < k->nparams ? k->params[i].constexpr_json : NULL;
}

int
rt_aot_grid(const RtAot *k, int32_t grid[3])
{
    if (!k->has_grid)
        return rt_fail(ENOENT, "kernel %s was exported without a grid", k->name);
    memcpy(grid, k->grid, sizeof k->grid);
    return 0;
}

void
rt_aot_cost(const RtAot *k, uint64_t *bytes, double flops[3])
{
    if (bytes)
        *bytes = k->bytes;
    if (flops)
        memcpy(flops, k->flops, sizeof k->flops);
}

int
rt_aot_num_scopes(const RtAot *k)
{
    return k->nscopes;
}

const char *
rt_aot_scope_name(const RtAot *k, int i)
{
    return i >= 0 && i < k->nscopes ? k->scopes[i] : NULL;
}

/* ---- binding ----------------------------------------------------------------------- */

/* The parameter i for a bind of 'what', or NULL with the error set in *rc. */
static AotParam *
param_for(RtAot *k, int i, const char *what, int *rc)
{
    if (i < 0 || i >= k->nparams) {
        *rc = rt_fail(ENOENT, "kernel %s has no parameter %d", k->name, i);
        return NULL;
    }
    AotParam *p = &k->params[i];
    if (p->kind == AK_CONSTEXPR) {
        *rc = rt_fail(EINVAL, "parameter %s of %s is a constexpr (fixed at compile time: %s)", p->name, k->name,
                      p->constexpr_json);
        return NULL;
    }
    int ok = !strcmp(what, "ptr") ? p->kind == AK_PTR
             : !strcmp(what, "int") ? p->kind == AK_I1 || p->kind == AK_I32 || p->kind == AK_I64
                                    : p->kind >= AK_F16;
    if (!ok) {
        *rc = rt_fail(EINVAL, "parameter %s of %s is %s, not a%s %s", p->name, k->name, p->type,
                      what[0] == 'i' ? "n" : "", what);
        return NULL;
    }
    return p;
}

/* IEEE binary16 / bfloat16 bits of v, rounded to nearest even (from double: the
 * float step would round twice). */
static uint16_t
f16_bits(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (isnan(v))
        return 0x7e00;
    if (a >= 65520.0)
        return sign | 0x7c00;
    if (a < 0x1p-14) /* subnormal: multiples of 2^-24 */
        return sign | (uint16_t)nearbyint(a * 0x1p24);
    int e;
    double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    uint32_t q = (uint32_t)nearbyint(m * 2048.0); /* 11 significant bits */
    if (q == 2048) {
        q = 1024;
        e++;
    }
    return sign | (uint16_t)((uint32_t)(e + 14) << 10 | (q - 1024));
}

static uint16_t
bf16_bits(double v)
{
    float f = (float)v; /* bfloat16 keeps float's exponent: round its 24-bit significand */
    uint32_t u;
    memcpy(&u, &f, 4);
    if (isnan(f))
        return 0x7fc0;
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

/* Stores a bound slot value; returns 0. */
static int
set_slot(RtAot *k, const AotParam *p, uint64_t s)
{
    k->slots[p->slot] = s;
    k->bound[p->slot] = 1;
    return 0;
}

int
rt_aot_bind_ptr(RtAot *k, int i, void *ptr)
{
    int rc = 0;
    AotParam *p = param_for(k, i, "ptr", &rc);
    if (!p)
        return rc;
    return set_slot(k, p, (uint64_t)(uintptr_t)ptr);
}

int
rt_aot_bind_int(RtAot *k, int i, int64_t v)
{
    int rc = 0;
    AotParam *p = param_for(k, i, "int", &rc);
    if (!p)
        return rc;
    if (p->kind == AK_I32 && (v < INT32_MIN || v > (int64_t)UINT32_MAX))
        return rt_fail(ERANGE, "%lld does not fit parameter %s (i32) of %s", (long long)v, p->name, k->name);
    uint64_t s = p->kind == AK_I1 ? (uint64_t)(v != 0) : p->kind == AK_I32 ? (uint32_t)v : (uint64_t)v;
    return set_slot(k, p, s); /* little-endian: narrower ints in the low bytes */
}

int
rt_aot_bind_float(RtAot *k, int i, double v)
{
    int rc = 0;
    AotParam *p = param_for(k, i, "float", &rc);
    if (!p)
        return rc;
    uint64_t s = 0;
    if (p->kind == AK_F32) {
        float f = (float)v;
        memcpy(&s, &f, 4);
    } else if (p->kind == AK_F64) {
        memcpy(&s, &v, 8);
    } else {
        uint16_t b = p->kind == AK_F16 ? f16_bits(v) : bf16_bits(v);
        memcpy(&s, &b, 2);
    }
    return set_slot(k, p, s);
}

int
rt_aot_bind_text(RtAot *k, int i, const char *text)
{
    if (i < 0 || i >= k->nparams)
        return rt_fail(ENOENT, "kernel %s has no parameter %d", k->name, i);
    AotParam *p = &k->params[i];
    char *end = NULL;
    int rc = 0;
    if (p->kind == AK_CONSTEXPR || p->kind == AK_PTR)
        return param_for(k, i, "int", &rc) ? 0 : rc; /* the error says what it is */
    errno = 0;
    if (p->kind == AK_I1 && (!strcmp(text, "true") || !strcmp(text, "false")))
        return rt_aot_bind_int(k, i, text[0] == 't');
    if (p->kind == AK_I1 || p->kind == AK_I32 || p->kind == AK_I64) {
        long long v = strtoll(text, &end, 0);
        if (errno == ERANGE && p->kind == AK_I64) { /* u64 values past INT64_MAX */
            errno = 0;
            v = (long long)strtoull(text, &end, 0);
        }
        if (!*text || *end || errno)
            return rt_fail(EINVAL, "'%s' is not an integer (parameter %s, %s)", text, p->name, p->type);
        return rt_aot_bind_int(k, i, v);
    }
    double v = strtod(text, &end);
    if (!*text || *end)
        return rt_fail(EINVAL, "'%s' is not a number (parameter %s, %s)", text, p->name, p->type);
    return rt_aot_bind_float(k, i, v);
}

/* ---- launch and trace -------------------------------------------------------------- */

int
rt_aot_launch(RtAot *k, const int32_t grid[3], int nthreads)
{
    for (int i = 0; i < k->nparams; i++) {
        const AotParam *p = &k->params[i];
        if (p->slot >= 0 && !k->bound[p->slot])
            return rt_fail(EINVAL, "parameter %s (%s) of %s is not bound", p->name, p->type, k->name);
    }
    return rt_launch_ex(rt_kernel_fn(k->kernel), k->slots, grid, nthreads, k->site,
                        rt_kernel_launch_flags(k->kernel));
}

int
rt_aot_trace_begin(void)
{
    pn_init();
    if (pn_disabled())
        return rt_fail(ECANCELED, "Proton is disabled (TRITON_DISABLE_PROTON)");
    pn_capture_reset();
    pn_capture_enable(1);
    return 0;
}

int
rt_aot_trace_write(const char *path)
{
    pn_capture_enable(0);
    int rc = pn_capture_dump(path);
    if (rc < 0)
        return rt_fail(-rc, "cannot write the trace %s: %s", path ? path : "(PROTON_OUTPUT)", pn_last_error());
    return 0;
}
