/*
 * py_compile.c — compiling a built module to a kernel shared object, and the
 * on-disk cache, for python/triton/compiler.
 *
 * compile(builder, so_path, instrument, want_stages, arch) checks the built module and
 * runs the IR pipeline on it (front-end errors are the builder's), prints it as
 * TTIR with locations and hands that text to the compile driver (driver.h, in
 * libtritium_cg.so, loaded with dlopen on first use so that importing triton does
 * not map LLVM): lowering and code generation, in the process's compile server
 * unless TRITIUM_COMPILE_FORK=0 (read here). It returns every stage's text plus
 * the kernel's static cost, remarks and scope names. The cache functions wrap
 * runtime.h so Python decides keys and policy.
 */
#include "py_int.h"

#include "driver.h"
#include "runtime.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Set once under the GIL; the server is also used by threads that released it
 * (the driver serialises them). */
static const CgApi *cg;
static CgTarget cg_target;
static int cg_target_ok;
static DrvServer *cg_server; /* this process's compile server, made at the first isolated compile */

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Loads libtritium_cg.so from the directory of this extension. */
static int
load_cg(void)
{
    if (cg)
        return 0;
    Dl_info info;
    if (!dladdr((void *)load_cg, &info) || !info.dli_fname) {
        py_err(PyExc_RuntimeError, "cannot locate the tritium extension on disk");
        return -1;
    }
    char dir[PATH_MAX], path[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s", info.dli_fname);
    snprintf(path, sizeof path, "%s/libtritium_cg.so", dirname(dir));
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        py_err(PyExc_RuntimeError, "cannot load the code generator %s: %s", path, dlerror());
        return -1;
    }
    const CgApi *api = dlsym(h, "cg_api");
    if (!api || api->abi_version != CG_ABI_VERSION) {
        py_err(PyExc_RuntimeError, "%s: missing or incompatible cg_api", path);
        return -1;
    }
    cg = api;
    return 0;
}

/* The target for 'arch' (NULL: SPINE_TRITON_TARGET_ARCH, else the host; cached):
 * *out points to it. An explicit arch is resolved into *buf. -1 with ValueError for
 * an unsupported architecture (the message names the supported ones). */
static int
target(const char *arch, CgTarget *buf, const CgTarget **out)
{
    char why[512];
    if (!arch && cg_target_ok) {
        *out = &cg_target;
        return 0;
    }
    if (load_cg() < 0)
        return -1;
    CgTarget *t = arch ? buf : &cg_target;
    if (cg->target_for_arch(arch, t, why, sizeof why) != 0) {
        py_err(PyExc_ValueError, "%s", why);
        return -1;
    }
    cg_target_ok |= !arch;
    *out = t;
    return 0;
}

/* The ISA name of a triple: "x86_64", "riscv64", ... */
static void
triple_arch(const char *triple, char *buf, size_t cap)
{
    size_t n = strcspn(triple, "-");
    snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), triple);
}

#if defined(__x86_64__)
#define HOST_ARCH "x86_64"
#elif defined(__riscv)
#define HOST_ARCH "riscv64"
#elif defined(__aarch64__)
#define HOST_ARCH "aarch64"
#else
#define HOST_ARCH "unknown"
#endif

/* target_info(arch=None) -> {"triple", "cpu", "features", "vector_bytes", "arch",
 * "loadable"}: "arch" is the ISA ("x86_64", "riscv64"), "loadable" whether kernels
 * for it run in this process. */
static PyObject *
target_info(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwl[] = {"arch", NULL};
    const char *arch = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|z", kwl, &arch))
        return NULL;
    CgTarget buf;
    const CgTarget *t;
    if (target(arch, &buf, &t) < 0)
        return NULL;
    char isa[32];
    triple_arch(t->triple, isa, sizeof isa);
    return Py_BuildValue("{s:s,s:s,s:s,s:i,s:s,s:O}", "triple", t->triple, "cpu", t->cpu, "features", t->features,
                         "vector_bytes", t->vector_bytes, "arch", isa, "loadable",
                         strcmp(isa, HOST_ARCH) == 0 ? Py_True : Py_False);
}

static char *
module_text(IrModule *m, unsigned flags, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    ir_print_module(f, m, flags);
    fclose(f);
    return buf;
}

