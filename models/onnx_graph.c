/*
 * Walking an ONNX model: its main graph and, under each node's graph
 * attributes (If's then_branch/else_branch, Loop's and Scan's body), every
 * body, in file order, a body's nodes after the node that runs it. Names
 * resolve in the graph and then in the graphs around it, as ONNX scopes
 * them: an If branch sees its parent's tensors.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx_internal.h"

/* "int32 [3,?]": a value's type and shape, for messages. */
static const char *tj_onnx_value_text(const tj_onnx_value *v, char *buf, size_t len)
{
    jit_dtype t = tj_onnx_dtype(v->elem_type);
    size_t n = (size_t)snprintf(buf, len, "%s [", t != JIT_DTYPE_UNSET ? jit_dtype_name(t) : "?");
    for (int i = 0; i < v->shape.rank && n < len; i++)
        n += (size_t)(v->shape.dims[i] == JIT_DIM_DYNAMIC
                          ? snprintf(buf + n, len - n, "%s?", i ? "," : "")
                          : snprintf(buf + n, len - n, "%s%lld", i ? "," : "",
                                     (long long)v->shape.dims[i]));
    if (n < len)
        snprintf(buf + n, len - n, "]");
    return buf;
}

/* A TypeProto's tensor type and shape into v. */
static void tj_value_from_type(const Onnx__TypeProto *tp, tj_onnx_value *v)
{
    if (tp && tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
        tp->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET) {
        snprintf(v->why, sizeof v->why, "is no tensor (a sequence, map, optional or sparse "
                 "type), which no op of the family takes");
        return;
    }
    if (!tp || !tp->tensor_type)
        return;
    const Onnx__TypeProto__Tensor *t = tp->tensor_type;
    v->typed = t->has_elem_type;
    v->elem_type = t->elem_type;
    if (!t->shape)
        return;
    v->shaped = 1;
    if (t->shape->n_dim > JIT_MAX_RANK) {
        snprintf(v->why, sizeof v->why, "has %zu dims, more than %d", t->shape->n_dim,
                 JIT_MAX_RANK);
        return;
    }
    v->shape.rank = (int)t->shape->n_dim;
    for (size_t i = 0; i < t->shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = t->shape->dim[i];
        int fixed = d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        if (fixed && d->dim_value < 0 && !v->why[0])
            snprintf(v->why, sizeof v->why, "dim %zu is %lld, not a size", i,
                     (long long)d->dim_value);
        /* a dim_param ("batch") or no value at all: known only at run time */
        v->shape.dims[i] = fixed ? d->dim_value : JIT_DIM_DYNAMIC;
    }
}

/* A constant tensor's type and dims into v. */
static void tj_value_from_tensor(const Onnx__TensorProto *t, tj_onnx_value *v)
{
    v->constant = t;
    v->typed = t->has_data_type;
    v->elem_type = t->data_type;
    v->shaped = 1;
    if (t->n_dims > JIT_MAX_RANK) {
        snprintf(v->why, sizeof v->why, "has %zu dims, more than %d", t->n_dims, JIT_MAX_RANK);
        return;
    }
    v->shape.rank = (int)t->n_dims;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 && !v->why[0])
            snprintf(v->why, sizeof v->why, "dim %zu is %lld, not a size", i,
                     (long long)t->dims[i]);
        v->shape.dims[i] = t->dims[i];
    }
}

/* A Constant node of value_int(s) or value_float(s) (opset 12+) rather
 * than a tensor: its type and shape, which is all a layer needs of an
 * input; no TensorProto holds its values, so it is not v->constant, and
 * indices made so are checked by the kernel at run time like any input's. */
static void tj_value_from_list(const Onnx__NodeProto *n, tj_onnx_value *v)
{
    for (size_t a = 0; a < n->n_attribute; a++) {
        const Onnx__AttributeProto *at = n->attribute[a];
        if (!at || !at->name)
            continue;
        int ints = strcmp(at->name, "value_int") == 0 || strcmp(at->name, "value_ints") == 0;
        int floats = strcmp(at->name, "value_float") == 0 || strcmp(at->name, "value_floats") == 0;
        if (!ints && !floats)
            continue;
        v->typed = v->shaped = 1;
        v->elem_type = ints ? ONNX__TENSOR_PROTO__DATA_TYPE__INT64
                            : ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
        int list = strcmp(at->name, "value_ints") == 0 || strcmp(at->name, "value_floats") == 0;
        v->shape.rank = list ? 1 : 0;
        v->shape.dims[0] = list ? (int64_t)(ints ? at->n_ints : at->n_floats) : 0;
        return;
    }
}

