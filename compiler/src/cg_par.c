/*
 * cg_par.c — smt.parallel loops (an scf.for marked tritium.parallel by the lowering)
 * run their iterations through the runtime, which may spread them over threads.
 *
 * MLIR half (cg_par_outline; after bufferization, before buffer hoisting): each marked
 * loop moves into a private function
 *     tritium.par.<k>(lo: i64, hi: i64, pctx, lb, ub, step, captured values...)
 * that runs iterations [lo, hi) of it (iv = lb + i * step). Values the body takes
 * from outside become parameters, constants are cloned into it, and the Proton
 * context is the function's own pctx (the thread running it). The loop's place
 * gets a func.call of it. Whatever the body allocates stays inside the function, so
 * buffer hoisting reuses a temporary only within one call: one thread's chunk.
 * LLVM half (cg_par_dispatch; on the translated module, before O3): each such call
 * becomes  tritium_parallel_for(tritium.par.<k>.run, &caps, N, pctx), N the trip
 * count, caps a stack struct of the call's arguments after pctx, which .run unpacks.
 * tritium_parallel_for is an exported pointer, initially a serial loop in the .so;
 * the runtime's loader points it at its parallel-for (docs/compiler.md §1.2).
 */
#include "cg_int.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/LLVM.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- MLIR: outlining ------------------------------------------------------------- */

typedef struct ValVec {
    MlirValue *v;
    size_t n, cap;
} ValVec;

static void
valvec_add(ValVec *s, MlirValue x)
{
    for (size_t i = 0; i < s->n; i++)
        if (mlirValueEqual(s->v[i], x))
            return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v)
            abort();
    }
    s->v[s->n++] = x;
}

int
cg_op_within(MlirOperation op, MlirOperation anc)
{
    for (; !mlirOperationIsNull(op); op = mlirOperationGetParentOperation(op))
        if (mlirOperationEqual(op, anc))
            return 1;
    return 0;
}

MlirOperation
cg_value_owner(MlirValue v)
{
    if (mlirValueIsABlockArgument(v))
        return mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v));
    return mlirOpResultGetOwner(v);
}

int
cg_const_int(MlirValue v, int64_t *out)
{
    if (!mlirValueIsAOpResult(v) || !cg_op_is(mlirOpResultGetOwner(v), "arith.constant"))
        return 0;
    MlirAttribute a = mlirOperationGetAttributeByName(mlirOpResultGetOwner(v), cg_sref("value"));
    if (!mlirAttributeIsAInteger(a))
        return 0;
    *out = mlirIntegerAttrGetValueInt(a);
    return 1;
}

typedef struct Free {
    MlirOperation loop;
    ValVec *vals;
} Free;

/* Walk callback: operands of ops inside the loop that are defined outside it. */
static MlirWalkResult
collect_free(MlirOperation op, void *user)
{
    Free *f = user;
    if (mlirOperationEqual(op, f->loop))
        return MlirWalkResultAdvance;
    for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
        MlirValue v = mlirOperationGetOperand(op, i);
        if (!cg_op_within(cg_value_owner(v), f->loop))
            valvec_add(f->vals, v);
    }
    return MlirWalkResultAdvance;
}

/* Points the uses of 'from' by ops inside 'scope' (other than 'except') at 'to'. */
static void
replace_uses_within(MlirValue from, MlirValue to, MlirOperation scope, MlirOperation except)
{
    MlirOperation owners[256];
    intptr_t nums[256];
    int n;
    do { /* a batch at a time: the use list changes as operands are set */
        n = 0;
        for (MlirOpOperand u = mlirValueGetFirstUse(from); !mlirOpOperandIsNull(u) && n < 256;
             u = mlirOpOperandGetNextUse(u)) {
            MlirOperation o = mlirOpOperandGetOwner(u);
            if (cg_op_within(o, scope) && !mlirOperationEqual(o, except)) {
                owners[n] = o;
                nums[n++] = (intptr_t)mlirOpOperandGetOperandNumber(u);
            }
        }
        for (int i = 0; i < n; i++)
            mlirOperationSetOperand(owners[i], nums[i], to);
    } while (n == 256);
}