static PyObject *
diag_error(IrModule *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
        ir_module_print_diags(m, f);
        fclose(f);
    }
    PyObject *r = py_err(py_BuilderError, "%s", buf ? buf : "compilation failed");
    free(buf);
    return r;
}

static PyObject *
str_or_none(const char *s)
{
    if (!s)
        Py_RETURN_NONE;
    return PyUnicode_FromString(s);
}

/* TRITIUM_COMPILE_FORK (default 1): compile in the crash-isolating server. */
static int
fork_enabled(void)
{
    const char *e = getenv("TRITIUM_COMPILE_FORK");
    return !e || strcmp(e, "0") != 0;
}

/* In a forked child (multiprocessing, os.fork) the parent's server is not ours. */
static void
forget_server(void)
{
    if (cg_server)
        cg->drv_server_forget(cg_server);
}

/* The process's compile server (GIL held); NULL when out of memory, and the
 * driver then forks one child per compile. */
static DrvServer *
server(void)
{
    if (!cg_server && (cg_server = cg->drv_server_create()))
        pthread_atfork(NULL, NULL, forget_server);
    return cg_server;
}

/* Raises the error of a failed driver compile; 'ttir' is its input without locations. */
static PyObject *
compile_error(const DrvResult *r, const char *ttir)
{
    const char *msg = r->error ? r->error : "(no message)";
    const char *linalg = r->stage[DRV_STAGE_LINALG];
    switch (r->status) {
    case DRV_ERR_DIAG: return py_err(py_BuilderError, "%s", msg);
    case DRV_ERR_PARSE:
        return py_err(PyExc_RuntimeError, "internal compiler error: the TTIR of the front end does not parse:\n%s",
                      msg);
    case DRV_ERR_CODEGEN:
        return py_err(PyExc_RuntimeError, "code generation failed: %s\n--- Linalg input ---\n%s", msg,
                      linalg ? linalg : "");
    case DRV_ERR_CRASH:
        if (r->crash_signal > 0)
            return py_err(PyExc_RuntimeError, "%s Set TRITIUM_COMPILE_FORK=0 to debug in process.\n--- %s input ---\n%s",
                          msg, linalg ? "Linalg" : "TTIR", linalg ? linalg : ttir);
        return py_err(PyExc_RuntimeError, "%s", msg);
    default: return py_err(PyExc_RuntimeError, "%s", msg);
    }
}

/* The compile's result dict (see compile below). */
static PyObject *
result_dict(const DrvResult *r, const char *ttir, size_t tlen, double ms_front)
{
    PyObject *remarks = PyList_New(0), *scopes = PyList_New(0);
    for (int i = 0; i < r->ndiags; i++) {
        const DrvDiag *d = &r->diags[i];
        if (d->severity != 2)
            continue;
        PyObject *t = Py_BuildValue("(siis)", d->file, d->line, d->col, d->msg);
        PyList_Append(remarks, t);
        Py_DECREF(t);
    }
    const IrCost *c = &r->cost;
    for (int i = 0; i < c->nscopes; i++) {
        PyObject *s = PyUnicode_FromString(c->scope_names[i]);
        PyList_Append(scopes, s);
        Py_DECREF(s);
    }
    const char *const *st = (const char *const *)r->stage;
    return Py_BuildValue(
        "{s:s#,s:s#,s:N,s:N,s:N,s:y#,s:N,s:N,s:{s:K,s:K,s:d,s:d,s:d,s:i,s:s},s:{s:d,s:d,s:d,s:d,s:d},s:K}", "ttir", ttir,
        (Py_ssize_t)tlen, "linalg", st[DRV_STAGE_LINALG], (Py_ssize_t)r->stage_len[DRV_STAGE_LINALG], "ll_mlir",
        str_or_none(st[DRV_STAGE_LLMLIR]), "llir", str_or_none(st[DRV_STAGE_LLIR]), "asm",
        str_or_none(st[DRV_STAGE_ASM]), "obj", (const char *)r->obj, (Py_ssize_t)r->obj_len, "remarks", remarks,
        "scopes", scopes, "cost", "bytes_loaded", (unsigned long long)c->bytes_loaded, "bytes_stored",
        (unsigned long long)c->bytes_stored, "flops16", c->flops[0], "flops32", c->flops[1], "flops64", c->flops[2],
        "exact", c->exact, "trips", c->trips, "times_ms", "frontend_passes", ms_front + r->ms[DRV_PHASE_FRONTEND], "lowering",
        r->ms[DRV_PHASE_LOWER], "mlir", r->ms[DRV_PHASE_MLIR], "llvm", r->ms[DRV_PHASE_LLVM], "link",
        r->ms[DRV_PHASE_LINK], "stream_bytes", (unsigned long long)r->stream_bytes);
}

