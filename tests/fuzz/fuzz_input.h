/* Reading a fuzzer's bytes as values: each read takes what is left, and
 * 0 once the input is used up, so every input decodes to something. */
#ifndef TJ_FUZZ_INPUT_H
#define TJ_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tensorjit.h"

/* libFuzzer's entry point, one per harness. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fuzz_input {
    const uint8_t *p;
    size_t left;
} fuzz_input;

static inline uint8_t fuzz_byte(fuzz_input *in)
{
    if (!in->left)
        return 0;
    in->left--;
    return *in->p++;
}

/* A dimension or attribute: mostly small, sometimes an extreme. */
static inline int64_t fuzz_value(fuzz_input *in)
{
    static const int64_t extremes[] = {-1, 0, INT32_MAX, (int64_t)INT32_MAX + 1, INT64_MAX,
                                       INT64_MIN, (int64_t)1 << 31, (int64_t)1 << 40,
                                       (int64_t)1 << 62, 65536, 1000003};
    uint8_t b = fuzz_byte(in);
    if (b < 200)
        return b % 9;
    if (b < 240)
        return extremes[b % (sizeof extremes / sizeof *extremes)];
    int64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (int64_t)((uint64_t)v << 8 | fuzz_byte(in));
    return v;
}

/* A small shape: a rank in [min_rank, max_rank], then each dim in [0, 4]. */
static inline void fuzz_small_shape(fuzz_input *in, jit_shape *s, int min_rank, int max_rank)
{
    s->rank = min_rank + fuzz_byte(in) % (max_rank - min_rank + 1);
    for (int i = 0; i < s->rank; i++)
        s->dims[i] = fuzz_byte(in) % 5;
}

/* The elements of a shape built by these readers (small: no overflow). */
static inline int64_t fuzz_count(const jit_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->dims[i];
    return n;
}

/* n bytes of the input in a block of their own, one byte longer, so that
 * an empty tensor still has an address. */
static inline void *fuzz_bytes(fuzz_input *in, int64_t n)
{
    unsigned char *p = malloc((size_t)n + 1);
    if (!p)
        __builtin_trap(); /* no memory: stop here, not at a write through NULL */
    for (int64_t i = 0; i < n; i++)
        p[i] = fuzz_byte(in);
    return p;
}

#endif
