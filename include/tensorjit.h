/*
 * tensorjit: shape-specialized kernels of the indexing family: GatherND,
 * Gather, GatherElements, ScatterUpdate, ScatterNDUpdate and
 * ScatterElementsUpdate, the scatters with reductions, and the embedding
 * bags EmbeddingBagOffsets, EmbeddingBagPacked and EmbeddingSegmentsSum,
 * JIT-compiled by LLVM.
 *
 * A caller describes one layer by a signature (shapes, attributes, element
 * and index types, index policy, reduction) and gets back a plain C function
 * pointer for exactly that signature. The same signature returns the same
 * pointer; the pointer stays valid until jit_shutdown(). Two exceptions,
 * both documented below: jit_*_compile_async returns an entry stub, and
 * once its JIT kernel is ready a compile of the signature returns that
 * kernel's direct pointer instead (both stay callable); and under a kernel
 * limit (jit_set_kernel_limit) a released kernel's pointer answers
 * JIT_STATUS_RELEASED, and its signature compiles to a new pointer. Dims marked
 * JIT_DIM_DYNAMIC give one kernel for a whole family of shapes, called with
 * the actual dims.
 *
 * Errors: a function that fails returns NULL (or non-zero) and the calling
 * thread's jit_last_error() says why. It is only meaningful after a failure.
 */
#ifndef TENSORJIT_H
#define TENSORJIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TENSORJIT_VERSION "0.1.0"

/* Largest rank of data, indices, updates and output (numpy 1.x's limit). */
#define JIT_MAX_RANK 32

/* Element types. Kernels move bytes, so every type of the same size shares
 * code; the type is still part of the signature. The sub-byte types exist
 * only so that they can be refused with a clear message. */
typedef enum jit_dtype {
    JIT_DTYPE_UNSET = 0,
    JIT_BOOL,
    JIT_I8,
    JIT_U8,
    JIT_I16,
    JIT_U16,
    JIT_F16,
    JIT_BF16,
    JIT_I32,
    JIT_U32,
    JIT_F32,
    JIT_I64,
    JIT_U64,
    JIT_F64,
    JIT_U1,
    JIT_U4,
    JIT_I4,
    JIT_NF4,
    JIT_DTYPE_COUNT
} jit_dtype;

/* What a kernel does with an index outside [0, dim). */
typedef enum jit_index_policy {
    JIT_INDEX_ERROR = 0,     /* refuse the call; nothing is written */
    JIT_INDEX_NEGATIVE_WRAPS, /* [-dim, dim) accepted, negative counts from the end; else error */
    JIT_INDEX_CLAMP,         /* clamp into [0, dim-1]; error only when dim is 0 */
    JIT_INDEX_ZERO_FILL,     /* gather: the slice is zeros; scatter: the update is dropped */
    JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL, /* [-dim, dim) accepted, negative counts from the
                                           end; anything else as zero-fill (Gather-8) */
    JIT_INDEX_POLICY_COUNT
} jit_index_policy;

/* What a scatter does with the value at an updated position: replace it
 * (none) or combine it with the update. Applied one update at a time in
 * row-major order of the indices, in the element type (integers wrap;
 * f16 and bf16 through f32, rounded back after every step; min and max
 * propagate NaN); bool: sum and max are or, prod and min and, sub xor. */
typedef enum jit_reduction {
    JIT_REDUCTION_NONE = 0,
    JIT_REDUCTION_SUM,  /* ONNX "add" */
    JIT_REDUCTION_SUB,  /* out - update (ScatterNDUpdate-15) */
    JIT_REDUCTION_PROD, /* ONNX "mul" */
    JIT_REDUCTION_MIN,
    JIT_REDUCTION_MAX,
    JIT_REDUCTION_MEAN, /* ScatterElementsUpdate-12; integers: floor(sum / count) */
    JIT_REDUCTION_COUNT
} jit_reduction;

/* Which engine a signature asks for, and which one a kernel runs on. */
typedef enum jit_engine {
    JIT_ENGINE_AUTO = 0,  /* JIT when it can serve, else the reference kernel */
    JIT_ENGINE_REFERENCE, /* always the reference (interpreted) kernel */
    JIT_ENGINE_JIT,       /* reported by jit_*_info for LLVM-compiled kernels */
    JIT_ENGINE_COUNT
} jit_engine;

/* Kernel return values. */
enum jit_status {
    JIT_OK = 0,
    JIT_STATUS_BAD_INDEX = 1, /* an index is out of range under the policy */
    JIT_STATUS_BAD_POINTER = 2, /* a NULL buffer where the signature needs bytes */
    JIT_STATUS_RELEASED = 3,    /* the kernel was released under the kernel limit */
    JIT_STATUS_NO_MEMORY = 4,   /* a reduction's scratch (mean, no_init_val) could not be
                                   had; nothing was written */
    JIT_STATUS_BAD_SHAPE = 5    /* a dynamic kernel's actual dims break a rule of the op,
                                   a bound or a static dim; nothing was written */
};

typedef struct jit_shape {
    int rank;                    /* 0 .. JIT_MAX_RANK */
    int64_t dims[JIT_MAX_RANK];  /* only dims[0 .. rank) are read */
} jit_shape;

/* A dim of data, indices or updates that is known only at call time (SPEC
 * section 6): signatures with one compile through jit_compile into a
 * dynamic kernel (jit_dynamic_fn below). Ranks stay static. */
#define JIT_DIM_DYNAMIC (-1)

/* jit_*_sig.threads: 0 or 1 run on the caller's thread; N > 1 lets a large
 * kernel split its copies over up to N threads (a pool the library keeps;
 * small kernels never use it); JIT_THREADS_ALL means one per CPU that
 * the process may run on (its affinity mask, read once, when a signature
 * first asks or the pool first starts). A
 * signature whose kernel would never split (an unrolled kernel, too little
 * work, a mean's passes, the reference engine) compiles to the one-thread
 * kernel: the same pointer as with threads = 1, one hold more on it. */
#define JIT_THREADS_ALL (-1)
#define JIT_THREADS_MAX 256

