/*
 * The reductions' arithmetic. Integers wrap (two's complement, computed in
 * the unsigned type: no undefined behaviour); f16 and bf16 are widened to
 * f32 and rounded back to nearest even after every step; min and max
 * return a NaN operand when there is one (the first, out's, before the
 * update's), else the smaller or larger, out's on a tie; a sum, sub or
 * prod that gives a NaN gives out's NaN made quiet if out is one, else the
 * update's made quiet, else the default NaN (x86's: negative, quiet), so
 * that no compiler's choice of operand order shows (gcc swaps a + b and
 * a * b, and LLVM leaves a NaN result's bits open); bool is 0 or 1: sum
 * and max are or, prod and min and, sub xor.
 */
#include "reduce.h"

#include <math.h>
#include <string.h>

#include "half.h"

static float tj_nan_min(float a, float b)
{
    return isnan(a) ? a : isnan(b) ? b : b < a ? b : a;
}

static float tj_nan_max(float a, float b)
{
    return isnan(a) ? a : isnan(b) ? b : b > a ? b : a;
}

static double tj_nan_mind(double a, double b)
{
    return isnan(a) ? a : isnan(b) ? b : b < a ? b : a;
}

static double tj_nan_maxd(double a, double b)
{
    return isnan(a) ? a : isnan(b) ? b : b > a ? b : a;
}

float tj_arith_nan_f32(float v, float a, float b)
{
    if (!isnan(v))
        return v;
    uint32_t x = 0xffc00000u;
    if (isnan(a))
        memcpy(&x, &a, 4);
    else if (isnan(b))
        memcpy(&x, &b, 4);
    x |= 0x00400000u;
    memcpy(&v, &x, 4);
    return v;
}

double tj_arith_nan_f64(double v, double a, double b)
{
    if (!isnan(v))
        return v;
    uint64_t x = 0xfff8000000000000ull;
    if (isnan(a))
        memcpy(&x, &a, 8);
    else if (isnan(b))
        memcpy(&x, &b, 8);
    x |= 0x0008000000000000ull;
    memcpy(&v, &x, 8);
    return v;
}

static float tj_op_f32(jit_reduction r, float a, float b)
{
    switch (r) {
    case JIT_REDUCTION_SUM:
    case JIT_REDUCTION_MEAN: return tj_arith_nan_f32(a + b, a, b);
    case JIT_REDUCTION_SUB: return tj_arith_nan_f32(a - b, a, b);
    case JIT_REDUCTION_PROD: return tj_arith_nan_f32(a * b, a, b);
    case JIT_REDUCTION_MIN: return tj_nan_min(a, b);
    case JIT_REDUCTION_MAX: return tj_nan_max(a, b);
    default: return b;
    }
}

static double tj_op_f64(jit_reduction r, double a, double b)
{
    switch (r) {
    case JIT_REDUCTION_SUM:
    case JIT_REDUCTION_MEAN: return tj_arith_nan_f64(a + b, a, b);
    case JIT_REDUCTION_SUB: return tj_arith_nan_f64(a - b, a, b);
    case JIT_REDUCTION_PROD: return tj_arith_nan_f64(a * b, a, b);
    case JIT_REDUCTION_MIN: return tj_nan_mind(a, b);
    case JIT_REDUCTION_MAX: return tj_nan_maxd(a, b);
    default: return b;
    }
}

/* Integers of every width, as int64 read by sign: the result is cut to the
 * width by the store, which makes sum, sub and prod wrap. */
static uint64_t tj_op_int(jit_reduction r, int64_t a, int64_t b)
{
    switch (r) {
    case JIT_REDUCTION_SUM:
    case JIT_REDUCTION_MEAN: return (uint64_t)a + (uint64_t)b;
    case JIT_REDUCTION_SUB: return (uint64_t)a - (uint64_t)b;
    case JIT_REDUCTION_PROD: return (uint64_t)a * (uint64_t)b;
    case JIT_REDUCTION_MIN: return (uint64_t)(b < a ? b : a);
    case JIT_REDUCTION_MAX: return (uint64_t)(b > a ? b : a);
    default: return (uint64_t)b;
    }
}

