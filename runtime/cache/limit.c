/*
 * The kernel limit, as callers see it: jit_set_kernel_limit, the releases,
 * the stats, and what a released kernel's pointer does when it is called
 * all the same. The bookkeeping is in cache.c, under the cache's lock.
 */
#include "limit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "config.h"
#include "op.h"
#include "typed_api.h"
#include "error.h"
#include "stub.h"
#include "tiered.h"

void tj_limit_from_env(int64_t *max_kernels, int64_t *max_code_bytes)
{
    const tj_config *cfg = tj_config_get();
    if (cfg->max_kernels.set)
        *max_kernels = cfg->max_kernels.value;
    if (cfg->max_code_bytes.set)
        *max_code_bytes = cfg->max_code_bytes.value;
}

int tj_is_released(tj_entry_fn fn)
{
    tj_entry_fn target;
    return tj_stub_target(fn, &target) && tj_abi_is_released_handler(target);
}

int jit_set_kernel_limit(int64_t max_kernels, int64_t max_code_bytes)
{
    if (max_kernels < 0 || max_code_bytes < 0)
        return tj_error_set("jit_set_kernel_limit: max_kernels %" PRId64
                            " and max_code_bytes %" PRId64 " must be >= 0 (0: no limit)",
                            max_kernels, max_code_bytes);
    if ((max_kernels || max_code_bytes) && !tj_stub_supported())
        return tj_error_set("jit_set_kernel_limit: kernels can be released only on x86-64 "
                            "(they need entry stubs, which this build has not)");
    tj_cache_set_limit(max_kernels, max_code_bytes);
    return 0;
}

int tj_release_of(jit_kernel kernel, jit_op op, const char *api)
{
    tj_entry_fn fn = (tj_entry_fn)kernel;
    if (!fn)
        return tj_error_set("%s: the kernel is NULL", api);
    if (tj_is_released(fn))
        return tj_error_set("%s: this kernel was released under the kernel limit already", api);
    const tj_kernel *tiered = tj_tiered_current(fn);
    if (tiered && (op == JIT_OP_NONE || tiered->plan.op == op))
        return 0; /* tiered kernels live until jit_shutdown */
    switch (tj_cache_release(fn, op)) {
    case TJ_RELEASE_OK:
        return 0;
    case TJ_RELEASE_NOT_HELD:
        return tj_error_set("%s: the kernel is released more times than it was compiled", api);
    default: {
        jit_op_info info = {.name = ""}, its = {.name = ""};
        jit_kernel_info k;
        jit_op_describe(op, &info);
        if (op != JIT_OP_NONE && jit_info(kernel, &k) == 0 && k.op != op &&
            jit_op_describe(k.op, &its) == 0)
            return tj_error_set("%s: this is %s %s kernel, not %s %s one: use the %s calls, or "
                                "jit_release, which takes any kernel", api, tj_article(its.name),
                                its.name, tj_article(info.name), info.name, its.name);
        tj_error_clear();
        return tj_error_set("%s: not %s %s%skernel returned by this library (or freed by "
                            "jit_shutdown)", api, tj_article(*info.name ? info.name : "k"),
                            info.name, *info.name ? " " : "");
    }
    }
}

int jit_release(jit_kernel kernel)
{
    return tj_release_of(kernel, JIT_OP_NONE, "jit_release");
}

int jit_get_kernel_stats(jit_kernel_stats *out)
{
    if (!out)
        return tj_error_set("jit_get_kernel_stats: NULL argument");
    tj_cache_stats(out);
    return 0;
}
