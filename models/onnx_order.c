/*
 * Whether each graph of a model can run: some order of its nodes in which
 * every value is computed before a node reads it. ONNX's checker asks the
 * file's order to be one; ONNX Runtime sorts the nodes itself and refuses
 * a graph with a cycle ("the graph is not acyclic"). tensorjit reads as
 * ONNX Runtime does: an unsorted graph is read, a cycle is refused,
 * naming a node on it and the value that closes it.
 *
 * A node depends on the nodes whose outputs it reads, and, as ONNX
 * Runtime's implicit inputs, on those its bodies (If, Loop, Scan: every
 * graph attribute) read from its own graph: a Loop whose body reads `y`
 * runs after the node that makes `y`. A name resolves in the innermost
 * graph that defines it (a node's output, a graph input or initializer:
 * a body's own input shadows an outer value, as in ONNX Runtime); inputs
 * and initializers are no node's, so no edge. Each graph is sorted on its
 * own (Kahn's algorithm, iterative), after its bodies have added their
 * edges to it: O(nodes + edges), every name hashed once
 * and looked up in at most the nesting depth of graphs, which the decoder
 * bounds (TJ_ONNX_MAX_DEPTH); only that nesting recurses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* A node's index in its graph. 32 bits hold every one: a node is 2 bytes
 * of file at least, a file 2 GiB at most; half the memory of size_t. */
typedef uint32_t tj_ix;
/* A definition that is a graph input or initializer, no node. */
#define TJ_NOT_NODE UINT32_MAX

/* 16 bytes: a lookup's cost is the miss on its slot, so the table is small. */
typedef struct tj_def {
    const char *name; /* the file's; NULL: a free slot */
    uint32_t hash;    /* compared first: names of one long prefix cost no strcmp each */
    tj_ix node;       /* the node that outputs it, or TJ_NOT_NODE */
} tj_def;

/* One dependency: `to` reads `value`, which `from` outputs. */
typedef struct tj_edge {
    const char *value;
    tj_ix from, to;
    int in_body; /* read inside one of to's bodies (an implicit input) */
} tj_edge;

typedef struct tj_check {
    const char *file;
    char *err;
    size_t err_len;
} tj_check;

/* One graph being checked, and the graph it is a body of. */
typedef struct tj_frame {
    const Onnx__GraphProto *g;
    struct tj_frame *outer;
    tj_check *check;
    char path[256];  /* before its nodes' names, as layers are named: "" or "loop/body/" */
    tj_def *def;     /* its names, open addressing */
    size_t mask;
    tj_ix at;        /* the node whose inputs or bodies are being read */
    tj_ix *seen;     /* per node: at + 1 once it -> at is an edge (a value read twice is one) */
    tj_edge *edge;
    size_t edges, cap;
} tj_frame;

static uint32_t tj_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static tj_def *tj_def_find(const tj_frame *f, const char *name, uint32_t hash)
{
    for (size_t i = hash & f->mask; f->def[i].name; i = (i + 1) & f->mask)
        if (f->def[i].hash == hash && strcmp(f->def[i].name, name) == 0)
            return &f->def[i];
    return NULL;
}

/* name -> node unless defined already: the first definition wins. Two
 * are not SSA, which ONNX Runtime refuses ("Duplicate definition of
 * name") and this check does not judge. */
static void tj_def_put(tj_frame *f, const char *name, tj_ix node)
{
    if (!name || !name[0])
        return;
    uint32_t hash = tj_hash(name);
    size_t i = hash & f->mask;
    for (; f->def[i].name; i = (i + 1) & f->mask)
        if (f->def[i].hash == hash && strcmp(f->def[i].name, name) == 0)
            return;
    f->def[i] = (tj_def){.name = name, .hash = hash, .node = node};
}

/* The graph's definitions, node outputs first: where a file also names
 * one as an input or initializer (not SSA), reading it as the node's
 * misses no dependency. */
