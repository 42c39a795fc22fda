#include "split_rule.h"

#include <string.h>

#include "config.h"

/*
 * The split rule. A split kernel's call runs on the calling thread unless
 * threads pay. Its expected time alone (its work, from the call's plan,
 * times its measured cost per unit of work alone) is weighed against what
 * a job on the pool costs now (measured by the pool: tj_pool_cost_ns): it
 * gets as many parts, up to its threads and the host's CPUs, as leave each
 * at least TJ_SPLIT_PART_COSTS of those costs of work, so that T parts
 * are expected to take at most (1 + 1/TJ_SPLIT_PART_COSTS) / T of its
 * time alone (0.75 for two). Then what was measured decides (the
 * verdict): a kernel runs split while its split calls cost less per unit
 * of work than TJ_SPLIT_MARGIN of its calls alone (a scatter by rows, each
 * part scanning every update; a host whose other processes hold the
 * cores; a call of 10 us, G1d, whose split gains too little to tell from
 * noise), and some calls run the other way (probes), so that both costs
 * follow the host. A way's cost is the median of its last
 * TJ_SPLIT_SAMPLES calls: the verdict was the last sample of each way
 * before, and one slow call (a descheduled worker, another engineer's
 * build) locked a kernel alone until the next probe, 8 to 64 calls later,
 * which is all of a benchmark of 30 calls (docs/performance.md, 'Parallel
 * execution'). A probe that disagrees with the verdict is confirmed by a
 * second one at the next call, so that two samples of the other way, taken
 * next to the verdict's own, can turn it without waiting for the next
 * probe; a probe of the split way is taken after a split call that wakes
 * the pool (tj_split_wake_first), so that it costs what split calls back
 * to back would. The model only speaks for short calls (below TJ_SPLIT_ESCAPE_NS)
 * and for a kernel's first split calls: a longer one follows its own
 * measured costs, and probes when a probe is due even while the model
 * says no, since the pool's cost is every kernel's and only jobs measure
 * it again (docs/performance.md, 'Issue 20's leftovers'). The first calls
 * run alone and give the first cost.
 * The same rule for static and dynamic kernels, a dynamic kernel's calls
 * each with their own work.
 */
#define TJ_SPLIT_PART_COSTS 2
#define TJ_SPLIT_MARGIN 0.9
#define TJ_SPLIT_PROBE 64
/* A probe that loses costs its loss once per interval: the interval grows
 * with the loss measured, so that probes add at most this share of a call
 * on average (G3's split calls cost 5.4x its calls alone: a probe every 64
 * calls made its 2-thread kernel 1.09-1.13x the 1-thread one), up to
 * TJ_SPLIT_PROBE_MAX calls, after which a host that changed is noticed. */
#define TJ_SPLIT_PROBE_SHARE 0.01
/* Once a kernel has its first costs, a call kept alone (no probe) is timed
 * one in this many: two clock reads and a cost noted were a few per cent
 * of a 3 us call (G3), and the median of the last three samples needs no
 * more. */
#define TJ_SPLIT_TIME_EVERY 8
#define TJ_SPLIT_PROBE_MAX 1024
/* Calls run alone first, whatever the model says: the first one's time
 * is a cold one (page faults, caches), not the cost to compare with; and
 * as many split calls are tried before their cost is compared. */
#define TJ_SPLIT_WARM 2
/* Calls the model keeps alone still probe a split from this expected time
 * alone: twice the parts' costs of a usual wake-up (tj_split_escape). */
#define TJ_SPLIT_ESCAPE_NS (2.0 * TJ_SPLIT_PART_COSTS * TJ_POOL_WAKE_NS_START)


/* TENSORJIT_SPLIT_MIN: the old rule by bytes, for tests that want every
 * split kernel's call split (the kernel's choice to split is the same). */
static int tj_split_forced(const tj_split_size *p, int *parts)
{
    const tj_knob *k = &tj_config_get()->codegen.split_min;
    if (!k->set)
        return 0;
    int64_t unit_bytes = p->block_bytes > 64 ? p->block_bytes : 64;
    int worth = p->units >= k->value / unit_bytes || p->units > INT64_MAX / unit_bytes ||
                p->units * unit_bytes >= k->value;
    *parts = worth && p->units >= 2 ? p->threads : 1;
    return 1;
}

/* A way's cost in ps per unit of work: the median of its last samples, the
 * lowest while it has fewer (the first of a way is a cold one); 0: none. */
