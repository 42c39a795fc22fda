/*
 * The pool. A job lives on its caller's stack; workers take a pointer to
 * it under the lock (users++), claim parts through its own atomic
 * counter, and give it back (users--). The caller returns only when every
 * part is done and no worker holds the job, so a late worker can never
 * touch a finished job.
 *
 * After a job a worker spins for TJ_POOL_SPIN_NS before it sleeps, and so
 * does the caller waiting for the workers' parts: waking a sleeping thread
 * costs more than a whole G1 call, and kernels tend to come back to back
 * (docs/performance.md, 'Parallel execution').
 *
 * What a job costs beyond its work is measured, not assumed: each job's
 * time past its calling thread's share of the work (the wait for a worker
 * to take its part, the join, and a part no worker took, which the caller
 * then runs too) is a sample of the cost, one for workers found awake and
 * one for workers that had to be woken; tj_pool_cost_ns gives the median
 * of the last three of the pool's state now. The first use calibrates the first with a few
 * short jobs. Split kernels weigh a call's expected time against it
 * (runtime/exec/split_rule.c): a host whose cores are taken by other
 * processes shows up as a higher cost, and fewer calls split.
 */
#include "pool.h"

#include "host_cpus.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#define TJ_POOL_MAX 64
#define TJ_POOL_SPIN_NS 50000
/* Calibration: jobs of two parts of this many ns of work each. */
#define TJ_POOL_CALIBRATE_JOBS 8
#define TJ_POOL_CALIBRATE_PART_NS 2000

typedef struct tj_job {
    tj_pool_fn fn;
    void *ctx;
    int64_t units;
    int parts;
    atomic_int next;
    int left;  /* parts not yet done (lock) */
    int users; /* workers holding the job (lock) */
    atomic_int quiet; /* left == 0 and users == 0: the caller may return */
} tj_job;

static pthread_mutex_t tj_pool_busy = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_mutex_t tj_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tj_pool_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t tj_pool_done = PTHREAD_COND_INITIALIZER;
static pthread_t tj_workers[TJ_POOL_MAX];
static int tj_nworkers;
static int tj_stopping;
static tj_job *tj_current; /* the job on offer, or NULL (lock) */
static _Atomic(tj_job *) tj_offer; /* the same, for spinning workers to watch */
static int tj_sleepers;            /* workers waiting on tj_pool_wake (lock) */
static atomic_int tj_asleep;       /* the same, for tj_pool_cost_ns to read unlocked */
/* The measured costs of a job beyond its work (ns), the last
 * TJ_POOL_COST_SAMPLES of each: workers awake [0], asleep [1]. */
#define TJ_POOL_COST_SAMPLES 3
static _Atomic int64_t tj_cost[2][TJ_POOL_COST_SAMPLES] = {
    {0}, {TJ_POOL_WAKE_NS_START, TJ_POOL_WAKE_NS_START, TJ_POOL_WAKE_NS_START}};
static atomic_int tj_cost_next[2];

static void tj_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

int64_t tj_pool_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Watches for a job for a while without the lock; 1 if one is on offer. */
static int tj_spin_for_job(void)
{
    int64_t until = tj_pool_now_ns() + TJ_POOL_SPIN_NS;
    for (int i = 1;; i++) {
        tj_job *j = atomic_load_explicit(&tj_offer, memory_order_acquire);
        if (j)
            return 1;
        if ((i & 255) == 0 && tj_pool_now_ns() > until)
            return 0;
        tj_cpu_relax();
    }
}

static int tj_job_open(void)
{
    return tj_current && atomic_load(&tj_current->next) < tj_current->parts;
}

/* Where part p of n over units begins: the first units % n parts take one
 * unit more. Never units * p, which overflows int64 once units passes
 * INT64_MAX / n (a dynamic call's dims can make 2^62 units). */
static int64_t tj_part_begin(int64_t units, int p, int n)
{
    int64_t rem = units % n;
    return units / n * p + (p < rem ? p : rem);
}

/* Runs parts of job until none is left; returns how many it ran. */
static int tj_run_parts(tj_job *job)
{
    int ran = 0;
    for (int p; (p = atomic_fetch_add(&job->next, 1)) < job->parts; ran++)
        job->fn(job->ctx, tj_part_begin(job->units, p, job->parts),
                tj_part_begin(job->units, p + 1, job->parts));
    return ran;
}

