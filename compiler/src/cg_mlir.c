/*
 * cg_mlir.c — the MLIR half of a compile: context, parse, pass pipeline,
 * transform script, post-bufferization cleanups and translation to LLVM IR.
 *
 * The dialect registry and the pass registry are built once per process; each
 * compile creates its own context from the registry (single-threaded, so
 * concurrent compiles share nothing mutable). Every stage of the pipeline runs
 * in its own pass manager so that a failure names the pass; diagnostics are
 * collected by a handler and returned as the error text.
 */
#include "cg_int.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/LLVM.h>
#include <mlir-c/Dialect/Transform/Interpreter.h>
#include <mlir-c/Pass.h>
#include <mlir-c/RegisterEverything.h>
#include <mlir-c/Target/LLVMIR.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_MAX (32 << 10) /* diagnostics beyond this are counted, not kept */

/* Passes before the transform script; the first two only when the module has
 * private helper functions. The lowering writes every structured op as a
 * linalg.generic carrying its intent (cg_script.c), so nothing is generalised. */
static const char *const prepare_passes[] = {
    "inline", "symbol-dce", "canonicalize", "cse",
};
#define N_INLINE_PASSES 2

/* Passes after bufferization, down to the LLVM dialect. Small static buffers
 * live on the stack (hoisted out of loops first); others get deallocations —
 * only when heap buffers remain, because the deallocation pass rejects ops it
 * cannot analyse (the LLVM atomics of tt.atomic_cas) even when nothing is
 * allocated. */
static const char *const stack_passes[] = {
    "func.func(lower-vector-mask)",
    "func.func(buffer-loop-hoisting)",
    "func.func(promote-buffers-to-stack{max-alloc-size-in-bytes=65536 "
    "max-rank-of-allocated-memref=0})",
};
static const char *const dealloc_passes[] = {
    "ownership-based-buffer-deallocation",
    "canonicalize",
    "buffer-deallocation-simplification",
    "bufferization-lower-deallocations",
};
static const char *const lower_passes[] = {
    "convert-vector-to-scf{full-unroll=true}",
    "convert-linalg-to-loops",
    "expand-strided-metadata",
    "lower-affine",
    "convert-scf-to-cf",
    "canonicalize",
    "convert-math-to-llvm",
    "convert-math-to-libm",
    "convert-vector-to-llvm{reassociate-fp-reductions=true}",
    "finalize-memref-to-llvm",
    "convert-arith-to-llvm",
    "convert-func-to-llvm",
    "convert-cf-to-llvm",
    "reconcile-unrealized-casts",
};

static pthread_once_t mlir_once = PTHREAD_ONCE_INIT;
static MlirDialectRegistry g_registry;

static void
init_mlir(void)
{
    g_registry = mlirDialectRegistryCreate();
    mlirRegisterAllDialects(g_registry);
    mlirRegisterAllPasses();
}

/* Builds the registries now (compiles in forked children then inherit them). */
void
cg_mlir_warm(void)
{
    pthread_once(&mlir_once, init_mlir);
}

typedef struct Diag {
    CgStr *err;
    const char *stage;
    int dropped;
} Diag;

static void
append_cb(MlirStringRef s, void *user)
{
    cg_str_append(user, s.data, s.length);
}

static void
print_diag(Diag *d, MlirDiagnostic diag, int depth)
{
    static const char *sev[] = {"error", "warning", "note", "remark"};
    MlirDiagnosticSeverity s = mlirDiagnosticGetSeverity(diag);
    if (depth == 0)
        cg_str_printf(d->err, "[%s] ", d->stage);
    else
        cg_str_printf(d->err, "  ");
    mlirLocationPrint(mlirDiagnosticGetLocation(diag), append_cb, d->err);
    cg_str_printf(d->err, ": %s: ", (unsigned)s < 4 ? sev[s] : "?");
    mlirDiagnosticPrint(diag, append_cb, d->err);
    cg_str_printf(d->err, "\n");
    for (intptr_t i = 0; i < mlirDiagnosticGetNumNotes(diag); i++)
        print_diag(d, mlirDiagnosticGetNote(diag, i), depth + 1);
}

