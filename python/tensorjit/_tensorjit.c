/*
 * tensorjit._tensorjit: the package's calls, in C over libtensorjit.
 *
 * A call takes its arrays through numpy's C API (ndarrays, and through
 * numpy anything the buffer protocol describes) or DLPack (torch and any
 * other __dlpack__ producer), finds the kernel of its *family* (op, element
 * and index types, ranks, attributes: every dim dynamic, SPEC section 6)
 * in a hash table, binds the call's dims and calls the kernel. A new array
 * length costs no compile; the table holds at most TJ_MAX_FAMILIES kernels.
 *
 * Every table access happens with the GIL held; kernels run with it
 * released once they move enough bytes for another thread to gain.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

/* numpy 2's headers hide PyArray_Descr's elsize behind this accessor;
 * 1.x's have the field and not the accessor (numpy's migration guide) */
#if NPY_ABI_VERSION < 0x02000000
#define PyDataType_ELSIZE(descr) ((descr)->elsize)
#endif

#include <stdint.h>
#include <string.h>

#include <tensorjit.h>

#include "_dlpack.h"
#include "_torch_tensor.h"

/* A family table of 2x its cap keeps linear probes short. */
#define TJ_SLOTS 1024
#define TJ_MAX_FAMILIES 512
/* Below this many bytes moved, dropping and retaking the GIL costs more
 * than another thread could gain. */
#define TJ_GIL_FREE_BYTES (256 * 1024)
#define TJ_MAX_DIMS (3 * JIT_MAX_RANK)

static PyObject *Error, *SignatureError, *IndexOutOfRange, *TypeMismatch, *KernelError;

/* ------------------------------------------------------------------ */
/* Kernels: a dynamic signature, its pointer, and the last call's dims */

typedef struct tj_kernel {
    jit_sig sig;       /* every dim the family leaves open is JIT_DIM_DYNAMIC */
    jit_dynamic_fn fn; /* a bag's: a jit_embedding_bag_dynamic_fn (SPEC 10) */
    uint64_t epoch;    /* jit_epoch() when fn was made: valid while it holds */
    int has_updates;
    int bag;           /* an embedding bag's family */
    /* Calls running now with the GIL released, and whether the table let
     * go of k meanwhile (1: drop it, 2: also release it to the library):
     * the last of those calls frees it. */
    int inflight;
    int retired;
    /* The output shape of the last dims bound: a call that repeats them
     * (the common case) skips jit_sig_bind. */
    int last_n;        /* -1: none yet */
    int64_t last_dims[TJ_MAX_DIMS];
    jit_shape last_out;
} tj_kernel;

static int64_t g_compiles; /* dynamic kernels this module asked the library for */
/* Calls between their kernel's hold and its release, and compiles under
 * way: tensorjit.shutdown() refuses while any runs (its jit_shutdown()
 * would free their code, or the library under them). */
static int g_running;

static void set_library_error(PyObject *type)
{
    const char *msg = jit_last_error();
    PyErr_SetString(type, msg && *msg ? msg : "tensorjit: the library failed without a message");
}

/* Compiles sig (its dims dynamic); NULL and SignatureError if invalid. */
static tj_kernel *kernel_compile(const jit_sig *sig)
{
    tj_kernel *k = PyMem_RawCalloc(1, sizeof *k);
    if (!k) {
        PyErr_NoMemory();
        return NULL;
    }
    k->sig = *sig;
    k->last_n = -1;
    jit_op_info info;
    int described = jit_op_describe(sig->op, &info) == 0;
    k->has_updates = described && info.has_updates;
    k->bag = described && (info.attrs & JIT_ATTR_BAG) != 0;
    k->epoch = jit_epoch();
    /* milliseconds of LLVM: other threads run Python meanwhile (the error
     * message is this thread's, read after), but not tensorjit.shutdown(),
     * which would free the library under the compile: it counts as a
     * running call */
    g_running++;
    Py_BEGIN_ALLOW_THREADS
    k->fn = (jit_dynamic_fn)jit_compile(&k->sig);
    Py_END_ALLOW_THREADS
    g_running--;
    if (!k->fn) {
        set_library_error(SignatureError);
        PyMem_RawFree(k);
        return NULL;
    }
    g_compiles++;
    return k;
}

/* An embedding bag's output [B, d1, ...] (SPEC 10): B from the offsets'
 * count (less the last with include_last_offset), the packed indices' rows,
 * or S, the last dim of a Segments call. */
static int bag_formula_shape(const jit_sig *s, const int64_t *dims, jit_shape *out)
{
    int rd = s->data_shape.rank, ri = s->indices_shape.rank, ru = s->updates_shape.rank;
    int64_t bags;
    if (s->op == JIT_OP_EMBEDDING_BAG_PACKED)
        bags = ri == 2 ? dims[rd] : -1;
    else if (s->op == JIT_OP_EMBEDDING_SEGMENTS)
        bags = dims[rd + ri + ru];
    else
        bags = ru == 1 ? dims[rd + ri] - (s->include_last_offset != 0) : -1;
    if (rd < 1 || bags < 0)
        return 0; /* the library's words for what is wrong */
    out->rank = rd;
    out->dims[0] = bags;
    memcpy(out->dims + 1, dims + 1, (size_t)(rd - 1) * sizeof *dims);
    /* S is a bare number: an output whose bytes overflow int64 is the
     * library's to refuse, not the allocator's */
    int64_t bytes = jit_dtype_size(s->dtype);
    for (int i = 0; i < rd; i++) {
        if (out->dims[i] < 0 || (out->dims[i] > 0 && bytes > INT64_MAX / out->dims[i]))
            return 0;
        bytes *= out->dims[i];
    }
    return 1;
}

/* The output shape of a call of k with these dims by the op's formula, for
 * the ops whose formula takes no more than the ranks and attributes the
 * family's compile checked: 1 and *out, or 0 (GatherND: ask the library).
 * The dims themselves are the kernel's to check: it returns
 * JIT_STATUS_BAD_SHAPE, writing nothing, for any that breaks a rule; a
 * shape allocated for them is then dropped unused. This spares a new
 * array length the library's two plans (jit_sig_bind, jit_output_shape). */
static int formula_shape(const tj_kernel *k, const int64_t *dims, jit_shape *out)
{
    const jit_sig *s = &k->sig;
    int rd = s->data_shape.rank, ri = s->indices_shape.rank;
    const int64_t *d = dims, *ix = dims + rd;
    switch (s->op) {
    case JIT_OP_SCATTER_UPDATE:
    case JIT_OP_SCATTER_ND_UPDATE:
    case JIT_OP_SCATTER_ELEMENTS_UPDATE:
        out->rank = rd;
        memcpy(out->dims, d, (size_t)rd * sizeof *d);
        return 1;
    case JIT_OP_GATHER_ELEMENTS:
        out->rank = ri;
        memcpy(out->dims, ix, (size_t)ri * sizeof *ix);
        return 1;
    case JIT_OP_GATHER: {
        int64_t a = s->axis < 0 ? s->axis + rd : s->axis;
        int b = s->batch_dims < 0 ? s->batch_dims + ri : s->batch_dims;
        if (a < 0 || a >= rd || b < 0 || b > ri || b > a || rd - 1 + ri - b > JIT_MAX_RANK)
            return 0;
        int n = 0;
        for (int i = 0; i < a; i++)
            out->dims[n++] = d[i];
        for (int i = b; i < ri; i++)
            out->dims[n++] = ix[i];
        for (int i = (int)a + 1; i < rd; i++)
            out->dims[n++] = d[i];
        out->rank = n;
        return 1;
    }
    case JIT_OP_EMBEDDING_BAG_OFFSETS:
    case JIT_OP_EMBEDDING_BAG_PACKED:
    case JIT_OP_EMBEDDING_SEGMENTS:
        return bag_formula_shape(s, dims, out);
    default:
        return 0;
    }
}

/* The output shape of a call with these dims; -1 and SignatureError (the
 * library's words) when the family has no such shape. exact: always the
 * library's answer (DynamicKernel.bind), never the formula's. */
static int kernel_bind(tj_kernel *k, const int64_t *dims, int n, int exact, jit_shape *out)
{
    if (n == k->last_n && memcmp(dims, k->last_dims, (size_t)n * sizeof *dims) == 0) {
        *out = k->last_out;
        return 0;
    }
    if (!exact && formula_shape(k, dims, out))
        return 0;
    jit_sig concrete;
    if (jit_sig_bind(&k->sig, dims, &concrete) != 0 || jit_output_shape(&concrete, out) != 0) {
        set_library_error(SignatureError);
        return -1;
    }
    memcpy(k->last_dims, dims, (size_t)n * sizeof *dims);
    k->last_n = n;
    k->last_out = *out;
    return 0;
}

/* ------------------------------------------------------------------ */
/* The family table                                                   */

typedef struct {
    int32_t op, dtype, utype, itype, rank_d, rank_i, rank_u, opset;
    int32_t batch_dims, policy, reduction, no_init, torch_dims;
    int64_t axis;
    /* embedding bags (SPEC 10); 0 for the other ops */
    int32_t weights, has_default, has_padding, last_offset;
    int64_t default_index, padding_idx;
    /* A bag family's table rows: the JIT's bag kernels take a row's width
     * as a constant (with it dynamic the reference kernel serves every
     * call), so a family is one width; the rows E stay dynamic. The table
     * enters the kernel as [E, row_elems] whatever its rank: the bags'
     * arithmetic is elementwise along a row. row_static 0: the table's
     * dims are all dynamic (a table of rank 0 or 1, which has no row dims
     * to fix, or rows whose element count overflows int64). */
    int32_t row_static;
    int64_t row_elems;
    /* GatherND's and ScatterNDUpdate's tuple length (indices' last dim),
     * 0 for the other ops: the nest's depth, which a kernel is compiled
     * for (a family with it dynamic runs every other length on the
     * reference kernel, docs/dynamic.md), so a family is one length, as a
     * model's layer is. tuple_fixed 0: not one of those ops. */
    int32_t tuple_fixed;
    int64_t tuple_len;
} tj_family;

static struct {
    tj_family key;
    tj_kernel *k;
} g_table[TJ_SLOTS];
static int g_families;
static int g_max_families = TJ_MAX_FAMILIES; /* lower only in tests */
static uint64_t g_table_epoch;

static size_t family_hash(const tj_family *f)
{
    const unsigned char *p = (const unsigned char *)f;
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < sizeof *f; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29)) & (TJ_SLOTS - 1);
}

/* Frees a kernel the table let go of, once no call runs it. */
static void kernel_retire(tj_kernel *k, int release)
{
    k->retired = release ? 2 : 1;
    if (k->inflight > 0)
        return; /* the last running call finishes the job (call_run) */
    if (k->retired == 2)
        jit_release((jit_kernel)k->fn);
    PyMem_RawFree(k);
}

/* Drops every family. release: hand the kernels back to the library (a
 * table over its cap); not after a jit_shutdown(), which freed them. */
static void table_clear(int release)
{
    for (int i = 0; i < TJ_SLOTS; i++) {
        if (!g_table[i].k)
            continue;
        kernel_retire(g_table[i].k, release);
        g_table[i].k = NULL;
    }
    g_families = 0;
}

/* A jit_shutdown() anywhere in the process (jit_epoch() moved) freed every
 * kernel: forget them before one of their addresses is reused. */
static void table_check_epoch(void)
{
    uint64_t e = jit_epoch();
    if (e != g_table_epoch) {
        table_clear(0);
        g_table_epoch = e;
    }
}

/* A bag family's own fields; its S (EmbeddingSegmentsSum) is a dim of
 * the call like the others. */
static void bag_family_sig(const tj_family *f, jit_sig *sig)
{
    sig->has_weights = f->weights;
    sig->has_default_index = f->has_default;
    sig->default_index = f->default_index;
    sig->has_padding_idx = f->has_padding;
    sig->padding_idx = f->padding_idx;
    sig->include_last_offset = f->last_offset;
    if (f->op == JIT_OP_EMBEDDING_SEGMENTS)
        sig->num_segments = JIT_DIM_DYNAMIC;
}

static void family_sig(const tj_family *f, jit_sig *sig)
{
    memset(sig, 0, sizeof *sig);
    sig->op = (jit_op)f->op;
    sig->opset = f->opset;
    sig->axis = f->axis;
    sig->batch_dims = f->batch_dims;
    sig->dtype = (jit_dtype)f->dtype;
    sig->updates_dtype = (jit_dtype)f->utype;
    sig->index_type = (jit_dtype)f->itype;
    sig->index_policy = (jit_index_policy)f->policy;
    sig->reduction = (jit_reduction)f->reduction;
    sig->no_init_val = f->no_init;
    sig->torch_dims = f->torch_dims;
    sig->threads = JIT_THREADS_ALL; /* the library splits only calls large enough to gain */
    bag_family_sig(f, sig);
    sig->data_shape.rank = f->rank_d;
    sig->indices_shape.rank = f->rank_i;
    sig->updates_shape.rank = f->rank_u;
    for (int i = 0; i < JIT_MAX_RANK; i++) {
        sig->data_shape.dims[i] = i < f->rank_d ? JIT_DIM_DYNAMIC : 0;
        sig->indices_shape.dims[i] = i < f->rank_i ? JIT_DIM_DYNAMIC : 0;
        sig->updates_shape.dims[i] = i < f->rank_u ? JIT_DIM_DYNAMIC : 0;
    }
    if (f->row_static)
        sig->data_shape.dims[1] = f->row_elems;
    if (f->tuple_fixed)
        sig->indices_shape.dims[f->rank_i - 1] = f->tuple_len;
}

/* The family's kernel, compiled on its first call; dims are that call's
 * (the family's dynamic dims, in jit_dynamic_fn's order). A family the
 * library refuses is refused for the call's own shapes where they break a
 * rule: the library judges a dynamic signature by a probe of its dims (all
 * 5), and its message named shapes the caller never passed. */
static tj_kernel *family_kernel(const tj_family *f, const int64_t *dims)
{
    table_check_epoch();
    size_t h = family_hash(f);
    for (size_t i = h; g_table[i].k; i = (i + 1) & (TJ_SLOTS - 1))
        if (memcmp(&g_table[i].key, f, sizeof *f) == 0)
            return g_table[i].k;
    jit_sig sig, bound;
    family_sig(f, &sig);
    tj_kernel *k = kernel_compile(&sig);
    if (!k) {
        if (PyErr_ExceptionMatches(SignatureError) && jit_sig_bind(&sig, dims, &bound) != 0) {
            PyErr_Clear();
            set_library_error(SignatureError);
        }
        return NULL;
    }
    /* the GIL was dropped during the compile: another thread may have
     * added this family meanwhile (the same pointer: one hold too many) */
    for (size_t i = h; g_table[i].k; i = (i + 1) & (TJ_SLOTS - 1)) {
        if (memcmp(&g_table[i].key, f, sizeof *f) == 0) {
            kernel_retire(k, 1);
            g_compiles--; /* the library's kernel was the other thread's */
            return g_table[i].k;
        }
    }
    if (g_families >= g_max_families)
        table_clear(1); /* bounded memory: start over rather than grow */
    size_t i = h;
    while (g_table[i].k)
        i = (i + 1) & (TJ_SLOTS - 1);
    g_table[i].key = *f;
    g_table[i].k = k;
    g_families++;
    return k;
}

/* ------------------------------------------------------------------ */
/* Arrays                                                             */

typedef struct {
    PyObject *owner;   /* a reference: the ndarray read (maybe a copy) or a DLPack capsule */
    char *ptr;
    int ndim;
    int64_t dims[JIT_MAX_RANK];
    jit_dtype dtype;
    int64_t nbytes;
    int foreign;       /* 1: not numpy's (torch): a result is made by its new_empty() */
} tj_array;

static void array_release(tj_array *a)
{
    Py_CLEAR(a->owner);
}

static jit_dtype dtype_of_numpy(PyArray_Descr *d)
{
    switch (d->type_num) {
    case NPY_BOOL: return JIT_BOOL;
    case NPY_HALF: return JIT_F16;
    case NPY_FLOAT: return JIT_F32;
    case NPY_DOUBLE: return JIT_F64;
    default: break;
    }
    if (PyTypeNum_ISINTEGER(d->type_num)) {
        int u = PyTypeNum_ISUNSIGNED(d->type_num);
        switch (PyDataType_ELSIZE(d)) {
        case 1: return u ? JIT_U8 : JIT_I8;
        case 2: return u ? JIT_U16 : JIT_I16;
        case 4: return u ? JIT_U32 : JIT_I32;
        case 8: return u ? JIT_U64 : JIT_I64;
        default: return JIT_DTYPE_UNSET;
        }
    }
    /* ml_dtypes' bfloat16, a user type of numpy's: known by its name */
    if (PyDataType_ELSIZE(d) == 2 && d->typeobj && strstr(d->typeobj->tp_name, "bfloat16"))
        return JIT_BF16;
    return JIT_DTYPE_UNSET;
}