static void
append_cb(MlirStringRef s, void *user)
{
    cg_str_append(user, s.data, s.length);
}

static void
print_type(CgStr *s, MlirType t)
{
    mlirTypePrint(t, append_cb, s);
}

static MlirOperation
enclosing_func(MlirOperation op)
{
    while (!mlirOperationIsNull(op) && !cg_op_is(op, "func.func"))
        op = mlirOperationGetParentOperation(op);
    return op;
}

/* Creates op 'name' before 'before' with the given operands, one result of type rt
 * (none when null) and attributes; returns it. */
static MlirOperation
make_op(const char *name, MlirOperation before, intptr_t nops, const MlirValue *ops, MlirType rt,
        intptr_t nattrs, const MlirNamedAttribute *attrs)
{
    MlirOperationState st = mlirOperationStateGet(cg_sref(name), mlirOperationGetLocation(before));
    mlirOperationStateAddOperands(&st, nops, ops);
    if (!mlirTypeIsNull(rt))
        mlirOperationStateAddResults(&st, 1, &rt);
    mlirOperationStateAddAttributes(&st, nattrs, attrs);
    MlirOperation op = mlirOperationCreate(&st);
    mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(before), before, op);
    return op;
}

static MlirValue
binop(const char *name, MlirOperation before, MlirValue a, MlirValue b)
{
    MlirValue ops[2] = {a, b};
    return mlirOperationGetResult(make_op(name, before, 2, ops, mlirValueGetType(a), 0, NULL), 0);
}

/* Parameters of tritium.par.<k> before the captured values. */
enum { P_LO, P_HI, P_PCTX, P_LB, P_UB, P_STEP, P_CAPS };

/* Parses the shell of the outlined function: its parameters, lo and hi converted to
 * the loop's type, the constant 1 of that type, and the return. NULL on failure. */
static MlirOperation
parse_shell(MlirContext ctx, const char *name, MlirType ivt, const ValVec *caps)
{
    CgStr s = {0};
    const char *cast = mlirTypeIsAIndex(ivt) ? "arith.index_cast"
                       : mlirIntegerTypeGetWidth(ivt) < 64 ? "arith.trunci" : NULL;
    cg_str_printf(&s, "func.func private @%s(%%lo: i64, %%hi: i64, %%pctx: !llvm.ptr", name);
    const char *bounds[] = {"lb", "ub", "step"};
    for (int i = 0; i < 3; i++) {
        cg_str_printf(&s, ", %%%s: ", bounds[i]);
        print_type(&s, ivt);
    }
    for (size_t i = 0; i < caps->n; i++) {
        cg_str_printf(&s, ", %%c%zu: ", i);
        print_type(&s, mlirValueGetType(caps->v[i]));
    }
    cg_str_printf(&s, ") {\n");
    for (int i = 0; cast && i < 2; i++) {
        cg_str_printf(&s, "  %%%s_iv = %s %%%s : i64 to ", i ? "hi" : "lo", cast, i ? "hi" : "lo");
        print_type(&s, ivt);
        cg_str_printf(&s, "\n");
    }
    cg_str_printf(&s, "  %%one = arith.constant 1 : ");
    print_type(&s, ivt);
    cg_str_printf(&s, "\n  return\n}\n");
    MlirOperation f =
        mlirOperationCreateParse(ctx, mlirStringRefCreate(s.p, s.n), cg_sref("tritium.par"));
    cg_str_fini(&s);
    return f;
}

typedef struct Outliner {
    MlirContext ctx;
    int count;
    CgStr *err;
} Outliner;

/* The value standing for outside value v inside the outlined function f (entry
 * block 'entry', first op 'first'): a clone of a constant, f's pctx for the
 * kernel's, else parameter 'param'. */
static MlirValue
inner_value(MlirValue v, MlirValue kpctx, MlirBlock entry, MlirOperation first, MlirValue param)
{
    if (mlirValueEqual(v, kpctx))
        return mlirBlockGetArgument(entry, P_PCTX);
    if (!mlirValueIsABlockArgument(v) && cg_op_is(mlirOpResultGetOwner(v), "arith.constant")) {
        MlirOperation c = mlirOperationClone(mlirOpResultGetOwner(v));
        mlirBlockInsertOwnedOperationBefore(entry, first, c);
        return mlirOperationGetResult(c, 0);
    }
    return param;
}