typedef struct jit_gather_nd_sig {
    int opset;                   /* 5 or 8 (0 means 8); only the output shape differs */
    int batch_dims;
    jit_dtype dtype;             /* data and output */
    jit_dtype index_type;        /* any integer type */
    jit_index_policy index_policy;
    jit_engine engine;
    int threads;
    jit_shape data_shape;
    jit_shape indices_shape;
} jit_gather_nd_sig;

typedef struct jit_scatter_update_sig {
    int64_t axis;                /* in [-rank(data), rank(data) - 1] */
    jit_dtype dtype;             /* data and output */
    jit_dtype updates_dtype;     /* UNSET means dtype; otherwise must equal it */
    jit_dtype index_type;        /* any integer type */
    jit_dtype axis_type;         /* type of the model's axis tensor; UNSET means i64 */
    jit_shape axis_shape;        /* the model's axis tensor: scalar (rank 0) or [1] */
    jit_index_policy index_policy;
    jit_engine engine;
    int threads;
    jit_shape data_shape;
    jit_shape indices_shape;
    jit_shape updates_shape;
} jit_scatter_update_sig;

/* Gather (OpenVINO Gather-1/-7/-8, ONNX Gather, tf.gather, numpy take):
 * out[p0..p(axis-1), i_b..i_(q-1), rest...] =
 *     data[p0..p(axis-1), indices[p0..p(b-1), i_b..i_(q-1)], rest...]. */
typedef struct jit_gather_sig {
    int opset;                   /* 1, 7 or 8 (0 means 8); only checks differ (1: no batch_dims) */
    int64_t axis;                /* in [-rank(data), rank(data) - 1] */
    int batch_dims;              /* in [-rank(indices), rank(indices)], <= axis once normalized */
    jit_dtype dtype;             /* data and output */
    jit_dtype index_type;        /* any integer type */
    jit_index_policy index_policy;
    jit_engine engine;
    int threads;
    jit_shape data_shape;
    jit_shape indices_shape;
} jit_gather_sig;

/* GatherElements (OpenVINO GatherElements-6, ONNX, torch.gather):
 * out[i...] = data[i... with its axis coordinate replaced by indices[i...]]. */
typedef struct jit_gather_elements_sig {
    int64_t axis;                /* in [-rank(data), rank(data) - 1] */
    jit_dtype dtype;
    jit_dtype index_type;        /* i32 or i64 */
    jit_index_policy index_policy;
    jit_engine engine;
    int threads;
    jit_shape data_shape;
    jit_shape indices_shape;     /* rank(data); data's dims except along axis */
    int torch_dims;              /* 1: indices' dims but the axis may be smaller than
                                    data's (torch.gather; jit_sig.torch_dims) */
} jit_gather_elements_sig;

/* ScatterNDUpdate-3 (ONNX ScatterND, tf.tensor_scatter_nd_update): out =
 * copy(data), then out[indices[j..., :]] = updates[j...] in row-major order
 * of j (the last duplicate wins). */
typedef struct jit_scatter_nd_update_sig {
    int opset;                   /* 3 or 15 (0 means 15, the newest); 3 has no reduction */
    jit_dtype dtype;
    jit_dtype updates_dtype;     /* UNSET means dtype; otherwise must equal it */
    jit_dtype index_type;
    jit_index_policy index_policy;
    jit_engine engine;
    int threads;
    jit_shape data_shape;
    jit_shape indices_shape;     /* [..., k], k <= rank(data) */
    jit_shape updates_shape;     /* indices.shape[:-1] + data.shape[k:] */
    jit_reduction reduction;     /* opset 15: none, sum, sub, prod, min, max */
} jit_scatter_nd_update_sig;

/* ScatterElementsUpdate-3/-12 (ONNX ScatterElements, torch.scatter and
 * scatter_reduce): out = copy(data), then for every element i of updates,
 * out[i with its axis coordinate replaced by indices[i]] =
 * reduction(that, updates[i]), in row-major order of i. */
typedef struct jit_scatter_elements_update_sig {
    int opset;                   /* 3 or 12 (0 means 12); 3 has no reduction */
    int64_t axis;                /* in [-rank(data), rank(data) - 1] */
    jit_dtype dtype;
    jit_dtype updates_dtype;     /* UNSET means dtype; otherwise must equal it */
    jit_dtype index_type;
    jit_dtype axis_type;         /* the model's axis tensor: its type (UNSET: i64) */
    jit_shape axis_shape;        /* and shape, a scalar or [1] */
    jit_index_policy index_policy;
    jit_engine engine;
    int threads;
    jit_shape data_shape;
    jit_shape indices_shape;     /* rank(data); dims <= data's except along axis */
    jit_shape updates_shape;     /* indices.shape */
    jit_reduction reduction;     /* none, sum, prod, min, max, mean */
    int no_init_val;             /* 1: use_init_val = false: a position hit by any
                                    update starts from the reduction's neutral value */
    int torch_dims;              /* 1: updates may be larger than indices (torch.scatter;
                                    jit_sig.torch_dims) */
} jit_scatter_elements_update_sig;

/* Every op of the family, for the generic API (jit_compile & co). */
typedef enum jit_op {
    JIT_OP_NONE = 0,
    JIT_OP_GATHER_ND,
    JIT_OP_SCATTER_UPDATE,
    JIT_OP_GATHER,
    JIT_OP_SCATTER_ND_UPDATE,
    JIT_OP_GATHER_ELEMENTS,
    JIT_OP_SCATTER_ELEMENTS_UPDATE,
    JIT_OP_EMBEDDING_BAG_OFFSETS, /* SPEC section 10: gathers that reduce */
    JIT_OP_EMBEDDING_BAG_PACKED,
    JIT_OP_EMBEDDING_SEGMENTS,
    JIT_OP_COUNT
} jit_op;

/* One signature for every op: the typed signatures above are its views.
 * Fields an op does not take are ignored (jit_op_describe says which it
 * takes). */