static int64_t tj_split_cost(const tj_split_stat *st, int way)
{
    int64_t v[TJ_SPLIT_SAMPLES];
    int n = 0;
    for (int i = 0; i < TJ_SPLIT_SAMPLES; i++) { /* a slot being written reads 0: skipped */
        int64_t s = __atomic_load_n(&st->sample[way][i], __ATOMIC_RELAXED);
        if (s > 0)
            v[n++] = s;
    }
    for (int i = 1; i < n; i++) /* insertion sort: three values */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            int64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n == 0 ? 0 : n < TJ_SPLIT_SAMPLES ? v[0] : v[n / 2];
}

/* Whether split calls win, from the costs now; notes a change. */
static int tj_split_verdict(tj_split_stat *st)
{
    int64_t alone = tj_split_cost(st, TJ_WAY_ALONE), split = tj_split_cost(st, TJ_WAY_SPLIT);
    int v = (double)split < TJ_SPLIT_MARGIN * (double)alone;
    if (__atomic_exchange_n(&st->verdict, v, __ATOMIC_RELAXED) != v)
        __atomic_add_fetch(&st->flips, 1, __ATOMIC_RELAXED);
    return v;
}

/* The most parts a call of p runs in: its threads, the host's CPUs, its
 * units. */
static int tj_split_most(const tj_split_size *p)
{
    int most = p->threads < tj_pool_cpus() ? p->threads : tj_pool_cpus();
    return most < p->units ? most : (int)p->units;
}

/* The parts the expected time alone (alone_ps per unit of work) is worth. */
static int tj_split_model(const tj_split_size *p, double work, int64_t alone_ps)
{
    if (alone_ps <= 0)
        return 1;
    double alone_ns = (double)alone_ps * work / 1000;
    double n = alone_ns / ((double)TJ_SPLIT_PART_COSTS * (double)tj_pool_cost_ns());
    int most = p->threads < tj_pool_cpus() ? p->threads : tj_pool_cpus();
    int parts = n >= most ? most : (int)n;
    if (parts > p->units)
        parts = (int)p->units;
    return parts < 2 ? 1 : parts;
}

/* Probes at calls 8, 16, 32, then every TJ_SPLIT_PROBE: a verdict from a
 * noisy start is looked at again soon. */
int64_t tj_split_probe_every(int64_t kept_ps, int64_t probe_ps)
{
    if (kept_ps <= 0 || probe_ps <= kept_ps)
        return TJ_SPLIT_PROBE;
    double every = (double)(probe_ps - kept_ps) / (double)kept_ps / TJ_SPLIT_PROBE_SHARE;
    if (every <= TJ_SPLIT_PROBE)
        return TJ_SPLIT_PROBE;
    if (every >= TJ_SPLIT_PROBE_MAX)
        return TJ_SPLIT_PROBE_MAX;
    /* a multiple of the timing interval: probes fall on calls the rule
     * weighs, never on the quiet ones between (tj_split_quiet) */
    int64_t n = (int64_t)every + TJ_SPLIT_TIME_EVERY - 1;
    return n - n % TJ_SPLIT_TIME_EVERY;
}

/* Whether call number `calls` probes the way other than `kept`. */
static int tj_split_probe_due(const tj_split_stat *st, int kept, int64_t calls)
{
    if (calls < TJ_SPLIT_PROBE)
        return calls >= 8 && (calls & (calls - 1)) == 0;
    int64_t kept_ps = tj_split_cost(st, kept), probe_ps = tj_split_cost(st, !kept);
    /* a probe of the split way is two split calls (tj_split_wake_first):
     * its loss counts twice */
    if (kept == TJ_WAY_ALONE && kept_ps > 0 && probe_ps > kept_ps)
        probe_ps += probe_ps - kept_ps;
    return calls % tj_split_probe_every(kept_ps, probe_ps) == 0;
}

/* A due probe of the split way from calls kept alone: first a call that
 * wakes the pool, split but not noted, then the probe at the next call.
 * The workers of a kernel kept alone have slept since its last split
 * call, and a lone split call among calls alone paid their wake-up, which
 * split calls back to back do not: on the 16-core device host (a virtual
 * machine, whose idle cores the hypervisor takes back) a wake-up cost
 * 0.1-3 ms, and S6's probes, each after calls alone, kept losing to the
 * calls alone (2.2 ms) although its split calls back to back took 1.2 ms
 * (docs/performance.md, 'Probes that wake the pool first'). */
