/*
 * lo_plan.c — the plan of a kernel's lowering: a pure analysis (no text).
 *
 * Three passes over the kernel function:
 *   1. walk (pre-order): every op gets a position; every value its kind
 *      (LpKind), definition position, loop depth and direct uses; pointers and
 *      block pointers their forms (lo_plan_ptr.c), loop-carried ones included;
 *      every load, store and atomic its access mode and valid region (LpMem,
 *      with the remark of a fallback); every loop its bounds; the cost its
 *      cells (lo_plan_cost.c).
 *   2. uses through lazy values (reverse pre-order): a lazy tile is read where
 *      its consumers are, so a load's last use and deepest use are those of the
 *      lazy values built on it.
 *   3. where loads are read (LpMat), by these rules:
 *      - a load may not move past a memory write: when a write lies between a
 *        load and a later use, the load is copied where it stands (LM_WRITE);
 *      - a load used inside a deeper loop is copied before the loop (LM_LOOP);
 *      - a load fused into a store to the same kernel argument must read each
 *        element before the store writes it: unless the store writes exactly the
 *        elements the load reads at the same iteration (same base, same
 *        coefficients), the load is copied where it stands (LM_ALIAS). Different
 *        arguments are assumed not to overlap partially (docs/compiler.md §2.3);
 *        a run-time address (tt.int_to_ptr) may point into any of them, so a load
 *        and a store one of which goes through one are always ordered (copied);
 *      - a load with a wrap-around dim is copied into a tile (LM_WRAP).
 *   Then the tiles each in-kernel scope boundary materialises.
 */
#include "lo_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[LP_KIND_COUNT] = {"none", "scalar", "tile", "load", "tensor",
                                                      "ptr", "block_ptr", "packed", "descriptor"};
static const char *const mat_names[LM_COUNT] = {"lazy", "write", "loop", "alias", "wrap"};

const char *lp_kind_name(int k) { return k >= 0 && k < LP_KIND_COUNT ? kind_names[k] : "?"; }
const char *lp_mat_name(int m) { return m >= 0 && m < LM_COUNT ? mat_names[m] : "?"; }

int
lo_error(IrModule *m, int *err, IrLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ir_vdiag(m, loc, 0, fmt, ap);
    va_end(ap);
    *err = 1;
    return -1;
}

static void
remark(LoPlan *p, IrLoc loc, const char *msg)
{
    ir_diag(p->m, loc, 2, "%s", msg);
}

/* ---- the op map: IrOp* -> index ------------------------------------------------------ */

static uint32_t
op_hash(const IrOp *op)
{
    uint64_t h = (uint64_t)(uintptr_t)op * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32);
}

static void
opmap_put(LoPlan *p, const IrOp *op, uint32_t idx)
{
    if ((p->nops + 1) * 2 > p->opcap) {
        uint32_t cap = p->opcap ? p->opcap * 2 : 256;
        LpOpSlot *t = calloc(cap, sizeof *t);
        if (!t)
            ir_die("out of memory");
        for (uint32_t i = 0; i < p->opcap; i++) {
            if (!p->opmap[i].op)
                continue;
            uint32_t k = op_hash(p->opmap[i].op) & (cap - 1);
            while (t[k].op)
                k = (k + 1) & (cap - 1);
            t[k] = p->opmap[i];
        }
        free(p->opmap);
        p->opmap = t;
        p->opcap = cap;
    }
    uint32_t k = op_hash(op) & (p->opcap - 1);
    while (p->opmap[k].op && p->opmap[k].op != op)
        k = (k + 1) & (p->opcap - 1);
    if (!p->opmap[k].op)
        p->nops++;
    p->opmap[k].op = op;
    p->opmap[k].idx = idx;
}

static bool
opmap_get(const LoPlan *p, const IrOp *op, uint32_t *idx)
{
    if (!p->opcap)
        return false;
    uint32_t k = op_hash(op) & (p->opcap - 1);
    while (p->opmap[k].op) {
        if (p->opmap[k].op == op) {
            *idx = p->opmap[k].idx;
            return true;
        }
        k = (k + 1) & (p->opcap - 1);
    }
    return false;
}

/* ---- accessors -------------------------------------------------------------------------- */

int lp_plan_failed(const LoPlan *p) { return p->err; }
LoExprs *lp_exprs(LoPlan *p) { return &p->x; }
const LpVal *lp_val(const LoPlan *p, IrRef v) { return &p->vals[v]; }
BlockPtr *lp_bptr(LoPlan *p, IrRef v) { return p->bp[v]; }
int lp_num_loops(const LoPlan *p) { return p->nloops; }
int lp_num_locals(const LoPlan *p) { return p->nlocals; }
const LpLoop *lp_loop_at(const LoPlan *p, int i) { return &p->loops[i]; }

int
lp_base_kind(const LoPlan *p, int param)
{
    int i = param - (int)p->f->body->nargs;
    return i >= 0 && i < p->nlocals ? p->base_kind[i] : LPB_ARG;
}

bool
lp_base_is_address(const LoPlan *p, int param)
{
    int k = lp_base_kind(p, param);
    return k == LPB_ADDRESS || k == LPB_ADDRESSES || k == LPB_RECAST;
}

/* A new extra base of kind k; returns its parameter number. */
static int
new_base(LoPlan *p, int k)
{
    if (p->nlocals == p->capbases) {
        p->capbases = p->capbases ? p->capbases * 2 : 8;
        p->base_kind = realloc(p->base_kind, (size_t)p->capbases);
        if (!p->base_kind)
            ir_die("out of memory");
    }
    p->base_kind[p->nlocals] = (uint8_t)k;
    return (int)p->f->body->nargs + p->nlocals++;
}

const LpMem *
lp_mem(const LoPlan *p, const IrOp *op)
{
    uint32_t i;
    if (op->opc != IR_LOAD && op->opc != IR_STORE && op->opc != IR_ATOMIC_RMW && op->opc != IR_ATOMIC_CAS)
        return NULL;
    return opmap_get(p, op, &i) ? &p->mems[i] : NULL;
}

const LpLoop *
lp_loop(const LoPlan *p, const IrOp *op)
{
    uint32_t i;
    if (op->opc != IR_FOR && op->opc != IR_WHILE)
        return NULL;
    return opmap_get(p, op, &i) ? &p->loops[i] : NULL;
}

const LpDot *
lp_dot(const LoPlan *p, const IrOp *op)
{
    uint32_t i;
    if (op->opc != IR_DOT)
        return NULL;
    return opmap_get(p, op, &i) ? &p->dots[i] : NULL;
}

bool
lp_region_is_full(const Region *r)
{
    for (int d = 0; d < r->rank; d++)
        if (r->lo[d] || r->hi[d])
            return false;
    return !r->cond;
}

