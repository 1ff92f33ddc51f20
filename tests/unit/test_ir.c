/*
 * test_ir.c — unit tests of the tile IR text form, verifier and passes:
 * building IR through ir_core.c and printing it, print -> parse -> print round
 * trips (every op of ir_ops.h must be covered), parser and verifier errors with
 * exact messages and locations, float constants, and each pass on small inputs.
 * The corpus of every op is tests/ir/syntax1.ttir (read relative to this file).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_int.h"

/* ---- helpers ----------------------------------------------------------------------------- */

static char *
print_mod(IrModule *m, unsigned flags)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ir_print_module(f, m, flags);
    fclose(f);
    return buf;
}

/* Parses text; returns the module or NULL, with the error text in *err (malloc'ed). */
static IrModule *
parse(const char *text, char **err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    IrModule *m = ir_parse_module(text, strlen(text), "t.ttir", f);
    fclose(f);
    if (err)
        *err = buf;
    else
        free(buf);
    return m;
}

/* print(parse(text)) must equal print(parse(print(parse(text)))); returns the print. */
static char *
roundtrip(const char *text)
{
    char *err;
    IrModule *m = parse(text, &err);
    if (!m)
        fail_msg("parse failed:\n%s\n--- input:\n%s", err, text);
    free(err);
    char *p1 = print_mod(m, 0);
    IrModule *m2 = parse(p1, &err);
    if (!m2)
        fail_msg("re-parse failed:\n%s\n--- printed:\n%s", err, p1);
    free(err);
    char *p2 = print_mod(m2, 0);
    assert_string_equal(p1, p2);
    free(p2);
    ir_module_destroy(m);
    ir_module_destroy(m2);
    return p1;
}

static void
expect_parse_error(const char *text, const char *want)
{
    char *err;
    IrModule *m = parse(text, &err);
    assert_null(m);
    assert_string_equal(err, want);
    free(err);
}

/* Runs pass on every function of text's module and compares the print. */
static void
expect_pass(void (*pass)(IrFunc *), const char *text, const char *want)
{
    char *err;
    IrModule *m = parse(text, &err);
    if (!m)
        fail_msg("%s", err);
    free(err);
    for (IrFunc *f = m->funcs; f; f = f->next) {
        pass(f);
        assert_int_equal(ir_verify_func(f), 0);
    }
    char *got = print_mod(m, 0);
    assert_string_equal(got, want);
    free(got);
    ir_module_destroy(m);
}

static char *
read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t k = fread(s, 1, (size_t)n, f);
    s[k] = 0;
    fclose(f);
    return s;
}

/* ---- building and printing ---------------------------------------------------------------- */

static IrType sc(IrModule *m, IrDtype d) { return ir_type_scalar(m, d); }

static IrType
t1(IrModule *m, IrType e, int64_t n)
{
    return ir_type_tensor(m, e, 1, &n);
}

static IrOp *
emit(IrFunc *f, IrOpc opc, const IrRef *a, uint32_t na, IrType rt)
{
    IrOp *op = ir_op_create(f, opc, a, na, &rt, rt ? 1 : 0, 0);
    ir_block_append(f->body, op);
    return op;
}