static jit_dtype dtype_of_dlpack(tj_dl_dtype t)
{
    if (t.lanes != 1)
        return JIT_DTYPE_UNSET;
    switch (t.code) {
    case TJ_DL_INT:
        return t.bits == 8 ? JIT_I8 : t.bits == 16 ? JIT_I16 : t.bits == 32 ? JIT_I32
             : t.bits == 64 ? JIT_I64 : JIT_DTYPE_UNSET;
    case TJ_DL_UINT:
        return t.bits == 8 ? JIT_U8 : t.bits == 16 ? JIT_U16 : t.bits == 32 ? JIT_U32
             : t.bits == 64 ? JIT_U64 : JIT_DTYPE_UNSET;
    case TJ_DL_FLOAT:
        return t.bits == 16 ? JIT_F16 : t.bits == 32 ? JIT_F32 : t.bits == 64 ? JIT_F64
             : JIT_DTYPE_UNSET;
    case TJ_DL_BFLOAT:
        return t.bits == 16 ? JIT_BF16 : JIT_DTYPE_UNSET;
    case TJ_DL_BOOL:
        return t.bits == 8 ? JIT_BOOL : JIT_DTYPE_UNSET;
    default:
        return JIT_DTYPE_UNSET;
    }
}

/* A dtype with no kernel type, in the words of the argument's role: the
 * index arguments take integers only, and numpy's object dtype is most
 * often a list holding a Python int beyond 64 bits, which it names. */
static int unknown_dtype(PyObject *obj, const char *what)
{
    PyObject *dt = PyObject_GetAttrString(obj, "dtype");
    if (!dt)
        PyErr_Clear();
    int index = !strcmp(what, "indices") || !strcmp(what, "offsets") ||
                !strcmp(what, "segment_ids");
    int object = dt && PyArray_DescrCheck(dt) && ((PyArray_Descr *)dt)->type_num == NPY_OBJECT;
    PyErr_Format(TypeMismatch, "tensorjit: %s has dtype %R; it must be %s%s", what,
                 dt ? dt : Py_None,
                 index ? "an integer dtype"
                       : "bool, an integer or a float dtype (f16, bf16, f32, f64)",
                 object ? " (numpy made object, as it does for a Python int beyond 64 bits "
                          "or values of mixed kinds)" : "");
    Py_XDECREF(dt);
    return -1;
}

/* The exception just raised gets value (a fetched, normalized exception,
 * its type and traceback beside it: all three references taken) as its
 * __cause__, as Python's `raise ... from value`. */
static void caused_by(PyObject *type, PyObject *value, PyObject *tb)
{
    PyObject *t2, *v2, *tb2;
    PyErr_Fetch(&t2, &v2, &tb2);
    PyErr_NormalizeException(&t2, &v2, &tb2);
    if (v2 && value)
        PyException_SetCause(v2, value); /* steals value */
    else
        Py_XDECREF(value);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    PyErr_Restore(t2, v2, tb2);
}

/* The exception numpy or torch raised reading argument what (doing says
 * how), as a tensorjit.Error naming it, the original as its cause: a
 * MemoryError (a copy too large to make) or a RuntimeError (torch's
 * allocator) a KernelError, a ValueError (a ragged list) a SignatureError,
 * a TypeError a TypeMismatch (so also an object's own errors of those
 * classes, a RecursionError in its __array__ among them). Another class
 * goes as it is. Returns -1. */
static int reading_error(const char *what, const char *doing)
{
    PyObject *to = PyErr_ExceptionMatches(Error)                ? NULL
                   : PyErr_ExceptionMatches(PyExc_MemoryError) ||
                           PyErr_ExceptionMatches(PyExc_RuntimeError)
                       ? KernelError
                   : PyErr_ExceptionMatches(PyExc_ValueError)  ? SignatureError
                   : PyErr_ExceptionMatches(PyExc_TypeError)   ? TypeMismatch
                                                               : NULL;
    if (!to)
        return -1;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value)
        PyException_SetTraceback(value, tb);
    PyErr_Format(to, "tensorjit: %s %s: %S", what, doing, value ? value : Py_None);
    caused_by(type, value, tb);
    return -1;
}

static int array_from_numpy(PyArrayObject *arr, const char *what, int for_out, tj_array *a)
{
    if (PyArray_NDIM(arr) > JIT_MAX_RANK) {
        PyErr_Format(SignatureError, "tensorjit: %s has rank %d, above the library's maximum "
                     "of %d", what, PyArray_NDIM(arr), JIT_MAX_RANK);
        return -1;
    }
    a->dtype = dtype_of_numpy(PyArray_DESCR(arr));
    if (a->dtype == JIT_DTYPE_UNSET)
        return unknown_dtype((PyObject *)arr, what);
    int ready = PyArray_ISCARRAY_RO(arr) && PyArray_ISNOTSWAPPED(arr);
    if (for_out) {
        if (!ready || !PyArray_ISWRITEABLE(arr)) {
            PyErr_Format(SignatureError, "tensorjit: out must be a C-contiguous, aligned, "
                         "writeable array in native byte order%s",
                         PyArray_ISWRITEABLE(arr) ? "" : " (it is read-only)");
            return -1;
        }
        Py_INCREF(arr);
    } else if (ready) {
        Py_INCREF(arr);
    } else {
        /* strided, reversed, Fortran-ordered, byte-swapped or unaligned: read
         * through one native, C-ordered copy (numpy's values, our layout) */
        PyArray_Descr *native = PyArray_DescrNewByteorder(PyArray_DESCR(arr), NPY_NATIVE);
        if (!native)
            return -1;
        arr = (PyArrayObject *)PyArray_FromArray(arr, native,
                                                 NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
        if (!arr) /* a view of 2**40 elements over one: no memory for its copy */
            return reading_error(what, "is read through a contiguous copy, which failed");
    }
    a->owner = (PyObject *)arr;
    a->ptr = PyArray_BYTES(arr);
    a->ndim = PyArray_NDIM(arr);
    for (int i = 0; i < a->ndim; i++)
        a->dims[i] = PyArray_DIM(arr, i);
    a->nbytes = PyArray_NBYTES(arr);
    a->foreign = 0;
    return 0;
}

static int dl_is_compact(const tj_dl_tensor *t)
{
    if (!t->strides)
        return 1;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0)
            return 1; /* no element: any strides describe it */
    int64_t expect = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != expect)
            return 0;
        expect *= t->shape[i];
    }
    return 1;
}

/* What DLPack cannot carry (torch 1.x refuses bool tensors) may still be
 * read through the producer's own zero-copy numpy view, tensor.numpy(). */
static int array_from_numpy_view(PyObject *obj, const char *what, int for_out, tj_array *a)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *view = PyObject_CallMethod(obj, "numpy", NULL);
    if (!view || !PyArray_Check(view)) {
        Py_XDECREF(view);
        PyErr_Clear();
        /* DLPack's own reason, as a tensorjit.Error */
        PyErr_Format(SignatureError, "tensorjit: %s cannot be read through DLPack: %S", what,
                     value ? value : Py_None);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return -1;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    int r = array_from_numpy((PyArrayObject *)view, what, for_out, a);
    Py_DECREF(view);
    a->foreign = 1;
    return r;
}

static int array_from_dlpack(PyObject *obj, const char *what, int for_out, int retried,
                             tj_array *a);

/* Where a warning about input what is given, from one walk of the frames
 * (asked only where a warning is given, so a call's usual path pays
 * nothing). Returns the stacklevel of the first frame outside the
 * tensorjit package, so that the warning names the user's line, not a
 * line of tensorjit.torch's wrappers (which would make it once per
 * process); frames are told by their module's __name__. *word: what in
 * the words of the wrapper that called the library (a new reference; NULL
 * with an exception set if even what cannot be made): the innermost of
 * the package's frames whose module has a _torch_word(function, word)
 * (tensorjit.torch, whose tables of its functions' argument names are in
 * Python) is asked; else what. */
static Py_ssize_t warning_site(const char *what, PyObject **word)
{
    Py_ssize_t level = 1;
    *word = NULL;
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    Py_XINCREF(f);
    while (f) {
        PyObject *globals = PyObject_GetAttrString((PyObject *)f, "f_globals");
        int dict = globals && PyDict_Check(globals);
        PyObject *name = dict ? PyDict_GetItemString(globals, "__name__") : NULL; /* borrowed */
        const char *module = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        int ours = module && (strcmp(module, "tensorjit") == 0 ||
                              strncmp(module, "tensorjit.", 10) == 0);
        PyObject *ask = ours && dict && !*word ? PyDict_GetItemString(globals, "_torch_word")
                                               : NULL; /* borrowed */
        if (ask) {
            PyCodeObject *code = PyFrame_GetCode(f); /* a new reference */
            PyObject *function = PyObject_GetAttrString((PyObject *)code, "co_name");
            *word = function ? PyObject_CallFunction(ask, "Os", function, what) : NULL;
            Py_XDECREF(function);
            Py_DECREF(code);
            if (*word && !PyUnicode_Check(*word))
                Py_CLEAR(*word);
        }
        Py_XDECREF(globals);
        PyErr_Clear();
        PyFrameObject *back = ours ? PyFrame_GetBack(f) : NULL; /* a new reference */
        Py_DECREF(f);
        f = back;
        level += ours;
    }
    if (!*word)
        *word = PyUnicode_FromString(what);
    return level;
}

static int array_from_torch(PyObject *obj, int for_out, tj_array *a);

/* A tensor that requires grad (a module's weight, an nn.Parameter) read
 * detached: the kernels are forward-only, and DLPack refuses to export
 * it. Tried only after that refusal, so a call's usual path pays nothing.
 * 1 and *a when it was, 0 (no exception) when obj is no such tensor. */
static int array_detached(PyObject *obj, const char *what, int for_out, tj_array *a)
{
    if (for_out) /* torch forbids writing into it in place as well */
        return 0;
    PyObject *grad = PyObject_GetAttrString(obj, "requires_grad");
    int needs = grad ? PyObject_IsTrue(grad) : 0;
    Py_XDECREF(grad);
    PyErr_Clear();
    if (needs != 1)
        return 0;
    /* Said once per calling line (Python's default filter): a model
     * trained through these calls would leave this tensor untrained and
     * nothing else would say so (a user's trial). */
    if (tj_torch_grad_enabled()) {
        PyObject *word;
        Py_ssize_t level = warning_site(what, &word);
        int failed = !word ||
                     PyErr_WarnFormat(PyExc_UserWarning, level, "tensorjit: %U "
                                      "requires grad (a module's "
                                      "weight?) and gets no gradient through this call: "
                                      "tensorjit's kernels are forward-only (call under "
                                      "torch.no_grad() or torch.inference_mode() to say that "
                                      "is meant)", word) != 0;
        Py_XDECREF(word);
        if (failed)
            return -1; /* warnings raised as errors */
    }
    PyObject *plain = PyObject_CallMethod(obj, "detach", NULL);
    if (!plain) {
        PyErr_Clear();
        return 0;
    }
    /* detach() keeps torch's negative bit, which a DLPack export hands out
     * unresolved (the negated values read as they lie): the attribute path
     * reads such a tensor through resolve_neg() */
    int r = array_from_torch(plain, 0, a);
    if (r == 0)
        r = array_from_dlpack(plain, what, 0, 0, a) == 0 ? 1 : -1;
    Py_DECREF(plain);
    return r;
}

static int array_from_dlpack(PyObject *obj, const char *what, int for_out, int retried,
                             tj_array *a)
{
    PyObject *cap = PyObject_CallMethod(obj, "__dlpack__", NULL);
    if (!cap) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        int d = array_detached(obj, what, for_out, a);
        if (d != 0) {
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            return d > 0 ? 0 : -1;
        }
        PyErr_Restore(type, value, tb);
        return array_from_numpy_view(obj, what, for_out, a);
    }
    tj_dl_managed *m = PyCapsule_GetPointer(cap, "dltensor");
    if (!m) {
        Py_DECREF(cap);
        return -1;
    }
    const tj_dl_tensor *t = &m->dl_tensor;
    int cpu = t->device.device_type == TJ_DL_CPU || t->device.device_type == TJ_DL_CUDA_HOST ||
              t->device.device_type == TJ_DL_CPU_SHARED;
    if (!cpu || t->ndim > JIT_MAX_RANK) {
        if (!cpu)
            PyErr_Format(SignatureError, "tensorjit: %s is not in CPU memory (DLPack device "
                         "type %d)", what, (int)t->device.device_type);
        else
            PyErr_Format(SignatureError, "tensorjit: %s has a rank above the library's "
                         "maximum", what);
        Py_DECREF(cap);
        return -1;
    }
    a->dtype = dtype_of_dlpack(t->dtype);
    if (a->dtype == JIT_DTYPE_UNSET) {
        Py_DECREF(cap);
        return unknown_dtype(obj, what);
    }
    if (!dl_is_compact(t)) {
        Py_DECREF(cap);
        if (for_out || retried) {
            PyErr_Format(SignatureError, "tensorjit: %s must be contiguous (row-major)", what);
            return -1;
        }
        /* torch's view: read it through a contiguous copy, as numpy's are */
        PyObject *dense = PyObject_CallMethod(obj, "contiguous", NULL);
        if (!dense && PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            PyErr_Format(SignatureError, "tensorjit: %s is not contiguous and has no "
                         ".contiguous() to make it so", what);
            return -1;
        }
        if (!dense) /* torch's allocator: an expanded view too large to copy */
            return reading_error(what, "is read through .contiguous(), which failed");
        int r = array_from_dlpack(dense, what, 0, 1, a);
        Py_DECREF(dense);
        return r;
    }
    char *at = (char *)t->data + t->byte_offset;
    if ((uintptr_t)at % (uintptr_t)jit_dtype_size(a->dtype) != 0) {
        /* a view at a byte offset (torch.frombuffer(..., offset=1)): the
         * reference kernel reads typed elements, as numpy's unaligned
         * arrays are read, through an aligned copy */
        Py_DECREF(cap);
        if (for_out || retried) {
            PyErr_Format(SignatureError, "tensorjit: %s is not aligned to its element size "
                         "(%d bytes)", what, jit_dtype_size(a->dtype));
            return -1;
        }
        PyObject *copy = PyObject_CallMethod(obj, "clone", NULL);
        if (!copy) {
            PyErr_Clear();
            PyErr_Format(SignatureError, "tensorjit: %s is not aligned to its element size "
                         "and has no .clone() to copy it", what);
            return -1;
        }
        int r = array_from_dlpack(copy, what, 0, 1, a);
        Py_DECREF(copy);
        return r;
    }
    a->owner = cap; /* the producer's tensor lives while its capsule does */
    a->ptr = at;
    a->ndim = t->ndim;
    int64_t n = 1;
    for (int i = 0; i < a->ndim; i++) {
        a->dims[i] = t->shape[i];
        n *= t->shape[i];
    }
    a->nbytes = n * jit_dtype_size(a->dtype);
    a->foreign = 1;
    return 0;
}

/* A plain torch tensor, read through its attributes: 1 when it was. */
static int array_from_torch(PyObject *obj, int for_out, tj_array *a)
{
    tj_torch_view v;
    int r = tj_torch_view_of(obj, for_out, &v);
    if (r == TJ_TORCH_NEG_OUT)
        PyErr_SetString(SignatureError, "tensorjit: out has torch's negative bit (a view that "
                        "negates its memory): pass a tensor of its own memory");
    if (r <= 0)
        return r < 0 ? -1 : 0;
    if ((uintptr_t)v.ptr % (uintptr_t)jit_dtype_size(v.dtype) != 0) {
        Py_DECREF(v.owner); /* unaligned: the DLPack path copies it or refuses an out */
        return 0;
    }
    a->owner = v.owner;
    a->ptr = v.ptr;
    a->ndim = v.ndim;
    a->dtype = v.dtype;
    int64_t n = 1;
    for (int i = 0; i < v.ndim; i++) {
        a->dims[i] = v.dims[i];
        n *= v.dims[i];
    }
    a->nbytes = n * jit_dtype_size(v.dtype);
    a->foreign = 1;
    return 1;
}

