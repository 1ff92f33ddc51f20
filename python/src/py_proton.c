/*
 * py_proton.c — Proton bindings: initialisation at import (kernel capture reads its
 * environment here), sessions, host scopes, metrics (scalars and lists) and the
 * spine-triton profiler store, used by python/triton/profiler and
 * backends/spine_triton/proton.py; and the Python call paths of context="python"
 * sessions (py_proton_frames, called by the launcher and at scope entry).
 *
 * Every function maps onto proton.h; errors raise the upstream messages (which
 * proton.h keeps in pn_last_error()).
 */
#include "py_int.h"

#include "proton.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- Python call paths ----------------------------------------------------------------
 *
 * A frame's name is "<file>:<line>@<function>" (co_filename made absolute, co_name),
 * interned once per (code object, instruction offset) in a table that holds a
 * reference to the code object (so its address is not reused while cached). The
 * offset pins the line, so a repeated call site costs a hash probe per frame: no line
 * table decoding (PyFrame_GetLineNumber is linear in the code size) and no string
 * building. Frames of the triton package itself
 * (the JIT's run/autotune wrappers, the profiler's scope helpers) are left out, so the
 * innermost frame is the user's call site. The GIL guards the table. */

#define FCACHE_MAX (1u << 16) /* entries before the table is emptied and rebuilt */

typedef struct FrameEnt {
    PyObject *code;                /* strong reference; NULL = empty */
    int lasti;                     /* instruction offset (PyFrame_GetLasti) */
    uint32_t id;                   /* interned frame name; 0 = left out */
} FrameEnt;

static FrameEnt *fcache;
static uint32_t fcap, fcount;

static uint32_t
fhash(PyObject *code, int lasti)
{
    uint64_t h = ((uint64_t)(uintptr_t)code >> 4) * 0x9e3779b97f4a7c15ull ^ (uint32_t)lasti;
    h *= 0xff51afd7ed558ccdull;
    return (uint32_t)(h >> 32);
}

static void
fcache_clear(void)
{
    for (uint32_t i = 0; i < fcap; i++)
        Py_XDECREF(fcache[i].code);
    PyMem_Free(fcache);
    fcache = NULL;
    fcap = fcount = 0;
}

/* doubles the table (emptying it at FCACHE_MAX entries); -1 when out of memory */
static int
fcache_grow(void)
{
    uint32_t cap = fcap ? fcap * 2 : 256;
    FrameEnt *e;
    if (cap > 2 * FCACHE_MAX) {
        fcache_clear();
        cap = 256;
    }
    if (!(e = PyMem_Calloc(cap, sizeof *e)))
        return -1;
    for (uint32_t i = 0; i < fcap; i++) {
        uint32_t j;
        if (!fcache[i].code)
            continue;
        for (j = fhash(fcache[i].code, fcache[i].lasti) & (cap - 1); e[j].code; j = (j + 1) & (cap - 1))
            ;
        e[j] = fcache[i];
    }
    PyMem_Free(fcache);
    fcache = e;
    fcap = cap;
    return 0;
}

/* the triton package's directory with a trailing '/', found once ("" when unknown) */
static const char *
package_dir(void)
{
    static char dir[4096];
    static int looked;
    PyObject *mod, *file;
    const char *s, *slash;
    if (looked)
        return dir;
    looked = 1;
    mod = PyImport_ImportModule("triton");
    file = mod ? PyObject_GetAttrString(mod, "__file__") : NULL;
    s = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : NULL;
    if (s && (slash = strrchr(s, '/')) && (size_t)(slash - s) + 1 < sizeof dir)
        memcpy(dir, s, (size_t)(slash - s) + 1);
    Py_XDECREF(file);
    Py_XDECREF(mod);
    PyErr_Clear();
    return dir;
}

static const char *
code_str(PyObject *code, const char *attr, PyObject **keep)
{
    const char *s;
    *keep = PyObject_GetAttrString(code, attr);
    s = *keep && PyUnicode_Check(*keep) ? PyUnicode_AsUTF8(*keep) : NULL;
    return s ? s : "?";
}

