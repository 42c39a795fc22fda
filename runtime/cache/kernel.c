/* Making and freeing kernels: the choice between the JIT and the
 * reference kernel, and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "backend.h"
#include "config.h"
#include "dyn.h"
#include "error.h"
#include "kernel.h"

static double tj_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int tj_jit_wanted(jit_engine engine, char *why, size_t len)
{
    if (engine == JIT_ENGINE_REFERENCE) {
        snprintf(why, len, "the signature asks for the reference engine");
        return 0;
    }
    const tj_config *cfg = tj_config_get();
    if (cfg->jit_off) {
        snprintf(why, len, "TENSORJIT_JIT=%s", cfg->jit);
        return 0;
    }
    return 1;
}

int tj_threads_unused(const jit_sig *sig, const tj_plan *plan)
{
    char why[128];
    if (sig->threads == 0 || sig->threads == 1)
        return 0;
    return !tj_jit_wanted(sig->engine, why, sizeof why) || !tj_backend_splits(plan);
}

int tj_kernel_jit_planned(const tj_plan *plan, jit_engine engine, char *why, size_t len)
{
    if (plan->dyn && !plan->dyn->jit_ok) {
        snprintf(why, len, "%s", plan->dyn->why);
        return 0;
    }
    return tj_jit_wanted(engine, why, len);
}

static int tj_kernel_engine(tj_kernel *k, const void *key, size_t key_len, jit_engine engine)
{
    if (tj_kernel_jit_planned(&k->plan, engine, k->why, sizeof k->why)) {
        tj_backend_kernel bk = {0};
        if (tj_backend_compile(&k->plan, key, key_len, &bk, k->why, sizeof k->why) == 0) {
            k->engine = JIT_ENGINE_JIT;
            k->entry = bk.entry;
            k->code_bytes = bk.code_bytes;
            k->backend_handle = bk.handle;
            k->check = bk.check;
            k->range = bk.range;
            k->range_checks = bk.range_checks;
            k->cache_hit = bk.cache_hit;
            k->why[0] = '\0';
            return 0;
        }
        /* the pointer still works; the reason is there for whoever asks */
        tj_error_set("%s", k->why);
    }
    k->engine = JIT_ENGINE_REFERENCE;
    return tj_closure_bind(k);
}

tj_kernel *tj_kernel_build(const tj_plan *plan, const void *key, size_t key_len, jit_engine engine)
{
    double t0 = tj_now_ms();
    tj_kernel *k = tj_calloc(1, sizeof *k);
    if (!k) {
        tj_error_set("out of memory creating a kernel");
        return NULL;
    }
    k->plan = *plan;
    if (plan->dyn) {
        k->dyn = tj_malloc(sizeof *k->dyn);
        if (!k->dyn) {
            tj_error_set("out of memory creating a kernel");
            tj_free(k);
            return NULL;
        }
        *k->dyn = *plan->dyn;
        k->plan.dyn = k->dyn;
    }
    if (tj_kernel_engine(k, key, key_len, engine) != 0) {
        tj_kernel_destroy(k);
        return NULL;
    }
    k->user_entry = k->entry;
    k->compile_ms = tj_now_ms() - t0;
    return k;
}

void tj_kernel_destroy(tj_kernel *k)
{
    if (!k)
        return;
    if (k->dyn) /* its entry may come back with another signature: forgotten first */
        tj_dyn_forget();
    tj_closure_free(k);
    if (k->backend_handle)
        tj_backend_release(k->backend_handle);
    tj_parts_free(k);
    tj_free(k->dyn);
    tj_free(k);
}