static MlirLogicalResult
on_diag(MlirDiagnostic diag, void *user)
{
    Diag *d = user;
    MlirDiagnosticSeverity s = mlirDiagnosticGetSeverity(diag);
    if (s != MlirDiagnosticError && s != MlirDiagnosticWarning)
        return mlirLogicalResultSuccess();
    if (d->err->n > ERR_MAX) {
        d->dropped++;
        return mlirLogicalResultSuccess();
    }
    print_diag(d, diag, 0);
    return mlirLogicalResultSuccess();
}

/* Runs one textual pipeline element on the module; the stage name goes into
 * any diagnostic. */
static int
run_pass(MlirContext ctx, MlirModule mod, const char *pass, Diag *d)
{
    d->stage = pass;
    MlirPassManager pm = mlirPassManagerCreate(ctx);
    MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
    int rc = 0;
    CgStr perr = {0};
    MlirLogicalResult r = mlirOpPassManagerAddPipeline(opm, cg_sref(pass), append_cb, &perr);
    if (mlirLogicalResultIsFailure(r)) {
        cg_str_printf(d->err, "[%s] bad pass pipeline: %s\n", pass, perr.p ? perr.p : "");
        rc = -1;
    } else if (mlirLogicalResultIsFailure(
                   mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(mod)))) {
        cg_str_printf(d->err, "[%s] pass failed\n", pass);
        rc = -1;
    }
    cg_str_fini(&perr);
    mlirPassManagerDestroy(pm);
    return rc;
}

/* TRITIUM_CG_TRACE=1 prints the module after every stage to stderr,
 * TRITIUM_CG_TRACE=time only the time each stage took. */
static void
trace(MlirModule mod, const char *stage, double t0)
{
    const char *v = getenv("TRITIUM_CG_TRACE");
    if (!v)
        return;
    if (strcmp(v, "time") == 0) {
        fprintf(stderr, "cg: %-40.40s %7.2f ms\n", stage, cg_now_ms() - t0);
        return;
    }
    CgStr s = {0};
    mlirOperationPrint(mlirModuleGetOperation(mod), append_cb, &s);
    fprintf(stderr, "// ---- after %s\n%s\n", stage, s.p ? s.p : "");
    cg_str_fini(&s);
}

static int
run_passes(MlirContext ctx, MlirModule mod, const char *const *passes, size_t n, Diag *d)
{
    for (size_t i = 0; i < n; i++) {
        double t0 = cg_now_ms();
        if (run_pass(ctx, mod, passes[i], d))
            return -1;
        trace(mod, passes[i], t0);
    }
    return 0;
}

/* ---- kernel signature --------------------------------------------------------- */

static int
str_attr_is(MlirOperation op, const char *name, const char *value)
{
    MlirAttribute a = mlirOperationGetAttributeByName(op, cg_sref(name));
    if (mlirAttributeIsNull(a) || !mlirAttributeIsAString(a))
        return 0;
    MlirStringRef s = mlirStringAttrGetValue(a);
    return s.length == strlen(value) && memcmp(s.data, value, s.length) == 0;
}

static int
arg_of_type(MlirType t, CgArg *a)
{
    memset(a, 0, sizeof *a);
    if (mlirTypeIsAMemRef(t)) {
        a->kind = CG_ARG_MEMREF;
        a->rank = (uint8_t)mlirShapedTypeGetRank(t);
    } else if (mlirTypeIsAInteger(t)) {
        a->kind = CG_ARG_INT;
        a->bits = (uint8_t)mlirIntegerTypeGetWidth(t);
    } else if (mlirTypeIsAIndex(t)) {
        a->kind = CG_ARG_INT;
        a->bits = 64;
    } else if (mlirTypeIsAF16(t)) {
        a->kind = CG_ARG_F16;
    } else if (mlirTypeIsABF16(t)) {
        a->kind = CG_ARG_BF16;
    } else if (mlirTypeIsAF32(t)) {
        a->kind = CG_ARG_F32;
    } else if (mlirTypeIsAF64(t)) {
        a->kind = CG_ARG_F64;
    } else if (mlirTypeIsALLVMPointerType(t)) {
        a->kind = CG_ARG_PTR;
    } else {
        return -1;
    }
    return 0;
}

