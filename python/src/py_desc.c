/*
 * py_desc.c — host tensor descriptors (triton.tools.tensor_descriptor.TensorDescriptor)
 * as kernel arguments.
 *
 * A descriptor argument is one kernel parameter that expands into several 8-byte
 * slots: the base pointer, then every shape entry, then every stride entry (int64),
 * leaving out those the specialisation made constants. Its specialisation key is one
 * 64-bit word (py_launch.c compares words): element dtype, rank, block shape (powers
 * of two), padding, base alignment and, per shape/stride entry, the usual int facts
 * (== 1, % 16 == 0, neither). Word layout:
 *   bits  0-7   tag (TG_DESC)            bit  8   base 16-byte aligned
 *   bit   9     padding "nan"            bits 10-12 rank (1..5)
 *   bits 13-18  dtype code               bits 19-43 log2 of each block dim (5 bits each)
 *   bits 44-53  shape facts (2 bits each) bits 54-63 stride facts (2 bits each)
 * A fact is DF_PLAIN, DF_DIV16 or DF_ONE. The compiled kernel's plan entry for the
 * parameter is SK_DESC | mask << 8: bit j of mask says shape j is passed, bit
 * DESC_MAXRANK + j that stride j is (triton/compiler/code_generator.py builds it).
 * Called by py_launch.c only.
 */
#include "py_int.h"

#include <string.h>

static PyObject *desc_type; /* the TensorDescriptor class (set_descriptor_type) */
static PyObject *s_base, *s_shape, *s_strides, *s_block_shape, *s_padding;

int
py_desc_check(PyObject *o)
{
    return desc_type && PyObject_TypeCheck(o, (PyTypeObject *)desc_type);
}

int
py_desc_read(PyObject *o, PyDesc *d)
{
    PyObject *sh = PyObject_GetAttr(o, s_shape), *st = sh ? PyObject_GetAttr(o, s_strides) : NULL;
    PyObject *bs = st ? PyObject_GetAttr(o, s_block_shape) : NULL, *pad = bs ? PyObject_GetAttr(o, s_padding) : NULL;
    int rc = -1;
    if (!pad)
        goto out;
    d->rank = py_int64_seq(sh, d->shape, DESC_MAXRANK, "descriptor shape");
    int ns = d->rank < 0 ? -1 : py_int64_seq(st, d->strides, DESC_MAXRANK, "descriptor strides");
    int nb = ns < 0 ? -1 : py_int64_seq(bs, d->block, DESC_MAXRANK, "descriptor block_shape");
    if (nb < 0)
        goto out;
    if (d->rank < 1 || ns != d->rank || nb != d->rank) {
        py_err(PyExc_ValueError, "tensor descriptor: shape, strides and block_shape must have the same rank (1 to %d)",
               DESC_MAXRANK);
        goto out;
    }
    const char *p = PyUnicode_Check(pad) ? PyUnicode_AsUTF8(pad) : NULL;
    if (!p || (strcmp(p, "zero") && strcmp(p, "nan"))) {
        py_err(PyExc_ValueError, "tensor descriptor: padding must be 'zero' or 'nan', got %R", pad);
        goto out;
    }
    d->nan = !strcmp(p, "nan");
    rc = 0;
out:
    Py_XDECREF(sh);
    Py_XDECREF(st);
    Py_XDECREF(bs);
    Py_XDECREF(pad);
    return rc;
}

PyObject *
py_desc_base(PyObject *o)
{
    return PyObject_GetAttr(o, s_base);
}

static uint64_t
fact(int64_t v, int no_spec)
{
    if (no_spec)
        return DF_PLAIN;
    return v == 1 ? DF_ONE : v % 16 == 0 ? DF_DIV16 : DF_PLAIN;
}

