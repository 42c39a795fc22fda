/*
 * Reading OpenVINO IR (.xml + .bin) for its GatherND and ScatterUpdate
 * layers: each becomes a tensorjit signature, or a reason why it cannot
 * (dynamic dims, an axis that is not a constant, ...). Also reads a bare
 * <layer> fragment as the operation specs print it.
 */
#ifndef TJ_OV_IR_H
#define TJ_OV_IR_H

#include <stddef.h>

#include "tensorjit.h"

typedef enum tj_layer_op { TJ_LAYER_GATHER_ND = 1, TJ_LAYER_SCATTER_UPDATE = 2 } tj_layer_op;

typedef struct tj_model_layer {
    char name[128];
    char id[32];
    tj_layer_op op;
    int opset;                 /* 5 or 8 for GatherND, 3 for ScatterUpdate */
    int usable;                /* 0: skip, see `skip` */
    char skip[256];            /* why it cannot be compiled ("" when usable) */
    char note[256];            /* defaults taken, e.g. for fragments */
    jit_gather_nd_sig gather;
    jit_scatter_update_sig scatter;
    jit_shape ir_output;       /* the output port's shape as the IR states it */
    int ir_output_known;
} tj_model_layer;

typedef struct tj_model {
    tj_model_layer *layers;
    int count;
    int fragment; /* 1: bare <layer> elements, no <net> */
} tj_model;

typedef struct tj_model_opts {
    jit_dtype dtype;      /* for fragments, which name no types; default f32 */
    jit_dtype index_type; /* default i64 */
    int opset;            /* GatherND layers without a version: 5 or 8 (0 means 8) */
    int have_axis;        /* a fragment's ScatterUpdate axis */
    int64_t axis;
} tj_model_opts;

/* 0 and *model, or -1 and one line in err naming where and what. The .bin
 * is FILE.bin beside FILE.xml, read only for the constants it needs. */
int tj_model_read(const char *xml_path, const tj_model_opts *opts, tj_model *model, char *err,
                  size_t err_len);
/* The same from memory; bin_path may be NULL (then no constant is read). */
int tj_model_parse(const char *xml, size_t len, const char *name, const char *bin_path,
                   const tj_model_opts *opts, tj_model *model, char *err, size_t err_len);
void tj_model_free(tj_model *model);

/* "FP32"/"f32"/"boolean"... -> element type; UNSET if unknown. */
jit_dtype tj_ov_type(const char *name);

#endif
