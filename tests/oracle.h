/* An independent implementation of GatherND and ScatterUpdate, written
 * from the specification's formulas (a loop over output coordinates), not
 * from the plan: the differential tests compare the library against it. */
#ifndef TJ_ORACLE_H
#define TJ_ORACLE_H

#include <stdint.h>

#include "tensorjit.h"

/* Return JIT_OK or JIT_STATUS_BAD_INDEX; on a bad index out is untouched. */
int oracle_gather_nd(const jit_gather_nd_sig *sig, const void *data, const void *indices,
                     void *out);
int oracle_scatter_update(const jit_scatter_update_sig *sig, const void *data,
                          const void *indices, const void *updates, void *out);

int64_t oracle_elems(const jit_shape *s);
int64_t oracle_read_index(jit_dtype t, const void *indices, int64_t i);

#endif