static const LpBarrier *
barrier_of(const LoPlan *p, const IrOp *rec)
{
    uint32_t i;
    if (rec->opc != IR_PROTON_RECORD)
        return NULL;
    return opmap_get(p, rec, &i) ? &p->barriers[i] : NULL;
}

const IrRef *
lp_barrier(const LoPlan *p, const IrOp *rec, uint32_t *n)
{
    const LpBarrier *b = barrier_of(p, rec);
    *n = b ? b->n : 0;
    return b ? b->vals : NULL;
}

int
lp_scope_id(const LoPlan *p, const IrOp *rec)
{
    const LpBarrier *b = barrier_of(p, rec);
    return b ? b->scope_id : -1;
}

/* ---- pass 1: the walk ------------------------------------------------------------------- */

typedef struct Walk {
    LoPlan *p;
    const IrOp **order;      /* ops in pre-order; position = index + 1 */
    uint32_t nord, capord;
    uint32_t *writes;        /* positions of memory writes */
    uint32_t nwrites, capwrites;
    int depth;
    int loop;                /* innermost loop index, -1: none */
} Walk;

static void
push_pos(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *v = realloc(*v, sizeof **v * *cap);
        if (!*v)
            ir_die("out of memory");
    }
    (*v)[(*n)++] = x;
}

static uint32_t
add_op(Walk *w, const IrOp *op)
{
    if (w->nord == w->capord) {
        w->capord = w->capord ? w->capord * 2 : 256;
        w->order = realloc(w->order, sizeof *w->order * w->capord);
        if (!w->order)
            ir_die("out of memory");
    }
    w->order[w->nord++] = op;
    return w->nord;
}

static void
use(Walk *w, IrRef v, uint32_t pos)
{
    LpVal *lv = &w->p->vals[v];
    if (pos > lv->last_use)
        lv->last_use = pos;
    if (w->depth > lv->use_depth)
        lv->use_depth = (uint8_t)w->depth;
}

static void
define(Walk *w, IrRef v, uint32_t pos, int kind)
{
    LpVal *lv = &w->p->vals[v];
    lv->kind = (uint8_t)kind;
    lv->def_pos = pos;
    lv->depth = (uint8_t)w->depth;
}

static bool
is_tile(const LoPlan *p, IrRef v)
{
    return ir_type_is_tensor(p->m, p->f->vals[v].type);
}

static LpMem *
new_mem(LoPlan *p, const IrOp *op)
{
    if (p->nmems == p->capmems) {
        p->capmems = p->capmems ? p->capmems * 2 : 32;
        p->mems = realloc(p->mems, sizeof *p->mems * p->capmems);
        if (!p->mems)
            ir_die("out of memory");
    }
    LpMem *m = &p->mems[p->nmems];
    memset(m, 0, sizeof *m);
    m->op = op;
    m->param = -1;
    opmap_put(p, op, p->nmems++);
    return m;
}

/* How a value travels through loops and branches. */
typedef enum { CV_SCALAR, CV_TENSOR, CV_PTR, CV_BPTR } CvKind;

static CvKind
carry_kind(const LoPlan *p, IrRef v)
{
    IrType t = p->f->vals[v].type;
    IrType e = ir_type_elem(p->m, t);
    if (ir_type_is_ptr(p->m, e))
        return ir_type_is_tensor(p->m, ir_type_pointee(p->m, e)) && !ir_type_is_tensor(p->m, t) ? CV_BPTR : CV_PTR;
    return ir_type_is_tensor(p->m, t) ? CV_TENSOR : CV_SCALAR;
}

static const int cv_kind[] = {[CV_SCALAR] = LP_SCALAR, [CV_TENSOR] = LP_TENSOR, [CV_PTR] = LP_PTR, [CV_BPTR] = LP_BPTR};

/* Binds carried value v (a block argument or a result) shaped like 'like' (its
 * init): pointers keep the init's structure with a carried element offset. */
static int
bind_carried(Walk *w, IrRef v, IrRef like, uint32_t pos, IrLoc loc)
{
    LoPlan *p = w->p;
    CvKind k = carry_kind(p, v);
    define(w, v, pos, cv_kind[k]);
    if (k == CV_PTR) {
        PtrForm *x = lp_ptrform(p, like);
        if (!x || x->ngen)
            return lp_error(p, loc, "a loop-carried or branch pointer must be an affine pointer expression");
        PtrForm *q = ir_new(&p->m->arena, PtrForm);
        *q = *x;
        q->off.base = ax_carry(&p->x, v, 0);
        p->ptr[v] = q;
        p->ptr_done[v] = 1;
    } else if (k == CV_BPTR) {
        BlockPtr *b = p->bp[like];
        if (!b)
            return lp_error(p, loc, "unsupported block pointer in loop or branch");
        BlockPtr *q = ir_new(&p->m->arena, BlockPtr);
        *q = *b;
        for (int d = 0; d < b->rank; d++)
            q->off[d] = ax_carry(&p->x, v, d);
        p->bp[v] = q;
    }
    return 0;
}

/* A carried pointer must keep its structure (argument, strides) around the loop. */
static int
check_carried(LoPlan *p, IrRef init, IrRef next, IrLoc loc)
{
    CvKind k = carry_kind(p, init);
    if (k == CV_PTR) {
        PtrForm *a = lp_ptrform(p, init), *b = lp_ptrform(p, next);
        if (!a || !b || a->param != b->param || a->ngen || b->ngen)
            return lp_error(p, loc, "loop-carried pointer must stay an affine offset of the same argument");
        for (int d = 0; d < a->off.rank; d++)
            if (a->off.coef[d] != b->off.coef[d] || a->off.wrap[d] != b->off.wrap[d] ||
                a->off.wbase[d] != b->off.wbase[d])
                return lp_error(p, loc, "loop-carried pointer tensor changes its strides inside the loop");
    } else if (k == CV_BPTR) {
        BlockPtr *a = p->bp[init], *b = p->bp[next];
        if (!a || !b || a->param != b->param || a->base != b->base)
            return lp_error(p, loc, "loop-carried block pointer must keep its base pointer");
        for (int d = 0; d < a->rank; d++)
            if (a->shape[d] != b->shape[d] || a->stride[d] != b->stride[d])
                return lp_error(p, loc, "loop-carried block pointer must keep its shape and strides");
    }
    return 0;
}

static int walk_block(Walk *w, const IrBlock *b);

/* The scope id of a proton.record (first appearance order, as plan_barriers finds
 * them), its scope opened or closed in p->open_scopes for the cost of what follows. */
static int
scope_intern(LoPlan *p, const IrOp *op)
{
    for (int s = 0; s < p->nscopes; s++)
        if (!strcmp(p->scope_names[s], op->s))
            return s;
    if (p->nscopes == IR_MAX_SCOPES)
        return lp_error(p, op->loc, "too many distinct in-kernel scopes (max %d)", IR_MAX_SCOPES);
    p->scope_names[p->nscopes] = op->s;
    return p->nscopes++;
}

