/*
 * The kernel cache. Lookups and inserts hold one mutex only for a hash
 * table lookup or insert; a miss is built outside it, so different
 * signatures compile in parallel. While a key is being built its slot says so, and other
 * threads asking for the same key wait for it: a signature is compiled
 * once and everyone gets the same pointer.
 *
 * Kernels that the limit may release sit, while nobody holds them, on the
 * idle list, oldest release first. Releasing one takes three steps: under
 * the lock, its entry is unlinked (no query finds it) and its stub points
 * at the "released" handler; outside the lock, its code is removed
 * (removing its resource tracker takes ORC's own locks); under the lock
 * again, its key is unlinked. Until then a compile of the same key waits,
 * as for a key being built: the new kernel's symbols would otherwise meet
 * the old ones, still defined in the JIT, and fail as duplicates.
 *
 * Queries of a kernel by its pointer (info, units, validate, run_range)
 * pin it while they read it: a pinned kernel is not released, so the
 * query never reads a kernel freed under it.
 *
 * An alias is a key that gives another key's kernel (tj_cache_alias): a
 * signature for threads > 1 whose kernel would not split gets the
 * one-thread kernel. It is found by key only, holds nothing of its own
 * (holds go to its target), and goes when its target's code goes.
 */
#include "cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "limit.h"
#include "op.h"
#include "stub.h"

typedef struct tj_slot {
    tj_kernel *kernel; /* NULL while building */
    unsigned char *key;
    size_t key_len;
    uint64_t key_hash;
    int64_t holds;     /* compiles that returned it minus releases */
    int64_t pins;      /* queries reading the kernel now */
    int idle;          /* on the idle list */
    int releasing;     /* released: its code is being removed, its key still linked */
    struct tj_slot *next_by_key;
    struct tj_slot *next_released;
    struct tj_slot *next_by_entry;
    struct tj_slot *idle_prev, *idle_next;
    struct tj_slot *target;  /* an alias: the slot whose kernel it gives; NULL: a kernel's own */
    struct tj_slot *aliases; /* a kernel's own: its aliases, through next_alias */
    struct tj_slot *next_alias;
} tj_slot;

static pthread_mutex_t tj_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tj_cache_built = PTHREAD_COND_INITIALIZER;
static tj_slot **tj_by_key;
static tj_slot **tj_by_entry;
static size_t tj_buckets; /* a power of two */
static size_t tj_count;

/* the limit and what it counts (lock held) */
static int tj_limit_known;           /* TENSORJIT_MAX_* taken from the configuration, or a limit set */
static int64_t tj_max_kernels, tj_max_bytes; /* 0: no limit */
static int64_t tj_jit_live, tj_jit_bytes, tj_released;
static tj_slot *tj_idle_head, *tj_idle_tail; /* head: released first */

static uint64_t tj_entry_hash(tj_entry_fn fn)
{
    uint64_t v = (uint64_t)(uintptr_t)fn * 0x9e3779b97f4a7c15ULL;
    return v ^ (v >> 29);
}

static tj_slot *tj_find_key(const tj_key *key, uint64_t h)
{
    if (!tj_buckets)
        return NULL;
    for (tj_slot *s = tj_by_key[h & (tj_buckets - 1)]; s; s = s->next_by_key)
        if (s->key_hash == h && s->key_len == key->len &&
            memcmp(s->key, key->words, key->len) == 0)
            return s;
    return NULL;
}

static void tj_link_key(tj_slot *s)
{
    size_t b = s->key_hash & (tj_buckets - 1);
    s->next_by_key = tj_by_key[b];
    tj_by_key[b] = s;
}

static void tj_link_entry(tj_slot *s)
{
    size_t b = tj_entry_hash(s->kernel->entry) & (tj_buckets - 1);
    s->next_by_entry = tj_by_entry[b];
    tj_by_entry[b] = s;
}

static void tj_unlink_key(tj_slot *s)
{
    for (tj_slot **p = &tj_by_key[s->key_hash & (tj_buckets - 1)]; *p; p = &(*p)->next_by_key)
        if (*p == s) {
            *p = s->next_by_key;
            return;
        }
}

