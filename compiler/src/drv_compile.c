/*
 * drv_compile.c — the compile driver (driver.h): TTIR text -> ir_parse_module ->
 * ir_pipeline_run -> lo_vector_bytes + lo_lower_module -> cg_compile, with every
 * stage, the cost, the diagnostics and the times copied into a DrvResult before
 * the module is destroyed. A compile keeps its state on the stack and in its
 * result; nothing here is process-wide.
 */
#include "drv_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir_int.h"

static const char *const stage_names[DRV_STAGE_COUNT] = {"ttir", "linalg", "llmlir", "llir", "asm"};
static const char *const phase_names[DRV_PHASE_COUNT] = {"frontend", "lower", "mlir", "llvm", "link"};
static const char *const status_names[DRV_STATUS_COUNT] = {"ok",      "options", "parse", "diag",
                                                           "codegen", "crash",   "system"};

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static char *
strdup_or_die(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p)
        ir_die("out of memory");
    return p;
}

/* A memory stream for text that ends up in the result; aborts when out of memory. */
static FILE *
text_stream(char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (!f)
        ir_die("out of memory");
    return f;
}

static char *
module_text(IrModule *m, unsigned flags, size_t *len)
{
    char *buf;
    FILE *f = text_stream(&buf, len);
    ir_print_module(f, m, flags);
    fclose(f);
    return buf;
}

/* ---- results ------------------------------------------------------------------------------ */

DrvStatus
drv_fail(DrvResult *res, DrvStatus st, const char *fmt, ...)
{
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        ir_die("out of memory");
    va_end(ap);
    free(res->error);
    res->error = msg;
    res->status = st;
    return st;
}

/* Copies the module's diagnostics (all of them: the lowering adds remarks). */
static void
copy_diags(DrvResult *res, IrModule *m)
{
    int n = 0, sev, line, col;
    const char *file;
    while (ir_module_diag(m, n, &sev, &file, &line, &col))
        n++;
    res->diags = n ? calloc((size_t)n, sizeof *res->diags) : NULL;
    if (n && !res->diags)
        ir_die("out of memory");
    for (int i = 0; i < n; i++) {
        DrvDiag *d = &res->diags[i];
        const char *msg = ir_module_diag(m, i, &sev, &file, &line, &col);
        *d = (DrvDiag){.severity = sev, .file = strdup_or_die(file), .line = line, .col = col,
                       .msg = strdup_or_die(msg)};
    }
    res->ndiags = n;
}

/* The module's errors as DRV_ERR_DIAG: the list, and error as ir_module_print_diags writes it. */
static DrvStatus
diag_failure(DrvResult *res, IrModule *m)
{
    char *buf;
    size_t len;
    FILE *f = text_stream(&buf, &len);
    ir_module_print_diags(m, f);
    fclose(f);
    copy_diags(res, m);
    drv_fail(res, DRV_ERR_DIAG, "%s", len ? buf : "compilation failed\n");
    free(buf);
    return DRV_ERR_DIAG;
}

static void
copy_cost(DrvResult *res, const IrCost *c)
{
    res->cost = *c;
    for (int i = 0; i < c->nscopes; i++)
        res->cost.scope_names[i] = strdup_or_die(c->scope_names[i]);
}

DRV_EXPORT void
drv_result_fini(DrvResult *res)
{
    for (int i = 0; i < DRV_STAGE_COUNT; i++)
        free(res->stage[i]);
    for (int i = 0; i < res->cost.nscopes; i++)
        free((char *)res->cost.scope_names[i]);
    for (int i = 0; i < res->ndiags; i++) {
        free(res->diags[i].file);
        free(res->diags[i].msg);
    }
    free(res->diags);
    free(res->kernel.file);
    free(res->obj);
    free(res->pass_dump);
    free(res->error);
    memset(res, 0, sizeof *res);
}

/* ---- the two halves ---------------------------------------------------------------------- */

/* Verify + passes (or only the "input" dump with skip_passes); 0 or the error count. */
static int
run_passes(IrModule *m, const DrvOptions *o, DrvResult *res)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *dump = o->dump_pass ? text_stream(&buf, &len) : NULL;
    int nerr = 0;
    if (!o->skip_passes) {
        nerr = ir_pipeline_run_dump(m, dump, o->dump_pass);
    } else if (dump && !strcmp(o->dump_pass, "input")) {
        fputs("// input\n", dump);
        ir_print_module(dump, m, 0);
    }
    if (dump) {
        fclose(dump);
        res->pass_dump = buf;
    }
    return nerr;
}