static int tj_split_wake_first(tj_split_stat *st)
{
    __atomic_store_n(&st->pending, TJ_PROBE_WAKE, __ATOMIC_RELAXED);
    return TJ_PROBE_WAKE;
}

/* A call the model keeps alone. The pool's cost it weighed may be a
 * moment's (a worker descheduled while the host was busy), and only jobs
 * measure it again: so a call long enough that a usual wake-up would pay
 * (TJ_SPLIT_ESCAPE_NS) still probes a split when one is due (a wake-up
 * call, then the probe: tj_split_wake_first), and a probe that beat the
 * calls alone is confirmed at the next call. Shorter calls
 * (G1, 16 us) stay alone: a probe costs them a wake-up, more than the
 * call. */
static tj_split_way tj_split_escape(const tj_split_size *p, double work, tj_split_stat *st,
                                    int64_t calls, int pending)
{
    tj_split_way w = {1, 0};
    int64_t alone = tj_split_cost(st, TJ_WAY_ALONE);
    if ((double)alone * work / 1000 >= TJ_SPLIT_ESCAPE_NS && tj_split_most(p) > 1)
        w.probe = pending == TJ_PROBE_CONFIRM                ? TJ_PROBE_CONFIRM
                  : pending == TJ_PROBE_WAKE                 ? TJ_PROBE_ESCAPE
                  : tj_split_probe_due(st, TJ_WAY_ALONE, calls) ? tj_split_wake_first(st)
                                                                : 0;
    if (!w.probe) {
        __atomic_add_fetch(&st->modelled, 1, __ATOMIC_RELAXED);
        return w;
    }
    if (w.probe != TJ_PROBE_WAKE)
        __atomic_add_fetch(&st->probes, 1, __ATOMIC_RELAXED);
    w.parts = tj_split_most(p);
    return w;
}

/* How call number `calls` of p (with `work`) runs: the model, the
 * measured costs and the probes; `pending`: the probe this call was to
 * run (st->pending, taken), 0 if none. */
static tj_split_way tj_split_weigh(const tj_split_size *p, double work, tj_split_stat *st,
                                   int64_t calls, int pending)
{
    tj_split_way w = {1, 0};
    int64_t alone = tj_split_cost(st, TJ_WAY_ALONE);
    int parts = tj_split_model(p, work, alone);
    if (calls <= TJ_SPLIT_WARM)
        return w;
    /* a long call whose split calls were measured follows them, not the
     * model: the pool's cost is every kernel's, its own split costs are
     * its own (G5 measured 0.44x split while the pool's cost, raised by
     * others' jobs on a busy host, kept it alone) */
    int measured = __atomic_load_n(&st->taken[TJ_WAY_SPLIT], __ATOMIC_RELAXED) >= TJ_SPLIT_WARM;
    if (parts <= 1 && measured && (double)alone * work / 1000 >= TJ_SPLIT_ESCAPE_NS)
        parts = tj_split_most(p);
    if (parts <= 1)
        return tj_split_escape(p, work, st, calls, pending);
    /* split calls are tried TJ_SPLIT_WARM times before they are judged:
     * the first one starts the pool's threads */
    if (!measured) {
        w.parts = parts;
        return w;
    }
    int verdict = tj_split_verdict(st);
    if (pending == TJ_PROBE_CONFIRM)
        w.probe = TJ_PROBE_CONFIRM;
    else if (pending == TJ_PROBE_WAKE) /* the split way's probe, unless the verdict is split now */
        w.probe = verdict ? 0 : TJ_PROBE_DUE;
    else if (tj_split_probe_due(st, verdict ? TJ_WAY_SPLIT : TJ_WAY_ALONE, calls))
        w.probe = verdict ? TJ_PROBE_DUE : tj_split_wake_first(st);
    if (w.probe && w.probe != TJ_PROBE_WAKE)
        __atomic_add_fetch(&st->probes, 1, __ATOMIC_RELAXED);
    w.parts = verdict != (w.probe != 0) ? parts : 1;
    return w;
}

static int64_t tj_work_bits(double work)
{
    int64_t bits;
    memcpy(&bits, &work, sizeof bits);
    return bits;
}

/* Notes whether the calls of `work` that follow call number `calls`, run
 * as w says, may skip the rule until the next timed one: those of a
 * kernel kept alone, past its first probes. */