/* Outlines one marked loop; 0 on success, 1 when it stays sequential, -1 on error. */
static int
outline_loop(Outliner *o, MlirOperation loop)
{
    MlirOperation kfn = enclosing_func(loop);
    if (mlirOperationIsNull(kfn) || mlirOperationGetNumResults(loop) != 0 ||
        mlirOperationGetNumOperands(loop) != 3)
        return 1;
    MlirBlock kentry = mlirRegionGetFirstBlock(mlirOperationGetRegion(kfn, 0));
    intptr_t nk = mlirBlockGetNumArguments(kentry);
    MlirValue kpctx = nk ? mlirBlockGetArgument(kentry, nk - 1) : (MlirValue){NULL};
    MlirType ivt = mlirValueGetType(mlirOperationGetOperand(loop, 0));
    if (mlirValueIsNull(kpctx) || !mlirTypeIsALLVMPointerType(mlirValueGetType(kpctx)) ||
        !(mlirTypeIsAIndex(ivt) || mlirTypeIsAInteger(ivt)))
        return 1;

    ValVec free_vals = {0}, caps = {0};
    Free fr = {loop, &free_vals};
    mlirOperationWalk(loop, collect_free, &fr, MlirWalkPreOrder);
    for (size_t i = 0; i < free_vals.n; i++) {
        MlirValue v = free_vals.v[i];
        if (!mlirValueEqual(v, kpctx) &&
            (mlirValueIsABlockArgument(v) || !cg_op_is(mlirOpResultGetOwner(v), "arith.constant")))
            valvec_add(&caps, v);
    }
    char name[64];
    snprintf(name, sizeof name, CG_PAR_PREFIX "%d", o->count);
    MlirOperation f = parse_shell(o->ctx, name, ivt, &caps);
    if (mlirOperationIsNull(f)) {
        cg_str_printf(o->err, "[outline parallel loops] cannot build @%s\n", name);
        free(free_vals.v);
        free(caps.v);
        return -1;
    }
    o->count++;
    mlirBlockInsertOwnedOperationAfter(mlirOperationGetBlock(kfn), kfn, f);

    /* the kernel side: func.call @f(0, 0, pctx, lb, ub, step, caps...) */
    MlirType i64 = mlirIntegerTypeGet(o->ctx, 64);
    MlirNamedAttribute zattr = mlirNamedAttributeGet(mlirIdentifierGet(o->ctx, cg_sref("value")),
                                                     mlirIntegerAttrGet(i64, 0));
    MlirOperation zop = make_op("arith.constant", loop, 0, NULL, i64, 1, &zattr);
    MlirValue zero = mlirOperationGetResult(zop, 0);
    size_t nargs = P_CAPS + caps.n;
    MlirValue *args = calloc(nargs, sizeof *args);
    if (!args)
        abort();
    args[P_LO] = args[P_HI] = zero;
    args[P_PCTX] = kpctx;
    for (int i = 0; i < 3; i++)
        args[P_LB + i] = mlirOperationGetOperand(loop, i);
    for (size_t i = 0; i < caps.n; i++)
        args[P_CAPS + i] = caps.v[i];
    MlirNamedAttribute callee = mlirNamedAttributeGet(mlirIdentifierGet(o->ctx, cg_sref("callee")),
                                                      mlirFlatSymbolRefAttrGet(o->ctx, cg_sref(name)));
    make_op("func.call", loop, (intptr_t)nargs, args, (MlirType){NULL}, 1, &callee);
    free(args);

    /* the function side: the loop runs [lo, hi) by 1, the body sees lb + i * step */
    MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
    MlirOperation first = mlirBlockGetFirstOperation(entry), ret = mlirBlockGetTerminator(entry);
    int cast = !mlirOperationEqual(mlirOperationGetNextInBlock(first), ret); /* lo, hi, 1 */
    MlirOperation second = mlirOperationGetNextInBlock(first);
    MlirValue lo = cast ? mlirOperationGetResult(first, 0) : mlirBlockGetArgument(entry, P_LO);
    MlirValue hi = cast ? mlirOperationGetResult(second, 0) : mlirBlockGetArgument(entry, P_HI);
    MlirValue one = mlirOperationGetResult(cast ? mlirOperationGetNextInBlock(second) : first, 0);
    MlirValue lb = inner_value(mlirOperationGetOperand(loop, 0), kpctx, entry, first,
                               mlirBlockGetArgument(entry, P_LB));
    MlirValue step = inner_value(mlirOperationGetOperand(loop, 2), kpctx, entry, first,
                                 mlirBlockGetArgument(entry, P_STEP));
    mlirOperationMoveBefore(loop, ret);
    mlirOperationSetOperand(loop, 0, lo);
    mlirOperationSetOperand(loop, 1, hi);
    mlirOperationSetOperand(loop, 2, one);
    mlirOperationRemoveAttributeByName(loop, cg_sref("tritium.parallel"));
    for (size_t i = 0, c = 0; i < free_vals.n; i++) {
        MlirValue v = free_vals.v[i];
        int is_cap = c < caps.n && mlirValueEqual(caps.v[c], v);
        MlirValue param = is_cap ? mlirBlockGetArgument(entry, (intptr_t)(P_CAPS + c++)) : v;
        MlirValue in = inner_value(v, kpctx, entry, first, param);
        replace_uses_within(v, in, loop, (MlirOperation){NULL});
    }
    MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(loop, 0));
    MlirValue k = mlirBlockGetArgument(body, 0);
    MlirOperation head = mlirBlockGetFirstOperation(body);
    MlirValue scaled = binop("arith.muli", head, k, step);
    MlirValue iv = binop("arith.addi", head, lb, scaled);
    replace_uses_within(k, iv, loop, mlirOpResultGetOwner(scaled));
    free(free_vals.v);
    free(caps.v);
    return 0;
}