/* obj as an array the kernel can read (or, for_out, write in place). */
static int array_get(PyObject *obj, const char *what, int for_out, tj_array *a)
{
    a->owner = NULL;
    if (PyArray_Check(obj))
        return array_from_numpy((PyArrayObject *)obj, what, for_out, a);
    int torch = array_from_torch(obj, for_out, a);
    if (torch != 0)
        return torch < 0 ? -1 : 0;
    PyObject *dl = NULL;
    if (!PyArray_IsAnyScalar(obj) && !PyList_Check(obj) && !PyTuple_Check(obj)) {
        dl = PyObject_GetAttrString(obj, "__dlpack__");
        if (!dl)
            PyErr_Clear();
    }
    if (dl) {
        Py_DECREF(dl);
        return array_from_dlpack(obj, what, for_out, 0, a);
    }
    if (for_out) {
        PyErr_Format(SignatureError, "tensorjit: out must be a numpy array or a DLPack "
                     "tensor (torch), not %s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    /* lists, scalars, anything the buffer protocol describes: numpy's view */
    PyArrayObject *arr = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
    if (!arr) /* a ragged list: numpy's ValueError */
        return reading_error(what, "is no array numpy can make");
    int r = array_from_numpy(arr, what, 0, a);
    Py_DECREF(arr);
    return r;
}

static int is_index_dtype(jit_dtype t)
{
    switch (t) {
    case JIT_I8: case JIT_U8: case JIT_I16: case JIT_U16:
    case JIT_I32: case JIT_U32: case JIT_I64: case JIT_U64:
        return 1;
    default:
        return 0;
    }
}

static int overlaps(const tj_array *a, const tj_array *b)
{
    return a->nbytes > 0 && b->nbytes > 0 && a->ptr < b->ptr + b->nbytes &&
           b->ptr < a->ptr + a->nbytes;
}

/* ------------------------------------------------------------------ */
/* One call: arrays in, the kernel run, the result out                */

typedef struct {
    jit_op op;
    int has_updates;
    int64_t axis;
    int batch_dims, opset;
    jit_index_policy policy;
    jit_reduction reduction;
    int no_init;
    int torch_dims;    /* torch's index dims (jit_sig.torch_dims) */
} tj_attrs;

/* A call's inputs, as out= is checked against them and the result is made:
 * data, indices, updates; or an embedding bag's given ones (table first). */
typedef struct {
    tj_array in[4];
    const char *const *names;
    int n_in;
    PyObject *data_obj;
} tj_call;

static const char *const INPUT_NAMES[3] = {"data", "indices", "updates"};

static void call_release(tj_call *c)
{
    for (int i = 0; i < c->n_in; i++)
        array_release(&c->in[i]);
    c->n_in = 0;
}

static int call_inputs(tj_call *c, PyObject *data, PyObject *indices, PyObject *updates,
                       int has_updates)
{
    PyObject *objs[3] = {data, indices, updates};
    c->n_in = 0;
    c->names = INPUT_NAMES;
    c->data_obj = data;
    int n = has_updates ? 3 : 2;
    for (int i = 0; i < n; i++) {
        if (!objs[i] || objs[i] == Py_None) {
            PyErr_Format(SignatureError, "tensorjit: this op takes %s", INPUT_NAMES[i]);
            return -1;
        }
        if (array_get(objs[i], INPUT_NAMES[i], 0, &c->in[i]) != 0)
            return -1;
        c->n_in++;
    }
    if (!is_index_dtype(c->in[1].dtype)) {
        PyErr_Format(TypeMismatch, "tensorjit: indices has dtype %s; it must be an integer "
                     "dtype", jit_dtype_name(c->in[1].dtype));
        return -1;
    }
    return 0;
}

/* The op's index types (OpenVINO's: GatherElements and ScatterNDUpdate
 * take i32 and i64 only): another is a dtype the op has no kernel for,
 * TypeMismatch as the README says, not an invalid shape. */
static int check_index_type(jit_op op, jit_dtype t)
{
    jit_op_info info;
    if (jit_op_describe(op, &info) != 0 || (info.index_types >> t) & 1u)
        return 0;
    char takes[128] = "";
    size_t n = 0;
    for (int d = 0; d < 32 && n < sizeof takes; d++)
        if ((info.index_types >> d) & 1u)
            n += (size_t)snprintf(takes + n, sizeof takes - n, "%s%s", n ? ", " : "",
                                  jit_dtype_name((jit_dtype)d));
    PyErr_Format(TypeMismatch, "tensorjit: indices has dtype %s; %s takes %s indices (cast "
                 "them, e.g. indices.astype(numpy.int64))", jit_dtype_name(t), info.name, takes);
    return -1;
}

static int call_dims(const tj_call *c, int64_t *dims);

static tj_kernel *call_family_kernel(const tj_call *c, const tj_attrs *at)
{
    tj_family f;
    memset(&f, 0, sizeof f); /* every byte is hashed, padding included */
    f.op = at->op;
    f.dtype = c->in[0].dtype;
    f.itype = c->in[1].dtype;
    f.rank_d = c->in[0].ndim;
    f.rank_i = c->in[1].ndim;
    if (at->has_updates) {
        f.utype = c->in[2].dtype;
        f.rank_u = c->in[2].ndim;
    }
    f.opset = at->opset;
    /* one family for axis -1 and axis r-1 (the library checks the range) */
    f.axis = at->axis < 0 && at->axis >= -f.rank_d ? at->axis + f.rank_d : at->axis;
    f.batch_dims = at->batch_dims;
    if (at->op == JIT_OP_GATHER && at->batch_dims < 0 && at->batch_dims >= -f.rank_i)
        f.batch_dims = at->batch_dims + f.rank_i;
    f.policy = at->policy;
    f.reduction = at->reduction;
    f.no_init = at->no_init;
    f.torch_dims = at->torch_dims;
    if ((at->op == JIT_OP_GATHER_ND || at->op == JIT_OP_SCATTER_ND_UPDATE) && f.rank_i > 0) {
        f.tuple_fixed = 1;
        f.tuple_len = c->in[1].dims[f.rank_i - 1];
    }
    int64_t dims[TJ_MAX_DIMS];
    call_dims(c, dims);
    return family_kernel(&f, dims);
}

static int call_dims(const tj_call *c, int64_t *dims)
{
    int n = 0;
    for (int i = 0; i < c->n_in; i++)
        for (int d = 0; d < c->in[i].ndim; d++)
            dims[n++] = c->in[i].dims[d];
    return n;
}

static PyObject *shape_tuple(const jit_shape *s)
{
    PyObject *t = PyTuple_New(s->rank);
    if (!t)
        return NULL;
    for (int i = 0; i < s->rank; i++) {
        PyObject *v = PyLong_FromLongLong(s->dims[i]);
        if (!v) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

/* Interned at import: a name made per call cost about 0.1 us of a
 * result's 1.2 (docs/performance.md, 'Python'). */
static PyObject *g_new_empty, *g_data_ptr;

/* A new result of data's kind: an ndarray for numpy data, data.new_empty()
 * for a DLPack producer that has it (torch). */
static PyObject *new_result(const tj_call *c, const jit_shape *shape)
{
    const tj_array *data = &c->in[0];
    if (!data->foreign) {
        npy_intp dims[JIT_MAX_RANK];
        for (int i = 0; i < shape->rank; i++)
            dims[i] = (npy_intp)shape->dims[i];
        PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)data->owner);
        Py_INCREF(d);
        return PyArray_NewFromDescr(&PyArray_Type, d, shape->rank, dims, NULL, NULL, 0, NULL);
    }
    PyObject *t = shape_tuple(shape);
    if (!t)
        return NULL;
    PyObject *args[2] = {c->data_obj, t};
    PyObject *r = PyObject_VectorcallMethod(g_new_empty, args, 2, NULL);
    Py_DECREF(t);
    if (!r && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        PyErr_Format(SignatureError, "tensorjit: data (%s) has no new_empty() to make the "
                     "result with: pass out=", Py_TYPE(c->data_obj)->tp_name);
    }
    return r;
}

/* numpy's MemoryError, or torch's RuntimeError from its allocator, for a
 * result too large to make: a tensorjit.Error (KernelError) naming the
 * result's shape and size, the allocator's as its cause. */
static PyObject *new_result_or_error(const tj_call *c, const jit_shape *shape)
{
    PyObject *r = new_result(c, shape);
    if (r || !(PyErr_ExceptionMatches(PyExc_MemoryError) ||
               PyErr_ExceptionMatches(PyExc_ValueError) || /* numpy: "array is too big" */
               (c->in[0].foreign && PyErr_ExceptionMatches(PyExc_RuntimeError))))
        return r;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    const char *said = text ? PyUnicode_AsUTF8(text) : NULL;
    /* torch says "can't allocate memory"; another RuntimeError or
     * ValueError is not about the size, and goes as it is */
    int about_size = PyErr_GivenExceptionMatches(type, PyExc_MemoryError) ||
                     (said && (strstr(said, "alloc") || strstr(said, "too big")));
    Py_XDECREF(text);
    PyErr_Clear();
    if (!about_size) {
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    char dims[512];
    int at = snprintf(dims, sizeof dims, "(");
    double bytes = jit_dtype_size(c->in[0].dtype);
    for (int i = 0; i < shape->rank; i++) {
        if (at < (int)sizeof dims - 32)
            at += snprintf(dims + at, sizeof dims - (size_t)at, "%s%lld", i ? ", " : "",
                           (long long)shape->dims[i]);
        bytes *= (double)shape->dims[i];
    }
    snprintf(dims + at, sizeof dims - (size_t)at, "%s)", shape->rank == 1 ? "," : "");
    char size[32]; /* PyErr_Format has no %g */
    snprintf(size, sizeof size, "%.4g", bytes);
    PyErr_Format(KernelError, "tensorjit: no memory for the result: shape %s of %s, %s bytes "
                 "(%S)", dims, jit_dtype_name(c->in[0].dtype), size, value ? value : Py_None);
    caused_by(type, value, tb);
    return NULL;
}

static int check_out(const tj_call *c, const tj_array *out, const jit_shape *shape,
                     int in_place_ok);

/* The result new_result made, as an array: a numpy array, or torch's own
 * new_empty of a torch.Tensor, is of data's dtype and the output's shape,
 * dense, by construction, and such a tensor's address comes from
 * data_ptr(), a tenth of a DLPack export's cost; any other result is
 * checked as an out= is. */
static int result_array(PyObject *result, const tj_call *c, const jit_shape *shape,
                        tj_array *a)
{
    if (PyArray_Check(result) || !c->in[0].foreign)
        return array_get(result, "out", 1, a);
    if (!tj_torch_own_new_empty(c->data_obj) || !tj_torch_plain(result)) {
        /* not torch's own new_empty of a torch.Tensor (a subclass's own,
         * another DLPack producer's): read as an out= is, and held to the
         * output's dtype and shape, apart from every input, before
         * anything is written */
        if (array_get(result, "out", 1, a) != 0)
            return -1;
        if (check_out(c, a, shape, 0) != 0) {
            array_release(a);
            return -1;
        }
        return 0;
    }
    PyObject *p = PyObject_CallMethodNoArgs(result, g_data_ptr);
    if (!p) {
        PyErr_Clear();
        return array_get(result, "out", 1, a); /* no data_ptr(): DLPack */
    }
    void *ptr = PyLong_AsVoidPtr(p);
    Py_DECREF(p);
    if (!ptr && PyErr_Occurred())
        return -1;
    a->owner = NULL; /* the caller holds result */
    a->ptr = ptr;
    a->ndim = shape->rank;
    a->dtype = c->in[0].dtype;
    a->nbytes = jit_dtype_size(a->dtype);
    for (int i = 0; i < shape->rank; i++) {
        a->dims[i] = shape->dims[i];
        a->nbytes *= shape->dims[i];
    }
    a->foreign = 1;
    return 0;
}

static int check_out(const tj_call *c, const tj_array *out, const jit_shape *shape,
                     int in_place_ok)
{
    if (out->dtype != c->in[0].dtype) {
        PyErr_Format(SignatureError, "tensorjit: out has dtype %s; the output's is %s",
                     jit_dtype_name(out->dtype), jit_dtype_name(c->in[0].dtype));
        return -1;
    }
    int same = out->ndim == shape->rank;
    for (int i = 0; same && i < shape->rank; i++)
        same = out->dims[i] == shape->dims[i];
    if (!same) {
        jit_shape has = {.rank = out->ndim};
        memcpy(has.dims, out->dims, (size_t)out->ndim * sizeof *out->dims);
        PyObject *got = shape_tuple(&has), *want = got ? shape_tuple(shape) : NULL;
        if (want)
            PyErr_Format(SignatureError, "tensorjit: out has shape %R; the output's is %R", got,
                         want);
        Py_XDECREF(got);
        Py_XDECREF(want);
        return -1;
    }
    for (int i = 0; i < c->n_in; i++) {
        if (i == 0 && in_place_ok && out->ptr == c->in[0].ptr)
            continue; /* a scatter in place: out is data's very buffer */
        if (overlaps(out, &c->in[i])) {
            /* tensorjit/numpy.py reads an operand through a copy on this
             * message's first words, as numpy reads it: keep them */
            PyErr_Format(SignatureError, "tensorjit: out overlaps %s%s", c->names[i],
                         in_place_ok ? " (only out=data, the whole array, runs in place)" : "");
            return -1;
        }
    }
    return 0;
}

static int raise_status(int status)
{
    switch (status) {
    case JIT_OK:
        return 0;
    case JIT_STATUS_BAD_INDEX:
        set_library_error(IndexOutOfRange);
        return -1;
    case JIT_STATUS_BAD_SHAPE:
        set_library_error(SignatureError);
        return -1;
    default:
        PyErr_Format(KernelError, "tensorjit: the kernel returned status %d: %s", status,
                     jit_last_error());
        return -1;
    }
}

/* torch.jit.trace records the torch ops a call makes: of a kernel's it
 * sees only the result's new_empty, and the traced module would return
 * that memory unwritten (a user's trial). Asked where an input is not
 * numpy's, so numpy calls pay nothing. */
static int refuse_traced(const tj_call *c)
{
    int foreign = 0;
    for (int i = 0; i < c->n_in; i++)
        foreign |= c->in[i].foreign;
    if (!foreign || !tj_torch_tracing())
        return 0;
    PyErr_SetString(KernelError, "tensorjit: torch.jit.trace cannot record a tensorjit "
                    "kernel: the trace would hold the result's allocation and not the "
                    "kernel's writes, and return that memory unwritten; call tensorjit "
                    "outside the traced function");
    return -1;
}

/* The result: out_obj checked against c, or a new one of data's kind;
 * *out its array. */
static PyObject *family_result(const tj_call *c, PyObject *out_obj, const jit_shape *shape,
                               int in_place_ok, tj_array *out)
{
    PyObject *result;
    if (refuse_traced(c) != 0)
        return NULL;
    if (out_obj && out_obj != Py_None) {
        result = out_obj;
        Py_INCREF(result);
        if (array_get(result, "out", 1, out) != 0 ||
            check_out(c, out, shape, in_place_ok) != 0) {
            array_release(out);
            Py_DECREF(result);
            return NULL;
        }
        return result;
    }
    result = new_result_or_error(c, shape);
    if (!result || result_array(result, c, shape, out) != 0) {
        Py_XDECREF(result);
        return NULL;
    }
    return result;
}

static int kernel_invoke(const tj_kernel *k, const void *const *in, void *out,
                         const int64_t *dims)
{
    if (k->bag)
        return ((jit_embedding_bag_dynamic_fn)(jit_kernel)k->fn)(in[0], in[1], in[2], in[3],
                                                                 out, dims);
    return k->fn(in[0], in[1], in[2], out, dims);
}

/* k on in (its inputs, in its order), without the GIL where the call
 * moves enough bytes to be worth it (the caller holds k: kernel_hold). */
static int kernel_run(tj_kernel *k, const void *const *in, void *out, const int64_t *dims,
                      int64_t moved)
{
    if (moved < TJ_GIL_FREE_BYTES)
        return kernel_invoke(k, in, out, dims);
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = kernel_invoke(k, in, out, dims);
    Py_END_ALLOW_THREADS
    return status;
}

/* k held from before a call makes its result until the call is done: the
 * result's making runs Python (out's __dlpack__, torch's new_empty, which
 * may call tensorjit.shutdown() or start a family past the cap) and the
 * kernel may run without the GIL, while another thread's call may clear
 * the table. A table letting go of k meanwhile leaves it to the last
 * call's release (kernel_retire). */
static void kernel_hold(tj_kernel *k)
{
    k->inflight++;
    g_running++;
}

static void kernel_unhold(tj_kernel *k)
{
    g_running--;
    if (--k->inflight == 0 && k->retired)
        kernel_retire(k, k->retired == 2);
}

/* A family call's last steps, an op's or a bag's: dims bound to the
 * output's shape, the result made, k run on ptrs (moved: the bytes read
 * besides out's), the status raised. */
static PyObject *family_run_shaped(const tj_call *c, tj_kernel *k, const jit_shape *shape,
                                   const int64_t *dims, const void *const *ptrs, int64_t moved,
                                   PyObject *out_obj, int in_place_ok)
{
    tj_array out;
    kernel_hold(k);
    PyObject *result = family_result(c, out_obj, shape, in_place_ok, &out);
    if (result && jit_epoch() != k->epoch) {
        /* a jit_shutdown() behind the module's back while the result was
         * made (another user of the library): k's code is gone */
        array_release(&out);
        Py_CLEAR(result);
        PyErr_SetString(KernelError, "tensorjit: the library was shut down during the call "
                        "(jit_shutdown()): call again");
    }
    int status = JIT_OK;
    if (result) {
        status = kernel_run(k, ptrs, out.ptr, dims, out.nbytes + moved);
        array_release(&out);
    }
    kernel_unhold(k);
    if (!result)
        return NULL;
    if (raise_status(status) != 0) {
        Py_DECREF(result);
        return NULL;
    }
    if (out_obj && out_obj != Py_None)
        tj_torch_wrote(out_obj); /* written in place: torch's version counter moves */
    return result;
}

static PyObject *family_run(const tj_call *c, tj_kernel *k, const int64_t *dims, int n,
                            const void *const *ptrs, int64_t moved, PyObject *out_obj,
                            int in_place_ok)
{
    jit_shape shape;
    if (kernel_bind(k, dims, n, 0, &shape) != 0)
        return NULL;
    return family_run_shaped(c, k, &shape, dims, ptrs, moved, out_obj, in_place_ok);
}

static PyObject *call_run(tj_call *c, tj_kernel *k, PyObject *out_obj, int in_place_ok)
{
    int64_t dims[TJ_MAX_DIMS];
    int n = call_dims(c, dims);
    const void *ptrs[4] = {c->in[0].ptr, c->in[1].ptr, c->n_in > 2 ? c->in[2].ptr : NULL, NULL};
    return family_run(c, k, dims, n, ptrs, c->n_in > 2 ? c->in[2].nbytes : 0, out_obj,
                      in_place_ok);
}

/* What serves k, or with dims (a call's, bound) what serves that call: a
 * dynamic JIT kernel runs a shape that does not fit its code on the
 * reference kernel (jit_dynamic_engine). */
static PyObject *kernel_info_dict(tj_kernel *k, const jit_shape *shape, jit_dtype dtype,
                                  const int64_t *dims)
{
    jit_kernel_info info;
    char why[512];
    if (jit_info((jit_kernel)k->fn, &info) != 0) {
        set_library_error(KernelError);
        return NULL;
    }
    if (dims && info.dynamic) {
        if (jit_dynamic_engine((jit_kernel)k->fn, dims, &info.engine, why, sizeof why) != 0) {
            set_library_error(SignatureError);
            return NULL;
        }
        info.why = why;
    }
    int64_t out_bytes = -1;
    if (shape) {
        out_bytes = jit_dtype_size(dtype);
        for (int i = 0; i < shape->rank; i++)
            out_bytes *= shape->dims[i];
    }
    return Py_BuildValue("{s:s,s:s,s:d,s:n,s:L,s:O,s:O}",
                         "engine", jit_engine_name(info.engine),
                         "why", info.why ? info.why : "",
                         "compile_ms", info.compile_ms,
                         "code_bytes", (Py_ssize_t)info.code_bytes,
                         "out_bytes", (long long)out_bytes,
                         "cache_hit", info.cache_hit ? Py_True : Py_False,
                         "dynamic", info.dynamic ? Py_True : Py_False);
}

/* ------------------------------------------------------------------ */
/* Arguments                                                          */

enum role { R_DATA, R_INDICES, R_UPDATES, R_AXIS, R_BATCH, R_OPSET, R_POLICY, R_REDUCTION,
            R_INIT, R_TORCH_DIMS, R_OUT, R_WEIGHTS, R_DEFAULT, R_LAST, R_PADDING, R_SEGMENTS,
            R_FROM_ZERO, R_ROLES };

typedef struct {
    const char *name;
    jit_op op;
    int info;              /* 1: the *_info call (what serves it), no out */
    int max_pos;           /* parameters that may be positional */
    int required;          /* the first `required` must be given */
    int nparams;
    const char *params[13];
    enum role roles[13];
    int opset;             /* default; -1: ScatterNDUpdate's (3 for none, else 15) */
    jit_index_policy policy;
} tj_fn;

/* A function of no arguments given some: a TypeMismatch, as every other
 * wrong count of arguments (METH_NOARGS's is a bare TypeError). */
static int no_args(const char *name, PyObject *args, PyObject *kw)
{
    Py_ssize_t n = (args ? PyTuple_GET_SIZE(args) : 0) + (kw ? PyDict_GET_SIZE(kw) : 0);
    if (n == 0)
        return 0;
    PyErr_Format(TypeMismatch, "tensorjit: %s() takes no arguments (%zd given)", name, n);
    return -1;
}

/* The error Python's own argument parsing left (PyArg_Parse*: a wrong
 * count or keyword, a value of the wrong type as TypeError; a number out
 * of range as OverflowError; a path with a NUL as ValueError) raised again
 * as the package's, so that every error it raises is a tensorjit.Error
 * (SPEC 8): TypeMismatch, else SignatureError, with Python's words after
 * the call's name (which Python's words for a wrong value leave out).
 * Returns NULL for the caller to return. */
static PyObject *as_package_error(const char *call)
{
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(Error))
        return NULL;
    PyObject *to = PyErr_ExceptionMatches(PyExc_TypeError)     ? TypeMismatch
                   : PyErr_ExceptionMatches(PyExc_OverflowError) ||
                           PyErr_ExceptionMatches(PyExc_ValueError)
                       ? SignatureError
                       : NULL;
    if (!to)
        return NULL;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *said = PyObject_Str(value);
    const char *text = said ? PyUnicode_AsUTF8(said) : NULL;
    if (text && strncmp(text, call, strlen(call)) == 0 && text[strlen(call)] == '(')
        PyErr_Format(to, "tensorjit: %s", text);
    else if (text)
        PyErr_Format(to, "tensorjit: %s(): %s", call, text);
    else
        PyErr_Clear(); /* keep the original below */
    Py_XDECREF(said);
    if (!text) {
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return NULL;
}

/* Fills slot[role] from positional and keyword arguments (NULL: not given). */
static int parse_args(const tj_fn *fn, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, PyObject **slot)
{
    for (int r = 0; r < R_ROLES; r++)
        slot[r] = NULL;
    if (nargs > fn->max_pos) {
        PyErr_Format(TypeMismatch,
                     "tensorjit: %s() takes at most %d positional arguments (%zd given)",
                     fn->name, fn->max_pos, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        slot[fn->roles[i]] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, j);
        int p = 0;
        while (p < fn->nparams && PyUnicode_CompareWithASCIIString(name, fn->params[p]) != 0)
            p++;
        if (p == fn->nparams) {
            PyErr_Format(TypeMismatch, "tensorjit: %s() got an unexpected keyword argument '%U'",
                         fn->name, name);
            return -1;
        }
        if (slot[fn->roles[p]]) {
            PyErr_Format(TypeMismatch, "tensorjit: %s() got multiple values for argument '%s'",
                         fn->name, fn->params[p]);
            return -1;
        }
        slot[fn->roles[p]] = args[nargs + j];
    }
    for (int p = 0; p < fn->required; p++) {
        if (!slot[fn->roles[p]]) {
            PyErr_Format(TypeMismatch, "tensorjit: %s() missing required argument '%s'", fn->name,
                         fn->params[p]);
            return -1;
        }
    }
    return 0;
}

static int int_arg(PyObject *o, const char *what, int64_t lo, int64_t hi, int64_t dflt,
                   int64_t *v)
{
    if (!o || o == Py_None) {
        *v = dflt;
        return 0;
    }
    PyObject *i = PyNumber_Index(o);
    if (!i) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) { /* name the argument, as torch does */
            PyErr_Clear();
            PyErr_Format(TypeMismatch, "tensorjit: %s must be an integer, not %s (%R)", what,
                         Py_TYPE(o)->tp_name, o);
        }
        return -1;
    }
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (overflow || x < lo || x > hi) {
        PyErr_Format(SignatureError, "tensorjit: %s = %S does not fit the signature's int%d",
                     what, o, hi > INT32_MAX ? 64 : 32);
        return -1;
    }
    *v = x;
    return 0;
}

/* o's text as UTF-8 when o is a str that is a name: NULL, no exception
 * set, for another type, a str that UTF-8 cannot hold (a lone surrogate)
 * or one holding a NUL (C's string would end there: "error\0x" would be
 * read as "error"). */
static const char *name_utf8(PyObject *o)
{
    Py_ssize_t len;
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, &len) : NULL;
    if (!s || strlen(s) != (size_t)len) {
        PyErr_Clear();
        return NULL;
    }
    return s;
}