static int
scope_mark(LoPlan *p, const IrOp *op)
{
    int id;
    if (!p->opt->instrument)
        return 0;
    if ((id = scope_intern(p, op)) < 0)
        return id;
    if (op->i[0])
        p->open_scopes |= 1ull << id;
    else
        p->open_scopes &= ~(1ull << id);
    return 0;
}

static int
new_loop(Walk *w, const IrOp *op)
{
    LoPlan *p = w->p;
    if (p->nloops == p->caploops) {
        p->caploops = p->caploops ? p->caploops * 2 : 8;
        p->loops = realloc(p->loops, sizeof *p->loops * (size_t)p->caploops);
        if (!p->loops)
            ir_die("out of memory");
    }
    LpLoop *l = &p->loops[p->nloops];
    memset(l, 0, sizeof *l);
    l->op = op;
    l->parent = w->loop;
    l->trips = -1;
    if (op->opc == IR_FOR) {
        l->lb = ax_val(&p->x, op->args[0]);
        l->ub = ax_val(&p->x, op->args[1]);
        l->step = ax_val(&p->x, op->args[2]);
        l->trips = lp_loop_trips(l, NULL, NULL);
        l->is_signed = ir_dtype_is_signed((IrDtype)ir_type_dtype(p->m, p->f->vals[op->args[0]].type));
    }
    opmap_put(p, op, (uint32_t)p->nloops);
    return p->nloops++;
}

/* A loop body: uses inside it by values defined before it last to its end. */
static int
walk_loop_regions(Walk *w, const IrOp *op, uint32_t pos)
{
    LoPlan *p = w->p;
    int saved = w->loop;
    w->loop = new_loop(w, op);
    w->depth++;
    int rc = 0;
    for (uint32_t r = 0; r < op->nregs && rc == 0; r++)
        rc = walk_block(w, op->regs[r]);
    w->depth--;
    w->loop = saved;
    uint32_t end = w->nord;
    for (uint32_t v = 1; v < p->f->nvals; v++) {
        LpVal *lv = &p->vals[v];
        if (lv->kind != LP_NONE && lv->def_pos < pos && lv->last_use > pos && lv->last_use <= end)
            lv->last_use = end;
    }
    return rc;
}

static int
walk_for(Walk *w, const IrOp *op, uint32_t pos)
{
    IrBlock *body = op->regs[0];
    define(w, body->args[0], pos, LP_SCALAR);
    w->depth++;
    w->p->vals[body->args[0]].depth = (uint8_t)w->depth;
    for (uint32_t i = 0; i + 3 < op->nargs; i++) {
        if (bind_carried(w, body->args[1 + i], op->args[3 + i], pos, op->loc) < 0)
            return -1;
        w->p->vals[body->args[1 + i]].depth = (uint8_t)w->depth;
    }
    w->depth--;
    if (walk_loop_regions(w, op, pos) < 0)
        return -1;
    for (uint32_t i = 0; i < op->nres; i++)
        if (bind_carried(w, op->res[i], op->args[3 + i], pos, op->loc) < 0)
            return -1;
    return 0;
}

static int
walk_while(Walk *w, const IrOp *op, uint32_t pos)
{
    IrBlock *before = op->regs[0], *after = op->regs[1];
    w->depth++;
    for (uint32_t i = 0; i < op->nargs; i++) {
        if (bind_carried(w, before->args[i], op->args[i], pos, op->loc) < 0 ||
            bind_carried(w, after->args[i], op->args[i], pos, op->loc) < 0)
            return -1;
        w->p->vals[before->args[i]].depth = w->p->vals[after->args[i]].depth = (uint8_t)w->depth;
    }
    w->depth--;
    if (walk_loop_regions(w, op, pos) < 0)
        return -1;
    for (uint32_t i = 0; i < op->nres; i++)
        if (bind_carried(w, op->res[i], op->args[i], pos, op->loc) < 0)
            return -1;
    return 0;
}

static int
walk_if(Walk *w, const IrOp *op, uint32_t pos)
{
    LoPlan *p = w->p;
    for (uint32_t i = 0; i < op->nres; i++) {
        CvKind k = carry_kind(p, op->res[i]);
        if (k == CV_PTR || k == CV_BPTR)
            return lp_error(p, op->loc, "pointers produced by an if/else are not supported; compute the offset instead");
    }
    for (uint32_t r = 0; r < op->nregs; r++)
        if (walk_block(w, op->regs[r]) < 0)
            return -1;
    for (uint32_t i = 0; i < op->nres; i++)
        define(w, op->res[i], pos, cv_kind[carry_kind(p, op->res[i])]);
    return 0;
}

/* Yields and conditions: carried pointers must keep their structure. */
static int
walk_yield(Walk *w, const IrOp *op)
{
    LoPlan *p = w->p;
    const IrOp *parent = op->parent->parent;
    if (!parent)
        return 0;
    if (op->opc == IR_CONDITION) {
        for (uint32_t i = 1; i < op->nargs; i++)
            if (check_carried(p, parent->args[i - 1], op->args[i], op->loc) < 0)
                return -1;
        return 0;
    }
    for (uint32_t i = 0; i < op->nargs; i++) {
        IrRef like = parent->opc == IR_FOR ? parent->args[3 + i] : parent->opc == IR_WHILE ? parent->args[i] : IR_NONE;
        if (like && check_carried(p, like, op->args[i], op->loc) < 0)
            return -1;
    }
    return 0;
}

/* Padding value of a tile load is uniform (a constant, a splat, a block pointer). */
static bool
pad_uniform(const LoPlan *p, const IrOp *ld)
{
    if (p->bp[ld->args[0]] || ld->nargs < 3)
        return true;
    const IrOp *od = p->f->vals[ld->args[2]].def;
    return od && (od->opc == IR_CONST || od->opc == IR_SPLAT);
}

static int
walk_load(Walk *w, const IrOp *op, uint32_t pos)
{
    LoPlan *p = w->p;
    IrRef r = op->res[0];
    LpMem *m = new_mem(p, op);
    lp_cost_add_mem(p, op, false, w->loop);
    BlockPtr *bp = p->bp[op->args[0]];
    if (!is_tile(p, r)) {
        define(w, r, pos, LP_SCALAR);
        if (bp)
            return lp_error(p, op->loc, "internal: scalar load from a block pointer");
        PtrForm *pf = lp_ptrform(p, op->args[0]);
        if (!pf || pf->ngen)
            return lp_error(p, op->loc, "unsupported pointer expression in tl.load");
        m->access = LA_SCALAR;
        m->param = pf->param;
        m->form = pf->off;
        return 0;
    }
    define(w, r, pos, LP_LOAD);
    m->pad_uniform = pad_uniform(p, op);
    if (bp) {
        m->access = LA_VIEW;
        m->param = bp->param;
        m->has_region = 1;
        lp_bptr_region(p, bp, op->ints, (int)op->nints, &m->reg);
        lp_bptr_form(p, bp, &m->form);
        return 0;
    }
    PtrForm *pf = lp_ptrform(p, op->args[0]);
    if (!pf)
        return lp_error(p, op->loc, "unsupported pointer expression in tl.load");
    m->param = pf->param;
    m->form = pf->off;
    int rank = ir_type_rank(p->m, p->f->vals[r].type);
    memset(&m->reg, 0, sizeof m->reg);
    m->reg.rank = rank;
    bool region_ok = !pf->ngen && (op->nargs < 2 || lp_mask_region(p, op->args[1], &m->reg) == 0);
    if (!region_ok) {
        m->access = LA_GATHER;
        remark(p, op->loc, "tl.load lowered to element-wise guarded loads (pointer or mask not analysable)");
        return 0;
    }
    m->has_region = 1;
    m->access = lp_form_has_wrap(&pf->off) ? LA_WRAP : LA_VIEW;
    return 0;
}

