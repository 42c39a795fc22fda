#include "engine.h"

#include <llvm-c/Core.h>
#include <llvm/Config/llvm-config.h>
#include <llvm-c/Error.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "config.h"
#include "bag_ir.h"
#include "kernel_ir.h"
#include "bag_prime.h"
#include "bag_scan.h"
#include "jit_support.h"
#include "objcache.h"

static pthread_mutex_t tj_engine_mutex = PTHREAD_MUTEX_INITIALIZER;
static tj_engine *tj_the_engine;
static char tj_engine_failure[512]; /* why the engine could not start, once it failed */

void tj_engine_lock(void)
{
    pthread_mutex_lock(&tj_engine_mutex);
}

void tj_engine_unlock(void)
{
    pthread_mutex_unlock(&tj_engine_mutex);
}

int tj_jit_fault(const char *stage)
{
    return tj_config_fault(stage);
}

void tj_engine_error(LLVMErrorRef err, const char *what, char *why, size_t why_len)
{
    char *msg = LLVMGetErrorMessage(err);
    snprintf(why, why_len, "%s: %s", what, msg ? msg : "unknown LLVM error");
    LLVMDisposeErrorMessage(msg);
}

static double tj_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int tj_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* LLVM lists host features in hash order; a cache key needs one order. */
static char *tj_sorted_features(const char *raw)
{
    size_t len = strlen(raw), n = 1;
    for (size_t i = 0; i < len; i++)
        n += raw[i] == ',';
    char *copy = tj_malloc(len + 1), *out = tj_malloc(len + 1);
    char **items = tj_calloc(n, sizeof *items);
    if (!copy || !out || !items) {
        tj_free(copy);
        tj_free(out);
        tj_free(items);
        return NULL;
    }
    memcpy(copy, raw, len + 1);
    size_t k = 0;
    for (char *s = copy, *save = NULL, *t; (t = strtok_r(s, ",", &save)); s = NULL)
        items[k++] = t;
    qsort(items, k, sizeof *items, tj_cmp_str);
    out[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < k; i++) {
        size_t l = strlen(items[i]);
        if (i)
            out[used++] = ',';
        memcpy(out + used, items[i], l + 1);
        used += l;
    }
    tj_free(items);
    tj_free(copy);
    return out;
}

static char *tj_strdup(const char *s)
{
    size_t l = strlen(s) + 1;
    char *d = tj_malloc(l);
    if (d)
        memcpy(d, s, l);
    return d;
}

/*
 * The pass pipeline. "fast" (the default) is what this IR needs: our IR is
 * already in SSA with constant shapes, so CSE, the loop vectorizer (for the
 * validation pass and the copy loops), instcombine and CFG cleanup do the
 * work. LLVM's own unrolling, interleaving and SLP are off: tensorjit
 * decides unrolling itself (kernel_ir.h), and they added compile time for
 * no gain we could measure; "fast" compiles faster still than default<O2>
 * without them (docs/performance.md, 'Pass pipeline (compile time)').
 * TENSORJIT_OPT=O0|O1|O2|O3 selects LLVM's default<On> instead (O3 with
 * LLVM's loop options on); TENSORJIT_PASSES overrides the string.
 */
#if LLVM_VERSION_MAJOR >= 18
/* from 18 on, a textual instcombine verifies its fixpoint and calls
 * report_fatal_error (exit) when it is not reached: never in a library */
#define TJ_INSTCOMBINE "instcombine<no-verify-fixpoint>"
#else
#define TJ_INSTCOMBINE "instcombine"
#endif
static const char tj_fast_pipeline[] =
    "function(early-cse<memssa>,loop-vectorize," TJ_INSTCOMBINE ",simplifycfg)";
/* An embedding bag's under "fast": its accumulators are allocas, promoted,
 * and nothing else. Its loops are vectors already (ir/bag_ir.c), so the
 * loop vectorizer only added compile time, its own and that of the loops
 * it made; early-cse, instcombine and simplifycfg, 0.3-0.5 ms of a 4-5 ms
 * compile, left the code generator's output of the hot loops as it was
 * (docs/performance.md, 'Compile time of a bag kernel'). */
static const char tj_fast_bag_pipeline[] = "function(mem2reg)";