static void tj_unlink_entry(tj_slot *s)
{
    size_t b = tj_entry_hash(s->kernel->entry) & (tj_buckets - 1);
    for (tj_slot **p = &tj_by_entry[b]; *p; p = &(*p)->next_by_entry)
        if (*p == s) {
            *p = s->next_by_entry;
            return;
        }
}

static void tj_idle_append(tj_slot *s)
{
    s->idle = 1;
    s->idle_next = NULL;
    s->idle_prev = tj_idle_tail;
    if (tj_idle_tail)
        tj_idle_tail->idle_next = s;
    else
        tj_idle_head = s;
    tj_idle_tail = s;
}

static void tj_idle_remove(tj_slot *s)
{
    if (s->idle_prev)
        s->idle_prev->idle_next = s->idle_next;
    else
        tj_idle_head = s->idle_next;
    if (s->idle_next)
        s->idle_next->idle_prev = s->idle_prev;
    else
        tj_idle_tail = s->idle_prev;
    s->idle = 0;
    s->idle_prev = s->idle_next = NULL;
}

/* The kernel, with one more hold (lock held). */
static tj_kernel *tj_hold(tj_slot *s)
{
    if (s->target)
        s = s->target;
    if (s->idle)
        tj_idle_remove(s);
    s->holds++;
    return s->kernel;
}

static int tj_releasable(const tj_slot *s)
{
    return s->kernel->user_entry != s->kernel->entry; /* behind a stub */
}

static void tj_limit_load(void)
{
    if (tj_limit_known)
        return;
    tj_limit_known = 1;
    if (tj_stub_supported())
        tj_limit_from_env(&tj_max_kernels, &tj_max_bytes);
}

static int tj_over_limit(void)
{
    return (tj_max_kernels > 0 && tj_jit_live > tj_max_kernels) ||
           (tj_max_bytes > 0 && tj_jit_bytes > tj_max_bytes);
}

/* A newly built kernel joins the counts (lock held); while a limit is set
 * a JIT kernel gets a stub, which makes it releasable. */
static void tj_adopt(tj_slot *s)
{
    tj_kernel *k = s->kernel;
    s->holds = 1;
    if (k->engine != JIT_ENGINE_JIT)
        return;
    tj_jit_live++;
    tj_jit_bytes += (int64_t)k->code_bytes;
    tj_limit_load();
    if (tj_max_kernels > 0 || tj_max_bytes > 0) {
        tj_entry_fn stub = tj_stub_new(k->entry);
        if (stub) /* else it stays, unreleasable, like kernels made without a limit */
            k->user_entry = stub;
    }
}

static void tj_alias_free(tj_slot *a)
{
    tj_free(a->key);
    tj_free(a);
}

/* Unlinks and frees s's aliases (lock held): once s's code starts to go,
 * their keys compile anew, as s's own does. */
static void tj_drop_aliases(tj_slot *s)
{
    for (tj_slot *a = s->aliases, *next; a; a = next) {
        next = a->next_alias;
        tj_unlink_key(a);
        tj_count--;
        tj_alias_free(a);
    }
    s->aliases = NULL;
}

/* Takes idle kernels that no query pins, oldest first, until the counts
 * fit the limit (lock held); returns them, linked through next_released,
 * for tj_free_slots. Their keys stay linked, marked releasing. */
static tj_slot *tj_take_over_limit(void)
{
    tj_slot *out = NULL;
    for (tj_slot *s = tj_idle_head, *next; s && tj_over_limit(); s = next) {
        next = s->idle_next;
        if (s->pins)
            continue; /* taken when its last query unpins it */
        tj_idle_remove(s);
        tj_unlink_entry(s);
        tj_drop_aliases(s);
        s->releasing = 1;
        tj_jit_live--;
        tj_jit_bytes -= (int64_t)s->kernel->code_bytes;
        tj_released++;
        /* from here on a late call of the old pointer returns
         * JIT_STATUS_RELEASED instead of entering code about to be freed */
        tj_stub_point(s->kernel->user_entry, tj_abi_of(&s->kernel->plan)->released);
        s->next_released = out;
        out = s;
    }
    return out;
}

