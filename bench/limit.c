/* Kernel-limit figures: what a signature whose kernel the cap released
 * costs when it is asked for again, and what a release costs. In this
 * process, with the disk cache open in a fresh folder (as a server with a
 * cap would run), a cap of one kernel and two small workloads taken in
 * turn: every compile finds its kernel released, loads it from disk, and
 * releases the other, idle one through its resource tracker. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "bench_compile.h"

/* One compile and one release of w: ns of each into *c and *r, and whether
 * a JIT kernel came from the disk cache; -1 when a call fails. */
static int tj_churn_once(const tj_workload *w, double *c, double *r, int *from_disk)
{
    jit_kernel_info info = {0};
    double t0 = tj_bench_now_ns(), t1, t2;
    jit_kernel fn = jit_compile(&w->sig);
    t1 = tj_bench_now_ns();
    if (!fn || jit_info(fn, &info) != 0)
        return -1;
    t2 = tj_bench_now_ns();
    if (jit_release(fn) != 0)
        return -1;
    *c = t1 - t0;
    *r = tj_bench_now_ns() - t2;
    *from_disk = info.engine == JIT_ENGINE_JIT && info.cache_hit;
    return 0;
}

int tj_bench_limit_figures(double *reload_ms, double *release_ns)
{
    enum { ROUNDS = 41 };
    double c[ROUNDS], r[ROUNDS];
    const tj_workload *ws[2] = {tj_workload_find("G6"), tj_workload_find("S3")};
    char dir[4096];
    if (!ws[0] || !ws[1] || tj_bench_tmpdir("limit", dir, sizeof dir) != 0)
        return -1;
    int disk = 1, rc = jit_cache_open(dir) == 0 && jit_set_kernel_limit(1, 0) == 0 ? 0 : -1;
    for (int i = 0; rc == 0 && i < 2; i++) /* fills the folder: compiles, not measured */
        rc = tj_churn_once(ws[i], &c[0], &r[0], &disk);
    disk = 1;
    for (int i = 0; rc == 0 && disk && i < ROUNDS; i++)
        rc = tj_churn_once(ws[i % 2], &c[i], &r[i], &disk);
    jit_shutdown();
    if (tj_bench_rmdir(dir) != 0 || rc != 0 || !disk)
        return -1;
    *reload_ms = tj_bench_median(c, ROUNDS) / 1e6;
    *release_ns = tj_bench_median(r, ROUNDS);
    return 0;
}