/* A graph input's declaration against its default value (an initializer
 * of its name): the element type, the rank and every static dim must
 * agree, or v->why says how they differ (the declaration won silently). */
static void tj_default_agrees(const Onnx__TensorProto *t, tj_onnx_value *v)
{
    tj_onnx_value d;
    memset(&d, 0, sizeof d);
    tj_value_from_tensor(t, &d);
    if (d.why[0]) { /* the initializer itself is wrong: say that, not a contradiction */
        snprintf(v->why, sizeof v->why, "has an initializer (its default value) that %.100s", d.why);
        return;
    }
    int same = (!v->typed || !d.typed || v->elem_type == d.elem_type) &&
               (!v->shaped || v->shape.rank == d.shape.rank);
    for (int i = 0; same && v->shaped && i < v->shape.rank; i++)
        same = v->shape.dims[i] == JIT_DIM_DYNAMIC || v->shape.dims[i] == d.shape.dims[i];
    if (same)
        return;
    char a[96], b[96];
    snprintf(v->why, sizeof v->why, "is declared %s by the graph input but its initializer "
             "(the default value) is %s", tj_onnx_value_text(v, a, sizeof a),
             tj_onnx_value_text(&d, b, sizeof b));
}

/* One graph's word on `name` (onnx_names.c: a constant first, its dims
 * being the truth, then value_info, inputs, outputs). 1 when the graph
 * names it. */
static int tj_lookup_in(const tj_onnx_scope *s, const char *name, tj_onnx_value *v)
{
    tj_onnx_named got;
    if (!tj_onnx_names_find(s->names, name, &got) || got.kind == TJ_NAMED_SPARSE)
        return 0;
    if (got.kind == TJ_NAMED_TENSOR)
        tj_value_from_tensor(got.what, v);
    else if (got.kind == TJ_NAMED_LIST)
        tj_value_from_list(got.what, v);
    else
        tj_value_from_type(((const Onnx__ValueInfoProto *)got.what)->type, v);
    if (got.default_value && !v->why[0])
        tj_default_agrees(got.default_value, v);
    return 1;
}

int tj_onnx_is_sparse(const tj_onnx_scope *s, const char *name)
{
    tj_onnx_named got;
    for (; s && name && name[0]; s = s->outer)
        if (tj_onnx_names_find(s->names, name, &got))
            return got.kind == TJ_NAMED_SPARSE;
    return 0;
}

void tj_onnx_lookup(const tj_onnx_scope *s, const char *name, tj_onnx_value *v)
{
    memset(v, 0, sizeof *v);
    for (; s && name && name[0]; s = s->outer)
        if (tj_lookup_in(s, name, v)) {
            v->found = 1;
            return;
        }
}

/* The layers read so far; grown as nodes are found, within the budget
 * the decoder has (TJ_ONNX_LAYER_BUDGET): a layer is some 3 KB, and a file
 * of bare indexing nodes some 10 bytes a node (200,000 in 2 MB took 754 MB,
 * a user's trial). */
typedef struct tj_onnx_walk {
    tj_model *model;
    int capacity;
    int64_t max_layers;
    int failed; /* out of memory, or (2) past max_layers */
    int64_t nodes; /* visited so far, bodies included: a layer's id */
} tj_onnx_walk;

/* Decoded structs take 16x a file's bytes and 256 MiB more at most
 * (onnx_decode.c); its layers the same again. */
#define TJ_ONNX_LAYER_BUDGET(len) ((int64_t)(len) * 16 + ((int64_t)256 << 20))

static tj_model_layer *tj_next_layer(tj_onnx_walk *w)
{
    tj_model *m = w->model;
    if (m->count >= w->max_layers) {
        w->failed = 2;
        return NULL;
    }
    if (m->count == w->capacity) {
        int cap = w->capacity ? 2 * w->capacity : 16;
        tj_model_layer *grown = realloc(m->layers, (size_t)cap * sizeof *grown);
        if (!grown) {
            w->failed = 1;
            return NULL;
        }
        m->layers = grown;
        w->capacity = cap;
    }
    tj_model_layer *l = &m->layers[m->count++];
    memset(l, 0, sizeof *l);
    return l;
}

