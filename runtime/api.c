/* The generic entry points: signature -> plan -> cached kernel. */

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "cache.h"
#include "config.h"
#include "dyn.h"
#include "error.h"
#include "kernel.h"
#include "overlap.h"
#include "op.h"
#include "plan.h"
#include "pool.h"
#include "scratch.h"
#include "tiered.h"
#include "typed_api.h"
#include "user_kernel.h"

/* The kernel of sig (keyed key, planned plan), built or found. Where sig
 * asks for threads its kernel would not use, that kernel is the one-thread
 * kernel's code: the one-thread kernel itself is handed out, so that
 * threads = 1 and N run the same code at the same address, compile once
 * and share one object in the disk cache; key becomes its alias, so that
 * the next compile of sig is a plain hit. (A dynamic family plans its
 * template twice then, once per count: on a miss only, beside a compile.) */
/* sig's one-thread twin, planned (into plan and dyn) and keyed: 0, or -1
 * with the error set. */
static int tj_sig_one_thread(const tj_op_def *def, const jit_sig *sig, tj_plan *plan,
                             tj_key *key, tj_dyn *dyn)
{
    jit_sig one = *sig;
    one.threads = 1;
    if (tj_sig_template(def, &one, plan, NULL, dyn) != 0 || tj_key_sig(def, &one, key) != 0)
        return -1;
    return 0;
}

static tj_kernel *tj_cache_get_sig(const tj_op_def *def, const jit_sig *sig, const tj_key *key,
                                   const tj_plan *plan)
{
    if (!tj_threads_unused(sig, plan))
        return tj_cache_get(key, plan, sig->engine);
    tj_plan plan1;
    tj_key key1;
    tj_dyn dyn1;
    if (tj_sig_one_thread(def, sig, &plan1, &key1, &dyn1) != 0)
        return NULL;
    tj_kernel *k = tj_cache_get(&key1, &plan1, sig->engine);
    if (k)
        tj_cache_alias(key, k);
    return k;
}

/* A miss of tj_compile (key NULL: sig has no key). Out of line, so that a
 * hit's frame holds a key only, not the plans and templates (kilobytes
 * each) that a miss needs. */
__attribute__((noinline)) static jit_kernel tj_compile_miss(const tj_op_def *def,
                                                            const jit_sig *sig,
                                                            const tj_key *key)
{
    tj_plan plan;
    tj_dyn dyn;
    if (tj_sig_template(def, sig, &plan, NULL, &dyn) != 0)
        return NULL;
    if (!key) { /* unreachable: the checks refuse every rank a key refuses */
        tj_error_set("signature has a rank outside [0, %d]", JIT_MAX_RANK);
        return NULL;
    }
    tj_kernel *k = tj_cache_get_sig(def, sig, key, &plan);
    return k ? k->user_entry : NULL;
}

/* The cached kernel, or a new one. A hit does no checking or planning: a
 * key in the cache proves its signature valid. */
static jit_kernel tj_compile(const tj_op_def *def, const jit_sig *sig)
{
    tj_key key;
    int keyed = tj_key_sig(def, sig, &key) == 0;
    tj_kernel *k = keyed ? tj_cache_find(&key) : NULL;
    return k ? k->user_entry : tj_compile_miss(def, sig, keyed ? &key : NULL);
}

jit_kernel jit_compile(const jit_sig *sig)
{
    const tj_op_def *def = tj_sig_op(sig);
    return def ? tj_compile(def, sig) : NULL;
}

/* A tiered kernel, unless the JIT is not wanted (the signature or
 * TENSORJIT_JIT asks for the reference kernel: nothing to switch to), the
 * JIT cannot serve a dynamic family (its reference kernel is the kernel),
 * or the JIT kernel is in the cache already (its pointer, as jit_compile
 * gives it). A dynamic family is tiered too: its one compile takes 5-11 ms
 * on the hosts measured (docs/performance.md), which a caller of this
 * function would rather not wait for. */
