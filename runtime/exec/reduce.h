/* The scatters' reductions, element by element, in the element type: the
 * reference kernel's arithmetic, and the definition the JIT's must match
 * bit for bit (SPEC section 5 and docs/reductions.md). */
#ifndef TJ_REDUCE_H
#define TJ_REDUCE_H

#include <stdint.h>

#include "plan.h"

/* dst[i] = reduction(dst[i], src[i]) for i in [0, n), elements of p's
 * type. For mean this is the float sum (integers keep theirs in scratch,
 * tj_reduce_mean_add). */
void tj_reduce_elems(const tj_plan *p, void *dst, const void *src, int64_t n);

/* dst[0, n) = the reduction's neutral value (0; 1 for prod; the type's
 * highest for min, lowest for max; -inf/+inf for floats). */
void tj_reduce_neutral(const tj_plan *p, void *dst, int64_t n);

/* Integer mean: the sum is kept in int64 (uint64 for unsigned types), not
 * in the element type, so that narrow types do not overflow. */
int tj_reduce_wide_sum(const tj_plan *p);
int64_t tj_reduce_load_wide(const tj_plan *p, const void *src);
/* dst = the mean of sum over count (floor for integers, the float
 * division for floats, whose sum is dst itself). */
void tj_reduce_mean_store(const tj_plan *p, void *dst, int64_t sum, int64_t count);

/* v = a op b (a sum, difference or product the caller computed), with its
 * NaN made the defined one: a's made quiet if a is a NaN, else b's, else
 * the default NaN (x86's: negative, quiet). The embedding bags' sums and
 * weighted products follow it too (exec/bag_ref.c). */
float tj_arith_nan_f32(float v, float a, float b);
double tj_arith_nan_f64(double v, double a, double b);

/* Whether a reduction needs passes over the updated positions before and
 * after the updates (mean, or no_init_val). */
static inline int tj_reduce_needs_passes(const tj_plan *p)
{
    return p->reduction == JIT_REDUCTION_MEAN || p->no_init_val;
}

#endif
