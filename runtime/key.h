/* Cache keys: the normalized content of a signature as bytes. Spellings of
 * the same meaning (axis -1 and r-1, opset 0 and 8, the type of the axis
 * tensor) give the same key; anything that changes what the kernel does
 * gives another. */
#ifndef TJ_KEY_H
#define TJ_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "tensorjit.h"

#define TJ_KEY_MAX (16 * 8 + 3 * (JIT_MAX_RANK + 1) * 8)

typedef struct tj_key {
    size_t len;
    unsigned char bytes[TJ_KEY_MAX];
} tj_key;

/* Both take a signature that its plan builder has accepted. */
void tj_key_gather_nd(const jit_gather_nd_sig *sig, tj_key *key);
void tj_key_scatter_update(const jit_scatter_update_sig *sig, tj_key *key);
uint64_t tj_key_hash(const unsigned char *bytes, size_t len);

#endif