static void *tj_worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&tj_pool_lock);
    for (;;) {
        if (!tj_stopping && !tj_job_open()) {
            pthread_mutex_unlock(&tj_pool_lock);
            tj_spin_for_job();
            pthread_mutex_lock(&tj_pool_lock);
        }
        while (!tj_stopping && !tj_job_open()) {
            tj_sleepers++;
            atomic_fetch_add_explicit(&tj_asleep, 1, memory_order_relaxed);
            pthread_cond_wait(&tj_pool_wake, &tj_pool_lock);
            atomic_fetch_sub_explicit(&tj_asleep, 1, memory_order_relaxed);
            tj_sleepers--;
        }
        if (tj_stopping)
            break;
        tj_job *job = tj_current;
        job->users++;
        pthread_mutex_unlock(&tj_pool_lock);
        int ran = tj_run_parts(job);
        pthread_mutex_lock(&tj_pool_lock);
        job->left -= ran;
        job->users--;
        if (job->left == 0 && job->users == 0) {
            atomic_store_explicit(&job->quiet, 1, memory_order_release);
            pthread_cond_broadcast(&tj_pool_done);
        }
    }
    pthread_mutex_unlock(&tj_pool_lock);
    return NULL;
}

/* Starts workers up to `want` (lock held); returns how many there are. */
static int tj_grow(int want)
{
    while (tj_nworkers < want && tj_nworkers < TJ_POOL_MAX) {
        if (pthread_create(&tj_workers[tj_nworkers], NULL, tj_worker, NULL) != 0)
            break;
        tj_nworkers++;
    }
    return tj_nworkers;
}

/* A job's cost as the latest sample of its state (asleep: 1). The cost is
 * the median of the last three: it was a running mean, which one job
 * whose worker was descheduled for milliseconds raised for every kernel
 * after it, and kernels the split rule then kept alone never ran a job to
 * bring it down (docs/performance.md, 'Parallel execution'). */
static void tj_cost_note(int asleep, int64_t sample)
{
    int at = atomic_fetch_add_explicit(&tj_cost_next[asleep], 1, memory_order_relaxed);
    atomic_store_explicit(&tj_cost[asleep][(unsigned)at % TJ_POOL_COST_SAMPLES], sample,
                          memory_order_relaxed);
}

static int64_t tj_cost_median(int asleep)
{
    int64_t a = atomic_load_explicit(&tj_cost[asleep][0], memory_order_relaxed);
    int64_t b = atomic_load_explicit(&tj_cost[asleep][1], memory_order_relaxed);
    int64_t c = atomic_load_explicit(&tj_cost[asleep][2], memory_order_relaxed);
    int64_t lo = a < b ? a : b, hi = a < b ? b : a;
    return c < lo ? lo : c > hi ? hi : c;
}

int64_t tj_pool_cost_ns(void)
{
    int asleep = atomic_load_explicit(&tj_asleep, memory_order_relaxed) > 0;
    int64_t c = tj_cost_median(asleep);
    return c > 0 ? c : 1;
}

int tj_pool_cpus(void)
{
    int n = tj_host_cpus();
    return n > TJ_POOL_MAX + 1 ? TJ_POOL_MAX + 1 : n;
}

static void tj_job_run(tj_job *job);
static void tj_job_join(tj_job *job, int ran);

/* A calibration part: TJ_POOL_CALIBRATE_PART_NS of spinning. */
static void tj_calibrate_part(void *ctx, int64_t begin, int64_t end)
{
    (void)ctx, (void)begin, (void)end;
    int64_t until = tj_pool_now_ns() + TJ_POOL_CALIBRATE_PART_NS;
    while (tj_pool_now_ns() < until)
        tj_cpu_relax();
}

/* The awake cost, from jobs of two equal parts (the pool's first use; busy
 * held, workers just started). The median of the jobs' costs. */
