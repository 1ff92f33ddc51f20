/*
 * test_lo_plan.c — the lowering's plan (lo_plan*.c), tested directly: value
 * kinds, pointer forms with wrap-around, mask regions, where loads are read
 * (the alias rules), access modes and remarks of the fallbacks, and the static
 * cost with symbolic loop trip counts. Each case parses a TTIR kernel, runs the
 * IR pipeline and asks the plan; no MLIR is involved.
 */
#include "lo_int.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct Case {
    IrModule *m;
    IrFunc *f;
    LoPlan *p;
    LoOptions opt;
} Case;

static void
open_case(Case *k, const char *text)
{
    memset(k, 0, sizeof *k);
    k->m = ir_parse_module(text, strlen(text), "case.ttir", stderr);
    assert_non_null(k->m);
    assert_int_equal(ir_pipeline_run(k->m, NULL), 0);
    for (IrFunc *g = k->m->funcs; g; g = g->next)
        if (g->is_public)
            k->f = g;
    assert_non_null(k->f);
    k->opt.vector_bytes = 32;
    k->opt.instrument = true;
    k->p = lp_plan_create(k->m, k->f, &k->opt);
    assert_non_null(k->p);
}

static void
close_case(Case *k)
{
    lp_plan_destroy(k->p);
    ir_module_destroy(k->m);
}

typedef struct Find {
    int opc, n;
    IrOp *hit;
} Find;

static void
find_visit(IrOp *op, void *user)
{
    Find *fd = user;
    if (op->opc == fd->opc && fd->n-- == 0 && !fd->hit)
        fd->hit = op;
}

/* The n-th op (from 0, pre-order) with opcode opc. */
static IrOp *
nth(Case *k, int opc, int n)
{
    Find fd = {opc, n, NULL};
    ir_walk(k->f->body, find_visit, &fd);
    assert_non_null(fd.hit);
    return fd.hit;
}

static int
count_remarks(Case *k, const char *needle)
{
    int n = 0, sev;
    const char *file, *msg;
    int line, col;
    for (int i = 0; (msg = ir_module_diag(k->m, i, &sev, &file, &line, &col)); i++)
        n += sev == 2 && strstr(msg, needle) != NULL;
    return n;
}

/* ---- kinds and forms ------------------------------------------------------------------ */

static const char vadd[] =
    "module {\n"
    "  tt.func public @vadd(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %o: !tt.ptr<f32>, %n: i32) {\n"
    "    %c = arith.constant 128 : i32\n"
    "    %pid = tt.get_program_id x : i32\n"
    "    %b = arith.muli %pid, %c : i32\n"
    "    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>\n"
    "    %bs = tt.splat %b : i32 -> tensor<128xi32>\n"
    "    %offs = arith.addi %bs, %r : tensor<128xi32>\n"
    "    %ns = tt.splat %n : i32 -> tensor<128xi32>\n"
    "    %m = arith.cmpi slt, %offs, %ns : tensor<128xi32>\n"
    "    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>\n"
    "    %xp = tt.addptr %xs, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>\n"
    "    %xv = tt.load %xp, %m : tensor<128x!tt.ptr<f32>>\n"
    "    %ys = tt.splat %y : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>\n"
    "    %yp = tt.addptr %ys, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>\n"
    "    %yv = tt.load %yp, %m : tensor<128x!tt.ptr<f32>>\n"
    "    %s = arith.addf %xv, %yv : tensor<128xf32>\n"
    "    %os = tt.splat %o : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>\n"
    "    %op = tt.addptr %os, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>\n"
    "    tt.store %op, %s, %m : tensor<128x!tt.ptr<f32>>\n"
    "    tt.return\n"
    "  }\n"
    "}\n";