static void tj_choose_pipeline(tj_engine *en, LLVMCodeGenOptLevel *cg)
{
    static const char *const named[] = {"default<O0>", "default<O1>", "default<O2>",
                                        "default<O3>"};
    const char *v = tj_config_get()->codegen.opt;
    en->pipeline = tj_fast_pipeline;
    en->bag_pipeline = tj_fast_bag_pipeline;
    en->llvm_loop_opts = 0;
    *cg = LLVMCodeGenLevelDefault;
    if (v[0] == 'O' && v[1] >= '0' && v[1] <= '3' && v[2] == '\0') {
        int n = v[1] - '0';
        en->pipeline = named[n];
        en->bag_pipeline = NULL;
        en->llvm_loop_opts = n == 3;
        *cg = n == 0 ? LLVMCodeGenLevelNone : n == 3 ? LLVMCodeGenLevelAggressive : *cg;
    }
    /* TENSORJIT_CODEGEN=0..3: the code generator's own level */
    const char *c = tj_config_get()->codegen.codegen;
    if (c[0] >= '0' && c[0] <= '3' && c[1] == '\0') {
        static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                                     LLVMCodeGenLevelDefault,
                                                     LLVMCodeGenLevelAggressive};
        *cg = levels[c[0] - '0'];
    }
}

static LLVMTargetMachineRef tj_new_tm(const tj_engine *en)
{
    /* PIC + small code model: objects that can be cached and loaded again */
    return LLVMCreateTargetMachine(en->target, en->triple, en->cpu, en->features,
                                   en->codegen_level, LLVMRelocPIC, LLVMCodeModelSmall);
}

LLVMTargetMachineRef tj_engine_acquire_tm(tj_engine *en, char *why, size_t len)
{
    LLVMTargetMachineRef tm = NULL;
    pthread_mutex_lock(&en->pool_lock);
    if (en->pooled > 0)
        tm = en->pool[--en->pooled];
    pthread_mutex_unlock(&en->pool_lock);
    if (!tm)
        tm = tj_new_tm(en);
    if (!tm)
        snprintf(why, len, "LLVM could not create a target machine for %s (%s)", en->triple,
                 en->cpu);
    return tm;
}

void tj_engine_release_tm(tj_engine *en, LLVMTargetMachineRef tm)
{
    pthread_mutex_lock(&en->pool_lock);
    if (en->pooled < TJ_TM_POOL) {
        en->pool[en->pooled++] = tm;
        tm = NULL;
    }
    pthread_mutex_unlock(&en->pool_lock);
    if (tm)
        LLVMDisposeTargetMachine(tm);
}

void tj_engine_clear_session(tj_engine *en)
{
    pthread_mutex_lock(&en->session_lock);
    en->session_error[0] = '\0';
    pthread_mutex_unlock(&en->session_lock);
}

void tj_engine_session_error(tj_engine *en, char *buf, size_t len)
{
    pthread_mutex_lock(&en->session_lock);
    snprintf(buf, len, "%s", en->session_error);
    pthread_mutex_unlock(&en->session_lock);
}

static int tj_engine_target(tj_engine *en, char *why, size_t len)
{
    char *triple = LLVMGetDefaultTargetTriple(), *err = NULL;
    char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
    int rc = -1;
    if (LLVMGetTargetFromTriple(triple, &en->target, &err) != 0) {
        snprintf(why, len, "no LLVM target for %s: %s", triple, err ? err : "?");
        goto done;
    }
    en->triple = tj_strdup(triple);
    en->cpu = tj_strdup(cpu);
    en->features = tj_sorted_features(features);
    if (!en->triple || !en->cpu || !en->features) {
        snprintf(why, len, "out of memory starting the JIT");
        goto done;
    }
    tj_choose_pipeline(en, &en->codegen_level);
    /* target machines are made on the first compile: a process whose
     * kernels all come from the disk cache never needs one, and making
     * one costs more than loading a cached kernel (docs/performance.md,
     * 'Disk cache and tiered kernels') */
    rc = 0;
done:
    LLVMDisposeMessage(err);
    LLVMDisposeMessage(triple);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
    return rc;
}

/* The pair's name changed after LLVM 14 (LLVMJITCSymbolMapPair, then
 * LLVMOrcCSymbolMapPair); the pointer typedef kept its name in 14..22. */
typedef __typeof__(*(LLVMOrcCSymbolMapPairs)0) tj_symbol_pair;