static void tj_calibrate(void)
{
    int64_t cost[TJ_POOL_CALIBRATE_JOBS];
    for (int i = 0; i < TJ_POOL_CALIBRATE_JOBS; i++) {
        tj_job job = {.fn = tj_calibrate_part, .units = 2, .parts = 2, .left = 2};
        atomic_init(&job.next, 0);
        atomic_init(&job.quiet, 0);
        int64_t t0 = tj_pool_now_ns();
        tj_job_run(&job);
        cost[i] = tj_pool_now_ns() - t0 - TJ_POOL_CALIBRATE_PART_NS;
    }
    for (int i = 1; i < TJ_POOL_CALIBRATE_JOBS; i++) /* insertion sort: eight values */
        for (int j = i; j > 0 && cost[j] < cost[j - 1]; j--) {
            int64_t t = cost[j];
            cost[j] = cost[j - 1];
            cost[j - 1] = t;
        }
    int64_t median = cost[TJ_POOL_CALIBRATE_JOBS / 2];
    for (int i = 0; i < TJ_POOL_COST_SAMPLES; i++)
        atomic_store_explicit(&tj_cost[0][i], median > 0 ? median : 1, memory_order_relaxed);
}

void tj_pool_run(int threads, int64_t units, tj_pool_fn fn, void *ctx)
{
    int parts = threads < units ? threads : (int)units;
    if (parts <= 1 || pthread_mutex_trylock(&tj_pool_busy) != 0) {
        fn(ctx, 0, units);
        return;
    }
    pthread_mutex_lock(&tj_pool_lock);
    int had = tj_nworkers;
    if (tj_grow(parts - 1) == 0) {
        pthread_mutex_unlock(&tj_pool_lock);
        pthread_mutex_unlock(&tj_pool_busy);
        fn(ctx, 0, units);
        return;
    }
    pthread_mutex_unlock(&tj_pool_lock);
    if (had == 0)
        tj_calibrate();
    tj_job job = {.fn = fn, .ctx = ctx, .units = units, .parts = parts, .left = parts};
    atomic_init(&job.next, 0);
    atomic_init(&job.quiet, 0);
    tj_job_run(&job);
    pthread_mutex_unlock(&tj_pool_busy);
}

/* Offers job to the workers, runs parts of it here too, waits for the
 * rest, and notes what that cost beyond the calling thread's average part
 * (busy held). */
static void tj_job_run(tj_job *job)
{
    int64_t t0 = tj_pool_now_ns();
    pthread_mutex_lock(&tj_pool_lock);
    int asleep = tj_sleepers == tj_nworkers;
    tj_current = job;
    atomic_store_explicit(&tj_offer, job, memory_order_release);
    if (tj_sleepers)
        pthread_cond_broadcast(&tj_pool_wake);
    pthread_mutex_unlock(&tj_pool_lock);

    int64_t w0 = tj_pool_now_ns();
    int ran = tj_run_parts(job);
    int64_t work = tj_pool_now_ns() - w0;

    tj_job_join(job, ran);
    int64_t over = tj_pool_now_ns() - t0 - (ran ? work / ran : 0);
    tj_cost_note(asleep, over > 0 ? over : 0);
}

/* After the calling thread ran `ran` parts of job: waits until every part
 * is done and no worker holds it. */
static void tj_job_join(tj_job *job, int ran)
{
    pthread_mutex_lock(&tj_pool_lock);
    job->left -= ran;
    tj_current = NULL; /* no new worker takes it; those holding it finish */
    atomic_store_explicit(&tj_offer, NULL, memory_order_release);
    if (job->left == 0 && job->users == 0)
        atomic_store(&job->quiet, 1);
    pthread_mutex_unlock(&tj_pool_lock);
    /* the workers' parts usually end about when ours did: spin, then sleep */
    int64_t until = tj_pool_now_ns() + TJ_POOL_SPIN_NS;
    for (int i = 1; !atomic_load_explicit(&job->quiet, memory_order_acquire); i++) {
        if ((i & 255) == 0 && tj_pool_now_ns() > until)
            break;
        tj_cpu_relax();
    }
    pthread_mutex_lock(&tj_pool_lock);
    while (job->left > 0 || job->users > 0)
        pthread_cond_wait(&tj_pool_done, &tj_pool_lock);
    pthread_mutex_unlock(&tj_pool_lock);
}

void tj_pool_shutdown(void)
{
    pthread_mutex_lock(&tj_pool_lock);
    tj_stopping = 1;
    pthread_cond_broadcast(&tj_pool_wake);
    pthread_mutex_unlock(&tj_pool_lock);
    for (int i = 0; i < tj_nworkers; i++)
        pthread_join(tj_workers[i], NULL);
    pthread_mutex_lock(&tj_pool_lock);
    tj_nworkers = 0;
    tj_stopping = 0;
    pthread_mutex_unlock(&tj_pool_lock);
}
