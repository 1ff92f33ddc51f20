/*
 * py_scope.c — triton._C.tritium.Scope, the type behind `with proton.scope(name,
 * metrics=None):` (python/triton/profiler/scope.py), in C so that a scope pair costs
 * two Proton calls and little Python around them (docs/proton.md §2: the pair's cost).
 *
 * A Scope records only while host scopes record (flags.profiling_on or
 * flags.kernel_capture; flags.py pushes their "or" here through scope_set_recording).
 * Metrics and the decorator form go back to Python through two hooks scope.py
 * registers (scope_set_hooks): add_metrics(dict) and decorate(scope, func). The type is
 * subclassable (cpu_timed_scope); its construction from Python code is a vectorcall.
 */
#include "py_int.h"

#include <structmember.h>

#include "proton.h"

typedef struct PyScope {
    PyObject_HEAD
    PyObject *name;    /* str */
    PyObject *metrics; /* any object; None: none */
    unsigned long long sid;
    int entered;       /* sid is a scope this object entered and has not left */
} PyScope;

static int recording;
static PyObject *hook_add_metrics, *hook_decorate;

/* Sets fields from (name, metrics=None); 0 or -1 with an exception. */
static int
scope_set(PyScope *s, PyObject *name, PyObject *metrics)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "scope name must be a str, not %.100s", Py_TYPE(name)->tp_name);
        return -1;
    }
    Py_XSETREF(s->name, Py_NewRef(name));
    Py_XSETREF(s->metrics, Py_NewRef(metrics ? metrics : Py_None));
    s->entered = 0;
    return 0;
}

static PyObject *
scope_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyScope *s = (PyScope *)type->tp_alloc(type, 0);
    if (s) {
        s->name = Py_NewRef(Py_None);
        s->metrics = Py_NewRef(Py_None);
    }
    return (PyObject *)s;
}

static int
scope_init(PyScope *s, PyObject *args, PyObject *kw)
{
    static char *kwl[] = {"name", "metrics", NULL};
    PyObject *name, *metrics = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:scope", kwl, &name, &metrics))
        return -1;
    return scope_set(s, name, metrics);
}

/* Scope(name, metrics=None) without building an argument tuple (the per-scope path). */
static PyObject *
scope_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *name = n > 0 ? args[0] : NULL, *metrics = n > 1 ? args[1] : NULL;
    if (n > 2)
        return PyErr_Format(PyExc_TypeError, "scope() takes at most 2 positional arguments (%zd given)", n);
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i), **dst;
        dst = PyUnicode_CompareWithASCIIString(k, "name") == 0      ? &name
              : PyUnicode_CompareWithASCIIString(k, "metrics") == 0 ? &metrics
                                                                    : NULL;
        if (!dst || *dst)
            return PyErr_Format(PyExc_TypeError, dst ? "scope() got multiple values for argument '%U'"
                                                     : "scope() got an unexpected keyword argument '%U'", k);
        *dst = args[n + i];
    }
    if (!name)
        return PyErr_Format(PyExc_TypeError, "scope() missing required argument 'name'");
    PyScope *s = (PyScope *)scope_new((PyTypeObject *)type, NULL, NULL);
    if (s && scope_set(s, name, metrics) < 0)
        Py_CLEAR(s);
    return (PyObject *)s;
}

static int
scope_traverse(PyScope *s, visitproc visit, void *arg)
{
    Py_VISIT(s->name);
    Py_VISIT(s->metrics);
    return 0;
}

static int
scope_clear(PyScope *s)
{
    Py_CLEAR(s->name);
    Py_CLEAR(s->metrics);
    return 0;
}

