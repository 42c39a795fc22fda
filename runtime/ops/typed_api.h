/* The public typed calls of an op, thin wrappers of the generic API: each
 * op's file converts its typed signature into a jit_sig (CONV) and this
 * writes the rest. Included by runtime/ops/op_*.c only. */
#ifndef TJ_TYPED_API_H
#define TJ_TYPED_API_H

#include <stddef.h>

#include "error.h"
#include "tensorjit.h"

/* The generic calls, restricted to kernels of one op (JIT_OP_NONE: any),
 * as the typed kernel calls need them (runtime/api.c, parts.c, limit.c). */
int tj_info_of(jit_kernel kernel, jit_op op, jit_kernel_info *info);
int tj_release_of(jit_kernel kernel, jit_op op, const char *api);
int64_t tj_units_of(jit_kernel kernel, jit_op op);
int tj_validate_of(jit_kernel kernel, jit_op op, const void *indices);
/* api: the caller's name, for the messages */
int tj_validate_part_of(jit_kernel kernel, jit_op op, const char *api, const void *indices,
                        int64_t part, int64_t parts);
/* api: the caller's name, for the messages */
int tj_run_range_of(jit_kernel kernel, jit_op op, const char *api, const void *data,
                    const void *indices, const void *updates, void *out, int64_t begin,
                    int64_t end);
/* The same for embedding bags' kernels (runtime/exec/parts.c); whole: the
 * whole check, else part `part` of `parts`. */
int tj_validate_bag_of(jit_kernel kernel, jit_op op, const char *api, const void *indices,
                       const void *offsets, int whole, int64_t part, int64_t parts);
int tj_run_range_bag_of(jit_kernel kernel, jit_op op, const char *api, const void *table,
                        const void *indices, const void *offsets, const void *weights, void *out,
                        int64_t begin, int64_t end);

/* compile, compile_async, output_shape, explain and dump of an op NAME
 * whose typed signature is SIG, kernel FN, display name TITLE. */