static void
test_kinds_forms_regions(void **state)
{
    Case k;
    open_case(&k, vadd);
    LoExprs *x = lp_exprs(k.p);
    IrOp *ld0 = nth(&k, IR_LOAD, 0), *st = nth(&k, IR_STORE, 0), *add = nth(&k, IR_ADDF, 0);
    assert_int_equal(lp_val(k.p, ld0->res[0])->kind, LP_LOAD);
    assert_int_equal(lp_val(k.p, ld0->res[0])->mat, LM_LAZY);
    assert_int_equal(lp_val(k.p, add->res[0])->kind, LP_TILE);
    assert_int_equal(lp_val(k.p, ld0->args[0])->kind, LP_PTR);
    /* x + pid*128 + i: argument 0, base pid*128, coefficient 1 */
    const LpMem *m = lp_mem(k.p, ld0);
    assert_int_equal(m->access, LA_VIEW);
    assert_int_equal(m->param, 0);
    IrRef pid = nth(&k, IR_GET_PROGRAM_ID, 0)->res[0];
    assert_ptr_equal(m->form.base, ax_mul(x, ax_val(x, pid), ax_const(x, 128)));
    assert_ptr_equal(m->form.coef[0], ax_const(x, 1));
    /* offs < n: i < n - pid*128 */
    assert_true(m->has_region);
    assert_null(m->reg.lo[0]);
    IrRef n = k.f->body->args[3];
    assert_ptr_equal(m->reg.hi[0], ax_sub(x, ax_val(x, n), m->form.base));
    /* the store writes the elements it reads at each iteration: nothing moves */
    const LpMem *s = lp_mem(k.p, st);
    assert_int_equal(s->access, LA_VIEW);
    assert_int_equal(s->param, 2);
    assert_ptr_equal(s->reg.hi[0], m->reg.hi[0]);
    assert_int_equal(count_remarks(&k, "lowered"), 0);
    close_case(&k);
}

/* ---- where loads are read ------------------------------------------------------------- */

/* Two loads, then two stores that swap the arrays: the first load is still used
 * after the first store, so it is copied where it stands. */
static const char swap[] =
    "module {\n"
    "  tt.func public @swap(%a: !tt.ptr<f32>, %b: !tt.ptr<f32>) {\n"
    "    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>\n"
    "    %as = tt.splat %a : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>\n"
    "    %ap = tt.addptr %as, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>\n"
    "    %av = tt.load %ap : tensor<64x!tt.ptr<f32>>\n"
    "    %bs = tt.splat %b : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>\n"
    "    %bp = tt.addptr %bs, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>\n"
    "    %bv = tt.load %bp : tensor<64x!tt.ptr<f32>>\n"
    "    tt.store %ap, %bv : tensor<64x!tt.ptr<f32>>\n"
    "    tt.store %bp, %av : tensor<64x!tt.ptr<f32>>\n"
    "    tt.return\n"
    "  }\n"
    "}\n";

static void
test_load_before_store(void **state)
{
    Case k;
    open_case(&k, swap);
    IrRef a = nth(&k, IR_LOAD, 0)->res[0], b = nth(&k, IR_LOAD, 1)->res[0];
    assert_int_equal(lp_val(k.p, a)->mat, LM_WRITE);
    assert_int_equal(lp_val(k.p, b)->mat, LM_LAZY); /* read by the store it feeds, before it writes */
    close_case(&k);
}

/* z = x + z[row 0] broadcast over rows, stored into z: fused, the store would
 * overwrite row 0 before the later rows read it. */