/* compile(builder, so_path, instrument=False, want_stages=True, arch=None) -> dict of
 * stages; arch as target_info's */
static PyObject *
compile(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwl[] = {"builder", "so_path", "instrument", "want_stages", "arch", NULL};
    PyObject *pb;
    const char *so_path, *arch = NULL;
    int instrument = 0, want = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!s|ppz", kwl, &PyBuilder_Type, &pb, &so_path, &instrument, &want,
                                     &arch))
        return NULL;
    IrModule *m = ((PyBuilder *)pb)->m;
    CgTarget tbuf;
    const CgTarget *tgt;
    if (target(arch, &tbuf, &tgt) < 0)
        return NULL;
    double t0 = now_ms();
    if (ir_module_num_errors(m) || ir_pipeline_run(m, NULL))
        return diag_error(m);
    /* the "ttir" stage (the _tt.mlir dump) has no locations; the driver's input does,
     * so that lowering errors and remarks point into the kernel's source */
    size_t tlen = 0, llen = 0;
    char *ttir = module_text(m, 0, &tlen), *located = module_text(m, IR_PRINT_LOCS, &llen);
    double t1 = now_ms();
    PyObject *out = NULL;
    if (!ttir || !located) {
        PyErr_NoMemory();
        goto done;
    }
    DrvOptions o;
    cg->drv_options_init(&o);
    o.name = "<ttir>";
    o.target = tgt;
    o.instrument = instrument;
    o.want_stages = want;
    o.so_path = so_path;
    o.isolate = fork_enabled();
    DrvServer *srv = o.isolate ? server() : NULL;
    DrvResult r;
    Py_BEGIN_ALLOW_THREADS
    cg->drv_compile(located, llen, &o, srv, &r);
    Py_END_ALLOW_THREADS
    for (int i = 0; i < r.servers_started; i++)
        rt_stats_add(RT_STAT_CG_SERVER);
    if (r.forked)
        rt_stats_add(RT_STAT_CG_FORK);
    out = r.status == DRV_OK ? result_dict(&r, ttir, tlen, t1 - t0) : compile_error(&r, ttir);
    cg->drv_result_fini(&r);
done:
    free(ttir);
    free(located);
    return out;
}

/* ---- cache --------------------------------------------------------------------------------- */

static PyObject *
cache_root(PyObject *self, PyObject *args)
{
    char *r = rt_cache_root_dup();
    if (!r)
        return PyErr_NoMemory();
    PyObject *s = PyUnicode_FromString(r);
    free(r);
    return s;
}

static PyObject *
entry_tuple(RtCacheEntry *e)
{
    PyObject *files = PyDict_New();
    for (size_t i = 0; i < rt_cache_entry_num_files(e); i++) {
        PyObject *p = PyUnicode_FromString(rt_cache_entry_file_path(e, i));
        PyDict_SetItemString(files, rt_cache_entry_file_name(e, i), p);
        Py_DECREF(p);
    }
    size_t mlen = 0;
    const char *meta = rt_cache_entry_metadata(e, &mlen);
    const char *kp = rt_cache_entry_kernel_path(e);
    return Py_BuildValue("(ssNs#N)", "hit", rt_cache_entry_dir(e), kp ? PyUnicode_FromString(kp) : Py_NewRef(Py_None),
                         meta ? meta : "", (Py_ssize_t)mlen, files);
}

/* cache_lookup(key) -> ("hit", dir, kernel_path, metadata, files) | ("miss",) | ("corrupt", why) */
static PyObject *
cache_lookup(PyObject *self, PyObject *args)
{
    const char *key;
    if (!PyArg_ParseTuple(args, "s", &key))
        return NULL;
    RtCacheEntry *e = NULL;
    RtCacheCheck why;
    memset(&why, 0, sizeof why);
    int rc = rt_cache_lookup(key, &e, &why);
    if (rc == RT_CACHE_HIT) {
        PyObject *t = entry_tuple(e);
        rt_cache_entry_destroy(e);
        return t;
    }
    if (rc == RT_CACHE_MISS)
        return Py_BuildValue("(s)", "miss");
    if (rc == RT_CACHE_CORRUPT)
        return Py_BuildValue("(ss)", "corrupt", why.detail[0] ? why.detail : rt_corrupt_name(why.reason));
    return py_err(PyExc_OSError, "kernel cache lookup failed: %s", rt_last_error());
}

