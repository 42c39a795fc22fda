/*
 * A dynamic family's template: the plan at placeholder dims, made twice,
 * and which of its words vary (runtime/dyn/dyn.h).
 *
 * A rule of the op may tie a dynamic dim to a static one, possibly at
 * another position (ScatterUpdate's updates hold indices' dims after
 * data's first `axis` ones), to another dynamic dim (updates' dims to
 * indices'), or to a number the ranks fix (ScatterNDUpdate's tuple
 * length). The op's tie hook (op.h) says what its equalities fix: dynamic
 * dims it ties to a static dim take that value, and dynamic dims it ties
 * together form one group, which takes one value. Rules that are not
 * equalities (ScatterElementsUpdate's indices no larger than data) the
 * search meets by trying: the groups free (a placeholder) first, then with
 * one, two or three of them given a value among the signature's static
 * dims (the first 24 distinct ones), 1 to 4, the inputs' ranks and a
 * number above every static dim, until an instance is valid whose twin
 * (every free group another placeholder) is valid too and plans the same
 * nest. Then each tied group is tried free again, with two numbers above
 * every static dim, the placeholders, or two small numbers (so a bound
 * from below or from above is met).
 * Groups still tied are constants of the template: a call where one
 * differs runs on the reference kernel (tj_dyn_fits in dyn.c).
 * The family's output shape is the op's shape rule's (op.h), applied to
 * the dims as the ties left them, not the instances': those are samples
 * (tj_dyn_output).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "dyn.h"
#include "error.h"
#include "key.h"
#include "op.h"
#include "shape.h"

#define TJ_DYN_MAX_TIES 3
#define TJ_DYN_MAX_TRIES 20000
/* The static dims the candidates hold at most; the values derived from
 * the signature (1 to 4, the inputs' ranks, one above every static dim)
 * come on top and are never dropped: a GatherND tuple may have to be as
 * long as data's rank, however many distinct static dims there are. */
#define TJ_DYN_MAX_CANDS 24
#define TJ_DYN_MAX_DERIVED (4 + TJ_MAX_INPUTS + 1)

typedef struct tj_dyn_search {
    const tj_op_def *def;               /* the family's op */
    jit_sig sig;                        /* the instance being tried */
    int64_t *dim[TJ_DYN_MAX_DIMS];      /* its dynamic dims, after the op's ties */
    int group[TJ_DYN_MAX_DIMS];         /* each one's group */
    int ndims, ngroups;
    int64_t val_a[TJ_DYN_MAX_DIMS];     /* each group's value in the instance */
    int64_t val_b[TJ_DYN_MAX_DIMS];     /* and in its twin */
    int tied[TJ_DYN_MAX_DIMS];          /* the group takes a candidate, not a placeholder */
    int64_t cand[TJ_DYN_MAX_CANDS + TJ_DYN_MAX_DERIVED]; /* values a tied group may take */
    int ncand;                          /* those the search tries now */
    int ncand_all;                      /* all of them */
    int ncand_first;                    /* the first pass's (tj_dyn_search_template) */
    int64_t free_a, free_b, big_a, big_b; /* placeholders: small, and above every static */
    int tries, max_tries;               /* plans made; the pass's end */
    int found_valid;                    /* an instance was valid (found_sig) */
    jit_sig found_sig;
    int rule_ok;                        /* the op's shape rule gave rule_out a rank */
    jit_shape rule_out;                 /* its output of the coded dims */
} tj_dyn_search;

