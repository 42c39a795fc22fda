/* The kernel cache: signature key -> kernel, and entry pointer -> kernel
 * for the info queries and for the runtime functions that generated code
 * calls with its own entry address (jit_support.h). Thread-safe; a miss is compiled once, outside the
 * lock (other signatures compile meanwhile), and every thread asking for
 * the same new signature gets the same pointer.
 *
 * The kernel limit (jit_set_kernel_limit): every kernel handed out carries
 * a hold, dropped by jit_kernel_release. JIT kernels made while a limit is
 * set are handed out behind a stub (stub.h); when the JIT kernels exceed
 * the limit, the ones nobody holds are released, least recently released
 * first. Held kernels are never released, so a limit smaller than what
 * callers hold is exceeded rather than pulling code from under a call. */
#ifndef TJ_CACHE_H
#define TJ_CACHE_H

#include "key.h"
#include "kernel.h"

/* The cached kernel for key, or a new one built from plan, with a hold
 * taken; NULL when building fails (jit_last_error() says why). */
tj_kernel *tj_cache_get(const tj_key *key, const tj_plan *plan, jit_engine engine);

/* The cached kernel for key with a hold taken, or NULL: the hit path, with
 * no checking or planning (a key in the cache proves its signature valid). */
tj_kernel *tj_cache_find(const tj_key *key);

/* Makes key give k, a kernel held in the cache, from now on (tj_cache_find
 * and tj_cache_get hold k for it) until k's code is released. Nothing if
 * key is in the cache already, or on allocation failure (a miss later). */
void tj_cache_alias(const tj_key *key, const tj_kernel *k);

/* The kernel whose entry (or stub) is fn, or NULL. The pointer stays valid
 * while the kernel is held (generated code asks this of itself while it
 * runs, so its caller holds it), and until tj_cache_clear() if it is not
 * released. */
const tj_kernel *tj_cache_find_entry(tj_entry_fn fn);

/* The same, pinned: the kernel limit does not release a pinned kernel, so
 * the pointer stays valid until tj_cache_unpin(pin), held or not. For the
 * queries that callers may make of any pointer, released ones too. */
typedef struct tj_cache_pinned {
    void *slot;
} tj_cache_pinned;
const tj_kernel *tj_cache_pin(tj_entry_fn fn, tj_cache_pinned *pin);
void tj_cache_unpin(tj_cache_pinned *pin);

typedef enum tj_release_result {
    TJ_RELEASE_OK,
    TJ_RELEASE_UNKNOWN,  /* no cached kernel of this op has that pointer */
    TJ_RELEASE_NOT_HELD  /* released as many times as it was handed out */
} tj_release_result;

/* Drops one hold of the op's kernel (JIT_OP_NONE: any op's) handed out as fn; the last one makes a
 * releasable kernel idle, and the limit may then release it. */
tj_release_result tj_cache_release(tj_entry_fn fn, jit_op op);

/* Sets the limit (0: none) and releases what it allows at once. */
void tj_cache_set_limit(int64_t max_kernels, int64_t max_code_bytes);
void tj_cache_stats(jit_kernel_stats *out);

/* Frees every kernel, empties the cache and forgets the limit. */
void tj_cache_clear(void);

#endif