typedef struct jit_sig {
    jit_op op;
    int opset;                   /* the op's version; 0: its default */
    int64_t axis;
    int batch_dims;
    jit_dtype dtype;
    jit_dtype updates_dtype;     /* UNSET means dtype */
    jit_dtype index_type;
    jit_dtype axis_type;         /* an axis given as a tensor (JIT_ATTR_AXIS_TENSOR): its
                                    element type, UNSET meaning i64 */
    jit_shape axis_shape;        /* and its shape: a scalar or [1] */
    jit_index_policy index_policy;
    jit_engine engine;
    int threads;
    jit_shape data_shape;
    jit_shape indices_shape;
    jit_shape updates_shape;
    jit_reduction reduction;     /* scatters with reductions (JIT_ATTR_REDUCTION) */
    int no_init_val;             /* ScatterElementsUpdate-12: use_init_val = false */
    /* torch's index dims (JIT_ATTR_TORCH_DIMS): indices' dims may be smaller
     * than data's but along the axis (torch.gather, torch.scatter), and a
     * scatter's updates larger than indices in any dim (only the elements
     * at indices' positions are read, at updates' own strides). */
    int torch_dims;
    /* Upper bounds of dynamic dims, at the dim's position (data_bound[i]
     * bounds data_shape.dims[i]): 0 means none. Ignored for static dims. A
     * call whose dim exceeds its bound returns JIT_STATUS_BAD_SHAPE. */
    int64_t data_bound[JIT_MAX_RANK];
    int64_t indices_bound[JIT_MAX_RANK];
    int64_t updates_bound[JIT_MAX_RANK];
    /* embedding bags (SPEC 10): data_shape is the table [E, d1, ...],
     * indices_shape the indices [N] (packed: [B, L]), updates_shape the
     * offsets [B] or [B+1] / the segment ids [N] (packed: unused); the
     * offsets' element type is index_type (updates_dtype UNSET or equal to
     * it). reduction NONE means sum. default_index and padding_idx each
     * have a flag beside them, rather than a value with a "none" of its
     * own: row 0 is a valid default row and a valid padding row, so a
     * zero-initialised signature must mean neither, and the value still
     * reads as the row it is, as in torch and OpenVINO. */
    int has_weights;             /* weights [N] (packed: [B, L]) of the table's type, sum only */
    int has_default_index;       /* 0: none, an empty bag gives zeros */
    int64_t default_index;       /* with has_default_index: the row of an empty bag, in
                                    [0, E), or -1 (OpenVINO's none) */
    int has_padding_idx;         /* torch; 0: no padding row */
    int64_t padding_idx;         /* with has_padding_idx: in [-E, E) */
    int include_last_offset;     /* offsets has B + 1 entries */
    int64_t num_segments;        /* Segments: S, or JIT_DIM_DYNAMIC */
    int64_t num_segments_bound;  /* a dynamic S's upper bound (0: none) */
} jit_sig;

/* Kernels. Buffers are dense, row-major, of the signature's sizes; out must
 * not overlap the inputs, except that a scatter may run in place
 * (out == data), which skips the copy. A bad index returns
 * JIT_STATUS_BAD_INDEX before anything is written. */
typedef int (*jit_gather_nd_fn)(const void *data, const void *indices, void *out);
typedef int (*jit_scatter_update_fn)(const void *data, const void *indices,
                                     const void *updates, void *out);
typedef jit_gather_nd_fn jit_gather_fn;
typedef jit_gather_nd_fn jit_gather_elements_fn;
typedef jit_scatter_update_fn jit_scatter_nd_update_fn;
typedef jit_scatter_update_fn jit_scatter_elements_update_fn;
/* An embedding bag's kernel (SPEC 10): offsets are the segment ids for
 * EmbeddingSegmentsSum and NULL for EmbeddingBagPacked; weights NULL when
 * the signature has none. out has the table's type. */
typedef int (*jit_embedding_bag_fn)(const void *table, const void *indices, const void *offsets,
                                    const void *weights, void *out);
typedef jit_embedding_bag_fn jit_embedding_bag_offsets_fn;
typedef jit_embedding_bag_fn jit_embedding_bag_packed_fn;
typedef jit_embedding_bag_fn jit_embedding_segments_fn;
/* Its dynamic form: dims holds the table's dims, then the indices', then
 * the offsets' (Segments: the segment ids', then S). */
typedef int (*jit_embedding_bag_dynamic_fn)(const void *table, const void *indices,
                                            const void *offsets, const void *weights, void *out,
                                            const int64_t *dims);
/* A kernel of any op, from the generic API: an embedding bag's
 * (jit_op_info.attrs has JIT_ATTR_BAG) is a jit_embedding_bag_fn, or with a
 * dynamic dim a jit_embedding_bag_dynamic_fn; any other op's a
 * jit_gather_nd_fn when it has no updates (jit_op_info.has_updates), else a
 * jit_scatter_update_fn, or with a dynamic dim a jit_dynamic_fn. */
typedef void (*jit_kernel)(void);

/* A dynamic kernel: one pointer for every shape of its signature's family.
 * dims holds the actual dims of data, then indices, then (ops with updates)
 * updates: rank(data) + rank(indices) [+ rank(updates)] values, the static
 * ones included (they must equal the signature's). Every rule of the op is
 * checked against them, and the bounds; a break returns
 * JIT_STATUS_BAD_SHAPE (jit_last_error() names the rule, the input, the
 * dim and the value) before anything is written. updates is ignored by
 * gathers. jit_sig_bind gives the signature of one call (and
 * jit_output_shape its output shape). Nothing is allocated per call; a
 * shape seen before on the same thread skips the planning (a compare of
 * the dims). */
typedef int (*jit_dynamic_fn)(const void *data, const void *indices, const void *updates,
                              void *out, const int64_t *dims);

/* NULL for an invalid signature (jit_last_error() names the rule, the input
 * and the numbers). Never NULL for a valid one: when the JIT cannot serve,
 * the pointer runs the reference kernel. */
