/*
 * cg_llvm.c — the LLVM half of a compile: the tritium_kernel entry point
 * (docs/compiler.md §1.2), O3 for the target machine, object and assembly.
 *
 * The entry reads one 8-byte slot per kernel parameter, expands pointers into
 * memref descriptors (allocated = aligned = ptr, offset 0, size INT64_MAX,
 * stride 1) and calls the kernel, which is made internal so that O3 inlines it.
 */
#include "cg_int.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Entry {
    LLVMContextRef c;
    LLVMBuilderRef b;
    LLVMValueRef args; /* const uint64_t *args */
    LLVMValueRef *vals;
    unsigned n;
} Entry;

static void
push(Entry *e, LLVMValueRef v)
{
    e->vals[e->n++] = v;
}

/* Loads slot i as type t (the value sits in the slot's low bytes). */
static LLVMValueRef
load_slot(Entry *e, int i, LLVMTypeRef t)
{
    LLVMTypeRef i64 = LLVMInt64TypeInContext(e->c);
    LLVMValueRef idx = LLVMConstInt(i64, (unsigned long long)i, 0);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(e->b, i64, e->args, &idx, 1, "slot");
    LLVMValueRef v = LLVMBuildLoad2(e->b, t, p, "arg");
    LLVMSetAlignment(v, 8);
    return v;
}

static void
push_arg(Entry *e, int i, const CgArg *a)
{
    LLVMContextRef c = e->c;
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c);
    switch ((CgArgKind)a->kind) {
    case CG_ARG_MEMREF: {
        LLVMValueRef p = load_slot(e, i, LLVMPointerTypeInContext(c, 0));
        push(e, p);
        push(e, p);
        push(e, LLVMConstInt(i64, 0, 0));
        for (int r = 0; r < a->rank; r++)
            push(e, LLVMConstInt(i64, INT64_MAX, 0));
        for (int r = 0; r < a->rank; r++)
            push(e, LLVMConstInt(i64, 1, 0));
        break;
    }
    case CG_ARG_INT:
        if (a->bits == 1) {
            LLVMValueRef v = load_slot(e, i, LLVMInt8TypeInContext(c));
            push(e, LLVMBuildICmp(e->b, LLVMIntNE, v, LLVMConstInt(LLVMTypeOf(v), 0, 0), "b"));
        } else {
            push(e, load_slot(e, i, LLVMIntTypeInContext(c, a->bits)));
        }
        break;
    case CG_ARG_F16: push(e, load_slot(e, i, LLVMHalfTypeInContext(c))); break;
    case CG_ARG_BF16: push(e, load_slot(e, i, LLVMBFloatTypeInContext(c))); break;
    case CG_ARG_F32: push(e, load_slot(e, i, LLVMFloatTypeInContext(c))); break;
    case CG_ARG_F64: push(e, load_slot(e, i, LLVMDoubleTypeInContext(c))); break;
    case CG_ARG_PTR: push(e, load_slot(e, i, LLVMPointerTypeInContext(c, 0))); break;
    case CG_ARG_KIND_COUNT: break;
    }
}

static unsigned
llvm_param_count(const CgSig *sig)
{
    unsigned n = 7;
    for (int i = 0; i < sig->nargs - 7; i++)
        n += sig->args[i].kind == CG_ARG_MEMREF ? 3u + 2u * sig->args[i].rank : 1u;
    return n;
}

/* Adds tritium_kernel(args, pid_x, pid_y, pid_z, num_x, num_y, num_z, pctx). */
static int
build_entry(LLVMModuleRef m, LLVMValueRef kfn, const CgSig *sig, CgStr *err)
{
    unsigned want = llvm_param_count(sig);
    if (LLVMCountParams(kfn) != want) {
        cg_str_printf(err, "@%s has %u LLVM parameters, expected %u\n", sig->name,
                      LLVMCountParams(kfn), want);
        return -1;
    }
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0), i32 = LLVMInt32TypeInContext(c);
    LLVMTypeRef ps[8] = {ptr, i32, i32, i32, i32, i32, i32, ptr};
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(c), ps, 8, 0);
    LLVMValueRef fn = LLVMAddFunction(m, CG_ENTRY_SYMBOL, fty);
    LLVMSetLinkage(fn, LLVMExternalLinkage);
    LLVMSetVisibility(fn, LLVMDefaultVisibility);
    Entry e = {c, LLVMCreateBuilderInContext(c), LLVMGetParam(fn, 0), NULL, 0};
    e.vals = calloc(want, sizeof *e.vals);
    if (!e.vals)
        abort();
    LLVMPositionBuilderAtEnd(e.b, LLVMAppendBasicBlockInContext(c, fn, "entry"));
    for (int i = 0; i < sig->nargs - 7; i++)
        push_arg(&e, i, &sig->args[i]);
    for (unsigned i = 1; i < 8; i++)
        push(&e, LLVMGetParam(fn, i));
    int rc = 0;
    for (unsigned i = 0; i < want && rc == 0; i++) {
        if (LLVMTypeOf(e.vals[i]) != LLVMTypeOf(LLVMGetParam(kfn, i))) {
            cg_str_printf(err, "@%s: LLVM parameter %u has an unexpected type\n", sig->name, i);
            rc = -1;
        }
    }
    if (rc == 0) {
        LLVMBuildCall2(e.b, LLVMGlobalGetValueType(kfn), kfn, e.vals, want, "");
        LLVMBuildRetVoid(e.b);
    }
    LLVMDisposeBuilder(e.b);
    free(e.vals);
    return rc;
}

