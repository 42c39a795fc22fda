/* The backend of a build without LLVM: every kernel is the reference one. */
#include <stdio.h>

#include "backend.h"

int tj_backend_compile(const tj_plan *plan, tj_backend_kernel *out, char *why, size_t why_len)
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

void tj_backend_strategy(const tj_plan *plan, char *buf, size_t len)
{
    (void)plan;
    snprintf(buf, len, "the reference kernel (this build has no JIT backend)");
}

void tj_backend_release(void *handle)
{
    (void)handle;
}

void tj_backend_shutdown(void)
{
}