static int
walk_store(Walk *w, const IrOp *op, uint32_t pos)
{
    LoPlan *p = w->p;
    LpMem *m = new_mem(p, op);
    lp_cost_add_mem(p, op, true, w->loop);
    push_pos(&w->writes, &w->nwrites, &w->capwrites, pos);
    BlockPtr *bp = p->bp[op->args[0]];
    if (bp) {
        m->access = LA_VIEW;
        m->param = bp->param;
        m->has_region = 1;
        lp_bptr_region(p, bp, op->ints, (int)op->nints, &m->reg);
        lp_bptr_form(p, bp, &m->form);
        return 0;
    }
    PtrForm *pf = lp_ptrform(p, op->args[0]);
    if (!pf || (!is_tile(p, op->args[0]) && pf->ngen))
        return lp_error(p, op->loc, "unsupported pointer expression in tl.store");
    m->param = pf->param;
    m->form = pf->off;
    if (!is_tile(p, op->args[0])) {
        m->access = LA_SCALAR;
        return 0;
    }
    int rank = ir_type_rank(p->m, p->f->vals[op->args[0]].type);
    const int64_t *shape = ir_type_shape(p->m, p->f->vals[op->args[0]].type);
    memset(&m->reg, 0, sizeof m->reg);
    m->reg.rank = rank;
    bool ok = !pf->ngen && !lp_form_has_wrap(&pf->off) && (op->nargs < 3 || lp_mask_region(p, op->args[2], &m->reg) == 0);
    /* a store whose pointer repeats along a dim (coefficient 0) writes one address
     * from several lanes: element by element, in order */
    for (int k = 0; ok && k < rank; k++)
        if (ax_is_zero(pf->off.coef[k]) && shape[k] > 1)
            ok = false, m->repeats = 1;
    for (int i = 0; i < pf->ngen; i++) /* the offsets are read at the store */
        use(w, pf->gen[i], pos);
    if (!ok) {
        m->access = LA_GATHER;
        remark(p, op->loc, "tl.store lowered to element-wise guarded stores (pointer or mask not analysable)");
        return 0;
    }
    m->has_region = 1;
    m->access = LA_VIEW;
    return 0;
}

static int
walk_atomic(Walk *w, const IrOp *op, uint32_t pos)
{
    LoPlan *p = w->p;
    LpMem *m = new_mem(p, op);
    lp_cost_add_mem(p, op, true, w->loop);
    push_pos(&w->writes, &w->nwrites, &w->capwrites, pos);
    PtrForm *pf = lp_ptrform(p, op->args[0]);
    if (!pf || (!is_tile(p, op->args[0]) && pf->ngen))
        return lp_error(p, op->loc, "unsupported pointer expression in an atomic");
    m->param = pf->param;
    m->form = pf->off;
    bool tile = is_tile(p, op->args[0]);
    define(w, op->res[0], pos, tile ? LP_TENSOR : LP_SCALAR);
    m->access = tile ? LA_GATHER : LA_SCALAR;
    for (int i = 0; i < pf->ngen; i++)
        use(w, pf->gen[i], pos);
    if (tile)
        remark(p, op->loc, "atomic on a tile lowered to one atomic operation per element");
    return 0;
}

static int
walk_make_block_ptr(Walk *w, const IrOp *op, uint32_t pos)
{
    LoPlan *p = w->p;
    define(w, op->res[0], pos, LP_BPTR);
    PtrForm *pf = lp_ptrform(p, op->args[0]);
    if (!pf || pf->ngen || pf->off.rank)
        return lp_error(p, op->loc, "tl.make_block_ptr: base must be a pointer argument or an address cast to "
                                    "a pointer (plus offsets)");
    int r = (int)(op->nargs - 1) / 3;
    BlockPtr *bp = ir_new(&p->m->arena, BlockPtr);
    bp->param = pf->param;
    bp->elem = pf->elem;
    bp->rank = r;
    bp->base = pf->off.base;
    const int64_t *blk = ir_type_shape(p->m, ir_type_pointee(p->m, p->f->vals[op->res[0]].type));
    for (int k = 0; k < r; k++) {
        bp->shape[k] = ax_val(&p->x, op->args[1 + k]);
        bp->stride[k] = ax_val(&p->x, op->args[1 + r + k]);
        bp->off[k] = ax_val(&p->x, op->args[1 + 2 * r + k]);
        bp->block[k] = blk[k];
        bp->order[k] = op->ints[k];
    }
    p->bp[op->res[0]] = bp;
    return 0;
}

static int
walk_advance(Walk *w, const IrOp *op, uint32_t pos)
{
    LoPlan *p = w->p;
    define(w, op->res[0], pos, LP_BPTR);
    BlockPtr *x = p->bp[op->args[0]];
    if (!x)
        return lp_error(p, op->loc, "tl.advance: unsupported block pointer");
    BlockPtr *bp = ir_new(&p->m->arena, BlockPtr);
    *bp = *x;
    for (int k = 0; k < bp->rank; k++)
        bp->off[k] = ax_add(&p->x, x->off[k], ax_val(&p->x, op->args[1 + k]));
    p->bp[op->res[0]] = bp;
    return 0;
}

/* An integer cast to a pointer: a scalar is a base of its own (a memref at that
 * address, made where it stands); a tile is a gathered pointer whose gen[0] holds
 * the addresses. Either may point into any argument (lp_base_is_address). */
