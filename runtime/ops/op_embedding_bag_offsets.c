/* EmbeddingBagOffsets (OpenVINO EmbeddingBagOffsetsSum-3 and
 * EmbeddingBagOffsets-15, torch embedding_bag with offsets): bag b holds
 * indices[offsets[b] : offsets[b+1]], the last one running to N (or to the
 * extra offset with include_last_offset). The bag plan (bag_sig.c) carries
 * it. */
#include "bag_sig.h"
#include "typed_api.h"

static int tj_ebo_plan(const jit_sig *s, tj_plan *p, jit_shape *out)
{
    return tj_bag_sig_plan(s, TJ_BAG_OFFSETS, p, out);
}

static int tj_ebo_rule(const jit_sig *s, jit_shape *out)
{
    return tj_bag_sig_rule(s, TJ_BAG_OFFSETS, out);
}

extern const tj_op_def tj_op_embedding_bag_offsets;

static void tj_ebo_describe(const jit_sig *s, char *buf, size_t len)
{
    tj_bag_describe(&tj_op_embedding_bag_offsets, TJ_BAG_OFFSETS, s, buf, len);
}

const tj_op_def tj_op_embedding_bag_offsets = {
    .info = {.op = JIT_OP_EMBEDDING_BAG_OFFSETS, .name = "EmbeddingBagOffsets",
             .command = "embedding-bag-offsets",
             .attrs = JIT_ATTR_BAG | JIT_ATTR_OFFSETS | JIT_ATTR_REDUCTION | JIT_ATTR_WEIGHTS |
                      JIT_ATTR_DEFAULT_INDEX | JIT_ATTR_PADDING_IDX | JIT_ATTR_LAST_OFFSET,
             .opsets = {3, 15}, .default_opset = 15, .index_types = TJ_INDEX_TYPES_I32_I64,
             .reductions = TJ_REDUCTION_BIT(JIT_REDUCTION_SUM) |
                           TJ_REDUCTION_BIT(JIT_REDUCTION_MEAN) |
                           TJ_REDUCTION_BIT(JIT_REDUCTION_MAX)},
    .plan = tj_ebo_plan,
    .shape_rule = tj_ebo_rule,
    .normalize = tj_bag_normalize,
    .describe = tj_ebo_describe,
};

static jit_sig tj_ebo_sig_of(const jit_embedding_bag_offsets_sig *t)
{
    return (jit_sig){.op = JIT_OP_EMBEDDING_BAG_OFFSETS, .opset = t->opset, .dtype = t->dtype,
                     .index_type = t->index_type, .index_policy = t->index_policy,
                     .engine = t->engine, .threads = t->threads, .data_shape = t->table_shape,
                     .indices_shape = t->indices_shape, .updates_shape = t->offsets_shape,
                     .reduction = t->reduction, .has_weights = t->has_weights,
                     .has_default_index = t->has_default_index,
                     .default_index = t->default_index, .has_padding_idx = t->has_padding_idx,
                     .padding_idx = t->padding_idx,
                     .include_last_offset = t->include_last_offset};
}

TJ_TYPED_API(embedding_bag_offsets, "EmbeddingBagOffsets", jit_embedding_bag_offsets_sig,
             jit_embedding_bag_offsets_fn, tj_ebo_sig_of)
TJ_TYPED_BAG_API(embedding_bag_offsets, JIT_OP_EMBEDDING_BAG_OFFSETS, jit_embedding_bag_offsets_fn)
