#include "cache.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "error.h"

typedef struct tj_slot {
    tj_kernel *kernel;
    uint64_t key_hash;
    struct tj_slot *next_by_key;
    struct tj_slot *next_by_entry;
} tj_slot;

static pthread_mutex_t tj_cache_lock = PTHREAD_MUTEX_INITIALIZER;
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
        if (s->key_hash == h && s->kernel->key_len == key->len &&
            memcmp(s->kernel->key, key->words, key->len) == 0)
            return s;
    return NULL;
}

static void tj_link(tj_slot *s)
{
    size_t kb = s->key_hash & (tj_buckets - 1);
    size_t eb = tj_entry_hash(s->kernel->entry) & (tj_buckets - 1);
    s->next_by_key = tj_by_key[kb];
    tj_by_key[kb] = s;
    s->next_by_entry = tj_by_entry[eb];
    tj_by_entry[eb] = s;
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
        tj_link(s);
    }
    return 0;
}

static tj_kernel *tj_insert(tj_kernel *k, uint64_t h)
{
    tj_slot *s = tj_calloc(1, sizeof *s);
    if (!s || (tj_count + 1 > tj_buckets && tj_grow() != 0)) {
        tj_free(s);
        tj_error_set("out of memory adding a kernel to the cache");
        return NULL;
    }
    s->kernel = k;
    s->key_hash = h;
    tj_link(s);
    tj_count++;
    return k;
}

tj_kernel *tj_cache_get(const tj_key *key, const tj_plan *plan, jit_engine engine)
{
    uint64_t h = tj_key_hash(key);
    pthread_mutex_lock(&tj_cache_lock);
    tj_slot *s = tj_find_key(key, h);
    tj_kernel *k = s ? s->kernel : NULL;
    if (!k) {
        k = tj_kernel_build(plan, (const unsigned char *)key->words, key->len, engine);
        if (k && !tj_insert(k, h)) {
            tj_kernel_destroy(k);
            k = NULL;
        }
    }
    pthread_mutex_unlock(&tj_cache_lock);
    return k;
}

tj_kernel *tj_cache_find(const tj_key *key)
{
    uint64_t h = tj_key_hash(key);
    pthread_mutex_lock(&tj_cache_lock);
    tj_slot *s = tj_find_key(key, h);
    pthread_mutex_unlock(&tj_cache_lock);
    return s ? s->kernel : NULL;
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
            tj_kernel_destroy(s->kernel);
            tj_free(s);
        }
    tj_free(tj_by_key);
    tj_free(tj_by_entry);
    tj_by_key = tj_by_entry = NULL;
    tj_buckets = tj_count = 0;
    pthread_mutex_unlock(&tj_cache_lock);
}
