/*
 * What the files of a kernel's IR share: the emitter's context (tj_kir),
 * its reading of the plan's numbers, the cursor of the nest, and the
 * functions one file gives the others. Private to ir/: the runtime knows
 * a kernel's IR by kernel_ir.h.
 *
 *   kernel_ir.c        the module: a static or dynamic kernel from the parts
 *   kernel_strategy.c  how a kernel is generated (tj_ir_choose)
 *   kernel_index.c     index entries: loaded, wrapped, placed by the policy
 *   kernel_validate.c  the checks before anything is written
 *   kernel_copy.c      out = data, and the block copy of one tuple
 *   kernel_vector.c    an innermost level as vector gathers
 *   kernel_nest.c      the levels of the nest
 *   kernel_pass.c      the walks of the nest: passes, wrap once, streaming, ranges
 *   kernel_entry.c     the entry functions and their buffers
 *   kernel_split.c     a split kernel's check, range and main functions
 */
#ifndef TJ_KERNEL_INTERNAL_H
#define TJ_KERNEL_INTERNAL_H

#include "dyn.h"
#include "emit.h"
#include "kernel_ir.h"
#include "reduce_ir.h"

typedef struct tj_kir {
    tj_emit e;
    const tj_plan *p;
    tj_ir_strategy st;
    LLVMTypeRef idx_ty;
    int idx_signed;
    int nt_path; /* emitting the non-temporal copy */
    /* Wrap once (negative-wraps): the validation pass also says whether any
     * index is negative (sign: it tracks that), and the copies are emitted
     * twice, the path for indices proven non-negative (nowrap) without the
     * wrap. */
    int sign;
    int nowrap;
    LLVMValueRef main_fn; /* the kernel's entry: what the runtime knows it by */
    LLVMValueRef data, indices, updates, out;
    LLVMValueRef begin, end; /* the range function's bounds; NULL elsewhere */
    tj_reduce_pass pass;     /* a reduction: which walk of the nest is emitted */
    LLVMValueRef scratch;    /* a mean's counts (tj_rt_scratch), else NULL */
    LLVMValueRef out_elems;  /* a dynamic kernel's mean: the call's elements of out */
    /* A dynamic kernel: its family, and the words of the call's plan that
     * vary, loaded once at entry (NULL where the template's are constants). */
    const tj_dyn *dyn;
    LLVMValueRef word[TJ_DYN_WORDS];
} tj_kir;

/* A number of the plan (field points into k->p): the call's where it
 * varies in a dynamic kernel, else the constant. */
static inline LLVMValueRef tj_pv(const tj_kir *k, const int64_t *field)
{
    size_t w = (size_t)((const char *)field - (const char *)k->p) / 8;
    if (k->dyn && w < TJ_DYN_WORDS && k->word[w])
        return k->word[w];
    return tj_i64(&k->e, *field);
}

/* Whether that number is only known at call time. */
static inline int tj_pdyn(const tj_kir *k, const int64_t *field)
{
    size_t w = (size_t)((const char *)field - (const char *)k->p) / 8;
    return k->dyn && w < TJ_DYN_WORDS && k->word[w] != NULL;
}

/* a * the plan's number at field */
static inline LLVMValueRef tj_mulv(tj_kir *k, LLVMValueRef a, const int64_t *field,
                                   const char *name)
{
    if (!tj_pdyn(k, field))
        return tj_mul(&k->e, a, *field, name);
    return LLVMBuildMul(k->e.b, a, tj_pv(k, field), name);
}

/* The kernel's own entry, which it passes to the runtime's functions: they
 * find its plan by it. */
static inline LLVMValueRef tj_self(tj_kir *k)
{
    return LLVMConstPointerCast(k->main_fn, k->e.ptr);
}

/* Where the nest stands: offsets in the index stream (elements) and on
 * the indexed and dense sides (bytes), constants when unrolled. */
typedef struct tj_vcursor {
    LLVMValueRef index, indexed, dense;
} tj_vcursor;

/* kernel_index.c: index entries */
LLVMValueRef tj_load_index(tj_kir *k, LLVMValueRef i);
LLVMValueRef tj_dim_like(tj_kir *k, LLVMValueRef v, int d, int64_t add);
LLVMValueRef tj_wrap(tj_kir *k, LLVMValueRef v, int d);
LLVMValueRef tj_position(tj_kir *k, LLVMValueRef v, int d, LLVMValueRef *valid);
int tj_tracks_sign(const tj_kir *k);

/* kernel_validate.c: the checks */
void tj_emit_pointer_checks(tj_kir *k);
LLVMValueRef tj_emit_validation(tj_kir *k);
LLVMValueRef tj_emit_check_part(tj_kir *k);
LLVMValueRef tj_emit_dyn_validation(tj_kir *k, LLVMValueRef rp);

/* kernel_copy.c: the copies */
void tj_emit_data_copy(tj_kir *k);
void tj_emit_tuple(tj_kir *k, tj_vcursor c);

/* kernel_vector.c: vector gathers */
void tj_emit_gather_lanes(tj_kir *k, const tj_level *v, tj_vcursor c);
void tj_emit_vector_level(tj_kir *k, const tj_level *v, tj_vcursor c);

/* kernel_nest.c: the levels */
tj_vcursor tj_advance(tj_kir *k, tj_vcursor c, const tj_level *v, LLVMValueRef i);
void tj_emit_level_n(tj_kir *k, int l, const tj_level *v, tj_vcursor c, LLVMValueRef n,
                     tj_vcursor start, LLVMValueRef first);
void tj_emit_nest(tj_kir *k, int l, tj_vcursor c);

/* kernel_pass.c: the walks of the nest */
void tj_emit_scratch(tj_kir *k);
void tj_emit_passes_by_sign(tj_kir *k, LLVMValueRef neg);

/* kernel_entry.c: the entry functions */
void tj_function_attrs(tj_emit *e, const tj_ir_strategy *st, LLVMValueRef fn);
void tj_bind_buffers(tj_kir *k, LLVMValueRef fn, int with_updates);
void tj_emit_signature(tj_kir *k, const char *name);
void tj_emit_dyn_words(tj_kir *k, LLVMValueRef rp);
LLVMValueRef tj_emit_dyn_entry(tj_kir *k, const char *name);

/* kernel_split.c: a split kernel's functions */
LLVMValueRef tj_emit_check_function(tj_kir *k, const char *name);
LLVMValueRef tj_emit_range_function(tj_kir *k, const char *name);
void tj_emit_split_main(tj_kir *k, LLVMValueRef check, LLVMValueRef range);
LLVMValueRef tj_emit_dyn_check_function(tj_kir *k, const char *name);
void tj_emit_dyn_split_main(tj_kir *k, LLVMValueRef rp, LLVMValueRef check,
                            LLVMValueRef range);
LLVMValueRef tj_emit_dyn_small(tj_kir *k);

#endif
