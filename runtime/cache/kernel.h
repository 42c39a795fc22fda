/* One compiled (or bound) kernel: what the cache holds and what the info
 * queries read. */
#ifndef TJ_KERNEL_H
#define TJ_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"

typedef void (*tj_entry_fn)(void);

/* A split JIT kernel's range function: the copies of units [begin, end),
 * the indices validated by its check function; flags: TJ_RANGE_NONNEG
 * where that check proved none negative (plan.h). With TJ_RANGE_CHECK
 * (a kernel that checks in parts) it validates tuples [begin, end)
 * instead and returns TJ_CHECK_BAD / TJ_CHECK_NEGATIVE bits. */
typedef int (*tj_range_fn)(const void *data, const void *indices, const void *updates, void *out,
                           int64_t begin, int64_t end, int flags);

typedef struct tj_kernel {
    tj_plan plan;
    tj_entry_fn entry;       /* the code, cast to the op's kernel type; what
                                generated code passes its helpers as `self` */
    tj_entry_fn user_entry;  /* what callers get: entry, or a stub in front of
                                it when the kernel limit may release it */
    jit_engine engine;       /* JIT_ENGINE_JIT or JIT_ENGINE_REFERENCE */
    char why[512];           /* why the reference kernel serves ("" for JIT) */
    double compile_ms;
    size_t code_bytes;
    void *closure;           /* libffi closure, when the reference kernel serves */
    void *backend_handle;    /* JIT resources, released with the kernel */
    /* a split JIT kernel's parts (NULL otherwise: see lazy_parts); a bag
     * kernel's check is NULL (the runtime's scan checks its parts) */
    int (*check)(const void *indices);
    tj_range_fn range;
    int range_checks; /* range has a check mode (TJ_RANGE_CHECK): jit_validate_part */
    /* the indices the last jit_validate found valid and none negative (its
     * check said so), or NULL: their ranges skip the wrap (runtime/exec/parts.c) */
    const void *nonneg_indices;
    /* the check and range functions the parts API compiled on first use
     * for a JIT kernel without its own (runtime/exec/parts.c); atomic */
    struct tj_lazy_parts *lazy_parts;
    int cache_hit;
    /* A split kernel's measured costs (runtime/exec/split_rule.c). */
    tj_split_stat split;
    struct tj_dyn *dyn;      /* a dynamic kernel's family: plan.dyn points here */
} tj_kernel;

/* 1 when the JIT should try for this engine (the signature's choice and
 * TENSORJIT_JIT); else 0 with the reason in why. */
int tj_jit_wanted(jit_engine engine, char *why, size_t len);
/* 1 when a kernel of plan under engine goes to the JIT (which may still
 * fail to compile it: jit_info then says why); else 0 with why the
 * reference kernel serves: a dynamic family whose template the JIT cannot
 * run (tj_dyn.why), or tj_jit_wanted's reason. The one choice that
 * tj_kernel_build makes and jit_explain reports, so the two cannot drift. */
int tj_kernel_jit_planned(const tj_plan *plan, jit_engine engine, char *why, size_t len);
/* Whether sig asks for threads that its kernel would not use: too little
 * work to split, an unrolled kernel, passes that one thread runs
 * (tj_backend_splits), or a reference kernel, which runs on the caller's
 * thread whatever the count. Such a signature gets the one-thread kernel
 * (api.c), and --explain says so. */
int tj_threads_unused(const jit_sig *sig, const tj_plan *plan);
/* A new kernel for plan (copied into it; key names it in the disk cache):
 * the JIT's when it can serve and the engine asks for it, else the
 * reference kernel behind a closure. NULL only when memory or libffi fail
 * (jit_last_error() says why). */
tj_kernel *tj_kernel_build(const tj_plan *plan, const void *key, size_t key_len, jit_engine engine);
void tj_kernel_destroy(tj_kernel *k);
/* Releases k's lazy_parts, if any (runtime/exec/parts.c). */
void tj_parts_free(tj_kernel *k);

/* The reference kernel behind a function pointer of the op's kernel type:
 * a libffi closure whose user data is the kernel itself. */
int tj_closure_bind(tj_kernel *k);
/* ffi_closure_alloc, after libffi's one-time set-up has run once (closure.c). */
void *tj_closure_alloc(void **code);
void tj_closure_free(tj_kernel *k);

#endif