static int policy_arg(PyObject *o, jit_index_policy dflt, jit_index_policy *out)
{
    if (!o) {
        *out = dflt;
        return 0;
    }
    if (!PyUnicode_Check(o)) {
        PyErr_Format(TypeMismatch, "tensorjit: index_policy must be a string, not %s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    const char *s = name_utf8(o);
    if (!s || jit_index_policy_from_name(s, out) != 0) {
        PyErr_Format(SignatureError, "tensorjit: unknown index_policy %R (error, "
                     "negative-wraps, clamp, zero-fill, negative-wraps-zero-fill)", o);
        return -1;
    }
    return 0;
}

static int reduction_arg(PyObject *o, jit_reduction *out)
{
    if (!o) {
        *out = JIT_REDUCTION_NONE;
        return 0;
    }
    const char *s = name_utf8(o);
    if (!s || jit_reduction_from_name(s, out) != 0) {
        PyErr_Clear();
        PyErr_Format(SignatureError, "tensorjit: unknown reduction %R (none, sum, sub, prod, "
                     "min, max, mean; add, mul)", o);
        return -1;
    }
    return 0;
}

/* A flag: any Python object's truth; *out left as it was when not given. */
static int truth_arg(PyObject *o, int *out)
{
    if (!o)
        return 0;
    int truth = PyObject_IsTrue(o);
    if (truth < 0)
        return -1;
    *out = truth;
    return 0;
}

static int attrs_from(const tj_fn *fn, PyObject **slot, tj_attrs *at)
{
    int64_t axis, batch, opset;
    memset(at, 0, sizeof *at);
    at->op = fn->op;
    at->has_updates = fn->op == JIT_OP_SCATTER_UPDATE || fn->op == JIT_OP_SCATTER_ND_UPDATE ||
                      fn->op == JIT_OP_SCATTER_ELEMENTS_UPDATE;
    if (reduction_arg(slot[R_REDUCTION], &at->reduction) != 0)
        return -1;
    int opset_default = fn->opset >= 0 ? fn->opset
                      : at->reduction == JIT_REDUCTION_NONE ? 3 : 15;
    if (int_arg(slot[R_AXIS], "axis", INT64_MIN, INT64_MAX, 0, &axis) != 0 ||
        int_arg(slot[R_BATCH], "batch_dims", INT32_MIN, INT32_MAX, 0, &batch) != 0 ||
        int_arg(slot[R_OPSET], "opset", INT32_MIN, INT32_MAX, opset_default, &opset) != 0 ||
        policy_arg(slot[R_POLICY], fn->policy, &at->policy) != 0)
        return -1;
    at->axis = axis;
    at->batch_dims = (int)batch;
    at->opset = (int)opset;
    int init = 1;
    if (truth_arg(slot[R_INIT], &init) != 0 || truth_arg(slot[R_TORCH_DIMS], &at->torch_dims) != 0)
        return -1;
    at->no_init = !init;
    return 0;
}

static PyObject *op_entry(const tj_fn *fn, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    PyObject *slot[R_ROLES];
    tj_attrs at;
    if (parse_args(fn, args, nargs, kwnames, slot) != 0 || attrs_from(fn, slot, &at) != 0)
        return NULL;
    tj_call c;
    PyObject *result = NULL;
    if (call_inputs(&c, slot[R_DATA], slot[R_INDICES], slot[R_UPDATES], at.has_updates) != 0 ||
        check_index_type((jit_op)at.op, c.in[1].dtype) != 0)
        goto done;
    tj_kernel *k = call_family_kernel(&c, &at);
    if (!k)
        goto done;
    if (fn->info) {
        int64_t dims[TJ_MAX_DIMS];
        jit_shape shape;
        if (kernel_bind(k, dims, call_dims(&c, dims), 1, &shape) == 0)
            result = kernel_info_dict(k, &shape, c.in[0].dtype, dims);
    } else {
        result = call_run(&c, k, slot[R_OUT], at.has_updates);
    }
done:
    call_release(&c);
    return result;
}

/* py_CNAME, the vectorcall of the function described by the rest, which
 * entry (op_entry or bag_entry) serves. */
#define ENTRY_FN(entry, cname, ...)                                                      \
    static const tj_fn cname##_desc = {__VA_ARGS__};                                     \
    static PyObject *py_##cname(PyObject *self, PyObject *const *args, Py_ssize_t nargs, \
                                PyObject *kwnames)                                       \
    {                                                                                    \
        (void)self;                                                                      \
        return entry(&cname##_desc, args, nargs, kwnames);                               \
    }
#define FN(cname, ...) ENTRY_FN(op_entry, cname, __VA_ARGS__)

FN(gather_nd, "gather_nd", JIT_OP_GATHER_ND, 0, 3, 2, 6,
   {"data", "indices", "batch_dims", "opset", "index_policy", "out"},
   {R_DATA, R_INDICES, R_BATCH, R_OPSET, R_POLICY, R_OUT}, 8, JIT_INDEX_ERROR)
FN(gather_nd_info, "gather_nd_info", JIT_OP_GATHER_ND, 1, 3, 2, 5,
   {"data", "indices", "batch_dims", "opset", "index_policy"},
   {R_DATA, R_INDICES, R_BATCH, R_OPSET, R_POLICY}, 8, JIT_INDEX_ERROR)
FN(gather, "gather", JIT_OP_GATHER, 0, 4, 2, 7,
   {"data", "indices", "axis", "batch_dims", "opset", "index_policy", "out"},
   {R_DATA, R_INDICES, R_AXIS, R_BATCH, R_OPSET, R_POLICY, R_OUT}, 8, JIT_INDEX_ERROR)
FN(gather_info, "gather_info", JIT_OP_GATHER, 1, 4, 2, 6,
   {"data", "indices", "axis", "batch_dims", "opset", "index_policy"},
   {R_DATA, R_INDICES, R_AXIS, R_BATCH, R_OPSET, R_POLICY}, 8, JIT_INDEX_ERROR)
FN(gather_elements, "gather_elements", JIT_OP_GATHER_ELEMENTS, 0, 3, 3, 6,
   {"data", "indices", "axis", "index_policy", "torch_dims", "out"},
   {R_DATA, R_INDICES, R_AXIS, R_POLICY, R_TORCH_DIMS, R_OUT}, 0, JIT_INDEX_ERROR)
FN(gather_elements_info, "gather_elements_info", JIT_OP_GATHER_ELEMENTS, 1, 3, 3, 5,
   {"data", "indices", "axis", "index_policy", "torch_dims"},
   {R_DATA, R_INDICES, R_AXIS, R_POLICY, R_TORCH_DIMS}, 0, JIT_INDEX_ERROR)
FN(scatter_update, "scatter_update", JIT_OP_SCATTER_UPDATE, 0, 4, 4, 6,
   {"data", "indices", "updates", "axis", "index_policy", "out"},
   {R_DATA, R_INDICES, R_UPDATES, R_AXIS, R_POLICY, R_OUT}, 0, JIT_INDEX_ERROR)
FN(scatter_update_info, "scatter_update_info", JIT_OP_SCATTER_UPDATE, 1, 4, 4, 5,
   {"data", "indices", "updates", "axis", "index_policy"},
   {R_DATA, R_INDICES, R_UPDATES, R_AXIS, R_POLICY}, 0, JIT_INDEX_ERROR)
FN(scatter_nd_update, "scatter_nd_update", JIT_OP_SCATTER_ND_UPDATE, 0, 4, 3, 7,
   {"data", "indices", "updates", "reduction", "opset", "index_policy", "out"},
   {R_DATA, R_INDICES, R_UPDATES, R_REDUCTION, R_OPSET, R_POLICY, R_OUT}, -1,
   JIT_INDEX_ERROR)
FN(scatter_nd_update_info, "scatter_nd_update_info", JIT_OP_SCATTER_ND_UPDATE, 1, 4, 3, 6,
   {"data", "indices", "updates", "reduction", "opset", "index_policy"},
   {R_DATA, R_INDICES, R_UPDATES, R_REDUCTION, R_OPSET, R_POLICY}, -1, JIT_INDEX_ERROR)
FN(scatter_elements_update_info, "scatter_elements_update_info", JIT_OP_SCATTER_ELEMENTS_UPDATE,
   1, 6, 4, 9,
   {"data", "indices", "updates", "axis", "reduction", "use_init_val", "opset",
    "index_policy", "torch_dims"},
   {R_DATA, R_INDICES, R_UPDATES, R_AXIS, R_REDUCTION, R_INIT, R_OPSET, R_POLICY,
    R_TORCH_DIMS}, 12, JIT_INDEX_ERROR)
FN(scatter_elements_update, "scatter_elements_update", JIT_OP_SCATTER_ELEMENTS_UPDATE, 0, 6,
   4, 10,
   {"data", "indices", "updates", "axis", "reduction", "use_init_val", "opset",
    "index_policy", "torch_dims", "out"},
   {R_DATA, R_INDICES, R_UPDATES, R_AXIS, R_REDUCTION, R_INIT, R_OPSET, R_POLICY,
    R_TORCH_DIMS, R_OUT}, 12, JIT_INDEX_ERROR)

/* ------------------------------------------------------------------ */
/* Embedding bags (SPEC 10): table, indices, offsets or segment ids,  */
/* optional weights; a family's kernel is the 6-argument dynamic one  */

typedef struct {
    jit_op op;
    int opset;
    jit_index_policy policy;
    jit_reduction reduction;
    int has_weights, has_default, has_padding, last_offset;
    int from_zero; /* offsets_from_zero: torch's offsets[0] == 0 */
    int64_t default_index, padding_idx;
    int64_t num_segments;   /* Segments: S, a dim of the call */
} tj_bag_attrs;

enum { BAG_TABLE, BAG_INDICES, BAG_OFFSETS, BAG_WEIGHTS, BAG_INPUTS };

typedef struct {
    tj_array in[BAG_INPUTS];
    int given[BAG_INPUTS];
    const char *names[BAG_INPUTS];
    PyObject *table_obj;
    /* the table's elements a row (bag_row_elems), when the family takes
     * them as its width; row_static 0: its dims stay dynamic */
    int row_static;
    int64_t row_elems;
} tj_bag_call;

static void bag_release(tj_bag_call *c)
{
    for (int i = 0; i < BAG_INPUTS; i++)
        if (c->given[i])
            array_release(&c->in[i]);
}

/* A bag's row or count given as a bool (True read as 1: torch refuses a
 * bool padding_idx, and so does every bag argument here): TypeMismatch. */
static int no_bool(PyObject *o, const char *what)
{
    if (o && PyBool_Check(o)) {
        PyErr_Format(TypeMismatch, "tensorjit: %s must be an integer, not bool (%R)", what, o);
        return -1;
    }
    return 0;
}

/* None: the flag off; an int: the flag on and its value. */
static int optional_int(PyObject *o, const char *what, int *has, int64_t *v)
{
    *has = o && o != Py_None;
    if (no_bool(o, what) != 0)
        return -1;
    return int_arg(*has ? o : NULL, what, INT64_MIN, INT64_MAX, 0, v);
}

/* A bag's reduction: sum (the default), mean or max (SPEC section 10);
 * the scatters' other names are refused, not read as a sum. */
static int bag_reduction_arg(PyObject *o, jit_reduction *out)
{
    static const struct {
        const char *name;
        jit_reduction r;
    } names[] = {{"sum", JIT_REDUCTION_SUM}, {"mean", JIT_REDUCTION_MEAN},
                 {"max", JIT_REDUCTION_MAX}};
    *out = JIT_REDUCTION_SUM;
    if (!o)
        return 0;
    const char *s = name_utf8(o);
    for (size_t i = 0; s && i < sizeof names / sizeof *names; i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].r;
            return 0;
        }
    PyErr_Clear();
    PyErr_Format(SignatureError, "tensorjit: reduction %R is not one of the embedding bags' "
                 "(sum, mean, max)", o);
    return -1;
}

static int bag_attrs_from(const tj_fn *fn, PyObject **slot, tj_bag_attrs *at)
{
    int64_t opset;
    memset(at, 0, sizeof *at);
    at->op = fn->op;
    if (bag_reduction_arg(slot[R_REDUCTION], &at->reduction) != 0 ||
        int_arg(slot[R_OPSET], "opset", INT32_MIN, INT32_MAX, fn->opset, &opset) != 0 ||
        policy_arg(slot[R_POLICY], fn->policy, &at->policy) != 0 ||
        optional_int(slot[R_DEFAULT], "default_index", &at->has_default,
                     &at->default_index) != 0 ||
        optional_int(slot[R_PADDING], "padding_idx", &at->has_padding, &at->padding_idx) != 0)
        return -1;
    at->opset = (int)opset;
    at->has_weights = slot[R_WEIGHTS] && slot[R_WEIGHTS] != Py_None;
    if (truth_arg(slot[R_LAST], &at->last_offset) != 0 ||
        truth_arg(slot[R_FROM_ZERO], &at->from_zero) != 0)
        return -1;
    if (fn->op == JIT_OP_EMBEDDING_SEGMENTS) {
        if (slot[R_SEGMENTS] == Py_None) { /* int_arg reads None as its default, 0 */
            PyErr_SetString(TypeMismatch,
                            "tensorjit: num_segments must be an integer, not NoneType (None)");
            return -1;
        }
        if (no_bool(slot[R_SEGMENTS], "num_segments") != 0 ||
            int_arg(slot[R_SEGMENTS], "num_segments", INT64_MIN, INT64_MAX, 0,
                    &at->num_segments) != 0)
            return -1;
        if (at->num_segments < 0) {
            PyErr_Format(SignatureError, "tensorjit: num_segments = %lld must not be negative",
                         (long long)at->num_segments);
            return -1;
        }
    }
    return 0;
}

static int same_dims(const tj_array *a, const tj_array *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

static PyObject *array_shape(const tj_array *a)
{
    jit_shape s = {.rank = a->ndim};
    memcpy(s.dims, a->dims, (size_t)a->ndim * sizeof *a->dims);
    return shape_tuple(&s);
}

/* What the kernel cannot check, since it sees no dims of them: offsets of
 * the indices' type, weights of the table's type and the indices' shape. */
static int bag_check_inputs(const tj_bag_call *c)
{
    const tj_array *t = &c->in[BAG_TABLE], *ix = &c->in[BAG_INDICES];
    if (!is_index_dtype(ix->dtype)) {
        PyErr_Format(TypeMismatch, "tensorjit: indices has dtype %s; it must be an integer "
                     "dtype (i32 or i64)", jit_dtype_name(ix->dtype));
        return -1;
    }
    if (c->given[BAG_OFFSETS] && c->in[BAG_OFFSETS].dtype != ix->dtype) {
        PyErr_Format(TypeMismatch, "tensorjit: %s has dtype %s; it must be the indices' (%s)",
                     c->names[BAG_OFFSETS], jit_dtype_name(c->in[BAG_OFFSETS].dtype),
                     jit_dtype_name(ix->dtype));
        return -1;
    }
    if (!c->given[BAG_WEIGHTS])
        return 0;
    const tj_array *w = &c->in[BAG_WEIGHTS];
    if (w->dtype != t->dtype) {
        PyErr_Format(TypeMismatch, "tensorjit: weights has dtype %s; it must be the table's "
                     "(%s)", jit_dtype_name(w->dtype), jit_dtype_name(t->dtype));
        return -1;
    }
    if (!same_dims(w, ix)) {
        PyObject *ws = array_shape(w), *is = ws ? array_shape(ix) : NULL;
        if (is)
            PyErr_Format(SignatureError, "tensorjit: weights has shape %R; it must have the "
                         "indices' shape %R (one weight per lookup)", ws, is);
        Py_XDECREF(ws);
        Py_XDECREF(is);
        return -1;
    }
    return 0;
}

/* torch's rule beyond OpenVINO's (which leaves the indices before the
 * first offset unused): the first bag starts at position 0. Checked here
 * rather than by the caller in Python, where reading offsets[0] off a
 * tensor cost about 2 us a call (docs/performance.md, 'Python'). */
static int bag_check_first_offset(const tj_bag_call *c)
{
    const tj_array *o = &c->in[BAG_OFFSETS];
    if (o->ndim != 1 || o->dims[0] == 0)
        return 0; /* the library names any other shape */
    long long first;
    switch (o->dtype) {
    case JIT_I32: first = *(const int32_t *)o->ptr; break;
    case JIT_I64: first = *(const int64_t *)o->ptr; break;
    default: return 0; /* not an offsets type: the library names it */
    }
    if (first == 0)
        return 0;
    PyErr_Format(IndexOutOfRange, "tensorjit: offsets[0] = %lld: torch's embedding_bag starts "
                 "the first bag at position 0 of indices, so offsets[0] must be 0", first);
    return -1;
}

/* The table's elements a row, its dims after the first multiplied: 1 and
 * *elems where the family takes them as its width (tj_family.row_static),
 * 0 where the table's dims stay dynamic. */
static int bag_row_elems(const tj_array *t, int64_t *elems)
{
    if (t->ndim < 2)
        return 0;
    int64_t n = 1;
    for (int d = 1; d < t->ndim; d++) {
        if (t->dims[d] != 0 && n > INT64_MAX / t->dims[d])
            return 0;
        n *= t->dims[d];
    }
    *elems = n;
    return 1;
}

static int bag_inputs(tj_bag_call *c, const tj_fn *fn, PyObject **slot)
{
    PyObject *objs[BAG_INPUTS] = {slot[R_DATA], slot[R_INDICES], slot[R_UPDATES],
                                  slot[R_WEIGHTS]};
    c->names[BAG_TABLE] = "table";
    c->names[BAG_INDICES] = "indices";
    c->names[BAG_OFFSETS] = fn->op == JIT_OP_EMBEDDING_SEGMENTS ? "segment_ids" : "offsets";
    c->names[BAG_WEIGHTS] = "weights";
    c->table_obj = slot[R_DATA];
    for (int i = 0; i < BAG_INPUTS; i++)
        c->given[i] = 0;
    for (int i = 0; i < BAG_INPUTS; i++) {
        if (!objs[i] || objs[i] == Py_None) {
            if (i == BAG_WEIGHTS || (i == BAG_OFFSETS && fn->op == JIT_OP_EMBEDDING_BAG_PACKED))
                continue;
            PyErr_Format(SignatureError, "tensorjit: %s() takes %s, not None", fn->name,
                         c->names[i]);
            return -1;
        }
        if (array_get(objs[i], c->names[i], 0, &c->in[i]) != 0)
            return -1;
        c->given[i] = 1;
    }
    c->row_static = bag_row_elems(&c->in[BAG_TABLE], &c->row_elems);
    return bag_check_inputs(c);
}

static int bag_dims(const tj_bag_call *c, const tj_bag_attrs *at, int64_t *dims);

static tj_kernel *bag_family_kernel(const tj_bag_call *c, const tj_bag_attrs *at)
{
    tj_family f;
    memset(&f, 0, sizeof f); /* every byte is hashed */
    f.op = at->op;
    f.dtype = c->in[BAG_TABLE].dtype;
    f.itype = c->in[BAG_INDICES].dtype;
    f.row_static = c->row_static;
    f.row_elems = c->row_static ? c->row_elems : 0;
    f.rank_d = f.row_static ? 2 : c->in[BAG_TABLE].ndim;
    f.rank_i = c->in[BAG_INDICES].ndim;
    f.rank_u = c->given[BAG_OFFSETS] ? c->in[BAG_OFFSETS].ndim : 0;
    f.opset = at->opset;
    f.policy = at->policy;
    f.reduction = at->reduction;
    f.weights = at->has_weights;
    f.has_default = at->has_default;
    f.default_index = at->has_default ? at->default_index : 0;
    f.has_padding = at->has_padding;
    f.padding_idx = at->has_padding ? at->padding_idx : 0;
    f.last_offset = at->last_offset;
    int64_t dims[TJ_MAX_DIMS];
    bag_dims(c, at, dims);
    return family_kernel(&f, dims);
}

/* The kernel's dims: the table's (as [E, row elements] where the family
 * has its width), the indices', the offsets' (Segments: the segment ids',
 * then S). */
static int bag_dims(const tj_bag_call *c, const tj_bag_attrs *at, int64_t *dims)
{
    int n = 0, first = BAG_TABLE;
    const tj_array *t = &c->in[BAG_TABLE];
    if (c->row_static) {
        dims[0] = t->dims[0];
        dims[1] = c->row_elems;
        n = 2;
        first = BAG_INDICES;
    }
    for (int i = first; i <= BAG_OFFSETS; i++)
        for (int d = 0; c->given[i] && d < c->in[i].ndim; d++)
            dims[n++] = c->in[i].dims[d];
    if (at->op == JIT_OP_EMBEDDING_SEGMENTS)
        dims[n++] = at->num_segments;
    return n;
}

/* The table rows the lookups read: what a bag call moves besides out. */
static int64_t bag_lookup_bytes(const tj_bag_call *c)
{
    const tj_array *t = &c->in[BAG_TABLE], *ix = &c->in[BAG_INDICES];
    int64_t lookups = 1;
    for (int i = 0; i < ix->ndim; i++)
        lookups *= ix->dims[i];
    int64_t row = t->ndim > 0 && t->dims[0] > 0 ? t->nbytes / t->dims[0] : 0;
    return row > 0 && lookups > INT64_MAX / row ? INT64_MAX : lookups * row;
}

/* The call's output shape: the kernel's, [B or S, row elements] for a
 * table taken as [E, row elements], with the table's row dims again. */
static int bag_bind(tj_kernel *k, const tj_bag_call *c, const int64_t *dims, int n, int exact,
                    jit_shape *shape)
{
    if (kernel_bind(k, dims, n, exact, shape) != 0)
        return -1;
    const tj_array *t = &c->in[BAG_TABLE];
    if (t->ndim > 2 && c->row_static) {
        shape->rank = t->ndim;
        for (int d = 1; d < t->ndim; d++)
            shape->dims[d] = t->dims[d];
    }
    return 0;
}

static PyObject *bag_run(const tj_bag_call *c, const tj_bag_attrs *at, tj_kernel *k,
                         PyObject *out_obj)
{
    int64_t dims[TJ_MAX_DIMS];
    int n = bag_dims(c, at, dims);
    jit_shape shape;
    if (bag_bind(k, c, dims, n, 0, &shape) != 0)
        return NULL;
    /* out= is checked against the given inputs; a new result takes the
     * table's kind */
    const char *names[BAG_INPUTS];
    const void *ptrs[BAG_INPUTS];
    tj_call given = {.names = names, .n_in = 0, .data_obj = c->table_obj};
    for (int i = 0; i < BAG_INPUTS; i++) {
        ptrs[i] = c->given[i] ? c->in[i].ptr : NULL;
        if (c->given[i]) {
            names[given.n_in] = c->names[i];
            given.in[given.n_in++] = c->in[i];
        }
    }
    return family_run_shaped(&given, k, &shape, dims, ptrs, bag_lookup_bytes(c), out_obj, 0);
}

/* What serves the call: kernel_info_dict of the family's kernel and dims. */
static PyObject *bag_info(const tj_bag_call *c, const tj_bag_attrs *at, tj_kernel *k)
{
    int64_t dims[TJ_MAX_DIMS];
    int n = bag_dims(c, at, dims);
    jit_shape shape;
    if (bag_bind(k, c, dims, n, 1, &shape) != 0)
        return NULL;
    return kernel_info_dict(k, &shape, c->in[BAG_TABLE].dtype, dims);
}

static PyObject *bag_entry(const tj_fn *fn, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    PyObject *slot[R_ROLES];
    tj_bag_attrs at;
    if (parse_args(fn, args, nargs, kwnames, slot) != 0 || bag_attrs_from(fn, slot, &at) != 0)
        return NULL;
    tj_bag_call c;
    PyObject *result = NULL;
    if (bag_inputs(&c, fn, slot) == 0) {
        /* A negative padding_idx p names row p + E (SPEC section 10), made so
         * here where the call gives E: the family's rows are dynamic, and
         * a negative row to resolve against them left the family to the
         * reference kernel (50x slower, a user's trial). Out of [-E, 0) it
         * stays as given, for the library's message. */
        int64_t rows = c.in[BAG_TABLE].ndim > 0 ? c.in[BAG_TABLE].dims[0] : 0;
        if (at.has_padding && at.padding_idx < 0 && at.padding_idx >= -rows)
            at.padding_idx += rows;
        /* an _info call takes the flag with the rest, and reads no values */
        tj_kernel *k = !fn->info && at.from_zero && bag_check_first_offset(&c) != 0
                           ? NULL
                           : bag_family_kernel(&c, &at);
        if (k)
            result = fn->info ? bag_info(&c, &at, k) : bag_run(&c, &at, k, slot[R_OUT]);
    }
    bag_release(&c);
    return result;
}

#define BAG_FN(cname, ...) ENTRY_FN(bag_entry, cname, __VA_ARGS__)

BAG_FN(embedding_bag_offsets, "embedding_bag_offsets", JIT_OP_EMBEDDING_BAG_OFFSETS, 0, 3, 3,
       12,
       {"table", "indices", "offsets", "weights", "default_index", "reduction",
        "include_last_offset", "padding_idx", "opset", "index_policy", "offsets_from_zero",
        "out"},
       {R_DATA, R_INDICES, R_UPDATES, R_WEIGHTS, R_DEFAULT, R_REDUCTION, R_LAST, R_PADDING,
        R_OPSET, R_POLICY, R_FROM_ZERO, R_OUT}, 15, JIT_INDEX_ERROR)
BAG_FN(embedding_bag_packed, "embedding_bag_packed", JIT_OP_EMBEDDING_BAG_PACKED, 0, 2, 2, 8,
       {"table", "indices", "weights", "reduction", "padding_idx", "opset", "index_policy",
        "out"},
       {R_DATA, R_INDICES, R_WEIGHTS, R_REDUCTION, R_PADDING, R_OPSET, R_POLICY, R_OUT}, 15,
       JIT_INDEX_ERROR)
BAG_FN(embedding_segments, "embedding_segments", JIT_OP_EMBEDDING_SEGMENTS, 0, 4, 4, 8,
       {"table", "indices", "segment_ids", "num_segments", "weights", "default_index",
        "index_policy", "out"},
       {R_DATA, R_INDICES, R_UPDATES, R_SEGMENTS, R_WEIGHTS, R_DEFAULT, R_POLICY, R_OUT}, 0,
       JIT_INDEX_ERROR)
BAG_FN(embedding_bag_offsets_info, "embedding_bag_offsets_info", JIT_OP_EMBEDDING_BAG_OFFSETS, 1,
       3, 3, 11,
       {"table", "indices", "offsets", "weights", "default_index", "reduction",
        "include_last_offset", "padding_idx", "opset", "index_policy", "offsets_from_zero"},
       {R_DATA, R_INDICES, R_UPDATES, R_WEIGHTS, R_DEFAULT, R_REDUCTION, R_LAST, R_PADDING,
        R_OPSET, R_POLICY, R_FROM_ZERO}, 15, JIT_INDEX_ERROR)
BAG_FN(embedding_bag_packed_info, "embedding_bag_packed_info", JIT_OP_EMBEDDING_BAG_PACKED, 1, 2,
       2, 7,
       {"table", "indices", "weights", "reduction", "padding_idx", "opset", "index_policy"},
       {R_DATA, R_INDICES, R_WEIGHTS, R_REDUCTION, R_PADDING, R_OPSET, R_POLICY}, 15,
       JIT_INDEX_ERROR)
BAG_FN(embedding_segments_info, "embedding_segments_info", JIT_OP_EMBEDDING_SEGMENTS, 1, 4, 4, 7,
       {"table", "indices", "segment_ids", "num_segments", "weights", "default_index",
        "index_policy"},
       {R_DATA, R_INDICES, R_UPDATES, R_SEGMENTS, R_WEIGHTS, R_DEFAULT, R_POLICY}, 0,
       JIT_INDEX_ERROR)

/* ------------------------------------------------------------------ */
/* DynamicKernel: a family the caller names, dims static or dynamic    */

typedef struct {
    PyObject_HEAD
    tj_kernel *k;
    PyObject *output_shape; /* a tuple with None where it varies, or None */
} DynObject;

static PyTypeObject DynType;

static const char *op_name(jit_op op)
{
    jit_op_info info;
    return jit_op_describe(op, &info) == 0 ? info.name : "?";
}

static int dyn_alive(DynObject *self)
{
    if (jit_epoch() == self->k->epoch)
        return 0;
    /* after a jit_shutdown() the address may hold another kernel, of
     * another signature: never call it */
    PyErr_Format(KernelError, "tensorjit: this %s DynamicKernel was freed by "
                 "tensorjit.shutdown() (jit_shutdown); compile it again with compile_dynamic",
                 op_name(self->k->sig.op));
    return -1;
}

static void dyn_dealloc(DynObject *self)
{
    /* Not released to the library: a kernel made without a cap is never
     * freed before jit_shutdown() anyway, and another holder may share it. */
    PyMem_RawFree(self->k);
    Py_XDECREF(self->output_shape);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int dyn_check_inputs(DynObject *self, const tj_call *c)
{
    const jit_sig *s = &self->k->sig;
    jit_dtype want[3] = {s->dtype, s->index_type, s->updates_dtype ? s->updates_dtype : s->dtype};
    const jit_shape *ranks[3] = {&s->data_shape, &s->indices_shape, &s->updates_shape};
    for (int i = 0; i < c->n_in; i++) {
        if (c->in[i].dtype != want[i]) {
            PyErr_Format(TypeMismatch, "tensorjit: %s has dtype %s, not the kernel's (%s)",
                         INPUT_NAMES[i], jit_dtype_name(c->in[i].dtype),
                         jit_dtype_name(want[i]));
            return -1;
        }
        if (c->in[i].ndim != ranks[i]->rank) {
            PyErr_Format(SignatureError, "tensorjit: %s has rank %d; the kernel's is %d",
                         INPUT_NAMES[i], c->in[i].ndim, ranks[i]->rank);
            return -1;
        }
    }
    return 0;
}

static PyObject *dyn_call(DynObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"data", "indices", "updates", "out", NULL};
    PyObject *data, *indices, *updates = NULL, *out = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O$O:DynamicKernel", names, &data, &indices,
                                     &updates, &out))
        return as_package_error("DynamicKernel");
    if (dyn_alive(self) != 0)
        return NULL;
    if (!self->k->has_updates && updates && updates != Py_None) {
        PyErr_Format(TypeMismatch, "tensorjit: a %s DynamicKernel takes data and indices, not "
                     "updates", op_name(self->k->sig.op));
        return NULL;
    }
    tj_call c;
    PyObject *result = NULL;
    if (call_inputs(&c, data, indices, updates, self->k->has_updates) == 0 &&
        dyn_check_inputs(self, &c) == 0)
        result = call_run(&c, self->k, out, self->k->has_updates);
    call_release(&c);
    return result;
}

