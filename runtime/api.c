/* The public entry points: signature -> plan -> cached kernel. */

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "cache.h"
#include "config.h"
#include "error.h"
#include "kernel.h"
#include "plan.h"
#include "pool.h"
#include "stub.h"
#include "tiered.h"
#include "user_kernel.h"

/* What differs between the ops at this level: how a signature becomes a
 * key and a plan. Everything after is shared. */
typedef struct tj_op_sig {
    const char *name;
    jit_engine engine;
    int (*key)(const void *sig, tj_key *key);
    int (*plan)(const void *sig, tj_plan *plan);
    const void *sig;
} tj_op_sig;

static int tj_gather_key(const void *s, tj_key *k)
{
    return tj_key_gather_nd(s, k);
}

static int tj_gather_plan(const void *s, tj_plan *p)
{
    return tj_gather_nd_plan(s, p, NULL);
}

static int tj_scatter_key(const void *s, tj_key *k)
{
    return tj_key_scatter_update(s, k);
}

static int tj_scatter_plan(const void *s, tj_plan *p)
{
    return tj_scatter_update_plan(s, p, NULL);
}

static tj_op_sig tj_gather_sig(const jit_gather_nd_sig *sig)
{
    return (tj_op_sig){"GatherND", sig ? sig->engine : JIT_ENGINE_AUTO, tj_gather_key,
                       tj_gather_plan, sig};
}

static tj_op_sig tj_scatter_sig(const jit_scatter_update_sig *sig)
{
    return (tj_op_sig){"ScatterUpdate", sig ? sig->engine : JIT_ENGINE_AUTO, tj_scatter_key,
                       tj_scatter_plan, sig};
}

/* The cached kernel, or a new one. A hit does no checking or planning: a
 * key in the cache proves its signature valid. */
static tj_entry_fn tj_compile(tj_op_sig o)
{
    tj_plan plan;
    tj_key key;
    if (!o.sig) {
        tj_error_set("the %s signature is NULL", o.name);
        return NULL;
    }
    int keyed = o.key(o.sig, &key) == 0;
    tj_kernel *k = keyed ? tj_cache_find(&key) : NULL;
    if (k)
        return k->user_entry;
    if (o.plan(o.sig, &plan) != 0)
        return NULL;
    if (!keyed) { /* unreachable: the checks refuse every rank a key refuses */
        tj_error_set("signature has a rank outside [0, %d]", JIT_MAX_RANK);
        return NULL;
    }
    k = tj_cache_get(&key, &plan, o.engine);
    return k ? k->user_entry : NULL;
}

/* A tiered kernel, unless the JIT is not wanted (the signature or
 * TENSORJIT_JIT asks for the reference kernel: nothing to switch to) or the
 * JIT kernel is in the cache already (its pointer, as jit_*_compile gives
 * it). */
static tj_entry_fn tj_compile_async(tj_op_sig o)
{
    tj_plan plan;
    tj_key key;
    if (!o.sig) {
        tj_error_set("the %s signature is NULL", o.name);
        return NULL;
    }
    if (o.plan(o.sig, &plan) != 0 || o.key(o.sig, &key) != 0)
        return NULL;
    char why[128];
    tj_kernel *k;
    if (!tj_jit_wanted(o.engine, why, sizeof why))
        k = tj_cache_get(&key, &plan, o.engine);
    else if (!(k = tj_cache_find(&key)))
        k = tj_tiered_get(&key, &plan);
    return k ? k->user_entry : NULL;
}

jit_gather_nd_fn jit_gather_nd_compile(const jit_gather_nd_sig *sig)
{
    return (jit_gather_nd_fn)tj_compile(tj_gather_sig(sig));
}

jit_scatter_update_fn jit_scatter_update_compile(const jit_scatter_update_sig *sig)
{
    return (jit_scatter_update_fn)tj_compile(tj_scatter_sig(sig));
}

jit_gather_nd_fn jit_gather_nd_compile_async(const jit_gather_nd_sig *sig)
{
    return (jit_gather_nd_fn)tj_compile_async(tj_gather_sig(sig));
}

