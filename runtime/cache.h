/* The kernel cache: signature key -> kernel, and entry pointer -> kernel
 * for the info queries. Thread-safe; a miss is compiled once, outside the
 * lock (other signatures compile meanwhile), and every thread asking for
 * the same new signature gets the same pointer. */
#ifndef TJ_CACHE_H
#define TJ_CACHE_H

#include "key.h"
#include "kernel.h"

/* The cached kernel for key, or a new one built from plan; NULL when
 * building fails (jit_last_error() says why). */
tj_kernel *tj_cache_get(const tj_key *key, const tj_plan *plan, jit_engine engine);

/* The cached kernel for key, or NULL: the hit path, with no checking or
 * planning (a key in the cache proves its signature valid). */
tj_kernel *tj_cache_find(const tj_key *key);

/* The kernel whose entry is fn, or NULL. Kernels live until
 * tj_cache_clear(), so the pointer stays valid until then. */
const tj_kernel *tj_cache_find_entry(tj_entry_fn fn);

/* Frees every kernel and empties the cache. */
void tj_cache_clear(void);

#endif
