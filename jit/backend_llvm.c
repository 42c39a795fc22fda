/*
 * The JIT backend: plan -> LLVM module (ir/) -> optimized module -> object
 * in memory -> loaded into the LLJIT under its own resource tracker ->
 * function pointer. The object is emitted by our target machine (PIC,
 * small code model) rather than by LLJIT's IR layer, so the same bytes can
 * later be cached on disk and loaded again: a cached object is mapped by
 * objload.c, without the LLJIT, or loaded into the LLJIT when that loader
 * refuses it.
 */
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Object.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "backend.h"
#include "bag_ir.h"
#include "config.h"
#include "engine.h"
#include "kernel_ir.h"
#include "objcache.h"
#include "objload.h"

static atomic_ullong tj_kernel_serial;

static double tj_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* TENSORJIT_DEBUG (set and not "0") prints where each compile and load
 * spends its time. */
static int tj_debug(void)
{
    return tj_config_get()->debug;
}

/* The module for plan in ctx, optionally optimized, for the engine's target. */
static LLVMModuleRef tj_build_module(tj_engine *en, LLVMTargetMachineRef tm, LLVMContextRef ctx,
                                     const tj_plan *p, const tj_ir_strategy *st, const char *name,
                                     int optimize, double *ms, char *why, size_t len)
{
    double t0 = tj_ms();
    LLVMModuleRef mod = p->is_bag ? tj_ir_bag_kernel(ctx, p, st, name, why, len)
                                  : tj_ir_kernel(ctx, p, st, name, why, len);
    if (!mod)
        return NULL;
    if (tj_jit_fault("link")) {
        LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(ctx), NULL, 0, 0);
        LLVMValueRef missing = LLVMAddFunction(mod, "tj_rt_fault_missing", fty);
        LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
        LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(
                                         LLVMGetEntryBasicBlock(LLVMGetNamedFunction(mod, name))));
        LLVMBuildCall2(b, fty, missing, NULL, 0, "");
        LLVMDisposeBuilder(b);
    }
    LLVMSetTarget(mod, en->triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(mod, dl);
    LLVMDisposeTargetData(dl);
    ms[0] = tj_ms() - t0;
    if (!optimize)
        return mod;
    const char *custom = tj_config_get()->codegen.passes;
    char bag_passes[256]; /* a bag's accumulators are allocas: promoted first */
    if (p->is_bag && !*custom)
        snprintf(bag_passes, sizeof bag_passes, "%s%s%s",
                 en->bag_pipeline ? en->bag_pipeline : TJ_BAG_PASSES,
                 en->bag_pipeline ? "" : ",", en->bag_pipeline ? "" : en->pipeline);
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopUnrolling(opts, en->llvm_loop_opts);
    LLVMPassBuilderOptionsSetLoopInterleaving(opts, en->llvm_loop_opts);
    LLVMPassBuilderOptionsSetSLPVectorization(opts, en->llvm_loop_opts);
    LLVMErrorRef err = LLVMRunPasses(mod, *custom       ? custom
                                                 : p->is_bag ? bag_passes
                                                             : en->pipeline,
                                     tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    ms[1] = tj_ms() - t0 - ms[0];
    if (err) {
        tj_engine_error(err, "optimizing the kernel", why, len);
        LLVMDisposeModule(mod);
        return NULL;
    }
    return mod;
}

static LLVMMemoryBufferRef tj_emit(LLVMTargetMachineRef tm, LLVMModuleRef mod,
                                   LLVMCodeGenFileType type, char *why, size_t len)
{
    char *msg = NULL;
    LLVMMemoryBufferRef buf = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, type, &msg, &buf)) {
        snprintf(why, len, "LLVM code generation failed: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    return buf;
}

/* Bytes of machine code: the object's .text section(s). */
static size_t tj_text_bytes(LLVMMemoryBufferRef obj, LLVMContextRef ctx)
{
    char *msg = NULL;
    size_t n = 0;
    LLVMBinaryRef bin = LLVMCreateBinary(obj, ctx, &msg);
    LLVMDisposeMessage(msg);
    if (!bin)
        return 0;
    LLVMSectionIteratorRef it = LLVMObjectFileCopySectionIterator(bin);
    for (; !LLVMObjectFileIsSectionIteratorAtEnd(bin, it); LLVMMoveToNextSection(it)) {
        const char *name = LLVMGetSectionName(it);
        if (name && strncmp(name, ".text", 5) == 0)
            n += (size_t)LLVMGetSectionSize(it);
    }
    LLVMDisposeSectionIterator(it);
    LLVMDisposeBinary(bin);
    return n;
}

static void tj_remove_tracker(LLVMOrcResourceTrackerRef rt)
{
    LLVMErrorRef err = LLVMOrcResourceTrackerRemove(rt);
    if (err)
        LLVMConsumeError(err);
    LLVMOrcReleaseResourceTracker(rt);
}

/* Adds the object under a new resource tracker and finds `name` in it. */
static int tj_load(tj_engine *en, LLVMMemoryBufferRef obj, const char *name,
                   tj_backend_kernel *out, char *why, size_t len)
{
    if (tj_jit_fault("load")) {
        LLVMDisposeMemoryBuffer(obj);
        snprintf(why, len, "loading the kernel's object failed (injected by TENSORJIT_FAULT)");
        return -1;
    }
    if (!tj_engine_lljit(en, why, len)) {
        LLVMDisposeMemoryBuffer(obj);
        return -1;
    }
    tj_engine_clear_session(en);
    LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(en->main_jd);
    LLVMErrorRef err = LLVMOrcLLJITAddObjectFileWithRT(en->jit, rt, obj);
    LLVMOrcExecutorAddress addr = 0;
    if (!err)
        err = LLVMOrcLLJITLookup(en->jit, &addr, name);
    if (err) {
        tj_engine_error(err, "loading the kernel", why, len);
        char cause[512];
        size_t used = strlen(why);
        tj_engine_session_error(en, cause, sizeof cause);
        if (cause[0] && used + 4 < len)
            snprintf(why + used, len - used, " (%s)", cause);
        tj_remove_tracker(rt);
        return -1;
    }
    out->entry = (tj_entry_fn)(uintptr_t)addr;
    out->handle = rt;
    return 0;
}

/* A kernel's range function (tj_ir_strategy.ranges) and its check
 * function where it has one (checks_part), loaded with it. */
static int tj_load_parts(tj_engine *en, const tj_ir_strategy *st, const char *name,
                         tj_backend_kernel *out, char *why, size_t len)
{
    char sym[128];
    LLVMOrcExecutorAddress check = 0, range = 0;
    LLVMErrorRef err = NULL;
    if (st->checks_part) {
        snprintf(sym, sizeof sym, "%s%s", name, TJ_IR_CHECK_SUFFIX);
        err = LLVMOrcLLJITLookup(en->jit, &check, sym);
    }
    if (!err) {
        snprintf(sym, sizeof sym, "%s%s", name, TJ_IR_RANGE_SUFFIX);
        err = LLVMOrcLLJITLookup(en->jit, &range, sym);
    }
    if (err) {
        tj_engine_error(err, "loading the kernel's parts", why, len);
        tj_remove_tracker(out->handle);
        return -1;
    }
    out->check = (int (*)(const void *))(uintptr_t)check;
    out->range = (tj_range_fn)(uintptr_t)range;
    out->range_checks = st->parallel_checks;
    return 0;
}

/* Loads the object of a split or whole kernel and its parts. */
static int tj_load_kernel(tj_engine *en, const tj_ir_strategy *st, LLVMMemoryBufferRef obj,
                          const char *name, tj_backend_kernel *out, char *why, size_t len)
{
    int rc = tj_load(en, obj, name, out, why, len);
    if (rc == 0 && st->ranges)
        rc = tj_load_parts(en, st, name, out, why, len);
    return rc;
}

/* Kernel code loaded by objload.c has no resource tracker: its handle is
 * the loader's, tagged in the low bit (both are aligned pointers). */
static void *tj_own_handle(tj_objload *l)
{
    return (void *)((uintptr_t)l | 1);
}

static tj_objload *tj_own_of(void *handle)
{
    return (uintptr_t)handle & 1 ? (tj_objload *)((uintptr_t)handle & ~(uintptr_t)1) : NULL;
}

/* TENSORJIT_OBJLOAD=llvm: cached objects go through LLJIT (for comparing). */
static int tj_own_loader_wanted(void)
{
    return !tj_config_get()->objload_llvm;
}

/* The cached object through objload.c: no LLJIT needed. 0, or -1 when the
 * loader refuses it (why says so; the caller tries LLJIT). */
static int tj_load_own(const tj_ir_strategy *st, const void *obj, size_t n, const char *name,
                       tj_backend_kernel *out, char *why, size_t len)
{
    if (tj_jit_fault("load")) {
        snprintf(why, len, "loading the kernel's object failed (injected by TENSORJIT_FAULT)");
        return -1;
    }
    tj_objload *l = tj_objload_load(obj, n, tj_runtime_symbols, TJ_RUNTIME_SYMBOLS, why, len);
    if (!l)
        return -1;
    char sym[128];
    void *entry = tj_objload_find(l, name), *check = NULL, *range = NULL;
    if (st->checks_part) {
        snprintf(sym, sizeof sym, "%s%s", name, TJ_IR_CHECK_SUFFIX);
        check = tj_objload_find(l, sym);
    }
    if (st->ranges) {
        snprintf(sym, sizeof sym, "%s%s", name, TJ_IR_RANGE_SUFFIX);
        range = tj_objload_find(l, sym);
    }
    if (!entry || (st->ranges && !range) || (st->checks_part && !check)) {
        tj_objload_free(l);
        snprintf(why, len, "the cached object lacks the kernel's functions");
        return -1;
    }
    out->entry = (tj_entry_fn)(uintptr_t)entry;
    out->check = (int (*)(const void *))(uintptr_t)check;
    out->range = (tj_range_fn)(uintptr_t)range;
    out->range_checks = st->ranges && st->parallel_checks;
    out->code_bytes = tj_objload_text_bytes(l);
    out->handle = tj_own_handle(l);
    return 0;
}

/* The cached object through LLJIT. */
static int tj_load_lljit(tj_engine *en, const tj_ir_strategy *st, const void *obj, size_t n,
                         const char *name, tj_backend_kernel *out, char *why, size_t len)
{
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj, n, name);
    LLVMContextRef ctx = LLVMContextCreate();
    out->code_bytes = tj_text_bytes(mb, ctx);
    LLVMContextDispose(ctx);
    return tj_load_kernel(en, st, mb, name, out, why, len);
}

