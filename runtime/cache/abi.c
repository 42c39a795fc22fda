/* The two argument lists of the family's kernels, gathers (data, indices,
 * out) and scatters (data, indices, updates, out), and what depends on
 * them alone: calling an entry, the reference kernel's libffi trampoline,
 * and the handler a released kernel's stub jumps to. A plan says which
 * (has_updates); nothing here depends on the op. */
#include <ffi.h>

#include "dyn.h"
#include "error.h"
#include "op.h"
#include "ref_kernel.h"

static int tj_released_status(void)
{
    tj_error_set("this kernel was released under the kernel limit (jit_set_kernel_limit) "
                 "after its last hold was dropped; compile its signature again");
    return JIT_STATUS_RELEASED;
}

/* What a kernel pointer from before a jit_shutdown() returns when it was
 * handed out as a stub: stubs outlive the shutdown (stub.c), so the old
 * pointer never runs a later kernel that landed at the same address. */
static int tj_freed_status(void)
{
    tj_error_set("this kernel was freed by jit_shutdown(); compile its signature again");
    return JIT_STATUS_RELEASED;
}

static int tj_freed_gather(const void *data, const void *indices, void *out)
{
    (void)data, (void)indices, (void)out;
    return tj_freed_status();
}

static int tj_freed_scatter(const void *data, const void *indices, const void *updates,
                            void *out)
{
    (void)data, (void)indices, (void)updates, (void)out;
    return tj_freed_status();
}

static int tj_freed_dynamic(const void *data, const void *indices, const void *updates,
                            void *out, const int64_t *dims)
{
    (void)data, (void)indices, (void)updates, (void)out, (void)dims;
    return tj_freed_status();
}

static int tj_released_gather(const void *data, const void *indices, void *out)
{
    (void)data, (void)indices, (void)out;
    return tj_released_status();
}

static int tj_released_scatter(const void *data, const void *indices, const void *updates,
                               void *out)
{
    (void)data, (void)indices, (void)updates, (void)out;
    return tj_released_status();
}

static int tj_released_dynamic(const void *data, const void *indices, const void *updates,
                               void *out, const int64_t *dims)
{
    (void)data, (void)indices, (void)updates, (void)out, (void)dims;
    return tj_released_status();
}

static void tj_dynamic_trampoline(void *cif, void *ret, void **args, void *user)
{
    (void)cif;
    const tj_kernel *k = user;
    int rc = tj_dyn_ref_call(k, k->plan.dyn, *(const int64_t **)args[4], *(const void **)args[0],
                             *(const void **)args[1], *(const void **)args[2],
                             *(void **)args[3]);
    *(ffi_sarg *)ret = rc;
}

static void tj_gather_trampoline(void *cif, void *ret, void **args, void *user)
{
    (void)cif;
    const tj_kernel *k = user;
    int rc = tj_ref_run(&k->plan, *(const void **)args[0], *(const void **)args[1], NULL,
                        *(void **)args[2]);
    *(ffi_sarg *)ret = rc;
}

static void tj_scatter_trampoline(void *cif, void *ret, void **args, void *user)
{
    (void)cif;
    const tj_kernel *k = user;
    int rc = tj_ref_run(&k->plan, *(const void **)args[0], *(const void **)args[1],
                        *(const void **)args[2], *(void **)args[3]);
    *(ffi_sarg *)ret = rc;
}

static int tj_call_gather(tj_entry_fn fn, const void *data, const void *indices,
                          const void *updates, void *out)
{
    (void)updates;
    return ((jit_gather_nd_fn)fn)(data, indices, out);
}

static int tj_call_scatter(tj_entry_fn fn, const void *data, const void *indices,
                           const void *updates, void *out)
{
    return ((jit_scatter_update_fn)fn)(data, indices, updates, out);
}

/* A dynamic kernel has no dims here: jit_call_dynamic calls it. */
static int tj_call_dynamic(tj_entry_fn fn, const void *data, const void *indices,
                           const void *updates, void *out)
{
    (void)fn, (void)data, (void)indices, (void)updates, (void)out;
    tj_error_set("a dynamic kernel takes the call's dims: call it through jit_call_dynamic");
    return JIT_STATUS_BAD_SHAPE;
}

static const tj_abi tj_abis[3] = {
    {3, tj_gather_trampoline, (tj_entry_fn)tj_released_gather, (tj_entry_fn)tj_freed_gather,
     tj_call_gather},
    {4, tj_scatter_trampoline, (tj_entry_fn)tj_released_scatter, (tj_entry_fn)tj_freed_scatter,
     tj_call_scatter},
    {5, tj_dynamic_trampoline, (tj_entry_fn)tj_released_dynamic, (tj_entry_fn)tj_freed_dynamic,
     tj_call_dynamic},
};

const tj_abi *tj_abi_of(const tj_plan *p)
{
    return &tj_abis[p->dyn ? 2 : p->has_updates ? 1 : 0];
}

int tj_abi_is_released_handler(tj_entry_fn target)
{
    for (int i = 0; i < 3; i++)
        if (target == tj_abis[i].released || target == tj_abis[i].freed)
            return 1;
    return 0;
}