static int tj_defs_build(tj_frame *f)
{
    const Onnx__GraphProto *g = f->g;
    size_t count = g->n_input + g->n_initializer + g->n_sparse_initializer, slots = 16;
    for (size_t i = 0; i < g->n_node; i++)
        count += g->node[i] ? g->node[i]->n_output : 0;
    while (slots < 2 * count)
        slots *= 2;
    if (!(f->def = calloc(slots, sizeof *f->def)))
        return -1;
    f->mask = slots - 1;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; g->node[i] && k < g->node[i]->n_output; k++)
            tj_def_put(f, g->node[i]->output[k], (tj_ix)i);
    for (size_t i = 0; i < g->n_input; i++)
        if (g->input[i])
            tj_def_put(f, g->input[i]->name, TJ_NOT_NODE);
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i])
            tj_def_put(f, g->initializer[i]->name, TJ_NOT_NODE);
    for (size_t i = 0; i < g->n_sparse_initializer; i++) {
        const Onnx__SparseTensorProto *s = g->sparse_initializer[i];
        if (s && s->values)
            tj_def_put(f, s->values->name, TJ_NOT_NODE);
    }
    return 0;
}

static int tj_out_of_memory(const tj_check *c)
{
    return tj_model_fail(c->err, c->err_len, "%s: out of memory checking the graph's order",
                         c->file);
}

static int tj_add_edge(tj_frame *f, tj_ix from, const char *value, int in_body)
{
    if (f->seen[from] == f->at + 1)
        return 0;
    f->seen[from] = f->at + 1;
    if (f->edges == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        tj_edge *grown = realloc(f->edge, cap * sizeof *grown);
        if (!grown)
            return tj_out_of_memory(f->check);
        f->edge = grown;
        f->cap = cap;
    }
    f->edge[f->edges++] = (tj_edge){.from = from, .to = f->at, .value = value, .in_body = in_body};
    return 0;
}

/* A name read in graph f: an edge in the innermost graph that defines it,
 * if a node there outputs it, into the node of that graph being read
 * (the reader itself, or the node whose body reads it). Undefined names
 * are no edge: the walk says what it lacks of them. */
static int tj_resolve(tj_frame *f, const char *name)
{
    if (!name || !name[0]) /* an optional input left out */
        return 0;
    uint32_t hash = tj_hash(name);
    for (tj_frame *in = f; in; in = in->outer) {
        const tj_def *d = tj_def_find(in, name, hash);
        if (d)
            return d->node == TJ_NOT_NODE ? 0 : tj_add_edge(in, d->node, name, in != f);
    }
    return 0;
}

static int tj_check_graph(tj_frame *f);

/* A node's name for messages: its own, or "Op#i" as the walk names a
 * nameless node's bodies. */
static void tj_node_label(const Onnx__NodeProto *n, size_t i, char *buf, size_t len)
{
    if (n && n->name && n->name[0])
        snprintf(buf, len, "%s", n->name);
    else
        snprintf(buf, len, "%s#%zu", n && n->op_type ? n->op_type : "node", i);
}

/* The bodies among node i's attributes, each checked inside f. */
static int tj_check_bodies(tj_frame *f, const Onnx__NodeProto *n, size_t i)
{
    char node[128] = ""; /* named at its first body: a snprintf per node cost 5% */
    for (size_t a = 0; a < n->n_attribute; a++) {
        const Onnx__AttributeProto *at = n->attribute[a];
        size_t count = at ? at->n_graphs + (at->g != NULL) : 0;
        for (size_t k = 0; k < count; k++) {
            const Onnx__GraphProto *g = k < at->n_graphs ? at->graphs[k] : at->g;
            if (!g)
                continue;
            if (!node[0])
                tj_node_label(n, i, node, sizeof node);
            tj_frame body = {.g = g, .outer = f, .check = f->check};
            snprintf(body.path, sizeof body.path, "%.120s%.100s/%.30s/", f->path, /* as the walk's */
                     f->path[0] && node[0] == '/' ? node + 1 : node, at->name ? at->name : "graph");
            if (tj_check_graph(&body) != 0)
                return -1;
        }
    }
    return 0;
}