jit_gather_nd_fn jit_gather_nd_compile(const jit_gather_nd_sig *sig);
jit_scatter_update_fn jit_scatter_update_compile(const jit_scatter_update_sig *sig);
jit_gather_fn jit_gather_compile(const jit_gather_sig *sig);
jit_gather_elements_fn jit_gather_elements_compile(const jit_gather_elements_sig *sig);
jit_scatter_nd_update_fn jit_scatter_nd_update_compile(const jit_scatter_nd_update_sig *sig);
jit_scatter_elements_update_fn
jit_scatter_elements_update_compile(const jit_scatter_elements_update_sig *sig);

/* Tiered compilation: returns at once a pointer that works from its first
 * call (the reference kernel) and switches to the JIT kernel when a
 * background thread has compiled it, with no lock on the call path. On
 * x86-64 the pointer is an entry stub, one indirect jump: about 1 ns per
 * call over the direct pointer (docs/performance.md). Elsewhere it is a
 * libffi closure, tens of ns: there, for the smallest kernels, call
 * jit_*_compile again once jit_*_info says "jit" (a cache hit) and use that
 * direct pointer. */
jit_gather_nd_fn jit_gather_nd_compile_async(const jit_gather_nd_sig *sig);
jit_scatter_update_fn jit_scatter_update_compile_async(const jit_scatter_update_sig *sig);

/* Output shape of a valid signature; -1 and jit_last_error() otherwise. */
int jit_gather_nd_output_shape(const jit_gather_nd_sig *sig, jit_shape *out);
int jit_scatter_update_output_shape(const jit_scatter_update_sig *sig, jit_shape *out);

typedef struct jit_kernel_info {
    jit_engine engine;      /* JIT_ENGINE_JIT or JIT_ENGINE_REFERENCE */
    const char *why;        /* why the reference kernel serves; "" for JIT kernels */
    double compile_ms;      /* time spent producing the kernel; a process's first
                               JIT kernel's includes starting the JIT (and opening
                               TENSORJIT_CACHE_DIR), unless jit_cache_open or an
                               earlier kernel started it */
    size_t code_bytes;      /* machine code size; 0 for the reference kernel */
    int64_t out_bytes;      /* bytes the kernel writes to out */
    int cache_hit;          /* 1: loaded from the on-disk cache, not compiled */
    jit_op op;              /* the op the kernel computes */
    int dynamic;            /* 1: a jit_dynamic_fn (out_bytes is then -1) */
} jit_kernel_info;

/* 0 and *info filled for a kernel this library returned; -1 otherwise,
 * and jit_last_error() says why: not a kernel of this library, another
 * op's kernel given to a typed call, or a kernel released under the kernel
 * limit ("released"; *info is then left as it was). The strings stay
 * valid until jit_shutdown(). */
int jit_gather_nd_info(jit_gather_nd_fn kernel, jit_kernel_info *info);
int jit_scatter_update_info(jit_scatter_update_fn kernel, jit_kernel_info *info);

/* What the JIT makes of a signature, as text: the LLVM IR before or after
 * optimization, or the machine code as assembly. Free it with jit_free().
 * NULL and jit_last_error() for an invalid signature or when the JIT
 * cannot start. */
typedef enum jit_dump_kind { JIT_DUMP_IR = 0, JIT_DUMP_IR_OPT, JIT_DUMP_ASM } jit_dump_kind;
char *jit_gather_nd_dump(const jit_gather_nd_sig *sig, jit_dump_kind kind);
char *jit_scatter_update_dump(const jit_scatter_update_sig *sig, jit_dump_kind kind);
void jit_free(void *p);

/* Splitting a kernel's work over threads of your own. Its copies are
 * `units` independent parts (GatherND: tuples; ScatterUpdate: outer
 * positions, whose destinations never overlap, so the last duplicate still
 * wins). validate() checks every index and writes nothing; run_range()
 * then does the copies of units [begin, end), any ranges in any threads,
 * without checking indices again: call it only after validate() returned
 * 0 for the same indices. validate_part(part, parts) checks part `part`
 * of `parts` slices of the indices instead, so that your threads share
 * the check too: call it for every part in [0, parts), and the ranges
 * only after every part returned 0 (a bad index's status and message name
 * the first bad index, as validate's; under negative-wraps the ranges
 * then wrap every index). A range must lie in [0, units) (begin == end:
 * nothing to do); one past either end is JIT_STATUS_BAD_SHAPE, nothing
 * written. -1 / non-zero for an unknown kernel.
 * JIT-compiled ranges come with kernels compiled with threads > 1 (large
 * ones); for the others these run the reference code on the plan. */
int64_t jit_gather_nd_units(jit_gather_nd_fn kernel);
int jit_gather_nd_validate(jit_gather_nd_fn kernel, const void *indices);
int jit_gather_nd_validate_part(jit_gather_nd_fn kernel, const void *indices, int64_t part,
                                int64_t parts);
int jit_gather_nd_run_range(jit_gather_nd_fn kernel, const void *data, const void *indices,
                            void *out, int64_t begin, int64_t end);
int64_t jit_scatter_update_units(jit_scatter_update_fn kernel);
int jit_scatter_update_validate(jit_scatter_update_fn kernel, const void *indices);
int jit_scatter_update_validate_part(jit_scatter_update_fn kernel, const void *indices,
                                     int64_t part, int64_t parts);
int jit_scatter_update_run_range(jit_scatter_update_fn kernel, const void *data,
                                 const void *indices, const void *updates, void *out,
                                 int64_t begin, int64_t end);

/* What tensorjit makes of a signature, in words: the canonical plan, the
 * code shape chosen and why, the cache key, the output shape under both
 * GatherND opsets. Free it with jit_free(); NULL for an invalid signature. */
char *jit_gather_nd_explain(const jit_gather_nd_sig *sig);
char *jit_scatter_update_explain(const jit_scatter_update_sig *sig);

/* The on-disk cache of compiled kernels (off until opened). Kernels are
 * then looked up in `dir` before being compiled, and stored there after.
 * The folder is created 0700; one owned by another user or writable by
 * group or others is refused (a cache is code: whoever writes it runs
 * code). Entries are written atomically and checked (key, length, SHA-256
 * of the object) before use; a bad one is removed and compiled again.
 * NULL or "" means $TENSORJIT_CACHE_DIR if set. 0, or -1 and
 * jit_last_error(). jit_shutdown() closes it. */
