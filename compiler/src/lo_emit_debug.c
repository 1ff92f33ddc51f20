/*
 * lo_emit_debug.c — tt.print and tt.assert: calls into the runtime through two
 * exported pointers, tritium_debug_print and tritium_debug_assert (docs/compiler.md
 * §1.2), which start at do-nothing functions of the module and which the runtime's
 * loader points at rt_debug_print / rt_debug_assert (runtime/src/rt_debug.c).
 *
 * A print materialises each operand, a tile into a dense stack buffer (between
 * llvm.intr.stacksave and stackrestore, so a print in a loop does not grow the
 * stack), a scalar into a one-element one, and passes their addresses with a constant descriptor naming
 * the prefix, the hex flag and each operand's type, signedness and shape. An assert
 * (its condition already one i1: ir_b_assert reduces tiles) calls the runtime under
 * scf.if when the condition is false, with "kernel\0file:line\0message".
 */
#include "lo_int.h"

#include <stdio.h>
#include <string.h>

enum { DBG_PRINT = 1, DBG_ASSERT = 2 };

/* A private constant string global holding s[0..n) plus a NUL; returns its number. */
static unsigned
add_string(LeCtx *c, const char *s, size_t n)
{
    unsigned id = c->ndebug_strs++;
    LoBuf *g = &c->debug_globals;
    lo_printf(g, "  llvm.mlir.global private constant @tritium.debug.str%u(\"", id);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\')
            lo_printf(g, "%c", ch);
        else
            lo_printf(g, "\\%02X", ch);
    }
    lo_printf(g, "\\00\") {addr_space = 0 : i32} : !llvm.array<%zu x i8>\n", n + 1);
    return id;
}

/* The address of an SSA memref of type mt, as !llvm.ptr and as i64. */
static unsigned
memref_addr(LeCtx *c, unsigned buf, const char *mt)
{
    unsigned a = lo_emit(c->out, "memref.extract_aligned_pointer_as_index %%v%u : %s -> index", buf, mt);
    return lo_emit(c->out, "arith.index_cast %%v%u : index to i64", a);
}

static unsigned
hook(LeCtx *c, const char *name)
{
    unsigned g = lo_emit(c->out, "llvm.mlir.addressof @%s : !llvm.ptr", name);
    return lo_emit(c->out, "llvm.load %%v%u : !llvm.ptr -> !llvm.ptr", g);
}

/* Operand v of a print in a dense buffer; returns its address (i64) and writes its
 * element type name (i1 is printed from i8). */
static unsigned
print_operand(LeCtx *c, IrRef v, const char **elem)
{
    IrType t = c->f->vals[v].type;
    int d = ir_type_dtype(c->m, t);
    if (!ir_type_is_tensor(c->m, t)) {
        unsigned x = le_scalar(c, v);
        int sd = d == IR_I1 ? IR_I8 : d;
        if (d == IR_I1)
            x = lo_emit(c->out, "arith.extui %%v%u : i1 to i8", x);
        *elem = lt_elem_name(sd);
        char mt[32];
        snprintf(mt, sizeof mt, "memref<1x%s>", *elem);
        unsigned buf = lo_emit(c->out, "memref.alloca() : %s", mt);
        lo_line(c->out, "memref.store %%v%u, %%v%u[%%v%u] : %s", x, buf, le_const_index(c, 0), mt);
        return memref_addr(c, buf, mt);
    }
    LoType tt = lt_of_tile(c->m, t), bt = tt;
    bt.kind = LT_MEMREF;
    *elem = lt_elem_name(tt.elem);
    const char *bts = le_ty(c, &bt), *tts = le_ty(c, &tt);
    unsigned buf = lo_emit(c->out, "memref.alloca() : %s", bts);
    unsigned dst = lo_emit(c->out, "bufferization.to_tensor %%v%u restrict writable : %s", buf, bts);
    LoIter it;
    le_iter(c, NULL, ir_type_rank(c->m, t), ir_type_shape(c->m, t), &it);
    unsigned res = le_generic(c, &it, v, dst, &tt, IR_NONE);
    lo_line(c->out, "bufferization.materialize_in_destination %%v%u in restrict writable %%v%u : (%s, %s) -> ()", res,
            buf, tts, bts);
    return memref_addr(c, buf, bts);
}

/* The descriptor rt_debug_print reads: "<hex> <n> {<type> <signed> <rank> <dims>}..."
 * then NUL and the prefix. */
static unsigned
print_descriptor(LeCtx *c, IrOp *op, const char *const *elems)
{
    LoBuf d;
    lo_buf_init(&d);
    lo_printf(&d, "%d %u", op->i[0] ? 1 : 0, op->nargs);
    for (uint32_t i = 0; i < op->nargs; i++) {
        IrType t = c->f->vals[op->args[i]].type;
        int r = ir_type_is_tensor(c->m, t) ? ir_type_rank(c->m, t) : 0;
        lo_printf(&d, " %s %d %d", elems[i], i < op->nints ? (int)op->ints[i] : 0, r);
        for (int k = 0; k < r; k++)
            lo_printf(&d, " %lld", (long long)ir_type_shape(c->m, t)[k]);
    }
    lo_append(&d, "", 1);
    const char *prefix = op->s ? op->s : "";
    lo_append(&d, prefix, strlen(prefix));
    unsigned id = add_string(c, d.p, d.n);
    lo_buf_fini(&d);
    return id;
}