static void
test_build_and_print(void **state)
{
    (void)state;
    IrModule *m = ir_module_create();
    IrFunc *f = ir_func_create(m, "add_kernel", true);
    IrType f32 = sc(m, IR_F32), i32 = sc(m, IR_I32), pf = ir_type_ptr(m, f32, 0);
    IrRef p = ir_block_add_arg(f->body, pf), n = ir_block_add_arg(f->body, i32);
    f->argattrs = ir_newv(&m->arena, IrArgAttr, 2);
    f->argattrs[0].divisibility = 16;
    IrOp *k = emit(f, IR_CONST, NULL, 0, i32);
    k->i[0] = 128;
    IrRef pid = emit(f, IR_GET_PROGRAM_ID, NULL, 0, i32)->res[0];
    IrRef a[2] = {pid, k->res[0]};
    IrRef base = emit(f, IR_MULI, a, 2, i32)->res[0];
    IrOp *r = emit(f, IR_MAKE_RANGE, NULL, 0, t1(m, i32, 128));
    r->i[1] = 128;
    IrRef sp = emit(f, IR_SPLAT, &base, 1, t1(m, i32, 128))->res[0];
    IrRef b[2] = {sp, r->res[0]};
    IrRef offs = emit(f, IR_ADDI, b, 2, t1(m, i32, 128))->res[0];
    IrRef ns = emit(f, IR_SPLAT, &n, 1, t1(m, i32, 128))->res[0];
    IrRef c[2] = {offs, ns};
    IrOp *cmp = emit(f, IR_CMPI, c, 2, t1(m, sc(m, IR_I1), 128));
    cmp->i[0] = IR_CMPI_SLT;
    IrRef ps = emit(f, IR_SPLAT, &p, 1, t1(m, pf, 128))->res[0];
    IrRef d[2] = {ps, offs};
    IrRef ptrs = emit(f, IR_ADDPTR, d, 2, t1(m, pf, 128))->res[0];
    IrRef e[2] = {ptrs, cmp->res[0]};
    IrRef x = emit(f, IR_LOAD, e, 2, t1(m, f32, 128))->res[0];
    IrOp *h = emit(f, IR_CONST, NULL, 0, t1(m, f32, 128));
    h->f = 0.5;
    IrRef g[2] = {x, h->res[0]};
    IrRef y = emit(f, IR_MULF, g, 2, t1(m, f32, 128))->res[0];
    IrRef s[3] = {ptrs, y, cmp->res[0]};
    emit(f, IR_STORE, s, 3, 0);
    emit(f, IR_RETURN, NULL, 0, 0);
    assert_int_equal(ir_verify_func(f), 0);
    char *got = print_mod(m, 0);
    assert_string_equal(got,
        "module {\n"
        "  tt.func public @add_kernel(%arg0: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg1: i32) {\n"
        "    %c128_i32 = arith.constant 128 : i32\n"
        "    %0 = tt.get_program_id x : i32\n"
        "    %1 = arith.muli %0, %c128_i32 : i32\n"
        "    %2 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>\n"
        "    %3 = tt.splat %1 : i32 -> tensor<128xi32>\n"
        "    %4 = arith.addi %3, %2 : tensor<128xi32>\n"
        "    %5 = tt.splat %arg1 : i32 -> tensor<128xi32>\n"
        "    %6 = arith.cmpi slt, %4, %5 : tensor<128xi32>\n"
        "    %7 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>\n"
        "    %8 = tt.addptr %7, %4 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>\n"
        "    %9 = tt.load %8, %6 : tensor<128x!tt.ptr<f32>>\n"
        "    %cst = arith.constant dense<5.000000e-01> : tensor<128xf32>\n"
        "    %10 = arith.mulf %9, %cst : tensor<128xf32>\n"
        "    tt.store %8, %10, %6 : tensor<128x!tt.ptr<f32>>\n"
        "    tt.return\n"
        "  }\n"
        "}\n");
    free(roundtrip(got));
    free(got);
    ir_module_destroy(m);
}

/* Unsigned types print signless; the parser gives signed types. */
static void
test_signless_print(void **state)
{
    (void)state;
    IrModule *m = ir_module_create();
    IrFunc *f = ir_func_create(m, "u", false);
    IrType u32 = sc(m, IR_U32);
    IrOp *k = emit(f, IR_CONST, NULL, 0, u32);
    k->i[0] = 4294967295LL;
    emit(f, IR_RETURN, &k->res[0], 1, 0);
    f->nrets = 1;
    f->rettypes = ir_newv(&m->arena, IrType, 1);
    f->rettypes[0] = u32;
    char *got = print_mod(m, 0);
    assert_string_equal(got, "module {\n"
                             "  tt.func private @u() -> i32 {\n"
                             "    %c-1_i32 = arith.constant -1 : i32\n"
                             "    tt.return %c-1_i32 : i32\n"
                             "  }\n"
                             "}\n");
    free(roundtrip(got));
    free(got);
    ir_module_destroy(m);
}

/* ---- round trips ------------------------------------------------------------------------------ */

