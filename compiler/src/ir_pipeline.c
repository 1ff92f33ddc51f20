/*
 * ir_pipeline.c — the order of the tile-IR passes (ir_pipeline_run).
 *
 * The module is verified first (builder bugs surface here, not in a pass), then
 * every pass runs on every function and the verifier runs again after it, so a
 * broken pass is caught at the pass that broke the IR. With a dump stream, each
 * pass prints "// after <pass>" and the module in the syntax ir_parse.c reads.
 */
#include "ir_int.h"

#include <string.h>

typedef struct IrPass {
    const char *name;
    void (*run)(IrFunc *f);
} IrPass;

static const IrPass passes[] = {
    {"canonicalize", ir_canonicalize},
    {"cse", ir_cse},
    {"accum", ir_accum},
    {"dce", ir_dce},
    {"ptrcarry", ir_ptr_carry},
};

static int
verify_module(IrModule *m, const char *after)
{
    int nerr = 0;
    for (IrFunc *f = m->funcs; f; f = f->next)
        nerr += ir_verify_func(f);
    if (nerr && after)
        ir_diag(m, m->funcs->loc, 0, "internal error: the IR is invalid after %s", after);
    return nerr;
}

bool
ir_pipeline_has_pass(const char *name)
{
    if (!strcmp(name, "all") || !strcmp(name, "input"))
        return true;
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
        if (!strcmp(name, passes[i].name))
            return true;
    return false;
}

int
ir_pipeline_run_dump(IrModule *m, FILE *dump, const char *which)
{
    int nerr = verify_module(m, NULL);
    if (nerr)
        return nerr;
    if (dump && which && !strcmp(which, "input")) {
        fputs("// input\n", dump);
        ir_print_module(dump, m, 0);
    }
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
        for (IrFunc *f = m->funcs; f; f = f->next)
            passes[i].run(f);
        if ((nerr = verify_module(m, passes[i].name)))
            return nerr;
        if (dump && (!which || !strcmp(which, "all") || !strcmp(which, passes[i].name))) {
            fprintf(dump, "// after %s\n", passes[i].name);
            ir_print_module(dump, m, 0);
        }
    }
    return 0;
}

int
ir_pipeline_run(IrModule *m, FILE *dump)
{
    return ir_pipeline_run_dump(m, dump, NULL);
}
