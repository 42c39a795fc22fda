/* The checks and the plan of the embedding bags (SPEC section 10). */
#include "bag_sig.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "shape.h"

static const char *tj_bag_title(tj_bag_form form)
{
    return form == TJ_BAG_OFFSETS  ? "EmbeddingBagOffsets"
           : form == TJ_BAG_PACKED ? "EmbeddingBagPacked"
                                   : "EmbeddingSegmentsSum";
}

const char *tj_bag_offsets_name(tj_bag_form form)
{
    return form == TJ_BAG_SEGMENTS ? "segment_ids" : "offsets";
}

/* The accumulator of SPEC 10's arithmetic for a table type. */
static jit_dtype tj_bag_acc_type(jit_dtype t)
{
    switch (t) {
    case JIT_F16:
    case JIT_BF16:
    case JIT_F32: return JIT_F32;
    case JIT_F64: return JIT_F64;
    case JIT_I8:
    case JIT_I16:
    case JIT_I32:
    case JIT_I64: return JIT_I64;
    default: return JIT_U64; /* unsigned and bool */
    }
}

static int tj_bag_version(const jit_sig *s, tj_bag_form form, int *version)
{
    int v = s->opset ? s->opset : form == TJ_BAG_SEGMENTS ? 3 : 15;
    if (form == TJ_BAG_SEGMENTS && v != 3)
        return tj_error_set("opset=%d must be 3 (EmbeddingSegmentsSum-3)", s->opset);
    if (v != 3 && v != 15)
        return tj_error_set("opset=%d must be 3 or 15", s->opset);
    *version = v;
    return 0;
}

/* Element types: the table's any whole-byte type, indices and offsets
 * (or segment ids) i32 or i64 and of one type. */
static int tj_bag_check_types(const jit_sig *s, tj_bag_form form, const char *title)
{
    if (tj_check_dtype(s->dtype, "table") ||
        tj_check_index_type_of(s->index_type, TJ_INDEX_TYPES_I32_I64, title) ||
        tj_check_policy_engine(s->index_policy, s->engine))
        return -1;
    jit_dtype o = s->updates_dtype;
    if (form != TJ_BAG_PACKED && o != JIT_DTYPE_UNSET && o != JIT_I32 && o != JIT_I64)
        return tj_error_set("%s element type %s: %s takes i32 or i64 %s, of the indices' "
                            "type (%s)", tj_bag_offsets_name(form), jit_dtype_name(o), title,
                            form == TJ_BAG_SEGMENTS ? "segment ids" : "offsets",
                            jit_dtype_name(s->index_type));
    if (form != TJ_BAG_PACKED && o != JIT_DTYPE_UNSET && o != s->index_type)
        return tj_error_set("%s element type %s must equal indices element type %s",
                            tj_bag_offsets_name(form), jit_dtype_name(s->updates_dtype),
                            jit_dtype_name(s->index_type));
    return 0;
}

/* The reduction (NONE: sum) against the version, the weights and bool. */
static int tj_bag_check_reduction(const jit_sig *s, tj_bag_form form, int version,
                                  jit_reduction *out)
{
    const char *title = tj_bag_title(form);
    jit_reduction r = s->reduction == JIT_REDUCTION_NONE ? JIT_REDUCTION_SUM : s->reduction;
    int extended = form != TJ_BAG_SEGMENTS && version == 15;
    if ((unsigned)r >= JIT_REDUCTION_COUNT)
        return tj_error_set("reduction=%d is not a known reduction", (int)r);
    if (r != JIT_REDUCTION_SUM &&
        !(extended && (r == JIT_REDUCTION_MEAN || r == JIT_REDUCTION_MAX)))
        return tj_error_set("reduction=%s is not a reduction of %s-%d (%s)",
                            jit_reduction_name(r), title, version,
                            extended ? "sum, mean, max" : "sum");
    if (s->has_weights && r != JIT_REDUCTION_SUM)
        return tj_error_set("weights are taken with reduction sum only, not %s",
                            jit_reduction_name(r));
    if (s->dtype == JIT_BOOL && r != JIT_REDUCTION_MAX)
        return tj_error_set("table element type bool takes reduction max only (%s is not "
                            "defined for bool)", jit_reduction_name(r));
    *out = r;
    return 0;
}

/* Version 3 (the ...Sum ops) has neither padding_idx nor
 * include_last_offset: torch's extensions, with version 15. */
