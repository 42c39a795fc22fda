/* What the files of the ONNX reader share (onnx_*.c); not an interface. */
#ifndef TJ_ONNX_INTERNAL_H
#define TJ_ONNX_INTERNAL_H

#include "onnx.pb-c.h"
#include "onnx_model.h"

/* onnx_decode.c: a ModelProto decoded by the generated code within a
 * memory budget, after a check that it nests no deeper than
 * TJ_ONNX_MAX_DEPTH; NULL with one line in err. */
typedef struct tj_onnx_doc tj_onnx_doc;
tj_onnx_doc *tj_onnx_decode(const uint8_t *bytes, size_t len, const char *name, char *err,
                            size_t err_len);
const Onnx__ModelProto *tj_onnx_model(const tj_onnx_doc *d);
void tj_onnx_release(tj_onnx_doc *d);

/* onnx_ops.c: the ONNX node types tensorjit compiles. */
typedef struct tj_onnx_op {
    const char *type;        /* the node's op_type */
    jit_op op;               /* compiled as */
    const char *as;          /* the tensorjit layer type listed */
    int as_version;          /* the op's version in tensorjit (sig.opset) */
    int first_opset;         /* ONNX's first version of the op */
    int batch_dims_since;    /* ONNX opset from which batch_dims exists; 0: never */
    int reduction_since;     /* ... reduction none/add/mul; 0: never */
    int minmax_since;        /* ... reduction min/max */
    int has_axis, has_updates;
    int int64_indices;       /* ONNX types indices as int64 alone (no Tind) */
} tj_onnx_op;

const tj_onnx_op *tj_onnx_op_find(const char *type);
/* ONNX's TensorProto.DataType -> element type; UNSET for none tensorjit has. */
jit_dtype tj_onnx_dtype(int32_t t);
/* ONNX's name of element type t and its number ("COMPLEX128 (15)"), in buf. */
const char *tj_onnx_type_name(int32_t t, char *buf, size_t len);

/* A name's tensor as a graph (or an outer graph) states it. */
typedef struct tj_onnx_value {
    int found;          /* 0: no input, output, value_info, initializer or Constant names it */
    int typed;          /* an element type is stated */
    int32_t elem_type;  /* ONNX's */
    int shaped;         /* a shape is stated (else: rank unknown) */
    jit_shape shape;    /* symbolic/unknown dims JIT_DIM_DYNAMIC */
    char why[160];      /* shaped but not usable: a negative dim, too many dims */
    const Onnx__TensorProto *constant; /* an initializer or a Constant node's value */
} tj_onnx_value;

/* onnx_names.c: a graph's names, each to what states it (built once per
 * graph; a lookup by scanning the graph made reading quadratic). */
enum { TJ_NAMED_TENSOR = 1, TJ_NAMED_LIST, TJ_NAMED_INFO, TJ_NAMED_SPARSE };
typedef struct tj_onnx_named {
    int kind;         /* TJ_NAMED_*: */
    const void *what; /* an initializer's or a Constant's TensorProto; a Constant
                         NodeProto of value_int(s)/value_float(s); a ValueInfoProto */
    const Onnx__TensorProto *default_value; /* a graph input's initializer of the same
                                               name (ir_version 4 on), or NULL */
} tj_onnx_named;
typedef struct tj_onnx_names tj_onnx_names;
/* NULL when memory is short. From ir_version 4 a graph input's name is
 * the input, even where an initializer (its default value) has it too. */
tj_onnx_names *tj_onnx_names_build(const Onnx__GraphProto *g, int64_t ir_version);
int tj_onnx_names_find(const tj_onnx_names *t, const char *name, tj_onnx_named *out);
void tj_onnx_names_free(tj_onnx_names *t);

/* One graph being read, and the graph it is a body of. */
typedef struct tj_onnx_scope {
    const Onnx__GraphProto *graph;
    const tj_onnx_names *names; /* the graph's */
    int64_t ir_version;         /* the model's */
    const struct tj_onnx_scope *outer;
    const char *prefix; /* before the names of its nodes: "" or "if1/then_branch/" */
    const char *dir;    /* external data files' folder, or NULL */
    int opset;          /* the ai.onnx opset the model imports */
} tj_onnx_scope;

/* onnx_graph.c */
void tj_onnx_lookup(const tj_onnx_scope *s, const char *name, tj_onnx_value *v);
/* Whether name is, where the lookup found nothing, a sparse tensor of s
 * or a graph around it (a sparse_initializer, or a Constant's
 * sparse_value), which tensorjit does not read. */
int tj_onnx_is_sparse(const tj_onnx_scope *s, const char *name);

/* onnx_node.c: one indexing node into a layer. */
void tj_onnx_read_node(const tj_onnx_scope *s, const Onnx__NodeProto *node, const tj_onnx_op *op,
                       int position, tj_model_layer *out);

/* onnx_const.c: a constant input's payload as its dims and type need it:
 * raw_data's bytes, the typed field's count, or an external range inside
 * the model's folder (not read). 0, or -1 with the layer refused naming
 * the tensor. */
int tj_onnx_check_const_payload(const tj_onnx_scope *s, const Onnx__TensorProto *t,
                                const char *name, tj_model_layer *out);
/* Checks the indices of a constant against the data's dims
 * (jit_index_dims); 0, or -1 with the layer refused or skipped. */
int tj_onnx_check_const_indices(const tj_onnx_scope *s, const Onnx__TensorProto *t,
                                const char *input, tj_model_layer *out);

/* onnx_order.c: 0 when every graph (bodies included) defines each name
 * once, names no two nodes alike, and its nodes can run in some order,
 * the file's or another (ONNX Runtime sorts them itself); -1 with one
 * line in err naming the name defined twice and its definitions, or a
 * node on a cycle and the value that closes it, as ONNX Runtime refuses
 * such graphs. */
int tj_onnx_check_order(const Onnx__GraphProto *g, const char *file, char *err, size_t err_len);

#endif
