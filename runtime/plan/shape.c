#include "shape.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

int tj_mul_i64(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

int tj_add_i64(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

int tj_shape_product(const jit_shape *s, int from, int to, int64_t *out)
{
    int64_t p = 1;
    for (int i = from; i < to; i++)
        if (tj_mul_i64(p, s->dims[i], &p) != 0)
            return -1;
    *out = p;
    return 0;
}

const char *tj_shape_format(const jit_shape *s, char *buf, size_t len)
{
    return tj_shape_format_bounded(s, NULL, buf, len);
}

const char *tj_shape_format_bounded(const jit_shape *s, const int64_t *bound, char *buf,
                                    size_t len)
{
    size_t used = 0;
    int rank = s->rank < 0 ? 0 : s->rank > JIT_MAX_RANK ? JIT_MAX_RANK : s->rank;
    if (len < 8) {
        if (len)
            buf[0] = '\0';
        return buf;
    }
    buf[used++] = '[';
    for (int i = 0; i < rank; i++) {
        char item[48];
        int n = s->dims[i] != JIT_DIM_DYNAMIC
                    ? snprintf(item, sizeof item, "%s%" PRId64, i ? "," : "", s->dims[i])
                : bound && bound[i] > 0
                    ? snprintf(item, sizeof item, "%s?:%" PRId64, i ? "," : "", bound[i])
                    : snprintf(item, sizeof item, "%s?", i ? "," : "");
        if (used + (size_t)n + 5 > len) {
            memcpy(buf + used, "...", 3);
            used += 3;
            break;
        }
        memcpy(buf + used, item, (size_t)n);
        used += (size_t)n;
    }
    buf[used++] = ']';
    buf[used] = '\0';
    return buf;
}

int tj_shape_check(const jit_shape *s, const char *name, int min_rank)
{
    if (s->rank < min_rank) {
        if (s->rank == 0)
            return tj_error_set("rank(%s)=0 (a scalar) must be at least %d", name, min_rank);
        return tj_error_set("rank(%s)=%d must be at least %d", name, s->rank, min_rank);
    }
    if (s->rank > JIT_MAX_RANK)
        return tj_error_set("rank(%s)=%d exceeds the maximum rank %d", name, s->rank,
                            JIT_MAX_RANK);
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i] < 0)
            return tj_error_set("%s.shape[%d]=%" PRId64 " must not be negative", name, i,
                                s->dims[i]);
    return 0;
}

int tj_shape_bytes(const jit_shape *s, int elem_size, const char *name, int64_t *out)
{
    int64_t n;
    char buf[128];
    if (tj_shape_product(s, 0, s->rank, &n) == 0 && tj_mul_i64(n, elem_size, out) == 0)
        return 0;
    if (tj_error_is_muted()) /* the shape's text is the costly part: not made for nothing */
        return -1;
    return tj_error_set("%s of shape %s with %d-byte elements has more bytes than int64 holds",
                        name, tj_shape_format(s, buf, sizeof buf), elem_size);
}
