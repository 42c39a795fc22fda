/* Arbitrary bytes decoded into a signature of any op of the family, through
 * the generic API (jit_sig): ranks past the maximum, dims that overflow,
 * unknown enum values, axes and batch_dims of either sign. A signature is
 * either refused cleanly (NULL, one line of jit_last_error(), and every
 * entry point agrees) or it compiles, and its reference kernel then runs
 * on buffers of exactly the signature's sizes (so that ASan sees any byte
 * read or written outside them) with index values taken from the input,
 * under whichever policy the input chose. Nothing may crash, leak or touch
 * memory outside a buffer; a bad index leaves out untouched.
 *
 * Input: byte 0 picks the op (JIT_OP_NONE+1 .. JIT_OP_COUNT-1); the rest
 * fills the signature field by field, then the buffers. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "tensorjit.h"

static void fuzz_shape(fuzz_input *in, jit_shape *s)
{
    s->rank = fuzz_byte(in) % 36; /* above JIT_MAX_RANK too */
    for (int i = 0; i < s->rank && i < JIT_MAX_RANK; i++)
        s->dims[i] = fuzz_value(in);
}

/* A value of either sign: axes and batch_dims count from the end when
 * negative. Negated through uint64_t so that INT64_MIN stays defined. */
static int64_t fuzz_signed(fuzz_input *in)
{
    uint64_t v = (uint64_t)fuzz_value(in);
    return (int64_t)(fuzz_byte(in) & 1 ? 0u - v : v);
}

/* Bytes of a shape, INT64_MAX when the product overflows (the library
 * accepted the signature, but a partial product taken in another order
 * may still overflow). */
static int64_t bytes_of(const jit_shape *s, jit_dtype t)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        if (__builtin_mul_overflow(n, s->dims[i], &n))
            return INT64_MAX;
    return __builtin_mul_overflow(n, (int64_t)jit_dtype_size(t), &n) ? INT64_MAX : n;
}

/* Exactly n bytes (malloc(0) under ASan is a live zero-byte block, so
 * even a one-byte access of an empty buffer is caught). */
static unsigned char *filled(fuzz_input *in, int64_t n)
{
    unsigned char *p = malloc((size_t)n);
    for (int64_t i = 0; p && i < n; i++)
        p[i] = fuzz_byte(in);
    return p;
}

static int is_one_line(const char *msg)
{
    return msg && msg[0] && !strchr(msg, '\n');
}

static void fuzz_op(fuzz_input *in, jit_op op)
{
    jit_op_info oi;
    if (jit_op_describe(op, &oi) != 0)
        abort(); /* every op in (NONE, COUNT) describes itself */
    jit_sig s;
    memset(&s, 0, sizeof s);
    s.op = op;
    uint8_t ob = fuzz_byte(in);
    /* mostly one of the op's own versions, sometimes anything */
    s.opset = ob < 128 ? oi.opsets[ob % 4] : ob % 20;
    s.axis = fuzz_signed(in);
    s.batch_dims = (int)fuzz_signed(in);
    s.dtype = (jit_dtype)(fuzz_byte(in) % (JIT_DTYPE_COUNT + 2));
    s.updates_dtype = (jit_dtype)(fuzz_byte(in) % (JIT_DTYPE_COUNT + 2));
    s.index_type = (jit_dtype)(fuzz_byte(in) % (JIT_DTYPE_COUNT + 2));
    s.axis_type = (jit_dtype)(fuzz_byte(in) % (JIT_DTYPE_COUNT + 2));
    s.index_policy = (jit_index_policy)(fuzz_byte(in) % (JIT_INDEX_POLICY_COUNT + 1));
    s.engine = JIT_ENGINE_REFERENCE; /* fuzz_differential runs the JIT */
    s.threads = (int)fuzz_signed(in);
    /* out-of-range reductions too */
    s.reduction = (jit_reduction)(fuzz_byte(in) % (JIT_REDUCTION_COUNT + 1));
    s.no_init_val = fuzz_byte(in) & 1;
    if (oi.attrs & JIT_ATTR_AXIS_TENSOR)
        fuzz_shape(in, &s.axis_shape);
    fuzz_shape(in, &s.data_shape);
    fuzz_shape(in, &s.indices_shape);
    if (oi.has_updates)
        fuzz_shape(in, &s.updates_shape);

    jit_shape out;
    if (jit_output_shape(&s, &out) != 0) {
        /* refused: with a message, and by every entry point alike */
        if (!is_one_line(jit_last_error()) || jit_compile(&s) || jit_explain(&s))
            abort();
        int depth;
        int64_t dims[JIT_MAX_RANK];
        if (jit_index_dims(&s, &depth, dims) == 0)
            abort();
        return;
    }
    jit_free(jit_explain(&s));
    int depth;
    int64_t dims[JIT_MAX_RANK];
    if (jit_index_dims(&s, &depth, dims) != 0 || depth < 0 || depth > JIT_MAX_RANK)
        abort();
    jit_kernel fn = jit_compile(&s);
    jit_kernel_info info;
    if (!fn || jit_info(fn, &info) != 0 || info.op != op)
        abort(); /* a valid signature always gets a kernel of its op */
    int64_t db = bytes_of(&s.data_shape, s.dtype), ib = bytes_of(&s.indices_shape, s.index_type);
    int64_t ub = oi.has_updates ? bytes_of(&s.updates_shape, s.dtype) : 0;
    int64_t ob_ = bytes_of(&out, s.dtype);
    if (ob_ != INT64_MAX && ob_ != info.out_bytes)
        abort(); /* the kernel writes what the output shape says */
    if (db > 65536 || ib > 65536 || ub > 65536 || info.out_bytes > 65536)
        return;
    unsigned char *data = filled(in, db), *idx = filled(in, ib);
    unsigned char *upd = oi.has_updates ? filled(in, ub) : NULL;
    unsigned char *o = malloc((size_t)info.out_bytes), *o0 = malloc((size_t)info.out_bytes);
    memset(o, 0xA5, (size_t)info.out_bytes);
    memcpy(o0, o, (size_t)info.out_bytes);
    int rc = jit_call(fn, data, idx, upd, o);
    if (rc != JIT_OK && rc != JIT_STATUS_BAD_INDEX)
        abort();
    if (rc == JIT_STATUS_BAD_INDEX && memcmp(o, o0, (size_t)info.out_bytes) != 0)
        abort(); /* nothing written on a bad index */
    /* validate agrees with the call, and a checked run split in two parts
     * stays inside the buffers too */
    if (jit_validate(fn, idx) != rc)
        abort();
    int64_t units = jit_units(fn);
    if (units < 0)
        abort();
    if (rc == JIT_OK && !oi.has_updates) {
        if (jit_run_range(fn, data, idx, upd, o, 0, units / 2) != 0 ||
            jit_run_range(fn, data, idx, upd, o, units / 2, units) != 0)
            abort();
    }
    if (oi.has_updates) {
        memcpy(o0, data, (size_t)db);
        if (jit_call(fn, data, idx, upd, data) != rc) /* in place */
            abort();
        if (rc == JIT_STATUS_BAD_INDEX && memcmp(data, o0, (size_t)db) != 0)
            abort();
    }
    free(data);
    free(idx);
    free(upd);
    free(o);
    free(o0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size};
    jit_op op = (jit_op)(JIT_OP_NONE + 1 + fuzz_byte(&in) % (JIT_OP_COUNT - 1));
    fuzz_op(&in, op);
    jit_shutdown(); /* frees every kernel: memory stays bounded */
    return 0;
}
