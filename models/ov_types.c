/* OpenVINO's names of element types: port precisions (FP32, I64, BOOL)
 * and layer element_type attributes (f32, i64, boolean). */
#include <strings.h>

#include "ov_ir.h"

jit_dtype tj_ov_type(const char *name)
{
    static const struct {
        const char *precision, *element_type;
        jit_dtype t;
    } map[] = {
        {"FP32", "f32", JIT_F32},    {"FP16", "f16", JIT_F16},  {"BF16", "bf16", JIT_BF16},
        {"FP64", "f64", JIT_F64},    {"I8", "i8", JIT_I8},      {"U8", "u8", JIT_U8},
        {"I16", "i16", JIT_I16},     {"U16", "u16", JIT_U16},   {"I32", "i32", JIT_I32},
        {"U32", "u32", JIT_U32},     {"I64", "i64", JIT_I64},   {"U64", "u64", JIT_U64},
        {"BOOL", "boolean", JIT_BOOL}, {"U1", "u1", JIT_U1},    {"U4", "u4", JIT_U4},
        {"I4", "i4", JIT_I4},        {"NF4", "nf4", JIT_NF4},
    };
    if (!name)
        return JIT_DTYPE_UNSET;
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcasecmp(name, map[i].precision) == 0 || strcasecmp(name, map[i].element_type) == 0)
            return map[i].t;
    if (strcasecmp(name, "bool") == 0)
        return JIT_BOOL;
    return JIT_DTYPE_UNSET;
}