static const char add_row[] =
    "module {\n"
    "  tt.func public @add_row(%x: !tt.ptr<f32>, %z: !tt.ptr<f32>) {\n"
    "    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>\n"
    "    %c = arith.constant dense<16> : tensor<16x1xi32>\n"
    "    %r0 = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>\n"
    "    %r1 = arith.muli %r0, %c : tensor<16x1xi32>\n"
    "    %rb = tt.broadcast %r1 : tensor<16x1xi32> -> tensor<16x16xi32>\n"
    "    %c0 = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>\n"
    "    %cb = tt.broadcast %c0 : tensor<1x16xi32> -> tensor<16x16xi32>\n"
    "    %offs = arith.addi %rb, %cb : tensor<16x16xi32>\n"
    "    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>\n"
    "    %xp = tt.addptr %xs, %offs : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>\n"
    "    %xv = tt.load %xp : tensor<16x16x!tt.ptr<f32>>\n"
    "    %zs = tt.splat %z : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>\n"
    "    %zp = tt.addptr %zs, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>\n"
    "    %zv = tt.load %zp : tensor<16x!tt.ptr<f32>>\n"
    "    %ze = tt.expand_dims %zv {axis = 0 : i32} : tensor<16xf32> -> tensor<1x16xf32>\n"
    "    %zb = tt.broadcast %ze : tensor<1x16xf32> -> tensor<16x16xf32>\n"
    "    %s = arith.addf %xv, %zb : tensor<16x16xf32>\n"
    "    %zs2 = tt.splat %z : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>\n"
    "    %zp2 = tt.addptr %zs2, %offs : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>\n"
    "    tt.store %zp2, %s : tensor<16x16x!tt.ptr<f32>>\n"
    "    tt.return\n"
    "  }\n"
    "}\n";

static void
test_alias_rule(void **state)
{
    Case k;
    open_case(&k, add_row);
    IrRef xv = nth(&k, IR_LOAD, 0)->res[0], zv = nth(&k, IR_LOAD, 1)->res[0];
    assert_int_equal(lp_val(k.p, xv)->mat, LM_LAZY);  /* another argument */
    assert_int_equal(lp_val(k.p, zv)->mat, LM_ALIAS); /* the store's own argument, another map */
    close_case(&k);
}

/* In place: y[i] = 2 * y[i] reads and writes the same element: stays fused. */
static const char inplace[] =
    "module {\n"
    "  tt.func public @inplace(%y: !tt.ptr<f32>) {\n"
    "    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>\n"
    "    %ys = tt.splat %y : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>\n"
    "    %yp = tt.addptr %ys, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>\n"
    "    %v = tt.load %yp : tensor<64x!tt.ptr<f32>>\n"
    "    %two = arith.constant dense<2.0> : tensor<64xf32>\n"
    "    %d = arith.mulf %v, %two : tensor<64xf32>\n"
    "    tt.store %yp, %d : tensor<64x!tt.ptr<f32>>\n"
    "    tt.return\n"
    "  }\n"
    "}\n";

static void
test_in_place_stays_fused(void **state)
{
    Case k;
    open_case(&k, inplace);
    assert_int_equal(lp_val(k.p, nth(&k, IR_LOAD, 0)->res[0])->mat, LM_LAZY);
    close_case(&k);
}

/* A load outside a loop, used through a lazy product inside it: read once
 * before the loop (the loop stores into the same array). */
static const char loop_use[] =
    "module {\n"
    "  tt.func public @loop_use(%y: !tt.ptr<f32>, %n: i32) {\n"
    "    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>\n"
    "    %ys = tt.splat %y : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>\n"
    "    %yp = tt.addptr %ys, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>\n"
    "    %v = tt.load %yp : tensor<64x!tt.ptr<f32>>\n"
    "    %two = arith.constant dense<2.0> : tensor<64xf32>\n"
    "    %d = arith.mulf %v, %two : tensor<64xf32>\n"
    "    %c0 = arith.constant 0 : i32\n"
    "    %c1 = arith.constant 1 : i32\n"
    "    scf.for %i = %c0 to %n step %c1 : i32 {\n"
    "      tt.store %yp, %d : tensor<64x!tt.ptr<f32>>\n"
    "    }\n"
    "    tt.return\n"
    "  }\n"
    "}\n";

