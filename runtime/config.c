/*
 * Reading the environment once. Every value is copied into the struct, so
 * that a later setenv by the program changes nothing until jit_shutdown();
 * strings too long for their field are cut (none of the knobs needs more).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static tj_config tj_cfg;
static atomic_int tj_cfg_loaded;
static pthread_mutex_t tj_cfg_lock = PTHREAD_MUTEX_INITIALIZER;

static void tj_read_text(const char *name, char *out, size_t len)
{
    const char *v = getenv(name);
    snprintf(out, len, "%s", v ? v : "");
}

static tj_knob tj_read_number(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? (tj_knob){1, atoll(v)} : (tj_knob){0, 0};
}

/* A count for the kernel limit: a whole number >= 0, else ignored (and
 * said on stderr under TENSORJIT_DEBUG). */
static tj_knob tj_read_count(const char *name, int debug)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return (tj_knob){0, 0};
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || *end || n < 0) {
        if (debug)
            fprintf(stderr, "tensorjit: %s=%s ignored: not a whole number >= 0\n", name, v);
        return (tj_knob){0, 0};
    }
    return (tj_knob){1, n};
}

/* Whether v is one of words (NULL-terminated), in any case if fold. */
static int tj_one_of(const char *v, const char *const *words, int fold)
{
    for (; *words; words++)
        if ((fold ? strcasecmp(v, *words) : strcmp(v, *words)) == 0)
            return 1;
    return 0;
}

/* A switch's value: off, 0, false or no (any case) turn it off; on, 1,
 * true, yes or nothing leave it on; anything else leaves it on too, said
 * on stderr under TENSORJIT_DEBUG (a typo must not pass for a choice). */
static int tj_read_off(const char *v, const char *name, int debug)
{
    static const char *const off[] = {"off", "0", "false", "no", NULL};
    static const char *const on[] = {"", "on", "1", "true", "yes", NULL};
    if (tj_one_of(v, off, 1))
        return 1;
    if (!tj_one_of(v, on, 1) && debug)
        fprintf(stderr, "tensorjit: %s=%s ignored: not off, 0, false, no, on, 1, true or yes\n",
                name, v);
    return 0;
}

static void tj_read_codegen(tj_codegen_config *c)
{
    c->unroll = tj_read_number("TENSORJIT_UNROLL");
    c->prefetch = tj_read_number("TENSORJIT_PREFETCH");
    const char *nt = getenv("TENSORJIT_NT");
    if (nt && *nt)
        c->nontemporal = (tj_knob){1, strcmp(nt, "0") != 0};
    const char *far = getenv("TENSORJIT_PREFETCH_FAR");
    if (far && *far)
        c->prefetch_far = (tj_knob){1, strcmp(far, "0") != 0};
    c->interleave = tj_read_number("TENSORJIT_INTERLEAVE");
    c->split_min = tj_read_number("TENSORJIT_SPLIT_MIN");
    c->inline_copy_min = tj_read_number("TENSORJIT_INLINE_COPY_MIN");
    tj_read_text("TENSORJIT_VECTOR_WIDTH", c->vector_width, sizeof c->vector_width);
    tj_read_text("TENSORJIT_OPT", c->opt, sizeof c->opt);
    tj_read_text("TENSORJIT_CODEGEN", c->codegen, sizeof c->codegen);
    tj_read_text("TENSORJIT_PASSES", c->passes, sizeof c->passes);
    tj_read_text("TENSORJIT_LLVM_ARGS", c->llvm_args, sizeof c->llvm_args);
    tj_read_text("TENSORJIT_FAULT", c->fault, sizeof c->fault);
}

/* Under TENSORJIT_DEBUG, a line for each code knob whose value the engine
 * would ignore (TENSORJIT_OPT=O9 once passed for a choice, unsaid). */
static void tj_say_ignored(const tj_codegen_config *c)
{
    static const char *const opts[] = {"", "O0", "O1", "O2", "O3", NULL};
    static const char *const levels[] = {"", "0", "1", "2", "3", NULL};
    if (!tj_one_of(c->opt, opts, 0))
        fprintf(stderr, "tensorjit: TENSORJIT_OPT=%s ignored: not one of O0 O1 O2 O3\n", c->opt);
    if (!tj_one_of(c->codegen, levels, 0))
        fprintf(stderr, "tensorjit: TENSORJIT_CODEGEN=%s ignored: not one of 0 1 2 3\n",
                c->codegen);
}

static void tj_read(tj_config *c)
{
    memset(c, 0, sizeof *c); /* padding too: the codegen part is hashed as bytes */
    tj_read_codegen(&c->codegen);
    const char *dbg = getenv("TENSORJIT_DEBUG");
    c->debug = dbg && *dbg && strcmp(dbg, "0") != 0;
    tj_read_text("TENSORJIT_JIT", c->jit, sizeof c->jit);
    c->jit_off = tj_read_off(c->jit, "TENSORJIT_JIT", c->debug);
    tj_read_text("TENSORJIT_CACHE_DIR", c->cache_dir, sizeof c->cache_dir);
    tj_knob cap = tj_read_number("TENSORJIT_CACHE_MAX_BYTES");
    c->cache_max_bytes = cap.value > 0 ? cap.value : 0;
    c->max_kernels = tj_read_count("TENSORJIT_MAX_KERNELS", c->debug);
    c->max_code_bytes = tj_read_count("TENSORJIT_MAX_CODE_BYTES", c->debug);
    const char *ol = getenv("TENSORJIT_OBJLOAD");
    c->objload_llvm = ol && strcmp(ol, "llvm") == 0;
    if (c->debug)
        tj_say_ignored(&c->codegen);
}

const tj_config *tj_config_get(void)
{
    if (!atomic_load_explicit(&tj_cfg_loaded, memory_order_acquire)) {
        pthread_mutex_lock(&tj_cfg_lock);
        if (!atomic_load_explicit(&tj_cfg_loaded, memory_order_relaxed)) {
            tj_read(&tj_cfg);
            atomic_store_explicit(&tj_cfg_loaded, 1, memory_order_release);
        }
        pthread_mutex_unlock(&tj_cfg_lock);
    }
    return &tj_cfg;
}

int tj_config_fault(const char *stage)
{
    return strcmp(tj_config_get()->codegen.fault, stage) == 0;
}

void tj_config_reset(void)
{
    pthread_mutex_lock(&tj_cfg_lock);
    atomic_store_explicit(&tj_cfg_loaded, 0, memory_order_release);
    pthread_mutex_unlock(&tj_cfg_lock);
}