static int
count_funcs(MlirModule mod)
{
    int n = 0;
    for (MlirOperation o = mlirBlockGetFirstOperation(mlirModuleGetBody(mod));
         !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o)) {
        MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(o));
        n += s.length == 9 && memcmp(s.data, "func.func", 9) == 0;
    }
    return n;
}

/* Finds the one public func.func and records its parameters. */
static int
read_signature(MlirModule mod, CgSig *sig, CgStr *err)
{
    MlirBlock body = mlirModuleGetBody(mod);
    MlirOperation fn = {NULL};
    for (MlirOperation o = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(o);
         o = mlirOperationGetNextInBlock(o)) {
        MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(o));
        if (n.length != 9 || memcmp(n.data, "func.func", 9) != 0)
            continue;
        if (str_attr_is(o, "sym_visibility", "private"))
            continue;
        if (!mlirOperationIsNull(fn)) {
            cg_str_printf(err, "module has more than one public func.func\n");
            return -1;
        }
        fn = o;
    }
    if (mlirOperationIsNull(fn)) {
        cg_str_printf(err, "module has no public func.func (docs/compiler.md §1.1)\n");
        return -1;
    }
    MlirStringRef name =
        mlirStringAttrGetValue(mlirOperationGetAttributeByName(fn, cg_sref("sym_name")));
    if (name.length >= sizeof sig->name) {
        cg_str_printf(err, "kernel name too long\n");
        return -1;
    }
    memcpy(sig->name, name.data, name.length);
    sig->name[name.length] = '\0';
    MlirType ft = mlirTypeAttrGetValue(mlirOperationGetAttributeByName(fn, cg_sref("function_type")));
    sig->nargs = (int)mlirFunctionTypeGetNumInputs(ft);
    sig->args = calloc((size_t)sig->nargs + 1, sizeof *sig->args);
    if (!sig->args)
        abort();
    for (int i = 0; i < sig->nargs; i++) {
        if (arg_of_type(mlirFunctionTypeGetInput(ft, i), &sig->args[i]) ||
            (sig->args[i].kind == CG_ARG_MEMREF && sig->args[i].rank != 1)) {
            cg_str_printf(err, "@%s: parameter %d has an unsupported type (pointers are "
                               "memref<?xT>, scalars iN/f16/bf16/f32/f64)\n", sig->name, i);
            return -1;
        }
    }
    int n = sig->nargs;
    int ok = n >= 7 && sig->args[n - 1].kind == CG_ARG_PTR;
    for (int i = n - 7; ok && i < n - 1; i++)
        ok = sig->args[i].kind == CG_ARG_INT && sig->args[i].bits == 32;
    if (!ok) {
        cg_str_printf(err, "@%s: parameters must end with six i32 (program ids, grid) and "
                           "!llvm.ptr (docs/compiler.md §1.1)\n", sig->name);
        return -1;
    }
    return 0;
}

/* ---- transform script and cleanups --------------------------------------------- */

void
cg_opvec_push(CgOpVec *v, MlirOperation op)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 8;
        v->v = realloc(v->v, v->cap * sizeof *v->v);
        if (!v->v)
            abort();
    }
    v->v[v->n++] = op;
}

int
cg_op_is(MlirOperation op, const char *name)
{
    MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
    return n.length == strlen(name) && memcmp(n.data, name, n.length) == 0;
}

typedef struct NamedWalk {
    const char *name;
    CgOpVec *out;
} NamedWalk;

static MlirWalkResult
named_walk(MlirOperation op, void *user)
{
    NamedWalk *w = user;
    if (cg_op_is(op, w->name))
        cg_opvec_push(w->out, op);
    return MlirWalkResultAdvance;
}

