/* NumPy .npy files (format 1.0 and 2.0, little-endian, C order): the CLI's
 * way to exchange tensors with numpy, torch or any framework. */
#ifndef TJ_NPY_H
#define TJ_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tensorjit.h"

#define TJ_NPY_MAX_HEADER (1 << 20) /* larger headers are refused, not read */

typedef struct tj_npy {
    jit_dtype dtype;
    jit_shape shape;
    void *data;    /* bytes of the array; NULL when bytes == 0 */
    int64_t bytes;
} tj_npy;

/* 0 on success; -1 and a one-line message in err (which names the file's
 * problem: magic, version, header, dtype, order, size). */
int tj_npy_parse(const unsigned char *buf, size_t len, tj_npy *out, char *err, size_t err_len);
int tj_npy_read(const char *path, tj_npy *out, char *err, size_t err_len);
int tj_npy_write(const char *path, jit_dtype dtype, const jit_shape *shape, const void *data,
                 char *err, size_t err_len);
/* The same to an open stream (stdout for the CLI's -o -), flushed. */
int tj_npy_write_stream(FILE *f, jit_dtype dtype, const jit_shape *shape, const void *data,
                        char *err, size_t err_len);
void tj_npy_free(tj_npy *a);

#endif
