/* Every allocation of the library goes through here, so that tests can make
 * the n-th one fail and prove that each error path cleans up. */
#ifndef TJ_ALLOC_H
#define TJ_ALLOC_H

#include <stddef.h>

void *tj_malloc(size_t size);
void *tj_calloc(size_t count, size_t size);
void tj_free(void *p);

/* Test hook: the n-th allocation from now fails (1 = the next one), once;
 * 0 turns failure injection off. Failing one allocation at a time, each in
 * turn, tests that every error path cleans up and that what runs after it
 * (a fallback, a retry) still works. */
void tj_alloc_fail_after(long n);
/* Test hook: 1 while the failure armed by tj_alloc_fail_after has not
 * happened yet (so a call that returns with it pending allocated less). */
int tj_alloc_fail_pending(void);

#endif