static void tj_walk_graph(tj_onnx_walk *w, const tj_onnx_scope *s);

/* The bodies among a node's attributes, each a scope inside s. The
 * nesting is bounded: the decoder refused files nested deeper. */
static void tj_walk_bodies(tj_onnx_walk *w, const tj_onnx_scope *s, const Onnx__NodeProto *n,
                           int position)
{
    char node[128], prefix[sizeof w->model->layers->name];
    if (n->name && n->name[0])
        snprintf(node, sizeof node, "%s", n->name);
    else
        snprintf(node, sizeof node, "%s#%d", n->op_type ? n->op_type : "node", position);
    for (size_t a = 0; a < n->n_attribute; a++) {
        const Onnx__AttributeProto *at = n->attribute[a];
        if (!at)
            continue;
        size_t count = at->n_graphs + (at->g != NULL);
        for (size_t k = 0; k < count && !w->failed; k++) {
            const Onnx__GraphProto *g = k < at->n_graphs ? at->graphs[k] : at->g;
            if (!g)
                continue;
            snprintf(prefix, sizeof prefix, "%s%s/%s/", s->prefix,
                     s->prefix[0] && node[0] == '/' ? node + 1 : node,
                     at->name ? at->name : "graph");
            tj_onnx_scope inner = {.graph = g, .outer = s, .prefix = prefix, .dir = s->dir,
                                   .opset = s->opset, .ir_version = s->ir_version,
                                   .names = tj_onnx_names_build(g, s->ir_version)};
            if (!inner.names)
                w->failed = 1;
            else
                tj_walk_graph(w, &inner);
            tj_onnx_names_free((tj_onnx_names *)inner.names);
        }
    }
}

static int tj_is_default_domain(const char *domain)
{
    return !domain || !domain[0] || strcmp(domain, "ai.onnx") == 0;
}

static void tj_walk_graph(tj_onnx_walk *w, const tj_onnx_scope *s)
{
    for (size_t i = 0; i < s->graph->n_node && !w->failed; i++) {
        const Onnx__NodeProto *n = s->graph->node[i];
        if (!n)
            continue;
        const tj_onnx_op *op = tj_is_default_domain(n->domain) ? tj_onnx_op_find(n->op_type) : NULL;
        int64_t id = w->nodes++;
        if (op) {
            tj_model_layer *l = tj_next_layer(w);
            if (l) {
                tj_onnx_read_node(s, n, op, (int)i, l);
                /* ONNX nodes have none: their order in the whole model, so that
                 * "= id N" names one node, not each graph's Nth */
                snprintf(l->id, sizeof l->id, "%" PRId64, id);
            }
        }
        tj_walk_bodies(w, s, n, (int)i);
    }
}

/* The indexing nodes of the model's local functions (ModelProto.functions),
 * listed as skipped: a function's tensors have no shapes until a call site
 * binds them, which tensorjit does not follow (without the listing, a
 * model whose Gathers all sit in functions read as having none). */
static void tj_list_function_nodes(tj_onnx_walk *w, const Onnx__ModelProto *m)
{
    for (size_t f = 0; f < m->n_functions && !w->failed; f++) {
        const Onnx__FunctionProto *fn = m->functions[f];
        for (size_t i = 0; fn && i < fn->n_node && !w->failed; i++) {
            const Onnx__NodeProto *n = fn->node[i];
            const tj_onnx_op *op = n && tj_is_default_domain(n->domain) ? tj_onnx_op_find(n->op_type)
                                                                        : NULL;
            tj_model_layer *l = op ? tj_next_layer(w) : NULL;
            if (!l)
                continue;
            snprintf(l->name, sizeof l->name, "functions/%.100s/%.100s",
                     fn->name ? fn->name : "", n->name && n->name[0] ? n->name : op->type);
            snprintf(l->id, sizeof l->id, "%" PRId64, w->nodes++);
            snprintf(l->type, sizeof l->type, "%s", op->as);
            l->sig.op = op->op;
            tj_model_skip(l, "in local function '%.100s' (ModelProto.functions), whose tensors "
                          "have shapes only at a call site: tensorjit reads the graph's nodes, not "
                          "inside functions (inline them first: onnx.inliner, ONNX 1.16 on)",
                          fn->name ? fn->name : "");
        }
    }
}