static void
test_loop_use(void **state)
{
    Case k;
    open_case(&k, loop_use);
    const LpVal *v = lp_val(k.p, nth(&k, IR_LOAD, 0)->res[0]);
    assert_true(v->mat == LM_LOOP || v->mat == LM_WRITE);
    assert_true(v->use_depth > v->depth);
    close_case(&k);
}

/* ---- wrap-around and fallbacks ----------------------------------------------------------- */

/* rows (pid*32 + i) % M: a wrapped dim, read as contiguous chunks; gathered and
 * masked-by-data loads and stores fall back with a remark. */
static const char wrap_gather[] =
    "module {\n"
    "  tt.func public @wg(%a: !tt.ptr<f32>, %idx: !tt.ptr<i32>, %o: !tt.ptr<f32>, %M: i32, %sa: i32) {\n"
    "    %c32 = arith.constant 32 : i32\n"
    "    %pid = tt.get_program_id x : i32\n"
    "    %b = arith.muli %pid, %c32 : i32\n"
    "    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>\n"
    "    %bs = tt.splat %b : i32 -> tensor<32xi32>\n"
    "    %rows = arith.addi %bs, %r : tensor<32xi32>\n"
    "    %Ms = tt.splat %M : i32 -> tensor<32xi32>\n"
    "    %wr = arith.remsi %rows, %Ms : tensor<32xi32>\n"
    "    %sas = tt.splat %sa : i32 -> tensor<32xi32>\n"
    "    %ro = arith.muli %wr, %sas : tensor<32xi32>\n"
    "    %as = tt.splat %a : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>\n"
    "    %ap = tt.addptr %as, %ro : tensor<32x!tt.ptr<f32>>, tensor<32xi32>\n"
    "    %av = tt.load %ap : tensor<32x!tt.ptr<f32>>\n"
    "    %is = tt.splat %idx : !tt.ptr<i32> -> tensor<32x!tt.ptr<i32>>\n"
    "    %ip = tt.addptr %is, %r : tensor<32x!tt.ptr<i32>>, tensor<32xi32>\n"
    "    %iv = tt.load %ip : tensor<32x!tt.ptr<i32>>\n"
    "    %gp = tt.addptr %as, %iv : tensor<32x!tt.ptr<f32>>, tensor<32xi32>\n"
    "    %gv = tt.load %gp : tensor<32x!tt.ptr<f32>>\n"
    "    %s = arith.addf %av, %gv : tensor<32xf32>\n"
    "    %os = tt.splat %o : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>\n"
    "    %op = tt.addptr %os, %iv : tensor<32x!tt.ptr<f32>>, tensor<32xi32>\n"
    "    tt.store %op, %s : tensor<32x!tt.ptr<f32>>\n"
    "    tt.return\n"
    "  }\n"
    "}\n";

static void
test_wrap_and_fallbacks(void **state)
{
    Case k;
    open_case(&k, wrap_gather);
    LoExprs *x = lp_exprs(k.p);
    IrOp *wl = nth(&k, IR_LOAD, 0), *gl = nth(&k, IR_LOAD, 2), *st = nth(&k, IR_STORE, 0);
    const LpMem *w = lp_mem(k.p, wl);
    assert_int_equal(w->access, LA_WRAP);
    assert_int_equal(lp_val(k.p, wl->res[0])->mat, LM_WRAP);
    IrRef pid = nth(&k, IR_GET_PROGRAM_ID, 0)->res[0], M = k.f->body->args[3], sa = k.f->body->args[4];
    assert_ptr_equal(w->form.wrap[0], ax_val(x, M));
    assert_ptr_equal(w->form.wbase[0], ax_mul(x, ax_val(x, pid), ax_const(x, 32)));
    assert_ptr_equal(w->form.coef[0], ax_val(x, sa));
    assert_true(ax_is_zero(w->form.base));
    assert_int_equal(lp_mem(k.p, gl)->access, LA_GATHER);
    assert_int_equal(lp_mem(k.p, st)->access, LA_GATHER);
    assert_int_equal(count_remarks(&k, "tl.load lowered to element-wise guarded loads"), 1);
    assert_int_equal(count_remarks(&k, "tl.store lowered to element-wise guarded stores"), 1);
    close_case(&k);
}

