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

#endif