/* the interned name of a frame, or 0 for a frame of the triton package */
static uint32_t
frame_name(PyObject *code, int line)
{
    PyObject *fo, *no;
    const char *file = code_str(code, "co_filename", &fo), *fn = code_str(code, "co_name", &no);
    const char *pkg = package_dir();
    char cwd[1024] = "", buf[4096];
    uint32_t id = 0;
    if (!*pkg || strncmp(file, pkg, strlen(pkg)) != 0) {
        if (file[0] != '/' && file[0] != '<' && getcwd(cwd, sizeof cwd - 1))
            strcat(cwd, "/");
        snprintf(buf, sizeof buf, "%s%s:%d@%s", cwd, file, line, fn);
        id = pn_frame_intern(buf);
    }
    Py_XDECREF(fo);
    Py_XDECREF(no);
    PyErr_Clear();
    return id;
}

/* the cached name of frame f (code object 'code'); 0 = left out */
static uint32_t
frame_id(PyFrameObject *f, PyObject *code)
{
    int lasti = PyFrame_GetLasti(f);
    uint32_t j;
    if ((fcount + 1) * 2 > fcap && fcache_grow() < 0)
        return frame_name(code, PyFrame_GetLineNumber(f));
    for (j = fhash(code, lasti) & (fcap - 1); fcache[j].code; j = (j + 1) & (fcap - 1))
        if (fcache[j].code == code && fcache[j].lasti == lasti)
            return fcache[j].id;
    fcache[j].id = frame_name(code, PyFrame_GetLineNumber(f));
    fcache[j].code = Py_NewRef(code);
    fcache[j].lasti = lasti;
    fcount++;
    return fcache[j].id;
}

/* Hands Proton this thread's Python stack (outermost first, triton's own frames left
 * out) for the next launch or scope entry: see pn_python_frames. The caller holds the
 * GIL. Never raises. */
