/* Tiered kernels: a pointer that works from the first call (the reference
 * kernel) and switches to the JIT kernel once a background thread has
 * compiled it. The call path reads one atomic pointer: no lock. */
#ifndef TJ_TIERED_H
#define TJ_TIERED_H

#include "cache.h"

/* The tiered kernel of a signature's key (made once; its compile started
 * in the background), or NULL. */
tj_kernel *tj_tiered_get(const tj_key *key, const tj_plan *plan);
/* Joins the background compiles and frees every tiered kernel. */
void tj_tiered_shutdown(void);
/* The kernel a tiered entry point runs now, or NULL if fn is none. */
const tj_kernel *tj_tiered_current(tj_entry_fn fn);

#endif