jit_kernel jit_compile_async(const jit_sig *sig)
{
    tj_plan plan;
    tj_key key;
    tj_dyn dyn;
    tj_kernel *k;
    const tj_op_def *def = tj_sig_op(sig);
    if (!def)
        return NULL;
    int keyed = tj_key_sig(def, sig, &key) == 0;
    if (keyed && (k = tj_cache_find(&key))) /* an alias too */
        return k->user_entry;
    if (tj_sig_template(def, sig, &plan, NULL, &dyn) != 0)
        return NULL;
    tj_key asked = key;
    int unused = tj_threads_unused(sig, &plan);
    if (unused) { /* the one-thread kernel, as jit_compile gives */
        if (tj_sig_one_thread(def, sig, &plan, &key, &dyn) != 0)
            return NULL;
    } else if (!keyed) {
        return NULL;
    }
    char why[128];
    if (!tj_kernel_jit_planned(&plan, sig->engine, why, sizeof why))
        k = tj_cache_get(&key, &plan, sig->engine);
    else if (!(k = tj_cache_find(&key))) {
        const tj_kernel *front = tj_tiered_get(&key, &plan);
        return front ? front->user_entry : NULL;
    }
    if (k && unused && keyed) /* the next call with these threads: a plain hit */
        tj_cache_alias(&asked, k);
    return k ? k->user_entry : NULL;
}

/* A dynamic signature's output shape has JIT_DIM_DYNAMIC where it varies. */
int tj_sig_output_shape(const tj_op_def *def, const jit_sig *sig, jit_shape *out)
{
    tj_plan plan;
    tj_dyn dyn;
    return tj_sig_template(def, sig, &plan, out, &dyn);
}

int jit_output_shape(const jit_sig *sig, jit_shape *out)
{
    if (!sig || !out)
        return tj_error_set("jit_output_shape: NULL argument");
    const tj_op_def *def = tj_sig_op(sig);
    return def ? tj_sig_output_shape(def, sig, out) : -1;
}

int jit_index_dims(const jit_sig *sig, int *depth, int64_t dims[JIT_MAX_RANK])
{
    tj_plan plan;
    tj_dyn dyn;
    if (!depth || !dims)
        return tj_error_set("jit_index_dims: NULL argument");
    const tj_op_def *def = tj_sig_op(sig);
    if (!def || tj_sig_template(def, sig, &plan, NULL, &dyn) != 0)
        return -1;
    if (plan.dyn && dyn.out_rank_varies)
        return tj_error_set("the tuple length depends on the call's dims: bind them first "
                            "(jit_sig_bind)");
    *depth = plan.depth;
    for (int e = 0; e < plan.depth; e++)
        dims[e] = plan.dyn && tj_dyn_varies(&dyn, &dyn.tmpl.dims[e]) ? JIT_DIM_DYNAMIC
                                                                     : plan.dims[e];
    return 0;
}

int tj_info_of(jit_kernel fn, jit_op op, jit_kernel_info *info)
{
    int tiered;
    tj_cache_pinned pin;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, op, &tiered, &pin, NULL);
    if (!k)
        return -1;
    if (!info) {
        tj_user_kernel_done(&pin);
        return tj_error_set("info is NULL: nowhere to write the kernel's info (NULL argument)");
    }
    info->engine = k->engine;
    info->dynamic = k->plan.dyn != NULL;
    /* a JIT kernel's own string would go with it when the limit releases it */
    info->why = tiered && k->engine == JIT_ENGINE_REFERENCE
                    ? "tiered: the JIT kernel is not ready yet (or could not be made)"
                : k->engine == JIT_ENGINE_JIT ? ""
                                              : k->why;
    info->compile_ms = k->compile_ms;
    info->code_bytes = k->code_bytes;
    info->out_bytes = k->plan.dyn ? -1 : k->plan.out_bytes;
    info->cache_hit = k->cache_hit;
    info->op = k->plan.op;
    tj_user_kernel_done(&pin);
    return 0;
}