static int dims_from(PyObject *seq, const char *what, int64_t *dims, int *n)
{
    PyObject *fast = PySequence_Fast(seq, "");
    if (!fast) { /* PySequence_Fast's bare TypeError: no tensorjit.Error */
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(TypeMismatch, "tensorjit: %s must be a sequence of ints, not %s",
                         what, Py_TYPE(seq)->tp_name);
        }
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    int r = 0;
    for (Py_ssize_t i = 0; i < len && r == 0; i++) {
        PyObject *d = PySequence_Fast_GET_ITEM(fast, i);
        if (*n >= TJ_MAX_DIMS) {
            PyErr_Format(SignatureError, "tensorjit: %s has too many dims", what);
            r = -1;
        } else if (d == Py_None) { /* int_arg reads None as its default, 0 */
            PyErr_Format(TypeMismatch, "tensorjit: %s[%zd] is None, where a dim is an "
                         "int", what, i);
            r = -1;
        } else {
            r = int_arg(d, what, INT64_MIN, INT64_MAX, 0, &dims[(*n)++]);
        }
    }
    Py_DECREF(fast);
    return r;
}

static PyObject *dyn_bind(DynObject *self, PyObject *args, PyObject *kw)
{
    PyObject *shapes[3] = {NULL, NULL, NULL};
    if (kw && PyDict_GET_SIZE(kw) > 0) { /* METH_VARARGS's refusal is a bare TypeError */
        PyErr_SetString(TypeMismatch, "tensorjit: bind() takes its shapes by position, not "
                        "by keyword");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "bind", 2, 3, &shapes[0], &shapes[1], &shapes[2]))
        return as_package_error("bind");
    if (dyn_alive(self) != 0)
        return NULL;
    int64_t dims[TJ_MAX_DIMS];
    int n = 0;
    int count = self->k->has_updates ? 3 : 2;
    const jit_sig *s = &self->k->sig;
    const int ranks[3] = {s->data_shape.rank, s->indices_shape.rank, s->updates_shape.rank};
    if (!self->k->has_updates && shapes[2] && shapes[2] != Py_None) {
        PyErr_Format(TypeMismatch, "tensorjit: bind() of a %s kernel takes data_shape and "
                     "indices_shape, not updates_shape", op_name(s->op));
        return NULL;
    }
    /* the kernel reads exactly its ranks' dims: each shape must hold its
     * input's rank, or the dims would shift into the next input's (and
     * a short list leave the last ones unset) */
    for (int i = 0; i < count; i++) {
        if (!shapes[i] || shapes[i] == Py_None) {
            PyErr_Format(SignatureError, "tensorjit: bind() needs %s_shape (the kernel's %s "
                         "has rank %d)", INPUT_NAMES[i], INPUT_NAMES[i], ranks[i]);
            return NULL;
        }
        int before = n;
        static const char *const shape_names[3] = {"data_shape", "indices_shape",
                                                   "updates_shape"};
        if (dims_from(shapes[i], shape_names[i], dims, &n) != 0)
            return NULL;
        if (n - before != ranks[i]) {
            PyErr_Format(SignatureError, "tensorjit: bind()'s %s_shape has %d dims; the "
                         "kernel's %s has rank %d", INPUT_NAMES[i], n - before,
                         INPUT_NAMES[i], ranks[i]);
            return NULL;
        }
    }
    jit_shape out;
    if (kernel_bind(self->k, dims, n, 1, &out) != 0)
        return NULL;
    return shape_tuple(&out);
}