static void tj_split_quiet_note(tj_split_stat *st, double work, int64_t calls, tj_split_way w)
{
    int64_t bits = w.parts <= 1 && !w.probe && calls > TJ_SPLIT_PROBE ? tj_work_bits(work) : 0;
    if (__atomic_load_n(&st->quiet_work, __ATOMIC_RELAXED) != bits)
        __atomic_store_n(&st->quiet_work, bits, __ATOMIC_RELAXED);
}

/* Whether a call of `work` runs alone without the rule: the rule kept the
 * calls of this work alone, no probe is pending (the call after a
 * wake-up call, or a confirmation), and the call is not one the rule
 * times (every TJ_SPLIT_TIME_EVERY-th; due probes fall on those too).
 * The rule's weighing (costs sorted, the model, the probes' interval,
 * three atomic updates) took 3% of G3's 3 us calls kept alone;
 * what is left here is an atomic count of the call. *calls: its number,
 * counted here, or 0 when not counted. Threads calling one kernel race
 * on the noted work (a load, then a store): an older "alone" can land
 * after a newer split verdict, and then keeps calls alone until the next
 * timed one (at most TJ_SPLIT_TIME_EVERY - 1): slower, never wrong. */
static int tj_split_quiet(tj_split_stat *st, double work, int64_t *calls)
{
    *calls = 0;
    int64_t bits = __atomic_load_n(&st->quiet_work, __ATOMIC_RELAXED);
    if (bits == 0 || bits != tj_work_bits(work) || __atomic_load_n(&st->pending, __ATOMIC_RELAXED))
        return 0;
    *calls = __atomic_add_fetch(&st->calls, 1, __ATOMIC_RELAXED);
    if (*calls % TJ_SPLIT_TIME_EVERY == 0)
        return 0;
    __atomic_add_fetch(&st->untimed, 1, __ATOMIC_RELAXED);
    return 1;
}

/* How a call of p (with `work`) runs, from st; `counted`: the call's
 * number when tj_split_quiet counted it, else 0. */