static void
mark_op(IrOp *op, void *user)
{
    ((bool *)user)[op->opc] = true;
}

/* Builds @<op>(args) { %r = <op> args; tt.return %r } in m with operands of
 * element type e (casts use their own types); returns whether it verifies. */
static bool
gen_simple(IrModule *m, IrOpc o, IrType e)
{
    static const struct { IrOpc o; IrDtype a, r; } casts[] = {
        {IR_EXTSI, IR_I8, IR_I32},   {IR_EXTUI, IR_I8, IR_I32},   {IR_TRUNCI, IR_I32, IR_I8},
        {IR_SITOFP, IR_I32, IR_F32}, {IR_UITOFP, IR_I32, IR_F32}, {IR_FPTOSI, IR_F32, IR_I32},
        {IR_FPTOUI, IR_F32, IR_I32}, {IR_EXTF, IR_F16, IR_F32},   {IR_TRUNCF, IR_F32, IR_BF16},
        {IR_BITCAST, IR_F32, IR_I32}, {IR_ISNAN, IR_F32, IR_I1},  {IR_ISINF, IR_F32, IR_I1},
        {IR_ISFINITE, IR_F32, IR_I1}, {IR_INT_TO_PTR, IR_I64, IR_F32},
        {IR_PTR_TO_INT, IR_F32, IR_I64}, {IR_PTR_BITCAST, IR_F32, IR_I32},
    };
    IrFunc *f = ir_func_create(m, ir_opc_name[o], false);
    IrType t = t1(m, e, 4), rt = t;
    int fmt = ir_opc_fmt[o];
    if (fmt == IR_FMT_CMP)
        rt = t1(m, sc(m, IR_I1), 4);
    if (fmt == IR_FMT_CAST) {
        size_t k = 0;
        while (k < sizeof casts / sizeof casts[0] && casts[k].o != o)
            k++;
        if (k == sizeof casts / sizeof casts[0])
            fail_msg("no cast example for %s: add one to gen_simple", ir_opc_name[o]);
        IrType a = sc(m, casts[k].a), r = sc(m, casts[k].r);
        if (o == IR_PTR_TO_INT || o == IR_PTR_BITCAST)
            a = ir_type_ptr(m, a, 0);
        if (o == IR_INT_TO_PTR || o == IR_PTR_BITCAST)
            r = ir_type_ptr(m, r, 0);
        t = t1(m, a, 4);
        rt = t1(m, r, 4);
    }
    uint32_t n = ir_opc_nargs[o] < 0 ? 2 : (uint32_t)ir_opc_nargs[o];
    IrRef args[3];
    for (uint32_t i = 0; i < n; i++)
        args[i] = ir_block_add_arg(f->body, t);
    IrOp *op = emit(f, o, args, n, rt);
    emit(f, IR_RETURN, op->res, 1, 0);
    f->nrets = 1;
    f->rettypes = ir_newv(&m->arena, IrType, 1);
    f->rettypes[0] = rt;
    return ir_verify_func(f) == 0;
}

/* Every op in ir_ops.h prints and parses: table-driven syntaxes are generated
 * here, the custom ones come from tests/ir/syntax1.ttir. A new op without an
 * example or without print/parse support fails this test. */