void
cg_ops_named(MlirOperation root, const char *name, MlirWalkOrder order, CgOpVec *out)
{
    NamedWalk w = {name, out};
    mlirOperationWalk(root, named_walk, &w, order);
}

/* Runs the transform script 'script' (module text holding @__transform_main)
 * on mod. */
static int
apply_script(MlirContext ctx, MlirModule mod, const char *script, Diag *d)
{
    const char *tr = getenv("TRITIUM_CG_TRACE");
    if (tr && strcmp(tr, "time") != 0)
        fprintf(stderr, "// ---- transform script\n%s\n", script);
    d->stage = "transform script (parse)";
    MlirModule sm = mlirModuleCreateParse(ctx, cg_sref(script));
    int rc = -1;
    if (mlirModuleIsNull(sm))
        goto out;
    MlirOperation seq = mlirBlockGetFirstOperation(mlirModuleGetBody(sm));
    MlirTransformOptions topt = mlirTransformOptionsCreate();
    d->stage = "transform script";
    MlirLogicalResult r = mlirTransformApplyNamedSequence(mlirModuleGetOperation(mod), seq,
                                                          mlirModuleGetOperation(sm), topt);
    mlirTransformOptionsDestroy(topt);
    mlirModuleDestroy(sm);
    rc = mlirLogicalResultIsSuccess(r) ? 0 : -1;
out:
    if (rc)
        cg_str_printf(d->err, "[transform script] failed; the script was:\n%s", script);
    return rc;
}

/* The result tied to operand k of a destination-style op (the value that shares
 * the operand's buffer), or a null value when op is not one we follow. */
static MlirValue
tied_result(MlirOperation op, intptr_t k)
{
    MlirValue none = {NULL};
    intptr_t nres = mlirOperationGetNumResults(op);
    if (cg_op_is(op, "vector.transfer_write") || cg_op_is(op, "tensor.insert_slice"))
        return k == 1 && nres == 1 ? mlirOperationGetResult(op, 0) : none;
    if (cg_op_is(op, "scf.for"))
        return k >= 3 && k - 3 < nres ? mlirOperationGetResult(op, k - 3) : none;
    MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
    if (n.length > 7 && memcmp(n.data, "linalg.", 7) == 0) {
        intptr_t nin = mlirOperationGetNumOperands(op) - nres; /* outs tie to results */
        return k >= nin ? mlirOperationGetResult(op, k - nin) : none;
    }
    return none;
}

/* Is the value built on 'empty' a straight chain of single-use destination-style
 * updates ending in a materialize_in_destination? Only then may the empty tensor
 * become (a view of) the destination: MLIR 19's eliminate_empty_tensors does not
 * see that the destination is written behind the back of any other reader. */
static int
chain_is_linear(MlirOperation empty)
{
    MlirValue v = mlirOperationGetResult(empty, 0);
    for (int step = 0; step < 256; step++) {
        MlirOpOperand u = mlirValueGetFirstUse(v);
        if (mlirOpOperandIsNull(u) || !mlirOpOperandIsNull(mlirOpOperandGetNextUse(u)))
            return 0;
        MlirOperation owner = mlirOpOperandGetOwner(u);
        intptr_t k = (intptr_t)mlirOpOperandGetOperandNumber(u);
        if (cg_op_is(owner, "bufferization.materialize_in_destination"))
            return k == 0;
        v = tied_result(owner, k);
        if (mlirValueIsNull(v))
            return 0;
    }
    return 0;
}

/* Replaces tensor.empty 'op' by a bufferization.alloc_tensor of the same type,
 * which eliminate_empty_tensors leaves alone. */
