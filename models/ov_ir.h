/*
 * Reading OpenVINO IR (.xml + .bin) for its indexing layers (the types of
 * models/ov_ops.c): each becomes a tensorjit signature, or a reason why it
 * cannot (an axis that is not a constant, ...). Dynamic dims (-1, ?, and
 * intervals a..b) become JIT_DIM_DYNAMIC, an interval's b the dim's bound. The bodies
 * of Loop, TensorIterator and If are read too, nested ones included. Also reads a
 * bare <layer> fragment as the operation specs print it.
 */
#ifndef TJ_OV_IR_H
#define TJ_OV_IR_H

#include <stddef.h>

#include "tensorjit.h"

/* An OpenVINO layer type tensorjit compiles (models/ov_ops.c). */
typedef struct tj_ov_op {
    const char *type;             /* the layer's `type` */
    jit_op op;
    /* {first opset, the op's version from it, its index policy}, ascending */
    struct {
        int opset, version;
        jit_index_policy policy;
    } versions[4];
    int updates_port;             /* input port of the updates; -1: none */
    int axis_port;                /* input port of the axis, a Const; -1: none */
    const char *axis_attr;        /* or the <data> attribute of the axis */
    const char *batch_dims_attr;  /* the <data> attribute of batch_dims, if any */
    const char *reduction_attr;   /* the <data> attribute of the reduction, if any */
    const char *init_val_attr;    /* the <data> attribute of use_init_val, if any */
    /* embedding bags (SPEC 10): the offsets or segment_ids are at updates_port
     * (the signature's updates_shape holds them); the input ports of the
     * optional per_sample_weights and default_index and of num_segments, 0
     * where the layer type has none (ports 0 and 1 are always the table and
     * the indices) */
    int weights_port, default_index_port, num_segments_port;
} tj_ov_op;

/* The entry of a layer type, or NULL; every type, "A/B/...", for messages. */
const tj_ov_op *tj_ov_op_find(const char *type);
/* The same whatever the case of type's letters (fragments only). */
const tj_ov_op *tj_ov_op_find_nocase(const char *type);
const char *tj_ov_op_types(void);

typedef struct tj_model_layer {
    char name[256];            /* a body's layers: "loop/body/name" (nested: "a/body/b/body/c") */
    char id[32];               /* in its own graph: a body's ids restart */
    char type[64];             /* the layer's type, e.g. "GatherND" */
    int usable;                /* 0: skip, see `skip` */
    int refused;               /* not usable because the IR is wrong (an attribute out of
                                  range, an output port its inputs contradict), not because
                                  tensorjit cannot compile it: an error, not a skip */
    char skip[256];            /* why it cannot be compiled ("" when usable) */
    char note[256];            /* defaults taken, e.g. for fragments */
    jit_sig sig;               /* op and opset (the op's version) included; dynamic dims
                                  JIT_DIM_DYNAMIC with their bounds (sig.*_bound) */
    jit_shape ir_output;       /* the output port's shape as the IR states it */
    int64_t ir_output_bound[JIT_MAX_RANK]; /* and the bounds of its dynamic dims */
    int ir_output_known;
    unsigned flags_used;       /* TJ_MODEL_USED_* bits: the options this layer took, so that
                                  a caller can refuse the ones no layer took */
} tj_model_layer;

enum {
    TJ_MODEL_USED_DTYPE = 1u << 0,
    TJ_MODEL_USED_INDEX_TYPE = 1u << 1,
    TJ_MODEL_USED_AXIS = 1u << 2,
    TJ_MODEL_USED_OPSET = 1u << 3,
    TJ_MODEL_OPSET_NOT_ITS = 1u << 4, /* would take --opset, but it is none of its versions */
    TJ_MODEL_USED_DEFAULT_INDEX = 1u << 5,
};

typedef struct tj_model {
    tj_model_layer *layers;
    int count;
    int fragment; /* 1: bare <layer> elements, no <net> */
} tj_model;

typedef struct tj_model_opts {
    jit_dtype dtype;      /* for fragments, which name no types; default f32 */
    jit_dtype index_type; /* default i64 */
    int have_dtype, have_index_type; /* given (--dtype, --index-type), not defaults */
    int opset;            /* the op's version for layers whose version attribute is no
                             opsetN (0: the op's default) */
    int have_axis;        /* a fragment's axis (a Const it cannot carry) */
    int64_t axis;
    int have_default_index; /* a fragment's bag default_index, the same way */
    int64_t default_index;
} tj_model_opts;

/* 0 and *model, or -1 and one line in err naming where and what. The .bin
 * is FILE.bin beside FILE.xml, read only for the constants it needs. */
int tj_model_read(const char *xml_path, const tj_model_opts *opts, tj_model *model, char *err,
                  size_t err_len);
/* The same from memory; bin_path may be NULL (then no constant is read). */
int tj_model_parse(const char *xml, size_t len, const char *name, const char *bin_path,
                   const tj_model_opts *opts, tj_model *model, char *err, size_t err_len);
void tj_model_free(tj_model *model);

/* Shared by the readers (model_layer.c). Refused: the file is wrong, the
 * command fails; skipped: the file does not say enough. Each writes the
 * reason to out->skip, clears usable and returns -1. */
int tj_model_refuse(tj_model_layer *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int tj_model_skip(tj_model_layer *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A note on how the layer was read, after those before it (", "). */
void tj_model_note(tj_model_layer *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A read that fails as a whole: the message into err; -1. */
int tj_model_fail(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "[2,?,?:8]", as the CLI prints shapes (bounds may be NULL). */
void tj_model_shape_text(const jit_shape *s, const int64_t *bounds, char *buf, size_t len);
/* Whether a derived output shape can be the one a file declares: the same
 * rank, and the same size wherever both are static (a dynamic dim on
 * either side is decided at run time). */
int tj_model_shapes_agree(const jit_shape *derived, const jit_shape *declared);

/* "FP32"/"f32"/"boolean"... -> element type; UNSET if unknown. */
jit_dtype tj_ov_type(const char *name);

#endif