int jit_info(jit_kernel kernel, jit_kernel_info *info)
{
    return tj_info_of(kernel, JIT_OP_NONE, info);
}

int jit_call(jit_kernel kernel, const void *data, const void *indices, const void *updates,
             void *out)
{
    int tiered;
    tj_cache_pinned pin;
    int refused;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)kernel, JIT_OP_NONE, &tiered, &pin, &refused);
    if (!k)
        return refused;
    const tj_abi *abi = tj_abi_of(&k->plan);
    int rc;
    if (tj_abi_is_bag(abi)) {
        tj_error_set("an embedding bag's kernel takes (table, indices, offsets, weights, out): "
                     "call it through jit_call_bag");
        rc = JIT_STATUS_BAD_SHAPE;
    } else if (!k->plan.dyn && tj_out_overlap(&k->plan, data, indices, updates, out) != 0) {
        rc = JIT_STATUS_BAD_POINTER;
    } else { /* the caller's pointer: a stub or tiered entry runs what it runs now */
        rc = abi->call((tj_entry_fn)kernel, data, indices, updates, NULL, out);
    }
    tj_user_kernel_done(&pin);
    return rc;
}

int jit_call_bag(jit_kernel kernel, const void *table, const void *indices, const void *offsets,
                 const void *weights, void *out)
{
    int tiered;
    tj_cache_pinned pin;
    int refused;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)kernel, JIT_OP_NONE, &tiered, &pin, &refused);
    if (!k)
        return refused;
    const tj_abi *abi = tj_abi_of(&k->plan);
    int rc;
    if (!k->plan.is_bag) {
        tj_error_set("not an embedding bag's kernel: call it through jit_call");
        rc = JIT_STATUS_BAD_SHAPE;
    } else if (tj_bag_pointers_fit(&k->plan.bag, offsets, weights) != 0 ||
               (!k->plan.dyn &&
                tj_bag_out_overlap(&k->plan.bag, table, indices, offsets, weights, out) != 0)) {
        rc = JIT_STATUS_BAD_POINTER;
    } else {
        rc = abi->call((tj_entry_fn)kernel, table, indices, offsets, weights, out);
    }
    tj_user_kernel_done(&pin);
    return rc;
}

int jit_call_bag_dynamic(jit_kernel kernel, const void *table, const void *indices,
                         const void *offsets, const void *weights, void *out,
                         const int64_t *dims)
{
    int tiered;
    tj_cache_pinned pin;
    int refused;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)kernel, JIT_OP_NONE, &tiered, &pin, &refused);
    if (!k)
        return refused;
    int rc;
    if (!k->plan.is_bag || !k->plan.dyn) {
        tj_error_set("not a dynamic embedding bag's kernel: call it through %s",
                     !k->plan.is_bag ? (k->plan.dyn ? "jit_call_dynamic" : "jit_call")
                                     : "jit_call_bag");
        rc = JIT_STATUS_BAD_SHAPE;
    } else if (tj_bag_pointers_fit(&k->plan.bag, offsets, weights) != 0) {
        rc = JIT_STATUS_BAD_POINTER;
    } else {
        rc = ((jit_embedding_bag_dynamic_fn)kernel)(table, indices, offsets, weights, out, dims);
    }
    tj_user_kernel_done(&pin);
    return rc;
}