/* Edges in adjacency form: for node v, idx[start[v] .. start[v + 1]) are
 * the indices of the edges from v (by_to: into v). */
static size_t *tj_adjacency(const tj_frame *f, int by_to, size_t **idx)
{
    size_t n = f->g->n_node, *start = calloc(n + 1, sizeof *start);
    *idx = malloc((f->edges ? f->edges : 1) * sizeof **idx);
    if (!start || !*idx) {
        free(start);
        free(*idx);
        return NULL;
    }
    for (size_t e = 0; e < f->edges; e++)
        start[(by_to ? f->edge[e].to : f->edge[e].from) + 1]++;
    for (size_t v = 0; v < n; v++)
        start[v + 1] += start[v];
    for (size_t e = 0; e < f->edges; e++) /* start[v] moves to v's end... */
        (*idx)[start[by_to ? f->edge[e].to : f->edge[e].from]++] = e;
    for (size_t v = n; v > 0; v--) /* ...and back to its beginning */
        start[v] = start[v - 1];
    start[0] = 0;
    return start;
}

/* At most max bytes of s into buf, control bytes as \xNN: the message
 * is one line whatever the file names (the CLI escapes the rest). */
static const char *tj_escaped(const char *s, size_t max, char *buf, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; s[i] && i < max && o + 5 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        o += (size_t)(c < 0x20 || c == 0x7f ? snprintf(buf + o, len - o, "\\x%02x", c)
                                            : snprintf(buf + o, len - o, "%c", c));
    }
    buf[o] = '\0';
    return buf;
}

/* "'loop/body/b'": node i of f named as layers are. */
static void tj_node_text(const tj_frame *f, tj_ix i, char *buf, size_t len)
{
    char label[128], path[520], name[260];
    tj_node_label(f->g->node[i], i, label, sizeof label);
    snprintf(buf, len, "'%s%s'", tj_escaped(f->path, 128, path, sizeof path),
             tj_escaped(label, 64, name, sizeof name));
}

static const char *tj_op_text(const tj_frame *f, tj_ix i, char *buf, size_t len)
{
    const Onnx__NodeProto *n = f->g->node[i];
    return tj_escaped(n && n->op_type ? n->op_type : "?", 32, buf, len);
}

/* The message: node `on` reads `read->value` from read->from, around a
 * cycle of `length` nodes. */
static int tj_cycle_message(const tj_frame *f, tj_ix on, const tj_edge *read, size_t length)
{
    const tj_check *c = f->check;
    char who[800], whose[140], from[800], op[140], value[260];
    tj_node_text(f, on, who, sizeof who);
    tj_node_text(f, read->from, from, sizeof from);
    tj_op_text(f, on, whose, sizeof whose);
    tj_op_text(f, read->from, op, sizeof op);
    tj_escaped(read->value, 64, value, sizeof value);
    const char *where = read->in_body ? " in a body" : "";
    if (length == 1)
        return tj_model_fail(c->err, c->err_len, "%s: the graph has a cycle: node %s (%s) reads "
                             "'%s'%s, its own output (ONNX Runtime refuses a graph with a cycle: "
                             "\"the graph is not acyclic\")", c->file, who, whose, value, where);
    return tj_model_fail(c->err, c->err_len, "%s: the graph has a cycle of %zu nodes: node %s (%s) "
                         "reads '%s'%s from node %s (%s), which depends on the output of %s "
                         "itself (ONNX Runtime refuses a graph with a cycle: \"the graph is not "
                         "acyclic\")", c->file, length, who, whose, value, where, from, op, who);
}

