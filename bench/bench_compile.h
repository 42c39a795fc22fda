/* Compile figures for tensorjit bench. */
#ifndef TJ_BENCH_COMPILE_H
#define TJ_BENCH_COMPILE_H

typedef struct tj_compile_summary {
    int runs;
    double first_ms, next_ms, worst_ms, hit_ns;
    double per_workload_ms[32];
    int not_jit;
    double disk_first_ms; /* a second process, cache opened 5 ms before */
    double disk_cold_ms;  /* the same, called right after opening */
    double disk_next_ms;
    int disk_misses;
    double limit_reload_ms; /* a kernel the cap released, asked for again */
    double release_ns;      /* jit_*_release */
} tj_compile_summary;

/* Runs `runs` child processes of this executable; 0 or -1 (printed). */
int tj_bench_compile_collect(int runs, tj_compile_summary *out);
/* Kernel-limit figures (bench/limit.c): 0 or -1. */
int tj_bench_limit_figures(double *reload_ms, double *release_ns);
void tj_bench_compile_print(const tj_compile_summary *c, int json, int first_json);

#endif