static MlirWalkResult
find_parallel(MlirOperation op, void *user)
{
    if (cg_op_is(op, "scf.for") &&
        !mlirAttributeIsNull(mlirOperationGetAttributeByName(op, cg_sref("tritium.parallel"))))
        cg_opvec_push(user, op);
    return MlirWalkResultAdvance;
}

int
cg_par_outline(MlirModule mod, CgStr *err)
{
    MlirOperation m = mlirModuleGetOperation(mod);
    Outliner o = {mlirOperationGetContext(m), 0, err};
    CgOpVec loops = {0};
    /* post-order: an inner parallel loop is outlined before the loop around it */
    mlirOperationWalk(m, find_parallel, &loops, MlirWalkPostOrder);
    int rc = 0;
    for (size_t i = 0; i < loops.n && rc >= 0; i++) {
        rc = outline_loop(&o, loops.v[i]);
        if (rc == 1) /* stays an ordinary loop */
            mlirOperationRemoveAttributeByName(loops.v[i], cg_sref("tritium.parallel"));
    }
    free(loops.v);
    if (rc < 0)
        return -1;
    if (o.count && !mlirOperationVerify(m)) {
        cg_str_printf(err, "[outline parallel loops] the module does not verify\n");
        return -1;
    }
    return o.count;
}

/* ---- LLVM: calls through the runtime ----------------------------------------------- */

static int
name_has_prefix(LLVMValueRef f, const char *prefix)
{
    size_t n, k = strlen(prefix);
    const char *s = LLVMGetValueName2(f, &n);
    return n >= k && memcmp(s, prefix, k) == 0;
}

/* void tritium.par.serial(body, data, n, pctx): body(data, 0, n, pctx) when n > 0 —
 * what tritium_parallel_for points to until a runtime replaces it. */
