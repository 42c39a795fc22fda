/* JIT_THREADS_ALL counts the CPUs the process may run on, not the CPUs
 * online: a process confined to one CPU (taskset, a container's cpuset)
 * gets kernels that never split, where two threads would take turns on
 * its one core. The affinity is set before the library's first call: it
 * is read once. */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tensorjit.h"

/* The explanation's line for a bag signature's units: "... N at most". */
static int threads_of(int threads)
{
    jit_sig s;
    memset(&s, 0, sizeof s);
    s.op = JIT_OP_EMBEDDING_BAG_OFFSETS;
    s.dtype = JIT_F32;
    s.index_type = JIT_I64;
    s.threads = threads;
    s.data_shape = (jit_shape){2, {100000, 64}};
    s.indices_shape = (jit_shape){1, {100000}};
    s.updates_shape = (jit_shape){1, {1000}};
    char *text = jit_explain(&s);
    assert_non_null(text);
    const char *at = strstr(text, "threads split them; ");
    assert_non_null(at);
    int n = atoi(at + strlen("threads split them; "));
    jit_free(text);
    return n;
}

static void test_one_cpu_is_one_thread(void **state)
{
    (void)state;
    assert_int_equal(threads_of(JIT_THREADS_ALL), 1);
    assert_int_equal(threads_of(4), 4); /* a count asked for is the caller's */
}

int main(void)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    if (sched_getaffinity(0, sizeof one, &one) != 0 || CPU_COUNT(&one) < 1)
        return 77; /* skipped: no mask to narrow */
    int first = 0;
    while (!CPU_ISSET(first, &one))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_cpu_is_one_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