/* Doubles the tables when they fill up; on allocation failure the old
 * ones stay (longer chains, still correct). */
static int tj_grow(void)
{
    size_t n = tj_buckets ? tj_buckets * 2 : 64;
    tj_slot **bk = tj_calloc(n, sizeof *bk), **be = tj_calloc(n, sizeof *be);
    if (!bk || !be) {
        tj_free(bk);
        tj_free(be);
        return tj_buckets ? 0 : -1;
    }
    tj_slot *all = NULL;
    for (size_t i = 0; i < tj_buckets; i++)
        for (tj_slot *s = tj_by_key[i], *next; s; s = next) {
            next = s->next_by_key;
            s->next_by_key = all;
            all = s;
        }
    tj_free(tj_by_key);
    tj_free(tj_by_entry);
    tj_by_key = bk;
    tj_by_entry = be;
    tj_buckets = n;
    for (tj_slot *s = all, *next; s; s = next) {
        next = s->next_by_key;
        tj_link_key(s);
        if (s->kernel && !s->releasing && !s->target)
            tj_link_entry(s);
    }
    return 0;
}

/* A slot saying "being built" for key (lock held); NULL when out of memory. */
static tj_slot *tj_reserve(const tj_key *key, uint64_t h)
{
    tj_slot *s = tj_calloc(1, sizeof *s);
    unsigned char *copy = tj_malloc(key->len);
    if (!s || !copy || (tj_count + 1 > tj_buckets && tj_grow() != 0)) {
        tj_free(s);
        tj_free(copy);
        tj_error_set("out of memory adding a kernel to the cache");
        return NULL;
    }
    memcpy(copy, key->words, key->len);
    s->key = copy;
    s->key_len = key->len;
    s->key_hash = h;
    tj_link_key(s);
    tj_count++;
    return s;
}

/* The generated code finds its kernel through its entry on every split or
 * checked call, and a dynamic bag kernel on every call
 * (runtime/exec/jit_support.c): each thread remembers the last ones it
 * found, TJ_ENTRY_MEMO_SLOTS of them by their address, valid until a
 * kernel's code can go. Without it every such call took the cache's one
 * lock, which all threads calling kernels share; with one slot, a model
 * whose layers took turns (eight bag families: 50 ns more a call on one
 * thread, 100-200 on two; docs/performance.md, 'A family's checks in one
 * call') still did. */
typedef struct tj_entry_memo {
    tj_entry_fn fn;
    const tj_kernel *k;
    uint64_t generation;
} tj_entry_memo;

#define TJ_ENTRY_MEMO_SLOTS 16

static _Thread_local tj_entry_memo tj_memo[TJ_ENTRY_MEMO_SLOTS];

/* fn's slot: entries are 16-byte aligned, in their own pages or not */
static tj_entry_memo *tj_memo_slot(tj_entry_fn fn)
{
    uintptr_t a = (uintptr_t)fn;
    return &tj_memo[((a >> 4) ^ (a >> 12)) % TJ_ENTRY_MEMO_SLOTS];
}

/* Bumped before any kernel is destroyed (tj_forget_entries). */
static _Atomic uint64_t tj_entry_generation;

static void tj_forget_entries(void)
{
    atomic_fetch_add_explicit(&tj_entry_generation, 1, memory_order_acq_rel);
}

static void tj_slot_free(tj_slot *s)
{
    tj_forget_entries();
    tj_kernel_destroy(s->kernel);
    tj_free(s->key);
    tj_free(s);
}

/* Frees the kernels of slots taken by tj_take_over_limit (called without
 * the lock: removing a resource tracker takes ORC's own locks), then
 * unlinks their keys, which wakes compiles of the same keys. Until then
 * the slots stay findable by key, marked releasing, and a compile of the
 * key reads s->kernel under the lock: it is cleared under the lock too. */
