#include "user_kernel.h"

#include "error.h"
#include "limit.h"
#include "op.h"
#include "tiered.h"

const tj_kernel *tj_user_kernel(tj_entry_fn fn, jit_op op, int *tiered, tj_cache_pinned *pin,
                                int *status)
{
    int ignored;
    if (!status)
        status = &ignored;
    *status = JIT_STATUS_BAD_POINTER;
    pin->slot = NULL;
    const tj_kernel *k = fn ? tj_cache_pin(fn, pin) : NULL;
    *tiered = 0;
    if (!k && fn && (k = tj_tiered_current(fn)))
        *tiered = 1;
    if (!k && fn && tj_is_released(fn)) {
        tj_error_set("this kernel was released under the kernel limit");
        *status = JIT_STATUS_RELEASED;
        return NULL;
    }
    if (k && op != JIT_OP_NONE && k->plan.op != op) {
        tj_cache_unpin(pin);
        const char *its = tj_op_find(k->plan.op)->info.name, *want = tj_op_find(op)->info.name;
        tj_error_set("this is %s %s kernel, not %s %s one: use the %s calls, or the generic ones "
                     "(jit_info, jit_release, jit_units, ...), which take any kernel",
                     tj_article(its), its, tj_article(want), want, its);
        return NULL;
    }
    if (!k) {
        tj_error_set("not a kernel returned by this library (or freed by jit_shutdown)");
        return NULL;
    }
    *status = JIT_OK;
    return k;
}

void tj_user_kernel_done(tj_cache_pinned *pin)
{
    tj_cache_unpin(pin);
}