static void
empty_to_alloc_tensor(MlirOperation op)
{
    MlirContext ctx = mlirOperationGetContext(op);
    MlirOperationState st =
        mlirOperationStateGet(cg_sref("bufferization.alloc_tensor"), mlirOperationGetLocation(op));
    intptr_t n = mlirOperationGetNumOperands(op);
    MlirValue dyn[8];
    for (intptr_t i = 0; i < n && i < 8; i++)
        dyn[i] = mlirOperationGetOperand(op, i);
    mlirOperationStateAddOperands(&st, n < 8 ? n : 8, dyn);
    MlirType t = mlirValueGetType(mlirOperationGetResult(op, 0));
    mlirOperationStateAddResults(&st, 1, &t);
    int32_t seg[3] = {(int32_t)(n < 8 ? n : 8), 0, 0};
    MlirNamedAttribute a = mlirNamedAttributeGet(
        mlirIdentifierGet(ctx, cg_sref("operandSegmentSizes")), mlirDenseI32ArrayGet(ctx, 3, seg));
    mlirOperationStateAddAttributes(&st, 1, &a);
    MlirOperation at = mlirOperationCreate(&st);
    mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(op), op, at);
    mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), mlirOperationGetResult(at, 0));
    mlirOperationRemoveFromParent(op);
    mlirOperationDestroy(op);
}

/* Gives every use of a tensor.empty its own op (MLIR 19's eliminate_empty_tensors
 * replaces all uses of the op it rewrites), then turns the empties whose value
 * does not flow linearly into one destination into alloc_tensor. */
static void
split_empty_tensors(MlirModule mod)
{
    CgOpVec v = {0};
    cg_ops_named(mlirModuleGetOperation(mod), "tensor.empty", MlirWalkPreOrder, &v);
    for (size_t i = 0; i < v.n; i++) {
        MlirValue r = mlirOperationGetResult(v.v[i], 0);
        CgOpVec users = {0};
        intptr_t nums[64];
        for (MlirOpOperand u = mlirValueGetFirstUse(r); !mlirOpOperandIsNull(u) && users.n < 64;
             u = mlirOpOperandGetNextUse(u)) {
            nums[users.n] = (intptr_t)mlirOpOperandGetOperandNumber(u);
            cg_opvec_push(&users, mlirOpOperandGetOwner(u));
        }
        for (size_t k = 1; k < users.n; k++) {
            MlirOperation c = mlirOperationClone(v.v[i]);
            mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(users.v[k]), users.v[k], c);
            mlirOperationSetOperand(users.v[k], nums[k], mlirOperationGetResult(c, 0));
            if (!chain_is_linear(c))
                empty_to_alloc_tensor(c);
        }
        free(users.v);
        if (!chain_is_linear(v.v[i]))
            empty_to_alloc_tensor(v.v[i]);
    }
    free(v.v);
}

static MlirWalkResult
find_self_copy(MlirOperation op, void *user)
{
    MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
    int is_copy = (n.length == 11 && memcmp(n.data, "linalg.copy", 11) == 0) ||
                  (n.length == 11 && memcmp(n.data, "memref.copy", 11) == 0);
    if (!is_copy || mlirOperationGetNumOperands(op) != 2 ||
        !mlirValueEqual(mlirOperationGetOperand(op, 0), mlirOperationGetOperand(op, 1)))
        return MlirWalkResultAdvance;
    cg_opvec_push(user, op);
    return MlirWalkResultSkip;
}

static MlirWalkResult
find_alloc(MlirOperation op, void *user)
{
    MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
    if (n.length == 12 && memcmp(n.data, "memref.alloc", 12) == 0) {
        *(int *)user = 1;
        return MlirWalkResultInterrupt;
    }
    return MlirWalkResultAdvance;
}

/* Whether a heap allocation (memref.alloc) is left in the module. */
static int
has_heap_alloc(MlirModule mod)
{
    int found = 0;
    mlirOperationWalk(mlirModuleGetOperation(mod), find_alloc, &found, MlirWalkPreOrder);
    return found;
}

