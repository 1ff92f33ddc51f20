/*
 * ir_type.c — element types and the module's interned type table.
 *
 * Types are hash-consed: two IrType indices are equal iff the types are. Scalar
 * types occupy indices 1..IR_DTYPE_COUNT (index = dtype + 1). Printing uses the
 * MLIR/TTIR spelling (signless integers: u32 prints as i32).
 */
#include "ir_int.h"

#include <stdlib.h>
#include <string.h>

/* ORDER IR_DTYPE */
static const struct {
    const char *name, *mlir;
    uint8_t bits, is_float, is_signed;
    const char *ttir; /* fp8 only: the TTIR spelling (upstream's MLIR type names) */
    IrFp8Format f8;
} dtypes[IR_DTYPE_COUNT] = {
    {"int1", "i1", 1, 0, 0},     {"int8", "i8", 8, 0, 1},      {"int16", "i16", 16, 0, 1},
    {"int32", "i32", 32, 0, 1},  {"int64", "i64", 64, 0, 1},   {"uint8", "i8", 8, 0, 0},
    {"uint16", "i16", 16, 0, 0}, {"uint32", "i32", 32, 0, 0},  {"uint64", "i64", 64, 0, 0},
    {"fp16", "f16", 16, 1, 0},   {"bf16", "bf16", 16, 1, 0},   {"fp32", "f32", 32, 1, 0},
    {"fp64", "f64", 64, 1, 0},
    {"fp8e4nv", "i8", 8, 0, 0, "f8E4M3FN", {4, 3, 7, IR_FP8_FN}},
    {"fp8e5", "i8", 8, 0, 0, "f8E5M2", {5, 2, 15, IR_FP8_IEEE}},
    {"fp8e4b15", "i8", 8, 0, 0, "f8E4M3B11FNUZ", {4, 3, 15, IR_FP8_FN}},
    {"fp8e4b8", "i8", 8, 0, 0, "f8E4M3FNUZ", {4, 3, 8, IR_FP8_FNUZ}},
    {"fp8e5b16", "i8", 8, 0, 0, "f8E5M2FNUZ", {5, 2, 16, IR_FP8_FNUZ}},
};

const char *ir_dtype_name(IrDtype d) { return (unsigned)d < IR_DTYPE_COUNT ? dtypes[d].name : "?"; }
const char *ir_dtype_mlir(IrDtype d) { return (unsigned)d < IR_DTYPE_COUNT ? dtypes[d].mlir : "?"; }
int ir_dtype_bits(IrDtype d) { return dtypes[d].bits; }
bool ir_dtype_is_float(IrDtype d) { return dtypes[d].is_float; }
bool ir_dtype_is_fp8(IrDtype d) { return (unsigned)d < IR_DTYPE_COUNT && dtypes[d].ttir != NULL; }
bool ir_dtype_is_int(IrDtype d) { return !dtypes[d].is_float && !ir_dtype_is_fp8(d); }
const char *ir_dtype_ttir(IrDtype d) { return ir_dtype_is_fp8(d) ? dtypes[d].ttir : ir_dtype_mlir(d); }
const IrFp8Format *ir_fp8_format(IrDtype d) { return ir_dtype_is_fp8(d) ? &dtypes[d].f8 : NULL; }
bool ir_dtype_is_signed(IrDtype d) { return dtypes[d].is_signed; }

/* ---- interning ---------------------------------------------------------------- */

static uint32_t
type_hash(const IrTypeInfo *t)
{
    uint32_t h = 2166136261u;
#define MIX(x) (h = (h ^ (uint32_t)(x)) * 16777619u)
    MIX(t->kind);
    MIX(t->dtype);
    MIX(t->rank);
    MIX(t->addrspace);
    MIX(t->elem);
    for (int i = 0; i < t->rank; i++) {
        MIX(t->shape[i]);
        MIX(t->shape[i] >> 32);
    }
#undef MIX
    return h;
}

static bool
type_eq(const IrTypeInfo *a, const IrTypeInfo *b)
{
    if (a->kind != b->kind || a->dtype != b->dtype || a->rank != b->rank ||
        a->addrspace != b->addrspace || a->elem != b->elem)
        return false;
    return memcmp(a->shape, b->shape, sizeof(int64_t) * a->rank) == 0;
}

static void
rehash(IrModule *m, uint32_t cap)
{
    IrTypeTable *tt = &m->types;
    tt->hash = ir_newv(&m->arena, uint32_t, cap);
    tt->hcap = cap;
    for (uint32_t i = 1; i < tt->n; i++) {
        uint32_t h = type_hash(&tt->v[i]) & (cap - 1);
        while (tt->hash[h])
            h = (h + 1) & (cap - 1);
        tt->hash[h] = i;
    }
}

IrType
ir_type_intern(IrModule *m, const IrTypeInfo *ti)
{
    IrTypeTable *tt = &m->types;
    IrTypeInfo key = *ti;
    for (int i = key.rank; i < IR_MAX_RANK; i++)
        key.shape[i] = 0;
    uint32_t h = type_hash(&key) & (tt->hcap - 1);
    while (tt->hash[h]) {
        if (type_eq(&tt->v[tt->hash[h]], &key))
            return tt->hash[h];
        h = (h + 1) & (tt->hcap - 1);
    }
    if (tt->n == tt->cap) {
        uint32_t cap = tt->cap * 2;
        tt->v = ir_arena_grow(&m->arena, tt->v, sizeof(IrTypeInfo) * tt->cap, sizeof(IrTypeInfo) * cap);
        tt->cap = cap;
    }
    IrType t = tt->n++;
    tt->v[t] = key;
    if (tt->n * 2 > tt->hcap)
        rehash(m, tt->hcap * 2);
    else
        tt->hash[h] = t;
    return t;
}