static int tj_bag_check_v3(const jit_sig *s, tj_bag_form form, int version)
{
    if (version != 3)
        return 0;
    if (form != TJ_BAG_SEGMENTS && s->has_padding_idx)
        return tj_error_set("padding_idx=%" PRId64 ": %s-3 has no padding_idx (opset 15 has)",
                            s->padding_idx, tj_bag_title(form));
    if (form == TJ_BAG_OFFSETS && s->include_last_offset)
        return tj_error_set("include_last_offset: %s-3 has none (opset 15 has)",
                            tj_bag_title(form));
    return 0;
}

static int tj_bag_check_rank(const jit_shape *sh, const char *name, int rank, const char *what)
{
    if (tj_shape_check(sh, name, 0))
        return -1;
    if (sh->rank != rank) {
        char b[256];
        return tj_error_set("%s of shape %s must be %s (rank %d), not of rank %d", name,
                            tj_shape_format(sh, b, sizeof b), what, rank, sh->rank);
    }
    return 0;
}

static int tj_bag_check_shapes(const jit_sig *s, tj_bag_form form)
{
    const jit_shape *t = &s->data_shape, *ix = &s->indices_shape, *o = &s->updates_shape;
    if (tj_shape_check(t, "table", 0))
        return -1;
    if (t->rank < 1)
        return tj_error_set("table must have rank >= 1 ([E, d1, ...]), not 0: a scalar has no "
                            "rows");
    if (form == TJ_BAG_PACKED)
        return tj_bag_check_rank(ix, "indices", 2, "[B, L]");
    if (tj_bag_check_rank(ix, "indices", 1, "1-D [N]") ||
        tj_bag_check_rank(o, tj_bag_offsets_name(form), 1, "1-D"))
        return -1;
    if (form == TJ_BAG_SEGMENTS && o->dims[0] != ix->dims[0])
        return tj_error_set("segment_ids.shape[0]=%" PRId64 " must equal indices.shape[0]=%" PRId64
                            " (one segment id per index)",
                            o->dims[0], ix->dims[0]);
    if (form == TJ_BAG_OFFSETS && s->include_last_offset && o->dims[0] < 1)
        return tj_error_set("offsets.shape[0]=0: include_last_offset needs B + 1 >= 1 offsets");
    return 0;
}

/* The default row, or -1: none (no flag, or OpenVINO's -1). */
static int64_t tj_bag_default_row(const jit_sig *s, tj_bag_form form)
{
    return form != TJ_BAG_PACKED && s->has_default_index ? s->default_index : -1;
}

/* The JIT's Segments kernel keeps a flag byte a segment (their count
 * rounded up to 64) and, for f16 and bf16, a row of f32 sums a segment:
 * twice the output's bytes, which may overflow where the output does not. */
static int tj_bag_check_scratch(const jit_sig *s)
{
    int64_t d, per, bytes;
    if (tj_shape_product(&s->data_shape, 1, s->data_shape.rank, &d) != 0)
        return 0; /* the table's own check names it */
    int wide = s->dtype == JIT_F16 || s->dtype == JIT_BF16;
    if (tj_mul_i64(d, wide ? 4 : 0, &per) == 0 &&
        tj_mul_i64(s->num_segments, per + 1, &bytes) == 0 && bytes <= INT64_MAX - 63)
        return 0;
    return tj_error_set("num_segments=%" PRId64 " with rows of %" PRId64 " elements: the "
                        "segments' scratch (a flag and, for f16 and bf16, f32 sums a "
                        "segment) has more bytes than int64 holds",
                        s->num_segments, d);
}

/* default_index, padding_idx and num_segments against the table's rows. */
static int tj_bag_check_rows(const jit_sig *s, tj_bag_form form)
{
    int64_t e = s->data_shape.dims[0];
    if (tj_bag_default_row(s, form) != -1 &&
        (s->default_index < 0 || s->default_index >= e))
        return tj_error_set("default_index=%" PRId64 " must be -1 (none) or a row of the table, "
                            "in [0, table.shape[0]) = [0, %" PRId64 ")",
                            s->default_index, e);
    if (form != TJ_BAG_SEGMENTS && s->has_padding_idx &&
        (s->padding_idx < -e || s->padding_idx >= e))
        return tj_error_set("padding_idx=%" PRId64 " must be in [-table.shape[0], "
                            "table.shape[0]) = [%" PRId64 ", %" PRId64 ")",
                            s->padding_idx, -e, e);
    if (form == TJ_BAG_SEGMENTS && s->num_segments < 0)
        return tj_error_set("num_segments=%" PRId64 " must not be negative", s->num_segments);
    return form == TJ_BAG_SEGMENTS ? tj_bag_check_scratch(s) : 0;
}

