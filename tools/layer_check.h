/* Runs one compiled kernel against the reference kernel on random data of
 * its signature's shapes: valid indices, then one bad index. Used by
 * `tensorjit model --check` and `tensorjit check`. */
#ifndef TJ_LAYER_CHECK_H
#define TJ_LAYER_CHECK_H

#include <stdint.h>

#include "tensorjit.h"

typedef struct tj_check_result {
    int runs, passed, failed, skipped;
    char first_failure[256];
} tj_check_result;

/* `runs` random inputs per signature (the last ones with a bad index when
 * the signature has any index); seed makes them repeatable. Inputs above
 * max_bytes in total are skipped with a note. */
void tj_check_gather_nd(const jit_gather_nd_sig *sig, int runs, uint64_t seed,
                        int64_t max_bytes, tj_check_result *r);
void tj_check_scatter_update(const jit_scatter_update_sig *sig, int runs, uint64_t seed,
                             int64_t max_bytes, tj_check_result *r);

#endif
