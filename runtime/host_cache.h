/* The host's caches, as the kernels' strategies and the bench
 * size things by it (runtime/host_cache.c). */
#ifndef TJ_HOST_CACHE_H
#define TJ_HOST_CACHE_H

#include <stdint.h>

/* Bytes of the largest cache cpu0 has, 0 where the host does not say. */
int64_t tj_host_llc_bytes(void);

/* Bytes of cpu0's level-2 cache (data or unified), 0 where the host does
 * not say. */
int64_t tj_host_l2_bytes(void);

#endif
