/* "probe x2": the random-gather probe with its bags in two halves, the
 * first on the calling thread and the second on a thread of its own
 * (bench/bags_probe2.c), the rate two cores fetch rows of that index
 * stream: the limit to hold a bag kernel on two threads against, as the
 * probe is for one. */
#ifndef TJ_BAGS_PROBE2_H
#define TJ_BAGS_PROBE2_H

#include "bags.h"

typedef struct tj_probe_worker tj_probe_worker;

/* The second thread, idle until a call; NULL if it cannot start. */
tj_probe_worker *tj_probe_worker_start(void);
void tj_probe_worker_stop(tj_probe_worker *w);

/* fn over bags [0, bags / 2) here and [bags / 2, bags) on w's thread, at
 * distance dist; returns when both halves have: 0, or the first nonzero
 * status of the two. */
int tj_probe_x2(tj_probe_worker *w, tj_bag_probe_range_fn fn, const void *table,
                const void *indices, const void *offsets, const void *weights, void *out,
                long long dist, long long bags);

#endif
