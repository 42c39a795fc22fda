/* Runs one compiled kernel against the reference kernel on random data of
 * its signature's shapes: valid indices, then one bad index (scatters also
 * in place). Used by `tensorjit model --check` and `tensorjit check`. */
#ifndef TJ_LAYER_CHECK_H
#define TJ_LAYER_CHECK_H

#include <stdint.h>

#include "tensorjit.h"

typedef struct tj_check_result {
    int runs, passed, failed, skipped;
    char first_failure[256];
} tj_check_result;

/* `runs` random inputs of the signature (the last one with a bad index
 * when it has any index); seed makes them repeatable. Inputs above
 * max_bytes in total are skipped with a note. */
void tj_check_layer(const jit_sig *sig, int runs, uint64_t seed, int64_t max_bytes,
                    tj_check_result *r);

#endif