int jit_cache_open(const char *dir);
void jit_cache_close(void);
/* Entries and bytes in the open cache folder (clear: deletes them first
 * and reports what it deleted); its path into dir. Each of entries, bytes
 * and dir may be NULL. -1 and jit_last_error() if none is open, if the
 * open one cannot be listed (removed since), or if dir_len cannot hold
 * the path (nothing cleared then); dir is "" on failure. */
int jit_cache_stats(int clear, int64_t *entries, int64_t *bytes, char *dir, size_t dir_len);

/* The kernel limit: a cap on the JIT kernels this process keeps, by count
 * and/or bytes of machine code (0: no cap, the default; or
 * TENSORJIT_MAX_KERNELS and TENSORJIT_MAX_CODE_BYTES, read when the first
 * kernel is made). Every pointer jit_*_compile(_async) returns is a hold
 * on its kernel; jit_*_release drops one, once the caller's last call of
 * it has returned. When the JIT kernels exceed the cap, those nobody holds
 * are released (their code freed through their resource tracker), least
 * recently released first. Held kernels never are: the cap is exceeded
 * rather than freeing code a caller may be running. A released kernel's
 * pointer is never handed out again: its signature compiles to a new
 * pointer, and a late call of the old one returns JIT_STATUS_RELEASED and
 * touches no buffer. JIT kernels made while a cap is set are called
 * through an 8-byte stub (an indirect jump); kernels made without a cap,
 * reference kernels and tiered kernels are never released (releasing them
 * only drops the hold). Stubs exist on x86-64 only: elsewhere
 * jit_set_kernel_limit returns -1. Returns 0, or -1 and jit_last_error(). */
int jit_set_kernel_limit(int64_t max_kernels, int64_t max_code_bytes);
int jit_gather_nd_release(jit_gather_nd_fn kernel);
int jit_scatter_update_release(jit_scatter_update_fn kernel);

typedef struct jit_kernel_stats {
    int64_t jit_kernels;    /* JIT kernels alive in this process */
    int64_t code_bytes;     /* their machine code */
    int64_t held;           /* of them, held by a caller */
    int64_t releasable;     /* of them, idle and releasable: next to go */
    int64_t released;       /* released under the cap so far */
    int64_t max_kernels;    /* the cap (0: none) */
    int64_t max_code_bytes;
} jit_kernel_stats;
int jit_get_kernel_stats(jit_kernel_stats *out);

/* The other ops' typed calls: the same as GatherND's, info, release and
 * the parts API included. Ops of one argument list share one C pointer
 * type (jit_gather_fn is jit_gather_nd_fn), so the compiler cannot tell
 * their kernels apart: a typed call given another op's kernel returns -1
 * and jit_last_error() names both ops. Code that handles several ops uses
 * the generic calls below (jit_info((jit_kernel)fn, &info)), which take
 * any kernel. */
jit_gather_fn jit_gather_compile_async(const jit_gather_sig *sig);
int jit_gather_output_shape(const jit_gather_sig *sig, jit_shape *out);
char *jit_gather_explain(const jit_gather_sig *sig);
char *jit_gather_dump(const jit_gather_sig *sig, jit_dump_kind kind);
jit_gather_elements_fn jit_gather_elements_compile_async(const jit_gather_elements_sig *sig);
int jit_gather_elements_output_shape(const jit_gather_elements_sig *sig, jit_shape *out);
char *jit_gather_elements_explain(const jit_gather_elements_sig *sig);
char *jit_gather_elements_dump(const jit_gather_elements_sig *sig, jit_dump_kind kind);
jit_scatter_nd_update_fn jit_scatter_nd_update_compile_async(const jit_scatter_nd_update_sig *sig);
int jit_scatter_nd_update_output_shape(const jit_scatter_nd_update_sig *sig, jit_shape *out);
char *jit_scatter_nd_update_explain(const jit_scatter_nd_update_sig *sig);
char *jit_scatter_nd_update_dump(const jit_scatter_nd_update_sig *sig, jit_dump_kind kind);
jit_scatter_elements_update_fn
jit_scatter_elements_update_compile_async(const jit_scatter_elements_update_sig *sig);
int jit_scatter_elements_update_output_shape(const jit_scatter_elements_update_sig *sig,
                                             jit_shape *out);
char *jit_scatter_elements_update_explain(const jit_scatter_elements_update_sig *sig);
char *jit_scatter_elements_update_dump(const jit_scatter_elements_update_sig *sig,
                                       jit_dump_kind kind);
int jit_gather_info(jit_gather_fn kernel, jit_kernel_info *info);
int jit_gather_release(jit_gather_fn kernel);
int64_t jit_gather_units(jit_gather_fn kernel);
int jit_gather_validate(jit_gather_fn kernel, const void *indices);
int jit_gather_validate_part(jit_gather_fn kernel, const void *indices, int64_t part,
                             int64_t parts);
int jit_gather_run_range(jit_gather_fn kernel, const void *data, const void *indices,
                         void *out, int64_t begin, int64_t end);
int jit_gather_elements_info(jit_gather_elements_fn kernel, jit_kernel_info *info);
int jit_gather_elements_release(jit_gather_elements_fn kernel);
int64_t jit_gather_elements_units(jit_gather_elements_fn kernel);
int jit_gather_elements_validate(jit_gather_elements_fn kernel, const void *indices);
int jit_gather_elements_validate_part(jit_gather_elements_fn kernel, const void *indices,
                                      int64_t part, int64_t parts);
int jit_gather_elements_run_range(jit_gather_elements_fn kernel, const void *data, const void *indices,
                                  void *out, int64_t begin, int64_t end);
int jit_scatter_nd_update_info(jit_scatter_nd_update_fn kernel, jit_kernel_info *info);
int jit_scatter_nd_update_release(jit_scatter_nd_update_fn kernel);
int64_t jit_scatter_nd_update_units(jit_scatter_nd_update_fn kernel);
int jit_scatter_nd_update_validate(jit_scatter_nd_update_fn kernel, const void *indices);
int jit_scatter_nd_update_validate_part(jit_scatter_nd_update_fn kernel, const void *indices,
                                        int64_t part, int64_t parts);
