/* Arbitrary bytes decoded into a signature of any op of the family, through
 * the generic API (jit_sig): ranks past the maximum, dims that overflow,
 * unknown enum values, axes and batch_dims of either sign. A signature is
 * either refused cleanly (NULL, one line of jit_last_error(), and every
 * entry point agrees) or it compiles, and its reference kernel then runs
 * on buffers of exactly the signature's sizes (so that ASan sees any byte
 * read or written outside them) with index values taken from the input,
 * under whichever policy the input chose. Nothing may crash, leak or touch
 * memory outside a buffer; a bad index leaves out untouched. An embedding
 * bag's kernel runs through jit_call_bag (the generic calls refuse it).
 *
 * Input: byte 0 picks the op (JIT_OP_NONE+1 .. JIT_OP_COUNT-1) and, when
 * its high bit is set, the dynamic mode; the rest fills the signature
 * field by field, then the buffers.
 *
 * Dynamic signatures (SPEC section 6, runtime/dyn/dyn.c): in the dynamic mode
 * two more bytes after the shapes pick which dims become JIT_DIM_DYNAMIC
 * and whether they get bounds (the decoded dims, or 1 + the second byte),
 * and the decoded dims are the call's. Any signature with a dynamic dim
 * (the values also decode to -1 by themselves) goes that way: the family
 * is refused with one line, or its kernel is dynamic, and a call with the
 * dims either fails with BAD_SHAPE touching nothing (when jit_sig_bind or
 * jit_output_shape refuse them) or agrees, status and bytes, with the
 * static kernel of the bound signature. Inputs whose byte 0 is below 0x80
 * (every regression input so far) decode as before. */
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

/* The dims a dynamic call passes, of the inputs op takes: data, indices,
 * [updates]; 0 when a rank is out of range. */
static int call_dims(jit_sig *s, int has_updates, int64_t **at, int64_t **bound)
{
    jit_shape *sh[3] = {&s->data_shape, &s->indices_shape, &s->updates_shape};
    int64_t *b[3] = {s->data_bound, s->indices_bound, s->updates_bound};
    int n = 0;
    for (int i = 0; i < 2 + has_updates; i++) {
        if (sh[i]->rank < 0 || sh[i]->rank > JIT_MAX_RANK)
            return 0;
        for (int d = 0; d < sh[i]->rank; d++, n++) {
            at[n] = &sh[i]->dims[d];
            bound[n] = &b[i][d];
        }
    }
    return n;
}