static tj_split_way tj_split_choose(const tj_split_size *p, double work, tj_split_stat *st,
                                    int64_t counted)
{
    tj_split_way w = {1, 0};
    if (tj_split_forced(p, &w.parts) || p->threads <= 1 || p->units < 2 ||
        work < TJ_SPLIT_MIN_WORK)
        return w;
    int64_t calls = counted ? counted : __atomic_add_fetch(&st->calls, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&st->weighed, 1, __ATOMIC_RELAXED);
    /* a pending probe is this call's: the one after a wake-up call runs
     * now or never (its workers are awake only now); a confirmation that
     * this call does not run (kept alone by the model, too short to
     * escape) waits for the next */
    int pending = __atomic_load_n(&st->pending, __ATOMIC_RELAXED) /* no write when none */
                      ? __atomic_exchange_n(&st->pending, 0, __ATOMIC_RELAXED)
                      : 0;
    w = tj_split_weigh(p, work, st, calls, pending);
    if (pending == TJ_PROBE_CONFIRM && w.probe != TJ_PROBE_CONFIRM) {
        int none = 0;
        __atomic_compare_exchange_n(&st->pending, &none, TJ_PROBE_CONFIRM, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
    }
    tj_split_quiet_note(st, work, calls, w);
    return w;
}

/* Notes a call's ns per its work as its way's sample. A due probe whose
 * sample would turn the verdict, while the costs still keep it (or an
 * escape's that beat the calls alone), asks for a second at the next
 * call. */
static void tj_split_note(tj_split_stat *st, int way, double ns, double work, int probe)
{
    int64_t ps = (int64_t)(ns * 1000 / work);
    ps = ps > 0 ? ps : 1;
    int64_t at = __atomic_fetch_add(&st->taken[way], 1, __ATOMIC_RELAXED) % TJ_SPLIT_SAMPLES;
    __atomic_store_n(&st->sample[way][at], ps, __ATOMIC_RELAXED);
    if (probe != TJ_PROBE_DUE && probe != TJ_PROBE_ESCAPE)
        return;
    double other = (double)tj_split_cost(st, !way), own = (double)ps;
    int turns = way == TJ_WAY_SPLIT ? own < TJ_SPLIT_MARGIN * other
                                    : !(other < TJ_SPLIT_MARGIN * own);
    int kept = probe == TJ_PROBE_ESCAPE ||
               __atomic_load_n(&st->verdict, __ATOMIC_RELAXED) ==
                   ((double)tj_split_cost(st, TJ_WAY_SPLIT) <
                    TJ_SPLIT_MARGIN * (double)tj_split_cost(st, TJ_WAY_ALONE));
    if (turns && kept)
        __atomic_store_n(&st->pending, TJ_PROBE_CONFIRM, __ATOMIC_RELAXED);
}

/* Whether a call kept alone goes untimed (counted in st->untimed). */
static int tj_split_untimed(tj_split_stat *st)
{
    int64_t calls = __atomic_load_n(&st->calls, __ATOMIC_RELAXED);
    if (calls <= TJ_SPLIT_PROBE || calls % TJ_SPLIT_TIME_EVERY == 0)
        return 0;
    __atomic_add_fetch(&st->untimed, 1, __ATOMIC_RELAXED);
    return 1;
}

int tj_split_decide(const tj_split_size *p, double work, tj_split_stat *st, tj_split_way *w)
{
    int64_t counted;
    *w = (tj_split_way){1, 0};
    if (tj_split_quiet(st, work, &counted))
        return 0;
    *w = tj_split_choose(p, work, st, counted);
    if (w->parts <= 1 && work < TJ_SPLIT_MIN_WORK)
        return 0;
    return !(w->parts <= 1 && !w->probe && tj_split_untimed(st));
}

void tj_split_noted(tj_split_stat *st, tj_split_way w, double ns, double work)
{
    if (w.probe == TJ_PROBE_WAKE) {
        __atomic_add_fetch(&st->woken, 1, __ATOMIC_RELAXED);
        return;
    }
    tj_split_note(st, w.parts <= 1 ? TJ_WAY_ALONE : TJ_WAY_SPLIT, ns, work, w.probe);
}

int tj_split_ways_run(const tj_split_size *p, double work, tj_split_stat *st,
                      const tj_split_ways *ways, void *ctx)
{
    tj_split_way w;
    if (!tj_split_decide(p, work, st, &w))
        return ways->alone(ctx);
    int64_t t0 = tj_pool_now_ns();
    int rc = w.parts <= 1 ? ways->alone(ctx) : ways->split(ctx, w.parts);
    if (rc == JIT_OK)
        tj_split_noted(st, w, (double)(tj_pool_now_ns() - t0), work);
    return rc;
}

/* A range over units, for tj_split_ways_run. */
typedef struct tj_units_call {
    tj_pool_fn range;
    void *ctx;
    int64_t units;
} tj_units_call;

static int tj_units_alone(void *ctx)
{
    const tj_units_call *c = ctx;
    c->range(c->ctx, 0, c->units);
    return JIT_OK;
}

static int tj_units_split(void *ctx, int parts)
{
    const tj_units_call *c = ctx;
    tj_pool_run(parts, c->units, c->range, c->ctx);
    return JIT_OK;
}

static const tj_split_ways tj_units_ways = {tj_units_alone, tj_units_split};

void tj_split_run(const tj_split_size *p, double work, tj_split_stat *st,
                         tj_pool_fn range, void *ctx)
{
    tj_units_call c = {range, ctx, p->units};
    (void)tj_split_ways_run(p, work, st, &tj_units_ways, &c);
}

/* The counts of st (relaxed loads: a running kernel's are a moment's). */
void tj_split_counts_read(const tj_split_stat *s, tj_split_counts *out)
{
    out->calls = __atomic_load_n(&s->calls, __ATOMIC_RELAXED);
    out->alone = __atomic_load_n(&s->taken[TJ_WAY_ALONE], __ATOMIC_RELAXED) +
                 __atomic_load_n(&s->untimed, __ATOMIC_RELAXED);
    out->split = __atomic_load_n(&s->taken[TJ_WAY_SPLIT], __ATOMIC_RELAXED) +
                 __atomic_load_n(&s->woken, __ATOMIC_RELAXED);
    out->probes = __atomic_load_n(&s->probes, __ATOMIC_RELAXED);
    out->woken = __atomic_load_n(&s->woken, __ATOMIC_RELAXED);
    out->modelled = __atomic_load_n(&s->modelled, __ATOMIC_RELAXED);
    out->flips = __atomic_load_n(&s->flips, __ATOMIC_RELAXED);
    int64_t weighed = __atomic_load_n(&s->weighed, __ATOMIC_RELAXED);
    out->quiet = out->calls > weighed ? out->calls - weighed : 0;
    out->alone_ps = tj_split_cost(s, TJ_WAY_ALONE);
    out->split_ps = tj_split_cost(s, TJ_WAY_SPLIT);
    out->pool_ns = tj_pool_cost_ns();
}
