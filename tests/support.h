/* Test helpers: the conformance vectors (JSON), value conversion to any
 * element type, and small utilities. */
#ifndef TJ_SUPPORT_H
#define TJ_SUPPORT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorjit.h"

/* The parsed array of a file in the cases folder; the test fails if absent. */
cJSON *support_load_cases(const char *file);

/* shape from a JSON array (null: rank 0). */
jit_shape support_shape(const cJSON *arr);
jit_dtype support_dtype(const cJSON *case_obj, const char *field, jit_dtype dflt);

/* Converts JSON numbers to elements of type t in a new buffer. Integers
 * must fit exactly; floats are rounded to t (as numpy.array(v, t) does)
 * unless exact is set. NULL when a value does not fit. */
void *support_values(const cJSON *arr, jit_dtype t, int64_t *count, int exact);

/* The generic signature of a case of any op: the op its `op` field names
 * (JIT_OP_NONE when this library lacks it), `version` as the opset. An
 * axis recorded as null (a tensor whose value is unknown) reads as 0: such
 * entries are about the axis tensor's type or shape, not its value. */
jit_sig support_sig(const cJSON *c);

/* The case's `reduction`, "none" when it has none. */
const char *support_reduction(const cJSON *c);

/* Deterministic PRNG for the randomized tests. */
uint64_t support_rand(uint64_t *state);
int64_t support_rand_range(uint64_t *state, int64_t lo, int64_t hi); /* [lo, hi] */

/* indices[i] = v in index type t (cut to its width). */
void support_store_index(jit_dtype t, void *indices, int64_t i, int64_t v);

/* Fails the test unless a kernel compiled with engine AUTO runs JIT code
 * (in a build with the JIT, and TENSORJIT_JIT not off). */
void support_expect_jit(const jit_kernel_info *info, const char *what);

/* 0 when this host's JIT refuses f16 bag tables for want of F16C (the
 * documented fallback: the reference kernel serves them; so on aarch64,
 * where LLVM 19's instruction selection crashes on the f16 bag kernel),
 * else 1. Decided through the public API (an f16 packed bag's jit_info),
 * once; on x86 a CPU with F16C whose f16 bag is refused fails the test,
 * so that there the JIT is still demanded. Tests that demand JIT code
 * for f16 bags skip them when this is 0. */
int support_jit_takes_f16_bags(void);

/* Sets (value non-NULL) or unsets a TENSORJIT_* variable and calls
 * jit_shutdown(), since the library reads its environment on first use
 * and again only after a shutdown: every kernel held is gone then. */
void support_setenv(const char *name, const char *value);
/* A variable as it was before a test set it: support_env_push saves it
 * and sets value (NULL: unsets) through support_setenv, support_env_pop
 * puts the saved one back the same way. */
typedef struct support_env {
    const char *name;
    int had;
    char value[64];
} support_env;
void support_env_push(support_env *saved, const char *name, const char *value);
void support_env_pop(const support_env *saved);
/* The dims of a dynamic bag kernel's call for the concrete signature s, laid out as
 * jit_embedding_bag_dynamic_fn takes them: table, indices, offsets / segment ids, S.
 * Returns how many. */
int support_bag_call_dims(const jit_sig *s, int64_t *dims);
/* Bag signature s with its counts dynamic (E, the indices', the offsets'
 * or ids', S), and with row_dynamic the row's dims too. */
jit_sig support_bag_dynamic(const jit_sig *s, int row_dynamic);

/* Unsets a TENSORJIT_* variable and has the library read its environment
 * again at its next call, with the kernels it holds kept (a test hook of
 * the library's internals: programs call jit_shutdown for that). */
void support_unsetenv(const char *name);

/* Environment variable as an integer, or dflt. */
long support_env_long(const char *name, long dflt);

/* dir/name's first MiB, NUL-terminated (free it); the test fails naming
 * the path if it cannot be read. */
char *support_read_file(const char *dir, const char *name);

#endif
