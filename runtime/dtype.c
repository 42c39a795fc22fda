/* Names and sizes of the public enums: one table each, so that the CLI,
 * the tests and the error messages spell them the same way. */
#include <string.h>

#include "tensorjit.h"

static const struct {
    const char *name;
    int size;
} tj_dtypes[JIT_DTYPE_COUNT] = {
    [JIT_DTYPE_UNSET] = {"unset", 0}, [JIT_BOOL] = {"bool", 1}, [JIT_I8] = {"i8", 1},
    [JIT_U8] = {"u8", 1},             [JIT_I16] = {"i16", 2},   [JIT_U16] = {"u16", 2},
    [JIT_F16] = {"f16", 2},           [JIT_BF16] = {"bf16", 2}, [JIT_I32] = {"i32", 4},
    [JIT_U32] = {"u32", 4},           [JIT_F32] = {"f32", 4},   [JIT_I64] = {"i64", 8},
    [JIT_U64] = {"u64", 8},           [JIT_F64] = {"f64", 8},   [JIT_U1] = {"u1", 0},
    [JIT_U4] = {"u4", 0},             [JIT_I4] = {"i4", 0},     [JIT_NF4] = {"nf4", 0},
};

static const char *const tj_policy_names[JIT_INDEX_POLICY_COUNT] = {
    [JIT_INDEX_ERROR] = "error",
    [JIT_INDEX_NEGATIVE_WRAPS] = "negative-wraps",
    [JIT_INDEX_CLAMP] = "clamp",
    [JIT_INDEX_ZERO_FILL] = "zero-fill",
    [JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL] = "negative-wraps-zero-fill",
};

static const char *const tj_engine_names[JIT_ENGINE_COUNT] = {
    [JIT_ENGINE_AUTO] = "auto",
    [JIT_ENGINE_REFERENCE] = "reference",
    [JIT_ENGINE_JIT] = "jit",
};

const char *jit_dtype_name(jit_dtype t)
{
    if ((unsigned)t >= JIT_DTYPE_COUNT)
        return "unknown";
    return tj_dtypes[t].name;
}

jit_dtype jit_dtype_from_name(const char *name)
{
    if (!name)
        return JIT_DTYPE_UNSET;
    for (int t = 1; t < JIT_DTYPE_COUNT; t++)
        if (strcmp(name, tj_dtypes[t].name) == 0)
            return (jit_dtype)t;
    return JIT_DTYPE_UNSET;
}

int jit_dtype_size(jit_dtype t)
{
    if ((unsigned)t >= JIT_DTYPE_COUNT)
        return 0;
    return tj_dtypes[t].size;
}

const char *jit_index_policy_name(jit_index_policy p)
{
    if ((unsigned)p >= JIT_INDEX_POLICY_COUNT)
        return "unknown";
    return tj_policy_names[p];
}

int jit_index_policy_from_name(const char *name, jit_index_policy *out)
{
    if (!name || !out)
        return -1;
    for (int p = 0; p < JIT_INDEX_POLICY_COUNT; p++) {
        /* the test vectors write negative_wraps, the CLI negative-wraps */
        const char *a = tj_policy_names[p];
        const char *b = name;
        while (*a && (*a == *b || (*a == '-' && *b == '_'))) {
            a++;
            b++;
        }
        if (*a == '\0' && *b == '\0') {
            *out = (jit_index_policy)p;
            return 0;
        }
    }
    return -1;
}

const char *jit_engine_name(jit_engine e)
{
    if ((unsigned)e >= JIT_ENGINE_COUNT)
        return "unknown";
    return tj_engine_names[e];
}

const char *jit_version(void)
{
    return TENSORJIT_VERSION;
}

static const char *const tj_reduction_names[JIT_REDUCTION_COUNT] = {
    [JIT_REDUCTION_NONE] = "none", [JIT_REDUCTION_SUM] = "sum", [JIT_REDUCTION_SUB] = "sub",
    [JIT_REDUCTION_PROD] = "prod", [JIT_REDUCTION_MIN] = "min", [JIT_REDUCTION_MAX] = "max",
    [JIT_REDUCTION_MEAN] = "mean",
};

const char *jit_reduction_name(jit_reduction r)
{
    return (unsigned)r < JIT_REDUCTION_COUNT ? tj_reduction_names[r] : "unknown";
}

int jit_reduction_from_name(const char *name, jit_reduction *out)
{
    if (!name || !out)
        return -1;
    /* ONNX spells two of them otherwise */
    if (strcmp(name, "add") == 0)
        name = "sum";
    else if (strcmp(name, "mul") == 0)
        name = "prod";
    for (int r = 0; r < JIT_REDUCTION_COUNT; r++)
        if (strcmp(name, tj_reduction_names[r]) == 0) {
            *out = (jit_reduction)r;
            return 0;
        }
    return -1;
}
