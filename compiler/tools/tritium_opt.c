/*
 * tritium_opt.c — tritium-opt: reads TTIR, runs the IR pipeline, emits a stage.
 *
 *   tritium-opt file.ttir [--emit=ttir|linalg|llmlir|llir|asm|obj|so] [-o out]
 *               [--dump=<pass>|all|input] [--no-passes] [--print-locs]
 *
 * Lets every compiler stage be tested from a text file without Python
 * (docs/ttir.md). Code generation (cg_*, linked as objects) is referenced
 * weakly so that the tool still builds and serves the TTIR and Linalg stages
 * without it; asking for a native stage then fails cleanly. Exit status: 0 on
 * success, 1 on any error.
 */
#include "codegen.h"
#include "compiler.h"
#include "ir_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Weak: the cg_ objects are linked directly (never from an archive, where a weak
 * reference would not pull them in), so these are NULL only when absent. */
#pragma weak cg_host_target
#pragma weak cg_compile
#pragma weak cg_result_fini

/* ORDER EMIT: the stages in pipeline order */
enum { EMIT_TTIR, EMIT_LINALG, EMIT_LLMLIR, EMIT_LLIR, EMIT_ASM, EMIT_OBJ, EMIT_SO, EMIT_COUNT };
static const char *const emit_names[EMIT_COUNT] = {"ttir", "linalg", "llmlir", "llir", "asm", "obj", "so"};

typedef struct Opts {
    const char *in, *out, *dump;
    int emit;
    bool no_passes, locs;
} Opts;

static void
usage(FILE *f)
{
    fputs("usage: tritium-opt FILE.ttir|- [options]\n"
          "  --emit=STAGE     ttir (default), linalg, llmlir (LLVM-dialect MLIR), llir (LLVM IR),\n"
          "                   asm, obj (relocatable ELF object), so (shared library; needs -o)\n"
          "  -o FILE          output file (default: standard output)\n"
          "  --dump=PASS      print the IR to stderr after PASS (canonicalize, cse, dce),\n"
          "                   after every pass (all), or as parsed (input)\n"
          "  --no-passes      skip canonicalize/cse/dce (the input is still verified)\n"
          "  --print-locs     print loc(...) after every op\n"
          "  -h, --help       this text\n",
          f);
}

static int
fail(const char *fmt, const char *arg)
{
    fputs("tritium-opt: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return 1;
}

/* Reads all of path ("-" = stdin); NULL with errno on failure. Caller frees. */
static char *
read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (n + 4096 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0)
            break;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    if (f != stdin)
        fclose(f);
    *len = n;
    return buf;
}

static int
write_out(const Opts *o, const char *text, size_t len)
{
    FILE *f = o->out && strcmp(o->out, "-") ? fopen(o->out, "wb") : stdout;
    if (!f)
        return fail("cannot open %s for writing", o->out);
    fwrite(text, 1, len, f);
    int rc = ferror(f) ? 1 : 0;
    if (f != stdout && fclose(f) != 0)
        rc = 1;
    return rc ? fail("cannot write %s", o->out ? o->out : "standard output") : 0;
}

static int
emit_ttir(const Opts *o, IrModule *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return fail("%s", "out of memory");
    ir_print_module(mem, m, o->locs ? IR_PRINT_LOCS : 0);
    fclose(mem);
    int rc = write_out(o, buf, len);
    free(buf);
    return rc;
}

/* Lowering and code generation: linalg, llmlir, llir, asm, obj, so. Only so links
 * (ld.lld, written to -o FILE); the other stages come from cg_compile's result. */
