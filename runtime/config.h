/* The library's configuration: every TENSORJIT_* environment variable,
 * read into one struct on first use and again after jit_shutdown(), so
 * that each layer asks this struct instead of the environment, and the
 * disk cache's key covers every knob that changes generated code by
 * hashing one sub-struct whole. docs/library.md, "Environment variables", is the
 * table of them all. */
#ifndef TJ_CONFIG_H
#define TJ_CONFIG_H

#include <stdint.h>

/* A numeric knob: set = 0 when the variable is unset or empty (the
 * default applies), else its value as atoll reads it. */
typedef struct tj_knob {
    int set;
    int64_t value;
} tj_knob;

/* Everything in the environment that changes a kernel's bytes. The disk
 * cache hashes this struct's bytes whole (it is zeroed before it is
 * filled, padding included): a knob added here is in the key at once. */
typedef struct tj_codegen_config {
    tj_knob unroll;          /* TENSORJIT_UNROLL: unroll budget in index entries */
    tj_knob prefetch;        /* TENSORJIT_PREFETCH: prefetch distance in tuples */
    tj_knob nontemporal;     /* TENSORJIT_NT: non-temporal stores, 0 or not */
    tj_knob prefetch_far;    /* TENSORJIT_PREFETCH_FAR: bags prefetch as on an Intel core, 0 or not */
    tj_knob interleave;      /* TENSORJIT_INTERLEAVE: short bags N at a time (default 1) */
    tj_knob split_min;       /* TENSORJIT_SPLIT_MIN: bytes from which a kernel splits */
    tj_knob inline_copy_min; /* TENSORJIT_INLINE_COPY_MIN: bytes from which rep movsb */
    char vector_width[16];   /* TENSORJIT_VECTOR_WIDTH: LLVM's prefer-vector-width */
    char opt[8];             /* TENSORJIT_OPT: O0..O3, LLVM's pipeline instead of ours */
    char codegen[8];         /* TENSORJIT_CODEGEN: 0..3, the code generator's level */
    char passes[512];        /* TENSORJIT_PASSES: a pass pipeline string */
    char llvm_args[512];     /* TENSORJIT_LLVM_ARGS: options given to LLVM once */
    char fault[16];          /* TENSORJIT_FAULT: the test hook ("link" changes code) */
} tj_codegen_config;

typedef struct tj_config {
    tj_codegen_config codegen;
    char jit[16];             /* TENSORJIT_JIT: "off" or "0" turns the JIT off */
    int jit_off;
    int debug;                /* TENSORJIT_DEBUG: set, non-empty and not "0" */
    char cache_dir[4096];     /* TENSORJIT_CACHE_DIR ("off": none) */
    int64_t cache_max_bytes;  /* TENSORJIT_CACHE_MAX_BYTES (0: the default cap) */
    tj_knob max_kernels;      /* TENSORJIT_MAX_KERNELS (set only when a whole number >= 0) */
    tj_knob max_code_bytes;   /* TENSORJIT_MAX_CODE_BYTES (likewise) */
    int objload_llvm;         /* TENSORJIT_OBJLOAD=llvm: cached objects go through LLJIT */
} tj_config;

/* The configuration, read from the environment on the first call after
 * start-up or after tj_config_reset(). The struct does not change until
 * the next reset, which only jit_shutdown() makes. */
const tj_config *tj_config_get(void);

/* 1 when TENSORJIT_FAULT names this stage (a test hook; see docs/library.md). */
int tj_config_fault(const char *stage);

/* The next tj_config_get() reads the environment again (jit_shutdown). */
void tj_config_reset(void);

#endif