/* cache_store(key, [(name, role, data_or_None, src_path_or_None)], replace) -> lookup tuple */
static PyObject *
cache_store(PyObject *self, PyObject *args)
{
    const char *key;
    PyObject *files;
    int replace = 0;
    if (!PyArg_ParseTuple(args, "sO|p", &key, &files, &replace))
        return NULL;
    PyObject *fast = PySequence_Fast(files, "files must be a sequence");
    if (!fast)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    RtCacheFile *f = calloc((size_t)n + 1, sizeof *f);
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(fast, i);
        PyObject *data, *src;
        const char *name;
        int role;
        if (!PyArg_ParseTuple(t, "siOO", &name, &role, &data, &src))
            goto out;
        f[i].name = name;
        f[i].role = (RtFileRole)role;
        if (data != Py_None) {
            char *p;
            Py_ssize_t len;
            if (PyBytes_Check(data)) {
                if (PyBytes_AsStringAndSize(data, &p, &len) < 0)
                    goto out;
            } else {
                p = (char *)PyUnicode_AsUTF8AndSize(data, &len);
                if (!p)
                    goto out;
            }
            f[i].data = p;
            f[i].len = (size_t)len;
        } else {
            f[i].src_path = PyUnicode_AsUTF8(src);
            if (!f[i].src_path)
                goto out;
        }
    }
    RtCacheEntry *e = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rt_cache_store(key, f, (size_t)n, replace ? RT_STORE_REPLACE : 0, &e);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        py_err(PyExc_OSError, "kernel cache store failed: %s", rt_last_error());
        goto out;
    }
    result = entry_tuple(e);
    rt_cache_entry_destroy(e);
out:
    free(f);
    Py_DECREF(fast);
    return result;
}

static PyObject *
stats(PyObject *self, PyObject *args)
{
    RtStats s;
    rt_stats_get(&s);
    PyObject *d = PyDict_New();
    for (int i = 0; i < RT_STAT_COUNT; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(s.count[i]);
        PyDict_SetItemString(d, rt_stat_name((RtStat)i), v);
        Py_DECREF(v);
    }
    return d;
}

static PyObject *
stats_add(PyObject *self, PyObject *args)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    for (int i = 0; i < RT_STAT_COUNT; i++)
        if (!strcmp(rt_stat_name((RtStat)i), name)) {
            rt_stats_add((RtStat)i);
            Py_RETURN_NONE;
        }
    return py_err(PyExc_ValueError, "unknown statistic %s", name);
}

static PyObject *
compile_server_pid(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(cg && cg_server ? (long)cg->drv_server_pid(cg_server) : 0L);
}

static PyMethodDef methods[] = {
    {"compile_server_pid", compile_server_pid, METH_NOARGS, "Pid of this process's compile server, 0 if none."},
    {"compile", (PyCFunction)(void (*)(void))compile, METH_VARARGS | METH_KEYWORDS,
     "compile(builder, so_path, instrument=False, want_stages=True, arch=None) -> dict of stages"},
    {"target_info", (PyCFunction)(void (*)(void))target_info, METH_VARARGS | METH_KEYWORDS,
     "target_info(arch=None): the target CPU (arch None: SPINE_TRITON_TARGET_ARCH, else the host)."},
    {"cache_root", cache_root, METH_NOARGS, "Kernel cache directory."},
    {"cache_lookup", cache_lookup, METH_VARARGS, "Look up a cache entry."},
    {"cache_store", cache_store, METH_VARARGS, "Store a cache entry atomically."},
    {"stats", stats, METH_NOARGS, "Compile/cache counters."},
    {"stats_add", stats_add, METH_VARARGS, "Increment a counter."},
    {NULL, NULL, 0, NULL},
};

int
py_compile_init(PyObject *mod)
{
    return PyModule_AddFunctions(mod, methods);
}
