/* The backend of a build without LLVM: every kernel is the reference one. */
#include <stdio.h>

#include "backend.h"

int tj_backend_compile(const tj_plan *plan, const void *key, size_t key_len, tj_backend_kernel *out,
                       char *why, size_t why_len)
{
    (void)plan;
    (void)key;
    (void)key_len;
    (void)out;
    snprintf(why, why_len, "this build has no JIT backend");
    return -1;
}

int tj_backend_parts(const tj_plan *plan, tj_backend_kernel *out, char *why, size_t why_len)
{
    (void)plan;
    (void)out;
    snprintf(why, why_len, "this build has no JIT backend");
    return -1;
}

char *tj_backend_dump(const tj_plan *plan, tj_dump_kind kind, char *why, size_t why_len)
{
    (void)plan;
    (void)kind;
    snprintf(why, why_len, "this build has no JIT backend");
    return NULL;
}

int tj_backend_splits(const tj_plan *plan)
{
    (void)plan;
    return 0; /* the reference kernels run on the caller's thread */
}

void tj_backend_strategy(const tj_plan *plan, char *buf, size_t len)
{
    (void)plan;
    snprintf(buf, len, "the reference kernel (this build has no JIT backend)");
}

int tj_backend_cache_open(const char *dir, char *why, size_t why_len)
{
    (void)dir;
    snprintf(why, why_len, "this build has no JIT backend, so no cache of compiled kernels");
    return -1;
}

void tj_backend_cache_refusal(char *why, size_t len)
{
    snprintf(why, len, "this build has no JIT backend, so no cache of compiled kernels");
}

int tj_backend_cache_stats(int remove, int64_t *entries, int64_t *bytes, char *dir, size_t dlen)
{
    (void)remove;
    *entries = *bytes = 0;
    if (dlen)
        dir[0] = '\0';
    return -1;
}

void tj_backend_release(void *handle)
{
    (void)handle;
}

void tj_backend_shutdown(void)
{
}
