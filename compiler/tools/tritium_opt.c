/*
 * tritium_opt.c — tritium-opt: reads TTIR and emits one stage through the compile
 * driver (driver.h), exactly as a Python compile produces it.
 *
 *   tritium-opt file.ttir [--emit=ttir|linalg|llmlir|llir|asm|obj|so] [-o out]
 *               [--dump=<pass>|all|input] [--no-passes] [--print-locs]
 *               [--no-instrument] [--no-stream] [--vector-bytes=N] [--isolate]
 *               [--remarks] [--mcpu=CPU [--mattr=FEATURES]]
 *
 * Lets every compiler stage be tested from a text file without Python
 * (docs/ttir.md). The defaults are those of a Python compile (instrumentation on,
 * streaming-store entry when the kernel's stores can be sized, vector width per
 * kernel, the host target), so the stages of a `_tt.mlir` dump come out as the
 * Python compile wrote them. Exit status: 0 on success, 1 on any error.
 */
#include "driver.h"
#include "ir_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ORDER EMIT: the stages in pipeline order */
enum { EMIT_TTIR, EMIT_LINALG, EMIT_LLMLIR, EMIT_LLIR, EMIT_ASM, EMIT_OBJ, EMIT_SO, EMIT_COUNT };
static const char *const emit_names[EMIT_COUNT] = {"ttir", "linalg", "llmlir", "llir", "asm", "obj", "so"};

typedef struct Opts {
    const char *in, *out;
    int emit;
    bool remarks;
    const char *mcpu, *mattr; /* --mcpu, --mattr: another CPU's code */
    CgTarget target;
    DrvOptions drv;
} Opts;

