/*
 * py_proton.c — Proton bindings: initialisation at import (kernel capture reads its
 * environment here), sessions, host scopes, metrics and the spine-triton profiler
 * store, used by python/triton/profiler and backends/spine_triton/proton.py.
 *
 * Every function maps onto proton.h; errors raise the upstream messages (which
 * proton.h keeps in pn_last_error()).
 */
#include "py_int.h"

#include "proton.h"

#include <errno.h>
#include <string.h>

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
    return rc_or_raise(rc, PyExc_ValueError);
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

/* pn_scope_enter(name) -> id; METH_O: this is on the per-scope path. */
static PyObject *
scope_enter(PyObject *self, PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    if (!s)
        return NULL;
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

/* add_metric(name, value): int → int64, float → double (upstream coercions in C). */
static PyObject *
add_metric(PyObject *self, PyObject *args)
{
    const char *name;
    PyObject *v;
    if (!PyArg_ParseTuple(args, "sO", &name, &v))
        return NULL;
    int rc;
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
    {"pn_scope_enter", scope_enter, METH_O, NULL},
    {"pn_scope_leave", scope_leave, METH_O, NULL},
    {"pn_scope_exit", scope_exit, METH_VARARGS, NULL},
    {"pn_add_metric", add_metric, METH_VARARGS, NULL},
    {"pn_capture_reset", capture_reset, METH_NOARGS, NULL},
    {"pn_capture_enable", capture_enable, METH_VARARGS, NULL},
    {"pn_capture_dump", capture_dump, METH_VARARGS, NULL},
    {"pn_capture_results", capture_results, METH_NOARGS, NULL},
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