static PyObject *dyn_info(DynObject *self, PyObject *args, PyObject *kw)
{
    if (no_args("info", args, kw) != 0)
        return NULL;
    if (dyn_alive(self) != 0)
        return NULL;
    return kernel_info_dict(self->k, NULL, self->k->sig.dtype, NULL);
}

static PyObject *dyn_repr(DynObject *self)
{
    const jit_sig *s = &self->k->sig;
    int alive = jit_epoch() == self->k->epoch;
    return PyUnicode_FromFormat("<tensorjit.DynamicKernel %s %s[rank %d] indices %s[rank %d]"
                                " output %R%s>", op_name(s->op), jit_dtype_name(s->dtype),
                                s->data_shape.rank, jit_dtype_name(s->index_type),
                                s->indices_shape.rank,
                                self->output_shape ? self->output_shape : Py_None,
                                alive ? "" : " (freed by shutdown)");
}

static PyObject *dyn_get_op(DynObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(op_name(self->k->sig.op));
}

static PyObject *dyn_get_output_shape(DynObject *self, void *closure)
{
    (void)closure;
    PyObject *r = self->output_shape ? self->output_shape : Py_None;
    Py_INCREF(r);
    return r;
}

static PyMethodDef dyn_methods[] = {
    {"bind", (PyCFunction)(void (*)(void))dyn_bind, METH_VARARGS | METH_KEYWORDS,
     "bind(data_shape, indices_shape[, updates_shape]) -> the output shape of one call with "
     "inputs of these shapes (tensorjit.SignatureError when the family has none)."},
    {"info", (PyCFunction)(void (*)(void))dyn_info, METH_VARARGS | METH_KEYWORDS,
     "info() -> dict: engine, why, compile_ms, code_bytes, out_bytes (-1), cache_hit, "
     "dynamic (True)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef dyn_getset[] = {
    {"op", (getter)dyn_get_op, NULL, "The op's name (\"GatherND\").", NULL},
    {"output_shape", (getter)dyn_get_output_shape, NULL,
     "The output shape, None where a dim varies; None itself where even the rank varies.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject DynType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorjit.DynamicKernel",
    .tp_basicsize = sizeof(DynObject),
    .tp_dealloc = (destructor)dyn_dealloc,
    .tp_repr = (reprfunc)dyn_repr,
    .tp_call = (ternaryfunc)dyn_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One kernel for every shape of a family (made by tensorjit.compile_dynamic): "
              "ranks, types and attributes fixed, the dims marked None known at call time. "
              "k(data, indices[, updates], out=None) passes the arrays' shapes as the dims; "
              "the library checks them (tensorjit.SignatureError, nothing written).",
    .tp_methods = dyn_methods,
    .tp_getset = dyn_getset,
};

static int shape_arg(PyObject *o, const char *what, jit_shape *s)
{
    int64_t dims[TJ_MAX_DIMS];
    int n = 0;
    if (dims_from(o, what, dims, &n) != 0)
        return -1;
    if (n > JIT_MAX_RANK) {
        PyErr_Format(SignatureError, "tensorjit: %s has rank %d, above the library's maximum "
                     "of %d", what, n, JIT_MAX_RANK);
        return -1;
    }
    s->rank = n;
    memcpy(s->dims, dims, (size_t)n * sizeof *dims);
    return 0;
}

static int bounds_arg(PyObject *o, const char *what, int rank, int64_t *bound)
{
    if (!o || o == Py_None)
        return 0;
    int64_t dims[TJ_MAX_DIMS];
    int n = 0;
    if (dims_from(o, what, dims, &n) != 0)
        return -1;
    if (n != rank) {
        PyErr_Format(SignatureError, "tensorjit: %s has %d entries; the shape has rank %d",
                     what, n, rank);
        return -1;
    }
    memcpy(bound, dims, (size_t)n * sizeof *dims);
    return 0;
}

/* _compile_dynamic(op, dtype, index_type, data_shape, indices_shape,
 * updates_shape, opset, axis, batch_dims, policy, reduction, no_init,
 * data_bound, indices_bound, updates_bound, torch_dims): codes as ints,
 * shapes with -1 for dynamic dims; the names are the Python layer's to map. */
static PyObject *py_compile_dynamic(PyObject *self, PyObject *args)
{
    (void)self;
    int op, dtype, itype, opset, batch, policy, reduction, no_init, torch_dims;
    long long axis;
    PyObject *ds, *is, *us, *db, *ib, *ub;
    if (!PyArg_ParseTuple(args, "iiiOOOiLiiiiOOOp", &op, &dtype, &itype, &ds, &is, &us, &opset,
                          &axis, &batch, &policy, &reduction, &no_init, &db, &ib, &ub,
                          &torch_dims))
        return NULL;
    jit_sig sig;
    memset(&sig, 0, sizeof sig);
    sig.op = (jit_op)op;
    sig.dtype = (jit_dtype)dtype;
    sig.index_type = (jit_dtype)itype;
    sig.opset = opset;
    sig.axis = axis;
    sig.batch_dims = batch;
    sig.index_policy = (jit_index_policy)policy;
    sig.reduction = (jit_reduction)reduction;
    sig.no_init_val = no_init;
    sig.torch_dims = torch_dims;
    sig.threads = JIT_THREADS_ALL;
    if (shape_arg(ds, "data", &sig.data_shape) != 0 ||
        shape_arg(is, "indices", &sig.indices_shape) != 0 ||
        (us != Py_None && shape_arg(us, "updates", &sig.updates_shape) != 0) ||
        bounds_arg(db, "data_bound", sig.data_shape.rank, sig.data_bound) != 0 ||
        bounds_arg(ib, "indices_bound", sig.indices_shape.rank, sig.indices_bound) != 0 ||
        bounds_arg(ub, "updates_bound", sig.updates_shape.rank, sig.updates_bound) != 0)
        return NULL;
    if (us != Py_None)
        sig.updates_dtype = sig.dtype;
    if (!jit_sig_is_dynamic(&sig)) {
        PyErr_SetString(SignatureError, "tensorjit: no dim is dynamic (None or -1): call the "
                        "op's function instead");
        return NULL;
    }
    tj_kernel *k = kernel_compile(&sig);
    if (!k)
        return NULL;
    DynObject *obj = PyObject_New(DynObject, &DynType);
    if (!obj) {
        PyMem_RawFree(k);
        return NULL;
    }
    obj->k = k;
    obj->output_shape = NULL;
    jit_shape out;
    if (jit_output_shape(&k->sig, &out) != 0) /* even the rank varies */
        return (PyObject *)obj;
    PyObject *t = shape_tuple(&out);
    for (int i = 0; t && i < out.rank; i++) {
        if (out.dims[i] == JIT_DIM_DYNAMIC) {
            Py_INCREF(Py_None);
            Py_SETREF(PyTuple_GET_ITEM(t, i), Py_None);
        }
    }
    if (!t) {
        Py_DECREF(obj);
        return NULL;
    }
    obj->output_shape = t;
    return (PyObject *)obj;
}

/* ------------------------------------------------------------------ */
/* Module functions                                                   */

static PyObject *py_dtype_code(PyObject *self, PyObject *arg)
{
    (void)self;
    PyArray_Descr *d = NULL;
    if (!PyArray_DescrConverter(arg, &d))
        return NULL;
    jit_dtype t = dtype_of_numpy(d);
    Py_DECREF(d);
    if (t == JIT_DTYPE_UNSET) {
        PyErr_Format(TypeMismatch, "tensorjit: dtype %R has no kernel type; it must be bool, "
                     "an integer or a float dtype", arg);
        return NULL;
    }
    return PyLong_FromLong(t);
}

/* A native int32 or int64 array, as the *_at's plain path reads indices. */
static int plain_index_array(PyArrayObject *a)
{
    int t = PyArray_TYPE(a);
    return PyTypeNum_ISSIGNED(t) && (PyArray_ITEMSIZE(a) == 4 || PyArray_ITEMSIZE(a) == 8) &&
           PyArray_ISNOTSWAPPED(a);
}

/* Whether b (float32 or float64, C-contiguous and aligned) holds a zero of either sign:
 * a maximum or minimum meeting one may tie +0 and -0, which numpy and the
 * library settle differently (tensorjit.numpy hands such a call to numpy). */
static int holds_zero(PyArrayObject *b, jit_dtype t)
{
    npy_intp n = PyArray_SIZE(b);
    if (t == JIT_F32) {
        const float *v = PyArray_DATA(b);
        for (npy_intp i = 0; i < n; i++)
            if (v[i] == 0.0f)
                return 1;
    } else {
        const double *v = PyArray_DATA(b);
        for (npy_intp i = 0; i < n; i++)
            if (v[i] == 0.0)
                return 1;
    }
    return 0;
}

/* The index arrays of an _at_plain call: one ndarray (positions along a's
 * first axis), or a tuple of k <= rank of them (positions in a's first k
 * dims), each native int32 or int64, all of one shape and, in a tuple,
 * C-contiguous and aligned (read here). Their count k, or 0: not plain. */
static int at_plain_indices(PyObject *i_obj, int ra, PyArrayObject **first)
{
    if (PyArray_CheckExact(i_obj)) {
        *first = (PyArrayObject *)i_obj;
        return plain_index_array(*first) && PyArray_NDIM(*first) < JIT_MAX_RANK ? 1 : 0;
    }
    Py_ssize_t k = PyTuple_CheckExact(i_obj) ? PyTuple_GET_SIZE(i_obj) : 0;
    if (k < 1 || k > ra)
        return 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *p = PyTuple_GET_ITEM(i_obj, j);
        if (!PyArray_CheckExact(p))
            return 0;
        PyArrayObject *q = (PyArrayObject *)p;
        if (j == 0)
            *first = q;
        if (!plain_index_array(q) || !PyArray_ISCARRAY_RO(q) ||
            !PyArray_SAMESHAPE(q, *first) || PyArray_NDIM(q) >= JIT_MAX_RANK)
            return 0;
    }
    return (int)k;
}

/* The calls _at_plain serves: a an ndarray it writes in place (writeable,
 * C-contiguous, aligned, native) of an integer dtype or float32/float64;
 * plain index arrays (at_plain_indices); b an ndarray of a's dtype and
 * exactly the selected elements' shape, the indices' then a's after the
 * first k (nothing to broadcast); for float maximum and minimum, no zero
 * in b. The indices' count k, or 0. */
static int at_plain_fits(PyObject *a_obj, PyObject *i_obj, PyObject *b_obj, jit_reduction r,
                         PyArrayObject **first)
{
    if (!PyArray_CheckExact(a_obj) || !PyArray_CheckExact(b_obj))
        return 0;
    PyArrayObject *a = (PyArrayObject *)a_obj, *b = (PyArrayObject *)b_obj;
    int ra = PyArray_NDIM(a), k = at_plain_indices(i_obj, ra, first);
    if (k == 0 || k > ra)
        return 0;
    int ri = PyArray_NDIM(*first);
    if (!PyArray_ISCARRAY(a) || !PyArray_ISNOTSWAPPED(a) || PyArray_NDIM(b) != ri + ra - k ||
        !PyArray_ISNOTSWAPPED(b) || PyArray_TYPE(b) != PyArray_TYPE(a))
        return 0;
    for (int d = 0; d < ri; d++)
        if (PyArray_DIM(b, d) != PyArray_DIM(*first, d))
            return 0;
    for (int d = k; d < ra; d++)
        if (PyArray_DIM(b, ri + d - k) != PyArray_DIM(a, d))
            return 0;
    jit_dtype t = dtype_of_numpy(PyArray_DESCR(a));
    if (t == JIT_F32 || t == JIT_F64)
        return (r == JIT_REDUCTION_MAX || r == JIT_REDUCTION_MIN) &&
                       (!PyArray_ISCARRAY_RO(b) || holds_zero(b, t))
                   ? 0
                   : k;
    return t != JIT_DTYPE_UNSET && t != JIT_BOOL && t != JIT_F16 && t != JIT_BF16 ? k : 0;
}

/* A tuple's k index arrays as one int64 array [..., k], as numpy.stack
 * makes it (the arrays checked by at_plain_indices). */
static PyObject *stacked_indices(PyObject *parts, int k, PyArrayObject *first)
{
    int ri = PyArray_NDIM(first);
    npy_intp dims[JIT_MAX_RANK];
    for (int d = 0; d < ri; d++)
        dims[d] = PyArray_DIM(first, d);
    dims[ri] = k;
    PyObject *t = PyArray_SimpleNew(ri + 1, dims, NPY_INT64);
    if (!t)
        return NULL;
    int64_t *to = PyArray_DATA((PyArrayObject *)t);
    npy_intp n = PyArray_SIZE(first);
    for (int j = 0; j < k; j++) {
        PyArrayObject *q = (PyArrayObject *)PyTuple_GET_ITEM(parts, j);
        const void *from = PyArray_DATA(q);
        for (npy_intp e = 0; e < n; e++)
            to[e * k + j] = PyArray_ITEMSIZE(q) == 4 ? ((const int32_t *)from)[e]
                                                     : ((const int64_t *)from)[e];
    }
    return t;
}

/* _at_plain(a, indices, b, reduction): tensorjit.numpy's ufunc.at on its
 * plainest calls (at_plain_fits) in C, where the Python path's checks cost
 * a small call more than numpy's own ufunc.at: ScatterNDUpdate in place,
 * one index array read as [..., 1] (the same memory) or a tuple's stacked,
 * negative indices wrapping. True when it served the call; False, having
 * written nothing, for any other call and any the library refuses: the
 * Python path then serves it or words the error. */
static PyObject *py_at_plain(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(TypeMismatch, "tensorjit: _at_plain(a, indices, b, reduction)");
        return NULL;
    }
    jit_reduction r;
    if (reduction_arg(args[3], &r) != 0)
        return NULL;
    if (!(r == JIT_REDUCTION_SUM || r == JIT_REDUCTION_SUB || r == JIT_REDUCTION_PROD ||
          r == JIT_REDUCTION_MAX || r == JIT_REDUCTION_MIN)) {
        PyErr_Format(SignatureError, "tensorjit: _at_plain takes sum, sub, prod, max or min, "
                     "not %R", args[3]);
        return NULL;
    }
    PyArrayObject *first = NULL;
    int k = at_plain_fits(args[0], args[1], args[2], r, &first);
    if (k == 0)
        Py_RETURN_FALSE;
    int stacked = PyTuple_CheckExact(args[1]);
    PyObject *tuples = stacked ? stacked_indices(args[1], k, first) : NULL;
    if (stacked && !tuples)
        return NULL;
    tj_attrs at = {.op = JIT_OP_SCATTER_ND_UPDATE, .has_updates = 1, .opset = 15,
                   .policy = JIT_INDEX_NEGATIVE_WRAPS, .reduction = r};
    tj_call c;
    PyObject *result = NULL;
    if (call_inputs(&c, args[0], tuples ? tuples : args[1], args[2], 1) == 0) {
        tj_array *idx = &c.in[1];
        if (!tuples)
            idx->dims[idx->ndim++] = 1; /* [..., 1]: one coordinate a tuple */
        tj_kernel *kernel = call_family_kernel(&c, &at);
        if (kernel)
            result = call_run(&c, kernel, args[0], 1);
    }
    call_release(&c);
    Py_XDECREF(tuples);
    if (result) {
        Py_DECREF(result);
        Py_RETURN_TRUE;
    }
    if (!PyErr_ExceptionMatches(Error))
        return NULL;
    PyErr_Clear();
    Py_RETURN_FALSE;
}