/* Target triple, data layout, CPU and features on every defined function. */
static void
set_target(LLVMModuleRef m, LLVMTargetMachineRef tm, const CgTarget *t)
{
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMSetTarget(m, t->triple);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(m, td);
    LLVMDisposeTargetData(td);
    if (cg_target_is_riscv(t))
        LLVMAddModuleFlag(m, LLVMModuleFlagBehaviorError, "target-abi", 10,
                          LLVMMDStringInContext2(c, "lp64d", 5));
    LLVMAttributeRef cpu = LLVMCreateStringAttribute(c, "target-cpu", 10, t->cpu,
                                                     (unsigned)strlen(t->cpu));
    LLVMAttributeRef feat = LLVMCreateStringAttribute(c, "target-features", 15, t->features,
                                                      (unsigned)strlen(t->features));
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        if (LLVMIsDeclaration(f))
            continue;
        LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, cpu);
        LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, feat);
    }
}

static int
optimize(LLVMModuleRef m, LLVMTargetMachineRef tm, int level, CgStr *err)
{
    char pipeline[32];
    snprintf(pipeline, sizeof pipeline, "default<O%d>", level < 0 ? 0 : level > 3 ? 3 : level);
    LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(pbo, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(pbo, 1);
    LLVMPassBuilderOptionsSetLoopUnrolling(pbo, 1);
    LLVMErrorRef e = LLVMRunPasses(m, pipeline, tm, pbo);
    LLVMDisposePassBuilderOptions(pbo);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        cg_str_printf(err, "[llvm %s] %s\n", pipeline, msg);
        LLVMDisposeErrorMessage(msg);
        return -1;
    }
    return 0;
}

/* Emits m as an object or assembly file into a malloc'ed buffer. */
static int
emit(LLVMTargetMachineRef tm, LLVMModuleRef m, LLVMCodeGenFileType ft, uint8_t **out,
     size_t *len, CgStr *err)
{
    LLVMMemoryBufferRef buf = NULL;
    char *msg = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, ft, &msg, &buf)) {
        cg_str_printf(err, "[llvm codegen] %s\n", msg ? msg : "failed");
        LLVMDisposeMessage(msg);
        return -1;
    }
    size_t n = LLVMGetBufferSize(buf);
    *out = malloc(n + 1);
    if (!*out)
        abort();
    memcpy(*out, LLVMGetBufferStart(buf), n);
    (*out)[n] = 0;
    *len = n;
    LLVMDisposeMemoryBuffer(buf);
    return 0;
}

int
cg_llvm_finish(LLVMModuleRef m, const CgSig *sig, const CgOptions *o, CgResult *res, CgStr *err)
{
    LLVMValueRef kfn = LLVMGetNamedFunction(m, sig->name);
    if (!kfn) {
        cg_str_printf(err, "kernel @%s missing after translation\n", sig->name);
        return -1;
    }
    LLVMTargetMachineRef tm = cg_target_machine_create(&o->target, o->opt_level, err);
    if (!tm)
        return -1;
    int rc = -1;
    if (build_entry(m, kfn, sig, err) || cg_par_dispatch(m, err) < 0)
        goto out;
    LLVMSetLinkage(kfn, LLVMInternalLinkage);
    set_target(m, tm, &o->target);
    cg_cold_branch(m);
    cg_scalef(m, &o->target);
    char *msg = NULL;
    if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
        cg_str_printf(err, "[llvm verify] %s\n", msg);
        LLVMDisposeMessage(msg);
        goto out;
    }
    LLVMDisposeMessage(msg);
    if (optimize(m, tm, o->opt_level, err))
        goto out;
    if (o->stream_variant && (res->streamed_stores = cg_stream_add(m, &o->target, err)) < 0)
        goto out;
    if (o->want_stages) {
        res->llvm_ir = LLVMPrintModuleToString(m);
        /* LLVM's string must be freed with LLVMDisposeMessage; keep ours malloc'ed */
        char *ir = strdup(res->llvm_ir);
        LLVMDisposeMessage(res->llvm_ir);
        res->llvm_ir = ir;
        LLVMModuleRef clone = LLVMCloneModule(m);
        uint8_t *as = NULL;
        size_t alen = 0;
        int arc = emit(tm, clone, LLVMAssemblyFile, &as, &alen, err);
        LLVMDisposeModule(clone);
        if (arc)
            goto out;
        res->asm_text = (char *)as;
    }
    cg_spills_restart(m); /* count the object's codegen only */
    if (emit(tm, m, LLVMObjectFile, &res->obj, &res->obj_len, err))
        goto out;
    rc = 0;
out:
    LLVMDisposeTargetMachine(tm);
    return rc;
}