/* A kernel from the on-disk cache; 0 on a hit. */
static int tj_load_cached(tj_engine *en, const tj_ir_strategy *st, const tj_objkey *key,
                          tj_backend_kernel *out, char *why, size_t len)
{
    double t0 = tj_ms();
    const void *obj;
    size_t n;
    void *entry = tj_objcache_load(key, &obj, &n);
    if (!entry)
        return -1;
    int own = tj_own_loader_wanted() &&
              tj_load_own(st, obj, n, key->name, out, why, len) == 0;
    if (!own && tj_debug() && why[0])
        fprintf(stderr, "tensorjit: %s: %s; loading it through LLJIT\n", key->name, why);
    int rc = own ? 0 : tj_load_lljit(en, st, obj, n, key->name, out, why, len);
    free(entry);
    if (rc != 0)
        return -1;
    out->cache_hit = 1;
    if (tj_debug())
        fprintf(stderr, "tensorjit: %s: loaded from the disk cache in %.2f ms (%s)\n", key->name,
                tj_ms() - t0, own ? "tensorjit's loader" : "LLJIT");
    return 0;
}

/* "tj_gather_nd", and "tj_gather_nd_7" for serial 7: what dumps show. */
static void tj_kernel_name(const tj_plan *p, long long serial, char *buf, size_t len)
{
    jit_op_info info = {.command = "kernel"};
    jit_op_describe(p->op, &info);
    int n = snprintf(buf, len, "tj_%s", info.command);
    for (int i = 0; i < n && (size_t)i < len; i++)
        if (buf[i] == '-')
            buf[i] = '_';
    if (serial >= 0 && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "_%lld", serial);
}