int jit_scatter_nd_update_run_range(jit_scatter_nd_update_fn kernel, const void *data, const void *indices,
                                    const void *updates, void *out, int64_t begin, int64_t end);
int jit_scatter_elements_update_info(jit_scatter_elements_update_fn kernel, jit_kernel_info *info);
int jit_scatter_elements_update_release(jit_scatter_elements_update_fn kernel);
int64_t jit_scatter_elements_update_units(jit_scatter_elements_update_fn kernel);
int jit_scatter_elements_update_validate(jit_scatter_elements_update_fn kernel, const void *indices);
int jit_scatter_elements_update_validate_part(jit_scatter_elements_update_fn kernel,
                                              const void *indices, int64_t part, int64_t parts);
int jit_scatter_elements_update_run_range(jit_scatter_elements_update_fn kernel, const void *data, const void *indices,
                                          const void *updates, void *out, int64_t begin, int64_t end);

/*
 * Embedding bags (SPEC section 10): a gather whose rows are pooled per bag.
 * reduction: sum (NONE means sum), mean and max with opset 15; opset 3
 * (the OpenVINO ...Sum-3 ops) takes sum only, without padding_idx or
 * include_last_offset. weights only with sum. default_index and padding_idx
 * count only with their has_ flag set (jit_sig says why), so a
 * zero-initialised signature has no default row and no padding.
 */
typedef struct jit_embedding_bag_offsets_sig {
    int opset;                   /* 3 or 15 (0 means 15) */
    jit_dtype dtype;             /* table, weights and output */
    jit_dtype index_type;        /* indices and offsets: i32 or i64 */
    jit_index_policy index_policy;
    jit_engine engine;
    int threads;
    jit_shape table_shape;       /* [E, d1, ...] */
    jit_shape indices_shape;     /* [N] */
    jit_shape offsets_shape;     /* [B], or [B + 1] with include_last_offset */
    jit_reduction reduction;
    int has_weights;
    int has_default_index;
    int64_t default_index;       /* [0, E) or -1: the row of an empty bag */
    int has_padding_idx;
    int64_t padding_idx;         /* [-E, E) */
    int include_last_offset;
} jit_embedding_bag_offsets_sig;

typedef struct jit_embedding_bag_packed_sig {
    int opset;                   /* 3 or 15 (0 means 15) */
    jit_dtype dtype;
    jit_dtype index_type;        /* i32 or i64 */
    jit_index_policy index_policy;
    jit_engine engine;
    int threads;
    jit_shape table_shape;       /* [E, d1, ...] */
    jit_shape indices_shape;     /* [B, L] */
    jit_reduction reduction;
    int has_weights;             /* weights [B, L] */
    int has_padding_idx;
    int64_t padding_idx;         /* [-E, E) */
} jit_embedding_bag_packed_sig;

typedef struct jit_embedding_segments_sig {
    int opset;                   /* 3 (0 means 3) */
    jit_dtype dtype;
    jit_dtype index_type;        /* indices and segment ids: i32 or i64 */
    jit_index_policy index_policy;
    jit_engine engine;
    int threads;
    jit_shape table_shape;       /* [E, d1, ...] */
    jit_shape indices_shape;     /* [N] */
    jit_shape segment_ids_shape; /* [N] */
    int64_t num_segments;        /* S: the output's first dim */
    int has_weights;             /* weights [N] */
    int has_default_index;
    int64_t default_index;       /* [0, E) or -1: the row of a segment no id names */
} jit_embedding_segments_sig;

jit_embedding_bag_offsets_fn
jit_embedding_bag_offsets_compile(const jit_embedding_bag_offsets_sig *sig);
jit_embedding_bag_offsets_fn
jit_embedding_bag_offsets_compile_async(const jit_embedding_bag_offsets_sig *sig);
int jit_embedding_bag_offsets_output_shape(const jit_embedding_bag_offsets_sig *sig,
                                           jit_shape *out);
char *jit_embedding_bag_offsets_explain(const jit_embedding_bag_offsets_sig *sig);
char *jit_embedding_bag_offsets_dump(const jit_embedding_bag_offsets_sig *sig,
                                     jit_dump_kind kind);
int jit_embedding_bag_offsets_info(jit_embedding_bag_offsets_fn kernel, jit_kernel_info *info);
int jit_embedding_bag_offsets_release(jit_embedding_bag_offsets_fn kernel);
int64_t jit_embedding_bag_offsets_units(jit_embedding_bag_offsets_fn kernel);
int jit_embedding_bag_offsets_validate(jit_embedding_bag_offsets_fn kernel, const void *indices,
                                       const void *offsets);
int jit_embedding_bag_offsets_validate_part(jit_embedding_bag_offsets_fn kernel,
                                            const void *indices, const void *offsets,
                                            int64_t part, int64_t parts);
int jit_embedding_bag_offsets_run_range(jit_embedding_bag_offsets_fn kernel, const void *table,
                                        const void *indices, const void *offsets,
                                        const void *weights, void *out, int64_t begin,
                                        int64_t end);
jit_embedding_bag_packed_fn
jit_embedding_bag_packed_compile(const jit_embedding_bag_packed_sig *sig);
jit_embedding_bag_packed_fn
jit_embedding_bag_packed_compile_async(const jit_embedding_bag_packed_sig *sig);
int jit_embedding_bag_packed_output_shape(const jit_embedding_bag_packed_sig *sig,
                                          jit_shape *out);
char *jit_embedding_bag_packed_explain(const jit_embedding_bag_packed_sig *sig);
char *jit_embedding_bag_packed_dump(const jit_embedding_bag_packed_sig *sig, jit_dump_kind kind);
int jit_embedding_bag_packed_info(jit_embedding_bag_packed_fn kernel, jit_kernel_info *info);
int jit_embedding_bag_packed_release(jit_embedding_bag_packed_fn kernel);
int64_t jit_embedding_bag_packed_units(jit_embedding_bag_packed_fn kernel);
int jit_embedding_bag_packed_validate(jit_embedding_bag_packed_fn kernel, const void *indices,
                                      const void *offsets);
