/* Which OpenVINO layers tensorjit compiles, and where each finds its
 * inputs and attributes: one entry per layer type. The reader
 * (ov_ir.c) does the rest alike for all of them. */
#include "ov_ir.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The IR's `version` attribute names an opset ("opset4"); each entry
 * lists from which opset each version of the op is the one in force. The
 * index policy of each version is its specification's rule on indices. */
static const tj_ov_op tj_ov_ops[] = {
    {"GatherND", JIT_OP_GATHER_ND, {{5, 5, JIT_INDEX_ERROR}, {8, 8, JIT_INDEX_ERROR}},
     .updates_port = -1, .axis_port = -1, .batch_dims_attr = "batch_dims"},
    {"ScatterUpdate", JIT_OP_SCATTER_UPDATE, {{3, 3, JIT_INDEX_ERROR}},
     .updates_port = 2, .axis_port = 3},
    /* Gather-1/-7: negatives count from the end, beyond is an error;
     * Gather-8: beyond gives zeros */
    {"Gather", JIT_OP_GATHER,
     {{1, 1, JIT_INDEX_NEGATIVE_WRAPS}, {7, 7, JIT_INDEX_NEGATIVE_WRAPS},
      {8, 8, JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL}},
     .updates_port = -1, .axis_port = 2, .batch_dims_attr = "batch_dims"},
    /* ScatterNDUpdate-3 takes [0, s-1]; -15 negatives too */
    {"ScatterNDUpdate", JIT_OP_SCATTER_ND_UPDATE,
     {{3, 3, JIT_INDEX_ERROR}, {15, 15, JIT_INDEX_NEGATIVE_WRAPS}},
     .updates_port = 2, .axis_port = -1, .reduction_attr = "reduction"},
    /* ScatterElementsUpdate-12 says negative indices count from the end; -3
     * says nothing of them: [0, s-1] */
    {"ScatterElementsUpdate", JIT_OP_SCATTER_ELEMENTS_UPDATE,
     {{3, 3, JIT_INDEX_ERROR}, {12, 12, JIT_INDEX_NEGATIVE_WRAPS}},
     .updates_port = 2, .axis_port = 3, .reduction_attr = "reduction",
     .init_val_attr = "use_init_val"},
    {"GatherElements", JIT_OP_GATHER_ELEMENTS, {{6, 6, JIT_INDEX_ERROR}},
     .updates_port = -1, .axis_port = -1, .axis_attr = "axis"},
    /* The embedding bags: version 3 is a type of its own (...Sum), sum
     * only; version 15 adds the reduction attribute (sum, mean). Every spec
     * takes indices in [0, num_emb) and negatives are "not supported". */
    {"EmbeddingBagOffsetsSum", JIT_OP_EMBEDDING_BAG_OFFSETS, {{3, 3, JIT_INDEX_ERROR}},
     .updates_port = 2, .axis_port = -1, .default_index_port = 3, .weights_port = 4},
    {"EmbeddingBagOffsets", JIT_OP_EMBEDDING_BAG_OFFSETS, {{15, 15, JIT_INDEX_ERROR}},
     .updates_port = 2, .axis_port = -1, .reduction_attr = "reduction",
     .default_index_port = 3, .weights_port = 4},
    {"EmbeddingBagPackedSum", JIT_OP_EMBEDDING_BAG_PACKED, {{3, 3, JIT_INDEX_ERROR}},
     .updates_port = -1, .axis_port = -1, .weights_port = 2},
    {"EmbeddingBagPacked", JIT_OP_EMBEDDING_BAG_PACKED, {{15, 15, JIT_INDEX_ERROR}},
     .updates_port = -1, .axis_port = -1, .reduction_attr = "reduction", .weights_port = 2},
    {"EmbeddingSegmentsSum", JIT_OP_EMBEDDING_SEGMENTS, {{3, 3, JIT_INDEX_ERROR}},
     .updates_port = 2, .axis_port = -1, .num_segments_port = 3, .default_index_port = 4,
     .weights_port = 5},
};

const tj_ov_op *tj_ov_op_find(const char *type)
{
    for (size_t i = 0; i < sizeof tj_ov_ops / sizeof *tj_ov_ops; i++)
        if (strcmp(tj_ov_ops[i].type, type) == 0)
            return &tj_ov_ops[i];
    return NULL;
}

const tj_ov_op *tj_ov_op_find_nocase(const char *type)
{
    for (size_t i = 0; i < sizeof tj_ov_ops / sizeof *tj_ov_ops; i++)
        if (strcasecmp(tj_ov_ops[i].type, type) == 0)
            return &tj_ov_ops[i];
    return NULL;
}

const char *tj_ov_op_types(void)
{
    static char buf[512];
    size_t n = 0;
    for (size_t i = 0; i < sizeof tj_ov_ops / sizeof *tj_ov_ops && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? "/" : "", tj_ov_ops[i].type);
    return buf;
}