static int
walk_int_to_ptr(Walk *w, const IrOp *op, uint32_t pos)
{
    LoPlan *p = w->p;
    IrRef r = op->res[0];
    IrType t = p->f->vals[r].type, et = ir_type_elem(p->m, t);
    if (ir_type_is_tensor(p->m, ir_type_pointee(p->m, et)))
        return lp_error(p, op->loc, "an integer cast to a block pointer is not supported");
    define(w, r, pos, LP_PTR);
    int rank = ir_type_rank(p->m, t);
    PtrForm *q = ir_new(&p->m->arena, PtrForm);
    memset(q, 0, sizeof *q);
    q->param = new_base(p, rank ? LPB_ADDRESSES : LPB_ADDRESS);
    q->elem = ir_type_pointee(p->m, et);
    q->off.rank = rank;
    q->off.base = ax_const(&p->x, 0);
    for (int k = 0; k < rank; k++) {
        q->off.coef[k] = ax_const(&p->x, 0);
        q->gdm[0][k] = (int8_t)k;
    }
    if (rank) {
        q->abs = 1;
        q->ngen = 1;
        q->gen[0] = op->args[0];
    }
    p->ptr[r] = q;
    p->ptr_done[r] = 1;
    return 0;
}

/* The MLIR element a pointee is stored as (i1 as i8). */
static const char *
storage_name(const LoPlan *p, IrType elem)
{
    int d = ir_type_dtype(p->m, elem);
    return d == IR_I1 ? "i8" : ir_dtype_mlir((IrDtype)d);
}

/* A pointer cast to another element type. Stored alike (f32 and u32 to i32 ...),
 * the form is the source's; otherwise a base of its own (LPB_RECAST) at the
 * source's address, whose element offsets count the new elements: a scalar, or a
 * tile with affine offsets whose elements are a whole number of new ones wide. */
static int
walk_ptr_bitcast(Walk *w, const IrOp *op, uint32_t pos)
{
    LoPlan *p = w->p;
    IrRef r = op->res[0];
    define(w, r, pos, LP_PTR);
    IrType et = ir_type_elem(p->m, p->f->vals[r].type);
    if (ir_type_is_tensor(p->m, ir_type_pointee(p->m, et)))
        return lp_error(p, op->loc, "casting a block pointer to another type is not supported");
    PtrForm *x = lp_ptrform(p, op->args[0]);
    if (!x)
        return 0; /* reported at its use */
    IrType to = ir_type_pointee(p->m, et);
    PtrForm *q = ir_new(&p->m->arena, PtrForm);
    *q = *x;
    q->elem = to;
    p->ptr[r] = q;
    p->ptr_done[r] = 1;
    if (!strcmp(storage_name(p, x->elem), storage_name(p, to)))
        return 0;
    int sb = ir_dtype_bits((IrDtype)ir_type_dtype(p->m, x->elem)), db = ir_dtype_bits((IrDtype)ir_type_dtype(p->m, to));
    sb = sb < 8 ? 1 : sb / 8;
    db = db < 8 ? 1 : db / 8;
    bool offsets = x->ngen > 1 || !ax_is_zero(x->off.base);
    for (int k = 0; k < x->off.rank; k++)
        offsets |= !ax_is_zero(x->off.coef[k]);
    if (x->abs && offsets && sb != db)
        return lp_error(p, op->loc, "a tile of pointers with offsets cast to an element type of another size "
                                    "is not supported; cast the addresses first");
    if (x->abs)
        return 0; /* each element builds its memref of the new type */
    if (x->off.rank && sb != db && (x->ngen || lp_form_has_wrap(&x->off) || sb % db))
        return lp_error(p, op->loc, "a tile of pointers cast to a wider element type, or with gathered or "
                                    "wrapped offsets, is not supported; cast the scalar base pointer instead");
    q->param = new_base(p, LPB_RECAST);
    q->off.base = ax_const(&p->x, 0);
    for (int k = 0; k < q->off.rank; k++)
        q->off.coef[k] = ax_mul(&p->x, x->off.coef[k], ax_const(&p->x, sb / db));
    return 0;
}

/* The micro-kernel of a dot, an mr x nr block of C in vector registers: nr the
 * widest of 4, 2, 1 vectors (or part of one) dividing N that still leaves room for
 * at least 4 rows of accumulators beside its B vectors and one broadcast of A (none
 * where the FMA takes it from a scalar register, RVV); mr
 * the most rows that fit, or a divisor of M at most a quarter smaller (else the
 * emitter runs the last M % mr rows as a block of their own). 32 registers of 8
 * lanes (RVV at VLEN 256, fp32): 7 x 32; 32 of 16 (AVX-512): 6 x 64; 16 of 8 (AVX2):
 * 6 x 16. */
static void
plan_dot(LoPlan *p, const IrOp *op)
{
    if (p->ndots == p->capdots) {
        p->capdots = p->capdots ? p->capdots * 2 : 8;
        p->dots = realloc(p->dots, sizeof *p->dots * p->capdots);
        if (!p->dots)
            ir_die("out of memory");
    }
    LpDot *d = &p->dots[p->ndots];
    memset(d, 0, sizeof *d);
    d->op = op;
    IrType ct = p->f->vals[op->res[0]].type, at = p->f->vals[op->args[0]].type;
    int rank = ir_type_rank(p->m, ct);
    const int64_t *cs = ir_type_shape(p->m, ct);
    d->acc = ir_type_dtype(p->m, ct);
    int eb = (ir_dtype_bits((IrDtype)d->acc) + 7) / 8;
    int vl = p->opt->vector_bytes / eb;
    int regs = p->opt->vector_regs ? p->opt->vector_regs : p->opt->vector_bytes >= 64 ? 32 : 16;
    if (vl < 1)
        vl = 1;
    int64_t M = cs[rank - 2], N = cs[rank - 1];
    int nrc[] = {4 * vl, 2 * vl, vl, vl / 2, vl / 4, vl / 8, 1};
    int mmax = 1;
    d->nr = 1;
    for (size_t i = 0; i < sizeof nrc / sizeof *nrc; i++) {
        int nr = nrc[i], nv = nr > vl ? nr / vl : 1;
        if (nr < 1 || N % nr)
            continue;
        d->nr = nr;
        mmax = (regs - nv - !p->opt->fma_scalar_operand) / nv;
        if (mmax >= 4)
            break;
    }
    if (mmax < 1)
        mmax = 1;
    d->mr = (int)(M < mmax ? M : mmax);
    for (int m = d->mr; 4 * m >= 3 * d->mr; m--)
        if (M % m == 0) {
            d->mr = m;
            break;
        }
    int ea = ir_type_dtype(p->m, ir_type_elem(p->m, at));
    int ebt = ir_type_dtype(p->m, ir_type_elem(p->m, p->f->vals[op->args[1]].type));
    int64_t K = ir_type_shape(p->m, at)[rank - 1];
    d->a_copy = ea != d->acc;
    /* the pair dot product adds two k steps per lane: K even, whole vectors of N */
    d->bf16_pairs = p->opt->dot_bf16_pairs && rank == 2 && ea == IR_BF16 && ebt == IR_BF16 && d->acc == IR_F32 &&
                    K % 2 == 0 && d->nr % vl == 0 && (vl == 8 || vl == 16);
    opmap_put(p, op, p->ndots++);
}

