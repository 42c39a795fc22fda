/* Checked arithmetic on shapes: every byte count must fit in int64. */
#ifndef TJ_SHAPE_H
#define TJ_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "tensorjit.h"

/* 0 and *out = a * b, or -1 when it overflows int64. */
int tj_mul_i64(int64_t a, int64_t b, int64_t *out);
/* 0 and *out = a + b, or -1 when it overflows int64. */
int tj_add_i64(int64_t a, int64_t b, int64_t *out);

/* Product of dims[from .. to); -1 on overflow. */
int tj_shape_product(const jit_shape *s, int from, int to, int64_t *out);

/* "[2,3,4]" into buf (truncated with "..." when it does not fit). */
const char *tj_shape_format(const jit_shape *s, char *buf, size_t len);
/* The same with a dynamic dim's upper bound (bound[i] > 0) as ?:N, as the
 * CLI and the model listing write it; bound may be NULL. */
const char *tj_shape_format_bounded(const jit_shape *s, const int64_t *bound, char *buf,
                                    size_t len);

/* Checks rank range and non-negative dims of one named input. */
int tj_shape_check(const jit_shape *s, const char *name, int min_rank);

/* Total bytes of a tensor of shape s and element size; -1 on overflow
 * (the message names `name`). */
int tj_shape_bytes(const jit_shape *s, int elem_size, const char *name, int64_t *out);

#endif