int jit_embedding_bag_packed_validate_part(jit_embedding_bag_packed_fn kernel,
                                           const void *indices, const void *offsets,
                                           int64_t part, int64_t parts);
int jit_embedding_bag_packed_run_range(jit_embedding_bag_packed_fn kernel, const void *table,
                                       const void *indices, const void *offsets,
                                       const void *weights, void *out, int64_t begin,
                                       int64_t end);
jit_embedding_segments_fn jit_embedding_segments_compile(const jit_embedding_segments_sig *sig);
jit_embedding_segments_fn
jit_embedding_segments_compile_async(const jit_embedding_segments_sig *sig);
int jit_embedding_segments_output_shape(const jit_embedding_segments_sig *sig, jit_shape *out);
char *jit_embedding_segments_explain(const jit_embedding_segments_sig *sig);
char *jit_embedding_segments_dump(const jit_embedding_segments_sig *sig, jit_dump_kind kind);
int jit_embedding_segments_info(jit_embedding_segments_fn kernel, jit_kernel_info *info);
int jit_embedding_segments_release(jit_embedding_segments_fn kernel);
int64_t jit_embedding_segments_units(jit_embedding_segments_fn kernel);
int jit_embedding_segments_validate(jit_embedding_segments_fn kernel, const void *indices,
                                    const void *segment_ids);
int jit_embedding_segments_validate_part(jit_embedding_segments_fn kernel,
                                         const void *indices, const void *segment_ids,
                                         int64_t part, int64_t parts);
int jit_embedding_segments_run_range(jit_embedding_segments_fn kernel, const void *table,
                                     const void *indices, const void *segment_ids,
                                     const void *weights, void *out, int64_t begin,
                                     int64_t end);

/*
 * The generic API: every op through one signature (jit_sig) and one kernel
 * type (jit_kernel). The typed calls above are thin wrappers of these. A
 * kernel from either is the same pointer for the same signature.
 * jit_compile_async tiers a dynamic signature too: its pointer runs the
 * family's reference kernel until the family's JIT kernel is compiled.
 */
jit_kernel jit_compile(const jit_sig *sig);
jit_kernel jit_compile_async(const jit_sig *sig);
int jit_output_shape(const jit_sig *sig, jit_shape *out);
char *jit_explain(const jit_sig *sig);
char *jit_dump(const jit_sig *sig, jit_dump_kind kind);
int jit_info(jit_kernel kernel, jit_kernel_info *info);
int jit_release(jit_kernel kernel);
int64_t jit_units(jit_kernel kernel);
int jit_validate(jit_kernel kernel, const void *indices);
int jit_validate_part(jit_kernel kernel, const void *indices, int64_t part, int64_t parts);
/* updates is ignored by ops without updates. */
int jit_run_range(jit_kernel kernel, const void *data, const void *indices, const void *updates,
                  void *out, int64_t begin, int64_t end);
/* Calls any kernel with its op's arguments (updates ignored by gathers),
 * after looking it up: for tools and tests; hot paths call the typed
 * pointer. Returns the kernel's status, JIT_STATUS_RELEASED for a kernel
 * released under the kernel limit (as its pointer does; so do the other
 * jit_call_* and the parts API), or JIT_STATUS_BAD_POINTER for a pointer
 * that is no kernel of this library, or for an out that shares
 * bytes with an input (but a scatter's out == data): the rule above,
 * which the typed pointers leave to the caller, checked here. */
int jit_call(jit_kernel kernel, const void *data, const void *indices, const void *updates,
             void *out);

/* Dynamic signatures. jit_sig_is_dynamic: 1 when a dim of data, indices or
 * updates (those the op takes) is JIT_DIM_DYNAMIC, else 0. jit_sig_bind:
 * the signature of one call of sig's dynamic kernel, its dynamic dims
 * replaced by dims (laid out as jit_dynamic_fn's); 0, or -1 and
 * jit_last_error() when dims break a bound, a static dim or a rule of the
 * op (*out then as it was). jit_output_shape of a dynamic signature has
 * JIT_DIM_DYNAMIC where the output varies, and fails where even its rank
 * does (a dynamic tuple length): bind the call's dims first.
 * jit_call_dynamic calls a dynamic kernel as jit_call calls others, but
 * does not check out against the inputs (their sizes are the call's). */
int jit_sig_is_dynamic(const jit_sig *sig);
int jit_sig_bind(const jit_sig *sig, const int64_t *dims, jit_sig *out);
int jit_call_dynamic(jit_kernel kernel, const void *data, const void *indices,
                     const void *updates, void *out, const int64_t *dims);
/* Which engine serves a call of the dynamic kernel with dims (laid out as
 * jit_dynamic_fn's): JIT_ENGINE_JIT where the kernel's code runs that
 * shape, JIT_ENGINE_REFERENCE where the reference kernel does (the kernel
 * is one, or the shape does not fit the loop nest its code was made for);
 * why (NULL, or why_len bytes) then says which. 0, or -1 and
 * jit_last_error() for a kernel that is not dynamic or dims that break a
 * rule. Runs nothing: for tools and tests. */
int jit_dynamic_engine(jit_kernel kernel, const int64_t *dims, jit_engine *engine, char *why,
                       size_t why_len);

/* Embedding bags' kernels through the generic API (jit_call and its kin
 * given one return JIT_STATUS_BAD_SHAPE naming these): the kernel's
 * status, JIT_STATUS_RELEASED for a kernel released under the kernel
 * limit, or JIT_STATUS_BAD_POINTER for a pointer that is no kernel of
 * this library, for weights given to a kernel compiled without them, for
 * offsets given to an EmbeddingBagPacked one, and (jit_call_bag and
 * jit_run_range_bag, whose sizes are static) for an out that shares
 * bytes with an input. The typed pointers check none of these, and
 * jit_call_bag_dynamic not the overlap. jit_run_range_bag's units are bags; call it after
 * jit_validate_bag returned 0 for the same indices and offsets. */