static int tj_bag_check(const jit_sig *s, tj_bag_form form, int *version, jit_reduction *r)
{
    return tj_bag_version(s, form, version) || tj_bag_check_types(s, form, tj_bag_title(form)) ||
                   tj_bag_check_reduction(s, form, *version, r) ||
                   tj_bag_check_v3(s, form, *version) || tj_bag_check_shapes(s, form) ||
                   tj_bag_check_rows(s, form)
               ? -1
               : 0;
}

/* Counts of bags and lookups, and the output shape [bags, d1, ...]. */
static void tj_bag_counts(const jit_sig *s, tj_bag_form form, tj_bag_plan *b, jit_shape *out)
{
    const jit_shape *t = &s->data_shape, *ix = &s->indices_shape;
    b->rows = t->dims[0];
    if (form == TJ_BAG_PACKED) {
        b->bags = ix->dims[0];
        b->bag_len = ix->dims[1];
    } else if (form == TJ_BAG_OFFSETS) {
        b->offsets_len = s->updates_shape.dims[0];
        b->bags = b->offsets_len - (s->include_last_offset ? 1 : 0);
    } else {
        b->offsets_len = ix->dims[0];
        b->bags = s->num_segments;
    }
    out->rank = t->rank;
    out->dims[0] = b->bags;
    for (int i = 1; i < t->rank; i++)
        out->dims[i] = t->dims[i];
}

static int tj_bag_bytes(const jit_sig *s, tj_bag_form form, tj_plan *p, const jit_shape *out)
{
    int64_t idx_bytes, row_bytes, weight_bytes;
    if (tj_shape_bytes(&s->data_shape, p->elem_size, "table", &p->data_bytes) ||
        tj_shape_bytes(&s->indices_shape, p->index_size, "indices", &idx_bytes) ||
        (s->has_weights &&
         tj_shape_bytes(&s->indices_shape, p->elem_size, "weights", &weight_bytes)) ||
        (form != TJ_BAG_PACKED &&
         tj_shape_bytes(&s->updates_shape, p->index_size, tj_bag_offsets_name(form),
                        &p->updates_bytes)) ||
        tj_shape_bytes(out, p->elem_size, "output", &p->out_bytes))
        return -1;
    if (tj_shape_product(&s->data_shape, 1, s->data_shape.rank, &p->bag.row_elems) ||
        tj_mul_i64(p->bag.row_elems, p->elem_size, &row_bytes))
        return tj_error_set("a row of the table (its dims after the first) overflows int64 "
                            "bytes");
    p->indices_elems = idx_bytes / p->index_size;
    p->bag.lookups = p->indices_elems;
    return 0;
}

int tj_bag_sig_rule(const jit_sig *s, tj_bag_form form, jit_shape *out)
{
    tj_bag_plan b;
    if (s->data_shape.rank < 1 || s->data_shape.rank > JIT_MAX_RANK)
        return -1;
    tj_bag_counts(s, form, &b, out);
    /* a count derived from a dynamic one (offsets' length less the last
     * offset) is negative too */
    for (int i = 0; i < out->rank; i++)
        out->dims[i] = tj_rule_dim(out->dims[i]);
    return 0;
}

int tj_bag_sig_plan(const jit_sig *s, tj_bag_form form, tj_plan *p, jit_shape *out)
{
    int version = 0;
    jit_reduction r = JIT_REDUCTION_SUM;
    if (tj_bag_check(s, form, &version, &r))
        return -1;
    tj_plan_init(p, s, TJ_INDEXED_SRC, 0);
    p->is_bag = 1;
    p->reduction = r;
    tj_bag_plan *b = &p->bag;
    *b = (tj_bag_plan){.form = form, .dtype = s->dtype, .index_type = s->index_type,
                       .acc_type = tj_bag_acc_type(s->dtype), .reduction = r,
                       .policy = s->index_policy,
                       .include_last_offset = form == TJ_BAG_OFFSETS && s->include_last_offset,
                       .has_weights = s->has_weights != 0,
                       .default_index = tj_bag_default_row(s, form),
                       .padding_row = -1};
    tj_bag_counts(s, form, b, out);
    if (form != TJ_BAG_SEGMENTS && s->has_padding_idx)
        b->padding_row = s->padding_idx < 0 ? s->padding_idx + b->rows : s->padding_idx;
    if (tj_bag_bytes(s, form, p, out) || tj_check_threads(s->threads, &b->threads))
        return -1;
    p->tuple_shape = s->indices_shape;
    p->dims[0] = b->rows;
    return 0;
}

