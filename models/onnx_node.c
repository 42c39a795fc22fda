/*
 * One ONNX indexing node into a tensorjit layer: its attributes (checked
 * against the opset that defines them), its inputs' shapes and types (as
 * the file states them: a node whose shapes it does not give is skipped,
 * with why), the signature checked by the library, and the output the
 * file states compared with the one the signature gives.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

static const Onnx__AttributeProto *tj_attribute(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i] && n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
            return n->attribute[i];
    return NULL;
}

/* An INT attribute: 1 and *v, 0 when absent, -1 (refused) when it is of
 * another type or defined only from a later opset than the model's. */
static int tj_int_attribute(const tj_onnx_scope *s, const Onnx__NodeProto *n, const char *name,
                            int since, int64_t *v, tj_model_layer *out)
{
    const Onnx__AttributeProto *a = tj_attribute(n, name);
    if (!a)
        return 0;
    if (!since)
        return tj_model_refuse(out, "attribute %s is not %s's in any opset", name, n->op_type);
    if (s->opset < since)
        return tj_model_refuse(out, "attribute %s is not %s's in opset %d (it comes with opset %d)",
                         name, n->op_type, s->opset, since);
    if ((a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) || !a->has_i)
        return tj_model_refuse(out, "attribute %s is not an INT", name);
    *v = a->i;
    return 1;
}

/* ONNX's reduction names (SPEC.md section 9: add and mul are sum and prod). */
static int tj_reduction(const tj_onnx_scope *s, const Onnx__NodeProto *n, const tj_onnx_op *op,
                        tj_model_layer *out)
{
    const Onnx__AttributeProto *a = tj_attribute(n, "reduction");
    if (!a)
        return 0;
    if (!op->reduction_since || s->opset < op->reduction_since)
        return tj_model_refuse(out, "attribute reduction is not %s's in opset %d%s", n->op_type,
                         s->opset, op->reduction_since ? " (it comes with opset 16)" : "");
    if ((a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING) || !a->has_s)
        return tj_model_refuse(out, "attribute reduction is not a STRING");
    char v[16] = "";
    if (a->s.len < sizeof v)
        memcpy(v, a->s.data, a->s.len);
    static const struct { const char *name; jit_reduction r; int minmax; } names[] = {
        {"none", JIT_REDUCTION_NONE, 0}, {"add", JIT_REDUCTION_SUM, 0},
        {"mul", JIT_REDUCTION_PROD, 0},  {"min", JIT_REDUCTION_MIN, 1},
        {"max", JIT_REDUCTION_MAX, 1},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (a->s.len != strlen(names[i].name) || strcmp(v, names[i].name) != 0)
            continue;
        if (names[i].minmax && s->opset < op->minmax_since)
            return tj_model_refuse(out, "reduction '%s' comes with opset %d; the model imports %d", v,
                             op->minmax_since, s->opset);
        out->sig.reduction = names[i].r;
        return 0;
    }
    return tj_model_refuse(out, "reduction '%.*s' is not one of none, add, mul, min, max",
                     a->s.len < 64 ? (int)a->s.len : 64, (const char *)a->s.data);
}

/* Input k's shape and element type as the file states them. */
static int tj_input(const tj_onnx_scope *s, const Onnx__NodeProto *n, size_t k, const char *what,
                    jit_shape *shape, jit_dtype *type, tj_onnx_value *v, tj_model_layer *out)
{
    if (k >= n->n_input || !n->input[k] || !n->input[k][0])
        return tj_model_refuse(out, "input %zu (%s) is missing", k, what);
    const char *name = n->input[k];
    tj_onnx_lookup(s, name, v);
    if (!v->found && tj_onnx_is_sparse(s, name))
        return tj_model_skip(out, "input %zu (%s) '%s' is a sparse tensor (a sparse_initializer "
                             "or a Constant's sparse_value), which tensorjit does not read", k,
                             what, name);
    if (!v->found)
        return tj_model_skip(out, "input %zu (%s) '%s': the file states no type or shape for it (no "
                       "value_info, graph input, output or initializer names it: "
                       "onnx.shape_inference.infer_shapes adds them)", k, what, name);
    if (v->why[0])
        return tj_model_refuse(out, "input %zu (%s) '%s' %s", k, what, name, v->why);
    if (!v->shaped)
        return tj_model_skip(out, "input %zu (%s) '%s': the file states no shape for it (a "
                             "value_info of its rank, every dim symbolic if need be, makes the "
                             "node a dynamic kernel)", k, what, name);
    if (!v->typed || v->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__UNDEFINED)
        return tj_model_skip(out, "input %zu (%s) '%s': the file states no element type for it",
                       k, what, name);
    *type = tj_onnx_dtype(v->elem_type);
    char tn[96];
    if (*type == JIT_DTYPE_UNSET)
        return tj_model_skip(out, "input %zu (%s) '%s' is of ONNX element type %s, which tensorjit "
                       "does not compile", k, what, name, tj_onnx_type_name(v->elem_type, tn, sizeof tn));
    *shape = v->shape;
    return 0;
}

