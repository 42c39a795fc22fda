/*
 * A graph's names, each to what states it, in a hash table built once per
 * graph. Looking a name up by scanning the graph's nodes, initializers and
 * value_info made a model's reading quadratic in its nodes: 20,000 nodes
 * took 9.9 s, and a 3 MB file of 100,000 never finished (a user's trial).
 * The first to state a name wins, in the order the lookup has always
 * taken: initializers, Constant nodes, value_info, graph inputs, outputs,
 * then sparse tensors (read by no one: named for the message);
 * but from ir_version 4, where an initializer also named by a graph input
 * is that input's default value (ONNX's IR), the input comes first, so the
 * name is the caller's tensor and not a constant.
 */
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

typedef struct tj_onnx_entry {
    const char *name; /* the file's (the decoded model's): NULL for a free slot */
    tj_onnx_named what;
} tj_onnx_entry;

struct tj_onnx_names {
    size_t mask; /* slots - 1, slots a power of two at least twice the entries */
    tj_onnx_entry *slot;
};

static size_t tj_name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

/* name -> what, unless the name is there already (the first wins). */
static void tj_names_put(tj_onnx_names *t, const char *name, int kind, const void *what)
{
    if (!name || !name[0])
        return;
    size_t i = tj_name_hash(name) & t->mask;
    for (; t->slot[i].name; i = (i + 1) & t->mask)
        if (strcmp(t->slot[i].name, name) == 0)
            return;
    t->slot[i].name = name;
    t->slot[i].what.kind = kind;
    t->slot[i].what.what = what;
}

/* The entry of name, or NULL. */
static tj_onnx_entry *tj_names_slot(const tj_onnx_names *t, const char *name)
{
    if (!name || !name[0])
        return NULL;
    for (size_t i = tj_name_hash(name) & t->mask; t->slot[i].name; i = (i + 1) & t->mask)
        if (strcmp(t->slot[i].name, name) == 0)
            return &t->slot[i];
    return NULL;
}

static int tj_is_named(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* A Constant node's `value` tensor, or NULL. */
static const Onnx__TensorProto *tj_constant_tensor(const Onnx__NodeProto *n)
{
    for (size_t a = 0; a < n->n_attribute; a++)
        if (n->attribute[a] && tj_is_named(n->attribute[a]->name, "value") && n->attribute[a]->t)
            return n->attribute[a]->t;
    return NULL;
}

/* Whether a Constant node makes its output from value_int(s) or
 * value_float(s). */
static int tj_constant_is_list(const Onnx__NodeProto *n)
{
    for (size_t a = 0; a < n->n_attribute; a++) {
        const Onnx__AttributeProto *at = n->attribute[a];
        if (at && at->name &&
            (tj_is_named(at->name, "value_int") || tj_is_named(at->name, "value_ints") ||
             tj_is_named(at->name, "value_float") || tj_is_named(at->name, "value_floats")))
            return 1;
    }
    return 0;
}

static void tj_names_put_infos(tj_onnx_names *t, Onnx__ValueInfoProto *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i])
            tj_names_put(t, list[i]->name, TJ_NAMED_INFO, list[i]);
}

static void tj_names_put_constants(tj_onnx_names *t, const Onnx__GraphProto *g, int lists)
{
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (!n || !tj_is_named(n->op_type, "Constant") || n->n_output < 1)
            continue;
        const Onnx__TensorProto *c = tj_constant_tensor(n);
        if (!lists && c)
            tj_names_put(t, n->output[0], TJ_NAMED_TENSOR, c);
        else if (lists && !c && tj_constant_is_list(n))
            tj_names_put(t, n->output[0], TJ_NAMED_LIST, n);
    }
}

tj_onnx_names *tj_onnx_names_build(const Onnx__GraphProto *g, int64_t ir_version)
{
    size_t count = g->n_initializer + g->n_node + g->n_value_info + g->n_input + g->n_output +
                   g->n_sparse_initializer;
    size_t slots = 16;
    while (slots < 2 * count)
        slots *= 2;
    tj_onnx_names *t = malloc(sizeof *t);
    if (!t || !(t->slot = calloc(slots, sizeof *t->slot))) {
        free(t);
        return NULL;
    }
    t->mask = slots - 1;
    if (ir_version >= 4)
        tj_names_put_infos(t, g->input, g->n_input);
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i])
            tj_names_put(t, g->initializer[i]->name, TJ_NAMED_TENSOR, g->initializer[i]);
    if (ir_version >= 4) /* the inputs' default values, to hold against their declarations */
        for (size_t i = 0; i < g->n_initializer; i++) {
            tj_onnx_entry *e = g->initializer[i] ? tj_names_slot(t, g->initializer[i]->name) : NULL;
            if (e && e->what.kind == TJ_NAMED_INFO && !e->what.default_value)
                e->what.default_value = g->initializer[i];
        }
    tj_names_put_constants(t, g, 0);
    tj_names_put_constants(t, g, 1);
    tj_names_put_infos(t, g->value_info, g->n_value_info);
    tj_names_put_infos(t, g->input, g->n_input);
    tj_names_put_infos(t, g->output, g->n_output);
    /* last: only where nothing else states the name, for the message */
    for (size_t i = 0; i < g->n_sparse_initializer; i++)
        if (g->sparse_initializer[i] && g->sparse_initializer[i]->values)
            tj_names_put(t, g->sparse_initializer[i]->values->name, TJ_NAMED_SPARSE,
                         g->sparse_initializer[i]);
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (n && tj_is_named(n->op_type, "Constant") && n->n_output >= 1)
            for (size_t a = 0; a < n->n_attribute; a++)
                if (n->attribute[a] && n->attribute[a]->sparse_tensor)
                    tj_names_put(t, n->output[0], TJ_NAMED_SPARSE, n);
    }
    return t;
}

int tj_onnx_names_find(const tj_onnx_names *t, const char *name, tj_onnx_named *out)
{
    const tj_onnx_entry *e = t ? tj_names_slot(t, name) : NULL;
    if (e)
        *out = e->what;
    return e != NULL;
}

void tj_onnx_names_free(tj_onnx_names *t)
{
    if (t)
        free(t->slot);
    free(t);
}