static void
test_every_op_roundtrips(void **state)
{
    (void)state;
    bool seen[IR_OPC_COUNT] = {0};
    IrModule *m = ir_module_create();
    for (int o = 0; o < IR_OPC_COUNT; o++) {
        int fmt = ir_opc_fmt[o];
        if (fmt != IR_FMT_BIN && fmt != IR_FMT_UN && fmt != IR_FMT_TERN && fmt != IR_FMT_CAST &&
            fmt != IR_FMT_CMP)
            continue;
        /* the verifier knows int from float ops: probe with f32 in a scratch module */
        IrModule *probe = ir_module_create();
        bool isf = gen_simple(probe, (IrOpc)o, sc(probe, IR_F32));
        ir_module_destroy(probe);
        if (!gen_simple(m, (IrOpc)o, sc(m, isf ? IR_F32 : IR_I32))) {
            ir_module_print_diags(m, stderr);
            fail_msg("generated example of %s is invalid", ir_opc_name[o]);
        }
        seen[o] = true;
    }
    char *p = print_mod(m, 0);
    free(roundtrip(p));
    free(p);
    ir_module_destroy(m);

    char path[1024];
    snprintf(path, sizeof path, "%.*s/../ir/syntax1.ttir", (int)(strrchr(__FILE__, '/') - __FILE__),
             __FILE__);
    char *text = read_file(path);
    if (!text)
        fail_msg("cannot read %s (run the tests from the repository root)", path);
    char *printed = roundtrip(text);
    IrModule *c = parse(printed, NULL);
    assert_non_null(c);
    for (IrFunc *f = c->funcs; f; f = f->next)
        ir_walk(f->body, mark_op, seen);
    for (int o = 0; o < IR_OPC_COUNT; o++)
        if (!seen[o])
            fail_msg("op %s has no round-trip example (tests/ir/syntax1.ttir)", ir_opc_name[o]);
    ir_module_destroy(c);
    free(printed);
    free(text);
}

/* Hand-written variants: other names, comments, no module wrapper, MLIR's implicit yield. */
static void
test_handwritten(void **state)
{
    (void)state;
    char *p = roundtrip("// leading comment\n"
                        "tt.func @f(%n: i32, %t: tensor<4x2xi32>) {  // no module, no visibility\n"
                        "  %zero = arith.constant 0 : i32\n"
                        "  scf.for %i = %zero to %n step %n : i32 {\n"
                        "    tt.print \"i\" {hex = false, isSigned = array<i32: 1>} : %i : i32\n"
                        "  }\n"
                        "  %a, %b = tt.split %t : tensor<4x2xi32> -> tensor<4xi32>\n"
                        "  tt.return\n"
                        "}\n");
    (void)p;
    free(p);
}

/* ir_f16_bits / ir_bf16_bits round once, from double, ties to even. */
static void
test_half_rounding(void **state)
{
    (void)state;
    assert_int_equal(ir_bf16_bits(1.0), 0x3F80);
    assert_int_equal(ir_bf16_bits(1.0 + 0x1p-8), 0x3F80);          /* tie: to even */
    assert_int_equal(ir_bf16_bits(1.0 + 3 * 0x1p-8), 0x3F82);      /* tie: to even, up */
    /* above the tie only below float precision: through float it would round to the
     * tie and then to even (0x3F80) */
    assert_int_equal(ir_bf16_bits(1.0 + 0x1p-8 + 0x1p-40), 0x3F81);
    assert_int_equal(ir_bf16_bits(-2.5), 0xC020);
    assert_int_equal(ir_bf16_bits(3.4028234663852886e38), 0x7F80); /* FLT_MAX overflows bf16 */
    assert_int_equal(ir_bf16_bits(-INFINITY), 0xFF80);
    assert_int_equal(ir_bf16_bits(0x1p-133), 0x0001);               /* smallest subnormal */
    assert_int_equal(ir_bf16_bits(-0.0), 0x8000);
    assert_int_equal(ir_bf16_bits(NAN) & 0x7FC0, 0x7FC0);
    assert_int_equal(ir_f16_bits(1.0), 0x3C00);
    assert_int_equal(ir_f16_bits(1.0 + 0x1p-11), 0x3C00);
    assert_int_equal(ir_f16_bits(1.0 + 0x1p-11 + 0x1p-40), 0x3C01);
    assert_int_equal(ir_f16_bits(65504.0), 0x7BFF);
    assert_int_equal(ir_f16_bits(65520.0), 0x7C00);                 /* half an ulp above max */
    assert_int_equal(ir_f16_bits(0x1p-24), 0x0001);
    assert_int_equal(ir_f16_bits(0x1p-25), 0x0000);                 /* tie: to even (zero) */
    assert_int_equal(ir_f16_bits(3 * 0x1p-26), 0x0001);
    assert_int_equal(ir_f16_bits(-0.0), 0x8000);
    assert_int_equal(ir_f16_bits(-NAN), 0xFE00);
    /* every finite pattern maps back to itself */
    for (uint32_t b = 0; b < 0x10000; b++) {
        double h = ir_float_from_bits(b, IR_F16), bf = ir_float_from_bits(b, IR_BF16);
        if (!isnan(h) && ir_f16_bits(h) != b)
            fail_msg("f16 0x%04x -> 0x%04x", b, ir_f16_bits(h));
        if (!isnan(bf) && ir_bf16_bits(bf) != b)
            fail_msg("bf16 0x%04x -> 0x%04x", b, ir_bf16_bits(bf));
    }
}