static int
emit_native(const Opts *o, IrModule *m)
{
    CgTarget target;
    memset(&target, 0, sizeof target);
    bool have_cg = cg_host_target && cg_compile && cg_result_fini;
    if (o->emit > EMIT_LINALG && !have_cg)
        return fail("%s", "code generation (cg_compile) is not linked into this build");
    if (have_cg && cg_host_target(&target) != 0)
        return fail("%s", "cannot determine the host target");
    if (target.vector_bytes)
        target.vector_bytes = lo_vector_bytes(m, target.vector_bytes, target.vector_bytes_max);
    LoOptions lo = {.vector_bytes = target.vector_bytes ? target.vector_bytes : 32};
    char *text = NULL;
    size_t len = 0;
    IrCost cost;
    if (lo_lower_module(m, &lo, &text, &len, &cost) != 0) {
        ir_module_print_diags(m, stderr);
        free(text);
        return 1;
    }
    if (o->emit == EMIT_LINALG) {
        int rc = write_out(o, text, len);
        free(text);
        return rc;
    }
    bool to_stdout = !o->out || !strcmp(o->out, "-");
    if (o->emit == EMIT_SO && to_stdout) {
        free(text);
        return fail("%s", "--emit=so needs -o FILE");
    }
    if (o->emit == EMIT_OBJ && to_stdout && isatty(STDOUT_FILENO)) {
        free(text);
        return fail("%s", "--emit=obj writes binary data: use -o FILE or a pipe");
    }
    CgOptions co = {.target = target, .opt_level = 3, .want_stages = o->emit < EMIT_OBJ};
    CgResult res;
    memset(&res, 0, sizeof res);
    int rc = cg_compile(text, len, &co, o->emit == EMIT_SO ? o->out : NULL, &res);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "tritium-opt: code generation failed: %s\n", res.error ? res.error : "?");
        cg_result_fini(&res);
        return 1;
    }
    if (o->emit == EMIT_OBJ) {
        rc = res.obj ? write_out(o, (const char *)res.obj, res.obj_len) : fail("%s", "no object was produced");
    } else if (o->emit != EMIT_SO) {
        const char *stage = o->emit == EMIT_LLMLIR ? res.ll_mlir : o->emit == EMIT_LLIR ? res.llvm_ir
                                                                                         : res.asm_text;
        rc = stage ? write_out(o, stage, strlen(stage)) : fail("%s", "the stage was not produced");
    }
    cg_result_fini(&res);
    return rc;
}

static int
parse_args(int argc, char **argv, Opts *o)
{
    static const struct option longopts[] = {
        {"emit", required_argument, NULL, 'e'},     {"dump", required_argument, NULL, 'd'},
        {"no-passes", no_argument, NULL, 'n'},      {"print-locs", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'e':
            o->emit = ir_name_lookup(emit_names, EMIT_COUNT, optarg, strlen(optarg));
            if (o->emit < 0)
                return fail("unknown stage '%s' (ttir, linalg, llmlir, llir, asm, obj, so)", optarg);
            break;
        case 'd':
            if (!ir_pipeline_has_pass(optarg))
                return fail("unknown pass '%s' (canonicalize, cse, dce, all, input)", optarg);
            o->dump = optarg;
            break;
        case 'n': o->no_passes = true; break;
        case 'l': o->locs = true; break;
        case 'o': o->out = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return 1;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return 1;
    }
    o->in = argv[optind];
    return 0;
}

int
main(int argc, char **argv)
{
    Opts o = {.emit = EMIT_TTIR};
    if (parse_args(argc, argv, &o))
        return 1;
    size_t len;
    char *text = read_all(o.in, &len);
    if (!text) {
        fprintf(stderr, "tritium-opt: cannot read %s: %s\n", o.in, strerror(errno));
        return 1;
    }
    IrModule *m = ir_parse_module(text, len, strcmp(o.in, "-") ? o.in : "<stdin>", stderr);
    free(text);
    if (!m)
        return 1;
    int rc = 0;
    if (o.no_passes && o.dump && !strcmp(o.dump, "input")) {
        fputs("// input\n", stderr);
        ir_print_module(stderr, m, 0);
    }
    if (!o.no_passes && ir_pipeline_run_dump(m, o.dump ? stderr : NULL, o.dump) != 0) {
        ir_module_print_diags(m, stderr);
        rc = 1;
    }
    if (!rc)
        rc = o.emit == EMIT_TTIR ? emit_ttir(&o, m) : emit_native(&o, m);
    ir_module_destroy(m);
    return rc;
}
