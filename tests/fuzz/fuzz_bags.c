/* The embedding bags' run-time checks (SPEC 10): small valid signatures of
 * the three forms, built from the input, called on hostile indices,
 * offsets and segment ids (decreasing, negative, past N, past the table,
 * past S) through jit_call_bag on the default engine and on the reference
 * engine. Both statuses must be equal and every output byte too (one
 * guard byte past the end included); a refused call leaves out untouched.
 * Sometimes every dim is dynamic, or every dim but the table's row: the
 * dynamic kernel, called with the concrete dims, must answer as the
 * static reference does, and the reference kernel's check in parts
 * (jit_validate_bag_part) must agree with its call. A mismatch is
 * a trap; ASan (the fuzz build) catches a read or write out of bounds.
 *
 * Input: the form, opset, element and index types, policy, reduction,
 * weights, default index, padding, include_last_offset, threads and the
 * dynamic switch; then the shapes; then the buffers. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "tensorjit.h"

static const jit_dtype dtypes[] = {JIT_F32, JIT_F16, JIT_BF16, JIT_F64,
                                   JIT_I32, JIT_U8,  JIT_I64,  JIT_BOOL};

static void store(void *p, int64_t i, int size, int64_t v)
{
    if (size == 4) {
        int32_t x = (int32_t)v;
        memcpy((char *)p + i * 4, &x, 4);
    } else {
        memcpy((char *)p + i * 8, &v, 8);
    }
}

/* A value near [0, limit], of either sign, sometimes an extreme: valid
 * ones mostly, and every kind of bad one. */
static int64_t hostile(fuzz_input *in, int64_t limit)
{
    static const int64_t extremes[] = {INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX, -1,
                                       (int64_t)1 << 32, -((int64_t)1 << 32)};
    uint8_t b = fuzz_byte(in);
    if (b < 200)
        return b % (limit + 1);
    if (b < 240)
        return limit + 1 + b % 3 - (b & 4 ? 2 * (limit + 2) : 0); /* just past either end */
    return extremes[b % (sizeof extremes / sizeof *extremes)];
}

/* Offsets mostly non-decreasing in [0, N]: a running sum of small steps,
 * with a hostile value (decreasing, negative, past N) now and then. */
static void *offsets_from_input(fuzz_input *in, int64_t k, int64_t n, int size)
{
    unsigned char *p = malloc((size_t)(k * size) + 1);
    int64_t at = 0;
    for (int64_t i = 0; i < k; i++) {
        uint8_t b = fuzz_byte(in);
        if (b < 224) {
            at += b % 3;
            at = at < n ? at : n;
            store(p, i, size, at);
        } else {
            store(p, i, size, hostile(in, n));
        }
    }
    return p;
}

static void *values_from_input(fuzz_input *in, int64_t k, int64_t limit, int size)
{
    unsigned char *p = malloc((size_t)(k * size) + 1);
    for (int64_t i = 0; i < k; i++)
        store(p, i, size, hostile(in, limit));
    return p;
}

/* The table [E, d1, ...] and the form's own shapes, small. */
static void build_shapes(fuzz_input *in, jit_sig *s)
{
    fuzz_small_shape(in, &s->data_shape, 1, 3);
    int64_t n = fuzz_byte(in) % 9;
    if (s->op == JIT_OP_EMBEDDING_BAG_PACKED) {
        s->indices_shape = (jit_shape){2, {fuzz_byte(in) % 4, fuzz_byte(in) % 4}};
    } else if (s->op == JIT_OP_EMBEDDING_BAG_OFFSETS) {
        s->indices_shape = (jit_shape){1, {n}};
        int64_t b = fuzz_byte(in) % 5;
        s->updates_shape = (jit_shape){1, {b + (s->include_last_offset ? 1 : 0)}};
    } else {
        s->indices_shape = (jit_shape){1, {n}};
        s->updates_shape = (jit_shape){1, {n}};
        s->num_segments = fuzz_byte(in) % 5;
    }
}

/* The attributes the form and version take, valid by construction. */
static void build_attrs(fuzz_input *in, jit_sig *s)
{
    int64_t e = s->data_shape.dims[0];
    int v15 = s->opset == 15;
    uint8_t r = fuzz_byte(in);
    s->reduction = v15 ? (jit_reduction[]){JIT_REDUCTION_SUM, JIT_REDUCTION_MEAN,
                                           JIT_REDUCTION_MAX}[r % 3]
                       : JIT_REDUCTION_SUM;
    if (s->dtype == JIT_BOOL) /* bool tables: max only, which version 15 has */
        s->reduction = JIT_REDUCTION_MAX;
    s->has_weights = s->reduction == JIT_REDUCTION_SUM && (fuzz_byte(in) & 1);
    uint8_t f = fuzz_byte(in);
    if (s->op != JIT_OP_EMBEDDING_BAG_PACKED && (f & 1)) {
        s->has_default_index = 1;
        s->default_index = e > 0 ? (int64_t)(f >> 1) % (e + 1) - 1 : -1; /* -1: none */
    }
    if (v15 && (f & 2) && e > 0) {
        s->has_padding_idx = 1;
        s->padding_idx = (int64_t)fuzz_byte(in) % (2 * e) - e;
    }
}

