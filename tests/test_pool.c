/* The worker pool (runtime/exec/pool.c) directly: tj_pool_run returns only
 * when every part has run, each unit exactly once, also when a worker's
 * part outlasts the caller's spin (50 us) and the caller has to sleep until
 * the worker is done: a path that otherwise only thread timing reaches. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "pool.h"
#include "tensorjit.h"

enum { UNITS = 64 };

typedef struct slow_job {
    pthread_t caller;
    atomic_int runs[UNITS];
    atomic_int worker_started, worker_done, parts_on_workers;
} slow_job;

static void sleep_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* The caller's part waits (up to 2 s) until a worker has taken the other
 * part; the worker's part then takes 20 ms, long past the caller's spin. */
static void slow_part(void *ctx, int64_t begin, int64_t end)
{
    slow_job *j = ctx;
    if (pthread_equal(pthread_self(), j->caller)) {
        for (int i = 0; i < 2000 && !atomic_load(&j->worker_started); i++)
            sleep_ms(1);
    } else {
        atomic_fetch_add(&j->parts_on_workers, 1);
        atomic_store(&j->worker_started, 1);
        sleep_ms(20);
    }
    for (int64_t u = begin; u < end; u++)
        atomic_fetch_add(&j->runs[u], 1);
    if (!pthread_equal(pthread_self(), j->caller))
        atomic_store(&j->worker_done, 1);
}

static void test_caller_sleeps_until_a_slow_worker_is_done(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        static slow_job j;
        for (int u = 0; u < UNITS; u++)
            atomic_store(&j.runs[u], 0);
        atomic_store(&j.worker_started, 0);
        atomic_store(&j.worker_done, 0);
        atomic_store(&j.parts_on_workers, 0);
        j.caller = pthread_self();
        tj_pool_run(2, UNITS, slow_part, &j);
        /* returned: the worker's part is over, and every unit ran once */
        assert_int_equal(atomic_load(&j.parts_on_workers), 1);
        assert_int_equal(atomic_load(&j.worker_done), 1);
        for (int u = 0; u < UNITS; u++)
            assert_int_equal(atomic_load(&j.runs[u]), 1);
    }
    jit_shutdown(); /* joins the workers */
}

/* One unit, or one thread: the caller runs it all itself. */
static int64_t seen_begin, seen_end, calls;

static void record(void *ctx, int64_t begin, int64_t end)
{
    (void)ctx;
    seen_begin = begin, seen_end = end, calls++;
}

static void test_one_part_runs_on_the_caller(void **state)
{
    (void)state;
    calls = 0;
    tj_pool_run(8, 1, record, NULL);
    assert_int_equal(calls, 1);
    assert_int_equal(seen_begin, 0);
    assert_int_equal(seen_end, 1);
    tj_pool_run(1, 100, record, NULL);
    assert_int_equal(calls, 2);
    assert_int_equal(seen_end, 100);
}

typedef struct bounds_job {
    pthread_mutex_t lock;
    int n;
    int64_t begin[16], end[16];
} bounds_job;

static void record_bounds(void *ctx, int64_t begin, int64_t end)
{
    bounds_job *j = ctx;
    pthread_mutex_lock(&j->lock);
    if (j->n < 16) {
        j->begin[j->n] = begin;
        j->end[j->n] = end;
    }
    j->n++;
    pthread_mutex_unlock(&j->lock);
}

/* The parts of a job of INT64_MAX units tile [0, INT64_MAX) exactly: the
 * bounds were units * p / parts, which overflows int64 past INT64_MAX /
 * parts (UB; in practice parts of the range were dropped or run twice). */
static void test_parts_of_huge_unit_counts(void **state)
{
    (void)state;
    static const int64_t units[] = {INT64_MAX, ((int64_t)1 << 62) + 3, 7};
    for (size_t u = 0; u < sizeof units / sizeof *units; u++)
        for (int threads = 2; threads <= 5; threads++) {
            bounds_job j = {.lock = PTHREAD_MUTEX_INITIALIZER};
            tj_pool_run(threads, units[u], record_bounds, &j);
            assert_in_range(j.n, 1, threads);
            /* sort the parts by begin, then check they tile the range */
            for (int a = 0; a < j.n; a++)
                for (int b = a + 1; b < j.n; b++)
                    if (j.begin[b] < j.begin[a]) {
                        int64_t t = j.begin[a];
                        j.begin[a] = j.begin[b], j.begin[b] = t;
                        t = j.end[a];
                        j.end[a] = j.end[b], j.end[b] = t;
                    }
            int64_t next = 0;
            for (int a = 0; a < j.n; a++) {
                assert_true(j.begin[a] == next && j.end[a] > j.begin[a]);
                next = j.end[a];
            }
            assert_true(next == units[u]);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caller_sleeps_until_a_slow_worker_is_done),
        cmocka_unit_test(test_one_part_runs_on_the_caller),
        cmocka_unit_test(test_parts_of_huge_unit_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
