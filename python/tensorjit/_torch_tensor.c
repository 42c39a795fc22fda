/*
 * torch tensors read through their attributes. A DLPack export costs some
 * 0.75 us a tensor (a capsule, a managed tensor and its deleter); shape,
 * dtype, data_ptr() and four flags cost about a third of that, and a call
 * passes two to four tensors (docs/python.md's numbers are the package's).
 * Only the plain Tensor type is read this way: a subclass may override
 * what its attributes say (__torch_function__), and gets the export.
 */
#include "_torch_tensor.h"

#include <string.h>

static PyTypeObject *g_tensor;    /* torch.Tensor, once torch is imported */
static int g_looked;
static struct {
    PyObject *dtype; /* a reference */
    jit_dtype t;
} g_dtypes[16];
static int g_ndtypes;
static PyObject *g_names[8];      /* interned attribute names */
static PyObject *g_is_tracing;    /* torch._C._is_tracing, where torch has it */
static PyObject *g_grad_enabled;  /* torch.is_grad_enabled */
static PyObject *g_increment_version; /* torch.autograd.graph.increment_version (2.1+) */
static PyObject *g_new_empty;         /* torch.Tensor.new_empty, the descriptor */
enum { N_IS_CPU, N_REQUIRES_GRAD, N_DTYPE, N_SHAPE, N_IS_CONTIGUOUS, N_IS_NEG, N_DATA_PTR };

static void add_dtype(PyObject *torch, const char *name, jit_dtype t)
{
    PyObject *d = PyObject_GetAttrString(torch, name);
    if (!d) { /* an older torch lacks uint16..uint64 */
        PyErr_Clear();
        return;
    }
    g_dtypes[g_ndtypes].dtype = d;
    g_dtypes[g_ndtypes++].t = t;
}

/* torch's Tensor type and dtypes, if torch is imported (looked up once). */
static int torch_ready(void)
{
    if (g_looked)
        return g_tensor != NULL;
    PyObject *torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch"); /* borrowed */
    if (!torch)
        return 0; /* not yet: no tensor to see either */
    g_looked = 1;
    static const char *names[] = {"is_cpu", "requires_grad", "dtype", "shape",
                                  "is_contiguous", "is_neg", "data_ptr"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!(g_names[i] = PyUnicode_InternFromString(names[i]))) {
            PyErr_Clear();
            return 0;
        }
    PyObject *t = PyObject_GetAttrString(torch, "Tensor");
    if (!t || !PyType_Check(t)) {
        PyErr_Clear();
        Py_XDECREF(t);
        return 0;
    }
    static const struct { const char *name; jit_dtype t; } known[] = {
        {"bool", JIT_BOOL},     {"int8", JIT_I8},       {"uint8", JIT_U8},
        {"int16", JIT_I16},     {"uint16", JIT_U16},    {"int32", JIT_I32},
        {"uint32", JIT_U32},    {"int64", JIT_I64},     {"uint64", JIT_U64},
        {"float16", JIT_F16},   {"bfloat16", JIT_BF16}, {"float32", JIT_F32},
        {"float64", JIT_F64}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        add_dtype(torch, known[i].name, known[i].t);
    g_tensor = (PyTypeObject *)t;
    g_new_empty = PyObject_GetAttrString(t, "new_empty");
    PyObject *c = PyObject_GetAttrString(torch, "_C");
    g_is_tracing = c ? PyObject_GetAttrString(c, "_is_tracing") : NULL;
    Py_XDECREF(c);
    g_grad_enabled = PyObject_GetAttrString(torch, "is_grad_enabled");
    PyErr_Clear(); /* a torch without them: neither is asked */
    PyObject *autograd = PyObject_GetAttrString(torch, "autograd");
    PyObject *graph = autograd ? PyObject_GetAttrString(autograd, "graph") : NULL;
    g_increment_version = graph ? PyObject_GetAttrString(graph, "increment_version") : NULL;
    Py_XDECREF(graph);
    Py_XDECREF(autograd);
    PyErr_Clear();
    return 1;
}

int tj_torch_plain(PyObject *obj)
{
    return torch_ready() && Py_TYPE(obj) == g_tensor;
}

int tj_torch_own_new_empty(PyObject *obj)
{
    if (!torch_ready() || !PyObject_TypeCheck(obj, g_tensor))
        return 0;
    if (Py_TYPE(obj) == g_tensor)
        return 1;
    /* a subclass (nn.Parameter) that leaves new_empty as torch's: the
     * class attribute is torch.Tensor's own descriptor */
    PyObject *mine = PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "new_empty");
    int same = mine && mine == g_new_empty;
    Py_XDECREF(mine);
    PyErr_Clear();
    return same;
}