static int
emit_print(LeCtx *c, IrOp *op)
{
    const char *elems[64];
    unsigned addr[64];
    if (op->nargs > 64)
        return le_error(c, op->loc, "tl.device_print: more than 64 operands");
    c->debug_used |= DBG_PRINT;
    unsigned sp = lo_emit(c->out, "llvm.intr.stacksave : !llvm.ptr");
    int saved = c->scope;
    le_scope_push(c);
    for (uint32_t i = 0; i < op->nargs; i++)
        addr[i] = print_operand(c, op->args[i], &elems[i]);
    char at[32];
    snprintf(at, sizeof at, "memref<%uxi64>", op->nargs ? op->nargs : 1);
    unsigned arr = lo_emit(c->out, "memref.alloca() : %s", at);
    for (uint32_t i = 0; i < op->nargs; i++)
        lo_line(c->out, "memref.store %%v%u, %%v%u[%%v%u] : %s", addr[i], arr, le_const_index(c, (int64_t)i), at);
    unsigned ap = lo_emit(c->out, "llvm.inttoptr %%v%u : i64 to !llvm.ptr", memref_addr(c, arr, at));
    unsigned desc = lo_emit(c->out, "llvm.mlir.addressof @tritium.debug.str%u : !llvm.ptr",
                            print_descriptor(c, op, elems));
    unsigned fp = hook(c, "tritium_debug_print");
    lo_line(c->out, "llvm.call %%v%u(%%v%u, %%v%u, %%v%u, %%v%u, %%v%u) : !llvm.ptr, "
                    "(!llvm.ptr, i32, i32, i32, !llvm.ptr) -> ()",
            fp, desc, c->pid_ssa[0], c->pid_ssa[1], c->pid_ssa[2], ap);
    lo_line(c->out, "llvm.intr.stackrestore %%v%u : !llvm.ptr", sp);
    le_scope_pop(c, saved); /* what was computed for the print is not reused after it */
    return 0;
}

static int
emit_assert(LeCtx *c, IrOp *op)
{
    c->debug_used |= DBG_ASSERT;
    unsigned ok = le_scalar(c, op->args[0]);
    unsigned bad = lo_emit(c->out, "arith.xori %%v%u, %%v%u : i1", ok, le_const(c, IR_I1, 1, 0));
    const char *file = op->loc.file ? ir_str(c->m, op->loc.file) : "<unknown>", *msg = op->s ? op->s : "";
    LoBuf d;
    lo_buf_init(&d);
    lo_printf(&d, "%s", c->f->name);
    lo_append(&d, "", 1);
    lo_printf(&d, "%s:%u", file, op->loc.line);
    lo_append(&d, "", 1);
    lo_append(&d, msg, strlen(msg));
    unsigned id = add_string(c, d.p, d.n);
    lo_buf_fini(&d);
    lo_line(c->out, "scf.if %%v%u {", bad);
    c->out->indent += 2;
    int saved = c->scope;
    le_scope_push(c);
    unsigned desc = lo_emit(c->out, "llvm.mlir.addressof @tritium.debug.str%u : !llvm.ptr", id);
    unsigned fp = hook(c, "tritium_debug_assert");
    lo_line(c->out, "llvm.call %%v%u(%%v%u, %%v%u, %%v%u, %%v%u) : !llvm.ptr, (!llvm.ptr, i32, i32, i32) -> ()", fp,
            desc, c->pid_ssa[0], c->pid_ssa[1], c->pid_ssa[2]);
    le_scope_pop(c, saved);
    c->out->indent -= 2;
    lo_line(c->out, "}");
    return 0;
}

int
le_debug_op(LeCtx *c, IrOp *op)
{
    return op->opc == IR_PRINT ? emit_print(c, op) : emit_assert(c, op);
}

/* One hook pointer and the do-nothing function it starts at. */
static void
hook_global(LoBuf *o, const char *name, const char *params)
{
    lo_printf(o, "  llvm.func internal @%s.nop(%s) {\n    llvm.return\n  }\n", name, params);
    lo_printf(o, "  llvm.mlir.global external @%s() {addr_space = 0 : i32} : !llvm.ptr {\n", name);
    lo_printf(o, "    %%0 = llvm.mlir.addressof @%s.nop : !llvm.ptr\n    llvm.return %%0 : !llvm.ptr\n  }\n", name);
}

void
le_debug_globals(LeCtx *c, LoBuf *o)
{
    if (c->debug_used & DBG_PRINT)
        hook_global(o, "tritium_debug_print", "%arg0: !llvm.ptr, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: !llvm.ptr");
    if (c->debug_used & DBG_ASSERT)
        hook_global(o, "tritium_debug_assert", "%arg0: !llvm.ptr, %arg1: i32, %arg2: i32, %arg3: i32");
    if (c->debug_globals.n)
        lo_append(o, c->debug_globals.p, c->debug_globals.n);
}
