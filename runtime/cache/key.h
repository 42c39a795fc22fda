/* Cache keys: an injective encoding of a signature's meaning. Spellings of
 * the same meaning (axis -1 and r-1, opset 0 and the default, an axis
 * tensor that is a scalar or [1], an unset updates type) give the same
 * key; every other difference, valid or not, gives another. So a key found
 * in the cache proves its signature valid, and a hit skips checking and
 * planning. */
#ifndef TJ_KEY_H
#define TJ_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "tensorjit.h"

#define TJ_KEY_WORDS (16 + 4 * (JIT_MAX_RANK + 1) + 3 * JIT_MAX_RANK) /* + bounds */

typedef struct tj_key {
    size_t len; /* bytes */
    int64_t words[TJ_KEY_WORDS];
} tj_key;

/* The key of sig, a signature of def's op: 0, or -1 when a rank is
 * outside [0, JIT_MAX_RANK] (no key: the signature is invalid and will be
 * refused by its checks). */
struct tj_op_def;
int tj_key_sig(const struct tj_op_def *def, const jit_sig *sig, tj_key *key);
uint64_t tj_key_hash(const tj_key *key);

#endif