/* ---- cost with symbolic trip counts ------------------------------------------------------ */

/* row sums over K in steps of 64: the loop runs K / 64 times */
static const char rowsum[] =
    "module {\n"
    "  tt.func public @rowsum(%x: !tt.ptr<f32>, %o: !tt.ptr<f32>, %K: i32) {\n"
    "    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>\n"
    "    %z = arith.constant dense<0.0> : tensor<64xf32>\n"
    "    %c0 = arith.constant 0 : i32\n"
    "    %c64 = arith.constant 64 : i32\n"
    "    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>\n"
    "    %acc = scf.for %k = %c0 to %K step %c64 iter_args(%a = %z) -> (tensor<64xf32>) : i32 {\n"
    "      %ks = tt.splat %k : i32 -> tensor<64xi32>\n"
    "      %offs = arith.addi %ks, %r : tensor<64xi32>\n"
    "      %p = tt.addptr %xs, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>\n"
    "      %v = tt.load %p : tensor<64x!tt.ptr<f32>>\n"
    "      %s = arith.addf %a, %v : tensor<64xf32>\n"
    "      scf.yield %s : tensor<64xf32>\n"
    "    }\n"
    "    %t = \"tt.reduce\"(%acc) <{axis = 0 : i32}> ({\n"
    "    ^bb0(%l: f32, %rr: f32):\n"
    "      %q = arith.addf %l, %rr : f32\n"
    "      tt.reduce.return %q : f32\n"
    "    }) : (tensor<64xf32>) -> f32\n"
    "    tt.store %o, %t : !tt.ptr<f32>\n"
    "    tt.return\n"
    "  }\n"
    "}\n";

static int64_t
k_is_256(void *user, IrRef v, bool *ok)
{
    Case *k = user;
    *ok = v == k->f->body->args[2];
    return 256;
}

static void
test_symbolic_trip_counts(void **state)
{
    Case k;
    open_case(&k, rowsum);
    assert_int_equal(lp_num_loops(k.p), 1);
    const LpLoop *l = lp_loop_at(k.p, 0);
    assert_int_equal(l->trips, -1);
    assert_int_equal(lp_loop_trips(l, k_is_256, &k), 4);
    IrCost once, four;
    lp_cost(k.p, &once);
    assert_int_equal(once.exact, 0);
    assert_int_equal(once.bytes_loaded, 64 * 4);
    assert_int_equal(once.bytes_stored, 4);
    assert_int_equal(lp_cost_eval(k.p, k_is_256, &k, &four), 0);
    assert_int_equal(four.exact, 1);
    assert_int_equal(four.bytes_loaded, 4 * 64 * 4);
    assert_int_equal(four.bytes_stored, 4);
    /* ir_accum carries the sum reduced: per trip the chunk's 63-add reduction and one add */
    assert_true(four.flops[1] == 4 * (63.0 + 1.0));
    /* the program the runtime evaluates: the loop's bounds read parameter 2 (n) */
    char prog[IR_COST_PROGRAM_MAX];
    assert_true(lp_cost_program(k.p, prog, sizeof prog) > 0);
    assert_non_null(strstr(prog, "cost 1 1 2 0\n"));
    assert_non_null(strstr(prog, "a2:s"));
    assert_int_equal(lp_cost_program(k.p, prog, 16), 0); /* too small: none */
    assert_string_equal(prog, "");
    close_case(&k);
}

/* An address loaded from a table and cast to a pointer is a base of its own
 * (a view, like an argument's); the in-place y[i] = 2 * y[i] through it stays
 * fused, but a load through it fused into a store to an argument is copied (the
 * address may point into that argument), and so is the argument's load fused
 * into a store through it. A tile of addresses gathers. */
