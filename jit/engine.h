/* One LLVM ORC LLJIT per process, created lazily, with a target machine for
 * the host CPU. All LLVM work runs under the engine lock: compiles are
 * serialized (the cache already serializes misses). */
#ifndef TJ_ENGINE_H
#define TJ_ENGINE_H

#include <llvm-c/LLJIT.h>
#include <llvm-c/TargetMachine.h>
#include <stddef.h>

typedef struct tj_engine {
    LLVMOrcLLJITRef jit;
    LLVMOrcJITDylibRef main_jd;
    LLVMTargetMachineRef tm;
    char *triple;
    char *cpu;
    char *features;   /* sorted, so it can go into a cache key */
    const char *pipeline; /* the pass pipeline (TENSORJIT_OPT, see engine.c) */
    int llvm_loop_opts;   /* 1: LLVM unrolls, interleaves and SLP-vectorizes */
    double start_ms;  /* time it took to create */
    char session_error[512]; /* the last error ORC reported to the session */
} tj_engine;

void tj_engine_lock(void);
void tj_engine_unlock(void);

/* The engine, created on first use (lock held). NULL when LLVM cannot
 * start; why says what failed, and later calls return the same reason. */
tj_engine *tj_engine_get(char *why, size_t why_len);

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
