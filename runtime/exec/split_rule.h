/*
 * The split rule (split_rule.c): whether a split kernel's call runs on the
 * calling thread or in parts over the pool, from the call's work, the
 * pool's measured cost and the kernel's own measured costs each way.
 */
#ifndef TJ_SPLIT_RULE_H
#define TJ_SPLIT_RULE_H

#include <stdint.h>

#include "jit_support.h"
#include "plan.h"
#include "pool.h"

enum { TJ_WAY_ALONE, TJ_WAY_SPLIT };
/* Probes: one due (tj_split_probe_due), its confirmation, one due while
 * the model keeps the calls alone (tj_split_escape), and the split call
 * before a probe of the split way that wakes the pool, its time not noted
 * (tj_split_wake_first). */
enum { TJ_PROBE_NONE, TJ_PROBE_DUE, TJ_PROBE_CONFIRM, TJ_PROBE_ESCAPE, TJ_PROBE_WAKE };

/* What the split rule reads of a call besides its work: the units its
 * parts divide, the kernel's threads, and the bytes of a unit's block
 * (TENSORJIT_SPLIT_MIN's rule). A plan's (tj_parallel_run), or a bag
 * call's, whose units are bags (tj_bag_split). */
typedef struct tj_split_size {
    int64_t units;
    int threads;
    int64_t block_bytes;
} tj_split_size;

/* How a call is to run: its parts, and whether it probes (runs the way
 * the verdict does not say; TJ_PROBE_*, 0: no). */
typedef struct tj_split_way {
    int parts, probe;
} tj_split_way;

/* How a split call runs each way: alone on the calling thread, or in
 * `parts` parts over the pool; each returns a status (a check's failure).
 * A call of a range over units (tj_split_run) or one that checks its
 * indices in parts first (tj_rt_parallel, TJ_RANGE_UNCHECKED). */
typedef struct tj_split_ways {
    int (*alone)(void *ctx);
    int (*split)(void *ctx, int parts);
} tj_split_ways;

/* A split call of `work`: alone or split as tj_split_decide says, its time
 * noted in st (tj_split_noted); the status of the way that ran. A call
 * below TJ_SPLIT_MIN_WORK (a dynamic kernel's small shape) runs alone
 * untimed, unless TENSORJIT_SPLIT_MIN splits it. */
int tj_split_ways_run(const tj_split_size *p, double work, tj_split_stat *st,
                      const tj_split_ways *ways, void *ctx);
/* tj_split_ways_run of a range over p->units. */
void tj_split_run(const tj_split_size *p, double work, tj_split_stat *st, tj_pool_fn range,
                  void *ctx);
/* The rule's two steps around a call, which tj_split_ways_run takes and
 * tests drive with made-up times: how the call of p (with `work`) runs
 * (*w), and whether its time is to be noted (0: a call alone that the
 * rule leaves untimed); then, after a timed call that succeeded, its ns
 * noted. */
int tj_split_decide(const tj_split_size *p, double work, tj_split_stat *st, tj_split_way *w);
void tj_split_noted(tj_split_stat *st, tj_split_way w, double ns, double work);
/* Every how many calls the split rule probes the way its verdict does not
 * take, from the kept way's and the probed way's costs (ps per unit of
 * work; 0: not measured): the more a probe loses, the rarer. */
int64_t tj_split_probe_every(int64_t kept_ps, int64_t probe_ps);
/* The counts of st (relaxed loads: a running kernel's are a moment's). */
void tj_split_counts_read(const tj_split_stat *s, tj_split_counts *out);

#endif