/* The code shape of plan: a bag's (bag_ir.h) or the nest's (kernel_ir.h). */
static void tj_choose(const tj_plan *p, const tj_codegen_config *cfg, tj_ir_strategy *st)
{
    if (p->is_bag)
        tj_bag_choose(p, cfg, st);
    else
        tj_ir_choose(p, cfg, st);
}

static int tj_compile(tj_engine *en, LLVMTargetMachineRef tm, const tj_plan *p,
                      const tj_ir_strategy *st, const tj_objkey *key, tj_backend_kernel *out,
                      char *why, size_t len)
{
    char name[64];
    if (key)
        snprintf(name, sizeof name, "%s", key->name);
    else
        tj_kernel_name(p, (long long)atomic_fetch_add(&tj_kernel_serial, 1), name, sizeof name);
    if (tj_jit_fault("compile")) {
        snprintf(why, len, "compiling the kernel failed (injected by TENSORJIT_FAULT)");
        return -1;
    }
    double ms[4] = {0}, t0 = tj_ms();
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = tj_build_module(en, tm, ctx, p, st, name, 1, ms, why, len);
    double t1 = tj_ms();
    LLVMMemoryBufferRef obj = mod ? tj_emit(tm, mod, LLVMObjectFile, why, len) : NULL;
    double t2 = tj_ms();
    int rc = -1;
    if (obj) {
        out->code_bytes = tj_text_bytes(obj, ctx);
        /* the JIT takes the buffer: keep the bytes for the disk cache, which
         * stores them only once they have loaded and linked */
        LLVMMemoryBufferRef copy =
            key ? LLVMCreateMemoryBufferWithMemoryRangeCopy(LLVMGetBufferStart(obj),
                                                            LLVMGetBufferSize(obj), name)
                : NULL;
        rc = tj_load_kernel(en, st, obj, name, out, why, len);
        if (copy && rc == 0)
            tj_objcache_store(key, LLVMGetBufferStart(copy), LLVMGetBufferSize(copy));
        if (copy)
            LLVMDisposeMemoryBuffer(copy);
    }
    ms[2] = t2 - t1;
    ms[3] = tj_ms() - t2;
    if (mod)
        LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    if (tj_debug())
        fprintf(stderr, "tensorjit: %s: ir %.2f ms, passes %.2f ms, codegen %.2f ms, load "
                        "%.2f ms, total %.2f ms, %zu bytes\n",
                name, ms[0], ms[1], ms[2], ms[3], tj_ms() - t0, out->code_bytes);
    return rc;
}