#define TJ_TYPED_API(NAME, TITLE, SIG, FN, CONV)                                              \
    static int tj_##NAME##_generic(const SIG *t, jit_sig *g)                                 \
    {                                                                                         \
        if (!t)                                                                               \
            return tj_error_set("the " TITLE " signature is NULL");                          \
        *g = CONV(t);                                                                         \
        if (jit_sig_is_dynamic(g))                                                            \
            return tj_error_set("a dynamic dim (JIT_DIM_DYNAMIC) needs the generic API: "    \
                                "jit_compile gives a jit_dynamic_fn (an embedding bag's, "    \
                                "a jit_embedding_bag_dynamic_fn)");                           \
        return 0;                                                                             \
    }                                                                                         \
    FN jit_##NAME##_compile(const SIG *t)                                                     \
    {                                                                                         \
        jit_sig g;                                                                            \
        return tj_##NAME##_generic(t, &g) ? NULL : (FN)jit_compile(&g);                       \
    }                                                                                         \
    FN jit_##NAME##_compile_async(const SIG *t)                                               \
    {                                                                                         \
        jit_sig g;                                                                            \
        return tj_##NAME##_generic(t, &g) ? NULL : (FN)jit_compile_async(&g);                 \
    }                                                                                         \
    int jit_##NAME##_output_shape(const SIG *t, jit_shape *out)                               \
    {                                                                                         \
        jit_sig g;                                                                            \
        if (!t || !out)                                                                       \
            return tj_error_set("jit_" #NAME "_output_shape: NULL argument");                \
        if (tj_##NAME##_generic(t, &g))                                                       \
            return -1;                                                                        \
        return jit_output_shape(&g, out);                                                     \
    }                                                                                         \
    char *jit_##NAME##_explain(const SIG *t)                                                  \
    {                                                                                         \
        jit_sig g;                                                                            \
        return tj_##NAME##_generic(t, &g) ? NULL : jit_explain(&g);                           \
    }                                                                                         \
    char *jit_##NAME##_dump(const SIG *t, jit_dump_kind kind)                                 \
    {                                                                                         \
        jit_sig g;                                                                            \
        return tj_##NAME##_generic(t, &g) ? NULL : jit_dump(&g, kind);                        \
    }

/* info, release and units of an op's kernels: the same for every
 * argument list. */
#define TJ_TYPED_KERNEL_INFO(NAME, OP, FN)                                                    \
    int jit_##NAME##_info(FN k, jit_kernel_info *info)                                        \
    {                                                                                         \
        return tj_info_of((jit_kernel)k, OP, info);                                           \
    }                                                                                         \
    int jit_##NAME##_release(FN k)                                                            \
    {                                                                                         \
        return tj_release_of((jit_kernel)k, OP, "jit_" #NAME "_release");                     \
    }                                                                                         \
    int64_t jit_##NAME##_units(FN k)                                                          \
    {                                                                                         \
        return tj_units_of((jit_kernel)k, OP);                                                \
    }

/* The typed kernel calls of an op: info, release and the parts API, for
 * its own kernels. Ops of one argument list share one C pointer type, so
 * the compiler cannot tell their kernels apart: a kernel of another op is
 * refused at run time, with both ops named (runtime/user_kernel.c). */
#define TJ_TYPED_KERNEL_API(NAME, OP, FN)                                                     \
    TJ_TYPED_KERNEL_INFO(NAME, OP, FN)                                                        \
    int jit_##NAME##_validate(FN k, const void *indices)                                      \
    {                                                                                         \
        return tj_validate_of((jit_kernel)k, OP, indices);                                    \
    }                                                                                         \
    int jit_##NAME##_validate_part(FN k, const void *indices, int64_t part, int64_t parts)    \
    {                                                                                         \
        return tj_validate_part_of((jit_kernel)k, OP, "jit_" #NAME "_validate_part", indices, \
                                   part, parts);                                              \
    }

/* run_range of an op without updates (GATHER) or with them (SCATTER):
 * one body, UPDATES what it passes for them, the rest of the arguments
 * the typed call's buffers (data, indices, [updates,] out). */
#define TJ_TYPED_RANGE(NAME, OP, FN, UPDATES, ...)                                            \
    int jit_##NAME##_run_range(FN k, __VA_ARGS__, int64_t begin, int64_t end)                 \
    {                                                                                         \
        return tj_run_range_of((jit_kernel)k, OP, "jit_" #NAME "_run_range", data, indices,   \
                               UPDATES, out, begin, end);                                     \
    }
#define TJ_TYPED_RANGE_GATHER(NAME, OP, FN)                                                   \
    TJ_TYPED_RANGE(NAME, OP, FN, NULL, const void *data, const void *indices, void *out)
#define TJ_TYPED_RANGE_SCATTER(NAME, OP, FN)                                                  \
    TJ_TYPED_RANGE(NAME, OP, FN, updates, const void *data, const void *indices,              \
                   const void *updates, void *out)

/* The typed kernel calls of an embedding bag: info, release and the parts
 * API, whose validate and run_range take the offsets (and weights). */
#define TJ_TYPED_BAG_API(NAME, OP, FN)                                                        \
    TJ_TYPED_KERNEL_INFO(NAME, OP, FN)                                                        \
    int jit_##NAME##_validate(FN k, const void *indices, const void *offsets)                 \
    {                                                                                         \
        return tj_validate_bag_of((jit_kernel)k, OP, "jit_" #NAME "_validate", indices,       \
                                  offsets, 1, 0, 1);                                          \
    }                                                                                         \
    int jit_##NAME##_validate_part(FN k, const void *indices, const void *offsets,            \
                                   int64_t part, int64_t parts)                               \
    {                                                                                         \
        return tj_validate_bag_of((jit_kernel)k, OP, "jit_" #NAME "_validate_part", indices,  \
                                  offsets, 0, part, parts);                                   \
    }                                                                                         \
    int jit_##NAME##_run_range(FN k, const void *table, const void *indices,                  \
                               const void *offsets, const void *weights, void *out,           \
                               int64_t begin, int64_t end)                                    \
    {                                                                                         \
        return tj_run_range_bag_of((jit_kernel)k, OP, "jit_" #NAME "_run_range", table,      \
                                   indices, offsets, weights, out, begin, end);               \
    }

#endif