/* A dynamic signature: see the head of the file. dims: the call's. */
static void fuzz_dynamic(fuzz_input *in, const jit_op_info *oi, jit_sig *s, const int64_t *dims)
{
    jit_kernel fn = jit_compile(s);
    if (!fn) {
        /* refused with one line, by jit_output_shape alike. (A family
         * with a valid shape beyond the template search's reach may be
         * refused: runtime/dyn/dyn_template.c; not checked here.) */
        jit_shape o;
        if (!is_one_line(jit_last_error()) || jit_output_shape(s, &o) == 0)
            abort();
        return;
    }
    jit_kernel_info info;
    if (jit_info(fn, &info) != 0 || !info.dynamic || info.out_bytes != -1 || info.op != s->op)
        abort();
    jit_shape dyn_out;
    if (jit_output_shape(s, &dyn_out) != 0 && !strstr(jit_last_error(), "rank depends"))
        abort(); /* compiled, so the family has a shape, unless even its rank varies */
    if (jit_units(fn) != -1) /* the parts API refuses dynamic kernels */
        abort();
    jit_sig c;
    jit_shape out;
    unsigned char small[4][64];
    memset(small, 0x3c, sizeof small);
    if (jit_sig_bind(s, dims, &c) != 0 || jit_output_shape(&c, &out) != 0) {
        /* a shape outside the family: BAD_SHAPE, nothing read or written */
        if (!is_one_line(jit_last_error()))
            abort();
        if (jit_call_dynamic(fn, small[0], small[1], small[2], small[3], dims) !=
            JIT_STATUS_BAD_SHAPE)
            abort();
        for (size_t i = 0; i < sizeof small[3]; i++)
            if (small[3][i] != 0x3c)
                abort();
        return;
    }
    if (jit_call(fn, small[0], small[1], small[2], small[3]) != JIT_STATUS_BAD_SHAPE)
        abort(); /* a dynamic kernel is no static one */
    jit_kernel st = jit_compile(&c);
    jit_kernel_info si;
    if (!st || jit_info(st, &si) != 0 || si.dynamic)
        abort(); /* the bound signature is valid */
    int64_t db = bytes_of(&c.data_shape, c.dtype), ib = bytes_of(&c.indices_shape, c.index_type);
    int64_t ub = oi->has_updates ? bytes_of(&c.updates_shape, c.dtype) : 0;
    int64_t ob = si.out_bytes;
    if (db > 65536 || ib > 65536 || ub > 65536 || ob > 65536)
        return;
    unsigned char *data = filled(in, db), *idx = filled(in, ib);
    unsigned char *upd = oi->has_updates ? filled(in, ub) : NULL;
    unsigned char *o1 = malloc((size_t)ob), *o2 = malloc((size_t)ob);
    memset(o1, 0xA5, (size_t)ob);
    memset(o2, 0xA5, (size_t)ob);
    int rc1 = jit_call_dynamic(fn, data, idx, upd, o1, dims);
    int rc2 = jit_call(st, data, idx, upd, o2);
    if (rc1 != rc2 || memcmp(o1, o2, (size_t)ob) != 0)
        abort(); /* the dynamic kernel is the static one's shape by shape */
    if (oi->has_updates && ob == db) {
        memcpy(o1, data, (size_t)db);
        if (((jit_dynamic_fn)fn)(o1, idx, upd, o1, dims) != rc2 ||
            (rc2 == JIT_OK && memcmp(o1, o2, (size_t)ob) != 0) ||
            (rc2 != JIT_OK && memcmp(o1, data, (size_t)db) != 0))
            abort(); /* in place */
    }
    free(data);
    free(idx);
    free(upd);
    free(o1);
    free(o2);
}

/* An embedding bag's kernel (five buffers): the generic calls refuse it
 * with BAD_SHAPE and write nothing; through jit_call_bag it runs on the
 * buffers (upd: its offsets or segment ids, NULL for Packed; fuzz_op sets
 * no weights) with the status of a good or a bad index, nothing written on
 * a bad one. fuzz_bags checks what the bags compute. */
static void fuzz_bag_call(jit_kernel fn, const jit_sig *s, const unsigned char *table,
                          const unsigned char *idx, const unsigned char *offsets,
                          unsigned char *o, const unsigned char *o0, int64_t out_bytes)
{
    if (s->has_weights)
        abort(); /* fuzz_op leaves has_weights 0 */
    if (jit_call(fn, table, idx, offsets, o) != JIT_STATUS_BAD_SHAPE ||
        jit_validate(fn, idx) != JIT_STATUS_BAD_SHAPE ||
        memcmp(o, o0, (size_t)out_bytes) != 0)
        abort();
    int rc = jit_call_bag(fn, table, idx, offsets, NULL, o);
    if (rc != JIT_OK && rc != JIT_STATUS_BAD_INDEX)
        abort();
    if (rc == JIT_STATUS_BAD_INDEX && memcmp(o, o0, (size_t)out_bytes) != 0)
        abort();
    if (jit_validate_bag(fn, idx, offsets) != rc)
        abort();
    /* its parts together: the same verdict (three parts: slices of one
     * element and empty ones at these sizes) */
    int parts_bad = 0;
    for (int64_t part = 0; part < 3; part++) {
        int prc = jit_validate_bag_part(fn, idx, offsets, part, 3);
        if (prc != JIT_OK && prc != rc)
            abort();
        parts_bad |= prc != JIT_OK;
    }
    if (parts_bad != (rc != JIT_OK))
        abort();
}

