/* The CPUs this process may run on (runtime/host_cpus.c): what
 * JIT_THREADS_ALL and the pool count as "one per core". */
#ifndef TJ_HOST_CPUS_H
#define TJ_HOST_CPUS_H

/* The CPUs of the process's affinity mask (its main thread's) when the
 * library first counts them (read once), else the CPUs online; at least
 * 1. */
int tj_host_cpus(void);

#endif