static const char addresses[] =
    "module {\n"
    "  tt.func public @addresses(%tab: !tt.ptr<i64>, %z: !tt.ptr<f32>) {\n"
    "    %a = tt.load %tab : !tt.ptr<i64>\n"
    "    %y = tt.int_to_ptr %a : i64 -> !tt.ptr<f32>\n"
    "    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>\n"
    "    %ys = tt.splat %y : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>\n"
    "    %yp = tt.addptr %ys, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>\n"
    "    %v = tt.load %yp : tensor<64x!tt.ptr<f32>>\n"
    "    %one = arith.constant dense<1.0> : tensor<64xf32>\n"
    "    %d = arith.addf %one, %v : tensor<64xf32>\n"
    "    tt.store %yp, %d : tensor<64x!tt.ptr<f32>>\n"
    "    %zs = tt.splat %z : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>\n"
    "    %zp = tt.addptr %zs, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>\n"
    "    %w = tt.load %yp : tensor<64x!tt.ptr<f32>>\n"
    "    tt.store %zp, %w : tensor<64x!tt.ptr<f32>>\n"
    "    %u = tt.load %zp : tensor<64x!tt.ptr<f32>>\n"
    "    tt.store %yp, %u : tensor<64x!tt.ptr<f32>>\n"
    "    %ts = tt.splat %tab : !tt.ptr<i64> -> tensor<64x!tt.ptr<i64>>\n"
    "    %tp = tt.addptr %ts, %r : tensor<64x!tt.ptr<i64>>, tensor<64xi32>\n"
    "    %as = tt.load %tp : tensor<64x!tt.ptr<i64>>\n"
    "    %ps = tt.int_to_ptr %as : tensor<64xi64> -> tensor<64x!tt.ptr<f32>>\n"
    "    %g = tt.load %ps : tensor<64x!tt.ptr<f32>>\n"
    "    tt.store %zp, %g : tensor<64x!tt.ptr<f32>>\n"
    "    tt.return\n"
    "  }\n"
    "}\n";

static void
test_run_time_addresses(void **state)
{
    Case k;
    open_case(&k, addresses);
    const IrOp *l0 = nth(&k, IR_LOAD, 1), *l1 = nth(&k, IR_LOAD, 2), *l2 = nth(&k, IR_LOAD, 3);
    const LpMem *m0 = lp_mem(k.p, l0);
    assert_int_equal(m0->access, LA_VIEW);
    assert_int_equal(m0->param, 2); /* after the two arguments */
    assert_int_equal(lp_base_kind(k.p, 2), LPB_ADDRESS);
    assert_true(lp_base_is_address(k.p, 2));
    assert_false(lp_base_is_address(k.p, 1));
    assert_int_equal(lp_val(k.p, l0->res[0])->mat, LM_LAZY);  /* same base, same element */
    assert_int_equal(lp_val(k.p, l1->res[0])->mat, LM_ALIAS); /* into z: may overlap */
    assert_int_equal(lp_val(k.p, l2->res[0])->mat, LM_ALIAS); /* z's, into the address */
    const IrOp *g = nth(&k, IR_LOAD, 5);
    const LpMem *mg = lp_mem(k.p, g);
    assert_int_equal(mg->access, LA_GATHER);
    assert_int_equal(lp_base_kind(k.p, mg->param), LPB_ADDRESSES);
    assert_true(lp_ptrform(k.p, g->args[0])->abs);
    assert_int_equal(count_remarks(&k, "tl.load lowered to element-wise guarded loads"), 1);
    close_case(&k);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds_forms_regions), cmocka_unit_test(test_load_before_store),
        cmocka_unit_test(test_alias_rule),          cmocka_unit_test(test_in_place_stays_fused),
        cmocka_unit_test(test_loop_use),            cmocka_unit_test(test_wrap_and_fallbacks),
        cmocka_unit_test(test_symbolic_trip_counts), cmocka_unit_test(test_run_time_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