static int tj_has(const int64_t *v, int n, int64_t x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* The op's ties to a fixpoint, dynamic dims coded -2, -3, ... so that
 * tj_tie can join them (each pass sets a dim or ends), then the groups. */
static void tj_dyn_groups(tj_dyn_search *s, const tj_inputs *in)
{
    int64_t next = -2;
    for (int i = 0; i < in->n; i++)
        for (int d = 0; d < *in->rank[i]; d++)
            if (in->dims[i][d] == JIT_DIM_DYNAMIC)
                in->dims[i][d] = next--;
    const tj_op_def *def = s->def;
    for (int pass = 0; def->tie && pass < 4 * TJ_DYN_MAX_DIMS && def->tie(&s->sig); pass++)
        ;
    int64_t code[TJ_DYN_MAX_DIMS];
    for (int i = 0; i < in->n; i++)
        for (int d = 0; d < *in->rank[i]; d++) {
            int64_t *x = &in->dims[i][d];
            if (*x >= 0)
                continue;
            int g = 0;
            while (g < s->ngroups && code[g] != *x)
                g++;
            if (g == s->ngroups)
                code[s->ngroups++] = *x;
            s->group[s->ndims] = g;
            s->dim[s->ndims++] = x;
        }
}

/* Whether every byte count of an instance with its dynamic dims
 * (negative codes) at v fits in int64: the product of every input's dims
 * (zeros counted as ones: they hide partial products, not bound them)
 * bounds each input's, the output's (at most data's times indices') and
 * every partial product, in elements of at most 8 bytes. */
static int tj_dyn_bytes_fit(const tj_inputs *in, int64_t v)
{
    int64_t bound = 8;
    for (int i = 0; i < in->n; i++)
        for (int d = 0; d < *in->rank[i]; d++) {
            int64_t x = in->dims[i][d];
            if (tj_mul_i64(bound, x < 0 ? v : x > 0 ? x : 1, &bound))
                return 0;
        }
    return 1;
}

/* Two placeholders no static dim equals (a free dim never looks tied),
 * the first two of values that are not. */
static void tj_dyn_placeholders(tj_dyn_search *s, const int64_t *statics, int n,
                                const int64_t *values, size_t nvalues)
{
    int got = 0;
    for (size_t i = 0; i < nvalues && got < 2; i++)
        if (!tj_has(statics, n, values[i]))
            *(got++ ? &s->free_b : &s->free_a) = values[i];
}

static void tj_dyn_add_candidate(tj_dyn_search *s, int64_t v)
{
    if (!tj_has(s->cand, s->ncand_all, v))
        s->cand[s->ncand_all++] = v;
}

/* The candidates: the first TJ_DYN_MAX_CANDS of the n distinct static
 * dims, then the derived values, deduplicated against those kept only (a
 * rank equal to a static dim past the cap is no candidate otherwise).
 * The search once took the first TJ_DYN_MAX_CANDS of the static dims and
 * the derived values together, so the derived ones went first when
 * static dims were many: that list is a prefix of this one (ncand_first),
 * and a first pass over it alone finds what it always found. */
static void tj_dyn_candidates(tj_dyn_search *s, const tj_inputs *in, const int64_t *statics,
                              int n)
{
    for (int i = 0; i < n && i < TJ_DYN_MAX_CANDS; i++)
        s->cand[s->ncand_all++] = statics[i];
    for (int64_t small = 1; small <= 4; small++) /* tuple lengths, ranks */
        tj_dyn_add_candidate(s, small);
    /* a tuple as long as data's rank: with ranks past 17 every shorter
     * one makes an output of more than JIT_MAX_RANK dims */
    for (int i = 0; i < in->n; i++)
        if (*in->rank[i] > 4)
            tj_dyn_add_candidate(s, *in->rank[i]);
    /* no static dim is as large; added even where it equals a rank, as
     * it always was, so that the first pass's list is the old one */
    s->cand[s->ncand_all++] = s->big_a;
    s->ncand_first = s->ncand_all < TJ_DYN_MAX_CANDS ? s->ncand_all : TJ_DYN_MAX_CANDS;
}

/* The candidates and placeholders, from the static dims left; the values
 * above every static dim are above `least` too. */
static void tj_dyn_values(tj_dyn_search *s, const tj_inputs *in, int64_t least)
{
    int64_t statics[TJ_DYN_MAX_DIMS], top = least;
    int n = 0;
    for (int i = 0; i < in->n; i++)
        for (int d = 0; d < *in->rank[i]; d++) {
            int64_t x = in->dims[i][d];
            if (x >= 0 && !tj_has(statics, n, x))
                statics[n++] = x;
            top = x > top ? x : top;
        }
    /* Primes from 5 keep clear of tuple lengths and ranks. With many
     * dynamic dims (5^28 elements overflow) they would make every instance
     * too large: then 2 and up, whose powers fit for every rank. */
    static const int64_t primes[] = {5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53,
                                     59, 61, 67, 71, 73, 79, 83, 89, 97, 101};
    static const int64_t smallest[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47,
                                       53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101};
    tj_dyn_placeholders(s, statics, n, primes, sizeof primes / sizeof *primes);
    if (!tj_dyn_bytes_fit(in, s->free_b))
        tj_dyn_placeholders(s, statics, n, smallest, sizeof smallest / sizeof *smallest);
    s->big_a = top < INT64_MAX / 4 ? 2 * top + 11 : 11; /* above every static dim */
    s->big_b = s->big_a + 2;
    tj_dyn_candidates(s, in, statics, n);
}

static void tj_dyn_search_init(tj_dyn_search *s, const tj_op_def *def, const jit_sig *sig)
{
    tj_inputs in;
    memset(s, 0, sizeof *s);
    s->def = def;
    s->sig = *sig;
    tj_inputs_of(def, &s->sig, &in);
    tj_dyn_groups(s, &in);
    /* the rule while the dynamic dims are codes (the ties applied): what
     * it holds fixed is fixed in every instance of the family */
    s->rule_ok = def->shape_rule && def->shape_rule(&s->sig, &s->rule_out) == 0;
    /* an embedding bag's default and padding rows are rows of the table:
     * a dynamic table's placeholders must hold them */
    int64_t rows = 0, lim = INT64_MAX / 4, pad = sig->padding_idx;
    if (sig->has_default_index && sig->default_index >= 0 && sig->default_index < lim)
        rows = sig->default_index + 1;
    if (sig->has_padding_idx && pad > -lim && pad < lim)
        rows = pad < 0 && -pad > rows ? -pad : pad + 1 > rows ? pad + 1 : rows;
    tj_dyn_values(s, &in, rows);
    for (int g = 0; g < s->ngroups; g++) {
        s->val_a[g] = s->free_a;
        s->val_b[g] = s->free_b;
    }
}

/* The instance (twin 0) or its twin (1). */
static void tj_dyn_assign(tj_dyn_search *s, int twin)
{
    for (int i = 0; i < s->ndims; i++)
        *s->dim[i] = twin ? s->val_b[s->group[i]] : s->val_a[s->group[i]];
}

static int tj_same_structure(const tj_plan *a, const tj_plan *b)
{
    return a->written_levels == b->written_levels && a->nlevels == b->nlevels &&
           a->depth == b->depth && memcmp(a->recipe, b->recipe, sizeof a->recipe) == 0;
}

/* The template from the instance and its twin as they stand: 0 when both
 * are valid and plan one nest (d->tmpl, vary and out_shape then set). */
static int tj_dyn_try_plans(tj_dyn *d, tj_dyn_search *s)
{
    tj_plan pb;
    jit_shape oa, ob;
    s->tries++;
    tj_dyn_assign(s, 0);
    if (tj_sig_plan_dyn(s->def, &s->sig, &d->tmpl, &oa))
        return -1;
    if (!s->found_valid) {
        s->found_valid = 1;
        s->found_sig = s->sig;
    }
    tj_dyn_assign(s, 1);
    if (tj_sig_plan_dyn(s->def, &s->sig, &pb, &ob) || !tj_same_structure(&d->tmpl, &pb))
        return -1;
    const uint64_t *wa = (const uint64_t *)(const void *)&d->tmpl;
    const uint64_t *wb = (const uint64_t *)(const void *)&pb;
    memset(d->vary, 0, sizeof d->vary);
    for (size_t w = 0; w < sizeof(tj_plan) / 8; w++)
        if (wa[w] != wb[w])
            d->vary[w / 64] |= (uint64_t)1 << (w % 64);
    /* loose units tile data's copy in some calls and not in others
     * (unit_copy_bytes 0: tj_plan_loosen): a word of each call's, as the
     * instance and twin may agree on either */
    if (d->tmpl.loose_units && d->tmpl.unit_levels) {
        size_t w = offsetof(tj_plan, unit_copy_bytes) / 8;
        d->vary[w / 64] |= (uint64_t)1 << (w % 64);
    }
    d->out_shape = oa;
    for (int i = 0; i < oa.rank; i++)
        if (oa.dims[i] != ob.dims[i])
            d->out_shape.dims[i] = JIT_DIM_DYNAMIC;
    return 0;
}

/* The same with the plans' messages muted: a search drops them, and
 * formatting them was most of its time where every try fails
 * (docs/performance.md, 'Dynamic dims'). */
static int tj_dyn_try(tj_dyn *d, tj_dyn_search *s)
{
    tj_error_mute();
    int r = tj_dyn_try_plans(d, s);
    tj_error_unmute();
    return r;
}

static void tj_dyn_set(tj_dyn_search *s, int g, int64_t a, int64_t b, int tied)
{
    s->val_a[g] = a;
    s->val_b[g] = b;
    s->tied[g] = tied;
}

/* Every choice of nt groups (increasing, from group `from`) and of their
 * candidates; 0 at the first that gives a template. */
static int tj_dyn_ties(tj_dyn *d, tj_dyn_search *s, int t, int nt, int from)
{
    if (t == nt)
        return tj_dyn_try(d, s);
    for (int g = from; g < s->ngroups; g++) {
        for (int c = 0; c < s->ncand; c++) {
            if (s->tries >= s->max_tries)
                break;
            tj_dyn_set(s, g, s->cand[c], s->cand[c], 1);
            if (tj_dyn_ties(d, s, t + 1, nt, g + 1) == 0)
                return 0;
        }
        tj_dyn_set(s, g, s->free_a, s->free_b, 0);
    }
    return -1;
}

/* Each tied group free again where the family allows it, keeping the
 * template valid: with two values above every static dim (a rule like
 * data >= indices wants them), the placeholders, or two small ones
 * (indices <= data). */
static void tj_dyn_untie(tj_dyn *d, tj_dyn_search *s)
{
    const int64_t pairs[][2] = {{s->big_a, s->big_b}, {s->free_a, s->free_b}, {3, 4}, {2, 3}};
    for (int g = 0; g < s->ngroups; g++) {
        if (!s->tied[g])
            continue;
        int64_t a = s->val_a[g];
        int freed = 0;
        for (size_t i = 0; i < sizeof pairs / sizeof *pairs && !freed; i++) {
            tj_dyn_set(s, g, pairs[i][0], pairs[i][1], 0);
            freed = tj_dyn_try(d, s) == 0;
        }
        if (!freed)
            tj_dyn_set(s, g, a, a, 1);
    }
    tj_dyn_try(d, s); /* the template of what stands */
}

/* Whether d's template runs s (an instance of its family) on its code. */
static int tj_dyn_runs(const tj_dyn *d, const jit_sig *s)
{
    tj_plan p;
    int fits = 0;
    return tj_dyn_plan_sig(d, s, 1, &p, &fits) == 0 && fits;
}

/* The next of values that no candidate (a static dim, 1 to 4) or
 * placeholder equals: 0 and *v, or -1 when none is left. */
static int tj_dyn_fresh(const tj_dyn_search *s, const int64_t *values, size_t n, size_t *next,
                        int64_t *v)
{
    for (; *next < n; (*next)++) {
        int64_t x = values[*next];
        if (!tj_has(s->cand, s->ncand, x) && x != s->free_a && x != s->free_b && x != s->big_b) {
            *v = x;
            (*next)++;
            return 0;
        }
    }
    return -1;
}

/* Each free group given values of its own where the template stays
 * valid and still runs the shapes it ran (its instance and twin). Free
 * groups share the placeholders, so dims of different groups are equal in
 * the template: neighbouring levels that walk as one only at equal dims
 * (torch_dims' indices no larger than data: indices' dim i merges with the
 * next one while it equals data's) were merged, and a call where they
 * differ did not fit and ran on the reference kernel. Unit levels, which
 * a call can only keep, never go: a template without them would not run
 * its instance. */
static void tj_dyn_spread(tj_dyn *d, tj_dyn_search *s)
{
    static const int64_t primes[] = {11,  13,  17,  19,  23,  29,  31,  37,  41,  43,  47,  53,
                                     59,  61,  67,  71,  73,  79,  83,  89,  97,  101, 103, 107,
                                     109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173};
    size_t next = 0;
    for (int g = 0; g < s->ngroups; g++) {
        int64_t a, b, keep_a = s->val_a[g], keep_b = s->val_b[g];
        if (s->tied[g])
            continue;
        if (tj_dyn_fresh(s, primes, sizeof primes / sizeof *primes, &next, &a) ||
            tj_dyn_fresh(s, primes, sizeof primes / sizeof *primes, &next, &b))
            break;
        jit_sig was_a, was_b;
        tj_dyn_assign(s, 0);
        was_a = s->sig;
        tj_dyn_assign(s, 1);
        was_b = s->sig;
        tj_dyn_set(s, g, a, b, 0);
        if (tj_dyn_try(d, s) != 0 || !tj_dyn_runs(d, &was_a) || !tj_dyn_runs(d, &was_b))
            tj_dyn_set(s, g, keep_a, keep_b, 0);
    }
    tj_dyn_try(d, s); /* the template of what stands */
}

/* The family's output shape: a dim is fixed only where the op's shape
 * rule made it of static dims alone (tj_dyn_search_init), and the rank
 * only where the rule gave one. The instances the search planned cannot
 * say it: they are samples, and a dim they agree on may vary all the same
 * (a GatherND tuple length that only data's rank of the values tried
 * keeps within 32 output dims, so that its other valid lengths, and
 * other ranks, were never seen; a torch_dims dim tied to 1 that may be 0).
 * The template's output, d->out_shape, comes from one of them; where it
 * disagrees with the rule (a rule out of step with the plan), the dim or
 * rank is taken as varying: never a fixed one that is not. */
static void tj_dyn_output(tj_dyn *d, const tj_dyn_search *s)
{
    const jit_shape *rule = &s->rule_out;
    if (!s->rule_ok || rule->rank != d->out_shape.rank) {
        d->out_rank_varies = 1;
        return;
    }
    for (int i = 0; i < rule->rank; i++)
        if (rule->dims[i] != d->out_shape.dims[i])
            d->out_shape.dims[i] = JIT_DIM_DYNAMIC;
}

/* One pass of the search over the first s->ncand candidates, with up to
 * TJ_DYN_MAX_TRIES plans of its own. */
static int tj_dyn_search_pass(tj_dyn *d, tj_dyn_search *s)
{
    s->max_tries = s->tries + TJ_DYN_MAX_TRIES;
    for (int nt = 0; nt <= TJ_DYN_MAX_TIES && nt <= s->ngroups; nt++)
        if (tj_dyn_ties(d, s, 0, nt, 0) == 0) {
            tj_dyn_untie(d, s);
            tj_dyn_spread(d, s);
            tj_dyn_output(d, s);
            return 0;
        }
    return -1;
}

/* 0 and d's template, or -1 (s->found_sig then a valid instance if
 * s->found_valid). A first pass tries the candidates the search had
 * before the derived values were kept past the cap (a family with some
 * 20 distinct static dims or more lost some of them): every family it
 * served keeps its template. Only where it fails does a second pass try
 * them all, with a budget of its own, as the first may have spent its on
 * pairs and triples of candidates that cannot help. */
static int tj_dyn_search_template(tj_dyn *d, tj_dyn_search *s)
{
    s->ncand = s->ncand_first;
    if (tj_dyn_search_pass(d, s) == 0)
        return 0;
    if (s->ncand_first == s->ncand_all)
        return -1;
    s->ncand = s->ncand_all;
    return tj_dyn_search_pass(d, s);
}

/* Every group at 1: a family whose other instances all overflow (a static
 * dim of 2^40 beside 29 dynamic ones) is still valid if this one is; it
 * is then s->found_sig. */
static void tj_dyn_try_ones(tj_dyn_search *s)
{
    tj_plan p;
    for (int g = 0; g < s->ngroups; g++)
        tj_dyn_set(s, g, 1, 1, 1);
    tj_dyn_assign(s, 0);
    if (tj_sig_plan_dyn(s->def, &s->sig, &p, NULL) == 0) {
        s->found_valid = 1;
        s->found_sig = s->sig;
    }
}

/* d's template, or (failing that) a valid instance's plan, through s. */
static int tj_dyn_template(tj_dyn *d, tj_dyn_search *s)
{
    char first[TJ_ERROR_MAX];
    tj_dyn_search_init(s, d->def, &d->sig);
    tj_dyn_assign(s, 0);
    if (tj_sig_plan_dyn(s->def, &s->sig, &d->tmpl, NULL) != 0)
        snprintf(first, sizeof first, "%s", jit_last_error());
    else
        first[0] = '\0';
    if (tj_dyn_search_template(d, s) == 0) {
        d->jit_ok = 1;
        return 0;
    }
    /* No pair of instances plans one nest within the search's reach; the
     * family is valid if an instance was. Each call is then planned on its
     * own (and its output shape is the bound call's to say). Dims of 1
     * are tried last: with a large static dim beside many dynamic ones,
     * every other instance may overflow. */
    int ones = !s->found_valid;
    if (ones)
        tj_dyn_try_ones(s);
    if (!s->found_valid || tj_sig_plan_dyn(s->def, &s->found_sig, &d->tmpl, &d->out_shape) != 0)
        return tj_error_set("no shape of this dynamic signature is valid (with its dynamic "
                            "dims at %" PRId64 ": %s)",
                            s->free_a, first[0] ? first : jit_last_error());
    for (int i = 0; i < d->out_shape.rank; i++)
        d->out_shape.dims[i] = JIT_DIM_DYNAMIC;
    d->out_rank_varies = 1;
    memset(d->vary, 0xff, sizeof d->vary);
    if (ones)
        snprintf(d->why, sizeof d->why,
                 "of the family's shapes the search tried (%d), only the one with every "
                 "dynamic dim 1 is valid (the others overflow int64 or break a rule): the "
                 "reference kernel plans each call",
                 s->tries);
    else
        snprintf(d->why, sizeof d->why,
                 "no two shapes of the family the search tried plan one loop nest (%d tries): "
                 "the reference kernel plans each call",
                 s->tries);
    return 0;
}

/* Refused families, remembered with their message: a refusal costs the
 * whole search (up to TJ_DYN_MAX_TRIES plans, some 40 ms), which a caller
 * retrying its compile (a layer per call, a fuzzer) paid every time. A
 * refusal depends on the signature alone (its key), so an entry never
 * goes stale; the oldest makes room. Out of memory is not remembered. */
#define TJ_DYN_REFUSALS 16

typedef struct tj_dyn_refusal {
    tj_key key;
    char why[TJ_ERROR_MAX];
} tj_dyn_refusal;

static tj_dyn_refusal tj_dyn_refusals[TJ_DYN_REFUSALS];
static int tj_dyn_nrefusals, tj_dyn_next_refusal;
static pthread_mutex_t tj_dyn_refusal_lock = PTHREAD_MUTEX_INITIALIZER;

static int tj_same_key(const tj_key *a, const tj_key *b)
{
    return a->len == b->len && memcmp(a->words, b->words, a->len) == 0;
}

/* -1 with the remembered message when key's family was refused, else 0. */
static int tj_dyn_refusal_recall(const tj_key *key)
{
    char why[TJ_ERROR_MAX];
    int found = 0;
    pthread_mutex_lock(&tj_dyn_refusal_lock);
    for (int i = 0; i < tj_dyn_nrefusals && !found; i++)
        if (tj_same_key(&tj_dyn_refusals[i].key, key)) {
            snprintf(why, sizeof why, "%s", tj_dyn_refusals[i].why);
            found = 1;
        }
    pthread_mutex_unlock(&tj_dyn_refusal_lock);
    return found ? tj_error_set("%s", why) : 0;
}

static void tj_dyn_refusal_remember(const tj_key *key, const char *why)
{
    pthread_mutex_lock(&tj_dyn_refusal_lock);
    tj_dyn_refusal *r = &tj_dyn_refusals[tj_dyn_next_refusal];
    r->key = *key;
    snprintf(r->why, sizeof r->why, "%s", why);
    tj_dyn_next_refusal = (tj_dyn_next_refusal + 1) % TJ_DYN_REFUSALS;
    if (tj_dyn_nrefusals < TJ_DYN_REFUSALS)
        tj_dyn_nrefusals++;
    pthread_mutex_unlock(&tj_dyn_refusal_lock);
}

/* dims[i] when that dim is dynamic (bag_ir.h's code -1 - i), else v */
static int64_t tj_dyn_bag_code(int64_t dim, int i, int64_t v)
{
    return dim == JIT_DIM_DYNAMIC ? -1 - (int64_t)i : v;
}

/* Why the JIT cannot serve a bag family, or NULL: its kernel takes the
 * row width as a constant, and the padding row once resolved. */
static const char *tj_dyn_bag_no_jit(const tj_dyn *d)
{
    const jit_shape *t = &d->sig.data_shape;
    for (int i = 1; i < t->rank; i++)
        if (t->dims[i] == JIT_DIM_DYNAMIC)
            return "the table's row (its dims after the first) is dynamic and the JIT's bag "
                   "kernels take its width as a constant: the reference kernel serves";
    if (tj_dyn_varies(d, &d->tmpl.bag.padding_row))
        return "padding_idx is negative and the table's rows are dynamic, so the padding row "
               "is the call's: the reference kernel serves";
    return NULL;
}

/* A bag template's counts that come from the call's dims are codes -1 - i
 * for dims[i] (bag_ir.h), those its form derives from others -1 (the
 * offsets form's B, the packed N): the signature's dynamic dims decide,
 * not the template's vary bits, since the search may have tied a group of
 * them to one value. Their words vary, and `dynamic` says so. */
static void tj_dyn_mark_bag(tj_dyn *d)
{
    tj_bag_plan *b = &d->tmpl.bag;
    const jit_sig *s = &d->sig;
    const int64_t *ix = s->indices_shape.dims, *o = s->updates_shape.dims;
    int at = s->data_shape.rank; /* the indices' first dim in the call's dims */
    const char *no_jit = tj_dyn_bag_no_jit(d);
    b->rows = tj_dyn_bag_code(s->data_shape.dims[0], 0, b->rows);
    if (b->form == TJ_BAG_PACKED) {
        b->bags = tj_dyn_bag_code(ix[0], at, b->bags);
        b->bag_len = tj_dyn_bag_code(ix[1], at + 1, b->bag_len);
        b->lookups = b->bags < 0 || b->bag_len < 0 ? -1 : b->lookups;
    } else {
        b->lookups = tj_dyn_bag_code(ix[0], at, b->lookups);
        b->offsets_len = tj_dyn_bag_code(o[0], at + 1, b->offsets_len);
        if (b->form == TJ_BAG_SEGMENTS)
            b->bags = tj_dyn_bag_code(s->num_segments, at + 2, b->bags);
        else if (b->offsets_len < 0)
            b->bags = -1;
    }
    const void *words[] = {&b->rows, &b->row_elems, &b->bags, &b->lookups, &b->bag_len,
                           &b->offsets_len, &b->dynamic};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        size_t w = (size_t)((const char *)words[i] - (const char *)&d->tmpl) / 8;
        d->vary[w / 64] |= (uint64_t)1 << (w % 64);
    }
    b->dynamic = 1;
    if (no_jit && d->jit_ok) {
        d->jit_ok = 0;
        snprintf(d->why, sizeof d->why, "%s", no_jit);
    }
}