/* Erases copies of a buffer onto itself (left by masked remainders). */
static void
erase_self_copies(MlirModule mod)
{
    CgOpVec v = {0};
    mlirOperationWalk(mlirModuleGetOperation(mod), find_self_copy, &v, MlirWalkPreOrder);
    for (size_t i = 0; i < v.n; i++) {
        mlirOperationRemoveFromParent(v.v[i]);
        mlirOperationDestroy(v.v[i]);
    }
    free(v.v);
}

/* ---- api ------------------------------------------------------------------------ */

int
cg_mlir_compile(const char *text, size_t len, const CgOptions *o, LLVMContextRef lctx,
                LLVMModuleRef *out, CgSig *sig, CgResult *res, CgStr *err)
{
    double t0 = cg_now_ms();
    pthread_once(&mlir_once, init_mlir);
    *out = NULL;
    MlirContext ctx = mlirContextCreateWithRegistry(g_registry, false);
    mlirRegisterAllLLVMTranslations(ctx);
    Diag d = {err, "parse", 0};
    MlirDiagnosticHandlerID hid = mlirContextAttachDiagnosticHandler(ctx, on_diag, &d, NULL);
    int rc = -1;
    MlirModule mod = mlirModuleCreateParse(ctx, mlirStringRefCreate(text, len));
    if (mlirModuleIsNull(mod)) {
        cg_str_printf(err, "[parse] cannot parse the Linalg module\n");
        goto out_ctx;
    }
    trace(mod, "registry, context, parse", t0);
    if (read_signature(mod, sig, err))
        goto out;
    size_t skip = count_funcs(mod) > 1 ? 0 : N_INLINE_PASSES;
    if (run_passes(ctx, mod, prepare_passes + skip,
                   sizeof prepare_passes / sizeof *prepare_passes - skip, &d))
        goto out;
    double t_script = cg_now_ms();
    char *script = cg_script_build(mlirModuleGetOperation(mod), err);
    if (!script)
        goto out;
    int src = apply_script(ctx, mod, script, &d);
    free(script);
    if (src)
        goto out;
    cg_reduce_minmax_merges(mod);
    trace(mod, "transform script (tile, vectorize)", t_script);
    t_script = cg_now_ms();
    split_empty_tensors(mod);
    char *bscript = cg_script_bufferize();
    int bsrc = apply_script(ctx, mod, bscript, &d);
    free(bscript);
    if (bsrc)
        goto out;
    cg_split_masked_loops(mod);
    bscript = cg_script_transfers(!cg_target_is_riscv(&o->target) && !strstr(o->target.features, "+avx512f"));
    bsrc = apply_script(ctx, mod, bscript, &d);
    free(bscript);
    if (bsrc)
        goto out;
    trace(mod, "transform script (bufferize)", t_script);
    erase_self_copies(mod);
    t_script = cg_now_ms();
    if (cg_par_outline(mod, err) < 0)
        goto out;
    trace(mod, "outline parallel loops", t_script);
    if (run_passes(ctx, mod, stack_passes, sizeof stack_passes / sizeof *stack_passes, &d))
        goto out;
    if (has_heap_alloc(mod) &&
        run_passes(ctx, mod, dealloc_passes, sizeof dealloc_passes / sizeof *dealloc_passes, &d))
        goto out;
    if (run_passes(ctx, mod, lower_passes, sizeof lower_passes / sizeof *lower_passes, &d))
        goto out;
    if (o->want_stages) {
        CgStr s = {0};
        mlirOperationPrint(mlirModuleGetOperation(mod), append_cb, &s);
        res->ll_mlir = cg_str_take(&s);
    }
    d.stage = "translate to LLVM IR";
    *out = mlirTranslateModuleToLLVMIR(mlirModuleGetOperation(mod), lctx);
    if (!*out) {
        cg_str_printf(err, "[translate to LLVM IR] failed\n");
        goto out;
    }
    rc = 0;
out:
    mlirModuleDestroy(mod);
out_ctx:
    if (d.dropped)
        cg_str_printf(err, "(%d more diagnostics dropped)\n", d.dropped);
    mlirContextDetachDiagnosticHandler(ctx, hid);
    mlirContextDestroy(ctx);
    return rc;
}