static uint64_t tj_op_uint(jit_reduction r, uint64_t a, uint64_t b)
{
    switch (r) {
    case JIT_REDUCTION_MIN: return b < a ? b : a;
    case JIT_REDUCTION_MAX: return b > a ? b : a;
    default: return tj_op_int(r, (int64_t)a, (int64_t)b);
    }
}

static uint8_t tj_op_bool(jit_reduction r, uint8_t a, uint8_t b)
{
    a = a != 0;
    b = b != 0;
    switch (r) {
    case JIT_REDUCTION_SUM:
    case JIT_REDUCTION_MAX: return a | b;
    case JIT_REDUCTION_PROD:
    case JIT_REDUCTION_MIN: return a & b;
    case JIT_REDUCTION_SUB: return a ^ b;
    default: return b;
    }
}

#define TJ_SIGNED(T)                                                                          \
    for (int64_t i = 0; i < n; i++) {                                                         \
        T x, y;                                                                               \
        memcpy(&x, (char *)dst + i * (int64_t)sizeof x, sizeof x);                            \
        memcpy(&y, (const char *)src + i * (int64_t)sizeof y, sizeof y);                      \
        x = (T)tj_op_int(r, x, y);                                                            \
        memcpy((char *)dst + i * (int64_t)sizeof x, &x, sizeof x);                            \
    }
#define TJ_UNSIGNED(T)                                                                        \
    for (int64_t i = 0; i < n; i++) {                                                         \
        T x, y;                                                                               \
        memcpy(&x, (char *)dst + i * (int64_t)sizeof x, sizeof x);                            \
        memcpy(&y, (const char *)src + i * (int64_t)sizeof y, sizeof y);                      \
        x = (T)tj_op_uint(r, x, y);                                                           \
        memcpy((char *)dst + i * (int64_t)sizeof x, &x, sizeof x);                            \
    }
#define TJ_HALF(TO_F, FROM_F)                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                         \
        uint16_t x, y;                                                                        \
        memcpy(&x, (char *)dst + 2 * i, 2);                                                   \
        memcpy(&y, (const char *)src + 2 * i, 2);                                             \
        x = FROM_F(tj_op_f32(r, TO_F(x), TO_F(y)));                                           \
        memcpy((char *)dst + 2 * i, &x, 2);                                                   \
    }

void tj_reduce_elems(const tj_plan *p, void *dst, const void *src, int64_t n)
{
    jit_reduction r = p->reduction;
    switch (p->dtype) {
    case JIT_BOOL:
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = tj_op_bool(r, ((uint8_t *)dst)[i], ((const uint8_t *)src)[i]);
        break;
    case JIT_I8: TJ_SIGNED(int8_t) break;
    case JIT_U8: TJ_UNSIGNED(uint8_t) break;
    case JIT_I16: TJ_SIGNED(int16_t) break;
    case JIT_U16: TJ_UNSIGNED(uint16_t) break;
    case JIT_I32: TJ_SIGNED(int32_t) break;
    case JIT_U32: TJ_UNSIGNED(uint32_t) break;
    case JIT_I64: TJ_SIGNED(int64_t) break;
    case JIT_U64: TJ_UNSIGNED(uint64_t) break;
    case JIT_F16: TJ_HALF(tj_half_to_float, tj_float_to_half) break;
    case JIT_BF16: TJ_HALF(tj_bf16_to_float, tj_float_to_bf16) break;
    case JIT_F32:
        for (int64_t i = 0; i < n; i++) {
            float x, y;
            memcpy(&x, (char *)dst + 4 * i, 4);
            memcpy(&y, (const char *)src + 4 * i, 4);
            x = tj_op_f32(r, x, y);
            memcpy((char *)dst + 4 * i, &x, 4);
        }
        break;
    case JIT_F64:
        for (int64_t i = 0; i < n; i++) {
            double x, y;
            memcpy(&x, (char *)dst + 8 * i, 8);
            memcpy(&y, (const char *)src + 8 * i, 8);
            x = tj_op_f64(r, x, y);
            memcpy((char *)dst + 8 * i, &x, 8);
        }
        break;
    default:
        break;
    }
}

