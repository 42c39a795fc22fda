/* The second thread of "probe x2" (bags_probe2.h). After a half it spins
 * for TJ_PROBE_SPIN_NS before it sleeps, as the library's pool does
 * (runtime/exec/pool.c), but 40 times as long as the pool's 50 us: in a
 * timed batch the calls come back to back, and the probe is to measure
 * what two cores fetch, not a wake-up through the kernel when the halves
 * end apart; between the bench's rows it sleeps, leaving the other core
 * to them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "bags_probe2.h"
#include "bench.h"

#define TJ_PROBE_SPIN_NS 2e6

struct tj_probe_worker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    atomic_long posted, done; /* calls handed over and finished */
    atomic_int quit;
    int status;               /* the last half's, read once done == posted */
    /* the half to run, written before posted is raised */
    tj_bag_probe_range_fn fn;
    const void *table, *indices, *offsets, *weights;
    void *out;
    long long dist, b0, b1;
};

static void tj_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Until a call newer than seen is posted (1) or quit is set (0). */
static int tj_worker_wait(tj_probe_worker *w, long seen)
{
    double t0 = tj_bench_now_ns();
    while (atomic_load(&w->posted) == seen && !atomic_load(&w->quit))
        if (tj_bench_now_ns() - t0 > TJ_PROBE_SPIN_NS) {
            pthread_mutex_lock(&w->lock);
            while (atomic_load(&w->posted) == seen && !atomic_load(&w->quit))
                pthread_cond_wait(&w->wake, &w->lock);
            pthread_mutex_unlock(&w->lock);
        } else {
            tj_relax();
        }
    return !atomic_load(&w->quit);
}

static void *tj_worker_main(void *arg)
{
    tj_probe_worker *w = arg;
    long seen = 0;
    while (tj_worker_wait(w, seen)) {
        seen = atomic_load(&w->posted);
        w->status = w->fn(w->table, w->indices, w->offsets, w->weights, w->out, w->dist, w->b0,
                          w->b1);
        atomic_store(&w->done, seen);
    }
    return NULL;
}

tj_probe_worker *tj_probe_worker_start(void)
{
    tj_probe_worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    if (pthread_create(&w->thread, NULL, tj_worker_main, w) != 0) {
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

void tj_probe_worker_stop(tj_probe_worker *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    atomic_store(&w->quit, 1);
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

int tj_probe_x2(tj_probe_worker *w, tj_bag_probe_range_fn fn, const void *table,
                const void *indices, const void *offsets, const void *weights, void *out,
                long long dist, long long bags)
{
    long long half = bags / 2;
    w->fn = fn, w->table = table, w->indices = indices, w->offsets = offsets;
    w->weights = weights, w->out = out, w->dist = dist, w->b0 = half, w->b1 = bags;
    long call = atomic_load(&w->posted) + 1;
    pthread_mutex_lock(&w->lock); /* a sleeping worker sees posted only after its check */
    atomic_store(&w->posted, call);
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    int rc = fn(table, indices, offsets, weights, out, dist, 0, half);
    while (atomic_load(&w->done) != call)
        tj_relax();
    return rc ? rc : w->status;
}
