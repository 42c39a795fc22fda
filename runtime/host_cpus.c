/* The CPUs a split may use. The CPUs online overcount wherever the process
 * is confined to fewer (taskset, a container's cpuset): two threads
 * time-sliced on one core made a call slower than one thread
 * (docs/performance.md, 'Python's bag families'). The affinity mask is
 * what numpy's and torch's thread pools count too. */
#define _GNU_SOURCE
#include "host_cpus.h"

#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

static int tj_count_cpus(void)
{
#ifdef CPU_COUNT
    cpu_set_t set;
    /* the main thread's mask (its id is the process's), not the calling
     * thread's: a framework's pinned worker may be the first to ask. Fails
     * (EINVAL) past CPU_SETSIZE CPUs: then the count online */
    if (sched_getaffinity(getpid(), sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (n > 1 << 20 ? 1 << 20 : (int)n) : 1;
}

int tj_host_cpus(void)
{
    static atomic_int cpus;
    int n = atomic_load_explicit(&cpus, memory_order_relaxed);
    if (n == 0) {
        n = tj_count_cpus();
        atomic_store_explicit(&cpus, n, memory_order_relaxed);
    }
    return n;
}
