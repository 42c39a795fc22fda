/* The bag workloads' inputs: a table filled with a pattern, index sets
 * uniformly random from a fixed seed (enough of them that a set's rows are
 * out of the last-level cache when it comes round again), one offsets
 * array, weights. Every implementation reads these same buffers. */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bags.h"
#include "host_cache.h"

#define TJ_HUGE ((size_t)2 << 20)

void *tj_bag_alloc(int64_t bytes, int *advised)
{
    size_t n = (size_t)(bytes > 0 ? bytes : 1), align = n >= TJ_HUGE ? TJ_HUGE : 64;
    size_t rounded = (n + align - 1) / align * align;
    void *p = aligned_alloc(align, rounded);
    if (advised)
        *advised = align != TJ_HUGE ? -1 : p && madvise(p, rounded, MADV_HUGEPAGE) == 0;
    return p;
}

int64_t tj_bag_llc_bytes(void)
{
    int64_t llc = tj_host_llc_bytes();
    return llc > 0 ? llc : (int64_t)32 << 20;
}

const char *tj_bag_thp_mode(void)
{
    static char mode[32];
    char text[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(text, sizeof text, f))
            text[0] = '\0';
        fclose(f);
    }
    const char *a = strchr(text, '['), *b = a ? strchr(a, ']') : NULL;
    snprintf(mode, sizeof mode, "%.*s", a && b ? (int)(b - a - 1) : 1, a && b ? a + 1 : "?");
    return mode;
}

/* Bytes of [p, p + bytes) that /proc/self/smaps counts as AnonHugePages:
 * whether the kernel gave huge pages, not only whether it was asked. */
static int64_t tj_huge_bytes(const void *p, int64_t bytes)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return 0;
    uintptr_t lo = (uintptr_t)p, hi = lo + (uintptr_t)bytes;
    int64_t total = 0;
    int inside = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        uintptr_t a, b;
        long long kb;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &a, &b) == 2) /* a mapping's first line */
            inside = a < hi && b > lo;
        else if (inside && sscanf(line, "AnonHugePages: %lld kB", &kb) == 1)
            total += kb * 1024;
    }
    fclose(f);
    return total;
}

static uint64_t tj_bag_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Values in [-1, 1), never NaN, infinite or subnormal, as f32 or as the
 * top half of one (bf16). */
static void tj_fill_values(void *p, int64_t count, int bf16, uint32_t salt)
{
    uint32_t v = salt * 2654435761u;
    for (int64_t i = 0; i < count; i++) {
        v = v * 1664525u + 1013904223u;
        float f = (float)(int32_t)v * (1.0f / 2147483648.0f);
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        if ((u & 0x7f800000u) == 0) /* a subnormal or zero: zero */
            u &= 0x80000000u;
        if (bf16)
            ((uint16_t *)p)[i] = (uint16_t)(u >> 16);
        else
            memcpy((float *)p + i, &u, sizeof u);
    }
}

static void tj_store_index(void *p, int size, int64_t i, int64_t v)
{
    if (size == 4)
        ((int32_t *)p)[i] = (int32_t)v;
    else
        ((int64_t *)p)[i] = v;
}

/* The bags' lengths: L each, or uniform in [0, L]; the offsets are their
 * running sums. Returns n, the lookups of a call. */
static int64_t tj_fill_offsets(const tj_bag_workload *w, void *offsets, uint64_t *seed)
{
    int64_t at = 0;
    for (int64_t b = 0; b < w->bags; b++) {
        if (offsets)
            tj_store_index(offsets, w->index_size, b, at);
        at += w->varying ? (int64_t)(tj_bag_rng(seed) % (uint64_t)(w->length + 1)) : w->length;
    }
    return at;
}

static int tj_set_count(const tj_bag_workload *w, int64_t n, size_t elem, int64_t llc,
                        int max_sets)
{
    int64_t per_call = n * w->width * (int64_t)elem;
    int64_t sets = per_call > 0 ? (2 * llc + per_call - 1) / per_call + 1 : 2;
    if (sets < 2)
        sets = 2;
    if (sets < w->min_sets)
        sets = w->min_sets;
    if (max_sets > 0 && sets > max_sets)
        sets = max_sets;
    return (int)sets;
}

int tj_bag_inputs_make(tj_bag_inputs *in, const tj_bag_workload *w, int64_t llc, int max_sets,
                       char *why, size_t len)
{
    memset(in, 0, sizeof *in);
    in->w = w;
    in->elem = w->bf16 ? 2 : 4;
    in->table_bytes = w->rows * w->width * (int64_t)in->elem;
    in->out_bytes = w->bags * w->width * (int64_t)in->elem;
    uint64_t seed = 20261122;
    if (!w->packed && !(in->offsets = malloc((size_t)(w->bags * w->index_size))))
        goto oom;
    in->n = tj_fill_offsets(w, in->offsets, &seed);
    in->sets = tj_set_count(w, in->n, in->elem, llc, max_sets);
    int64_t lookups = in->n * in->sets;
    in->table = tj_bag_alloc(in->table_bytes, &in->madvised);
    in->indices = tj_bag_alloc(lookups * w->index_size, NULL);
    if (w->weighted)
        in->weights = tj_bag_alloc(lookups * (int64_t)in->elem, NULL);
    if (!in->table || !in->indices || (w->weighted && !in->weights))
        goto oom;
    tj_fill_values(in->table, w->rows * w->width, w->bf16, 1);
    for (int64_t i = 0; i < lookups; i++)
        tj_store_index(in->indices, w->index_size, i,
                       (int64_t)(tj_bag_rng(&seed) % (uint64_t)w->rows));
    if (w->weighted)
        tj_fill_values(in->weights, lookups, w->bf16, 2);
    in->huge_bytes = tj_huge_bytes(in->table, in->table_bytes);
    if (in->huge_bytes > in->table_bytes) /* the mapping rounds up to whole pages */
        in->huge_bytes = in->table_bytes;
    return 0;
oom:
    snprintf(why, len, "%s: out of memory for the inputs (table %lld bytes)", w->id,
             (long long)in->table_bytes);
    tj_bag_inputs_free(in);
    return -1;
}

void tj_bag_inputs_free(tj_bag_inputs *in)
{
    free(in->table);
    free(in->indices);
    free(in->offsets);
    free(in->weights);
    memset(in, 0, sizeof *in);
}

const void *tj_bag_set_indices(const tj_bag_inputs *in, int set)
{
    return (const char *)in->indices + (size_t)set * (size_t)in->n * (size_t)in->w->index_size;
}

const void *tj_bag_set_weights(const tj_bag_inputs *in, int set)
{
    return in->weights ? (const char *)in->weights + (size_t)set * (size_t)in->n * in->elem
                       : NULL;
}
