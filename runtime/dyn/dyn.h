/*
 * Dynamic signatures (SPEC section 6): one kernel for every shape of a
 * family whose ranks, types and attributes are fixed and some dims are not.
 *
 * The family's template is its plan at placeholder dims, made twice (the
 * free dynamic dims at one placeholder, then another; runtime/dyn/
 * dyn_template.c): a word of the plan that differs between the two depends
 * on the dims and is read at call time; every other word is a constant of
 * the kernel. A call binds the actual dims into the signature,
 * plans it with every check of the op, canonicalizes its nest as the
 * template's was (tj_plan_finish_as), and hands the plan to the kernel if
 * each constant word agrees; a shape that does not fit the template that
 * way (a coincidence of the placeholders) runs on the reference kernel, so
 * the template's choices never need to be right for correctness.
 */
#ifndef TJ_DYN_H
#define TJ_DYN_H

#include <stdint.h>

#include "plan.h"

#define TJ_DYN_WORDS ((sizeof(tj_plan) + 7) / 8)
#define TJ_DYN_MASK_WORDS ((TJ_DYN_WORDS + 63) / 64)
/* dims a call passes at most: data, indices and updates (or a bag's
 * table, indices, segment ids and S) */
#define TJ_DYN_MAX_DIMS (3 * JIT_MAX_RANK + 1)

struct tj_op_def;

typedef struct tj_dyn {
    jit_sig sig;      /* the dynamic signature, normalized */
    const struct tj_op_def *def; /* its op's entry, for the calls' plans */
    int ndims;        /* dims per call */
    int jit_ok;       /* the template's nest is every shape's: the JIT may serve */
    char why[256];    /* else why the reference kernel serves */
    tj_plan tmpl;     /* the plan at placeholder dims */
    jit_shape out_shape; /* JIT_DIM_DYNAMIC where it varies */
    int out_rank_varies; /* the output's rank varies too (a dynamic tuple length) */
    uint64_t vary[TJ_DYN_MASK_WORDS]; /* bit w: word w of tmpl varies with the dims */
    /* A split dynamic kernel's measured costs, as tj_kernel.split: every
     * shape's calls weigh their own work with them. */
    tj_split_stat split;
} tj_dyn;

/* The inputs whose dims a call passes, in the order it passes them: each
 * one's rank, dims and bounds (nbound of them) in the signature; an
 * EmbeddingSegmentsSum's num_segments is a last input of rank 1. */
#define TJ_MAX_INPUTS 4
typedef struct tj_inputs {
    int n;
    const int *rank[TJ_MAX_INPUTS];
    int64_t *dims[TJ_MAX_INPUTS];
    int64_t *bound[TJ_MAX_INPUTS];
    int nbound[TJ_MAX_INPUTS];
    const char *name[TJ_MAX_INPUTS];
} tj_inputs;
void tj_inputs_of(const struct tj_op_def *def, jit_sig *s, tj_inputs *in);

/* The ranks in range, no negative dim but JIT_DIM_DYNAMIC, no negative
 * bound of a dynamic dim, the static dims' bounds zeroed; *ndims the dims
 * a call passes. 0, or -1 and jit_last_error(). */
int tj_dyn_check_bounds(const struct tj_op_def *def, jit_sig *s, int *ndims);

/* Whether sig has a dynamic dim among the inputs its op (def) takes. */
int tj_sig_dynamic(const struct tj_op_def *def, const jit_sig *sig);

/* Checks a dynamic signature of def's op (every rule that holds for some
 * shape of the family) and makes its template; 0, or -1 and
 * jit_last_error(). */
int tj_dyn_build(const struct tj_op_def *def, const jit_sig *sig, tj_dyn *d);

/* Whether plan p runs on the template's code: every word the template
 * holds constant is the same. */
int tj_dyn_fits(const tj_dyn *d, const tj_plan *p);

/* The plan of s, an instance of d's family: as_template, with the
 * template's nest if it fits (*fits 1), else its own (*fits 0); -1 and
 * jit_last_error() when s breaks a rule. */
int tj_dyn_plan_sig(const tj_dyn *d, const jit_sig *s, int as_template, tj_plan *p, int *fits);

/* Whether the plan word holding field (a pointer into d->tmpl) varies. */
int tj_dyn_varies(const tj_dyn *d, const void *field);

/* A dynamic signature's output shape (its template's, JIT_DIM_DYNAMIC
 * where it varies): 0, or -1 and jit_last_error() when even its rank
 * varies. */
int tj_dyn_output_shape(const tj_dyn *d, jit_shape *out);

/* The template of a signature of def's op, static or dynamic: the plan
 * (and output shape) of a static one; a dynamic one's template, with
 * plan->dyn = d. */
int tj_sig_template(const struct tj_op_def *def, const jit_sig *sig, tj_plan *plan,
                    jit_shape *out, tj_dyn *d);

/* The plan of one call of d's kernel with dims, remembered per thread
 * under `who` (the kernel's entry) so that a shape seen before costs a
 * compare. JIT_OK with *plan and *fits (1: the template's nest, the
 * kernel's code can run it), or a status (jit_last_error() set). Checks
 * the buffers against the plan too. */
int tj_dyn_plan(const void *who, const tj_dyn *d, const int64_t *dims, const void *data,
                const void *indices, const void *updates, const void *out, const tj_plan **plan,
                int *fits);

/* The same for a shape remembered under who, without d: 1 with *plan,
 * *fits and *status (the buffers' check) when remembered, else 0. */
int tj_dyn_recall(const void *who, const int64_t *dims, const void *data, const void *indices,
                  const void *updates, const void *out, const tj_plan **plan, int *fits,
                  int *status);

/* A call of d's kernel on the reference kernel. */
int tj_dyn_ref_call(const void *who, const tj_dyn *d, const int64_t *dims, const void *data,
                    const void *indices, const void *updates, void *out);
/* The same for an embedding bag's (offsets: or segment ids). */
int tj_dyn_bag_ref_call(const void *who, const tj_dyn *d, const int64_t *dims, const void *table,
                        const void *indices, const void *offsets, const void *weights,
                        void *out);

/* Forgets every thread's remembered plans (a kernel went: its entry
 * address may come back with another signature). */
void tj_dyn_forget(void);

#endif