/* The engine, started on first use; NULL (and why) if LLVM cannot start. */
static tj_engine *tj_started_engine(char *why, size_t len)
{
    tj_engine_lock();
    tj_engine *en = tj_engine_get(why, len);
    tj_engine_unlock();
    return en;
}

int tj_backend_parts(const tj_plan *p, tj_backend_kernel *out, char *why, size_t len)
{
    tj_engine *en = tj_started_engine(why, len);
    if (!en)
        return -1;
    tj_ir_strategy st;
    tj_ir_choose(p, &tj_config_get()->codegen, &st);
    /* a bag kernel's parts come with its split kernel, never from here
     * (runtime/exec/parts.c): the parts of tj_ir_choose's kernels */
    st.ranges = st.checks_part = 1;
    /* with a check mode where its indices are many: jit_validate_part */
    st.parallel_checks = tj_ir_checks_in_parts(p, &st);
    LLVMTargetMachineRef tm = tj_engine_acquire_tm(en, why, len);
    if (!tm)
        return -1;
    int rc = tj_compile(en, tm, p, &st, NULL, out, why, len);
    tj_engine_release_tm(en, tm);
    return rc;
}

int tj_backend_compile(const tj_plan *p, const void *sig_key, size_t key_len,
                       tj_backend_kernel *out, char *why, size_t len)
{
    tj_engine *en = tj_started_engine(why, len);
    if (!en)
        return -1;
    const tj_codegen_config *cfg = &tj_config_get()->codegen;
    tj_ir_strategy st;
    tj_choose(p, cfg, &st);
    tj_objkey key, *cached = NULL;
    if (tj_objcache_enabled()) {
        tj_objcache_key(en, cfg, p, sig_key, key_len, &key);
        cached = &key;
        if (tj_load_cached(en, &st, cached, out, why, len) == 0)
            return 0;
        why[0] = '\0';
    }
    LLVMTargetMachineRef tm = tj_engine_acquire_tm(en, why, len);
    if (!tm)
        return -1;
    int rc = tj_compile(en, tm, p, &st, cached, out, why, len);
    tj_engine_release_tm(en, tm);
    return rc;
}