/* _at_in_bounds(a, indices): the bound check of a call tensorjit.numpy
 * hands to numpy's ufunc.at as it comes (a Python number b under numpy 2
 * whose loop's bits may differ from the library's), in C: numpy's own
 * array operations on a small call's indices cost several times its
 * ufunc.at. True when a is an ndarray, the indices plain
 * (at_plain_indices; a single array C-contiguous too) and each within
 * [-n, n) of its dim; IndexOutOfRange naming the first that is not, in
 * the words of the Python check (numpy.py, _check_bounds), so that a bad
 * one writes nothing; False for any other call (the general path). */
static PyObject *py_at_in_bounds(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(TypeMismatch, "tensorjit: _at_in_bounds(a, indices)");
        return NULL;
    }
    if (!PyArray_CheckExact(args[0]))
        Py_RETURN_FALSE;
    PyArrayObject *a = (PyArrayObject *)args[0], *first = NULL;
    int k = at_plain_indices(args[1], PyArray_NDIM(a), &first);
    int tuple = PyTuple_CheckExact(args[1]);
    if (k == 0 || k > PyArray_NDIM(a) || (!tuple && !PyArray_ISCARRAY_RO(first)))
        Py_RETURN_FALSE;
    npy_intp n = PyArray_SIZE(first);
    for (npy_intp e = 0; e < n; e++)
        for (int j = 0; j < k; j++) {
            PyArrayObject *q = tuple ? (PyArrayObject *)PyTuple_GET_ITEM(args[1], j) : first;
            const void *at = PyArray_DATA(q);
            long long v = PyArray_ITEMSIZE(q) == 4 ? ((const int32_t *)at)[e]
                                                   : (long long)((const int64_t *)at)[e];
            long long dim = (long long)PyArray_DIM(a, j);
            if (v < -dim || v >= dim) {
                PyErr_Format(IndexOutOfRange, "tensorjit: index %lld is out of range for a's "
                             "dimension %d of size %lld", v, j, dim);
                return NULL;
            }
        }
    Py_RETURN_TRUE;
}

static PyObject *py_policy_code(PyObject *self, PyObject *arg)
{
    (void)self;
    jit_index_policy p;
    return policy_arg(arg, JIT_INDEX_ERROR, &p) != 0 ? NULL : PyLong_FromLong(p);
}

static PyObject *py_reduction_code(PyObject *self, PyObject *arg)
{
    (void)self;
    jit_reduction r;
    return reduction_arg(arg, &r) != 0 ? NULL : PyLong_FromLong(r);
}

static PyObject *py_op_code(PyObject *self, PyObject *arg)
{
    (void)self;
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(TypeMismatch, "tensorjit: op must be a name, not %s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    const char *s = name_utf8(arg);
    if (!s) {
        PyErr_Format(SignatureError, "tensorjit: unknown op %R", arg);
        return NULL;
    }
    char cli[64];
    size_t n = strlen(s);
    jit_op op = JIT_OP_NONE;
    if (n < sizeof cli) { /* gather_nd is the CLI's gather-nd */
        for (size_t i = 0; i <= n; i++)
            cli[i] = s[i] == '_' ? '-' : s[i];
        op = jit_op_from_name(cli);
    }
    if (op == JIT_OP_NONE)
        op = jit_op_from_name(s);
    if (op == JIT_OP_NONE) {
        PyErr_Format(SignatureError, "tensorjit: unknown op %R", arg);
        return NULL;
    }
    jit_op_info info;
    if (jit_op_describe(op, &info) != 0)
        return PyErr_Format(SignatureError, "tensorjit: unknown op %R", arg);
    return Py_BuildValue("(isi)", (int)op, info.name, info.has_updates);
}

static PyObject *py_library_version(PyObject *self, PyObject *args, PyObject *kw)
{
    if (no_args("library_version", args, kw) != 0)
        return NULL;
    (void)self;
    return PyUnicode_FromString(jit_version());
}

static PyObject *py_shutdown(PyObject *self, PyObject *args, PyObject *kw)
{
    if (no_args("shutdown", args, kw) != 0)
        return NULL;
    (void)self;
    if (g_running > 0) {
        PyErr_Format(KernelError, "tensorjit: shutdown() while %d call(s) run (another "
                     "thread's, or the one whose out= or result ran this code): their kernels "
                     "would be freed under them; call it when none runs", g_running);
        return NULL;
    }
    table_clear(0);
    jit_shutdown();
    Py_RETURN_NONE;
}

/* jit_shutdown() behind the module's back: what another user of the library
 * in the process may do (the tests' way to check the epoch guard). */
static PyObject *py_raw_shutdown(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    jit_shutdown();
    Py_RETURN_NONE;
}

/* The cap on families, lowered by tests to see the table start over. */
static PyObject *py_set_max_families(PyObject *self, PyObject *arg)
{
    (void)self;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 1 || n > TJ_MAX_FAMILIES) {
        PyErr_Format(SignatureError, "tensorjit: the cap on families is 1..%d", TJ_MAX_FAMILIES);
        return NULL;
    }
    g_max_families = (int)n;
    Py_RETURN_NONE;
}

static PyObject *py_stats(PyObject *self, PyObject *args, PyObject *kw)
{
    if (no_args("stats", args, kw) != 0)
        return NULL;
    (void)self;
    table_check_epoch();
    jit_kernel_stats s;
    if (jit_get_kernel_stats(&s) != 0) {
        set_library_error(KernelError);
        return NULL;
    }
    return Py_BuildValue("{s:L,s:i,s:i,s:L,s:L}", "compiles", (long long)g_compiles,
                         "kernels", g_families, "max_kernels", g_max_families,
                         "library_kernels", (long long)s.jit_kernels,
                         "code_bytes", (long long)s.code_bytes);
}

static PyObject *py_set_kernel_limit(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"max_kernels", "max_code_bytes", NULL};
    long long kernels = 0, bytes = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|LL:set_kernel_limit", names, &kernels, &bytes))
        return as_package_error("set_kernel_limit");
    if (kernels < 0 || bytes < 0) {
        PyErr_Format(SignatureError, "tensorjit: set_kernel_limit(%lld, %lld): a limit is a "
                     "count >= 0 (0: none)", kernels, bytes);
        return NULL;
    }
    if (jit_set_kernel_limit(kernels, bytes) != 0) {
        set_library_error(KernelError);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* open_cache(dir=None): dir by keyword too, and any path-like (a pathlib.Path) */
static PyObject *py_cache_open(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"dir", NULL};
    PyObject *dir = Py_None, *bytes = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:open_cache", names, &dir))
        return as_package_error("open_cache");
    if (dir != Py_None && !PyUnicode_FSConverter(dir, &bytes)) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError))
            return as_package_error("open_cache");
        PyErr_Clear();
        return PyErr_Format(TypeMismatch, "tensorjit: open_cache(): dir must be a folder's "
                            "path (str, bytes or os.PathLike), not %s", Py_TYPE(dir)->tp_name);
    }
    int r = jit_cache_open(bytes ? PyBytes_AS_STRING(bytes) : NULL);
    Py_XDECREF(bytes);
    if (r != 0) {
        set_library_error(Error);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_cache_stats(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"clear", NULL};
    int clear = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:cache_stats", names, &clear))
        return as_package_error("cache_stats");
    int64_t entries = 0, bytes = 0;
    char dir[4096];
    if (jit_cache_stats(clear, &entries, &bytes, dir, sizeof dir) != 0)
        Py_RETURN_NONE;
    return Py_BuildValue("{s:s,s:L,s:L}", "dir", dir, "entries", (long long)entries, "bytes",
                         (long long)bytes);
}

