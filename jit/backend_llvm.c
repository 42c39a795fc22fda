/*
 * The JIT backend: plan -> LLVM module (ir/) -> optimized module -> object
 * in memory -> loaded into the LLJIT under its own resource tracker ->
 * function pointer. The object is emitted by our target machine (PIC,
 * small code model) rather than by LLJIT's IR layer, so the same bytes can
 * later be cached on disk and loaded again.
 */
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Object.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "engine.h"
#include "kernel_ir.h"

static atomic_ullong tj_kernel_serial;

/* The module for plan in ctx, optionally optimized, for the engine's target. */
static LLVMModuleRef tj_build_module(tj_engine *en, LLVMContextRef ctx, const tj_plan *p,
                                     const char *name, int optimize, char *why, size_t len)
{
    LLVMModuleRef mod = tj_ir_kernel(ctx, p, name, why, len);
    if (!mod)
        return NULL;
    LLVMSetTarget(mod, en->triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(en->tm);
    LLVMSetModuleDataLayout(mod, dl);
    LLVMDisposeTargetData(dl);
    if (!optimize)
        return mod;
    char passes[32];
    snprintf(passes, sizeof passes, "default<O%d>", en->opt_level);
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMErrorRef err = LLVMRunPasses(mod, passes, en->tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (err) {
        tj_engine_error(err, "optimizing the kernel", why, len);
        LLVMDisposeModule(mod);
        return NULL;
    }
    return mod;
}

static LLVMMemoryBufferRef tj_emit(tj_engine *en, LLVMModuleRef mod, LLVMCodeGenFileType type,
                                   char *why, size_t len)
{
    char *msg = NULL;
    LLVMMemoryBufferRef buf = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(en->tm, mod, type, &msg, &buf)) {
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
    LLVMOrcResourceTrackerRef rt = LLVMOrcJITDylibCreateResourceTracker(en->main_jd);
    LLVMErrorRef err = LLVMOrcLLJITAddObjectFileWithRT(en->jit, rt, obj);
    LLVMOrcExecutorAddress addr = 0;
    if (!err)
        err = LLVMOrcLLJITLookup(en->jit, &addr, name);
    if (err) {
        tj_engine_error(err, "loading the kernel", why, len);
        tj_remove_tracker(rt);
        return -1;
    }
    out->entry = (tj_entry_fn)(uintptr_t)addr;
    out->handle = rt;
    return 0;
}

static int tj_compile_locked(tj_engine *en, const tj_plan *p, tj_backend_kernel *out, char *why,
                             size_t len)
{
    char name[64];
    snprintf(name, sizeof name, "tj_%s_%llu",
             p->op == TJ_OP_GATHER_ND ? "gather_nd" : "scatter_update",
             (unsigned long long)atomic_fetch_add(&tj_kernel_serial, 1));
    if (tj_jit_fault("compile")) {
        snprintf(why, len, "compiling the kernel failed (injected by TENSORJIT_FAULT)");
        return -1;
    }
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = tj_build_module(en, ctx, p, name, 1, why, len);
    LLVMMemoryBufferRef obj = mod ? tj_emit(en, mod, LLVMObjectFile, why, len) : NULL;
    int rc = -1;
    if (obj) {
        out->code_bytes = tj_text_bytes(obj, ctx);
        rc = tj_load(en, obj, name, out, why, len);
    }
    if (mod)
        LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return rc;
}

int tj_backend_compile(const tj_plan *p, tj_backend_kernel *out, char *why, size_t len)
{
    tj_engine_lock();
    tj_engine *en = tj_engine_get(why, len);
    int rc = en ? tj_compile_locked(en, p, out, why, len) : -1;
    tj_engine_unlock();
    return rc;
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

static char *tj_dump_locked(tj_engine *en, const tj_plan *p, tj_dump_kind kind, char *why,
                            size_t len)
{
    const char *name = p->op == TJ_OP_GATHER_ND ? "tj_gather_nd" : "tj_scatter_update";
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = tj_build_module(en, ctx, p, name, kind != TJ_DUMP_IR, why, len);
    char *text = NULL;
    if (mod && kind == TJ_DUMP_ASM) {
        LLVMMemoryBufferRef buf = tj_emit(en, mod, LLVMAssemblyFile, why, len);
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
    tj_engine_lock();
    tj_engine *en = tj_engine_get(why, len);
    char *text = en ? tj_dump_locked(en, p, kind, why, len) : NULL;
    tj_engine_unlock();
    return text;
}

void tj_backend_release(void *handle)
{
    tj_engine_lock();
    tj_remove_tracker(handle);
    tj_engine_unlock();
}

void tj_backend_shutdown(void)
{
    tj_engine_lock();
    tj_engine_destroy();
    tj_engine_unlock();
}
