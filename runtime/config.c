/*
 * Reading the environment once. Every value is copied into the struct, so
 * that a later setenv by the program changes nothing until jit_shutdown();
 * strings too long for their field are cut (none of the knobs needs more).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
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

/* A switch's value: off, 0, false or no (any case) turn it off; on, 1,
 * true, yes or nothing leave it on; anything else leaves it on too, said
 * on stderr under TENSORJIT_DEBUG (a typo must not pass for a choice). */
static int tj_read_off(const char *v, const char *name, int debug)
{
    static const char *off[] = {"off", "0", "false", "no"}, *on[] = {"", "on", "1", "true", "yes"};
    for (size_t i = 0; i < sizeof off / sizeof *off; i++)
        if (strcasecmp(v, off[i]) == 0)
            return 1;
    for (size_t i = 0; i < sizeof on / sizeof *on; i++)
        if (strcasecmp(v, on[i]) == 0)
            return 0;
    if (debug)
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
    static const struct {
        const char *name, *takes;
        size_t at;
    } knobs[] = {
        {"TENSORJIT_OPT", "O0 O1 O2 O3", offsetof(tj_codegen_config, opt)},
        {"TENSORJIT_CODEGEN", "0 1 2 3", offsetof(tj_codegen_config, codegen)},
    };
    for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++) {
        const char *v = (const char *)c + knobs[i].at;
        char word[16];
        int ok = !*v;
        for (const char *t = knobs[i].takes; !ok && *t;) {
            size_t n = strcspn(t, " ");
            snprintf(word, sizeof word, "%.*s", (int)n, t);
            ok = strcmp(v, word) == 0;
            t += n + (t[n] == ' ');
        }
        if (!ok)
            fprintf(stderr, "tensorjit: %s=%s ignored: not one of %s\n", knobs[i].name, v,
                    knobs[i].takes);
    }
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
