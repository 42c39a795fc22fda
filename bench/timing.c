/* The bench's clock, its one statistic, and the wait for a tiered kernel's
 * switch. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

double tj_bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int tj_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double tj_bench_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, tj_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double tj_bench_until_jit(jit_kernel k, double t0, double limit_ms)
{
    jit_kernel_info info;
    while (jit_info(k, &info) == 0) {
        double ms = (tj_bench_now_ns() - t0) / 1e6;
        if (info.engine == JIT_ENGINE_JIT)
            return ms;
        if (ms > limit_ms || strncmp(info.why, "tiered:", 7) != 0)
            break;
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    return -1;
}