/* The neutral value of one element, as bytes. */
static void tj_neutral_of(const tj_plan *p, unsigned char *v)
{
    int lowest = p->reduction == JIT_REDUCTION_MAX, highest = p->reduction == JIT_REDUCTION_MIN;
    int one = p->reduction == JIT_REDUCTION_PROD;
    int size = p->elem_size;
    memset(v, 0, 8);
    if (!lowest && !highest && !one)
        return;
    switch (p->dtype) {
    case JIT_BOOL: v[0] = highest || one; return; /* and: 1; or: 0 */
    case JIT_F16: {
        uint16_t h = one ? 0x3c00 : highest ? 0x7c00 : 0xfc00;
        memcpy(v, &h, 2);
        return;
    }
    case JIT_BF16: {
        uint16_t h = one ? 0x3f80 : highest ? 0x7f80 : 0xff80;
        memcpy(v, &h, 2);
        return;
    }
    case JIT_F32: {
        float f = one ? 1.0f : highest ? INFINITY : -INFINITY;
        memcpy(v, &f, 4);
        return;
    }
    case JIT_F64: {
        double d = one ? 1.0 : highest ? INFINITY : -INFINITY;
        memcpy(v, &d, 8);
        return;
    }
    default:
        break;
    }
    int is_signed = p->dtype == JIT_I8 || p->dtype == JIT_I16 || p->dtype == JIT_I32 ||
                    p->dtype == JIT_I64;
    uint64_t bits = one ? 1 : ~(uint64_t)0; /* unsigned highest: all ones */
    if (is_signed && highest)
        bits = ~(uint64_t)0 >> (65 - 8 * size); /* 0111..1 */
    else if (is_signed && lowest)
        bits = (uint64_t)1 << (8 * size - 1); /* 1000..0 */
    else if (lowest)
        bits = 0;
    memcpy(v, &bits, (size_t)size); /* little-endian: the low bytes */
}

void tj_reduce_neutral(const tj_plan *p, void *dst, int64_t n)
{
    unsigned char v[8];
    tj_neutral_of(p, v);
    for (int64_t i = 0; i < n; i++)
        memcpy((char *)dst + i * p->elem_size, v, (size_t)p->elem_size);
}

int tj_reduce_wide_sum(const tj_plan *p)
{
    switch (p->dtype) {
    case JIT_F16:
    case JIT_BF16:
    case JIT_F32:
    case JIT_F64: return 0;
    default: return 1;
    }
}

int64_t tj_reduce_load_wide(const tj_plan *p, const void *src)
{
    switch (p->dtype) {
    case JIT_I8: return *(const int8_t *)src;
    case JIT_U8: return *(const uint8_t *)src;
    case JIT_I16: { int16_t v; memcpy(&v, src, 2); return v; }
    case JIT_U16: { uint16_t v; memcpy(&v, src, 2); return v; }
    case JIT_I32: { int32_t v; memcpy(&v, src, 4); return v; }
    case JIT_U32: { uint32_t v; memcpy(&v, src, 4); return v; }
    default: { int64_t v; memcpy(&v, src, 8); return v; }
    }
}

static int tj_unsigned(jit_dtype t)
{
    return t == JIT_U8 || t == JIT_U16 || t == JIT_U32 || t == JIT_U64;
}

void tj_reduce_mean_store(const tj_plan *p, void *dst, int64_t sum, int64_t count)
{
    if (count <= 0)
        return;
    if (!tj_reduce_wide_sum(p)) { /* dst holds the float sum */
        if (p->dtype == JIT_F64) {
            double d;
            memcpy(&d, dst, 8);
            d /= (double)count;
            memcpy(dst, &d, 8);
        } else if (p->dtype == JIT_F32) {
            float f;
            memcpy(&f, dst, 4);
            f /= (float)count;
            memcpy(dst, &f, 4);
        } else {
            uint16_t h;
            memcpy(&h, dst, 2);
            int bf = p->dtype == JIT_BF16;
            float f = (bf ? tj_bf16_to_float(h) : tj_half_to_float(h)) / (float)count;
            h = bf ? tj_float_to_bf16(f) : tj_float_to_half(f);
            memcpy(dst, &h, 2);
        }
        return;
    }
    uint64_t q;
    if (tj_unsigned(p->dtype)) {
        q = (uint64_t)sum / (uint64_t)count;
    } else {
        int64_t s = sum / count;
        if (sum % count != 0 && sum < 0) /* toward negative infinity */
            s--;
        q = (uint64_t)s;
    }
    memcpy(dst, &q, (size_t)p->elem_size); /* little-endian: the low bytes */
}
