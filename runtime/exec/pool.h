/* A small pool of worker threads for large kernels. Threads are started
 * on first use and kept until jit_shutdown(). */
#ifndef TJ_POOL_H
#define TJ_POOL_H

#include <stdint.h>

typedef void (*tj_pool_fn)(void *ctx, int64_t begin, int64_t end);

/* Runs fn over [0, units) in up to `threads` contiguous parts, one of them
 * on the calling thread, and returns when all are done. Never blocks on
 * another caller: if the pool is busy, or cannot start a thread, the
 * caller does all of the work itself. */
void tj_pool_run(int threads, int64_t units, tj_pool_fn fn, void *ctx);

/* The wake-up cost assumed until one is measured: 10-20 us measured on
 * the project's host (docs/performance.md). */
#define TJ_POOL_WAKE_NS_START 20000

/* What a job on the pool costs now beyond its work, in ns: measured
 * (pool.c says how), for workers awake or asleep as they are now. */
int64_t tj_pool_cost_ns(void);

/* The host's online CPUs (at least 1): more parts than that never run at
 * once. */
int tj_pool_cpus(void);

/* CLOCK_MONOTONIC in ns: the clock the pool's costs and the split rule's
 * samples are both measured by. */
int64_t tj_pool_now_ns(void);

/* Joins the workers (no pool call may be running). */
void tj_pool_shutdown(void);

#endif
