/* Which ONNX nodes tensorjit compiles, and as what. ONNX's semantics
 * (SPEC.md section 9) are those of the newest tensorjit version of each
 * op: GatherND-8 keeps the batch dims in its output as ONNX does,
 * ScatterNDUpdate-15 and ScatterElementsUpdate-12 have the reductions;
 * the index policy (negatives wrap, beyond is an error) is set per node. */
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

static const tj_onnx_op tj_onnx_ops[] = {
    {"GatherND", JIT_OP_GATHER_ND, "GatherND", 8, 11, .batch_dims_since = 12,
     .int64_indices = 1},
    {"Gather", JIT_OP_GATHER, "Gather", 8, 1, .has_axis = 1},
    {"GatherElements", JIT_OP_GATHER_ELEMENTS, "GatherElements", 6, 11, .has_axis = 1},
    {"ScatterND", JIT_OP_SCATTER_ND_UPDATE, "ScatterNDUpdate", 15, 11, .reduction_since = 16,
     .minmax_since = 18, .has_updates = 1, .int64_indices = 1},
    {"ScatterElements", JIT_OP_SCATTER_ELEMENTS_UPDATE, "ScatterElementsUpdate", 12, 11,
     .reduction_since = 16, .minmax_since = 18, .has_axis = 1, .has_updates = 1},
    /* deprecated in opset 11 for ScatterElements, which it equals */
    {"Scatter", JIT_OP_SCATTER_ELEMENTS_UPDATE, "ScatterElementsUpdate", 12, 9, .has_axis = 1,
     .has_updates = 1},
};

const tj_onnx_op *tj_onnx_op_find(const char *type)
{
    for (size_t i = 0; type && i < sizeof tj_onnx_ops / sizeof *tj_onnx_ops; i++)
        if (strcmp(tj_onnx_ops[i].type, type) == 0)
            return &tj_onnx_ops[i];
    return NULL;
}

const char *tj_onnx_node_types(void)
{
    static char buf[160];
    size_t n = 0;
    for (size_t i = 0; i < sizeof tj_onnx_ops / sizeof *tj_onnx_ops && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? "/" : "", tj_onnx_ops[i].type);
    return buf;
}

jit_dtype tj_onnx_dtype(int32_t t)
{
    switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return JIT_F32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return JIT_U8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return JIT_I8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: return JIT_U16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: return JIT_I16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return JIT_I32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return JIT_I64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return JIT_BOOL;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return JIT_F16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return JIT_F64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: return JIT_U32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: return JIT_U64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return JIT_BF16;
    default: return JIT_DTYPE_UNSET;
    }
}

const char *tj_onnx_type_name(int32_t t, char *buf, size_t len)
{
    /* the generated descriptor knows the names the distribution's onnx.proto
     * has (Debian 12's ends at BFLOAT16 = 16); later ones are listed here */
    static const char *const newer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                        "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1"};
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&onnx__tensor_proto__data_type__descriptor, t);
    if (v && v->name)
        snprintf(buf, len, "%s (%d)", v->name, (int)t);
    else if (t >= 17 && t < 17 + (int32_t)(sizeof newer / sizeof *newer)) /* ONNX 1.14-1.17's */
        snprintf(buf, len, "%s (%d)", newer[t - 17], (int)t);
    else
        snprintf(buf, len, "%d (unknown to this build's onnx.proto)", (int)t);
    return buf;
}
