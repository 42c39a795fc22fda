#include "alloc.h"

#include <stdatomic.h>
#include <stdlib.h>

static atomic_int tj_alloc_armed;
static atomic_long tj_alloc_left; /* allocations left until the failing one */

static int tj_alloc_should_fail(void)
{
    if (!atomic_load_explicit(&tj_alloc_armed, memory_order_relaxed))
        return 0;
    if (atomic_fetch_sub(&tj_alloc_left, 1) != 1)
        return 0;
    atomic_store(&tj_alloc_armed, 0); /* one failure: what follows must cope */
    return 1;
}

void *tj_malloc(size_t size)
{
    if (tj_alloc_should_fail())
        return NULL;
    return malloc(size ? size : 1);
}

void *tj_calloc(size_t count, size_t size)
{
    if (tj_alloc_should_fail())
        return NULL;
    return calloc(count ? count : 1, size ? size : 1);
}

void tj_free(void *p)
{
    free(p);
}

void tj_alloc_fail_after(long n)
{
    atomic_store(&tj_alloc_left, n);
    atomic_store(&tj_alloc_armed, n > 0);
}

int tj_alloc_fail_pending(void)
{
    return atomic_load(&tj_alloc_armed);
}
