/*
 * Reading ONNX models (ModelProto, the ai.onnx domain) for their indexing
 * nodes, into the model layer of ov_ir.h: each GatherND, Gather,
 * GatherElements, ScatterND, ScatterElements and Scatter node of the main
 * graph and of every If / Loop / Scan body becomes a tj_model_layer.
 * Shapes come from the graph's inputs, outputs, value_info and
 * initializers (an outer graph's names are seen inside its bodies);
 * symbolic or absent dims are dynamic. Constant indices (initializers,
 * embedded or in external data files inside the model's folder) are read
 * and checked against the data's dims.
 */
#ifndef TJ_ONNX_MODEL_H
#define TJ_ONNX_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "ov_ir.h"

/* The deepest message nesting read (a body inside a node's attribute is
 * three levels below its graph): deeper files are refused before they
 * are decoded, protobuf-c's decoder recursing once per level. */
#define TJ_ONNX_MAX_DEPTH 96
/* The largest file read: protobuf's own limit on a message. */
#define TJ_ONNX_MAX_BYTES ((int64_t)2 << 30)

/* 0 and *model, or -1 and one line in err naming where and what. External
 * data files are looked for in the folder of `path`. */
int tj_onnx_read(const char *path, const tj_model_opts *opts, tj_model *model, char *err,
                 size_t err_len);
/* The same from memory; dir is the folder of external data files (NULL:
 * a tensor in one is not read, its node skipped with why). */
int tj_onnx_parse(const uint8_t *bytes, size_t len, const char *name, const char *dir,
                  const tj_model_opts *opts, tj_model *model, char *err, size_t err_len);

/* Either format by the file's name: FILE.onnx is ONNX, the rest OpenVINO
 * IR (or a fragment). */
int tj_model_load(const char *path, const tj_model_opts *opts, tj_model *model, char *err,
                  size_t err_len);
/* 1 when this build reads ONNX; the node types it compiles, "A/B/..."
 * ("" without the reader). */
int tj_onnx_available(void);
const char *tj_onnx_node_types(void);

#endif
