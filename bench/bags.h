/* tensorjit bench --bags: the embedding-bag workloads E1-E5 of
 * shared/bench/workloads.md (SPEC section 10) and their peers, timed in
 * interleaved rounds in one process. Kept apart from the G/S workloads:
 * their tables are up to 2 GB and each call reads rows that must not be
 * cached from the last one, so they need index sets, not one index
 * buffer. */
#ifndef TJ_BAGS_H
#define TJ_BAGS_H

#include <stddef.h>
#include <stdint.h>

#include "tensorjit.h"

/* One workload: table [rows, width] (f32, or bf16 with bf16 out), B bags
 * of L lookups (varying: each bag's length uniform in [0, L]), in the
 * offsets form or packed ([B, L] indices). */
typedef struct tj_bag_workload {
    const char *id, *what;
    int64_t rows, width;
    int bf16;
    int64_t bags, length;
    int varying;
    int index_size; /* 4 or 8 bytes, signed */
    int mean;       /* mean, else sum */
    int weighted;   /* per-sample weights, of the table's type */
    int packed;
    int min_sets; /* at least this many index sets (E2a) */
} tj_bag_workload;

extern const tj_bag_workload tj_bag_workloads[];
extern const int tj_bag_workload_count;
/* The same workloads on shapes small enough to test in seconds. */
extern const tj_bag_workload tj_bag_smoke_workloads[];
extern const int tj_bag_smoke_count;

/* The workload named id among the full ones, or NULL. */
const tj_bag_workload *tj_bag_workload_find(const char *id);

/* SPEC section 10's kernel type: offsets NULL for the packed form, weights
 * NULL when unweighted. 0, or 1 for a bad index or offset. */
typedef int (*tj_bag_fn)(const void *table, const void *indices, const void *offsets,
                         const void *weights, void *out);
/* The random-gather probe: the same arguments and a prefetch distance in
 * lookups. */
typedef int (*tj_bag_probe_fn)(const void *table, const void *indices, const void *offsets,
                               const void *weights, void *out, long long distance);
/* The probe over bags [b0, b1) (bags_static.c's probe_range_ID). */
typedef int (*tj_bag_probe_range_fn)(const void *table, const void *indices, const void *offsets,
                                     const void *weights, void *out, long long distance,
                                     long long b0, long long b1);

/* A workload's inputs: one table, `sets` index sets (and weight sets) of
 * n lookups each, one offsets array shared by every set (so that n, a
 * static dim, is the same for all). */
typedef struct tj_bag_inputs {
    const tj_bag_workload *w;
    int64_t n;           /* lookups per call */
    int sets;            /* index sets, used in turn */
    size_t elem;         /* table element bytes */
    int64_t table_bytes, out_bytes;
    void *table;
    void *indices;       /* sets * n entries */
    void *offsets;       /* bags entries; NULL when packed */
    void *weights;       /* sets * n entries; NULL when unweighted */
    int64_t huge_bytes;  /* of the table, on huge pages (/proc/self/smaps) */
    int madvised;        /* madvise(MADV_HUGEPAGE) on the table: 1 ok, 0 refused, -1 not
                            asked (under 2 MB) */
} tj_bag_inputs;

/* Fills in (fixed seed); max_sets caps the set count (0: none). 0, or -1
 * with why. The index sets are enough that between two uses of one set
 * the calls read twice `llc` bytes of rows. */
int tj_bag_inputs_make(tj_bag_inputs *in, const tj_bag_workload *w, int64_t llc, int max_sets,
                       char *why, size_t len);
void tj_bag_inputs_free(tj_bag_inputs *in);
const void *tj_bag_set_indices(const tj_bag_inputs *in, int set);
const void *tj_bag_set_weights(const tj_bag_inputs *in, int set);
/* The last-level cache's size in bytes (sysfs, else 32 MiB). */
int64_t tj_bag_llc_bytes(void);
/* "[madvise]" of /sys/kernel/mm/transparent_hugepage/enabled, or "?". */
const char *tj_bag_thp_mode(void);
/* 64-byte aligned (2 MB aligned and advised to huge pages from 2 MB on);
 * *advised as tj_bag_inputs.madvised. Free with free(). */
void *tj_bag_alloc(int64_t bytes, int *advised);

/* The static kernels of every workload in ws, compiled with cc -O3
 * -march=native -ffp-contract=off: static_ID, prefetch_ID (16 lookups
 * ahead) and probe_ID. 0, or -1 with why. */
int tj_bag_static_build(const tj_bag_workload *const *ws, const int64_t *ns, int count,
                        void **handle, char *why, size_t len);
void *tj_bag_static_find(void *handle, const char *prefix, const char *id);
void tj_bag_static_close(void *handle);

/* SPEC section 10's dynamic kernel type: dims as tj_bags_jit_dims lays
 * them out. */
typedef int (*tj_bag_dyn_fn)(const void *table, const void *indices, const void *offsets,
                             const void *weights, void *out, const int64_t *dims);

/* tensorjit's kernels for w (bench/bags_jit.c), or NULL with why when this
 * build has no embedding-bag ops or the compile failed; *ms (unless NULL)
 * the compile's wall time. The dynamic one leaves the bag count and the
 * lookup count (packed: the bag length) to the call. */
tj_bag_fn tj_bags_jit_compile(const tj_bag_workload *w, int64_t n, int threads, double *ms,
                              char *why, size_t len);
tj_bag_dyn_fn tj_bags_jit_compile_dynamic(const tj_bag_workload *w, double *ms, char *why,
                                          size_t len);
/* The one-thread static kernel with its index and offset checks compiled
 * out (bench/bags_unchecked.c). */
tj_bag_fn tj_bags_jit_compile_unchecked(const tj_bag_workload *w, int64_t n, char *why,
                                        size_t len);
/* w's signature with n lookups (offsets form) on `threads`; dynamic: B
 * and N (packed: B and L) dynamic. Only in a build with the bag ops. */
jit_sig tj_bags_jit_sig(const tj_bag_workload *w, int64_t n, int threads, int dynamic);
/* The dims of w's calls of the dynamic kernel, into dims[6]; their count. */
int tj_bags_jit_dims(const tj_bag_workload *w, int64_t n, int64_t *dims);
/* A first bag compile, of a signature no workload has, so that a
 * workload's compile times are those of a compile after the first
 * (LLVM's start-up paid): its ms, or -1 when there is none. */
double tj_bags_jit_first_compile(void);
/* The workload's dynamic family through jit_compile_async, under a key of
 * its own (one table row more): ms until the pointer came back and until
 * it ran the JIT kernel, each -1 where none came. */
void tj_bags_jit_async(const tj_bag_workload *w, double *back_ms, double *jit_ms);
/* sig's kernel without its run-time checks, or NULL with why: the bench's
 * internal entry point (not in libtensorjit.so), never the library's. */
jit_kernel tj_bench_compile_unchecked(const jit_sig *sig, char *why, size_t len);

/* tensorjit bench --bags / --bags-smoke / --workload E*: the exit status. */
int tj_bench_bags(int argc, char **argv);
/* 1 when argv asks for the bag workloads. */
int tj_bench_wants_bags(int argc, char **argv);

#endif