/* Opening the cache says that kernels will be loaded soon: start the
 * engine (LLVM's native target, the host's CPU and features; not the
 * LLJIT, which a kernel loaded by objload.c never needs) on a thread of its
 * own now, so that a first call that comes later pays only the load.
 * Joined in tj_backend_shutdown, or at exit. */
static pthread_mutex_t tj_warm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t tj_warm_thread;
static int tj_warm_running;

static void *tj_warm_main(void *arg)
{
    char why[512];
    (void)arg;
    tj_started_engine(why, sizeof why);
    return NULL;
}

static void tj_warm_join(void)
{
    pthread_mutex_lock(&tj_warm_lock);
    if (tj_warm_running)
        pthread_join(tj_warm_thread, NULL);
    tj_warm_running = 0;
    pthread_mutex_unlock(&tj_warm_lock);
}

int tj_backend_cache_open(const char *dir, char *why, size_t len)
{
    static int at_exit;
    int rc = tj_objcache_open(dir, why, len);
    if (rc == 0 && dir && *dir) {
        /* OpenSSL registers its atexit cleanup when it initializes: before
         * ours, so that at exit ours (joining the warm-up thread) runs
         * first and OpenSSL's after it */
        tj_objcache_init_crypto();
        pthread_mutex_lock(&tj_warm_lock);
        /* a process that exits while LLVM starts on this thread would run
         * LLVM's static destructors under it: exit joins it first (atexit
         * handlers registered later run earlier than libLLVM's) */
        if (!at_exit)
            at_exit = atexit(tj_warm_join) == 0;
        if (at_exit && !tj_warm_running &&
            pthread_create(&tj_warm_thread, NULL, tj_warm_main, NULL) == 0)
            tj_warm_running = 1;
        pthread_mutex_unlock(&tj_warm_lock);
        /* OpenSSL's first digest loads its provider, which costs more than
         * the rest of a cached first call (docs/performance.md, 'Disk cache
         * and tiered kernels'): here, while the engine starts on the other
         * thread */
        tj_objcache_warm();
    }
    return rc;
}

int tj_backend_cache_stats(int remove, int64_t *entries, int64_t *bytes, char *dir, size_t dlen)
{
    return tj_objcache_stats(remove, entries, bytes, dir, dlen);
}

void tj_backend_cache_refusal(char *why, size_t len)
{
    tj_objcache_refusal(why, len);
}

static char *tj_copy_text(const char *s, size_t n)
{
    char *t = tj_malloc(n + 1);
    if (t) {
        memcpy(t, s, n);
        t[n] = '\0';
    }
    return t;
}