int jit_call_bag(jit_kernel kernel, const void *table, const void *indices, const void *offsets,
                 const void *weights, void *out);
int jit_call_bag_dynamic(jit_kernel kernel, const void *table, const void *indices,
                         const void *offsets, const void *weights, void *out,
                         const int64_t *dims);
int jit_validate_bag(jit_kernel kernel, const void *indices, const void *offsets);
/* Part `part` of `parts` of jit_validate_bag's check, for a pool of yours:
 * call it for every part in [0, parts), on any threads, and the ranges
 * only after every part returned 0 (JIT_OK). A part that finds something
 * bad returns its status and names the call's lowest bad value, as
 * jit_validate_bag does. */
int jit_validate_bag_part(jit_kernel kernel, const void *indices, const void *offsets,
                          int64_t part, int64_t parts);
int jit_run_range_bag(jit_kernel kernel, const void *table, const void *indices,
                      const void *offsets, const void *weights, void *out, int64_t begin,
                      int64_t end);

/* Attributes a signature of an op takes (jit_op_info.attrs). */
enum jit_op_attr {
    JIT_ATTR_AXIS = 1,        /* jit_sig.axis, required */
    JIT_ATTR_BATCH_DIMS = 2,  /* jit_sig.batch_dims, default 0 */
    JIT_ATTR_UPDATES = 4,     /* updates_shape and updates_dtype: a scatter */
    JIT_ATTR_AXIS_TENSOR = 8, /* the axis is a model's tensor: axis_type, axis_shape */
    JIT_ATTR_REDUCTION = 16,  /* jit_sig.reduction (which ones: jit_op_info.reductions) */
    JIT_ATTR_INIT_VAL = 32,   /* jit_sig.no_init_val */
    JIT_ATTR_TORCH_DIMS = 64,     /* jit_sig.torch_dims */
    JIT_ATTR_BAG = 128,           /* an embedding bag: kernel is a jit_embedding_bag_fn */
    JIT_ATTR_OFFSETS = 256,       /* updates_shape: offsets (or segment ids) */
    JIT_ATTR_WEIGHTS = 512,       /* jit_sig.has_weights */
    JIT_ATTR_DEFAULT_INDEX = 1024, /* jit_sig.default_index */
    JIT_ATTR_PADDING_IDX = 2048,  /* jit_sig.padding_idx */
    JIT_ATTR_LAST_OFFSET = 4096,  /* jit_sig.include_last_offset */
    JIT_ATTR_NUM_SEGMENTS = 8192  /* jit_sig.num_segments (and its bound) */
};

typedef struct jit_op_info {
    jit_op op;
    const char *name;         /* "GatherND" */
    const char *command;      /* the CLI's subcommand: "gather-nd" */
    unsigned attrs;           /* enum jit_op_attr bits */
    int has_updates;          /* kernel is int (*)(data, indices, updates, out) */
    int opsets[4];            /* the versions it takes, 0-terminated */
    int default_opset;        /* what opset 0 means */
    unsigned index_types;     /* the index types it takes: bit (1 << jit_dtype) each */
    unsigned reductions;      /* the reductions it takes: bit (1 << jit_reduction) each,
                                 in its latest version */
} jit_op_info;

/* 0 and *out for a known op, else -1. jit_op_from_name takes the CLI's
 * name ("gather-nd") or the op's ("GatherND"; OpenVINO's
 * "EmbeddingBagOffsetsSum" and "EmbeddingBagPackedSum" too), in any case;
 * JIT_OP_NONE if unknown. */
int jit_op_describe(jit_op op, jit_op_info *out);
jit_op jit_op_from_name(const char *name);

/* The index tuples of a valid signature: each is *depth consecutive
 * elements of indices, entry e addressing a data dimension of size
 * dims[e] (what a valid index must stay below). 0, or -1 and
 * jit_last_error() for an invalid signature. */
int jit_index_dims(const jit_sig *sig, int *depth, int64_t dims[JIT_MAX_RANK]);

/* Frees every kernel and all library state, but for the scratch memory of
 * means (docs/reductions.md), which is per thread: the
 * calling thread's is freed, other threads' when they exit. Kernels returned
 * before are invalid afterwards; the library may be used again. Not to be
 * called while another thread uses the library.
 * A kernel compiled after the shutdown may be given the address a kernel
 * had before it, so an old pointer could run the new kernel with the wrong
 * buffers: jit_epoch() tells them apart. (A pointer handed out through an
 * entry stub, under a kernel limit or tiering, returns JIT_STATUS_RELEASED
 * after the shutdown instead: stubs are never reused.) */
void jit_shutdown(void);

/* A number that each jit_shutdown() increases (1 before the first): a
 * kernel pointer obtained while jit_epoch() returned e may be called only
 * while it still returns e. Lock-free; safe from any thread. */
uint64_t jit_epoch(void);

/* The calling thread's last error message ("" if none). */
const char *jit_last_error(void);

/* The library's names, as jit_*_name writes them ("f32", "negative-wraps",
 * "sum"); exact and case-sensitive. jit_index_policy_from_name also takes
 * the test vectors' "negative_wraps", jit_reduction_from_name ONNX's "add"
 * and "mul". numpy's dtype names ("float32") are the CLI's own mapping:
 * jit_dtype_from_name returns JIT_DTYPE_UNSET for them. */
const char *jit_dtype_name(jit_dtype t);
jit_dtype jit_dtype_from_name(const char *name); /* UNSET if unknown */
int jit_dtype_size(jit_dtype t);                 /* bytes; 0 for UNSET and sub-byte types */
const char *jit_index_policy_name(jit_index_policy p);
int jit_index_policy_from_name(const char *name, jit_index_policy *out); /* 0 on success */
const char *jit_reduction_name(jit_reduction r);                 /* "sum" */
int jit_reduction_from_name(const char *name, jit_reduction *out); /* also ONNX add, mul */
const char *jit_engine_name(jit_engine e);
const char *jit_version(void);

#ifdef __cplusplus
}
#endif

#endif /* TENSORJIT_H */
