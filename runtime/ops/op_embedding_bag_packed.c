/* EmbeddingBagPacked (OpenVINO EmbeddingBagPackedSum-3 and
 * EmbeddingBagPacked-15, torch embedding_bag with 2-D input): bag b is row
 * b of indices [B, L]. The bag plan (bag_sig.c) carries it. */
#include "bag_sig.h"
#include "typed_api.h"

static int tj_ebp_plan(const jit_sig *s, tj_plan *p, jit_shape *out)
{
    return tj_bag_sig_plan(s, TJ_BAG_PACKED, p, out);
}

static int tj_ebp_rule(const jit_sig *s, jit_shape *out)
{
    return tj_bag_sig_rule(s, TJ_BAG_PACKED, out);
}

extern const tj_op_def tj_op_embedding_bag_packed;

static void tj_ebp_describe(const jit_sig *s, char *buf, size_t len)
{
    tj_bag_describe(&tj_op_embedding_bag_packed, TJ_BAG_PACKED, s, buf, len);
}

const tj_op_def tj_op_embedding_bag_packed = {
    .info = {.op = JIT_OP_EMBEDDING_BAG_PACKED, .name = "EmbeddingBagPacked",
             .command = "embedding-bag-packed",
             .attrs = JIT_ATTR_BAG | JIT_ATTR_REDUCTION | JIT_ATTR_WEIGHTS | JIT_ATTR_PADDING_IDX,
             .opsets = {3, 15}, .default_opset = 15, .index_types = TJ_INDEX_TYPES_I32_I64,
             .reductions = TJ_REDUCTION_BIT(JIT_REDUCTION_SUM) |
                           TJ_REDUCTION_BIT(JIT_REDUCTION_MEAN) |
                           TJ_REDUCTION_BIT(JIT_REDUCTION_MAX)},
    .plan = tj_ebp_plan,
    .shape_rule = tj_ebp_rule,
    .normalize = tj_bag_normalize,
    .describe = tj_ebp_describe,
};

static jit_sig tj_ebp_sig_of(const jit_embedding_bag_packed_sig *t)
{
    return (jit_sig){.op = JIT_OP_EMBEDDING_BAG_PACKED, .opset = t->opset, .dtype = t->dtype,
                     .index_type = t->index_type, .index_policy = t->index_policy,
                     .engine = t->engine, .threads = t->threads, .data_shape = t->table_shape,
                     .indices_shape = t->indices_shape, .reduction = t->reduction,
                     .has_weights = t->has_weights, .has_padding_idx = t->has_padding_idx,
                     .padding_idx = t->padding_idx};
}

TJ_TYPED_API(embedding_bag_packed, "EmbeddingBagPacked", jit_embedding_bag_packed_sig,
             jit_embedding_bag_packed_fn, tj_ebp_sig_of)
TJ_TYPED_BAG_API(embedding_bag_packed, JIT_OP_EMBEDDING_BAG_PACKED, jit_embedding_bag_packed_fn)
