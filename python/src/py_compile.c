/*
 * py_compile.c — compiling a built module to a kernel shared object, and the
 * on-disk cache, for python/triton/compiler.
 *
 * compile(builder, so_path, instrument, want_stages) runs the IR pipeline, the
 * lowering to Linalg MLIR and code generation (libtritium_cg.so, loaded with
 * dlopen on first use so that importing triton does not map LLVM), and returns
 * every stage's text plus the kernel's static cost, remarks and scope names.
 * The cache functions wrap runtime.h so Python decides keys and policy.
 */
#include "py_int.h"

#include "codegen.h"
#include "runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const CgApi *cg;
static CgTarget cg_target;
static int cg_target_ok;

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

static int
target(void)
{
    if (cg_target_ok)
        return 0;
    if (load_cg() < 0)
        return -1;
    if (cg->host_target(&cg_target) != 0) {
        py_err(PyExc_RuntimeError, "cannot determine the target CPU");
        return -1;
    }
    cg_target_ok = 1;
    return 0;
}

/* {"triple": ..., "cpu": ..., "features": ..., "vector_bytes": n} */
static PyObject *
target_info(PyObject *self, PyObject *args)
{
    if (target() < 0)
        return NULL;
    return Py_BuildValue("{s:s,s:s,s:s,s:i}", "triple", cg_target.triple, "cpu", cg_target.cpu, "features",
                         cg_target.features, "vector_bytes", cg_target.vector_bytes);
}

static char *
module_text(IrModule *m, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    ir_print_module(f, m, 0);
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

static void
result_free(CgResult *r)
{
    free(r->ll_mlir);
    free(r->llvm_ir);
    free(r->asm_text);
    free(r->obj);
    free(r->error);
    memset(r, 0, sizeof *r);
}

static int
fork_enabled(void)
{
    const char *e = getenv("TRITIUM_COMPILE_FORK");
    return !e || strcmp(e, "0") != 0;
}

/* compile(builder, so_path, instrument=False, want_stages=True) -> dict */
static PyObject *
compile(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwl[] = {"builder", "so_path", "instrument", "want_stages", NULL};
    PyObject *pb;
    const char *so_path;
    int instrument = 0, want = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!s|pp", kwl, &PyBuilder_Type, &pb, &so_path, &instrument, &want))
        return NULL;
    IrModule *m = ((PyBuilder *)pb)->m;
    if (target() < 0)
        return NULL;
    double t0 = now_ms();
    if (ir_module_num_errors(m) || ir_pipeline_run(m, NULL))
        return diag_error(m);
    size_t tlen = 0;
    char *ttir = module_text(m, &tlen);
    double t1 = now_ms();
    CgTarget tgt = cg_target;
    tgt.vector_bytes = lo_vector_bytes(m, tgt.vector_bytes, tgt.vector_bytes_max);
    LoOptions lo = {.vector_bytes = tgt.vector_bytes, .instrument = instrument};
    char *linalg = NULL;
    size_t llen = 0;
    IrCost cost;
    if (lo_lower_module(m, &lo, &linalg, &llen, &cost) < 0) {
        free(ttir);
        return diag_error(m);
    }
    double t2 = now_ms();
    /* a streaming-store variant when the launcher can size a launch's stores: a static
     * per-program count, and no atomics (their ordering with weakly ordered stores) */
    int stream = cost.exact && cost.bytes_stored > 0 && !cost.atomics;
    CgOptions co = {.target = tgt, .opt_level = 3, .want_stages = want, .stream_variant = stream};
    CgResult res;
    memset(&res, 0, sizeof res);
    int rc, crash = 0, forked = fork_enabled();
    Py_BEGIN_ALLOW_THREADS
    rc = forked ? py_cg_isolated_compile(cg, linalg, llen, &co, so_path, &res, &crash)
                : cg->compile(linalg, llen, &co, so_path, &res);
    Py_END_ALLOW_THREADS
    double t3 = now_ms();
    PyObject *out = NULL;
    if (crash) {
        if (crash > 0)
            py_err(PyExc_RuntimeError, "internal compiler error: code generation crashed (signal %d, %s); "
                                       "this process is unaffected. Set TRITIUM_COMPILE_FORK=0 to debug in process."
                                       "\n--- Linalg input ---\n%s", crash, strsignal(crash), linalg);
        else
            py_err(PyExc_RuntimeError, "internal compiler error: could not run code generation (%s)", strerror(errno));
        goto done;
    }
    if (rc != 0) {
        py_err(PyExc_RuntimeError, "code generation failed: %s\n--- Linalg input ---\n%s",
               res.error ? res.error : "(no message)", linalg);
        goto done;
    }
    PyObject *remarks = PyList_New(0), *scopes = PyList_New(0);
    const char *msg, *file;
    int sev, line, col;
    for (int i = 0; (msg = ir_module_diag(m, i, &sev, &file, &line, &col)); i++)
        if (sev == 2) {
            PyObject *t = Py_BuildValue("(siis)", file, line, col, msg);
            PyList_Append(remarks, t);
            Py_DECREF(t);
        }
    for (int i = 0; i < cost.nscopes; i++) {
        PyObject *s = PyUnicode_FromString(cost.scope_names[i]);
        PyList_Append(scopes, s);
        Py_DECREF(s);
    }
    out = Py_BuildValue(
        "{s:s#,s:s#,s:N,s:N,s:N,s:y#,s:N,s:N,s:{s:K,s:K,s:d,s:d,s:d,s:i},s:{s:d,s:d,s:d,s:d,s:d},s:K}", "ttir", ttir,
        (Py_ssize_t)tlen, "linalg", linalg, (Py_ssize_t)llen, "ll_mlir", str_or_none(res.ll_mlir), "llir",
        str_or_none(res.llvm_ir), "asm", str_or_none(res.asm_text), "obj", (const char *)res.obj,
        (Py_ssize_t)res.obj_len, "remarks", remarks, "scopes", scopes, "cost", "bytes_loaded",
        (unsigned long long)cost.bytes_loaded, "bytes_stored", (unsigned long long)cost.bytes_stored, "flops16",
        cost.flops[0], "flops32", cost.flops[1], "flops64", cost.flops[2], "exact", cost.exact, "times_ms",
        "frontend_passes", t1 - t0, "lowering", t2 - t1, "mlir", res.ms_mlir, "llvm", res.ms_llvm, "link",
        res.ms_link, "stream_bytes", res.streamed_stores > 0 ? (unsigned long long)cost.bytes_stored : 0ull);
done:
    if (forked)
        result_free(&res);
    else
        cg->result_fini(&res);
    free(ttir);
    free(linalg);
    (void)t3;
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
    return PyLong_FromLong((long)py_cg_server_pid());
}

static PyMethodDef methods[] = {
    {"compile_server_pid", compile_server_pid, METH_NOARGS, "Pid of this process's compile server, 0 if none."},
    {"compile", (PyCFunction)(void (*)(void))compile, METH_VARARGS | METH_KEYWORDS,
     "compile(builder, so_path, instrument=False, want_stages=True) -> dict of stages"},
    {"target_info", target_info, METH_NOARGS, "Target CPU description."},
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