int tj_dyn_build(const tj_op_def *def, const jit_sig *sig, tj_dyn *d)
{
    memset(d, 0, sizeof *d);
    d->def = def;
    d->sig = *sig;
    tj_sig_normalize(def, &d->sig);
    if (tj_dyn_check_bounds(def, &d->sig, &d->ndims))
        return -1;
    tj_key key;
    int keyed = tj_key_sig(def, &d->sig, &key) == 0;
    if (keyed && tj_dyn_refusal_recall(&key))
        return -1;
    tj_dyn_search *s = tj_malloc(sizeof *s); /* large: off the stack */
    if (!s)
        return tj_error_set("out of memory planning a dynamic signature");
    int rc = tj_dyn_template(d, s);
    tj_free(s);
    if (rc != 0 && keyed)
        tj_dyn_refusal_remember(&key, jit_last_error());
    if (rc == 0 && d->tmpl.is_bag)
        tj_dyn_mark_bag(d);
    return rc;
}

int tj_dyn_varies(const tj_dyn *d, const void *field)
{
    size_t w = (size_t)((const char *)field - (const char *)&d->tmpl) / 8;
    return w >= TJ_DYN_WORDS || ((d->vary[w / 64] >> (w % 64)) & 1);
}

int tj_dyn_output_shape(const tj_dyn *d, jit_shape *out)
{
    if (d->out_rank_varies)
        return tj_error_set("the output's rank depends on the call's dims (a dynamic tuple "
                            "length): bind them first (jit_sig_bind, then jit_output_shape)");
    *out = d->out_shape;
    return 0;
}

int tj_sig_template(const tj_op_def *def, const jit_sig *sig, tj_plan *plan, jit_shape *out,
                    tj_dyn *d)
{
    if (!tj_sig_dynamic(def, sig))
        return tj_sig_plan(def, sig, plan, out);
    if (tj_dyn_build(def, sig, d) || (out && tj_dyn_output_shape(d, out)))
        return -1;
    *plan = d->tmpl;
    plan->dyn = d;
    return 0;
}