static void fuzz_op(fuzz_input *in, jit_op op, int dynamic)
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
    /* a bag's offsets or segment ids are in updates_shape too */
    int offsets = (oi.attrs & JIT_ATTR_OFFSETS) != 0;
    if (oi.has_updates || offsets)
        fuzz_shape(in, &s.updates_shape);

    int64_t *at[3 * JIT_MAX_RANK], *bound[3 * JIT_MAX_RANK], call[3 * JIT_MAX_RANK];
    int nd = call_dims(&s, oi.has_updates || offsets, at, bound);
    for (int i = 0; i < nd; i++) /* the call's dims: the decoded ones */
        call[i] = *at[i];
    if (dynamic) {
        uint8_t which = fuzz_byte(in), bounds = fuzz_byte(in);
        for (int i = 0; i < nd; i++)
            if (which == 0xff || (which >> (i % 8) & 1)) {
                if (bounds & 1)
                    *bound[i] = bounds & 2 ? *at[i] : 1 + (bounds >> 2);
                *at[i] = JIT_DIM_DYNAMIC;
            }
    }
    if (jit_sig_is_dynamic(&s)) {
        fuzz_dynamic(in, &oi, &s, call);
        return;
    }

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
    int64_t ub = oi.has_updates ? bytes_of(&s.updates_shape, s.dtype)
                 : offsets      ? bytes_of(&s.updates_shape, s.index_type)
                                : 0;
    int64_t ob_ = bytes_of(&out, s.dtype);
    if (ob_ != INT64_MAX && ob_ != info.out_bytes)
        abort(); /* the kernel writes what the output shape says */
    if (db > 65536 || ib > 65536 || ub > 65536 || info.out_bytes > 65536)
        return;
    unsigned char *data = filled(in, db), *idx = filled(in, ib);
    unsigned char *upd = oi.has_updates || offsets ? filled(in, ub) : NULL;
    unsigned char *o = malloc((size_t)info.out_bytes), *o0 = malloc((size_t)info.out_bytes);
    memset(o, 0xA5, (size_t)info.out_bytes);
    memcpy(o0, o, (size_t)info.out_bytes);
    if (oi.attrs & JIT_ATTR_BAG) {
        fuzz_bag_call(fn, &s, data, idx, upd, o, o0, info.out_bytes);
        free(data);
        free(idx);
        free(upd);
        free(o);
        free(o0);
        return;
    }
    int rc = jit_call(fn, data, idx, upd, o);
    if (rc != JIT_OK && rc != JIT_STATUS_BAD_INDEX)
        abort();
    if (rc == JIT_STATUS_BAD_INDEX && memcmp(o, o0, (size_t)info.out_bytes) != 0)
        abort(); /* nothing written on a bad index */
    /* validate agrees with the call, and a checked run split in two parts
     * stays inside the buffers too */
    if (jit_validate(fn, idx) != rc)
        abort();
    /* so does the check in three parts: one of them fails where it fails */
    int part_rc[3], bad_parts = 0;
    for (int p = 0; p < 3; p++) {
        part_rc[p] = jit_validate_part(fn, idx, p, 3);
        bad_parts += part_rc[p] != JIT_OK;
        if (part_rc[p] != JIT_OK && part_rc[p] != rc)
            abort();
    }
    if ((rc == JIT_OK) != (bad_parts == 0))
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
    uint8_t b = fuzz_byte(&in);
    jit_op op = (jit_op)(JIT_OP_NONE + 1 + (b & 0x7f) % (JIT_OP_COUNT - 1));
    fuzz_op(&in, op, b >> 7);
    jit_shutdown(); /* frees every kernel: memory stays bounded */
    return 0;
}