/* After the loads are placed: A is read in place when it already is a dense tile
 * of the accumulator's type (a tensor, a lazy tile materialised dense, a
 * snapshot); a load read through its view is copied dense first — its rows are a
 * row stride apart in memory, a page each for large matrices, which the
 * micro-kernel's broadcasts would walk on every k step (TLB misses measured at
 * ~15% of a 1024^3 matmul). */
static void
finish_dots(LoPlan *p)
{
    for (uint32_t i = 0; i < p->ndots; i++) {
        LpDot *d = &p->dots[i];
        const LpVal *av = &p->vals[d->op->args[0]];
        d->a_copy |= av->kind == LP_LOAD && av->mat == LM_LAZY;
    }
}

static int
walk_op(Walk *w, const IrOp *op)
{
    LoPlan *p = w->p;
    IrFunc *f = p->f;
    uint32_t pos = add_op(w, op);
    for (uint32_t i = 0; i < op->nargs; i++)
        use(w, op->args[i], pos);
    IrRef r0 = op->nres ? op->res[0] : IR_NONE;
    bool tile = r0 && is_tile(p, r0);
    switch (op->opc) {
    case IR_GET_PROGRAM_ID:
    case IR_GET_NUM_PROGRAMS:
        define(w, r0, pos, LP_SCALAR);
        return 0;
    case IR_LOAD:
        return walk_load(w, op, pos);
    case IR_STORE:
        return walk_store(w, op, pos);
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS:
        return walk_atomic(w, op, pos);
    case IR_MAKE_TENSOR_PTR:
        return walk_make_block_ptr(w, op, pos);
    case IR_ADVANCE:
        return walk_advance(w, op, pos);
    case IR_ADDPTR:
        define(w, r0, pos, LP_PTR);
        return 0;
    case IR_PTR_BITCAST:
        return walk_ptr_bitcast(w, op, pos);
    case IR_SMT_ALLOC: { /* a local buffer: an argument of its own */
        define(w, r0, pos, LP_PTR);
        PtrForm *q = ir_new(&p->m->arena, PtrForm);
        q->param = new_base(p, LPB_LOCAL);
        q->elem = ir_type_pointee(p->m, f->vals[r0].type);
        q->off.base = ax_const(&p->x, 0);
        p->ptr[r0] = q;
        p->ptr_done[r0] = 1;
        return 0;
    }
    case IR_SPLAT:
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_TRANS:
        define(w, r0, pos, ir_type_is_ptr(p->m, ir_type_elem(p->m, f->vals[r0].type)) ? LP_PTR : LP_TILE);
        return 0;
    case IR_MAKE_RANGE:
        define(w, r0, pos, LP_TILE);
        return 0;
    case IR_DOT:
        define(w, r0, pos, LP_TENSOR);
        lp_cost_add_dot(p, op, w->loop);
        plan_dot(p, op);
        return 0;
    case IR_REDUCE:
        lp_cost_add_combine(p, op, w->loop);
        for (uint32_t i = 0; i < op->nres; i++)
            define(w, op->res[i], pos, is_tile(p, op->res[i]) ? LP_TENSOR : LP_SCALAR);
        return 0;
    case IR_SCAN:
        lp_cost_add_combine(p, op, w->loop);
        for (uint32_t i = 0; i < op->nres; i++)
            define(w, op->res[i], pos, LP_TENSOR);
        return 0;
    case IR_RESHAPE:
    case IR_CAT:
    case IR_JOIN:
    case IR_SPLIT:
    case IR_GATHER:
    case IR_HISTOGRAM:
        for (uint32_t i = 0; i < op->nres; i++)
            define(w, op->res[i], pos, LP_TENSOR);
        return 0;
    case IR_FOR:
        return walk_for(w, op, pos);
    case IR_WHILE:
        return walk_while(w, op, pos);
    case IR_IF:
        return walk_if(w, op, pos);
    case IR_YIELD:
    case IR_CONDITION:
        return walk_yield(w, op);
    case IR_RETURN:
        return 0;
    case IR_PROTON_RECORD:
        return scope_mark(p, op);
    case IR_PRINT:
        for (uint32_t i = 0; i < op->nargs; i++)
            if (ir_type_is_ptr(p->m, ir_type_elem(p->m, f->vals[op->args[i]].type)))
                return lp_error(p, op->loc, "tl.device_print of pointers is not supported by the CPU backend");
        return 0;
    case IR_ASSERT:
        if (is_tile(p, op->args[0]))
            return lp_error(p, op->loc, "internal: tt.assert of a tensor (the builder reduces it to one i1)");
        return 0;
    case IR_INT_TO_PTR:
        return walk_int_to_ptr(w, op, pos);
    case IR_PTR_TO_INT:
        if (!lp_ptrform(p, op->args[0]))
            return lp_error(p, op->loc, "pointer to integer: unsupported pointer expression (a block pointer?)");
        define(w, r0, pos, tile ? LP_TILE : LP_SCALAR);
        return 0;
    case IR_CALL:
    case IR_EXTERN_ELEM:
    case IR_ASSUME:
        return lp_error(p, op->loc, "%s is not supported by the CPU backend yet", ir_opc_name[op->opc]);
    default:
        break;
    }
    if (!strncmp(ir_opc_name[op->opc], "xsmt", 4))
        return lp_error(p, op->loc, "%s is not supported by the CPU backend yet", ir_opc_name[op->opc]);
    if (!(ir_opc_flags[op->opc] & IR_F_ELEM))
        return lp_error(p, op->loc, "internal: no lowering for %s", ir_opc_name[op->opc]);
    lp_cost_add_flops(p, op, w->loop);
    if (tile) {
        define(w, r0, pos, LP_TILE);
        return 0;
    }
    if (op->opc == IR_SELECT && ir_type_is_ptr(p->m, f->vals[r0].type))
        return lp_error(p, op->loc, "selecting between pointers is not supported yet");
    for (uint32_t i = 0; i < op->nargs; i++)
        if (is_tile(p, op->args[i]))
            return lp_error(p, op->loc, "internal: scalar op with a tensor operand");
    if (r0)
        define(w, r0, pos, LP_SCALAR);
    return 0;
}

static int
walk_block(Walk *w, const IrBlock *b)
{
    for (const IrOp *op = b->first; op; op = op->next)
        if (walk_op(w, op) < 0)
            return -1;
    return 0;
}

/* ---- pass 2: uses through lazy values ----------------------------------------------------- */

static void
pull(LoPlan *p, IrRef from, IrRef to)
{
    LpVal *a = &p->vals[to];
    const LpVal *r = &p->vals[from];
    if (r->last_use > a->last_use)
        a->last_use = r->last_use;
    if (r->use_depth > a->use_depth)
        a->use_depth = r->use_depth;
}

/* Is v read where its consumers are (a lazy tile, a lazy load, or a view of one)? */
static bool
read_late(const LoPlan *p, const IrOp *d, IrRef v)
{
    const LpVal *lv = &p->vals[v];
    if (lv->kind == LP_TILE || lv->kind == LP_LOAD)
        return true;
    return lv->kind == LP_TENSOR && d && (d->opc == IR_RESHAPE || d->opc == IR_SPLIT);
}