void tj_torch_wrote(PyObject *t)
{
    if (!torch_ready() || !PyObject_TypeCheck(t, g_tensor))
        return;
    PyObject *r = NULL;
    if (g_increment_version) {
        r = PyObject_CallFunctionObjArgs(g_increment_version, t, NULL);
    } else if (tj_torch_grad_enabled()) {
        PyObject *flat = PyObject_CallMethod(t, "view", "i", -1);
        PyObject *none = flat ? PySequence_GetSlice(flat, 0, 0) : NULL;
        r = none ? PyObject_CallMethod(none, "zero_", NULL) : NULL; /* any dtype, bool too */
        Py_XDECREF(none);
        Py_XDECREF(flat);
    }
    Py_XDECREF(r);
    PyErr_Clear();
}

/* 1 when torch's function f (no arguments) says so; 0 without torch or f. */
static int torch_says(PyObject *f)
{
    if (!torch_ready() || !f)
        return 0;
    PyObject *r = PyObject_CallNoArgs(f);
    int b = r ? PyObject_IsTrue(r) : 0;
    Py_XDECREF(r);
    PyErr_Clear();
    return b == 1;
}

int tj_torch_tracing(void)
{
    return torch_says(g_is_tracing);
}

int tj_torch_grad_enabled(void)
{
    return torch_says(g_grad_enabled);
}

/* obj.name (a method called when call), as a truth value: 1, 0, -1. */
static int attr_truth(PyObject *obj, int name, int call)
{
    PyObject *r = call ? PyObject_CallMethodNoArgs(obj, g_names[name])
                       : PyObject_GetAttr(obj, g_names[name]);
    if (!r)
        return -1;
    int b = PyObject_IsTrue(r);
    Py_DECREF(r);
    return b;
}

static jit_dtype dtype_of(PyObject *obj)
{
    PyObject *d = PyObject_GetAttr(obj, g_names[N_DTYPE]);
    if (!d)
        return JIT_DTYPE_UNSET;
    jit_dtype t = JIT_DTYPE_UNSET;
    for (int i = 0; i < g_ndtypes; i++)
        if (g_dtypes[i].dtype == d)
            t = g_dtypes[i].t;
    Py_DECREF(d);
    return t;
}

static int shape_of(PyObject *obj, tj_torch_view *v)
{
    PyObject *s = PyObject_GetAttr(obj, g_names[N_SHAPE]);
    if (!s)
        return -1;
    int r = 0;
    if (!PyTuple_Check(s) || PyTuple_GET_SIZE(s) > JIT_MAX_RANK) {
        r = 1; /* the export's path names the rank */
    } else {
        v->ndim = (int)PyTuple_GET_SIZE(s);
        for (int i = 0; i < v->ndim && r == 0; i++) {
            v->dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(s, i));
            r = v->dims[i] == -1 && PyErr_Occurred() ? -1 : 0;
        }
    }
    Py_DECREF(s);
    return r;
}

/* A tensor with torch's negative bit (torch._neg_view, a conj's
 * imaginary part) holds the negated values: its DLPack export hands out
 * that memory as it is, so its values are read through resolve_neg(). */
static int view_of_resolved(PyObject *obj, tj_torch_view *v)
{
    PyObject *r = PyObject_CallMethod(obj, "resolve_neg", NULL);
    if (!r)
        return -1;
    int got = tj_torch_view_of(r, 0, v); /* which holds r itself where it read it */
    Py_DECREF(r);
    return got;
}

int tj_torch_view_of(PyObject *obj, int for_out, tj_torch_view *v)
{
    if (!torch_ready() || Py_TYPE(obj) != g_tensor)
        return 0;
    int cpu = attr_truth(obj, N_IS_CPU, 0);
    int grad = cpu == 1 ? attr_truth(obj, N_REQUIRES_GRAD, 0) : 1;
    int dense = grad == 0 ? attr_truth(obj, N_IS_CONTIGUOUS, 1) : 0;
    int neg = cpu == 1 && grad == 0 ? attr_truth(obj, N_IS_NEG, 1) : 0;
    if (cpu < 0 || grad < 0 || dense < 0 || neg < 0)
        return -1;
    if (neg && for_out)
        return TJ_TORCH_NEG_OUT;
    if (neg)
        return view_of_resolved(obj, v);
    if (!cpu || grad || !dense)
        return 0;
    v->dtype = dtype_of(obj);
    if (v->dtype == JIT_DTYPE_UNSET)
        return PyErr_Occurred() ? -1 : 0;
    int r = shape_of(obj, v);
    if (r != 0)
        return r < 0 ? -1 : 0;
    PyObject *p = PyObject_CallMethodNoArgs(obj, g_names[N_DATA_PTR]);
    if (!p) { /* no storage (a sparse tensor): the export's path says why, as a tensorjit.Error */
        PyErr_Clear();
        return 0;
    }
    v->ptr = PyLong_AsVoidPtr(p);
    Py_DECREF(p);
    if (!v->ptr && PyErr_Occurred())
        return -1;
    Py_INCREF(obj); /* the tensor holds its memory */
    v->owner = obj;
    return 1;
}