int jit_call_dynamic(jit_kernel kernel, const void *data, const void *indices,
                     const void *updates, void *out, const int64_t *dims)
{
    int tiered;
    tj_cache_pinned pin;
    int refused;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)kernel, JIT_OP_NONE, &tiered, &pin, &refused);
    if (!k)
        return refused;
    int rc;
    if (!k->plan.dyn) {
        tj_error_set("not a dynamic kernel (its signature has no dynamic dim): call it "
                     "through %s", k->plan.is_bag ? "jit_call_bag" : "jit_call");
        rc = JIT_STATUS_BAD_SHAPE;
    } else if (k->plan.is_bag) {
        tj_error_set("an embedding bag's dynamic kernel takes (table, indices, offsets, "
                     "weights, out, dims): call it through jit_call_bag_dynamic");
        rc = JIT_STATUS_BAD_SHAPE;
    } else {
        rc = ((jit_dynamic_fn)kernel)(data, indices, updates, out, dims);
    }
    tj_user_kernel_done(&pin);
    return rc;
}

char *jit_dump(const jit_sig *sig, jit_dump_kind kind)
{
    char why[512];
    tj_plan plan;
    tj_dyn dyn;
    if ((unsigned)kind > JIT_DUMP_ASM) {
        tj_error_set("dump kind %d is not IR, optimized IR or assembly", (int)kind);
        return NULL;
    }
    const tj_op_def *def = tj_sig_op(sig);
    if (!def || tj_sig_template(def, sig, &plan, NULL, &dyn) != 0)
        return NULL;
    if (plan.dyn && !dyn.jit_ok) {
        tj_error_set("no JIT code for this signature: %s", dyn.why);
        return NULL;
    }
    char *text = tj_backend_dump(&plan, (tj_dump_kind)kind, why, sizeof why);
    if (!text)
        tj_error_set("%s", why);
    return text;
}

void jit_free(void *p)
{
    tj_free(p);
}

int jit_cache_open(const char *dir)
{
    char why[512];
    if (!dir || !*dir)
        dir = tj_config_get()->cache_dir;
    if (!dir || !*dir || strcmp(dir, "off") == 0)
        return tj_error_set("no cache folder given and TENSORJIT_CACHE_DIR is not set");
    if (tj_backend_cache_open(dir, why, sizeof why) != 0)
        return tj_error_set("%s", why);
    return 0;
}

int jit_cache_stats(int clear, int64_t *entries, int64_t *bytes, char *dir, size_t dir_len)
{
    int64_t e, b; /* what a caller asking for less still needs counted */
    char path[4096]; /* the backend's longest, where the caller wants none */
    if (dir && dir_len)
        dir[0] = '\0';
    int rc = tj_backend_cache_stats(clear, entries ? entries : &e, bytes ? bytes : &b,
                                    dir ? dir : path, dir ? dir_len : sizeof path);
    if (rc == -3)
        return tj_error_set("jit_cache_stats: dir_len %zu cannot hold the folder's path; nothing "
                            "cleared", dir_len);
    if (rc == -2)
        return tj_error_set("cache folder %s cannot be listed: %s (it was open: removed or "
                            "made unreadable since?)", dir ? dir : path, strerror(errno));
    if (rc != 0) {
        char why[600];
        tj_backend_cache_refusal(why, sizeof why);
        return why[0] ? tj_error_set("no cache folder is open (the last one asked for was "
                                     "refused: %s)", why)
                      : tj_error_set("no cache folder is open");
    }
    return 0;
}

void jit_cache_close(void)
{
    char why[8];
    tj_backend_cache_open(NULL, why, sizeof why);
}

static _Atomic uint64_t tj_epoch = 1;

uint64_t jit_epoch(void)
{
    return atomic_load_explicit(&tj_epoch, memory_order_acquire);
}

void jit_shutdown(void)
{
    tj_tiered_shutdown(); /* joins background compiles, which use the cache */
    tj_pool_shutdown();
    tj_cache_clear();
    tj_backend_shutdown();
    jit_cache_close();
    tj_scratch_release(); /* the calling thread's; other threads' go with them */
    tj_config_reset(); /* the next call reads the environment again */
    atomic_fetch_add_explicit(&tj_epoch, 1, memory_order_release);
}