int
py_proton_frames(void)
{
    uint32_t ids[PN_MAX_FRAMES];
    PyFrameObject *f = PyEval_GetFrame(), *back;
    int n = 0;
    Py_XINCREF(f);
    while (f && n < PN_MAX_FRAMES) {
        PyCodeObject *co = PyFrame_GetCode(f);
        uint32_t id = frame_id(f, (PyObject *)co);
        Py_DECREF(co);
        if (id)
            ids[n++] = id;
        back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    for (int i = 0; i < n / 2; i++) {
        uint32_t x = ids[i];
        ids[i] = ids[n - 1 - i];
        ids[n - 1 - i] = x;
    }
    return pn_python_frames(ids, n);
}

/* ---- sessions ------------------------------------------------------------------------ */

static PyObject *
rc_or_raise(int rc, PyObject *type)
{
    if (rc < 0)
        return py_err(type, "%s", pn_last_error()[0] ? pn_last_error() : strerror(-rc));
    return PyLong_FromLong(rc);
}

/* session_start(path_or_None, context: int, data: int) -> id | None (disabled) */
static PyObject *
session_start(PyObject *self, PyObject *args)
{
    const char *path;
    int context, data;
    if (!PyArg_ParseTuple(args, "zii", &path, &context, &data))
        return NULL;
    int rc = pn_session_start(path, context, data);
    if (rc == -ECANCELED)
        Py_RETURN_NONE;
    return rc_or_raise(rc, PyExc_ValueError);
}

#define ID_FN(name, call)                                                                  \
    static PyObject *name(PyObject *self, PyObject *args)                                  \
    {                                                                                      \
        int id = -1;                                                                       \
        if (!PyArg_ParseTuple(args, "|i", &id))                                            \
            return NULL;                                                                   \
        return rc_or_raise(call, PyExc_ValueError);                                        \
    }
ID_FN(session_activate, pn_session_activate(id))
ID_FN(session_deactivate, pn_session_deactivate(id))

/* An OSError for an output that could not be written (errno, strerror, the path), the
 * upstream ValueError for a wrong format or session. */
static PyObject *
finalize_error(int rc)
{
    const char *path = pn_last_error_path();
    if (rc != -EINVAL && path[0]) {
        PyObject *fn = PyUnicode_DecodeFSDefault(path);
        PyObject *e = fn ? PyObject_CallFunction(PyExc_OSError, "isO", -rc, strerror(-rc), fn) : NULL;
        if (e) { /* OSError(errno, ...) picks the subclass: FileNotFoundError, PermissionError */
            PyErr_SetObject((PyObject *)Py_TYPE(e), e);
            Py_DECREF(e);
        }
        Py_XDECREF(fn);
        return NULL;
    }
    return rc_or_raise(rc, PyExc_ValueError);
}

static PyObject *
session_finalize(PyObject *self, PyObject *args)
{
    int id = -1;
    const char *fmt = "";
    if (!PyArg_ParseTuple(args, "|is", &id, &fmt))
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = pn_session_finalize(id, fmt);
    Py_END_ALLOW_THREADS
    return rc < 0 ? finalize_error(rc) : PyLong_FromLong(rc);
}

static PyObject *
session_depth(PyObject *self, PyObject *args)
{
    int id = 0;
    if (!PyArg_ParseTuple(args, "|i", &id))
        return NULL;
    int d = pn_session_depth(id);
    if (d < 0)
        Py_RETURN_NONE;
    return PyLong_FromLong(d);
}

typedef struct Sink {
    char *p;
    size_t n, cap;
} Sink;

static void
sink_write(const char *s, size_t n, void *user)
{
    Sink *k = user;
    if (k->n + n + 1 > k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 4096;
        while (cap < k->n + n + 1)
            cap *= 2;
        char *q = realloc(k->p, cap);
        if (!q)
            return;
        k->p = q;
        k->cap = cap;
    }
    memcpy(k->p + k->n, s, n);
    k->n += n;
    k->p[k->n] = 0;
}

static PyObject *
sink_result(Sink *k, int rc)
{
    PyObject *r = rc < 0 ? py_err(PyExc_RuntimeError, "%s", pn_last_error())
                         : PyUnicode_FromStringAndSize(k->p ? k->p : "", (Py_ssize_t)k->n);
    free(k->p);
    return r;
}

static PyObject *
session_tree_json(PyObject *self, PyObject *args)
{
    int id = 0;
    if (!PyArg_ParseTuple(args, "|i", &id))
        return NULL;
    Sink k = {0};
    return sink_result(&k, pn_session_tree_json(id, sink_write, &k));
}

/* pn_session_phase_tree(id, phase, msgpack) -> str (hatchet JSON) or bytes (msgpack) */
static PyObject *
session_phase_tree(PyObject *self, PyObject *args)
{
    int id = 0, phase = 0, msgpack = 0, rc;
    Sink k = {0};
    PyObject *r;
    if (!PyArg_ParseTuple(args, "|iip", &id, &phase, &msgpack))
        return NULL;
    rc = pn_session_phase_tree(id, phase, msgpack, sink_write, &k);
    if (rc < 0 || !msgpack)
        return sink_result(&k, rc);
    r = PyBytes_FromStringAndSize(k.p ? k.p : "", (Py_ssize_t)k.n);
    free(k.p);
    return r;
}

static PyObject *
session_clear(PyObject *self, PyObject *args)
{
    int id = 0, phase = 0, up_to = 0;
    if (!PyArg_ParseTuple(args, "|iip", &id, &phase, &up_to))
        return NULL;
    return rc_or_raise(pn_session_clear(id, phase, up_to), PyExc_ValueError);
}

static PyObject *
session_phase_complete(PyObject *self, PyObject *args)
{
    int id = 0, phase = 0, rc;
    if (!PyArg_ParseTuple(args, "|ii", &id, &phase))
        return NULL;
    if ((rc = pn_session_phase_complete(id, phase)) < 0)
        return rc_or_raise(rc, PyExc_ValueError);
    return PyBool_FromLong(rc);
}

ID_FN(session_advance_phase, pn_session_advance_phase(id))
ID_FN(session_flush, pn_session_flush(id))

static PyObject *
state_enter(PyObject *self, PyObject *name)
{
    const char *s = name == Py_None ? NULL : PyUnicode_AsUTF8(name);
    if (!s && name != Py_None)
        return NULL;
    return rc_or_raise(pn_state_enter(s), PyExc_MemoryError);
}

static PyObject *
state_exit(PyObject *self, PyObject *args)
{
    pn_state_exit();
    Py_RETURN_NONE;
}

/* pn_scope_enter(name) -> id; METH_O: this is on the per-scope path. */
static PyObject *
scope_enter(PyObject *self, PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    if (!s)
        return NULL;
    if (__builtin_expect(pn_python_active(), 0)) /* python-context sessions: metrics go here */
        py_proton_frames();
    return PyLong_FromUnsignedLongLong(pn_scope_enter(s));
}

/* pn_scope_leave(id): exit ignoring stack errors (the scope object's fast path). */
static PyObject *
scope_leave(PyObject *self, PyObject *id)
{
    unsigned long long v = PyLong_AsUnsignedLongLong(id);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    pn_scope_exit(v);
    Py_RETURN_NONE;
}

static PyObject *
scope_exit(PyObject *self, PyObject *args)
{
    unsigned long long id = 0;
    int strict = 0;
    if (!PyArg_ParseTuple(args, "|Kp", &id, &strict))
        return NULL;
    int rc = pn_scope_exit(id);
    if (rc < 0 && !strict)
        Py_RETURN_NONE;
    return rc_or_raise(rc, PyExc_RuntimeError);
}

static int
is_int(PyObject *x)
{
    return PyLong_Check(x) || (PyIndex_Check(x) && !PyFloat_Check(x));
}

/* a list or tuple metric: all ints → int64 vector, else double vector */
static int
add_metric_vec(const char *name, PyObject *seq)
{
    PyObject *fast = PySequence_Fast(seq, "metric value");
    Py_ssize_t n;
    int ints = 1, rc = -1;
    int64_t *iv = NULL;
    double *dv = NULL;
    if (!fast)
        return -1;
    n = PySequence_Fast_GET_SIZE(fast);
    for (Py_ssize_t k = 0; k < n; k++)
        ints &= is_int(PySequence_Fast_GET_ITEM(fast, k));
    if (ints ? !(iv = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *iv))
             : !(dv = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *dv))) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *x = PySequence_Fast_GET_ITEM(fast, k);
        if (ints)
            iv[k] = PyLong_AsLongLong(x);
        else
            dv[k] = PyFloat_AsDouble(x);
        if (PyErr_Occurred())
            goto out;
    }
    rc = pn_scope_add_metric_vec(name, ints ? PN_METRIC_INT : PN_METRIC_DOUBLE, iv, dv, (uint32_t)n);
    if (rc < 0)
        py_err(PyExc_ValueError, "%s", pn_last_error());
