/*
 * The kernel cache. Lookups and inserts hold one mutex for a few hundred
 * nanoseconds; a miss is built outside it, so different signatures compile
 * in parallel. While a key is being built its slot says so, and other
 * threads asking for the same key wait for it: a signature is compiled
 * once and everyone gets the same pointer.
 */
#include "cache.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "error.h"

typedef struct tj_slot {
    tj_kernel *kernel; /* NULL while building */
    unsigned char *key;
    size_t key_len;
    uint64_t key_hash;
    struct tj_slot *next_by_key;
    struct tj_slot *next_by_entry;
} tj_slot;

static pthread_mutex_t tj_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tj_cache_built = PTHREAD_COND_INITIALIZER;
static tj_slot **tj_by_key;
static tj_slot **tj_by_entry;
static size_t tj_buckets; /* a power of two */
static size_t tj_count;

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
        if (s->kernel)
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

static void tj_slot_free(tj_slot *s)
{
    tj_kernel_destroy(s->kernel);
    tj_free(s->key);
    tj_free(s);
}

tj_kernel *tj_cache_get(const tj_key *key, const tj_plan *plan, jit_engine engine)
{
    uint64_t h = tj_key_hash(key);
    pthread_mutex_lock(&tj_cache_lock);
    tj_slot *s = tj_find_key(key, h);
    while (s && !s->kernel) { /* another thread builds it */
        pthread_cond_wait(&tj_cache_built, &tj_cache_lock);
        s = tj_find_key(key, h);
    }
    if (s || !(s = tj_reserve(key, h))) {
        tj_kernel *k = s ? s->kernel : NULL;
        pthread_mutex_unlock(&tj_cache_lock);
        return k;
    }
    pthread_mutex_unlock(&tj_cache_lock);

    tj_kernel *k = tj_kernel_build(plan, key->words, key->len, engine);

    pthread_mutex_lock(&tj_cache_lock);
    if (k) {
        s->kernel = k;
        tj_link_entry(s);
    } else { /* out of memory: let a waiter try again */
        tj_unlink_key(s);
        tj_count--;
        tj_slot_free(s);
    }
    pthread_cond_broadcast(&tj_cache_built);
    pthread_mutex_unlock(&tj_cache_lock);
    return k;
}

tj_kernel *tj_cache_find(const tj_key *key)
{
    uint64_t h = tj_key_hash(key);
    pthread_mutex_lock(&tj_cache_lock);
    tj_slot *s = tj_find_key(key, h);
    tj_kernel *k = s ? s->kernel : NULL;
    pthread_mutex_unlock(&tj_cache_lock);
    return k;
}

const tj_kernel *tj_cache_find_entry(tj_entry_fn fn)
{
    const tj_kernel *k = NULL;
    pthread_mutex_lock(&tj_cache_lock);
    if (tj_buckets)
        for (tj_slot *s = tj_by_entry[tj_entry_hash(fn) & (tj_buckets - 1)]; s;
             s = s->next_by_entry)
            if (s->kernel->entry == fn) {
                k = s->kernel;
                break;
            }
    pthread_mutex_unlock(&tj_cache_lock);
    return k;
}

void tj_cache_clear(void)
{
    pthread_mutex_lock(&tj_cache_lock);
    for (size_t i = 0; i < tj_buckets; i++)
        for (tj_slot *s = tj_by_key[i], *next; s; s = next) {
            next = s->next_by_key;
            tj_slot_free(s);
        }
    tj_free(tj_by_key);
    tj_free(tj_by_entry);
    tj_by_key = tj_by_entry = NULL;
    tj_buckets = tj_count = 0;
    pthread_mutex_unlock(&tj_cache_lock);
}