static DrvStatus
lower(IrModule *m, const DrvOptions *o, const CgTarget *t, DrvResult *res)
{
    res->vector_bytes = o->vector_bytes ? o->vector_bytes : lo_vector_bytes(m, t->vector_bytes, t->vector_bytes_max);
    LoOptions lo = {.vector_bytes = res->vector_bytes,
                    /* kernels narrowed below the widest vector keep the 16-register
                     * contraction block they were measured with */
                    .vector_regs = res->vector_bytes >= t->vector_bytes_max ? t->vector_regs : 16,
                    .fma_scalar_operand = t->fma_scalar_operand,
                    .dot_bf16_pairs = t->dot_bf16_pairs && res->vector_bytes >= 32,
                    .bf16_vector_cvt = t->dot_bf16_pairs, /* both come with AVX512-BF16 */
                    .instrument = o->instrument};
    char *text = NULL;
    size_t len = 0;
    IrCost cost;
    memset(&cost, 0, sizeof cost);
    if (lo_lower_module(m, &lo, &text, &len, &cost) != 0) {
        free(text);
        return diag_failure(res, m);
    }
    res->stage[DRV_STAGE_LINALG] = text;
    res->stage_len[DRV_STAGE_LINALG] = len;
    copy_cost(res, &cost);
    copy_diags(res, m);
    for (const IrFunc *f = m->funcs; f; f = f->next)
        if (f->is_public) {
            res->kernel = (DrvDiag){.severity = 2, .file = strdup_or_die(m->strs[f->loc.file]),
                                    .line = (int)f->loc.line, .col = (int)f->loc.col};
            break;
        }
    return DRV_OK;
}

/* The register allocator's spills as a remark at the kernel's definition (docs/compiler.md
 * §5): they cost a store and loads per value each time round, usually in the hot loop. */
static void
add_spill_remark(DrvResult *res, int spills, int reloads)
{
    char *msg;
    if (asprintf(&msg, "spills: LLVM's register allocator added %d spill%s and %d reload%s "
                 "(more values live than registers, or live across a call such as an "
                 "in-kernel scope's; smaller tiles or fewer live accumulators avoid the "
                 "first kind)", spills, spills == 1 ? "" : "s", reloads,
                 reloads == 1 ? "" : "s") < 0)
        ir_die("out of memory");
    DrvDiag *nd = realloc(res->diags, sizeof *nd * (size_t)(res->ndiags + 1));
    if (!nd)
        ir_die("out of memory");
    res->diags = nd;
    nd[res->ndiags++] = (DrvDiag){.severity = 2, .file = strdup_or_die(res->kernel.file ? res->kernel.file : ""),
                                  .line = res->kernel.line, .col = res->kernel.col, .msg = msg};
}

DrvStatus
drv_front(const char *ttir, size_t len, const DrvOptions *o, const CgTarget *t, DrvResult *res)
{
    double t0 = now_ms();
    char *errs;
    size_t elen;
    FILE *ef = text_stream(&errs, &elen);
    IrModule *m = ir_parse_module(ttir, len, o->name ? o->name : "<input>", ef);
    fclose(ef);
    if (!m) {
        drv_fail(res, DRV_ERR_PARSE, "%s", elen ? errs : "the input does not parse\n");
        free(errs);
        return DRV_ERR_PARSE;
    }
    free(errs);
    DrvStatus st = DRV_OK;
    if (run_passes(m, o, res)) {
        st = diag_failure(res, m);
        goto out;
    }
    if (o->want_stages || o->last == DRV_LAST_TTIR)
        res->stage[DRV_STAGE_TTIR] = module_text(m, o->ttir_locs ? IR_PRINT_LOCS : 0, &res->stage_len[DRV_STAGE_TTIR]);
    double t1 = now_ms();
    res->ms[DRV_PHASE_FRONTEND] = t1 - t0;
    if (o->last != DRV_LAST_TTIR) {
        st = lower(m, o, t, res);
        res->ms[DRV_PHASE_LOWER] = now_ms() - t1;
    }
out:
    ir_module_destroy(m);
    res->status = st;
    return st;
}