static void build(fuzz_input *in, jit_sig *s)
{
    uint8_t b = fuzz_byte(in);
    s->op = (jit_op)(JIT_OP_EMBEDDING_BAG_OFFSETS + b % 3);
    s->opset = s->op == JIT_OP_EMBEDDING_SEGMENTS || !(b & 4) ? 3 : 15;
    s->dtype = dtypes[fuzz_byte(in) % 8];
    if (s->dtype == JIT_BOOL && s->opset == 3)
        s->dtype = JIT_U8;
    s->index_type = b & 8 ? JIT_I64 : JIT_I32;
    s->index_policy = (jit_index_policy)(fuzz_byte(in) % JIT_INDEX_POLICY_COUNT);
    s->threads = fuzz_byte(in) % 3;
    s->include_last_offset = s->op == JIT_OP_EMBEDDING_BAG_OFFSETS && s->opset == 15 && (b & 16);
    build_shapes(in, s);
    build_attrs(in, s);
}

/* sig with its dims dynamic, and the dims of its call (the table's, the
 * indices', the offsets' or segment ids', then S). keep_row: the table's
 * dims after the first stay static, so that the JIT's kernel serves (its
 * bag kernels take a row's width as a constant; with it dynamic the
 * reference kernel serves every call). */
static int make_dynamic(const jit_sig *s, jit_sig *dyn, int64_t *dims, int keep_row)
{
    jit_shape *shapes[3];
    int n = 0, k = 0;
    *dyn = *s;
    shapes[n++] = &dyn->data_shape;
    shapes[n++] = &dyn->indices_shape;
    if (s->op != JIT_OP_EMBEDDING_BAG_PACKED)
        shapes[n++] = &dyn->updates_shape;
    for (int i = 0; i < n; i++)
        for (int d = 0; d < shapes[i]->rank; d++) {
            dims[k++] = shapes[i]->dims[d];
            if (!(keep_row && i == 0 && d > 0))
                shapes[i]->dims[d] = JIT_DIM_DYNAMIC;
        }
    if (s->op == JIT_OP_EMBEDDING_SEGMENTS) {
        dims[k++] = s->num_segments;
        dyn->num_segments = JIT_DIM_DYNAMIC;
    }
    return k;
}

static void trap_unless(int ok)
{
    if (!ok)
        __builtin_trap();
}

static void fuzz_bag(fuzz_input *in)
{
    jit_sig s;
    memset(&s, 0, sizeof s);
    build(in, &s);
    int dynamic = fuzz_byte(in) % 3; /* 0: static, 1: every dim dynamic, 2: all but the row */
    jit_sig rs = s, ds;
    rs.engine = JIT_ENGINE_REFERENCE;
    int64_t dims[3 * JIT_MAX_RANK + 1];
    make_dynamic(&s, &ds, dims, dynamic == 2);
    jit_kernel fr = jit_compile(&rs), fj = jit_compile(dynamic ? &ds : &s);
    jit_kernel_info info;
    trap_unless(fr && fj && jit_info(fr, &info) == 0); /* every signature here is valid */
    int es = jit_dtype_size(s.dtype), is = jit_dtype_size(s.index_type);
    int64_t n = fuzz_count(&s.indices_shape), ob = info.out_bytes;
    unsigned char *table = fuzz_bytes(in, fuzz_count(&s.data_shape) * es);
    unsigned char *idx = values_from_input(in, n, s.data_shape.dims[0], is);
    unsigned char *offsets = NULL;
    if (s.op == JIT_OP_EMBEDDING_BAG_OFFSETS)
        offsets = offsets_from_input(in, fuzz_count(&s.updates_shape), n, is);
    else if (s.op == JIT_OP_EMBEDDING_SEGMENTS)
        offsets = values_from_input(in, n, s.num_segments, is);
    unsigned char *weights = s.has_weights ? fuzz_bytes(in, n * es) : NULL;
    /* one byte past the end: neither kernel may write it */
    unsigned char *o0 = malloc((size_t)ob + 1), *o1 = malloc((size_t)ob + 1);
    unsigned char *o2 = malloc((size_t)ob + 1);
    memset(o0, 0x5A, (size_t)ob + 1);
    memcpy(o1, o0, (size_t)ob + 1);
    memcpy(o2, o0, (size_t)ob + 1);
    int s2 = jit_call_bag(fr, table, idx, offsets, weights, o2);
    int s1 = dynamic ? jit_call_bag_dynamic(fj, table, idx, offsets, weights, o1, dims)
                     : jit_call_bag(fj, table, idx, offsets, weights, o1);
    trap_unless(s1 == s2 && memcmp(o1, o2, (size_t)ob + 1) == 0);
    /* a refusal is a bad index, offset or segment id, and writes nothing */
    trap_unless(s1 == JIT_OK ||
                (s1 == JIT_STATUS_BAD_INDEX && memcmp(o1, o0, (size_t)ob + 1) == 0));
    /* a pool's check (jit_validate_bag_part) in 1 to 8 parts: the call's
     * verdict, each failing part with the call's status */
    int64_t parts = 1 + fuzz_byte(in) % 8, bad = 0;
    for (int64_t part = 0; part < parts; part++) {
        int pr = jit_validate_bag_part(fr, idx, offsets, part, parts);
        trap_unless(pr == JIT_OK || pr == s2);
        bad |= pr != JIT_OK;
    }
    trap_unless(bad == (s2 != JIT_OK));
    free(table);
    free(idx);
    free(offsets);
    free(weights);
    free(o0);
    free(o1);
    free(o2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned long calls;
    fuzz_input in = {data, size};
    fuzz_bag(&in);
    if (++calls % 4096 == 0)
        jit_shutdown(); /* kernels accumulate: free them now and then */
    return 0;
}
