/* Runtime functions that generated kernels call: on their cold paths
 * (to write the same message the reference kernel writes) and to run a
 * split kernel over the pool. They take the kernel's own entry address and
 * find its plan through the kernel cache (tj_cache_find_entry). */
#ifndef TJ_JIT_SUPPORT_H
#define TJ_JIT_SUPPORT_H

#include <stdint.h>

#include "tensorjit.h"

int tj_rt_bad_index(const void *self, const void *indices);
int tj_rt_bad_pointer(const void *self, const void *data, const void *indices,
                      const void *updates, const void *out);

/* The calling thread's scratch for a reduction's passes (runtime/exec/
 * scratch.h), or NULL with jit_last_error() set. */
void *tj_rt_scratch(int64_t bytes);

/* A dynamic kernel's entry (self: its own address): -1 and *plan, the
 * call's plan for the code to run; or the status the kernel returns (a
 * bad shape or buffer; or the reference kernel's, which ran the call
 * because its shape does not fit the code's template). */
int tj_rt_dyn_enter(const void *self, const int64_t *dims, const void *data, const void *indices,
                    const void *updates, void *out, const void **plan);
/* A dynamic kernel's bad index, named from the call's plan. */
int tj_rt_dyn_bad_index(const void *plan, const void *indices);

/* A split dynamic kernel's (self) copies of the call's plan, by its range
 * function (data, indices, updates, out, begin, end, plan, flags): over
 * the pool when the split rule (split_rule.c) says threads pay, else
 * here. flags: the range function's (TJ_RANGE_NONNEG); with
 * TJ_RANGE_UNCHECKED the call's indices are checked here first, as
 * tj_rt_parallel's, by its check function (indices, plan) alone or the
 * range function's check mode in parts. */
int tj_rt_dyn_parallel(const void *self, const void *range, const void *check, const void *plan,
                       const void *data, const void *indices, const void *updates, void *out,
                       int flags);

/* A split kernel's copies, over the pool (up to its plan's thread count)
 * when the split rule says threads pay, else here; a status. With
 * TJ_RANGE_UNCHECKED in flags (plan.h) the indices are checked here first,
 * by the check function alone or by the range functions' check mode in
 * parts, a bad one's status returned with nothing written. */
int tj_rt_parallel(const void *self, const void *data, const void *indices, const void *updates,
                   void *out, int flags);

/* What the split rule did with a kernel's calls (its own, or a dynamic
 * kernel's family's), for `tensorjit bench --threads --verbose`: calls it
 * counted; calls alone and split (the first ones included); of them,
 * probes, and split calls that woke the pool before a probe (not noted,
 * not counted as probes); weighed calls the model kept alone; changes of
 * the verdict;
 * calls kept alone without the weighing (tj_split_quiet); each way's cost
 * now (ps per unit of work) and the pool's job cost (ns). */
typedef struct tj_split_counts {
    int64_t calls, alone, split, probes, woken, modelled, flips, quiet;
    int64_t alone_ps, split_ps, pool_ns;
} tj_split_counts;
/* 0 and *out for a kernel of this library; -1 (*out zeroed) otherwise. */
int tj_split_counts_of(jit_kernel fn, tj_split_counts *out);
/* How many jit_run_range calls the reference code served so far, in this
 * process (runtime/exec/parts.c): tests hold JIT kernels' ranges to none. */
int64_t tj_parts_reference_ranges(void);

/* An embedding bag's kernel (self) found a NULL buffer or a bad offset,
 * segment id or index: the status, and the message naming the lowest bad
 * one (exec/bag_check.h). */
int tj_rt_bag_bad(const void *self, const void *table, const void *indices, const void *offsets,
                  const void *weights, const void *out);

/* A dynamic bag kernel's (self) call, before its bags: JIT_OK when its
 * dims bind its template (exec/bag_check.h, tj_bag_bind), the buffers it
 * needs are there and its offsets (segment ids) and indices pass the
 * scan (exec/bag_scan.h), the rows of the first `prime` lookups then
 * prefetched (bag_prime.h; 0: none, as for a split kernel, whose ranges
 * prime their own on the threads that read them); else the status, with
 * the message naming the lowest bad one. One call, not a check pass and
 * a priming of the kernel's own: a family's code generation is its
 * compile (docs/performance.md, 'A family's checks in one call'). */
int tj_rt_bag_dyn_begin(const void *self, const int64_t *dims, const void *table,
                        const void *indices, const void *offsets, const void *weights,
                        const void *out, int64_t prime);

/* A bag kernel's (self, a dynamic one's with its call's dims, else dims
 * NULL) bags [begin, end), after its fast path left a float sum with a
 * NaN: those whose rows hold a NaN reduced again by the reference kernel,
 * whose NaN rule the JIT's follows (exec/bag_ref.h); the inputs were
 * checked. A status. */
int tj_rt_bag_redo(const void *self, const int64_t *dims, const void *table, const void *indices,
                   const void *offsets, const void *weights, void *out, int64_t begin,
                   int64_t end);

/* A split bag kernel's range function: bags [begin, end), their inputs
 * checked by then. A bag kernel's tj_kernel.range holds one of these. */
typedef int (*tj_bag_range_fn)(const void *table, const void *indices, const void *offsets,
                               const void *weights, void *out, int64_t begin, int64_t end);

/* A split bag kernel's (self) bags (or segments), over the pool (units =
 * bags) when the split rule says threads pay, else here; a status. */
int tj_rt_bag_parallel(const void *self, const void *table, const void *indices,
                       const void *offsets, const void *weights, void *out);

/* A split dynamic bag kernel's range function: tj_bag_range_fn, then the
 * call's dims. Not loaded with the kernel (the parts API offers no
 * dynamic kernel's): its main passes it to tj_rt_bag_dyn_parallel. */
typedef int (*tj_bag_dyn_range_fn)(const void *table, const void *indices, const void *offsets,
                                   const void *weights, void *out, int64_t begin, int64_t end,
                                   const int64_t *dims);

/* tj_rt_bag_parallel for a split dynamic bag kernel (self), its call's
 * dims (checked by tj_rt_bag_dyn_begin) deciding the units and the work,
 * by its range function. */
int tj_rt_bag_dyn_parallel(const void *self, const void *range, const int64_t *dims,
                           const void *table, const void *indices, const void *offsets,
                           const void *weights, void *out);

#endif