/* Also the base of subclasses' dealloc, which then releases their heap type itself. */
static void
scope_dealloc(PyScope *s)
{
    PyObject_GC_UnTrack(s);
    scope_clear(s);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *
scope_enter_m(PyScope *s, PyObject *unused)
{
    if (recording) {
        const char *name = PyUnicode_AsUTF8(s->name);
        if (!name)
            return NULL;
        if (__builtin_expect(pn_python_active(), 0)) /* python-context sessions */
            py_proton_frames();
        s->sid = pn_scope_enter(name);
        s->entered = 1;
        if (s->metrics != Py_None && hook_add_metrics) {
            int truthy = PyObject_IsTrue(s->metrics);
            if (truthy < 0)
                return NULL;
            if (truthy) {
                PyObject *r = PyObject_CallOneArg(hook_add_metrics, s->metrics);
                if (!r)
                    return NULL;
                Py_DECREF(r);
            }
        }
    }
    return Py_NewRef(s);
}

static PyObject *
scope_exit_m(PyScope *s, PyObject *const *args, Py_ssize_t n)
{
    if (s->entered) {
        if (recording)
            pn_scope_exit(s->sid);
        s->entered = 0;
    }
    Py_RETURN_NONE;
}

/* As a decorator: scope.py's decorate(self, func) builds the wrapper. */
static PyObject *
scope_call(PyScope *s, PyObject *args, PyObject *kw)
{
    PyObject *func;
    if (kw || !PyArg_ParseTuple(args, "O:scope.__call__", &func))
        return kw ? PyErr_Format(PyExc_TypeError, "a scope decorates one function") : NULL;
    if (!hook_decorate)
        return PyErr_Format(PyExc_RuntimeError, "scope hooks not set (import triton.profiler)");
    return PyObject_CallFunctionObjArgs(hook_decorate, (PyObject *)s, func, NULL);
}

/* _id: the Proton scope id while entered, else None (upstream's attribute). */
static PyObject *
scope_get_id(PyScope *s, void *unused)
{
    return s->entered ? PyLong_FromUnsignedLongLong(s->sid) : Py_NewRef(Py_None);
}

static PyMethodDef scope_methods[] = {
    {"__enter__", (PyCFunction)scope_enter_m, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))scope_exit_m, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef scope_members[] = {
    {"name", T_OBJECT, offsetof(PyScope, name), READONLY, NULL},
    {"metrics", T_OBJECT, offsetof(PyScope, metrics), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef scope_getset[] = {
    {"_id", (getter)scope_get_id, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PyScope_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tritium.Scope",
    .tp_basicsize = sizeof(PyScope),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "scope(name, metrics=None): a host scope, `with proton.scope(\"step\"):` or\n"
              "`@proton.scope(\"step\")`. Records while flags.profiling_on or\n"
              "flags.kernel_capture is set; `_id` is the Proton scope id while entered.",
    .tp_new = scope_new,
    .tp_init = (initproc)scope_init,
    .tp_vectorcall = scope_vectorcall,
    .tp_dealloc = (destructor)scope_dealloc,
    .tp_traverse = (traverseproc)scope_traverse,
    .tp_clear = (inquiry)scope_clear,
    .tp_call = (ternaryfunc)scope_call,
    .tp_methods = scope_methods,
    .tp_members = scope_members,
    .tp_getset = scope_getset,
};

/* scope_set_recording(bool): whether Scope objects record (flags.py). */
static PyObject *
set_recording(PyObject *self, PyObject *on)
{
    int v = PyObject_IsTrue(on);
    if (v < 0)
        return NULL;
    recording = v;
    Py_RETURN_NONE;
}

/* scope_set_hooks(add_metrics, decorate) (scope.py). */
static PyObject *
set_hooks(PyObject *self, PyObject *args)
{
    PyObject *add, *dec;
    if (!PyArg_ParseTuple(args, "OO", &add, &dec))
        return NULL;
    Py_XSETREF(hook_add_metrics, Py_NewRef(add));
    Py_XSETREF(hook_decorate, Py_NewRef(dec));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"scope_set_recording", set_recording, METH_O, NULL},
    {"scope_set_hooks", set_hooks, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int
py_scope_init(PyObject *mod)
{
    if (PyType_Ready(&PyScope_Type) < 0 || PyModule_AddObjectRef(mod, "Scope", (PyObject *)&PyScope_Type) < 0)
        return -1;
    return PyModule_AddFunctions(mod, methods);
}