static void tj_free_slots(tj_slot *list)
{
    if (!list)
        return;
    tj_forget_entries();
    for (tj_slot *s = list; s; s = s->next_released)
        tj_kernel_destroy(s->kernel);
    pthread_mutex_lock(&tj_cache_lock);
    for (tj_slot *s = list; s; s = s->next_released) {
        s->kernel = NULL;
        tj_unlink_key(s);
        tj_count--;
    }
    pthread_cond_broadcast(&tj_cache_built);
    pthread_mutex_unlock(&tj_cache_lock);
    for (tj_slot *s = list, *next; s; s = next) {
        next = s->next_released;
        tj_slot_free(s);
    }
}

tj_kernel *tj_cache_get(const tj_key *key, const tj_plan *plan, jit_engine engine)
{
    uint64_t h = tj_key_hash(key);
    pthread_mutex_lock(&tj_cache_lock);
    tj_slot *s = tj_find_key(key, h);
    while (s && (!s->kernel || s->releasing)) { /* being built, or its code removed */
        pthread_cond_wait(&tj_cache_built, &tj_cache_lock);
        s = tj_find_key(key, h);
    }
    if (s || !(s = tj_reserve(key, h))) {
        tj_kernel *k = s ? tj_hold(s) : NULL;
        pthread_mutex_unlock(&tj_cache_lock);
        return k;
    }
    pthread_mutex_unlock(&tj_cache_lock);

    tj_kernel *k = tj_kernel_build(plan, key->words, key->len, engine);

    tj_slot *released = NULL;
    pthread_mutex_lock(&tj_cache_lock);
    if (k) {
        s->kernel = k;
        tj_adopt(s);
        tj_link_entry(s);
        released = tj_take_over_limit();
    } else { /* out of memory: let a waiter try again */
        tj_unlink_key(s);
        tj_count--;
        tj_slot_free(s);
    }
    pthread_cond_broadcast(&tj_cache_built);
    pthread_mutex_unlock(&tj_cache_lock);
    tj_free_slots(released);
    return k;
}

tj_kernel *tj_cache_find(const tj_key *key)
{
    uint64_t h = tj_key_hash(key);
    pthread_mutex_lock(&tj_cache_lock);
    tj_slot *s = tj_find_key(key, h);
    tj_kernel *k = s && s->kernel && !s->releasing ? tj_hold(s) : NULL;
    pthread_mutex_unlock(&tj_cache_lock);
    return k;
}

/* The slot of the kernel handed out as fn, a stub or a direct pointer
 * (lock held). */
static tj_slot *tj_find_entry(tj_entry_fn fn)
{
    tj_entry_fn target;
    if (tj_stub_target(fn, &target))
        fn = target; /* a released stub's target is no kernel's entry */
    if (tj_buckets)
        for (tj_slot *s = tj_by_entry[tj_entry_hash(fn) & (tj_buckets - 1)]; s;
             s = s->next_by_entry)
            if (s->kernel->entry == fn)
                return s;
    return NULL;
}

void tj_cache_alias(const tj_key *key, const tj_kernel *k)
{
    uint64_t h = tj_key_hash(key);
    pthread_mutex_lock(&tj_cache_lock);
    tj_slot *t = tj_find_entry(k->entry);
    tj_slot *a = t && !t->releasing && !tj_find_key(key, h) ? tj_reserve(key, h) : NULL;
    if (a) { /* else already there (a race of two compiles), or no memory: the next compile plans again */
        a->target = t;
        a->kernel = t->kernel;
        a->next_alias = t->aliases;
        t->aliases = a;
    }
    pthread_mutex_unlock(&tj_cache_lock);
}

const tj_kernel *tj_cache_find_entry(tj_entry_fn fn)
{
    uint64_t g = atomic_load_explicit(&tj_entry_generation, memory_order_acquire);
    tj_entry_memo *m = tj_memo_slot(fn);
    if (fn && m->fn == fn && m->generation == g)
        return m->k;
    pthread_mutex_lock(&tj_cache_lock);
    tj_slot *s = tj_find_entry(fn);
    const tj_kernel *k = s ? s->kernel : NULL; /* the slot may go once unlocked */
    pthread_mutex_unlock(&tj_cache_lock);
    if (k) /* found under g or later: a destruction after it bumps g */
        *m = (tj_entry_memo){fn, k, g};
    return k;
}

