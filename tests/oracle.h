/* An independent implementation of the indexing family, written from the
 * specification's formulas (SPEC sections 1 and 5: a loop over output
 * coordinates, or over updates for the scatters), not from the library's
 * plan: the differential tests compare the library against it.
 *
 * Semantics the specification leaves to the project, as docs/design.md's
 * "Decisions" fixes them: every index is validated before anything is
 * written, whether or not any copy would use it (so a bad index leaves out
 * untouched, in place too); under the filling policies a bad index gives
 * a zero slice (gathers) or drops its update (scatters); scatters apply
 * updates in row-major order of indices, so the last duplicate wins. */
#ifndef TJ_ORACLE_H
#define TJ_ORACLE_H

#include <stdint.h>

#include "tensorjit.h"

/* Return JIT_OK or JIT_STATUS_BAD_INDEX; on a bad index out is untouched.
 * Signatures must be valid (the oracle does not re-check them). */
int oracle_gather_nd(const jit_gather_nd_sig *sig, const void *data, const void *indices,
                     void *out);
int oracle_scatter_update(const jit_scatter_update_sig *sig, const void *data,
                          const void *indices, const void *updates, void *out);
int oracle_gather(const jit_sig *sig, const void *data, const void *indices, void *out);
int oracle_gather_elements(const jit_sig *sig, const void *data, const void *indices, void *out);
/* Reduction none (replace) only: jit_sig has no reduction yet. out may be data. */
int oracle_scatter_nd_update(const jit_sig *sig, const void *data, const void *indices,
                             const void *updates, void *out);

/* 1 for the ops the oracle implements (the five above). */
int oracle_has(jit_op op);
/* Any op of a jit_sig that oracle_has (updates ignored by gathers). */
int oracle_run(const jit_sig *sig, const void *data, const void *indices, const void *updates,
               void *out);
/* The output shape of a valid signature, from the spec's formulas. */
void oracle_output_shape(const jit_sig *sig, jit_shape *out);

int64_t oracle_elems(const jit_shape *s);
int64_t oracle_read_index(jit_dtype t, const void *indices, int64_t i);

#endif