static void
propagate(LoPlan *p, Walk *w)
{
    for (uint32_t i = w->nord; i-- > 0;) {
        const IrOp *op = w->order[i];
        for (uint32_t r = 0; r < op->nres; r++) {
            IrRef v = op->res[r];
            if (!read_late(p, op, v))
                continue;
            for (uint32_t a = 0; a < op->nargs; a++)
                pull(p, v, op->args[a]);
            if (op->opc == IR_LOAD) { /* gathered offsets are read with the load */
                PtrForm *pf = p->bp[op->args[0]] ? NULL : lp_ptrform(p, op->args[0]);
                for (int g = 0; pf && g < pf->ngen; g++)
                    pull(p, v, pf->gen[g]);
            }
        }
    }
}

/* ---- pass 3: where loads are read ------------------------------------------------------------ */

static void
materialize_load(LoPlan *p, IrRef v, int why)
{
    LpVal *lv = &p->vals[v];
    if (lv->kind == LP_LOAD && lv->mat == LM_LAZY)
        lv->mat = (uint8_t)why;
}

/* May bases a and b reach the same memory? The same base does; a run-time
 * address may point anywhere; different arguments are assumed not to overlap
 * partially (docs/compiler.md §2.3). */
static bool
may_overlap(const LoPlan *p, int a, int b)
{
    return a == b || lp_base_is_address(p, a) || lp_base_is_address(p, b);
}

/* Is v a gathered load (read element by element inside its consumers' generics,
 * an LP_TILE)? Its elements are unknown, so any store may overwrite what it reads,
 * whatever the base (two arguments may be the same tensor): it is made safe by
 * computing it once where it stands (`shared`), before the store writes. */
static bool
is_gathered_load(const LoPlan *p, IrRef v)
{
    const IrOp *d = p->f->vals[v].def;
    return p->vals[v].kind == LP_TILE && d && d->opc == IR_LOAD && lp_mem(p, d);
}

/* Does a memory write lie between lv's definition and its last use? */
static bool
written_while_live(const Walk *w, const LpVal *lv)
{
    for (uint32_t i = 0; i < w->nwrites; i++)
        if (w->writes[i] > lv->def_pos && w->writes[i] < lv->last_use)
            return true;
    return false;
}

/* Loads behind a view (reshape, split) of a store's value: read through the view
 * while the store writes; a load of the store's argument is copied first. */
static void
alias_views(LoPlan *p, IrRef v, int param, int depth)
{
    const LpVal *lv = &p->vals[v];
    const IrOp *d = p->f->vals[v].def;
    if (!d || depth > 64)
        return;
    if (is_gathered_load(p, v)) {
        p->vals[v].shared = 1;
        return;
    }
    if (lv->kind == LP_LOAD) {
        const LpMem *m = lp_mem(p, d);
        if (m && may_overlap(p, m->param, param))
            materialize_load(p, v, LM_ALIAS);
        return;
    }
    if (!read_late(p, d, v))
        return;
    for (uint32_t a = 0; a < d->nargs; a++)
        alias_views(p, d->args[a], param, depth + 1);
}

/* Does load leaf 'ld' (read at iteration index j through dm) read exactly the
 * element the store writes at j? */
static bool
same_element(LoPlan *p, const LpMem *ld, const int8_t *dm, const LpMem *st)
{
    if (ld->access != LA_VIEW || ld->form.base != st->form.base || lp_form_has_wrap(&ld->form))
        return false;
    for (int j = 0; j < st->form.rank; j++) {
        const AExpr *c = ax_const(&p->x, 0);
        for (int k = 0; k < ld->form.rank; k++)
            if (dm[k] == j)
                c = ax_add(&p->x, c, ld->form.coef[k]);
        if (c != st->form.coef[j])
            return false;
    }
    return true;
}

/* Walks the lazy expression v of store st at dim map dm (v's dims -> the store's
 * iteration dims, -1: broadcast) and applies the alias rule to its load leaves. */
static void
alias_walk(LoPlan *p, const LpMem *st, IrRef v, const int8_t *dm, int depth)
{
    IrVal *val = &p->f->vals[v];
    int r = ir_type_rank(p->m, val->type);
    const LpVal *lv = &p->vals[v];
    const IrOp *d = val->def;
    if (r == 0 || !d || depth > 256)
        return;
    int8_t dm2[IR_MAX_RANK];
    switch (lv->kind) {
    case LP_LOAD: {
        const LpMem *m = lp_mem(p, d);
        /* the same element map proves nothing across two bases one of which is
         * a run-time address: their distance is unknown */
        if (lv->mat == LM_LAZY && m && (m->access == LA_GATHER || may_overlap(p, m->param, st->param)) &&
            (m->param != st->param || st->access != LA_VIEW || !same_element(p, m, dm, st)))
            materialize_load(p, v, LM_ALIAS);
        return;
    }
    case LP_TILE:
        if (is_gathered_load(p, v)) {
            p->vals[v].shared = 1;
            return;
        }
        break;
    case LP_TENSOR:
        if (d->opc == IR_RESHAPE || d->opc == IR_SPLIT)
            alias_views(p, d->args[0], st->param, 0);
        return;
    default:
        return;
    }
    switch (d->opc) {
    case IR_BROADCAST: {
        const int64_t *xs = ir_type_shape(p->m, p->f->vals[d->args[0]].type);
        for (int k = 0; k < r; k++)
            dm2[k] = xs[k] == 1 ? -1 : dm[k];
        alias_walk(p, st, d->args[0], dm2, depth + 1);
        return;
    }
    case IR_EXPAND_DIMS:
        for (int k = 0, j = 0; k < r; k++)
            if (k != d->i[0])
                dm2[j++] = dm[k];
        alias_walk(p, st, d->args[0], dm2, depth + 1);
        return;
    case IR_TRANS:
        for (int k = 0; k < r; k++)
            dm2[d->ints[k]] = dm[k];
        alias_walk(p, st, d->args[0], dm2, depth + 1);
        return;
    case IR_SPLAT:
    case IR_CONST:
    case IR_MAKE_RANGE:
        return;
    default:
        for (uint32_t a = 0; a < d->nargs; a++)
            alias_walk(p, st, d->args[a], dm, depth + 1);
    }
}

