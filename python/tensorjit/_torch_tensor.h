/* A torch.Tensor's memory read through its own attributes, without a
 * DLPack export (_torch_tensor.c). */
#ifndef TJ_PY_TORCH_TENSOR_H
#define TJ_PY_TORCH_TENSOR_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include <tensorjit.h>

typedef struct {
    PyObject *owner; /* a reference: the tensor read (obj, or its resolve_neg()) */
    char *ptr;
    int ndim;
    int64_t dims[JIT_MAX_RANK];
    jit_dtype dtype;
} tj_torch_view;

/* 1 and *v when obj is a plain torch.Tensor in CPU memory, dense
 * (row-major), of a dtype the library has, needing no autograd (a tensor
 * with the negative bit is read through its resolve_neg()); 0 for
 * anything else (the caller's DLPack path then says what is wrong, or
 * copies); -1 with an exception set when an attribute failed;
 * TJ_TORCH_NEG_OUT, no exception set, for an out (for_out) with the
 * negative bit, whose values no write could reach. torch is never
 * imported here: a tensor exists only once it is. */
#define TJ_TORCH_NEG_OUT (-2)
int tj_torch_view_of(PyObject *obj, int for_out, tj_torch_view *v);

/* 1 while torch.jit.trace records (its tracer would see a result's
 * allocation and not the kernel's writes); 0 otherwise or without torch. */
int tj_torch_tracing(void);

/* 1 when torch's grad mode is on (not under no_grad or inference_mode). */
int tj_torch_grad_enabled(void);

/* 1 when obj's type is torch.Tensor itself (not a subclass, whose methods
 * may answer otherwise); 0 otherwise or without torch. */
int tj_torch_plain(PyObject *obj);

/* 1 when obj is a torch.Tensor whose new_empty is torch's own (the plain
 * type, or a subclass such as nn.Parameter that leaves it as it is): its
 * result has the dtype and shape asked for. */
int tj_torch_own_new_empty(PyObject *obj);

/* After a kernel wrote into the torch tensor t in place (out=): its
 * version counter moved, as torch's own in-place ops move it, so that
 * autograd refuses a backward through a tensor it saved before the write
 * rather than computing wrong gradients. torch >= 2.1's
 * torch.autograd.graph.increment_version; before it, an in-place zero_()
 * of an empty view of t (which shares t's counter; a few us, so only in
 * grad mode). Best effort: a tensor without a counter (made under
 * inference_mode) is left as it is. */
void tj_torch_wrote(PyObject *t);

#endif