static void
usage(FILE *f)
{
    fputs("usage: tritium-opt FILE.ttir|- [options]\n"
          "  --emit=STAGE       ttir (default), linalg, llmlir (LLVM-dialect MLIR), llir (LLVM IR),\n"
          "                     asm, obj (relocatable ELF object), so (shared library; needs -o)\n"
          "  -o FILE            output file (default: standard output)\n"
          "  --dump=PASS        print the IR to stderr after PASS (canonicalize, cse, accum, dce, ptrcarry),\n"
          "                     after every pass (all), or as parsed (input)\n"
          "  --no-passes        skip canonicalize/cse/accum/dce (the input is still verified)\n"
          "  --print-locs       print loc(...) after every op (--emit=ttir)\n"
          "  --no-instrument    drop in-kernel Proton scopes (proton.record) instead of lowering them\n"
          "  --no-stream        no streaming-store entry (tritium_kernel_nt)\n"
          "  --vector-bytes=N   vectorise for N-byte vectors (16, 32, 64; default: chosen per kernel)\n"
          "  --isolate          compile in a forked child, so that a crash in the compiler is reported\n"
          "                     as an error (also with TRITIUM_COMPILE_FORK=1; default: in process)\n"
          "  --remarks          print the compiler's remarks (fallbacks to element-wise code, ...)\n"
          "                     to stderr as file:line:col: remark: message\n"
          "  --mcpu=CPU         generate code for CPU instead of this machine (for reading it; it\n"
          "                     may not run here): znver1 (AVX2), znver4, sapphirerapids (AVX-512),\n"
          "                     x86-64-v3, x86-64-v4, spacemit-x60 (RVV), ...\n"
          "  --mattr=FEATURES   with --mcpu: add LLVM features (\"+avx512fp16,-avx512bf16\")\n"
          "  -h, --help         this text\n"
          "The native stages are compiled as a Python compile does: for the host\n"
          "(SPINE_TRITON_TARGET_ARCH=riscv64 cross-compiles), instrumented, with the streaming-store\n"
          "entry when the kernel's stores can be sized, and the vector width chosen per kernel.\n",
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

/* The stage o->emit of a successful compile to -o (or standard output). */
static int
write_stage(const Opts *o, const DrvResult *r)
{
    static const DrvStage stage_of[EMIT_OBJ] = {DRV_STAGE_TTIR, DRV_STAGE_LINALG, DRV_STAGE_LLMLIR, DRV_STAGE_LLIR,
                                                DRV_STAGE_ASM}; /* ORDER EMIT */
    if (o->emit == EMIT_SO)
        return 0; /* the driver linked it at -o */
    if (o->emit == EMIT_OBJ)
        return r->obj ? write_out(o, (const char *)r->obj, r->obj_len) : fail("%s", "no object was produced");
    DrvStage s = stage_of[o->emit];
    return r->stage[s] ? write_out(o, r->stage[s], r->stage_len[s]) : fail("%s", "the stage was not produced");
}

/* Prints a failed compile's messages to stderr: the parser's and the module's
 * diagnostics as they are (file:line:col), the others after the tool's name. */
static void
report(const DrvResult *r)
{
    const char *msg = r->error ? r->error : "(no message)";
    size_t n = strlen(msg);
    const char *nl = n && msg[n - 1] == '\n' ? "" : "\n";
    if (r->status == DRV_ERR_PARSE || r->status == DRV_ERR_DIAG)
        fputs(msg, stderr);
    else if (r->status == DRV_ERR_CODEGEN)
        fprintf(stderr, "tritium-opt: code generation failed: %s%s", msg, nl);
    else if (r->status == DRV_ERR_CRASH)
        fprintf(stderr, "tritium-opt: %s Run without --isolate to debug it in process.\n", msg);
    else
        fprintf(stderr, "tritium-opt: %s%s", msg, nl);
}

/* One compile through the driver: the stages up to o->emit. */
static int
run(Opts *o, const char *text, size_t len)
{
    bool to_stdout = !o->out || !strcmp(o->out, "-");
    if (o->emit == EMIT_SO && to_stdout)
        return fail("%s", "--emit=so needs -o FILE");
    if (o->emit == EMIT_OBJ && to_stdout && isatty(STDOUT_FILENO))
        return fail("%s", "--emit=obj writes binary data: use -o FILE or a pipe");
    DrvOptions *d = &o->drv;
    d->name = strcmp(o->in, "-") ? o->in : "<stdin>";
    d->last = o->emit == EMIT_TTIR ? DRV_LAST_TTIR : o->emit == EMIT_LINALG ? DRV_LAST_LINALG : DRV_LAST_NATIVE;
    d->want_stages = o->emit >= EMIT_LLMLIR && o->emit <= EMIT_ASM;
    d->so_path = o->emit == EMIT_SO ? o->out : NULL;
    DrvResult r;
    /* one compile per run: with --isolate, a one-shot child rather than a server */
    DrvStatus st = drv_compile(text, len, d, NULL, &r);
    if (r.pass_dump)
        fputs(r.pass_dump, stderr);
    for (int i = 0; o->remarks && i < r.ndiags; i++)
        if (r.diags[i].severity == 2)
            fprintf(stderr, "%s:%d:%d: remark: %s\n", r.diags[i].file, r.diags[i].line, r.diags[i].col, r.diags[i].msg);
    int rc = 1;
    if (st != DRV_OK)
        report(&r);
    else
        rc = write_stage(o, &r);
    drv_result_fini(&r);
    return rc;
}

/* TRITIUM_COMPILE_FORK=1 (set, and not 0) isolates like --isolate. */
static bool
fork_env(void)
{
    const char *e = getenv("TRITIUM_COMPILE_FORK");
    return e && *e && strcmp(e, "0") != 0;
}

/* --vector-bytes=N: 16, 32 or 64 (the driver checks the value). */
static int
parse_vector_bytes(const char *arg, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (!*arg || *end || v <= 0 || v > 1024)
        return fail("--vector-bytes=%s: expected 16, 32 or 64", arg);
    *out = (int)v;
    return 0;
}

static int
parse_args(int argc, char **argv, Opts *o)
{
    static const struct option longopts[] = {
        {"emit", required_argument, NULL, 'e'},      {"dump", required_argument, NULL, 'd'},
        {"no-passes", no_argument, NULL, 'n'},       {"print-locs", no_argument, NULL, 'l'},
        {"no-instrument", no_argument, NULL, 'I'},   {"no-stream", no_argument, NULL, 'S'},
        {"vector-bytes", required_argument, NULL, 'V'}, {"isolate", no_argument, NULL, 'F'},
        {"remarks", no_argument, NULL, 'R'},         {"mcpu", required_argument, NULL, 'C'},
        {"mattr", required_argument, NULL, 'A'},
        {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0},
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
                return fail("unknown pass '%s' (canonicalize, cse, accum, dce, all, input)", optarg);
            o->drv.dump_pass = optarg;
            break;
        case 'n': o->drv.skip_passes = true; break;
        case 'l': o->drv.ttir_locs = true; break;
        case 'I': o->drv.instrument = false; break;
        case 'S': o->drv.stream = DRV_STREAM_OFF; break;
        case 'V':
            if (parse_vector_bytes(optarg, &o->drv.vector_bytes))
                return 1;
            break;
        case 'F': o->drv.isolate = true; break;
        case 'R': o->remarks = true; break;
        case 'C': o->mcpu = optarg; break;
        case 'A': o->mattr = optarg; break;
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
    drv_options_init(&o.drv);
    o.drv.isolate = fork_env();
    if (parse_args(argc, argv, &o))
        return 1;
    if (o.mattr && !o.mcpu)
        return fail("--mattr=%s needs --mcpu", o.mattr);
    if (o.mcpu) {
        char why[1024];
        if (cg_target_for_cpu(o.mcpu, o.mattr, &o.target, why, sizeof why))
            return fail("%s", why);
        o.drv.target = &o.target;
    }
    size_t len;
    char *text = read_all(o.in, &len);
    if (!text) {
        fprintf(stderr, "tritium-opt: cannot read %s: %s\n", o.in, strerror(errno));
        return 1;
    }
    int rc = run(&o, text, len);
    free(text);
    return rc;
}
