/*
 * The DLPack ABI (v0.8, dmlc/dlpack's dlpack.h), as much of it as a
 * consumer of CPU tensors reads. The layout is the protocol's, fixed for
 * every producer: torch, jax, cupy, numpy >= 1.22 all hand out a
 * PyCapsule named "dltensor" that holds a DLManagedTensor.
 */
#ifndef TENSORJIT_DLPACK_H
#define TENSORJIT_DLPACK_H

#include <stdint.h>

enum { TJ_DL_CPU = 1, TJ_DL_CUDA_HOST = 3, TJ_DL_CPU_SHARED = 9 };
enum { TJ_DL_INT = 0, TJ_DL_UINT = 1, TJ_DL_FLOAT = 2, TJ_DL_BFLOAT = 4, TJ_DL_BOOL = 6 };

typedef struct {
    int32_t device_type;
    int32_t device_id;
} tj_dl_device;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} tj_dl_dtype;

typedef struct {
    void *data;
    tj_dl_device device;
    int32_t ndim;
    tj_dl_dtype dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL: compact row-major */
    uint64_t byte_offset;
} tj_dl_tensor;

typedef struct tj_dl_managed {
    tj_dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct tj_dl_managed *self);
} tj_dl_managed;

#endif