static char *tj_dump_with(tj_engine *en, LLVMTargetMachineRef tm, const tj_plan *p,
                          tj_dump_kind kind, char *why, size_t len)
{
    char name[64];
    tj_kernel_name(p, -1, name, sizeof name);
    tj_ir_strategy st;
    tj_choose(p, &tj_config_get()->codegen, &st);
    LLVMContextRef ctx = LLVMContextCreate();
    double ms[2];
    LLVMModuleRef mod =
        tj_build_module(en, tm, ctx, p, &st, name, kind != TJ_DUMP_IR, ms, why, len);
    char *text = NULL;
    if (mod && kind == TJ_DUMP_ASM) {
        LLVMMemoryBufferRef buf = tj_emit(tm, mod, LLVMAssemblyFile, why, len);
        if (buf) {
            text = tj_copy_text(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
            LLVMDisposeMemoryBuffer(buf);
        }
    } else if (mod) {
        char *ir = LLVMPrintModuleToString(mod);
        text = tj_copy_text(ir, strlen(ir));
        LLVMDisposeMessage(ir);
    }
    if (mod && !text && !why[0])
        snprintf(why, len, "out of memory printing the kernel");
    if (mod)
        LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return text;
}

char *tj_backend_dump(const tj_plan *p, tj_dump_kind kind, char *why, size_t len)
{
    why[0] = '\0';
    tj_engine *en = tj_started_engine(why, len);
    LLVMTargetMachineRef tm = en ? tj_engine_acquire_tm(en, why, len) : NULL;
    if (!tm)
        return NULL;
    char *text = tj_dump_with(en, tm, p, kind, why, len);
    tj_engine_release_tm(en, tm);
    return text;
}

int tj_backend_splits(const tj_plan *p)
{
    tj_ir_strategy st;
    tj_choose(p, &tj_config_get()->codegen, &st);
    return st.split;
}

void tj_backend_strategy(const tj_plan *p, char *buf, size_t len)
{
    tj_ir_strategy st;
    tj_choose(p, &tj_config_get()->codegen, &st);
    if (p->is_bag)
        tj_bag_strategy_describe(p, &st, buf, len);
    else if (p->dyn && st.split)
        snprintf(buf, len, "dynamic: loops whose trip counts vary run the call's counts, the "
                 "rest as a static kernel's (constant trips, strides and block copies); a "
                 "call's units split across up to %d threads as its measured cost says%s",
                 p->threads, st.parallel_checks ? ", the indices checked in parts too in calls "
                 "with at least 1 MB of them" : "");
    else if (p->dyn)
        snprintf(buf, len, "dynamic: loops whose trip counts vary run the call's counts, the "
                 "rest as a static kernel's (constant trips, strides and block copies); on the "
                 "caller's thread");
    else if (st.unrolled)
        snprintf(buf, len, "fully unrolled: %" PRId64 " index entries <= unroll budget %" PRId64
                 " (every offset a constant)", st.entries, st.budget);
    else
        snprintf(buf, len, "counted loops with constant trip counts: %" PRId64 " index entries "
                 "> unroll budget %" PRId64 " (unrolled compile time grows ~0.6 ms per entry)",
                 st.entries, st.budget);
    size_t n = strlen(buf);
    if (!p->is_bag && !p->dyn && st.split && n < len)
        snprintf(buf + n, len - n, "; units split across up to %d threads as the measured cost "
                 "says%s", p->threads, st.parallel_checks ? ", the indices checked in parts "
                 "too (at least 1 MB of them)" : "");
}

void tj_backend_release(void *handle)
{
    tj_objload *own = tj_own_of(handle);
    if (own)
        tj_objload_free(own);
    else
        tj_remove_tracker(handle); /* ORC is thread-safe */
}

void tj_backend_shutdown(void)
{
    tj_warm_join();
    tj_engine_lock();
    tj_engine_destroy();
    tj_engine_unlock();
}
