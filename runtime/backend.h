/* What the runtime asks of a JIT backend. runtime/ knows nothing of LLVM:
 * the build links either jit/ (LLVM) or backend_none.c here. */
#ifndef TJ_BACKEND_H
#define TJ_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

typedef struct tj_backend_kernel {
    tj_entry_fn entry;
    size_t code_bytes;
    void *handle; /* released with tj_backend_release */
    int (*check)(const void *indices); /* with the range: split kernels only, else NULL */
    tj_range_fn range;
    int range_checks; /* the range function has a check mode (TJ_RANGE_CHECK) */
    int cache_hit; /* loaded from the on-disk cache, not compiled */
} tj_backend_kernel;

/* Native code for *plan, compiled or loaded from the disk cache (key, the
 * signature's key, is part of the cache's key). Neither the backend nor the
 * code keeps a pointer to plan: every number of it is a constant in the
 * code, and the runtime functions the code calls (jit_support.h) find the
 * plan through the kernel cache by the kernel's entry address. 0 on
 * success; else -1 and `why` says what failed, in words for a user. */
int tj_backend_compile(const tj_plan *plan, const void *key, size_t key_len, tj_backend_kernel *out,
                       char *why, size_t why_len);

/* The check and range functions of *plan's kernel, for the parts API of a
 * kernel compiled without them (out->check, out->range; out->handle to
 * release): compiled in a module of their own, not cached on disk. 0, or
 * -1 and why. */
int tj_backend_parts(const tj_plan *plan, tj_backend_kernel *out, char *why, size_t why_len);

/* The on-disk cache of compiled objects: 0, or -1 and why (the folder is
 * refused, or this build has no JIT). NULL closes it. */
int tj_backend_cache_open(const char *dir, char *why, size_t why_len);
/* Entries and bytes of the open cache folder (remove: delete them); -1 if
 * none is open, -2 (errno set) if the open one cannot be listed, -3 (before
 * anything is removed) if dir's dlen bytes cannot hold its path. */
int tj_backend_cache_stats(int remove, int64_t *entries, int64_t *bytes, char *dir, size_t dlen);
/* Why the last folder asked for (TENSORJIT_CACHE_DIR's too) was refused;
 * "" when it was not, or none was asked for. */
void tj_backend_cache_refusal(char *why, size_t len);
void tj_backend_release(void *handle);

/* Whether the kernel of plan, compiled for its threads (> 1), splits its
 * work: where it does not, its code is the one-thread kernel's, and the
 * runtime hands that one out instead (api.c). */
int tj_backend_splits(const tj_plan *plan);

/* The code shape the backend chooses for plan, in words, with the numbers
 * behind the choice. */
void tj_backend_strategy(const tj_plan *plan, char *buf, size_t len);

typedef enum tj_dump_kind { TJ_DUMP_IR, TJ_DUMP_IR_OPT, TJ_DUMP_ASM } tj_dump_kind;

/* The kernel's IR before or after optimization, or its assembly, as text
 * from tj_malloc; NULL and why on failure. */
char *tj_backend_dump(const tj_plan *plan, tj_dump_kind kind, char *why, size_t why_len);
void tj_backend_shutdown(void);

#endif