static LLVMValueRef
add_serial(LLVMModuleRef m, LLVMTypeRef runfn_ty)
{
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0), i64 = LLVMInt64TypeInContext(c);
    LLVMTypeRef ps[4] = {ptr, ptr, i64, ptr};
    LLVMValueRef f = LLVMAddFunction(m, CG_PAR_PREFIX "serial",
                                     LLVMFunctionType(LLVMVoidTypeInContext(c), ps, 4, 0));
    LLVMSetLinkage(f, LLVMInternalLinkage);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c, f, "entry");
    LLVMBasicBlockRef run = LLVMAppendBasicBlockInContext(c, f, "run");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c, f, "done");
    LLVMPositionBuilderAtEnd(b, entry);
    LLVMValueRef n = LLVMGetParam(f, 2);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGT, n, LLVMConstInt(i64, 0, 0), "any"), run, done);
    LLVMPositionBuilderAtEnd(b, run);
    LLVMValueRef a[4] = {LLVMGetParam(f, 1), LLVMConstInt(i64, 0, 0), n, LLVMGetParam(f, 3)};
    LLVMBuildCall2(b, runfn_ty, LLVMGetParam(f, 0), a, 4, "");
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, done);
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    return f;
}

/* The struct of body's parameters after pctx (what a call stores for .run). */
static LLVMTypeRef
caps_type(LLVMValueRef body)
{
    unsigned n = LLVMCountParams(body);
    LLVMTypeRef *t = calloc(n, sizeof *t);
    if (!t)
        abort();
    for (unsigned i = P_LB; i < n; i++)
        t[i - P_LB] = LLVMTypeOf(LLVMGetParam(body, i));
    LLVMTypeRef s = LLVMStructTypeInContext(LLVMGetModuleContext(LLVMGetGlobalParent(body)), t,
                                            n - P_LB, 0);
    free(t);
    return s;
}

/* void <body>.run(data, lo, hi, pctx): loads the captured values from data and calls
 * body(lo, hi, pctx, ...). The runtime calls it once per chunk, on any thread. */
static LLVMValueRef
add_runner(LLVMModuleRef m, LLVMValueRef body, LLVMTypeRef st, LLVMTypeRef runfn_ty)
{
    LLVMContextRef c = LLVMGetModuleContext(m);
    size_t len;
    const char *bn = LLVMGetValueName2(body, &len);
    char name[128];
    snprintf(name, sizeof name, "%.*s.run", (int)len, bn);
    LLVMValueRef f = LLVMAddFunction(m, name, runfn_ty);
    LLVMSetLinkage(f, LLVMInternalLinkage);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, f, "entry"));
    unsigned n = LLVMCountParams(body);
    LLVMValueRef *a = calloc(n, sizeof *a);
    if (!a)
        abort();
    a[P_LO] = LLVMGetParam(f, 1);
    a[P_HI] = LLVMGetParam(f, 2);
    a[P_PCTX] = LLVMGetParam(f, 3);
    for (unsigned i = P_LB; i < n; i++) {
        LLVMValueRef p = LLVMBuildStructGEP2(b, st, LLVMGetParam(f, 0), i - P_LB, "cap");
        a[i] = LLVMBuildLoad2(b, LLVMTypeOf(LLVMGetParam(body, i)), p, "v");
    }
    LLVMBuildCall2(b, LLVMGlobalGetValueType(body), body, a, n, "");
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    free(a);
    return f;
}

/* The trip count of scf.for lb to ub step st (signed, step > 0; 0 otherwise), as i64. */
static LLVMValueRef
trip_count(LLVMBuilderRef b, LLVMValueRef lb, LLVMValueRef ub, LLVMValueRef st)
{
    LLVMTypeRef i64 = LLVMInt64TypeInContext(LLVMGetTypeContext(LLVMTypeOf(lb)));
    LLVMValueRef zero = LLVMConstInt(i64, 0, 0), one = LLVMConstInt(i64, 1, 0);
    lb = LLVMBuildSExtOrBitCast(b, lb, i64, "lb");
    ub = LLVMBuildSExtOrBitCast(b, ub, i64, "ub");
    st = LLVMBuildSExtOrBitCast(b, st, i64, "st");
    LLVMValueRef up = LLVMBuildICmp(b, LLVMIntSGT, st, zero, "up");
    LLVMValueRef any = LLVMBuildAnd(b, up, LLVMBuildICmp(b, LLVMIntSGT, ub, lb, "nonempty"), "any");
    LLVMValueRef span = LLVMBuildSub(b, LLVMBuildSub(b, ub, lb, "span"), one, "last");
    LLVMValueRef q = LLVMBuildUDiv(b, span, LLVMBuildSelect(b, up, st, one, "div"), "q");
    return LLVMBuildSelect(b, any, LLVMBuildAdd(b, q, one, "trips"), zero, "n");
}