static int tj_attributes(const tj_onnx_scope *s, const Onnx__NodeProto *n, const tj_onnx_op *op,
                         tj_model_layer *out)
{
    int64_t v = 0;
    jit_sig *sig = &out->sig;
    int got = op->has_axis ? tj_int_attribute(s, n, "axis", op->first_opset, &v, out) : 0;
    if (got < 0)
        return -1;
    /* axis and batch_dims fit far inside these bounds when valid; the
     * library names the range when they are not */
    if (v < -JIT_MAX_RANK || v > JIT_MAX_RANK)
        return tj_model_refuse(out, "axis %lld is not in [%d, %d]", (long long)v, -JIT_MAX_RANK,
                         JIT_MAX_RANK - 1);
    sig->axis = v;
    v = 0;
    if (tj_int_attribute(s, n, "batch_dims", op->batch_dims_since, &v, out) < 0)
        return -1;
    if (v < 0 || v > JIT_MAX_RANK)
        return tj_model_refuse(out, "batch_dims %lld is not in [0, %d]", (long long)v, JIT_MAX_RANK);
    sig->batch_dims = (int)v;
    return tj_reduction(s, n, op, out);
}

/* The node's output as the file states it, compared with the signature's:
 * the same rank, and the same size where both are static. */
static void tj_output(const tj_onnx_scope *s, const Onnx__NodeProto *n, tj_model_layer *out)
{
    tj_onnx_value v;
    jit_shape derived;
    tj_onnx_lookup(s, n->n_output ? n->output[0] : NULL, &v);
    if (!v.found || !v.shaped || v.why[0])
        return;
    out->ir_output = v.shape;
    out->ir_output_known = 1;
    if (jit_output_shape(&out->sig, &derived) != 0)
        return;
    if (!tj_model_shapes_agree(&derived, &v.shape)) {
        char a[160], b[160];
        tj_model_shape_text(&derived, NULL, a, sizeof a);
        tj_model_shape_text(&v.shape, NULL, b, sizeof b);
        tj_model_refuse(out, "the output shape of its inputs and attributes %s contradicts "
                        "the file's %s for '%s'", a, b, n->output[0]);
    } else if (v.typed && tj_onnx_dtype(v.elem_type) != out->sig.dtype) {
        char tn[96];
        tj_model_refuse(out, "the output's element type %s (its data's) contradicts the file's "
                        "%s for '%s'", jit_dtype_name(out->sig.dtype),
                        tj_onnx_type_name(v.elem_type, tn, sizeof tn), n->output[0]);
    }
}

/* The attributes op has in its newest opset, as a list for messages. */
static const char *tj_attribute_names(const tj_onnx_op *op)
{
    if (op->has_axis && op->reduction_since)
        return "axis, reduction";
    if (op->has_axis)
        return "axis";
    if (op->batch_dims_since)
        return "batch_dims";
    return op->reduction_since ? "reduction" : "none";
}

