/* The embedding bags' reference kernel. A bag's row is reduced a column
 * chunk at a time in an accumulator on the stack (f32 for f16, bf16 and
 * f32 tables, f64, or 64-bit integers), its lookups in index order, then
 * rounded once to the table's type; so the kernel allocates nothing and
 * every thread count gives the same bits. */
#include "bag_ref.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "bag_check.h"
#include "error.h"
#include "half.h"
#include "index.h"
#include "reduce.h"

/* Accumulator elements per chunk (and segments' counts). */
#define TJ_BAG_CHUNK 2048

typedef union tj_acc {
    float f;
    double d;
    int64_t i;
    uint64_t u;
} tj_acc;

/* An element's bits, as any of the table's types. */
typedef union tj_bag_elem {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    float f;
    double d;
} tj_bag_elem;

/* Element i of a row of the table's type t, widened to the accumulator.
 * Read by memcpy: a row (a weight, an output) may sit at any address, as
 * the JIT kernel's may (test_bag_ir's outputs are misaligned on purpose,
 * and the JIT's NaN redo writes them through tj_bag_store). */
static tj_acc tj_bag_load(jit_dtype t, const void *row, int64_t i)
{
    tj_acc a = {.u = 0};
    tj_bag_elem v = {.u64 = 0};
    size_t n = (size_t)jit_dtype_size(t);
    memcpy(&v, (const char *)row + i * (int64_t)n, n);
    switch (t) {
    case JIT_F16: a.f = tj_half_to_float(v.u16); break;
    case JIT_BF16: a.f = tj_bf16_to_float(v.u16); break;
    case JIT_F32: a.f = v.f; break;
    case JIT_F64: a.d = v.d; break;
    case JIT_I8: a.i = v.i8; break;
    case JIT_I16: a.i = v.i16; break;
    case JIT_I32: a.i = v.i32; break;
    case JIT_I64: a.i = v.i64; break;
    case JIT_BOOL:
    case JIT_U8: a.u = v.u8; break;
    case JIT_U16: a.u = v.u16; break;
    case JIT_U32: a.u = v.u32; break;
    case JIT_U64: a.u = v.u64; break;
    default: break;
    }
    return a;
}

/* Rounds an accumulator once to the table's type (nearest even; integers
 * keep their low bits), written by memcpy as tj_bag_load reads. */
static void tj_bag_store(jit_dtype t, void *row, int64_t i, tj_acc a)
{
    char *at = (char *)row + i * jit_dtype_size(t);
    tj_bag_elem v;
    switch (t) {
    case JIT_F16: v.u16 = tj_float_to_half(a.f); break;
    case JIT_BF16: v.u16 = tj_float_to_bf16(a.f); break;
    case JIT_F32: v.f = a.f; break;
    case JIT_F64: v.d = a.d; break;
    case JIT_I8:
    case JIT_U8:
    case JIT_BOOL: v.u8 = (uint8_t)a.u; break;
    case JIT_I16:
    case JIT_U16: v.u16 = (uint16_t)a.u; break;
    case JIT_I32:
    case JIT_U32: v.u32 = (uint32_t)a.u; break;
    case JIT_I64:
    case JIT_U64: v.u64 = a.u; break;
    default: return;
    }
    memcpy(at, &v, (size_t)jit_dtype_size(t));
}

/* acc += v, or (weighted) acc += round_to_acc(v * w): the product is
 * rounded before the add (C11 does not contract across statements here:
 * -std=c11 compiles with -ffp-contract=off). A NaN is the scatters' rule's
 * (exec/reduce.h): the accumulator's, then the row's, then the weight's,
 * made quiet, whatever operand order the compiler picks. Integers wrap. */
static tj_acc tj_bag_add(jit_dtype acc, tj_acc a, tj_acc v, const tj_acc *w)
{
    switch (acc) {
    case JIT_F32: {
        float x = w ? tj_arith_nan_f32(v.f * w->f, v.f, w->f) : v.f;
        a.f = tj_arith_nan_f32(a.f + x, a.f, x);
        break;
    }
    case JIT_F64: {
        double x = w ? tj_arith_nan_f64(v.d * w->d, v.d, w->d) : v.d;
        a.d = tj_arith_nan_f64(a.d + x, a.d, x);
        break;
    }
    default: a.u += w ? w->u * v.u : v.u; break;
    }
    return a;
}

