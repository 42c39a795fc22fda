/* The argument lists of the family's kernels, gathers (data, indices,
 * out), scatters (data, indices, updates, out), embedding bags (table,
 * indices, offsets, weights, out) and the dynamic forms of both (dims
 * last), and what depends on them alone: calling an entry, the reference kernel's libffi trampoline,
 * and the handler a released kernel's stub jumps to. A plan says which
 * (has_updates); nothing here depends on the op. */
#include <ffi.h>

#include "dyn.h"
#include "error.h"
#include "op.h"
#include "bag_ref.h"
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

static int tj_freed_bag(const void *table, const void *indices, const void *offsets,
                        const void *weights, void *out)
{
    (void)table, (void)indices, (void)offsets, (void)weights, (void)out;
    return tj_freed_status();
}

static int tj_freed_bag_dynamic(const void *table, const void *indices, const void *offsets,
                                const void *weights, void *out, const int64_t *dims)
{
    (void)table, (void)indices, (void)offsets, (void)weights, (void)out, (void)dims;
    return tj_freed_status();
}

static int tj_released_bag(const void *table, const void *indices, const void *offsets,
                           const void *weights, void *out)
{
    (void)table, (void)indices, (void)offsets, (void)weights, (void)out;
    return tj_released_status();
}

static int tj_released_bag_dynamic(const void *table, const void *indices, const void *offsets,
                                   const void *weights, void *out, const int64_t *dims)
{
    (void)table, (void)indices, (void)offsets, (void)weights, (void)out, (void)dims;
    return tj_released_status();
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

static void tj_bag_trampoline(void *cif, void *ret, void **args, void *user)
{
    (void)cif;
    const tj_kernel *k = user;
    int rc = tj_bag_ref_run(&k->plan, *(const void **)args[0], *(const void **)args[1],
                            *(const void **)args[2], *(const void **)args[3], *(void **)args[4]);
    *(ffi_sarg *)ret = rc;
}

static void tj_bag_dynamic_trampoline(void *cif, void *ret, void **args, void *user)
{
    (void)cif;
    const tj_kernel *k = user;
    int rc = tj_dyn_bag_ref_call(k, k->plan.dyn, *(const int64_t **)args[5],
                                 *(const void **)args[0], *(const void **)args[1],
                                 *(const void **)args[2], *(const void **)args[3],
                                 *(void **)args[4]);
    *(ffi_sarg *)ret = rc;
}

static int tj_call_gather(tj_entry_fn fn, const void *data, const void *indices,
                          const void *updates, const void *weights, void *out)
{
    (void)updates, (void)weights;
    return ((jit_gather_nd_fn)fn)(data, indices, out);
}

static int tj_call_scatter(tj_entry_fn fn, const void *data, const void *indices,
                           const void *updates, const void *weights, void *out)
{
    (void)weights;
    return ((jit_scatter_update_fn)fn)(data, indices, updates, out);
}

static int tj_call_bag(tj_entry_fn fn, const void *table, const void *indices,
                       const void *offsets, const void *weights, void *out)
{
    return ((jit_embedding_bag_fn)fn)(table, indices, offsets, weights, out);
}

/* A dynamic kernel has no dims here: jit_call_dynamic calls it. */
static int tj_call_dynamic(tj_entry_fn fn, const void *data, const void *indices,
                           const void *updates, const void *weights, void *out)
{
    (void)fn, (void)data, (void)indices, (void)updates, (void)weights, (void)out;
    tj_error_set("a dynamic kernel takes the call's dims: call it through jit_call_dynamic");
    return JIT_STATUS_BAD_SHAPE;
}

static int tj_call_bag_dynamic(tj_entry_fn fn, const void *data, const void *indices,
                               const void *updates, const void *weights, void *out)
{
    (void)fn, (void)data, (void)indices, (void)updates, (void)weights, (void)out;
    tj_error_set("a dynamic embedding bag's kernel takes the call's dims: call it through "
                 "jit_call_bag_dynamic");
    return JIT_STATUS_BAD_SHAPE;
}

/* The calls with libffi's arguments (a tiered kernel's closure). */
static int tj_args_gather(tj_entry_fn fn, void **a)
{
    return ((jit_gather_nd_fn)fn)(*(const void **)a[0], *(const void **)a[1], *(void **)a[2]);
}

static int tj_args_scatter(tj_entry_fn fn, void **a)
{
    return ((jit_scatter_update_fn)fn)(*(const void **)a[0], *(const void **)a[1],
                                       *(const void **)a[2], *(void **)a[3]);
}

static int tj_args_dynamic(tj_entry_fn fn, void **a)
{
    return ((jit_dynamic_fn)fn)(*(const void **)a[0], *(const void **)a[1],
                                *(const void **)a[2], *(void **)a[3], *(const int64_t **)a[4]);
}

static int tj_args_bag(tj_entry_fn fn, void **a)
{
    return ((jit_embedding_bag_fn)fn)(*(const void **)a[0], *(const void **)a[1],
                                      *(const void **)a[2], *(const void **)a[3],
                                      *(void **)a[4]);
}

static int tj_args_bag_dynamic(tj_entry_fn fn, void **a)
{
    return ((jit_embedding_bag_dynamic_fn)fn)(*(const void **)a[0], *(const void **)a[1],
                                              *(const void **)a[2], *(const void **)a[3],
                                              *(void **)a[4], *(const int64_t **)a[5]);
}

#define TJ_NABIS 5

static const tj_abi tj_abis[TJ_NABIS] = {
    {3, tj_gather_trampoline, (tj_entry_fn)tj_released_gather, (tj_entry_fn)tj_freed_gather,
     tj_call_gather, tj_args_gather},
    {4, tj_scatter_trampoline, (tj_entry_fn)tj_released_scatter, (tj_entry_fn)tj_freed_scatter,
     tj_call_scatter, tj_args_scatter},
    {5, tj_dynamic_trampoline, (tj_entry_fn)tj_released_dynamic, (tj_entry_fn)tj_freed_dynamic,
     tj_call_dynamic, tj_args_dynamic},
    {5, tj_bag_trampoline, (tj_entry_fn)tj_released_bag, (tj_entry_fn)tj_freed_bag, tj_call_bag,
     tj_args_bag},
    {6, tj_bag_dynamic_trampoline, (tj_entry_fn)tj_released_bag_dynamic,
     (tj_entry_fn)tj_freed_bag_dynamic, tj_call_bag_dynamic, tj_args_bag_dynamic},
};

const tj_abi *tj_abi_of(const tj_plan *p)
{
    if (p->is_bag)
        return &tj_abis[p->dyn ? 4 : 3];
    return &tj_abis[p->dyn ? 2 : p->has_updates ? 1 : 0];
}

int tj_abi_is_bag(const tj_abi *abi)
{
    return abi == &tj_abis[3] || abi == &tj_abis[4];
}

int tj_abi_is_released_handler(tj_entry_fn target)
{
    for (int i = 0; i < TJ_NABIS; i++)
        if (target == tj_abis[i].released || target == tj_abis[i].freed)
            return 1;
    return 0;
}