/* The version of the ai.onnx opset the model imports; 0 if none. */
static int64_t tj_model_opset(const Onnx__ModelProto *m)
{
    for (size_t i = 0; i < m->n_opset_import; i++)
        if (m->opset_import[i] && tj_is_default_domain(m->opset_import[i]->domain))
            return m->opset_import[i]->version;
    return 0;
}

int tj_onnx_parse(const uint8_t *bytes, size_t len, const char *name, const char *dir,
                  const tj_model_opts *opts, tj_model *model, char *err, size_t err_len)
{
    (void)opts; /* an ONNX model states every type: nothing to default */
    memset(model, 0, sizeof *model);
    tj_onnx_doc *doc = tj_onnx_decode(bytes, len, name, err, err_len);
    if (!doc)
        return -1;
    const Onnx__ModelProto *m = tj_onnx_model(doc);
    int64_t opset = tj_model_opset(m);
    int rc = 0;
    if (!m->graph)
        rc = tj_model_fail(err, err_len, "%s: not an ONNX model: it has no graph", name);
    else if (!m->has_ir_version || m->ir_version < 3)
        rc = tj_model_fail(err, err_len, "%s: ir_version %lld: ONNX models have 3 or later (opset "
                     "imports came with 3)",
                     name, m->has_ir_version ? (long long)m->ir_version : 0);
    else if (opset < 0 || opset > 10000) /* 0: no ai.onnx import, no ai.onnx node */
        rc = tj_model_fail(err, err_len, "%s: imports ai.onnx opset %lld: no ONNX opset has that "
                     "number", name, (long long)opset);
    else /* a graph that cannot run is no model, whatever its layers would say */
        rc = tj_onnx_check_order(m->graph, name, err, err_len);
    if (rc == 0) {
        tj_onnx_scope top = {.graph = m->graph, .prefix = "", .dir = dir, .opset = (int)opset,
                             .ir_version = m->ir_version,
                             .names = tj_onnx_names_build(m->graph, m->ir_version)};
        tj_onnx_walk w = {.model = model,
                          .max_layers = TJ_ONNX_LAYER_BUDGET(len) / (int64_t)sizeof(tj_model_layer),
                          .failed = !top.names};
        if (top.names)
            tj_walk_graph(&w, &top);
        tj_onnx_names_free((tj_onnx_names *)top.names);
        tj_list_function_nodes(&w, m);
        long long read = model->count;
        if (w.failed == 2) {
            tj_model_free(model);
            rc = tj_model_fail(err, err_len, "%s: more than %lld indexing nodes, more than a "
                               "file of %zu bytes is given memory for (16 times its size and "
                               "256 MiB)", name, (long long)w.max_layers, len);
        } else if (w.failed) {
            tj_model_free(model);
            rc = tj_model_fail(err, err_len, "%s: out of memory after %lld nodes", name, read);
        }
    }
    tj_onnx_release(doc);
    return rc;
}

/* The whole file: opened without blocking (a FIFO named x.onnx would wait
 * for a writer forever) and read if it is a regular file. */
static uint8_t *tj_slurp(const char *path, size_t *len, char *err, size_t err_len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return tj_model_fail(err, err_len, "%s: cannot open: %s", path, strerror(errno)), NULL;
    uint8_t *buf = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        snprintf(err, err_len, "%s: not a regular file", path);
    else if (st.st_size > TJ_ONNX_MAX_BYTES)
        snprintf(err, err_len, "%s: larger than 2 GiB, protobuf's limit on a message", path);
    else if (!(buf = malloc(st.st_size ? (size_t)st.st_size : 1)))
        snprintf(err, err_len, "%s: out of memory", path);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r <= 0) {
            snprintf(err, err_len, "%s: cannot read: %s", path, r ? strerror(errno) : "ends early");
            free(buf);
            buf = NULL;
        }
        got += r > 0 ? (size_t)r : 0;
    }
    close(fd);
    *len = got;
    return buf;
}

int tj_onnx_read(const char *path, const tj_model_opts *opts, tj_model *model, char *err,
                 size_t err_len)
{
    memset(model, 0, sizeof *model);
    size_t len = 0;
    uint8_t *bytes = tj_slurp(path, &len, err, err_len);
    if (!bytes)
        return -1;
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) ? (int)(slash - path) : 1, path);
    else
        snprintf(dir, sizeof dir, ".");
    int rc = tj_onnx_parse(bytes, len, path, dir, opts, model, err, err_len);
    free(bytes);
    return rc;
}
