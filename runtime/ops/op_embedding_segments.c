/* EmbeddingSegmentsSum (OpenVINO EmbeddingSegmentsSum-3): lookup j adds
 * into output row segment_ids[j], S rows in all. The bag plan (bag_sig.c)
 * carries it. */
#include "bag_sig.h"
#include "typed_api.h"

static int tj_ems_plan(const jit_sig *s, tj_plan *p, jit_shape *out)
{
    return tj_bag_sig_plan(s, TJ_BAG_SEGMENTS, p, out);
}

static int tj_ems_rule(const jit_sig *s, jit_shape *out)
{
    return tj_bag_sig_rule(s, TJ_BAG_SEGMENTS, out);
}

extern const tj_op_def tj_op_embedding_segments;

static void tj_ems_describe(const jit_sig *s, char *buf, size_t len)
{
    tj_bag_describe(&tj_op_embedding_segments, TJ_BAG_SEGMENTS, s, buf, len);
}

/* one segment id per index */
static int tj_ems_tie(jit_sig *s)
{
    if (s->indices_shape.rank < 1 || s->updates_shape.rank < 1)
        return 0;
    return tj_tie(&s->indices_shape.dims[0], &s->updates_shape.dims[0]);
}

const tj_op_def tj_op_embedding_segments = {
    .info = {.op = JIT_OP_EMBEDDING_SEGMENTS, .name = "EmbeddingSegmentsSum",
             .command = "embedding-segments",
             .attrs = JIT_ATTR_BAG | JIT_ATTR_OFFSETS | JIT_ATTR_WEIGHTS |
                      JIT_ATTR_DEFAULT_INDEX | JIT_ATTR_NUM_SEGMENTS,
             .opsets = {3}, .default_opset = 3, .index_types = TJ_INDEX_TYPES_I32_I64,
             .reductions = TJ_REDUCTION_BIT(JIT_REDUCTION_SUM)},
    .plan = tj_ems_plan,
    .shape_rule = tj_ems_rule,
    .normalize = tj_bag_normalize,
    .describe = tj_ems_describe,
    .tie = tj_ems_tie,
};

static jit_sig tj_ems_sig_of(const jit_embedding_segments_sig *t)
{
    return (jit_sig){.op = JIT_OP_EMBEDDING_SEGMENTS, .opset = t->opset, .dtype = t->dtype,
                     .index_type = t->index_type, .index_policy = t->index_policy,
                     .engine = t->engine, .threads = t->threads, .data_shape = t->table_shape,
                     .indices_shape = t->indices_shape, .updates_shape = t->segment_ids_shape,
                     .reduction = JIT_REDUCTION_SUM, .has_weights = t->has_weights,
                     .has_default_index = t->has_default_index,
                     .default_index = t->default_index,
                     .num_segments = t->num_segments};
}

TJ_TYPED_API(embedding_segments, "EmbeddingSegmentsSum", jit_embedding_segments_sig,
             jit_embedding_segments_fn, tj_ems_sig_of)
TJ_TYPED_BAG_API(embedding_segments, JIT_OP_EMBEDDING_SEGMENTS, jit_embedding_segments_fn)