const tj_objload_symbol tj_runtime_symbols[TJ_RUNTIME_SYMBOLS] = {
    {TJ_RT_BAD_INDEX, (void *)(uintptr_t)tj_rt_bad_index},
    {TJ_RT_BAD_POINTER, (void *)(uintptr_t)tj_rt_bad_pointer},
    {TJ_RT_PARALLEL, (void *)(uintptr_t)tj_rt_parallel},
    {TJ_RT_SCRATCH, (void *)(uintptr_t)tj_rt_scratch},
    {TJ_RT_DYN_ENTER, (void *)(uintptr_t)tj_rt_dyn_enter},
    {TJ_RT_DYN_BAD_INDEX, (void *)(uintptr_t)tj_rt_dyn_bad_index},
    {TJ_RT_DYN_PARALLEL, (void *)(uintptr_t)tj_rt_dyn_parallel},
    {TJ_RT_BAG_BAD, (void *)(uintptr_t)tj_rt_bag_bad},
    {TJ_RT_BAG_PARALLEL, (void *)(uintptr_t)tj_rt_bag_parallel},
    {TJ_RT_BAG_DYN_BEGIN, (void *)(uintptr_t)tj_rt_bag_dyn_begin},
    {TJ_RT_BAG_DYN_PARALLEL, (void *)(uintptr_t)tj_rt_bag_dyn_parallel},
    {TJ_RT_BAG_REDO, (void *)(uintptr_t)tj_rt_bag_redo},
    {TJ_RT_BAG_SCAN, (void *)(uintptr_t)tj_rt_bag_scan},
    {TJ_RT_BAG_PRIME, (void *)(uintptr_t)tj_rt_bag_prime},
    {"memcpy", (void *)(uintptr_t)memcpy},
    {"memmove", (void *)(uintptr_t)memmove},
    {"memset", (void *)(uintptr_t)memset},
};

/* The runtime functions, defined by name so that objects carry no absolute
 * address. */
static int tj_engine_define_runtime(tj_engine *en, char *why, size_t len)
{
    LLVMJITSymbolFlags flags = {LLVMJITSymbolGenericFlagsExported |
                                    LLVMJITSymbolGenericFlagsCallable,
                                0};
    tj_symbol_pair syms[TJ_RUNTIME_SYMBOLS];
    for (size_t i = 0; i < TJ_RUNTIME_SYMBOLS; i++)
        syms[i] = (tj_symbol_pair){
            LLVMOrcLLJITMangleAndIntern(en->jit, tj_runtime_symbols[i].name),
            {(LLVMOrcExecutorAddress)(uintptr_t)tj_runtime_symbols[i].address, flags}};
    LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(syms, TJ_RUNTIME_SYMBOLS);
    LLVMErrorRef err = LLVMOrcJITDylibDefine(en->main_jd, mu);
    if (err) {
        LLVMOrcDisposeMaterializationUnit(mu);
        tj_engine_error(err, "defining the runtime symbols", why, len);
        return -1;
    }
    /* anything else from the process (RuntimeDyld on 14-16 looks there) */
    LLVMOrcDefinitionGeneratorRef gen;
    err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
        &gen, LLVMOrcLLJITGetGlobalPrefix(en->jit), NULL, NULL);
    if (err) {
        tj_engine_error(err, "adding the process symbols", why, len);
        return -1;
    }
    LLVMOrcJITDylibAddGenerator(en->main_jd, gen);
    return 0;
}

/* ORC reports the cause of a failed materialization (say, a symbol not
 * found) to the session, and the caller only learns that it failed; the
 * default reporter prints the cause to stderr. Kept here instead, for the
 * kernel's reason (under the session lock: ORC calls this from the
 * compiling thread, without the engine lock); printed only under
 * TENSORJIT_DEBUG. */
static void tj_session_error(void *ctx, LLVMErrorRef err)
{
    tj_engine *en = ctx;
    char *msg = LLVMGetErrorMessage(err);
    pthread_mutex_lock(&en->session_lock);
    snprintf(en->session_error, sizeof en->session_error, "%s", msg ? msg : "?");
    pthread_mutex_unlock(&en->session_lock);
    if (tj_config_get()->debug)
        fprintf(stderr, "tensorjit: JIT session error: %s\n", msg);
    LLVMDisposeErrorMessage(msg);
}

/* TENSORJIT_LLVM_ARGS="-opt=value ..." passes options to LLVM, once per
 * process (LLVM's options are global and cannot be parsed twice), for
 * experiments; tensorjit sets none of its own. */
static void tj_llvm_args(void)
{
    static int done;
    const char *v = tj_config_get()->codegen.llvm_args;
    if (done || !*v)
        return;
    done = 1;
    static char buf[1024];
    static const char *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", v);
    argv[argc++] = "tensorjit";
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && argc < 32;
         t = strtok_r(NULL, " ", &save))
        argv[argc++] = t;
    LLVMParseCommandLineOptions(argc, argv, "tensorjit");
}

/* The engine's identity: target, CPU, features, pipeline (all a cache key
 * needs). The LLJIT comes later, on first need (tj_engine_lljit): a process
 * whose kernels all come from the disk cache never creates one. */