/* Float constants print so that they parse back to the same bits. */
static void
test_float_constants(void **state)
{
    (void)state;
    static const IrDtype ds[] = {IR_F16, IR_BF16, IR_F32, IR_F64};
    uint64_t seed = 88172645463325252ull;
    for (int k = 0; k < 4; k++) {
        IrDtype d = ds[k];
        for (int i = 0; i < 400; i++) {
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
            int w = ir_dtype_bits(d);
            uint64_t bits = w == 64 ? seed : seed & ((UINT64_C(1) << w) - 1);
            double v = ir_float_from_bits(bits, d);
            if (isnan(v))
                continue;
            assert_int_equal(ir_float_bits(v, d), bits);
            char *buf = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&buf, &len);
            ir_print_float(f, v, d);
            fclose(f);
            double back = strncmp(buf, "0x", 2) == 0
                              ? ir_float_from_bits(strtoull(buf, NULL, 16), d)
                              : ir_float_round(strtod(buf, NULL), d);
            if (ir_float_bits(back, d) != bits)
                fail_msg("%s bits 0x%llx printed as %s", ir_dtype_mlir(d), (unsigned long long)bits, buf);
            free(buf);
        }
    }
    char *p = roundtrip("tt.func @f() -> (f32, f64, f16, bf16) {\n"
                        "  %a = arith.constant 0.1 : f32\n"
                        "  %b = arith.constant 3.141592653589793 : f64\n"
                        "  %c = arith.constant 65504.0 : f16\n"
                        "  %d = arith.constant 0xFF80 : bf16\n"
                        "  tt.return %a, %b, %c, %d : f32, f64, f16, bf16\n"
                        "}\n");
    assert_non_null(strstr(p, "%cst = arith.constant 1.000000e-01 : f32\n"));
    assert_non_null(strstr(p, "%cst_0 = arith.constant 0x400921FB54442D18 : f64\n"));
    assert_non_null(strstr(p, "%cst_1 = arith.constant 6.550400e+04 : f16\n"));
    assert_non_null(strstr(p, "%cst_2 = arith.constant 0xFF80 : bf16\n"));
    free(p);
}

/* ---- parser errors ------------------------------------------------------------------------------ */

static void
test_parse_errors(void **state)
{
    (void)state;
    expect_parse_error("tt.func @f() {\n  %x = arith.constant 1 : i33\n  tt.return\n}\n",
                       "t.ttir:2:27: error: expected a type, found 'i33'\n"
                       "  %x = arith.constant 1 : i33\n"
                       "                          ^\n");
    expect_parse_error("tt.func @f() {\n  %x = arith.constant 300 : i8\n  tt.return\n}\n",
                       "t.ttir:2:23: error: integer constant out of range for i8\n"
                       "  %x = arith.constant 300 : i8\n"
                       "                      ^\n");
    expect_parse_error("tt.func @f(%a: i32) {\n  %a = arith.addi %a, %a : i32\n  tt.return\n}\n",
                       "t.ttir:2:3: error: redefinition of value '%a'\n"
                       "  %a = arith.addi %a, %a : i32\n"
                       "  ^\n");
    expect_parse_error("tt.func @f(%a: i32) {\n  %b, %c = arith.addi %a, %a : i32\n  tt.return\n}\n",
                       "t.ttir:2:3: error: arith.addi produces 1 result, but 2 are named\n"
                       "  %b, %c = arith.addi %a, %a : i32\n"
                       "  ^\n");
    expect_parse_error("tt.func @f(%a: i32) {\n  %b = arith.cmpi less, %a, %a : i32\n  tt.return\n}\n",
                       "t.ttir:2:19: error: expected a cmpi predicate, found 'less'\n"
                       "  %b = arith.cmpi less, %a, %a : i32\n"
                       "                  ^\n");
    expect_parse_error("tt.func @f() {\n  tt.print \"x\n}\n",
                       "t.ttir:2:12: error: unterminated string\n"
                       "  tt.print \"x\n"
                       "           ^\n");
    expect_parse_error("tt.func @f() {\n  tt.return\n",
                       "t.ttir:3:1: error: expected '}' to close the region\n"
                       "\n"
                       "^\n");
    expect_parse_error("tt.func @f(%p: !tt.ptr<f32>) {\n  %x = \"tt.load\"(%p) : (!tt.ptr<f32>) -> f32\n"
                       "  tt.return\n}\n",
                       "t.ttir:2:8: error: only tt.reduce and tt.scan are written in generic form\n"
                       "  %x = \"tt.load\"(%p) : (!tt.ptr<f32>) -> f32\n"
                       "       ^\n");
}