void
ir_types_init(IrModule *m)
{
    IrTypeTable *tt = &m->types;
    tt->cap = 64;
    tt->v = ir_newv(&m->arena, IrTypeInfo, tt->cap);
    tt->n = 1; /* index 0 = no type */
    rehash(m, 128);
    for (int d = 0; d < IR_DTYPE_COUNT; d++) {
        IrTypeInfo ti = {.kind = IR_TK_SCALAR, .dtype = (uint8_t)d};
        IrType t = ir_type_intern(m, &ti);
        if (t != (IrType)d + 1)
            ir_die("scalar type table out of order");
    }
}

/* ---- constructors and queries ------------------------------------------------------ */

const IrTypeInfo *
ir_type_info(const IrModule *m, IrType t)
{
    if (t == 0 || t >= m->types.n)
        ir_die("bad type index %u", t);
    return &m->types.v[t];
}

IrType ir_type_scalar(IrModule *m, IrDtype d) { (void)m; return (IrType)d + 1; }

IrType
ir_type_ptr(IrModule *m, IrType pointee, int addrspace)
{
    IrTypeInfo ti = {.kind = IR_TK_PTR, .elem = pointee, .addrspace = (uint8_t)addrspace};
    return ir_type_intern(m, &ti);
}

IrType
ir_type_tensor(IrModule *m, IrType elem, int rank, const int64_t *shape)
{
    if (rank == 0)
        return elem;
    if (rank > IR_MAX_RANK)
        ir_die("tensor rank %d exceeds %d", rank, IR_MAX_RANK);
    IrTypeInfo ti = {.kind = IR_TK_TENSOR, .elem = elem, .rank = (uint8_t)rank};
    memcpy(ti.shape, shape, sizeof(int64_t) * rank);
    return ir_type_intern(m, &ti);
}

bool ir_type_is_tensor(const IrModule *m, IrType t) { return ir_type_info(m, t)->kind == IR_TK_TENSOR; }
bool ir_type_is_ptr(const IrModule *m, IrType t) { return ir_type_info(m, t)->kind == IR_TK_PTR; }

int
ir_type_rank(const IrModule *m, IrType t)
{
    const IrTypeInfo *ti = ir_type_info(m, t);
    return ti->kind == IR_TK_TENSOR ? ti->rank : 0;
}

const int64_t *ir_type_shape(const IrModule *m, IrType t) { return ir_type_info(m, t)->shape; }

IrType
ir_type_elem(const IrModule *m, IrType t)
{
    const IrTypeInfo *ti = ir_type_info(m, t);
    return ti->kind == IR_TK_TENSOR ? ti->elem : t;
}

int
ir_type_dtype(const IrModule *m, IrType t)
{
    const IrTypeInfo *ti = ir_type_info(m, ir_type_elem(m, t));
    return ti->kind == IR_TK_SCALAR ? ti->dtype : -1;
}

IrType
ir_type_pointee(const IrModule *m, IrType t)
{
    const IrTypeInfo *ti = ir_type_info(m, ir_type_elem(m, t));
    return ti->kind == IR_TK_PTR ? ti->elem : 0;
}

int64_t
ir_type_numel(const IrModule *m, IrType t)
{
    const IrTypeInfo *ti = ir_type_info(m, t);
    int64_t n = 1;
    if (ti->kind == IR_TK_TENSOR)
        for (int i = 0; i < ti->rank; i++)
            n *= ti->shape[i];
    return n;
}

/* ---- spelling ------------------------------------------------------------------------ */

typedef struct Sbuf {
    char *p;
    size_t n, cap;
} Sbuf;

static void
sput(Sbuf *s, const char *t)
{
    for (; *t; t++) {
        if (s->n + 1 < s->cap)
            s->p[s->n] = *t;
        s->n++;
    }
}

static void
spell(Sbuf *s, const IrModule *m, IrType t)
{
    const IrTypeInfo *ti = ir_type_info(m, t);
    char num[32];
    switch (ti->kind) {
    case IR_TK_SCALAR:
        sput(s, ir_dtype_ttir((IrDtype)ti->dtype));
        break;
    case IR_TK_PTR:
        sput(s, "!tt.ptr<");
        spell(s, m, ti->elem);
        if (ti->addrspace) {
            snprintf(num, sizeof num, ", %d", ti->addrspace);
            sput(s, num);
        }
        sput(s, ">");
        break;
    case IR_TK_TENSOR:
        sput(s, "tensor<");
        for (int i = 0; i < ti->rank; i++) {
            snprintf(num, sizeof num, "%lldx", (long long)ti->shape[i]);
            sput(s, num);
        }
        spell(s, m, ti->elem);
        sput(s, ">");
        break;
    default:
        sput(s, "none");
    }
}

size_t
ir_type_str(const IrModule *m, IrType t, char *buf, size_t cap)
{
    Sbuf s = {buf, 0, cap};
    spell(&s, m, t);
    if (cap)
        buf[s.n < cap ? s.n : cap - 1] = 0;
    return s.n;
}

void
ir_print_type(FILE *out, const IrModule *m, IrType t)
{
    char buf[256];
    size_t n = ir_type_str(m, t, buf, sizeof buf);
    if (n < sizeof buf) {
        fputs(buf, out);
        return;
    }
    char *big = malloc(n + 1);
    if (!big)
        ir_die("out of memory");
    ir_type_str(m, t, big, n + 1);
    fputs(big, out);
    free(big);
}
