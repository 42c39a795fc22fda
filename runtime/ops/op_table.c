/* The table of ops: op_list.h is written by the build from the
 * runtime/ops/op_*.c files (runtime/CMakeLists.txt), one TJ_OP(name) each. */
#include "error.h"
#include "op.h"

#define TJ_OP(name) extern const tj_op_def tj_##name;
#include "op_list.h"
#undef TJ_OP

static const tj_op_def *const tj_ops[] = {
#define TJ_OP(name) &tj_##name,
#include "op_list.h"
#undef TJ_OP
};

const tj_op_def *tj_op_find(jit_op op)
{
    for (size_t i = 0; i < sizeof tj_ops / sizeof *tj_ops; i++)
        if (tj_ops[i]->info.op == op)
            return tj_ops[i];
    tj_error_set("op=%d is not an op of this library", (int)op);
    return NULL;
}

int jit_op_describe(jit_op op, jit_op_info *out)
{
    const tj_op_def *def = tj_op_find(op);
    if (!def || !out)
        return out ? -1 : tj_error_set("jit_op_describe: NULL argument");
    *out = def->info;
    return 0;
}

static int tj_same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a | 32) != (*b | 32))
            return 0;
    return *a == *b;
}

/* OpenVINO's names of version 3, which a model reader meets beside the
 * op's own (EmbeddingBagOffsets-15, whose name the table holds). */
static const struct {
    const char *name;
    jit_op op;
} tj_op_aliases[] = {{"EmbeddingBagOffsetsSum", JIT_OP_EMBEDDING_BAG_OFFSETS},
                     {"EmbeddingBagPackedSum", JIT_OP_EMBEDDING_BAG_PACKED}};

jit_op jit_op_from_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof tj_ops / sizeof *tj_ops; i++)
        if (tj_same_name(name, tj_ops[i]->info.command) ||
            tj_same_name(name, tj_ops[i]->info.name))
            return tj_ops[i]->info.op;
    for (size_t i = 0; name && i < sizeof tj_op_aliases / sizeof *tj_op_aliases; i++)
        if (tj_same_name(name, tj_op_aliases[i].name))
            return tj_op_aliases[i].op;
    return JIT_OP_NONE;
}