/* Name, id and version of the layer; -1 when the opset rules it out. */
static int tj_header(const tj_onnx_scope *s, const Onnx__NodeProto *n, const tj_onnx_op *op,
                     int position, tj_model_layer *out)
{
    if (n->name && n->name[0])
        /* a body's prefix ends in '/', and torch names nodes "/e/Gather_2" */
        snprintf(out->name, sizeof out->name, "%s%s", s->prefix,
                 s->prefix[0] && n->name[0] == '/' ? n->name + 1 : n->name);
    else
        snprintf(out->name, sizeof out->name, "%s%s#%d", s->prefix, op->type, position);
    snprintf(out->id, sizeof out->id, "%d", position);
    snprintf(out->type, sizeof out->type, "%s", op->as);
    out->sig.op = op->op;
    out->sig.opset = op->as_version;
    out->sig.index_policy = JIT_INDEX_NEGATIVE_WRAPS;
    tj_model_note(out, "ONNX %s, opset %d", op->type, s->opset);
    if (s->opset == 0)
        return tj_model_refuse(out, "the model imports no ai.onnx opset (opset_import), which "
                               "its %s node belongs to", op->type);
    if (s->opset < op->first_opset)
        return tj_model_refuse(out, "ONNX %s comes with opset %d; the model imports opset %d",
                         op->type, op->first_opset, s->opset);
    if (s->opset > 21)
        return tj_model_skip(out, "opset %d is newer than 21, the last tensorjit reads", s->opset);
    /* before 11 no op of the family defined negative indices; exporters
     * (torch's x[-1] at opset 9) write them meaning a count from the end,
     * and ONNX Runtime reads them so: wrapped, as from 11, and said */
    if (s->opset < 11)
        tj_model_note(out, "opset %d defines no negative index: read as from opset 11 (wrapping), "
                "as ONNX Runtime does", s->opset);
    if (strcmp(op->type, "Scatter") == 0 && s->opset >= 11)
        tj_model_note(out, "deprecated since opset 11: read as ScatterElements");
    return 0;
}

/* Whether indices and data have the same rank and, but along the axis,
 * the same static dims. */
static int tj_dims_but_axis_equal(const jit_sig *sig)
{
    const jit_shape *d = &sig->data_shape, *ix = &sig->indices_shape;
    int64_t axis = sig->axis < 0 ? sig->axis + d->rank : sig->axis;
    if (d->rank != ix->rank)
        return 0;
    for (int i = 0; i < d->rank; i++)
        if (i != axis && (d->dims[i] != ix->dims[i] || d->dims[i] == JIT_DIM_DYNAMIC))
            return 0;
    return 1;
}

/* A GatherND whose tuple length (indices' last dim) is symbolic has no
 * output rank until a call names it: the family is valid, and compiles as
 * one dynamic kernel, if some length is. */
static int tj_some_tuple_length_valid(const jit_sig *sig)
{
    const jit_shape *ix = &sig->indices_shape;
    if (sig->op != JIT_OP_GATHER_ND || ix->rank == 0 || ix->dims[ix->rank - 1] != JIT_DIM_DYNAMIC)
        return 0;
    /* the longest tuple makes the smallest output, and no other rule of
     * the op favours a shorter one: one try (a dynamic signature's costs a
     * search, and a hostile file may hold thousands of such nodes) */
    jit_shape o;
    jit_sig one = *sig;
    one.indices_shape.dims[ix->rank - 1] = sig->data_shape.rank - sig->batch_dims;
    if (one.indices_shape.dims[ix->rank - 1] >= 1 && jit_output_shape(&one, &o) == 0)
        return 1;
    jit_output_shape(sig, &o); /* the family's own error again, for the caller */
    return 0;
}

/* The node as ONNX's schema has it: its inputs and one output, and no
 * attribute the op lacks (ONNX's checker refuses such a node; read as it
 * stands, a third input or a misspelt attribute went unnoticed). */
static int tj_node_form(const Onnx__NodeProto *n, const tj_onnx_op *op, tj_model_layer *out)
{
    size_t want = op->has_updates ? 3 : 2;
    if (n->n_input != want)
        return tj_model_refuse(out, "ONNX %s takes %zu inputs; the node has %zu", op->type, want,
                               n->n_input);
    if (n->n_output != 1 || !n->output[0] || !n->output[0][0])
        return tj_model_refuse(out, "ONNX %s has one output; the node has %s", op->type,
                               n->n_output == 1 ? "an unnamed one" : n->n_output ? "more" : "none");
    for (size_t i = 0; i < n->n_attribute; i++) {
        const char *a = n->attribute[i] && n->attribute[i]->name ? n->attribute[i]->name : "";
        for (size_t j = 0; j < i; j++) /* the checker's rule; shape inference takes the last */
            if (n->attribute[j] && n->attribute[j]->name && strcmp(n->attribute[j]->name, a) == 0)
                return tj_model_refuse(out, "attribute '%.64s' appears more than once", a);
        int known = (op->has_axis && strcmp(a, "axis") == 0) ||
                    (op->batch_dims_since && strcmp(a, "batch_dims") == 0) ||
                    (op->reduction_since && strcmp(a, "reduction") == 0);
        /* batch_dims on Gather: the attribute checks name the opsets */
        if (!known && strcmp(a, "batch_dims") != 0 && strcmp(a, "reduction") != 0)
            return tj_model_refuse(out, "attribute '%.64s' is not one of ONNX %s's (%s)", a,
                                   op->type, tj_attribute_names(op));
    }
    return 0;
}