/* ---- verifier ------------------------------------------------------------------------------------ */

static const char *
first_error(IrModule *m)
{
    const char *msg = ir_module_first_error(m, NULL, NULL, NULL);
    return msg ? msg : "(none)";
}

/* Rules the text form cannot express (the parser scopes names), built directly. */
static void
test_verify_dominance(void **state)
{
    (void)state;
    IrModule *m = ir_module_create();
    IrFunc *f = ir_func_create(m, "f", false);
    IrType i32 = sc(m, IR_I32);
    IrRef x = ir_block_add_arg(f->body, i32);
    IrRef xx[2] = {x, x};
    IrOp *a = ir_op_create(f, IR_ADDI, xx, 2, &i32, 1, 0);
    IrRef ab[2] = {a->res[0], x};
    IrOp *b = ir_op_create(f, IR_ADDI, ab, 2, &i32, 1, 0);
    ir_block_append(f->body, b); /* uses a before a is defined */
    ir_block_append(f->body, a);
    emit(f, IR_RETURN, NULL, 0, 0);
    assert_int_equal(ir_verify_func(f), 1);
    assert_string_equal(first_error(m), "arith.addi: operand 0 does not dominate this use");
    ir_module_clear_diags(m);

    /* a value defined inside an scf.if used after it */
    IrFunc *g = ir_func_create(m, "g", false);
    IrRef c = ir_block_add_arg(g->body, sc(m, IR_I1)), y = ir_block_add_arg(g->body, i32);
    IrOp *iff = ir_op_create(g, IR_IF, &c, 1, NULL, 0, 2);
    ir_block_append(g->body, iff);
    IrRef yy[2] = {y, y};
    IrOp *in = ir_op_create(g, IR_MULI, yy, 2, &i32, 1, 0);
    ir_block_append(iff->regs[0], in);
    ir_block_append(iff->regs[0], ir_op_create(g, IR_YIELD, NULL, 0, NULL, 0, 0));
    ir_block_append(iff->regs[1], ir_op_create(g, IR_YIELD, NULL, 0, NULL, 0, 0));
    IrRef use[2] = {in->res[0], y};
    ir_block_append(g->body, ir_op_create(g, IR_ADDI, use, 2, &i32, 1, 0));
    ir_block_append(g->body, ir_op_create(g, IR_RETURN, NULL, 0, NULL, 0, 0));
    assert_int_equal(ir_verify_func(g), 1);
    assert_string_equal(first_error(m), "arith.addi: operand 0 does not dominate this use");
    ir_module_clear_diags(m);

    /* arity from the table, and a region without its terminator */
    IrFunc *h = ir_func_create(m, "h", false);
    IrRef z = ir_block_add_arg(h->body, i32);
    ir_block_append(h->body, ir_op_create(h, IR_ADDI, &z, 1, &i32, 1, 0));
    IrOp *loop = ir_op_create(h, IR_FOR, (IrRef[]){z, z, z}, 3, NULL, 0, 1);
    ir_block_add_arg(loop->regs[0], i32);
    ir_block_append(h->body, loop);
    ir_block_append(h->body, ir_op_create(h, IR_RETURN, NULL, 0, NULL, 0, 0));
    assert_int_equal(ir_verify_func(h), 2);
    assert_string_equal(first_error(m), "arith.addi: expects 2 operands, found 1");
    assert_string_equal(m->diags->next->msg, "scf.for: region must end with scf.yield");
    ir_module_destroy(m);
}