/* max from the first kept row; a NaN, once there, stays */
static tj_acc tj_bag_max(jit_dtype acc, tj_acc a, tj_acc v)
{
    switch (acc) {
    case JIT_F32:
        if (!isnan(a.f) && (isnan(v.f) || v.f > a.f))
            a = v;
        break;
    case JIT_F64:
        if (!isnan(a.d) && (isnan(v.d) || v.d > a.d))
            a = v;
        break;
    case JIT_I64:
        if (v.i > a.i)
            a = v;
        break;
    default:
        if (v.u > a.u)
            a = v;
        break;
    }
    return a;
}

/* sum / count: a division; integers truncate toward zero */
static tj_acc tj_bag_mean(jit_dtype acc, tj_acc a, int64_t count)
{
    switch (acc) {
    case JIT_F32: a.f = a.f / (float)count; break;
    case JIT_F64: a.d = a.d / (double)count; break;
    case JIT_I64: a.i = a.i / count; break;
    default: a.u = a.u / (uint64_t)count; break;
    }
    return a;
}

/* The row lookup j reads, or -1 when it is dropped (zero-fill, padding). */
static int64_t tj_bag_row(const tj_bag_plan *b, const void *indices, int64_t j)
{
    int64_t r;
    if (!tj_index_resolve(tj_index_load(indices, b->index_type, j), b->rows, b->policy, &r))
        return -1;
    return r == b->padding_row ? -1 : r;
}

typedef struct tj_bag_call {
    const tj_plan *p;
    const char *table, *weights;
    const void *indices, *offsets;
    char *out;
    int64_t row_bytes;
} tj_bag_call;

/* Folds lookup j's row into acc over columns [c0, c0 + w); 1 if kept. */
static int tj_bag_fold(const tj_bag_call *c, tj_acc *acc, int64_t j, int64_t c0, int64_t w,
                       int first)
{
    const tj_bag_plan *b = &c->p->bag;
    int64_t r = tj_bag_row(b, c->indices, j);
    if (r < 0)
        return 0;
    const char *row = c->table + r * c->row_bytes;
    tj_acc wt, *wp = NULL;
    if (c->weights) {
        wt = tj_bag_load(b->dtype, c->weights, j);
        wp = &wt;
    }
    for (int64_t i = 0; i < w; i++) {
        tj_acc v = tj_bag_load(b->dtype, row, c0 + i);
        if (b->reduction == JIT_REDUCTION_MAX)
            acc[i] = first ? v : tj_bag_max(b->acc_type, acc[i], v);
        else
            acc[i] = tj_bag_add(b->acc_type, acc[i], v, wp);
    }
    return 1;
}

/* Bag b's lookups [*from, *to). */
static void tj_bag_span(const tj_bag_call *c, int64_t bag, int64_t *from, int64_t *to)
{
    const tj_bag_plan *b = &c->p->bag;
    if (b->form == TJ_BAG_PACKED) {
        *from = bag * b->bag_len;
        *to = *from + b->bag_len;
        return;
    }
    *from = tj_index_load(c->offsets, b->index_type, bag);
    *to = bag + 1 < b->offsets_len ? tj_index_load(c->offsets, b->index_type, bag + 1)
                                   : b->lookups;
}

/* The row of a bag with no lookups: default_index's as it is, or zeros. */
static void tj_bag_empty(const tj_bag_call *c, char *dst)
{
    int64_t d = c->p->bag.default_index;
    if (d >= 0)
        memcpy(dst, c->table + d * c->row_bytes, (size_t)c->row_bytes);
    else
        memset(dst, 0, (size_t)c->row_bytes);
}

/* Stores a reduced chunk: a mean divided by its count, zeros when every
 * lookup was dropped. */