/* Replaces call body(0, 0, pctx, lb, ub, step, caps...) by the dispatch through g. */
static void
rewrite_call(LLVMValueRef call, LLVMValueRef runner, LLVMTypeRef st, LLVMValueRef g)
{
    LLVMContextRef c = LLVMGetTypeContext(st);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0), i64 = LLVMInt64TypeInContext(c);
    LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInstructionParent(call));
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
    LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(fn)));
    LLVMValueRef data = LLVMBuildAlloca(b, st, "par.caps");
    LLVMPositionBuilderBefore(b, call);
    unsigned n = (unsigned)LLVMGetNumArgOperands(call);
    for (unsigned i = P_LB; i < n; i++)
        LLVMBuildStore(b, LLVMGetOperand(call, i),
                       LLVMBuildStructGEP2(b, st, data, i - P_LB, "cap"));
    LLVMValueRef trips = trip_count(b, LLVMGetOperand(call, P_LB), LLVMGetOperand(call, P_UB),
                                    LLVMGetOperand(call, P_STEP));
    LLVMTypeRef ps[4] = {ptr, ptr, i64, ptr};
    LLVMTypeRef pfor = LLVMFunctionType(LLVMVoidTypeInContext(c), ps, 4, 0);
    LLVMValueRef fp = LLVMBuildLoad2(b, ptr, g, "parallel_for");
    LLVMValueRef a[4] = {runner, data, trips, LLVMGetOperand(call, P_PCTX)};
    LLVMBuildCall2(b, pfor, fp, a, 4, "");
    LLVMInstructionEraseFromParent(call);
    LLVMDisposeBuilder(b);
}

int
cg_par_dispatch(LLVMModuleRef m, CgStr *err)
{
    LLVMValueRef bodies[256];
    int nb = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f) && name_has_prefix(f, CG_PAR_PREFIX)) {
            if (nb == 256) {
                cg_str_printf(err, "[parallel loops] more than 256 smt.parallel loops\n");
                return -1;
            }
            bodies[nb++] = f;
        }
    if (!nb)
        return 0;
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0), i64 = LLVMInt64TypeInContext(c);
    LLVMTypeRef rps[4] = {ptr, i64, i64, ptr};
    LLVMTypeRef runfn_ty = LLVMFunctionType(LLVMVoidTypeInContext(c), rps, 4, 0);
    LLVMValueRef g = LLVMAddGlobal(m, ptr, CG_PAR_SYMBOL);
    LLVMSetInitializer(g, add_serial(m, runfn_ty));
    LLVMSetVisibility(g, LLVMProtectedVisibility); /* exported, accessed without the GOT */
    LLVMSetAlignment(g, 8);
    for (int i = 0; i < nb; i++) {
        LLVMValueRef body = bodies[i], calls[64];
        int nc = 0;
        for (LLVMUseRef u = LLVMGetFirstUse(body); u; u = LLVMGetNextUse(u)) {
            LLVMValueRef call = LLVMGetUser(u);
            if (!LLVMIsACallInst(call) || LLVMGetCalledValue(call) != body || nc == 64) {
                cg_str_printf(err, "[parallel loops] %s is used other than by a few calls\n",
                              LLVMGetValueName2(body, &(size_t){0}));
                return -1;
            }
            calls[nc++] = call;
        }
        LLVMSetLinkage(body, LLVMInternalLinkage);
        LLVMTypeRef st = caps_type(body);
        LLVMValueRef runner = add_runner(m, body, st, runfn_ty);
        for (int k = 0; k < nc; k++)
            rewrite_call(calls[k], runner, st, g);
    }
    return nb;
}