jit_scatter_update_fn jit_scatter_update_compile_async(const jit_scatter_update_sig *sig)
{
    return (jit_scatter_update_fn)tj_compile_async(tj_scatter_sig(sig));
}

int jit_gather_nd_output_shape(const jit_gather_nd_sig *sig, jit_shape *out)
{
    tj_plan plan;
    if (!sig || !out)
        return tj_error_set("jit_gather_nd_output_shape: NULL argument");
    return tj_gather_nd_plan(sig, &plan, out);
}

int jit_scatter_update_output_shape(const jit_scatter_update_sig *sig, jit_shape *out)
{
    tj_plan plan;
    if (!sig || !out)
        return tj_error_set("jit_scatter_update_output_shape: NULL argument");
    return tj_scatter_update_plan(sig, &plan, out);
}

static int tj_info(tj_entry_fn fn, tj_op op, jit_kernel_info *info)
{
    int tiered;
    tj_cache_pinned pin;
    const tj_kernel *k = tj_user_kernel(fn, op, &tiered, &pin);
    if (!k)
        return -1;
    if (!info) {
        tj_user_kernel_done(&pin);
        return tj_error_set("not a kernel returned by this library (or freed by jit_shutdown)");
    }
    info->engine = k->engine;
    /* a JIT kernel's own string would go with it when the limit releases it */
    info->why = tiered && k->engine == JIT_ENGINE_REFERENCE
                    ? "tiered: the JIT kernel is not ready yet (or could not be made)"
                : k->engine == JIT_ENGINE_JIT ? ""
                                              : k->why;
    info->compile_ms = k->compile_ms;
    info->code_bytes = k->code_bytes;
    info->out_bytes = k->plan.out_bytes;
    info->cache_hit = k->cache_hit;
    tj_user_kernel_done(&pin);
    return 0;
}

int jit_gather_nd_info(jit_gather_nd_fn kernel, jit_kernel_info *info)
{
    return tj_info((tj_entry_fn)kernel, TJ_OP_GATHER_ND, info);
}

int jit_scatter_update_info(jit_scatter_update_fn kernel, jit_kernel_info *info)
{
    return tj_info((tj_entry_fn)kernel, TJ_OP_SCATTER_UPDATE, info);
}

static char *tj_dump(const tj_plan *plan, jit_dump_kind kind)
{
    char why[512];
    if ((unsigned)kind > JIT_DUMP_ASM) {
        tj_error_set("dump kind %d is not IR, optimized IR or assembly", (int)kind);
        return NULL;
    }
    char *text = tj_backend_dump(plan, (tj_dump_kind)kind, why, sizeof why);
    if (!text)
        tj_error_set("%s", why);
    return text;
}

static char *tj_dump_sig(tj_op_sig o, jit_dump_kind kind)
{
    tj_plan plan;
    if (!o.sig) {
        tj_error_set("the %s signature is NULL", o.name);
        return NULL;
    }
    return o.plan(o.sig, &plan) == 0 ? tj_dump(&plan, kind) : NULL;
}

char *jit_gather_nd_dump(const jit_gather_nd_sig *sig, jit_dump_kind kind)
{
    return tj_dump_sig(tj_gather_sig(sig), kind);
}

char *jit_scatter_update_dump(const jit_scatter_update_sig *sig, jit_dump_kind kind)
{
    return tj_dump_sig(tj_scatter_sig(sig), kind);
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
    if (tj_backend_cache_stats(clear, entries, bytes, dir, dir_len) != 0)
        return tj_error_set("no cache folder is open");
    return 0;
}

void jit_cache_close(void)
{
    char why[8];
    tj_backend_cache_open(NULL, why, sizeof why);
}

void jit_shutdown(void)
{
    tj_tiered_shutdown(); /* joins background compiles, which use the cache */
    tj_pool_shutdown();
    tj_cache_clear();
    tj_stub_shutdown(); /* after the cache: no kernel points at a stub now */
    tj_backend_shutdown();
    jit_cache_close();
    tj_config_reset(); /* the next call reads the environment again */
}
