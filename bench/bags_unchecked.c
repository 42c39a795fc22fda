/* The bench's one way to a bag kernel without its run-time checks, to
 * measure what they cost (issue #25: at most 5% on E1 and E3). It reaches
 * the library's internals (the bench links the static archive), so no
 * public call, CLI op command, Python binding or environment variable can
 * turn the checks off: libtensorjit.so does not even hold this code. The
 * kernel is cached under a key no signature has (its op word negated), so
 * the checked kernel of the same signature is never served from it. */
#include <stdio.h>

#include "bags.h"
#include "cache.h"
#include "error.h"
#include "op.h"
#include "plan.h"

#ifdef TENSORJIT_HAVE_BAGS
jit_kernel tj_bench_compile_unchecked(const jit_sig *sig, char *why, size_t len)
{
    const tj_op_def *def = tj_sig_op(sig);
    tj_plan plan;
    tj_key key;
    if (def && jit_sig_is_dynamic(sig)) { /* its code calls back with its own plan */
        snprintf(why, len, "unchecked kernels are for static signatures only");
        return NULL;
    }
    if (!def || tj_sig_plan(def, sig, &plan, NULL) != 0 || tj_key_sig(def, sig, &key) != 0) {
        snprintf(why, len, "%s", jit_last_error());
        return NULL;
    }
    if (!plan.is_bag) {
        snprintf(why, len, "unchecked kernels are for embedding bags only");
        return NULL;
    }
    plan.bag.unchecked = 1;
    key.words[0] = -1 - key.words[0];
    tj_kernel *k = tj_cache_get(&key, &plan, sig->engine);
    if (!k) {
        snprintf(why, len, "%s", jit_last_error());
        return NULL;
    }
    if (k->engine != JIT_ENGINE_JIT) { /* the reference kernel checks: not what is measured */
        snprintf(why, len, "no JIT kernel: %s", k->why);
        return NULL;
    }
    return k->user_entry;
}
#else
jit_kernel tj_bench_compile_unchecked(const jit_sig *sig, char *why, size_t len)
{
    (void)sig;
    snprintf(why, len, "this build of tensorjit has no embedding-bag ops");
    return NULL;
}
#endif
