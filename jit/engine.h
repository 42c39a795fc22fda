/* One engine per process: the host's target, CPU, features and pass
 * pipeline, made on first use; its LLVM ORC LLJIT only when a kernel is
 * compiled or a cached object must go through it (tj_engine_lljit), since
 * objload.c maps cached objects without one. Compiles run in parallel:
 * each borrows a target machine for the host CPU from a pool (a
 * TargetMachine is not safe to share during codegen), uses its own
 * LLVMContext, and adds its object to the LLJIT, which is thread-safe. */
#ifndef TJ_ENGINE_H
#define TJ_ENGINE_H

#include <llvm-c/LLJIT.h>
#include <llvm-c/TargetMachine.h>
#include <stddef.h>

#include <pthread.h>

#include "objload.h"

#define TJ_TM_POOL 16

typedef struct tj_engine {
    LLVMOrcLLJITRef jit;
    LLVMOrcJITDylibRef main_jd;
    LLVMTargetRef target;
    LLVMCodeGenOptLevel codegen_level;
    pthread_mutex_t pool_lock;
    LLVMTargetMachineRef pool[TJ_TM_POOL]; /* idle target machines */
    int pooled;
    char *triple;
    char *cpu;
    char *features;   /* sorted, so it can go into a cache key */
    const char *pipeline; /* the pass pipeline (TENSORJIT_OPT, see engine.c) */
    const char *bag_pipeline; /* an embedding bag's; NULL: TJ_BAG_PASSES then pipeline */
    int llvm_loop_opts;   /* 1: LLVM unrolls, interleaves and SLP-vectorizes */
    double start_ms;  /* time it took to create */
    pthread_mutex_t session_lock;
    char session_error[512]; /* the last error ORC reported to the session */
    int jit_ready;           /* jit and main_jd are made, runtime symbols defined */
    char jit_failure[512];   /* why the LLJIT could not be made, once it failed */
} tj_engine;

/* What generated code may call: the runtime's functions (jit_support.h:
 * cold paths and the thread pool) and the C library's block copies.
 * Defined in the LLJIT by name, and given to the loader of cached
 * objects. */
#define TJ_RUNTIME_SYMBOLS 17
extern const tj_objload_symbol tj_runtime_symbols[TJ_RUNTIME_SYMBOLS];

/* A target machine for one compile, and giving it back. NULL (and why) if
 * LLVM cannot make one. */
LLVMTargetMachineRef tj_engine_acquire_tm(tj_engine *en, char *why, size_t why_len);
void tj_engine_release_tm(tj_engine *en, LLVMTargetMachineRef tm);

/* The last error ORC reported to the session since tj_engine_clear_session
 * (concurrent failures may overwrite each other: best effort). */
void tj_engine_clear_session(tj_engine *en);
void tj_engine_session_error(tj_engine *en, char *buf, size_t len);

void tj_engine_lock(void);
void tj_engine_unlock(void);

/* The engine, created on first use (lock held). NULL when LLVM cannot
 * start; why says what failed, and later calls return the same reason. */
tj_engine *tj_engine_get(char *why, size_t why_len);

/* The engine's LLJIT, created on first use (takes the engine lock); NULL
 * and why when LLVM cannot make it (remembered, like a failed start). */
LLVMOrcLLJITRef tj_engine_lljit(tj_engine *en, char *why, size_t why_len);

/* Frees the engine (lock held); the next tj_engine_get starts a new one. */
void tj_engine_destroy(void);

/* Test hook: 1 when TENSORJIT_FAULT names this stage ("start", "compile",
 * "load", or "link": the kernel calls a function nobody defines, so that
 * LLVM itself fails), so that every failure path of the JIT can be
 * exercised. */
int tj_jit_fault(const char *stage);

/* Copies LLVM's message of err into why and consumes err. */
void tj_engine_error(LLVMErrorRef err, const char *what, char *why, size_t why_len);

#endif