out:
    PyMem_Free(iv);
    PyMem_Free(dv);
    Py_DECREF(fast);
    return rc < 0 ? -1 : 0;
}

/* add_metric(name, value): int → int64, float → double, list/tuple → vector (upstream
 * coercions in C). */
static PyObject *
add_metric(PyObject *self, PyObject *args)
{
    const char *name;
    PyObject *v;
    if (!PyArg_ParseTuple(args, "sO", &name, &v))
        return NULL;
    int rc;
    if (PyList_Check(v) || PyTuple_Check(v)) {
        if (add_metric_vec(name, v) < 0)
            return NULL;
        return PyLong_FromLong(0);
    }
    if (PyBool_Check(v) || PyLong_Check(v)) {
        long long i = PyLong_AsLongLong(v);
        if (i == -1 && PyErr_Occurred())
            return NULL;
        rc = pn_scope_add_metric(name, PN_METRIC_INT, i, 0);
    } else {
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred())
            return NULL;
        rc = pn_scope_add_metric(name, PN_METRIC_DOUBLE, 0, d);
    }
    return rc_or_raise(rc, PyExc_ValueError);
}

static PyObject *
capture_reset(PyObject *self, PyObject *args)
{
    pn_capture_reset();
    Py_RETURN_NONE;
}

static PyObject *
capture_enable(PyObject *self, PyObject *args)
{
    int on;
    if (!PyArg_ParseTuple(args, "p", &on))
        return NULL;
    pn_capture_enable(on);
    Py_RETURN_NONE;
}

static PyObject *
capture_dump(PyObject *self, PyObject *args)
{
    const char *path = NULL;
    if (!PyArg_ParseTuple(args, "|z", &path))
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = pn_capture_dump(path);
    Py_END_ALLOW_THREADS
    return rc_or_raise(rc, PyExc_OSError);
}

static PyObject *
output_taken(PyObject *self, PyObject *args)
{
    const char *v = pn_output_taken();
    if (!v)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(v);
}

static PyObject *
capture_active(PyObject *self, PyObject *args)
{
    return PyBool_FromLong(pn_capture_active());
}

static PyObject *
capture_keep_timeline(PyObject *self, PyObject *args)
{
    pn_capture_keep_timeline();
    Py_RETURN_NONE;
}

static PyObject *
capture_results(PyObject *self, PyObject *args)
{
    Sink k = {0};
    return sink_result(&k, pn_capture_results_json(sink_write, &k));
}