static void tj_bag_finish(const tj_bag_plan *b, const tj_acc *acc, int64_t kept, char *dst,
                          int64_t c0, int64_t w)
{
    for (int64_t i = 0; i < w; i++) {
        tj_acc a = acc[i];
        if (kept == 0)
            a.u = 0;
        else if (b->reduction == JIT_REDUCTION_MEAN)
            a = tj_bag_mean(b->acc_type, a, kept);
        tj_bag_store(b->dtype, dst, c0 + i, a);
    }
}

static void tj_bag_one(const tj_bag_call *c, int64_t bag)
{
    const tj_bag_plan *b = &c->p->bag;
    tj_acc acc[TJ_BAG_CHUNK];
    int64_t from, to;
    char *dst = c->out + bag * c->row_bytes;
    tj_bag_span(c, bag, &from, &to);
    if (from == to) {
        tj_bag_empty(c, dst);
        return;
    }
    for (int64_t c0 = 0; c0 < b->row_elems; c0 += TJ_BAG_CHUNK) {
        int64_t w = b->row_elems - c0 < TJ_BAG_CHUNK ? b->row_elems - c0 : TJ_BAG_CHUNK;
        int64_t kept = 0;
        memset(acc, 0, sizeof(tj_acc) * (size_t)w); /* +0 in every accumulator type */
        for (int64_t j = from; j < to; j++)
            kept += tj_bag_fold(c, acc, j, c0, w, kept == 0);
        tj_bag_finish(b, acc, kept, dst, c0, w);
    }
}

/* Segments [s0, s0 + g) over columns [c0, c0 + w): one pass over the
 * segment ids, each lookup into its segment's accumulator. */
static void tj_bag_segments_chunk(const tj_bag_call *c, int64_t s0, int64_t g, int64_t c0,
                                  int64_t w, tj_acc *acc, int64_t *named, int64_t *kept)
{
    const tj_bag_plan *b = &c->p->bag;
    memset(acc, 0, sizeof(tj_acc) * (size_t)(g * w));
    memset(named, 0, sizeof(int64_t) * (size_t)g);
    memset(kept, 0, sizeof(int64_t) * (size_t)g);
    for (int64_t j = 0; j < b->lookups; j++) {
        int64_t s = tj_index_load(c->offsets, b->index_type, j) - s0;
        if (s < 0 || s >= g)
            continue;
        named[s] = 1;
        kept[s] += tj_bag_fold(c, acc + s * w, j, c0, w, kept[s] == 0);
    }
    for (int64_t s = 0; s < g; s++) {
        char *dst = c->out + (s0 + s) * c->row_bytes;
        if (!named[s])
            tj_bag_empty(c, dst);
        else
            tj_bag_finish(b, acc + s * w, kept[s], dst, c0, w);
    }
}

/* Each group of segments is one pass over all N ids, so the groups' size
 * decides the work: N x S / group. The stack holds TJ_BAG_CHUNK
 * accumulators (2048 / D segments a group: quadratic in S, docs/
 * performance.md, 'Python's bag families'); a heap scratch of up to
 * TJ_BAG_SCRATCH bytes takes as many segments as fit, and where it cannot
 * be had the stack's groups serve. */
#define TJ_BAG_SCRATCH ((int64_t)64 << 20)

static void tj_bag_segments(const tj_bag_call *c, int64_t begin, int64_t end)
{
    const tj_bag_plan *b = &c->p->bag;
    tj_acc stack_acc[TJ_BAG_CHUNK];
    int64_t stack_named[TJ_BAG_CHUNK], stack_kept[TJ_BAG_CHUNK];
    if (b->row_elems == 0)
        return;
    int64_t w = b->row_elems < TJ_BAG_CHUNK ? b->row_elems : TJ_BAG_CHUNK;
    int64_t per = TJ_BAG_CHUNK / w;
    int64_t seg_bytes = w * (int64_t)sizeof(tj_acc) + 2 * (int64_t)sizeof(int64_t);
    int64_t want = TJ_BAG_SCRATCH / seg_bytes < end - begin ? TJ_BAG_SCRATCH / seg_bytes
                                                           : end - begin;
    tj_acc *acc = stack_acc;
    int64_t *named = stack_named, *kept = stack_kept;
    char *heap = want > per ? tj_malloc((size_t)(want * seg_bytes)) : NULL;
    if (heap) {
        per = want;
        acc = (tj_acc *)(void *)heap;
        named = (int64_t *)(void *)(heap + want * w * (int64_t)sizeof(tj_acc));
        kept = named + want;
    }
    for (int64_t c0 = 0; c0 < b->row_elems; c0 += w) {
        int64_t cw = b->row_elems - c0 < w ? b->row_elems - c0 : w;
        for (int64_t s0 = begin; s0 < end; s0 += per)
            tj_bag_segments_chunk(c, s0, end - s0 < per ? end - s0 : per, c0, cw, acc, named,
                                  kept);
    }
    tj_free(heap);
}