const tj_kernel *tj_cache_pin(tj_entry_fn fn, tj_cache_pinned *pin)
{
    pthread_mutex_lock(&tj_cache_lock);
    tj_slot *s = tj_find_entry(fn);
    const tj_kernel *k = NULL;
    if (s) {
        s->pins++;
        k = s->kernel;
    }
    pthread_mutex_unlock(&tj_cache_lock);
    pin->slot = s;
    return k;
}

void tj_cache_unpin(tj_cache_pinned *pin)
{
    tj_slot *s = pin->slot, *released = NULL;
    if (!s)
        return;
    pin->slot = NULL;
    pthread_mutex_lock(&tj_cache_lock);
    if (--s->pins == 0 && s->idle)
        released = tj_take_over_limit(); /* what the pin kept back */
    pthread_mutex_unlock(&tj_cache_lock);
    tj_free_slots(released);
}

tj_release_result tj_cache_release(tj_entry_fn fn, jit_op op)
{
    tj_release_result rc = TJ_RELEASE_OK;
    tj_slot *released = NULL;
    pthread_mutex_lock(&tj_cache_lock);
    tj_slot *s = tj_find_entry(fn);
    if (!s || (op != JIT_OP_NONE && s->kernel->plan.op != op))
        rc = TJ_RELEASE_UNKNOWN;
    else if (s->holds == 0)
        rc = TJ_RELEASE_NOT_HELD;
    else if (--s->holds == 0 && tj_releasable(s)) {
        tj_idle_append(s);
        released = tj_take_over_limit();
    }
    pthread_mutex_unlock(&tj_cache_lock);
    tj_free_slots(released);
    return rc;
}

void tj_cache_set_limit(int64_t max_kernels, int64_t max_code_bytes)
{
    pthread_mutex_lock(&tj_cache_lock);
    tj_limit_known = 1;
    tj_max_kernels = max_kernels;
    tj_max_bytes = max_code_bytes;
    tj_slot *released = tj_take_over_limit();
    pthread_mutex_unlock(&tj_cache_lock);
    tj_free_slots(released);
}

void tj_cache_stats(jit_kernel_stats *out)
{
    pthread_mutex_lock(&tj_cache_lock);
    tj_limit_load();
    *out = (jit_kernel_stats){.jit_kernels = tj_jit_live,
                              .code_bytes = tj_jit_bytes,
                              .released = tj_released,
                              .max_kernels = tj_max_kernels,
                              .max_code_bytes = tj_max_bytes};
    for (size_t i = 0; i < tj_buckets; i++)
        for (tj_slot *s = tj_by_key[i]; s; s = s->next_by_key) {
            if (!s->kernel || s->releasing || s->target || s->kernel->engine != JIT_ENGINE_JIT)
                continue;
            out->held += s->holds > 0;
            out->releasable += s->idle;
        }
    pthread_mutex_unlock(&tj_cache_lock);
}

void tj_cache_clear(void)
{
    pthread_mutex_lock(&tj_cache_lock);
    for (size_t i = 0; i < tj_buckets; i++)
        for (tj_slot *s = tj_by_key[i], *next; s; s = next) {
            next = s->next_by_key;
            if (s->target) {
                tj_alias_free(s);
                continue;
            }
            if (s->kernel && tj_releasable(s)) /* the stub stays: see stub.c */
                tj_stub_point(s->kernel->user_entry, tj_abi_of(&s->kernel->plan)->freed);
            tj_slot_free(s);
        }
    tj_free(tj_by_key);
    tj_free(tj_by_entry);
    tj_by_key = tj_by_entry = NULL;
    tj_buckets = tj_count = 0;
    tj_idle_head = tj_idle_tail = NULL;
    tj_limit_known = 0;
    tj_max_kernels = tj_max_bytes = 0;
    tj_jit_live = tj_jit_bytes = tj_released = 0;
    pthread_mutex_unlock(&tj_cache_lock);
}