static PyObject *
flush_all(PyObject *self, PyObject *args)
{
    Py_BEGIN_ALLOW_THREADS
    pn_flush_all();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *
flush_at_exit(PyObject *self, PyObject *args)
{
    Py_BEGIN_ALLOW_THREADS
    pn_flush_at_exit();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *
counters(PyObject *self, PyObject *args)
{
    int n = pn_counter_count();
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < n; i++) {
        PyObject *s = PyUnicode_FromString(pn_counter_name(i));
        PyList_Append(l, s);
        Py_DECREF(s);
    }
    return Py_BuildValue("(Ns)", l, pn_counter_source());
}

/* pn_next_launch(name_or_None, {metric: number}) — hook="triton" renaming/metrics */
static PyObject *
next_launch(PyObject *self, PyObject *args)
{
    const char *name;
    PyObject *metrics;
    if (!PyArg_ParseTuple(args, "zO!", &name, &PyDict_Type, &metrics))
        return NULL;
    const char *names[PN_NEXT_METRICS];
    double vals[PN_NEXT_METRICS];
    int n = 0;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (n < PN_NEXT_METRICS && PyDict_Next(metrics, &pos, &k, &v)) {
        names[n] = PyUnicode_AsUTF8(k);
        vals[n] = PyFloat_AsDouble(v);
        if (!names[n] || (vals[n] == -1.0 && PyErr_Occurred()))
            return NULL;
        n++;
    }
    return rc_or_raise(pn_launch_next(name, n, names, vals), PyExc_ValueError);
}

static PyObject *
info(PyObject *self, PyObject *args)
{
    return Py_BuildValue("{s:i,s:i,s:s}", "active", pn_active(), "disabled", pn_disabled(), "clock",
                         pn_clock_source());
}

static PyObject *
ticks_ns(PyObject *self, PyObject *args)
{
    return PyLong_FromUnsignedLongLong(pn_ticks_to_ns(pn_ticks()));
}

static PyMethodDef methods[] = {
    {"pn_session_start", session_start, METH_VARARGS, NULL},
    {"pn_session_activate", session_activate, METH_VARARGS, NULL},
    {"pn_session_deactivate", session_deactivate, METH_VARARGS, NULL},
    {"pn_session_finalize", session_finalize, METH_VARARGS, NULL},
    {"pn_session_depth", session_depth, METH_VARARGS, NULL},
    {"pn_session_tree_json", session_tree_json, METH_VARARGS, NULL},
    {"pn_session_phase_tree", session_phase_tree, METH_VARARGS, NULL},
    {"pn_session_advance_phase", session_advance_phase, METH_VARARGS, NULL},
    {"pn_session_flush", session_flush, METH_VARARGS, NULL},
    {"pn_session_phase_complete", session_phase_complete, METH_VARARGS, NULL},
    {"pn_session_clear", session_clear, METH_VARARGS, NULL},
    {"pn_state_enter", state_enter, METH_O, NULL},
    {"pn_state_exit", state_exit, METH_NOARGS, NULL},
    {"pn_scope_enter", scope_enter, METH_O, NULL},
    {"pn_scope_leave", scope_leave, METH_O, NULL},
    {"pn_scope_exit", scope_exit, METH_VARARGS, NULL},
    {"pn_add_metric", add_metric, METH_VARARGS, NULL},
    {"pn_capture_reset", capture_reset, METH_NOARGS, NULL},
    {"pn_capture_enable", capture_enable, METH_VARARGS, NULL},
    {"pn_capture_dump", capture_dump, METH_VARARGS, NULL},
    {"pn_capture_results", capture_results, METH_NOARGS, NULL},
    {"pn_capture_keep_timeline", capture_keep_timeline, METH_NOARGS, NULL},
    {"pn_capture_active", capture_active, METH_NOARGS, NULL},
    {"pn_output_taken", output_taken, METH_NOARGS, NULL},
    {"pn_flush_all", flush_all, METH_NOARGS, NULL},
    {"pn_flush_at_exit", flush_at_exit, METH_NOARGS, NULL},
    {"pn_counters", counters, METH_NOARGS, NULL},
    {"pn_info", info, METH_NOARGS, NULL},
    {"pn_next_launch", next_launch, METH_VARARGS, NULL},
    {"pn_now_ns", ticks_ns, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int
py_proton_init(PyObject *mod)
{
    pn_init();
    return PyModule_AddFunctions(mod, methods);
}