int tj_bag_ref_range(const tj_plan *p, const void *table, const void *indices,
                     const void *offsets, const void *weights, void *out, int64_t begin,
                     int64_t end)
{
    const tj_bag_plan *b = &p->bag;
    tj_bag_call c = {p, table, b->has_weights ? weights : NULL, indices, offsets, out,
                     b->row_elems * (int64_t)jit_dtype_size(b->dtype)};
    if (begin < 0)
        begin = 0;
    if (end > b->bags)
        end = b->bags;
    if (begin >= end || c.row_bytes == 0)
        return JIT_OK; /* rows of no bytes: nothing to write, however many bags */
    if (b->form == TJ_BAG_SEGMENTS)
        tj_bag_segments(&c, begin, end);
    else
        for (int64_t bag = begin; bag < end; bag++)
            tj_bag_one(&c, bag);
    return JIT_OK;
}

/* Element i of a float row (the table's type) is a NaN: its exponent all
 * ones, its fraction not zero. */
static int tj_row_nan_at(const unsigned char *row, jit_dtype t, int64_t i)
{
    if (t == JIT_F64) {
        uint64_t v;
        memcpy(&v, row + 8 * i, 8);
        return (v & ~(UINT64_C(1) << 63)) > UINT64_C(0x7ff0000000000000);
    }
    if (t == JIT_F32) {
        uint32_t v;
        memcpy(&v, row + 4 * i, 4);
        return (v & 0x7fffffffu) > 0x7f800000u;
    }
    uint16_t v;
    memcpy(&v, row + 2 * i, 2);
    return (v & 0x7fffu) > (t == JIT_BF16 ? 0x7f80u : 0x7c00u);
}

static int tj_row_has_nan(const unsigned char *row, jit_dtype t, int64_t n)
{
    int nan = 0;
    for (int64_t i = 0; i < n; i++)
        nan |= tj_row_nan_at(row, t, i);
    return nan;
}

int tj_bag_ref_redo_nan(const tj_plan *p, const void *table, const void *indices,
                        const void *offsets, const void *weights, void *out, int64_t begin,
                        int64_t end)
{
    const tj_bag_plan *b = &p->bag;
    int64_t row_bytes = b->row_elems * (int64_t)jit_dtype_size(b->dtype);
    if (begin < 0)
        begin = 0;
    if (end > b->bags)
        end = b->bags;
    int64_t run = -1; /* the first of the bags with a NaN before `bag`, or -1 */
    for (int64_t bag = begin; bag <= end; bag++) {
        int nan = bag < end && tj_row_has_nan((const unsigned char *)out + bag * row_bytes,
                                              b->dtype, b->row_elems);
        if (nan && run < 0)
            run = bag;
        if (nan || run < 0)
            continue;
        int rc = tj_bag_ref_range(p, table, indices, offsets, weights, out, run, bag);
        if (rc != JIT_OK)
            return rc;
        run = -1;
    }
    return JIT_OK;
}

int tj_bag_ref_run(const tj_plan *p, const void *table, const void *indices, const void *offsets,
                   const void *weights, void *out)
{
    int rc = tj_bag_check_buffers(&p->bag, table, indices, offsets, weights, out);
    if (rc == JIT_OK)
        rc = tj_bag_report_bad(p, indices, offsets);
    if (rc == JIT_OK)
        rc = tj_bag_ref_range(p, table, indices, offsets, weights, out, 0, p->bag.bags);
    return rc;
}