#define FAST(name, doc) \
    {#name, (PyCFunction)(void (*)(void))py_##name, METH_FASTCALL | METH_KEYWORDS, doc}

/* The rest of an OP_info call's docstring, after its signature: the same
 * dict for every op. */
#define TJ_INFO_DOC(OP)                                                                       \
    "\n--\n\n"                                                                                \
    "What serves this call of " OP ", without running it: a dict of engine (\"jit\" or "      \
    "\"reference\": the kernel that runs these shapes), why (why not the JIT; \"\" when it "  \
    "is), compile_ms, code_bytes, out_bytes, cache_hit (loaded from the disk cache) and "     \
    "dynamic (a family's kernel). Compiles the family's kernel if needed; a signature "       \
    "error raises as in " OP " (the index values are not read)."

static PyMethodDef methods[] = {
    FAST(gather_nd,
    "gather_nd(data, indices, batch_dims=0, *, opset=8, index_policy=\"error\", out=None)\n"
    "--\n"
    "\n"
    "GatherND (OpenVINO GatherND-5/-8, ONNX GatherND, tf.gather_nd):\n"
    "out[b..., j..., rest...] = data[b..., indices[b..., j..., :], rest...] over\n"
    "the first batch_dims dims. opset 5 or 8 (only the output shape differs:\n"
    "opset 5 merges the batch dims into one). index_policy: \"error\",\n"
    "\"negative-wraps\", \"clamp\" or \"zero-fill\". Returns out (new unless given)."),
    FAST(gather_nd_info, "gather_nd_info(data, indices, batch_dims=0, *, opset=8, "
                         "index_policy='error')"
                         TJ_INFO_DOC("gather_nd")),
    FAST(gather,
    "gather(data, indices, axis=0, batch_dims=0, *, opset=8, index_policy=\"error\", out=None)\n"
    "--\n"
    "\n"
    "Gather (OpenVINO Gather-1/-7/-8, ONNX Gather, tf.gather, numpy.take):\n"
    "out[p..., i_b..., rest...] = data[p..., indices[p[:b]..., i_b...], rest...]\n"
    "where p are the positions before axis and b = batch_dims (negative ones\n"
    "count from the end); the output's shape is data.shape[:axis] +\n"
    "indices.shape[batch_dims:] + data.shape[axis+1:]. The default policy,\n"
    "\"error\", as for every op: indices in [0, s), any other raises\n"
    "IndexOutOfRange (nothing written). numpy.take's is \"negative-wraps\"\n"
    "(tensorjit.numpy.take), Gather-8's own \"negative-wraps-zero-fill\"."),
    FAST(gather_info, "gather_info(data, indices, axis=0, batch_dims=0, *, opset=8, "
                      "index_policy='error')"
                      TJ_INFO_DOC("gather")),
    FAST(gather_elements,
    "gather_elements(data, indices, axis, *, index_policy=\"error\", torch_dims=False, out=None)\n"
    "--\n"
    "\n"
    "GatherElements-6 (ONNX GatherElements, numpy.take_along_axis): out[i...] =\n"
    "data[i... with its axis coordinate replaced by indices[i...]]; data and\n"
    "indices have the same rank and the same dims but along axis, or with\n"
    "torch_dims=True dims no larger (torch.gather's rule; the result has\n"
    "indices' shape). \"error\" refuses an index outside [0, s);\n"
    "\"negative-wraps\" takes negative ones as take_along_axis does."),
    FAST(scatter_update,
    "scatter_update(data, indices, updates, axis, *, index_policy=\"error\", out=None)\n"
    "--\n"
    "\n"
    "ScatterUpdate-3: a copy of data whose slices along axis selected by\n"
    "indices are replaced by updates (of shape data.shape[:axis] + indices.shape\n"
    "+ data.shape[axis+1:]); of duplicate indices the last in row-major order\n"
    "wins. out=data runs in place (a KV-cache update); on a bad index nothing\n"
    "is written."),
    FAST(scatter_update_info, "scatter_update_info(data, indices, updates, axis, *, "
                              "index_policy='error')"
                              TJ_INFO_DOC("scatter_update")),
    FAST(gather_elements_info, "gather_elements_info(data, indices, axis, *, "
                               "index_policy='error', torch_dims=False)"
                               TJ_INFO_DOC("gather_elements")),
    FAST(scatter_nd_update_info, "scatter_nd_update_info(data, indices, updates, "
                                 "reduction='none', *, opset=None, index_policy='error')"
                                 TJ_INFO_DOC("scatter_nd_update")),
    FAST(scatter_elements_update_info,
         "scatter_elements_update_info(data, indices, updates, axis, reduction='none', "
         "use_init_val=True, *, opset=12, index_policy='error', torch_dims=False)"
         TJ_INFO_DOC("scatter_elements_update")),
    FAST(scatter_nd_update,
    "scatter_nd_update(data, indices, updates, reduction=\"none\", *, opset=None, index_policy=\"error\", out=None)\n"
    "--\n"
    "\n"
    "ScatterNDUpdate-3/-15 (ONNX ScatterND, tf.tensor_scatter_nd_update): a copy\n"
    "of data where, for each index tuple t = indices[j..., :] in row-major order\n"
    "of j, out[t...] = reduction(out[t...], updates[j...]). reduction: \"none\"\n"
    "(the last duplicate wins), \"sum\", \"sub\", \"prod\", \"min\", \"max\" (ONNX's\n"
    "\"add\", \"mul\"), applied one update after another in the element type.\n"
    "opset defaults to 3 for \"none\", else 15. out=data runs in place."),
    FAST(scatter_elements_update,
    "scatter_elements_update(data, indices, updates, axis, reduction=\"none\", use_init_val=True, *, opset=12, index_policy=\"error\", torch_dims=False, out=None)\n"
    "--\n"
    "\n"
    "ScatterElementsUpdate-3/-12 (ONNX ScatterElements, torch.scatter and\n"
    "scatter_reduce, numpy.put_along_axis): a copy of data where, for every\n"
    "element i of updates in row-major order, out[i with its axis coordinate\n"
    "replaced by indices[i]] = reduction(that, updates[i]). indices and updates\n"
    "have data's rank, and dims no larger than data's but along axis; updates\n"
    "has indices' shape, or with torch_dims=True any no smaller (torch's src:\n"
    "only the update at each index's position is read).\n"
    "reduction: \"none\", \"sum\", \"prod\", \"min\", \"max\", \"mean\" (integers: the\n"
    "floor); use_init_val=False is torch's include_self=False. out=data runs in\n"
    "place."),
    FAST(embedding_bag_offsets,
    "embedding_bag_offsets(table, indices, offsets, *, weights=None, default_index=None, reduction=\"sum\", include_last_offset=False, padding_idx=None, opset=15, index_policy=\"error\", offsets_from_zero=False, out=None)\n"
    "--\n"
    "\n"
    "EmbeddingBagOffsets (OpenVINO EmbeddingBagOffsetsSum-3 and -15, SPEC 10):\n"
    "bag b holds indices[offsets[b]:offsets[b+1]], the last bag running to\n"
    "len(indices) (include_last_offset: offsets has B + 1 entries, the last\n"
    "ending the last bag); out[b] = reduction over the bag's lookups j, in\n"
    "order, of weights[j] * table[indices[j]]. table [E, d1, ...], indices and\n"
    "offsets 1-D of one type (int32 or int64), weights (sum only) of indices'\n"
    "shape and table's dtype; output [B, d1, ...] of table's dtype and kind.\n"
    "reduction: \"sum\", \"mean\" (15), \"max\" (15, torch's). Accumulates in f32\n"
    "(f16, bf16, f32), f64 or int64, rounding once when stored; integer mean\n"
    "truncates; max propagates NaN. A bag with no lookups gets the row\n"
    "default_index when given (-1: none), else zeros; a lookup of row\n"
    "padding_idx (15, in [-E, E)) or dropped by index_policy=\"zero-fill\"\n"
    "adds nothing and is not counted by mean. Offsets must lie in [0, N] and\n"
    "not decrease, and the indices a bag reads in [0, E) under index_policy:\n"
    "else IndexOutOfRange names the lowest bad position (offsets first) and\n"
    "nothing is written. offsets_from_zero=True adds torch's rule: offsets[0]\n"
    "must be 0 (OpenVINO's leaves the indices before it unused)."),
    FAST(embedding_bag_packed,
    "embedding_bag_packed(table, indices, *, weights=None, reduction=\"sum\", padding_idx=None, opset=15, index_policy=\"error\", out=None)\n"
    "--\n"
    "\n"
    "EmbeddingBagPacked (OpenVINO EmbeddingBagPackedSum-3 and -15, SPEC 10):\n"
    "indices [B, L], bag b is row b; out[b] = reduction over j of\n"
    "weights[b, j] * table[indices[b, j]]; output [B, d1, ...]. reduction,\n"
    "padding_idx, the arithmetic and the index checks as in\n"
    "embedding_bag_offsets."),
    FAST(embedding_segments,
    "embedding_segments(table, indices, segment_ids, num_segments, *, weights=None, default_index=None, index_policy=\"error\", out=None)\n"
    "--\n"
    "\n"
    "EmbeddingSegmentsSum-3 (OpenVINO, SPEC 10; tf.math.unsorted_segment_sum of\n"
    "gathered rows): out[s] = the sum over j with segment_ids[j] == s, in order\n"
    "of j, of weights[j] * table[indices[j]]; output [num_segments, d1, ...].\n"
    "segment_ids (of indices' type and length) need not be sorted but must lie\n"
    "in [0, num_segments), else IndexOutOfRange naming the position. A segment\n"
    "no id names gets the row default_index when given (-1: none), else zeros."),
    FAST(embedding_bag_offsets_info,
         "embedding_bag_offsets_info(table, indices, offsets, *, weights=None, "
         "default_index=None, reduction='sum', include_last_offset=False, padding_idx=None, "
         "opset=15, index_policy='error', offsets_from_zero=False)"
         TJ_INFO_DOC("embedding_bag_offsets")),
    FAST(embedding_bag_packed_info,
         "embedding_bag_packed_info(table, indices, *, weights=None, reduction='sum', "
         "padding_idx=None, opset=15, index_policy='error')"
         TJ_INFO_DOC("embedding_bag_packed")),
    FAST(embedding_segments_info,
         "embedding_segments_info(table, indices, segment_ids, num_segments, *, weights=None, "
         "default_index=None, index_policy='error')"
         TJ_INFO_DOC("embedding_segments")),
    {"_compile_dynamic", py_compile_dynamic, METH_VARARGS, "the C half of compile_dynamic"},
    {"_dtype_code", py_dtype_code, METH_O, "the library's jit_dtype of a numpy dtype"},
    {"_policy_code", py_policy_code, METH_O, "jit_index_policy of a name"},
    {"_at_plain", (PyCFunction)(void (*)(void))py_at_plain, METH_FASTCALL,
     "_at_plain(a, indices, b, reduction): tensorjit.numpy's ufunc.at on its plainest calls; "
     "False (nothing written) for any other"},
    {"_at_in_bounds", (PyCFunction)(void (*)(void))py_at_in_bounds, METH_FASTCALL,
     "_at_in_bounds(a, indices): True when a call's plain indices are all in range "
     "(IndexOutOfRange naming the first that is not); False for any other call"},
    {"_reduction_code", py_reduction_code, METH_O, "jit_reduction of a name"},
    {"_op_code", py_op_code, METH_O, "(jit_op, name, has_updates) of an op's name"},
    {"_raw_shutdown", py_raw_shutdown, METH_NOARGS, "jit_shutdown() alone (tests)"},
    {"_set_max_families", py_set_max_families, METH_O, "the cap on families (tests)"},
    {"library_version", (PyCFunction)(void (*)(void))py_library_version,
     METH_VARARGS | METH_KEYWORDS,
     "library_version()\n--\n\nThe loaded C library's version (jit_version())."},
    {"shutdown", (PyCFunction)(void (*)(void))py_shutdown,
     METH_VARARGS | METH_KEYWORDS,
     "shutdown()\n--\n\nFrees every kernel (jit_shutdown()) and the module's table of them. Not to "
     "be called while another thread uses tensorjit. A DynamicKernel made before raises "
     "RuntimeError when used afterwards."},
    {"stats", (PyCFunction)(void (*)(void))py_stats,
     METH_VARARGS | METH_KEYWORDS,
     "stats()\n--\n\nA dict: compiles (kernels this module compiled in the process), kernels (its "
     "live family kernels), max_kernels (the bound on them), library_kernels and code_bytes "
     "(the library's JIT kernels alive, whoever made them)."},
    {"set_kernel_limit", (PyCFunction)(void (*)(void))py_set_kernel_limit,
     METH_VARARGS | METH_KEYWORDS,
     "set_kernel_limit(max_kernels=0, max_code_bytes=0)\n--\n\n"
     "The library frees JIT kernels nobody "
     "holds beyond these (0: no limit, the default; jit_set_kernel_limit, as "
     "$TENSORJIT_MAX_KERNELS). Without a limit the kernels this module hands back when its "
     "table starts over stay in memory. Only kernels compiled after it is set can be freed; "
     "x86-64 only (elsewhere KernelError says so)."},
    {"open_cache", (PyCFunction)(void (*)(void))py_cache_open, METH_VARARGS | METH_KEYWORDS,
     "open_cache(dir=None)\n--\n\n"
     "Kernels are looked up in dir (a str or path-like; None: $TENSORJIT_CACHE_DIR) before "
     "being compiled, and stored there after (jit_cache_open). Open it before the first "
     "call: a family compiled before stays in memory only."},
    {"cache_stats", (PyCFunction)(void (*)(void))py_cache_stats, METH_VARARGS | METH_KEYWORDS,
     "cache_stats(clear=False)\n--\n\n"
     "{dir, entries, bytes} of the open disk cache, or None when none is open; "
     "clear=True empties it first."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tensorjit._tensorjit",
    "tensorjit's calls in C over libtensorjit (see the package's docstring).", -1, methods,
    NULL, NULL, NULL, NULL};

static int add_error(PyObject *m, PyObject **slot, const char *name, PyObject *bases)
{
    *slot = PyErr_NewException(name, bases, NULL);
    if (!*slot)
        return -1;
    return PyModule_AddObjectRef(m, strrchr(name, '.') + 1, *slot);
}

static int add_errors(PyObject *m)
{
    if (add_error(m, &Error, "tensorjit.Error", NULL) != 0)
        return -1;
    PyObject *std[4] = {PyExc_ValueError, PyExc_IndexError, PyExc_TypeError,
                        PyExc_RuntimeError};
    PyObject **slots[4] = {&SignatureError, &IndexOutOfRange, &TypeMismatch, &KernelError};
    const char *names[4] = {"tensorjit.SignatureError", "tensorjit.IndexOutOfRange",
                            "tensorjit.TypeMismatch", "tensorjit.KernelError"};
    for (int i = 0; i < 4; i++) {
        PyObject *bases = PyTuple_Pack(2, Error, std[i]);
        int r = bases ? add_error(m, slots[i], names[i], bases) : -1;
        Py_XDECREF(bases);
        if (r != 0)
            return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__tensorjit(void)
{
    import_array();
    if (PyType_Ready(&DynType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    g_table_epoch = jit_epoch();
    g_new_empty = PyUnicode_InternFromString("new_empty");
    g_data_ptr = PyUnicode_InternFromString("data_ptr");
    if (!g_new_empty || !g_data_ptr || add_errors(m) != 0 || PyModule_AddObjectRef(m, "DynamicKernel", (PyObject *)&DynType) != 0 ||
        PyModule_AddIntConstant(m, "MAX_RANK", JIT_MAX_RANK) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