static tj_engine *tj_engine_create(char *why, size_t len)
{
    double t0 = tj_clock_ms();
    if (tj_jit_fault("start")) {
        snprintf(why, len, "LLVM start-up failed (injected by TENSORJIT_FAULT)");
        return NULL;
    }
    tj_llvm_args();
    if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
        snprintf(why, len, "LLVM has no native target for this machine");
        return NULL;
    }
    tj_engine *en = tj_calloc(1, sizeof *en);
    if (!en) {
        snprintf(why, len, "out of memory starting the JIT");
        return NULL;
    }
    pthread_mutex_init(&en->pool_lock, NULL);
    pthread_mutex_init(&en->session_lock, NULL);
    if (tj_engine_target(en, why, len) != 0) {
        tj_the_engine = en;
        tj_engine_destroy();
        return NULL;
    }
    /* TENSORJIT_CACHE_DIR opts a process into the on-disk cache; a folder
     * that is refused only means no caching (TENSORJIT_DEBUG says why) */
    const tj_config *cfg = tj_config_get();
    const char *cache = cfg->cache_dir;
    char cwhy[512];
    if (*cache && strcmp(cache, "off") != 0 && !tj_objcache_enabled() &&
        tj_objcache_open(cache, cwhy, sizeof cwhy) && cfg->debug)
        fprintf(stderr, "tensorjit: %s\n", cwhy);
    en->start_ms = tj_clock_ms() - t0;
    if (cfg->debug)
        fprintf(stderr, "tensorjit: engine started in %.2f ms\n", en->start_ms);
    return en;
}

/* Creates the LLJIT (engine lock held); 0, or -1 and why. */
static int tj_engine_start_lljit(tj_engine *en, char *why, size_t len)
{
    double t0 = tj_clock_ms();
    LLVMErrorRef err = LLVMOrcCreateLLJIT(&en->jit, LLVMOrcCreateLLJITBuilder());
    if (err) {
        tj_engine_error(err, "creating the LLJIT", why, len);
        en->jit = NULL;
        return -1;
    }
    LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(en->jit),
                                            tj_session_error, en);
    en->main_jd = LLVMOrcLLJITGetMainJITDylib(en->jit);
    if (tj_engine_define_runtime(en, why, len) != 0) {
        LLVMErrorRef derr = LLVMOrcDisposeLLJIT(en->jit);
        if (derr)
            LLVMConsumeError(derr);
        en->jit = NULL;
        return -1;
    }
    if (tj_config_get()->debug)
        fprintf(stderr, "tensorjit: LLJIT created in %.2f ms\n", tj_clock_ms() - t0);
    return 0;
}

LLVMOrcLLJITRef tj_engine_lljit(tj_engine *en, char *why, size_t len)
{
    tj_engine_lock();
    if (!en->jit_ready && !en->jit_failure[0]) {
        if (tj_engine_start_lljit(en, en->jit_failure, sizeof en->jit_failure) == 0)
            en->jit_ready = 1;
        else if (strstr(en->jit_failure, "out of memory")) /* may pass: try again later */
            snprintf(why, len, "%s", en->jit_failure), en->jit_failure[0] = '\0';
    }
    if (!en->jit_ready && en->jit_failure[0])
        snprintf(why, len, "%s", en->jit_failure);
    LLVMOrcLLJITRef jit = en->jit_ready ? en->jit : NULL;
    tj_engine_unlock();
    return jit;
}

tj_engine *tj_engine_get(char *why, size_t len)
{
    if (tj_the_engine)
        return tj_the_engine;
    if (tj_engine_failure[0]) {
        snprintf(why, len, "%s", tj_engine_failure);
        return NULL;
    }
    tj_the_engine = tj_engine_create(why, len);
    /* a failure is remembered (LLVM is not retried on every compile),
     * except running out of memory, which may pass */
    if (!tj_the_engine && !strstr(why, "out of memory"))
        snprintf(tj_engine_failure, sizeof tj_engine_failure, "%s", why);
    return tj_the_engine;
}

void tj_engine_destroy(void)
{
    tj_engine *en = tj_the_engine;
    tj_the_engine = NULL;
    tj_engine_failure[0] = '\0';
    if (!en)
        return;
    if (en->jit) {
        LLVMErrorRef err = LLVMOrcDisposeLLJIT(en->jit);
        if (err)
            LLVMConsumeError(err);
    }
    for (int i = 0; i < en->pooled; i++)
        LLVMDisposeTargetMachine(en->pool[i]);
    pthread_mutex_destroy(&en->pool_lock);
    pthread_mutex_destroy(&en->session_lock);
    tj_free(en->triple);
    tj_free(en->cpu);
    tj_free(en->features);
    tj_free(en);
}