static void
test_verify_types(void **state)
{
    (void)state;
    IrModule *m = ir_module_create();
    IrFunc *f = ir_func_create(m, "f", false);
    IrType i32 = sc(m, IR_I32), f32 = sc(m, IR_F32);
    IrRef x = ir_block_add_arg(f->body, i32), y = ir_block_add_arg(f->body, f32);
    emit(f, IR_ADDI, (IrRef[]){x, y}, 2, i32);
    emit(f, IR_ADDF, (IrRef[]){x, x}, 2, i32);
    IrOp *c = emit(f, IR_CMPI, (IrRef[]){x, x}, 2, i32);
    c->i[0] = IR_CMPI_EQ;
    emit(f, IR_EXTSI, &x, 1, sc(m, IR_I16));
    emit(f, IR_RETURN, NULL, 0, 0);
    assert_int_equal(ir_verify_func(f), 4);
    const IrDiag *d = m->diags;
    assert_string_equal(d->msg, "arith.addi: operand and result types differ: f32 vs i32");
    assert_string_equal(d->next->msg, "arith.addf: float operands required, found i32");
    assert_string_equal(d->next->next->msg, "arith.cmpi: result must be i1 with the operands' shape, found i32");
    assert_string_equal(d->next->next->next->msg, "arith.extsi: invalid cast from i32 to i16");
    ir_module_destroy(m);
}

/* ---- passes ---------------------------------------------------------------------------------------- */

static void
test_canonicalize(void **state)
{
    (void)state;
    expect_pass(ir_canonicalize,
                "tt.func @f(%x: i32) -> (i32, i32, i8) {\n"
                "  %c0 = arith.constant 0 : i32\n"
                "  %c5 = arith.constant 5 : i32\n"
                "  %a = arith.addi %c0, %x : i32\n"
                "  %b = arith.muli %c5, %c5 : i32\n"
                "  %c127 = arith.constant 127 : i8\n"
                "  %w = arith.addi %c127, %c127 : i8\n"
                "  tt.return %a, %b, %w : i32, i32, i8\n"
                "}\n",
                "module {\n"
                "  tt.func public @f(%arg0: i32) -> (i32, i32, i8) {\n"
                "    %c0_i32 = arith.constant 0 : i32\n"
                "    %c5_i32 = arith.constant 5 : i32\n"
                "    %c25_i32 = arith.constant 25 : i32\n"
                "    %c127_i8 = arith.constant 127 : i8\n"
                "    %c-2_i8 = arith.constant -2 : i8\n"
                "    tt.return %arg0, %c25_i32, %c-2_i8 : i32, i32, i8\n"
                "  }\n"
                "}\n");
    /* x * 0.0 is not 0.0 for floats (NaN, -0.0, inf) */
    expect_pass(ir_canonicalize,
                "tt.func @f(%x: f32) -> f32 {\n"
                "  %z = arith.constant 0.0 : f32\n"
                "  %a = arith.mulf %x, %z : f32\n"
                "  tt.return %a : f32\n"
                "}\n",
                "module {\n"
                "  tt.func public @f(%arg0: f32) -> f32 {\n"
                "    %cst = arith.constant 0.000000e+00 : f32\n"
                "    %0 = arith.mulf %arg0, %cst : f32\n"
                "    tt.return %0 : f32\n"
                "  }\n"
                "}\n");
}

