/*
 * Tiny helpers so that IR-building code reads close to the IR it makes.
 * Every pointer is built as i8* (LLVM 14 still has typed pointers; from 15
 * on it is the opaque `ptr` and the casts below fold away).
 */
#ifndef TJ_IR_EMIT_H
#define TJ_IR_EMIT_H

#include <llvm-c/Core.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tj_emit {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMValueRef fn;
    LLVMTypeRef i1, i8, i32, i64, ptr;
} tj_emit;

static inline LLVMValueRef tj_i64(const tj_emit *e, int64_t v)
{
    return LLVMConstInt(e->i64, (unsigned long long)v, 1);
}

static inline LLVMValueRef tj_i32(const tj_emit *e, int32_t v)
{
    return LLVMConstInt(e->i32, (unsigned long long)(int64_t)v, 1);
}

static inline LLVMValueRef tj_false(const tj_emit *e)
{
    return LLVMConstInt(e->i1, 0, 0);
}

static inline LLVMBasicBlockRef tj_block(const tj_emit *e, const char *name)
{
    return LLVMAppendBasicBlockInContext(e->ctx, e->fn, name);
}

/* a block named name.suffix (a loop's: "lookup.loop", "lookup.exit") */
LLVMBasicBlockRef tj_block_of(const tj_emit *e, const char *name, const char *suffix);

/* whether v is the integer constant 0 */
static inline int tj_is_zero(LLVMValueRef v)
{
    return LLVMIsAConstantInt(v) && LLVMConstIntGetZExtValue(v) == 0;
}

/* base + byte offset */
static inline LLVMValueRef tj_byte_gep(const tj_emit *e, LLVMValueRef base, LLVMValueRef off,
                                       const char *name)
{
    return LLVMBuildInBoundsGEP2(e->b, e->i8, base, &off, 1, name);
}

/* a load of type t at p, with no alignment assumed (x86 pays nothing) */
static inline LLVMValueRef tj_load(const tj_emit *e, LLVMTypeRef t, LLVMValueRef p,
                                   const char *name)
{
    LLVMValueRef typed = LLVMBuildPointerCast(e->b, p, LLVMPointerType(t, 0), "");
    LLVMValueRef v = LLVMBuildLoad2(e->b, t, typed, name);
    LLVMSetAlignment(v, 1);
    return v;
}

/* a + b; a or b itself where the other is 0 (mem2reg, the only pass a
 * bag kernel gets, leaves such adds to code generation) */
static inline LLVMValueRef tj_add(const tj_emit *e, LLVMValueRef a, LLVMValueRef b,
                                  const char *name)
{
    if (tj_is_zero(b))
        return a;
    if (tj_is_zero(a))
        return b;
    return LLVMBuildAdd(e->b, a, b, name);
}

static inline LLVMValueRef tj_mul(const tj_emit *e, LLVMValueRef a, int64_t k, const char *name)
{
    return k == 1 ? a : LLVMBuildMul(e->b, a, tj_i64(e, k), name);
}

/* A counted loop with a constant trip count (> 1), do-while shaped, with
 * an optional loop-carried value. */
typedef struct tj_loop {
    LLVMBasicBlockRef pre, body, exit;
    LLVMValueRef iv, carry;
    int64_t trip;
    LLVMValueRef end; /* run-time bound (tj_loop_begin_range), else NULL */
    LLVMValueRef carry_init; /* a run-time bound's loop: the carry if it never runs */
    /* an optional second carried value (tj_loop_carry2): its phi, its value
     * if the loop never runs, the value the body leaves (set before
     * tj_loop_end), and the value after the loop (set by tj_loop_end) */
    LLVMValueRef carry2, carry2_init, carry2_next, carry2_out;
    const char *name;
} tj_loop;

void tj_loop_begin(const tj_emit *e, tj_loop *l, const char *name, int64_t trip,
                   LLVMValueRef carry_init);
/* A loop over [begin, end) with run-time bounds; skipped when empty. */
void tj_loop_begin_range(const tj_emit *e, tj_loop *l, const char *name, LLVMValueRef begin,
                         LLVMValueRef end);
/* A loop over [0, n) with a run-time n, skipped when n <= 0, with an
 * optional carried value (what tj_loop_end returns is then valid after the
 * loop, run or not). */
void tj_loop_begin_n(const tj_emit *e, tj_loop *l, const char *name, LLVMValueRef n,
                     LLVMValueRef carry_init);
/* A second carried value for l, right after tj_loop_begin or
 * tj_loop_begin_n: returns its phi; the body sets l->carry2_next, and
 * l->carry2_out holds it after tj_loop_end (run or not). */
LLVMValueRef tj_loop_carry2(const tj_emit *e, tj_loop *l, LLVMValueRef init);
/* Closes the loop in the current block; returns carry_next (usable after). */
LLVMValueRef tj_loop_end(const tj_emit *e, tj_loop *l, LLVMValueRef carry_next);

/* The builder disposed of and e->mod verified: the module, or NULL (the
 * module disposed of) and why. */
LLVMModuleRef tj_emit_finish(tj_emit *e, char *why, size_t why_len);

/* The module's declaration of the runtime function `name` (type fty),
 * added on its first use. */
LLVMValueRef tj_runtime_fn(const tj_emit *e, const char *name, LLVMTypeRef fty);

/* x86's float ops give runtime/exec/reduce.c's NaN (a's made quiet, else
 * b's, else the default NaN, negative and quiet) once a NaN operand stands
 * for both; other hosts' default NaN differs (ARM's is positive), so there
 * the NaN is made by selects after the operation (tj_reference_nan).
 * -DTJ_NAN_SELECTS=1 builds the selects on x86 too, to test them. */
#ifndef TJ_NAN_SELECTS
#if defined(__x86_64__) || defined(__i386__)
#define TJ_NAN_SELECTS 0
#else
#define TJ_NAN_SELECTS 1
#endif
#endif

#if TJ_NAN_SELECTS
/* v, the float or double result (scalar or vector) of a op b, with the
 * reference's NaN where it is one. */
LLVMValueRef tj_reference_nan(const tj_emit *e, LLVMValueRef v, LLVMValueRef a, LLVMValueRef b);
#endif

/* Adds an enum attribute by name to a function (idx 0 = return, ~0 = the
 * function, k >= 1 = parameter k counted from 1); names missing in this
 * LLVM are skipped. */
void tj_add_attr(const tj_emit *e, LLVMValueRef fn, unsigned idx, const char *name);
void tj_add_string_attr(const tj_emit *e, LLVMValueRef fn, const char *key, const char *value);

#endif