int
py_desc_word(const PyDesc *d, int code, int aligned, int no_spec, uint64_t *w)
{
    if (code < 0 || code >= 64) {
        py_err(PyExc_TypeError, "tensor descriptor: unsupported element dtype");
        return -1;
    }
    uint64_t x = (uint64_t)TG_DESC | (aligned ? 0x100u : 0) | (d->nan ? 0x200u : 0) | (uint64_t)d->rank << 10 |
                 (uint64_t)code << 13;
    for (int j = 0; j < d->rank; j++) {
        int64_t b = d->block[j];
        if (b < 1 || b > (1 << 20) || (b & (b - 1))) {
            py_err(PyExc_ValueError, "tensor descriptor: block_shape[%d] = %lld is not a power of two (1 to 2**20)", j,
                   (long long)b);
            return -1;
        }
        x |= (uint64_t)__builtin_ctzll((unsigned long long)b) << (19 + 5 * j);
        x |= fact(d->shape[j], no_spec) << (44 + 2 * j);
        /* the last stride is 1 (TensorDescriptor checks): always a constant */
        x |= (j == d->rank - 1 ? (uint64_t)DF_ONE : fact(d->strides[j], no_spec)) << (54 + 2 * j);
    }
    if (d->strides[d->rank - 1] != 1) {
        py_err(PyExc_ValueError, "tensor descriptor: the last dimension must be contiguous (stride 1, got %lld)",
               (long long)d->strides[d->rank - 1]);
        return -1;
    }
    *w = x;
    return 0;
}

/* ("tensordesc", dtype code, block_shape, padding, shape facts, stride facts, base aligned) */
PyObject *
py_desc_spec(uint64_t w)
{
    int rank = (int)(w >> 10 & 7);
    PyObject *bs = PyTuple_New(rank), *sf = PyTuple_New(rank), *tf = PyTuple_New(rank), *r = NULL;
    if (!bs || !sf || !tf)
        goto out;
    for (int j = 0; j < rank; j++) {
        PyTuple_SET_ITEM(bs, j, PyLong_FromLongLong(1ll << (w >> (19 + 5 * j) & 31)));
        PyTuple_SET_ITEM(sf, j, PyLong_FromLong((long)(w >> (44 + 2 * j) & 3)));
        PyTuple_SET_ITEM(tf, j, PyLong_FromLong((long)(w >> (54 + 2 * j) & 3)));
    }
    r = Py_BuildValue("(siOsOOi)", "tensordesc", (int)(w >> 13 & 63), bs, (w & 0x200) ? "nan" : "zero", sf, tf,
                      (w & 0x100) != 0);
out:
    Py_XDECREF(bs);
    Py_XDECREF(sf);
    Py_XDECREF(tf);
    return r;
}

int
py_desc_pack(const PyDesc *d, uint64_t base, unsigned plan, uint64_t *slots, int *ns, int max)
{
    unsigned mask = plan >> 8;
    int need = 1;
    for (int j = 0; j < 2 * DESC_MAXRANK; j++)
        need += (mask >> j) & 1;
    if (*ns + need > max) {
        py_err(PyExc_ValueError, "kernel arguments take more than %d slots", max);
        return -1;
    }
    for (int j = DESC_MAXRANK; j < 2 * DESC_MAXRANK; j++)
        if ((mask >> j & 1) && j - DESC_MAXRANK >= d->rank) {
            py_err(PyExc_ValueError, "tensor descriptor of rank %d for a kernel compiled for a higher rank", d->rank);
            return -1;
        }
    slots[(*ns)++] = base;
    for (int j = 0; j < d->rank; j++)
        if (mask >> j & 1)
            slots[(*ns)++] = (uint64_t)d->shape[j];
    for (int j = 0; j < d->rank; j++)
        if (mask >> (DESC_MAXRANK + j) & 1)
            slots[(*ns)++] = (uint64_t)d->strides[j];
    return 0;
}

/* set_descriptor_type(cls): the class whose instances are tensor descriptor arguments */
static PyObject *
set_descriptor_type(PyObject *self, PyObject *arg)
{
    (void)self;
    if (!PyType_Check(arg))
        return py_err(PyExc_TypeError, "set_descriptor_type wants a class");
    Py_XSETREF(desc_type, Py_NewRef(arg));
    Py_RETURN_NONE;
}

static PyMethodDef desc_functions[] = {
    {"set_descriptor_type", set_descriptor_type, METH_O, "Register the host TensorDescriptor class."},
    {NULL, NULL, 0, NULL},
};

int
py_desc_init(PyObject *mod)
{
    s_base = PyUnicode_InternFromString("base");
    s_shape = PyUnicode_InternFromString("shape");
    s_strides = PyUnicode_InternFromString("strides");
    s_block_shape = PyUnicode_InternFromString("block_shape");
    s_padding = PyUnicode_InternFromString("padding");
    if (!s_base || !s_shape || !s_strides || !s_block_shape || !s_padding)
        return -1;
    return PyModule_AddFunctions(mod, desc_functions);
}