DrvStatus
drv_codegen(const DrvOptions *o, const CgTarget *t, DrvResult *res)
{
    const IrCost *c = &res->cost;
    CgOptions co = {.target = *t, .opt_level = 3, .want_stages = o->want_stages};
    co.target.vector_bytes = res->vector_bytes;
    co.stream_variant = o->stream == DRV_STREAM_AUTO && c->exact && c->bytes_stored > 0 && !c->atomics;
    CgResult cr;
    int rc = cg_compile(res->stage[DRV_STAGE_LINALG], res->stage_len[DRV_STAGE_LINALG], &co, o->so_path, &cr);
    char **take[] = {&cr.ll_mlir, &cr.llvm_ir, &cr.asm_text}; /* ORDER DRV_STAGE from LLMLIR */
    for (int i = 0; i < 3; i++) {
        res->stage[DRV_STAGE_LLMLIR + i] = *take[i];
        res->stage_len[DRV_STAGE_LLMLIR + i] = *take[i] ? strlen(*take[i]) : 0;
        *take[i] = NULL;
    }
    res->obj = cr.obj;
    res->obj_len = cr.obj_len;
    cr.obj = NULL;
    res->ms[DRV_PHASE_MLIR] = cr.ms_mlir;
    res->ms[DRV_PHASE_LLVM] = cr.ms_llvm;
    res->ms[DRV_PHASE_LINK] = cr.ms_link;
    res->stream_bytes = cr.streamed_stores > 0 ? c->bytes_stored : 0;
    if (rc == 0 && cr.spills + cr.reloads > 0)
        add_spill_remark(res, cr.spills, cr.reloads);
    res->status = DRV_OK;
    if (rc != 0)
        drv_fail(res, DRV_ERR_CODEGEN, "%s", cr.error && cr.error[0] ? cr.error : "code generation failed\n");
    cg_result_fini(&cr);
    return res->status;
}

/* ---- api ------------------------------------------------------------------------------------ */

DRV_EXPORT void
drv_options_init(DrvOptions *o)
{
    memset(o, 0, sizeof *o);
    o->instrument = true;
    o->stream = DRV_STREAM_AUTO;
    o->want_stages = true;
    o->last = DRV_LAST_NATIVE;
}

static DrvStatus
check_options(const DrvOptions *o, DrvResult *res)
{
    if (o->vector_bytes && o->vector_bytes != 16 && o->vector_bytes != 32 && o->vector_bytes != 64)
        return drv_fail(res, DRV_ERR_OPTIONS, "vector width %d: use 16, 32 or 64 bytes (0: per kernel)",
                        o->vector_bytes);
    if ((unsigned)o->last >= DRV_LAST_COUNT || (unsigned)o->stream >= DRV_STREAM_COUNT)
        return drv_fail(res, DRV_ERR_OPTIONS, "invalid stage or streaming option");
    if (o->dump_pass && !ir_pipeline_has_pass(o->dump_pass))
        return drv_fail(res, DRV_ERR_OPTIONS, "unknown pass '%s' (canonicalize, cse, dce, all, input)", o->dump_pass);
    return DRV_OK;
}

DRV_EXPORT DrvStatus
drv_compile(const char *ttir, size_t len, const DrvOptions *o, DrvServer *s, DrvResult *res)
{
    memset(res, 0, sizeof *res);
    if (check_options(o, res))
        return res->status;
    CgTarget t;
    char why[512];
    memset(&t, 0, sizeof t);
    if (o->target)
        t = *o->target;
    else if (o->last != DRV_LAST_TTIR && cg_target_for_arch(NULL, &t, why, sizeof why) != 0)
        return drv_fail(res, DRV_ERR_SYSTEM, "%s", why);
    if (o->isolate)
        return drv_isolated_compile(ttir, len, o, &t, s, res);
    if (drv_front(ttir, len, o, &t, res) == DRV_OK && o->last == DRV_LAST_NATIVE)
        drv_codegen(o, &t, res);
    return res->status;
}

DRV_EXPORT const char *
drv_stage_name(DrvStage s)
{
    return (unsigned)s < DRV_STAGE_COUNT ? stage_names[s] : "?";
}

DRV_EXPORT const char *
drv_phase_name(DrvPhase p)
{
    return (unsigned)p < DRV_PHASE_COUNT ? phase_names[p] : "?";
}

DRV_EXPORT const char *
drv_status_name(DrvStatus s)
{
    return (unsigned)s < DRV_STATUS_COUNT ? status_names[s] : "?";
}
