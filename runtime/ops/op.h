/*
 * The op table: everything that differs between the ops of the family, one
 * entry per op, each in a file of its own (runtime/ops/op_NAME.c, defining
 * `const tj_op_def tj_op_NAME`). The build lists those files into the
 * table (runtime/CMakeLists.txt writes op_list.h), so adding an op is
 * adding its file. Everything else calls through the entry and never asks
 * which op it has: the models are SQLite's sqlite3_module and PostgreSQL's
 * TableAmRoutine (shared/STYLE.md).
 */
#ifndef TJ_OP_H
#define TJ_OP_H

#include <stddef.h>

#include "kernel.h"
#include "plan.h"

typedef struct tj_abi tj_abi;

typedef struct tj_op_def {
    /* name, CLI command, attributes, versions (public: jit_op_describe) */
    jit_op_info info;
    /* Checks sig (a message naming the rule, the input, the dimension and
     * the value) and fills the plan and the output shape; 0 or -1. The
     * generic checks of types, policy and threads are done by the caller. */
    int (*plan)(const jit_sig *sig, tj_plan *plan, jit_shape *out_shape);
    /* Optional: the op's own part of normalizing a signature for its key
     * (tj_sig_normalize does the generic part first). */
    void (*normalize)(jit_sig *sig);
    /* The first line of jit_explain: the op, its attributes and inputs. */
    void (*describe)(const jit_sig *sig, char *buf, size_t len);
    /* Optional, for dynamic signatures (runtime/dyn/dyn_template.c): applies
     * the op's equalities between dims with tj_tie, and gives a dynamic
     * tuple length that the ranks fix its value; returns how many dims it
     * set. Dynamic dims come coded as distinct negatives. Any sig: checks
     * nothing, reads only in range. */
    int (*tie)(jit_sig *sig);
    /* The output's shape as the op's rule derives it from sig's ranks,
     * attributes and dims, checking nothing (any sig; reads only in
     * range). A negative dim of sig is dynamic (the template's codes):
     * an output dim that depends on one is JIT_DIM_DYNAMIC, and where
     * the rank does (GatherND's tuple length), or sig's ranks and
     * attributes give none, it returns -1; else 0. A dynamic family's
     * jit_output_shape holds fixed only what this says is: the
     * template's instances are samples, and a dim or rank they agree on
     * may still vary (runtime/dyn/dyn_template.c). The plan hook derives
     * its output through the same code, so the two cannot drift apart.
     * An op without one has a family's rank reported as varying. */
    int (*shape_rule)(const jit_sig *sig, jit_shape *out);
} tj_op_def;

/* A rule a == b, negatives being dynamic dims' codes: a dynamic side takes
 * the static side's value; two codes become the lower one (one group).
 * 1 if it set one. */
int tj_tie(int64_t *a, int64_t *b);

/* For shape rules (shape_rule above): a dim of sig as an output's,
 * JIT_DIM_DYNAMIC where it is dynamic (negative). */
int64_t tj_rule_dim(int64_t dim);
/* dims[from, to) multiplied as a rule's output dim: 0 if one is 0 (the
 * product then is, whatever the others), else JIT_DIM_DYNAMIC if one is
 * dynamic or the product overflows (no valid shape has it: the plan
 * refuses), else the product. */
int64_t tj_rule_product(const int64_t *dims, int from, int to);
/* The rule of the ops whose output has an input's shape: in's, dynamic
 * dims JIT_DIM_DYNAMIC; -1 for a rank out of range. */
int tj_rule_copy(const jit_shape *in, jit_shape *out);

/* The entry of op, or NULL (and jit_last_error) when op is no known op. */
const tj_op_def *tj_op_find(jit_op op);

/* What is shared by kernels of one argument list, gathers (data, indices,
 * out), scatters (data, indices, updates, out), dynamic kernels (data,
 * indices, updates, out, dims), embedding bags (table, indices, offsets,
 * weights, out) and dynamic bags (the same, then dims): the reference
 * kernel's libffi trampoline, the handlers a released or freed kernel's
 * stub jumps to, and the call of an entry with the generic argument list
 * (weights: bags only) or with libffi's argument array. */
struct tj_abi {
    unsigned nargs;
    void (*ref_trampoline)(void *cif, void *ret, void **args, void *user);
    tj_entry_fn released;
    tj_entry_fn freed; /* what its stub jumps to after jit_shutdown */
    int (*call)(tj_entry_fn fn, const void *data, const void *indices, const void *updates,
                const void *weights, void *out);
    int (*call_args)(tj_entry_fn fn, void **args);
};
const tj_abi *tj_abi_of(const tj_plan *p);
/* 1 for the embedding bags' argument lists (static or dynamic). */
int tj_abi_is_bag(const tj_abi *abi);
/* 1 when target is one of the released (or freed) handlers. */
int tj_abi_is_released_handler(tj_entry_fn target);

/* The generic normalization of a signature for its key: the op's default
 * version, fields the op does not take zeroed, an axis or batch_dims
 * counted from the end brought into range. Same meaning, same bytes. */
void tj_sig_normalize(const tj_op_def *def, jit_sig *sig);

/* The entry of sig's op, or NULL (and jit_last_error) when sig is NULL or
 * its op unknown. The entry points resolve it once and pass it down to the
 * key, the plan and the dynamic template, which take it with a sig of
 * that op. */
const tj_op_def *tj_sig_op(const jit_sig *sig);

/* The plan (and output shape) of a signature of def's op, every check
 * included. */
int tj_sig_plan(const tj_op_def *def, const jit_sig *sig, tj_plan *plan, jit_shape *out_shape);
/* The same for a dynamic family's template and calls: the plan's loose
 * units taken as unit levels (tj_plan_loosen), so that one template's
 * code runs indices smaller than data and equal to it alike. */
int tj_sig_plan_dyn(const tj_op_def *def, const jit_sig *sig, tj_plan *plan,
                    jit_shape *out_shape);

/* jit_output_shape of a signature of def's op (a dynamic one's too), for
 * an op's describe hook, which names its own entry. */
int tj_sig_output_shape(const tj_op_def *def, const jit_sig *sig, jit_shape *out);

#endif