/* The nodes Kahn's algorithm left (indeg > 0) each read a value of
 * another left node; stepping back along such reads from any of them
 * must come round to a node stepped on already, which is on a cycle. */
static int tj_report_cycle(const tj_frame *f, const tj_ix *indeg)
{
    size_t n = f->g->n_node, *into = NULL, *start = tj_adjacency(f, 1, &into);
    size_t *step = calloc(n, sizeof *step), *via = malloc(n * sizeof *via);
    if (!start || !step || !via) {
        free(start), free(into), free(step), free(via);
        return tj_out_of_memory(f->check);
    }
    tj_ix v = 0;
    while (!indeg[v])
        v++;
    for (size_t k = 1;; k++) {
        step[v] = k;
        size_t e = start[v];
        while (indeg[f->edge[into[e]].from] == 0)
            e++;
        via[v] = into[e];
        if (step[f->edge[via[v]].from])
            break;
        v = f->edge[via[v]].from;
    }
    /* v is the last node stepped on; the node it reads from closes the cycle */
    tj_ix on = f->edge[via[v]].from;
    int rc = tj_cycle_message(f, on, &f->edge[via[on]], step[v] - step[on] + 1);
    free(start), free(into), free(step), free(via);
    return rc;
}

/* Kahn's algorithm on f's edges: 0 when every node can run, else the
 * cycle reported. */
static int tj_sort(const tj_frame *f)
{
    size_t n = f->g->n_node, *out = NULL, *start = tj_adjacency(f, 0, &out);
    tj_ix *indeg = calloc(n ? n : 1, sizeof *indeg), *ready = malloc((n ? n : 1) * sizeof *ready);
    int rc = 0;
    if (!start || !indeg || !ready) {
        rc = tj_out_of_memory(f->check);
        goto done;
    }
    size_t queued = 0;
    for (size_t e = 0; e < f->edges; e++)
        indeg[f->edge[e].to]++;
    for (size_t v = 0; v < n; v++)
        if (!indeg[v])
            ready[queued++] = (tj_ix)v;
    for (size_t head = 0; head < queued; head++)
        for (size_t k = start[ready[head]]; k < start[ready[head] + 1]; k++)
            if (--indeg[f->edge[out[k]].to] == 0)
                ready[queued++] = f->edge[out[k]].to;
    if (queued < n)
        rc = tj_report_cycle(f, indeg);
done:
    free(start), free(out), free(indeg), free(ready);
    return rc;
}

/* Reads f's nodes' inputs and bodies into edges (bodies' reads of f's
 * values land in f), then sorts f. */
static int tj_check_graph(tj_frame *f)
{
    const Onnx__GraphProto *g = f->g;
    if (g->n_node >= TJ_NOT_NODE) /* not in 2 GiB (tj_ix), but said rather than wrapped */
        return tj_model_fail(f->check->err, f->check->err_len, "%s: a graph of %zu nodes",
                             f->check->file, g->n_node);
    int rc = tj_defs_build(f);
    if (rc == 0 && !(f->seen = calloc(g->n_node ? g->n_node : 1, sizeof *f->seen)))
        rc = -1;
    if (rc != 0)
        rc = tj_out_of_memory(f->check);
    for (size_t i = 0; rc == 0 && i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        f->at = (tj_ix)i;
        for (size_t k = 0; n && rc == 0 && k < n->n_input; k++)
            rc = tj_resolve(f, n->input[k]);
        if (n && rc == 0)
            rc = tj_check_bodies(f, n, i);
    }
    if (rc == 0)
        rc = tj_sort(f);
    free(f->def), free(f->seen), free(f->edge);
    return rc;
}

int tj_onnx_check_order(const Onnx__GraphProto *g, const char *file, char *err, size_t err_len)
{
    tj_check c = {.file = file, .err = err, .err_len = err_len};
    tj_frame top = {.g = g, .check = &c};
    return tj_check_graph(&top);
}