void tj_bag_normalize(jit_sig *s)
{
    if (s->reduction == JIT_REDUCTION_NONE)
        s->reduction = JIT_REDUCTION_SUM;
    int64_t e = s->data_shape.rank > 0 ? s->data_shape.dims[0] : -1;
    if (s->has_padding_idx && s->padding_idx < 0 && e >= 0 && s->padding_idx >= -e)
        s->padding_idx += e;
    if (s->has_default_index && s->default_index == -1) { /* OpenVINO's spelling of none */
        s->has_default_index = 0;
        s->default_index = 0;
    }
    s->has_weights = s->has_weights != 0;
    s->include_last_offset = s->include_last_offset != 0;
}

/* The form's own attributes, as jit_explain's first line names them:
 * default_index for Offsets and Segments, padding_idx for Offsets and
 * Packed, include_last_offset for Offsets, num_segments for Segments ("?"
 * where dynamic, "?:N" with its bound, as tensorjit model lists it:
 * JIT_DIM_DYNAMIC is no count). */
static void tj_bag_describe_attrs(tj_bag_form form, const jit_sig *s, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    if (form != TJ_BAG_PACKED && tj_bag_default_row(s, form) != -1)
        n += (size_t)snprintf(buf, len, ", default_index %" PRId64, s->default_index);
    else if (form != TJ_BAG_PACKED)
        n += (size_t)snprintf(buf, len, ", default_index none");
    if (form != TJ_BAG_SEGMENTS && s->has_padding_idx && n < len)
        n += (size_t)snprintf(buf + n, len - n, ", padding_idx %" PRId64, s->padding_idx);
    else if (form != TJ_BAG_SEGMENTS && n < len)
        n += (size_t)snprintf(buf + n, len - n, ", padding_idx none");
    if (form == TJ_BAG_OFFSETS && n < len)
        snprintf(buf + n, len - n, ", include_last_offset %d", s->include_last_offset);
    else if (form == TJ_BAG_SEGMENTS && s->num_segments != JIT_DIM_DYNAMIC && n < len)
        snprintf(buf + n, len - n, ", num_segments %" PRId64, s->num_segments);
    else if (form == TJ_BAG_SEGMENTS && s->num_segments_bound > 0 && n < len)
        snprintf(buf + n, len - n, ", num_segments ?:%" PRId64, s->num_segments_bound);
    else if (form == TJ_BAG_SEGMENTS && n < len)
        snprintf(buf + n, len - n, ", num_segments ?");
}

void tj_bag_describe(const tj_op_def *def, tj_bag_form form, const jit_sig *s, char *buf,
                     size_t len)
{
    char t[256], ix[256], o[256] = "", out[256] = "?", attrs[160];
    jit_shape os;
    if (tj_sig_output_shape(def, s, &os) == 0)
        tj_shape_format(&os, out, sizeof out);
    if (form != TJ_BAG_PACKED) {
        char b[200];
        snprintf(o, sizeof o, ", %s %s", tj_bag_offsets_name(form),
                 tj_shape_format_bounded(&s->updates_shape, s->updates_bound, b, sizeof b));
    }
    tj_bag_describe_attrs(form, s, attrs, sizeof attrs);
    snprintf(buf, len,
             "%s-%d, reduction %s, table %s %s, indices %s %s%s, weights %s%s, index policy %s\n"
             "output shape: %s\n",
             def->info.name, s->opset ? s->opset : def->info.default_opset,
             jit_reduction_name(s->reduction == JIT_REDUCTION_NONE ? JIT_REDUCTION_SUM
                                                                   : s->reduction),
             jit_dtype_name(s->dtype),
             tj_shape_format_bounded(&s->data_shape, s->data_bound, t, sizeof t),
             jit_dtype_name(s->index_type),
             tj_shape_format_bounded(&s->indices_shape, s->indices_bound, ix, sizeof ix), o,
             s->has_weights ? "yes" : "no", attrs, jit_index_policy_name(s->index_policy), out);
}