/* The updates input, or, where the file gives it no shape (torch's index_put
 * export), the shape ONNX's rules make it: ScatterND's indices.shape[:-1] +
 * data.shape[k:], ScatterElements' indices' shape; of data's type. */
static int tj_updates(const tj_onnx_scope *s, const Onnx__NodeProto *n, const tj_onnx_op *op,
                      tj_onnx_value *v, tj_model_layer *out)
{
    jit_sig *sig = &out->sig;
    const jit_shape *d = &sig->data_shape, *ix = &sig->indices_shape;
    tj_onnx_lookup(s, n->input[2], v);
    int64_t k = ix->rank ? ix->dims[ix->rank - 1] : -1;
    int nd = op->op == JIT_OP_SCATTER_ND_UPDATE;
    int derivable = !v->why[0] && !v->shaped &&
                    (!nd || (k != JIT_DIM_DYNAMIC && k >= 0 && k <= d->rank &&
                             ix->rank - 1 + d->rank - k <= JIT_MAX_RANK));
    if (!derivable)
        return tj_input(s, n, 2, "updates", &sig->updates_shape, &sig->updates_dtype, v, out);
    if (!nd) {
        sig->updates_shape = *ix;
    } else {
        jit_shape u = {.rank = 0};
        for (int i = 0; i < ix->rank - 1; i++)
            u.dims[u.rank++] = ix->dims[i];
        for (int i = (int)k; i < d->rank; i++)
            u.dims[u.rank++] = d->dims[i];
        sig->updates_shape = u;
    }
    jit_dtype t = v->typed ? tj_onnx_dtype(v->elem_type) : sig->dtype;
    sig->updates_dtype = t == JIT_DTYPE_UNSET ? sig->dtype : t;
    tj_model_note(out, "updates' shape from data and indices (the file states none)");
    return 0;
}

void tj_onnx_read_node(const tj_onnx_scope *s, const Onnx__NodeProto *n, const tj_onnx_op *op,
                       int position, tj_model_layer *out)
{
    jit_sig *sig = &out->sig;
    tj_onnx_value data, indices, updates;
    if (tj_header(s, n, op, position, out) || tj_node_form(n, op, out) ||
        tj_attributes(s, n, op, out) ||
        tj_input(s, n, 0, "data", &sig->data_shape, &sig->dtype, &data, out) ||
        tj_input(s, n, 1, "indices", &sig->indices_shape, &sig->index_type, &indices, out) ||
        (op->has_updates && tj_updates(s, n, op, &updates, out)))
        return;
    /* ONNX's own types, as its checker and ONNX Runtime hold a model to
     * them: Gather, GatherElements and ScatterElements take int32 or int64
     * (Tind), GatherND and ScatterND int64 alone, though the library would
     * run others */
    if (sig->index_type != JIT_I64 && (op->int64_indices || sig->index_type != JIT_I32)) {
        tj_model_refuse(out, "input 1 (indices) '%s' is %s: ONNX's %s takes %s indices",
                        n->input[1], jit_dtype_name(sig->index_type), op->type,
                        op->int64_indices ? "int64" : "int32 or int64");
        return;
    }
    /* ONNX's GatherElements (torch.gather's export) asks only for the
     * ranks to agree: indices no larger than data but along the axis, the
     * library's torch_dims, where they are not OpenVINO's equal dims */
    sig->torch_dims = op->op == JIT_OP_GATHER_ELEMENTS && !tj_dims_but_axis_equal(sig);
    jit_shape derived;
    if (jit_output_shape(sig, &derived) != 0 && !tj_some_tuple_length_valid(sig)) {
        tj_model_refuse(out, "%s", jit_last_error());
        return;
    }
    const tj_onnx_value *ins[3] = {&data, &indices, op->has_updates ? &updates : NULL};
    for (int k = 0; k < 3; k++)
        if (ins[k] && ins[k]->constant &&
            tj_onnx_check_const_payload(s, ins[k]->constant, n->input[k], out) != 0)
            return;
    if (indices.constant &&
        tj_onnx_check_const_indices(s, indices.constant, n->input[1], out) != 0)
        return;
    out->usable = 1;
    tj_output(s, n, out);
}
