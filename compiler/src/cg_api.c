/*
 * cg_api.c — the public entry points of code generation (codegen.h): one
 * compile is MLIR (cg_mlir.c) -> LLVM (cg_llvm.c) -> link (cg_link.c), timed per
 * phase. Also the small text buffer every cg_ file uses for messages, and the
 * library's dlopen table cg_api (declared in driver.h: most of it is the driver).
 */
#include "cg_int.h"
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- text buffer ---------------------------------------------------------------- */

void
cg_str_append(CgStr *s, const char *p, size_t n)
{
    if (s->n + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->n + n + 1)
            cap *= 2;
        char *q = realloc(s->p, cap);
        if (!q)
            abort();
        s->p = q;
        s->cap = cap;
    }
    memcpy(s->p + s->n, p, n);
    s->n += n;
    s->p[s->n] = '\0';
}

void
cg_str_printf(CgStr *s, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        cg_str_append(s, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big)
        abort();
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    cg_str_append(s, big, (size_t)n);
    free(big);
}

char *
cg_str_take(CgStr *s)
{
    char *p = s->p;
    memset(s, 0, sizeof *s);
    return p;
}

void
cg_str_fini(CgStr *s)
{
    free(s->p);
    memset(s, 0, sizeof *s);
}

double
cg_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- api -------------------------------------------------------------------------- */

CG_EXPORT int
cg_compile(const char *linalg, size_t len, const CgOptions *o, const char *so_path, CgResult *res)
{
    memset(res, 0, sizeof *res);
    CgStr err = {0};
    CgSig sig = {0};
    LLVMContextRef lctx = LLVMContextCreate();
    CgSpills spills;
    cg_spills_watch(lctx, &spills);
    LLVMModuleRef mod = NULL;
    int rc = -1;
    double t0 = cg_now_ms();
    if (cg_mlir_compile(linalg, len, o, lctx, &mod, &sig, res, &err))
        goto out;
    double t1 = cg_now_ms();
    res->ms_mlir = t1 - t0;
    if (cg_llvm_finish(mod, &sig, o, res, &err) || spills.error) {
        if (spills.error)
            cg_str_printf(&err, "[llvm] %s\n", spills.error);
        goto out;
    }
    double t2 = cg_now_ms();
    res->ms_llvm = t2 - t1;
    res->spills = spills.spills;
    res->reloads = spills.reloads;
    if (so_path && cg_link(res->obj, res->obj_len, o, so_path, &err))
        goto out;
    res->ms_link = cg_now_ms() - t2;
    rc = 0;
out:
    if (mod)
        LLVMDisposeModule(mod);
    LLVMContextDispose(lctx);
    cg_spills_fini(&spills);
    free(sig.args);
    if (rc && !err.p)
        cg_str_printf(&err, "compile failed\n");
    res->error = cg_str_take(&err);
    return rc;
}

CG_EXPORT void
cg_result_fini(CgResult *res)
{
    free(res->ll_mlir);
    free(res->llvm_ir);
    free(res->asm_text);
    free(res->obj);
    free(res->error);
    memset(res, 0, sizeof *res);
}

CG_EXPORT const CgApi cg_api = {
    .abi_version = CG_ABI_VERSION,
    .host_target = cg_host_target,
    .compile = cg_compile,
    .result_fini = cg_result_fini,
    .drv_options_init = drv_options_init,
    .drv_compile = drv_compile,
    .drv_result_fini = drv_result_fini,
    .drv_server_create = drv_server_create,
    .drv_server_destroy = drv_server_destroy,
    .drv_server_pid = drv_server_pid,
    .drv_server_forget = drv_server_forget,
    .target_for_arch = cg_target_for_arch,
};