static void
test_cse(void **state)
{
    (void)state;
    expect_pass(ir_cse,
                "tt.func @f(%x: i32, %y: i32, %p: !tt.ptr<i32>) -> (i32, i32, i32, i32) {\n"
                "  %a = arith.addi %x, %y : i32\n"
                "  %b = arith.addi %y, %x : i32\n"
                "  %c = arith.subi %x, %y : i32\n"
                "  %d = arith.subi %y, %x : i32\n"
                "  %l1 = tt.load %p : !tt.ptr<i32>\n"
                "  %l2 = tt.load %p : !tt.ptr<i32>\n"
                "  tt.store %p, %l1 : !tt.ptr<i32>\n"
                "  tt.store %p, %l2 : !tt.ptr<i32>\n"
                "  tt.return %a, %b, %c, %d : i32, i32, i32, i32\n"
                "}\n",
                "module {\n"
                "  tt.func public @f(%arg0: i32, %arg1: i32, %arg2: !tt.ptr<i32>) -> (i32, i32, i32, i32) {\n"
                "    %0 = arith.addi %arg0, %arg1 : i32\n"
                "    %1 = arith.subi %arg0, %arg1 : i32\n"
                "    %2 = arith.subi %arg1, %arg0 : i32\n"
                "    %3 = tt.load %arg2 : !tt.ptr<i32>\n"
                "    %4 = tt.load %arg2 : !tt.ptr<i32>\n"
                "    tt.store %arg2, %3 : !tt.ptr<i32>\n"
                "    tt.store %arg2, %4 : !tt.ptr<i32>\n"
                "    tt.return %0, %0, %1, %2 : i32, i32, i32, i32\n"
                "  }\n"
                "}\n");
}

static void
test_dce(void **state)
{
    (void)state;
    expect_pass(ir_dce,
                "tt.func @f(%x: i32, %n: i32, %p: !tt.ptr<i32>) {\n"
                "  %a = arith.addi %x, %x : i32\n"
                "  %b = arith.muli %a, %a : i32\n"
                "  %r = scf.for %i = %x to %n step %x iter_args(%s = %x) -> (i32) : i32 {\n"
                "    %t = arith.addi %s, %i : i32\n"
                "    scf.yield %t : i32\n"
                "  }\n"
                "  %old = tt.atomic_rmw add, acq_rel, gpu, %p, %x : (!tt.ptr<i32>, i32) -> i32\n"
                "  tt.return\n"
                "}\n",
                "module {\n"
                "  tt.func public @f(%arg0: i32, %arg1: i32, %arg2: !tt.ptr<i32>) {\n"
                "    %0 = tt.atomic_rmw add, acq_rel, gpu, %arg2, %arg0 : (!tt.ptr<i32>, i32) -> i32\n"
                "    tt.return\n"
                "  }\n"
                "}\n");
}

static void
test_pipeline(void **state)
{
    (void)state;
    IrModule *m = parse("tt.func @f(%x: i32) -> i32 {\n"
                        "  %c1 = arith.constant 1 : i32\n"
                        "  %a = arith.muli %x, %c1 : i32\n"
                        "  %b = arith.muli %x, %c1 : i32\n"
                        "  %s = arith.addi %a, %b : i32\n"
                        "  tt.return %s : i32\n"
                        "}\n",
                        NULL);
    assert_non_null(m);
    assert_int_equal(ir_pipeline_run(m, NULL), 0);
    char *got = print_mod(m, 0);
    assert_string_equal(got, "module {\n"
                             "  tt.func public @f(%arg0: i32) -> i32 {\n"
                             "    %0 = arith.addi %arg0, %arg0 : i32\n"
                             "    tt.return %0 : i32\n"
                             "  }\n"
                             "}\n");
    free(got);
    ir_module_destroy(m);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_print),
        cmocka_unit_test(test_signless_print),
        cmocka_unit_test(test_every_op_roundtrips),
        cmocka_unit_test(test_handwritten),
        cmocka_unit_test(test_half_rounding),
        cmocka_unit_test(test_float_constants),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_verify_dominance),
        cmocka_unit_test(test_verify_types),
        cmocka_unit_test(test_canonicalize),
        cmocka_unit_test(test_cse),
        cmocka_unit_test(test_dce),
        cmocka_unit_test(test_pipeline),
    };
    return cmocka_run_group_tests_name("ir", tests, NULL, NULL);
}