static void
decide_loads(LoPlan *p, const Walk *w)
{
    for (uint32_t v = 1; v < p->f->nvals; v++) {
        LpVal *lv = &p->vals[v];
        if (is_gathered_load(p, v) && written_while_live(w, lv)) /* as LM_WRITE */
            lv->shared = 1;
        if (lv->kind != LP_LOAD)
            continue;
        const LpMem *m = lp_mem(p, p->f->vals[v].def);
        if (m && m->access == LA_WRAP) {
            lv->mat = LM_WRAP;
            continue;
        }
        if (written_while_live(w, lv))
            lv->mat = LM_WRITE;
        if (lv->mat == LM_LAZY && lv->use_depth > lv->depth)
            lv->mat = LM_LOOP;
    }
    /* stores through views and scattered stores: a scatter's element map proves nothing */
    for (uint32_t i = 0; i < p->nmems; i++) {
        const LpMem *st = &p->mems[i];
        if (st->op->opc != IR_STORE || (st->access != LA_VIEW && st->access != LA_GATHER))
            continue;
        int8_t dm[IR_MAX_RANK];
        for (int k = 0; k < IR_MAX_RANK; k++)
            dm[k] = (int8_t)k;
        alias_walk(p, st, st->op->args[1], dm, 0);
    }
}

/* Drops from boundary b's list the tiles computed inside others on it: every direct
 * user of such a v is an op of the boundary's segment (order indices lo..hi-1) whose
 * results are all on the list, so materialising those builds v into their generic and
 * v needs no tile of its own (a constant splat, or each step of x * 2.0 + 1.0, would
 * otherwise be a stack tile written and read back inside the scope). 'mark' has a
 * zero byte per value and is left zeroed. */
static void
drop_fused(const Walk *w, LpBarrier *b, uint32_t lo, uint32_t hi, uint8_t *mark)
{
    enum { LISTED = 1, USED = 2, KEEP = 4 };
    for (uint32_t k = 0; k < b->n; k++)
        mark[b->vals[k]] = LISTED;
    for (uint32_t j = lo; j < w->nord; j++) {
        const IrOp *u = w->order[j];
        bool fusing = j < hi && u->nres;
        for (uint32_t r = 0; r < u->nres && fusing; r++)
            fusing = mark[u->res[r]] & LISTED;
        for (uint32_t a = 0; a < u->nargs; a++)
            if (mark[u->args[a]] & LISTED)
                mark[u->args[a]] |= fusing ? USED : KEEP;
    }
    uint32_t kept = 0;
    for (uint32_t k = 0; k < b->n; k++) {
        IrRef v = b->vals[k];
        if (mark[v] != (LISTED | USED))
            b->vals[kept++] = v;
        mark[v] = 0;
    }
    b->n = kept;
}

/* In-kernel scope boundaries: the lazy tiles defined since the previous boundary
 * and still used after this one are materialised here, so `pl.enter_scope("load")
 * ... pl.exit_scope("load")` measures the load instead of the later store that
 * would otherwise absorb it; those only read by others materialised here are built
 * into them (drop_fused). Integer index arithmetic stays lazy. */
static int
plan_barriers(LoPlan *p, const Walk *w)
{
    IrRef *pending = NULL;
    uint32_t npend = 0, cappend = 0, seg = 0;
    int rc = 0;
    uint8_t *mark = calloc(p->f->nvals ? p->f->nvals : 1, 1);
    if (!mark)
        ir_die("out of memory");
    for (uint32_t i = 0; i < w->nord; i++) {
        const IrOp *op = w->order[i];
        uint32_t pos = i + 1;
        if (op->opc == IR_PROTON_RECORD && p->opt->instrument) {
            int id = scope_intern(p, op);
            if (id < 0) {
                rc = id;
                break;
            }
            if (p->nbarriers == p->capbarriers) {
                p->capbarriers = p->capbarriers ? p->capbarriers * 2 : 8;
                p->barriers = realloc(p->barriers, sizeof *p->barriers * p->capbarriers);
                if (!p->barriers)
                    ir_die("out of memory");
            }
            LpBarrier *b = &p->barriers[p->nbarriers];
            memset(b, 0, sizeof *b);
            b->op = op;
            b->scope_id = id;
            for (uint32_t k = 0; k < npend; k++) {
                IrRef v = pending[k];
                const LpVal *lv = &p->vals[v];
                int dt = ir_type_dtype(p->m, p->f->vals[v].type);
                if (lv->last_use <= pos || (lv->kind == LP_LOAD && lv->mat != LM_LAZY))
                    continue;
                if (lv->kind != LP_LOAD && !(dt >= 0 && ir_dtype_is_float((IrDtype)dt)))
                    continue;
                if (!b->vals)
                    b->vals = ir_newv(&p->m->arena, IrRef, npend);
                b->vals[b->n++] = v;
            }
            if (b->n)
                drop_fused(w, b, seg, i, mark);
            opmap_put(p, op, p->nbarriers++);
            npend = 0;
            seg = i + 1;
            continue;
        }
        for (uint32_t r = 0; r < op->nres; r++) {
            uint8_t k = p->vals[op->res[r]].kind;
            if (k != LP_TILE && k != LP_LOAD)
                continue;
            push_pos((uint32_t **)&pending, &npend, &cappend, op->res[r]);
        }
    }
    free(pending);
    free(mark);
    return rc;
}

/* ---- the plan --------------------------------------------------------------------------------- */

LoPlan *
lp_plan_create(IrModule *m, IrFunc *f, const LoOptions *opt)
{
    LoPlan *p = calloc(1, sizeof *p);
    if (!p)
        ir_die("out of memory");
    p->m = m;
    p->f = f;
    p->opt = opt;
    lx_init(&p->x, m, f);
    uint32_t n = f->nvals;
    p->vals = calloc(n, sizeof *p->vals);
    p->aform = calloc(n, sizeof *p->aform);
    p->aform_done = calloc(n, 1);
    p->ptr = calloc(n, sizeof *p->ptr);
    p->ptr_done = calloc(n, 1);
    p->bp = calloc(n, sizeof *p->bp);
    p->scope_names = ir_newv(&m->arena, const char *, IR_MAX_SCOPES);
    if (!p->vals || !p->aform || !p->aform_done || !p->ptr || !p->ptr_done || !p->bp)
        ir_die("out of memory");
    lp_cost_init(p);
    for (uint32_t i = 0; i < f->body->nargs; i++) {
        IrRef a = f->body->args[i];
        p->vals[a].kind = ir_type_is_ptr(m, f->vals[a].type) ? LP_PTR : LP_SCALAR;
    }
    Walk w = {.p = p, .loop = -1};
    if (walk_block(&w, f->body) == 0) {
        propagate(p, &w);
        decide_loads(p, &w);
        finish_dots(p);
        lp_plan_share(p, w.order, w.nord);
        plan_barriers(p, &w);
    }
    free(w.order);
    free(w.writes);
    return p;
}

void
lp_plan_destroy(LoPlan *p)
{
    if (!p)
        return;
    lx_fini(&p->x);
    free(p->vals);
    free(p->aform);
    free(p->aform_done);
    free(p->ptr);
    free(p->ptr_done);
    free(p->bp);
    free(p->mems);
    free(p->loops);
    free(p->barriers);
    free(p->dots);
    free(p->base_kind);
    free(p->opmap);
    free(p->cells);
    free(p->scells);
    free(p);
}
