/*
 * Whether each graph of a model can run: every name defined once, and
 * some order of its nodes in which every value is computed before a node
 * reads it.
 *
 * Definitions (ONNX's IR: "a value name used in a graph must have a
 * unique definition, with the exception that the same name MAY appear in
 * both the graph input list and graph initializer list"): a node output,
 * a graph input or an (optionally sparse) initializer defines a name, and
 * a second definition in one graph is refused, as ONNX Runtime refuses it
 * ("Duplicate definition of name") and ONNX's checker (SSA form). A graph
 * input with an initializer of its name is no second definition: from
 * ir_version 4 the initializer is the input's default value. A body's
 * node output must also differ from "the names from the outer scopes that
 * are visible in the nested subgraph" (the IR again; the checker, which
 * ONNX Runtime runs on each node and so on its bodies, refuses it), but
 * for the outputs of the node whose body it is, which the checker adds to
 * the scope only after that node's bodies. The checker and ONNX Runtime
 * see only outer values made before the node, in the file's order; this
 * check reads any order, so it refuses the name wherever the outer value
 * is made (docs/models.md: stricter than ONNX Runtime there). A body's own input or
 * initializer may shadow an outer name (the checker and ONNX Runtime let
 * it). Two nodes of one graph may not share a non-empty node name (the
 * IR's node namespace; ONNX Runtime refuses "two nodes with same node
 * name", per graph: a body's node may be named like an outer one).
 *
 * Order: ONNX's checker asks the file's order to be one; ONNX Runtime
 * sorts the nodes itself and refuses a graph with a cycle ("the graph is
 * not acyclic"). tensorjit reads as ONNX Runtime does: an unsorted graph
 * is read, a cycle is refused, naming a node on it and the value that
 * closes it.
 *
 * A node depends on the nodes whose outputs it reads, and, as ONNX
 * Runtime's implicit inputs, on those its bodies (If, Loop, Scan: every
 * graph attribute) read from its own graph: a Loop whose body reads `y`
 * runs after the node that makes `y`. A name resolves in the innermost
 * graph that defines it (a node's output, a graph input or initializer:
 * a body's own input shadows an outer value, as in ONNX Runtime); inputs
 * and initializers are no node's, so no edge. Each graph is sorted on its
 * own (Kahn's algorithm, iterative), after its bodies have added their
 * edges to it: O(nodes + edges), every name hashed once (the table that
 * resolves names also finds a second definition as it is built) and
 * looked up in at most the nesting depth of graphs, which the decoder
 * bounds (TJ_ONNX_MAX_DEPTH); only that nesting recurses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* A node's index in its graph. 32 bits hold every one: a node is 2 bytes
 * of file at least, a file 2 GiB at most; half the memory of size_t. */
typedef uint32_t tj_ix;
/* Definitions that are no node's, in a tj_def's node field (node indices
 * stay below TJ_NOT_NODE): graph inputs, an input that an initializer
 * gives a default value, initializers and sparse ones. */
#define TJ_NOT_NODE (UINT32_MAX - 3)
#define TJ_INPUT (UINT32_MAX - 3)
#define TJ_DEFAULTED (UINT32_MAX - 2)
#define TJ_INITIALIZER (UINT32_MAX - 1)
#define TJ_SPARSE UINT32_MAX

/* 16 bytes: a lookup's cost is the miss on its slot, so the table is small. */
typedef struct tj_def {
    const char *name; /* the file's; NULL: a free slot */
    uint32_t hash;    /* compared first: names of one long prefix cost no strcmp each */
    tj_ix node;       /* the node that outputs it, or a TJ_NOT_NODE kind */
} tj_def;

/* A node name's slot: the node, whose name is compared only when the
 * hashes agree (8 bytes: the table lives only while its graph's
 * definitions are read). */
typedef struct tj_named {
    uint32_t hash;
    tj_ix node_1; /* node + 1; 0: a free slot */
} tj_named;

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
    tj_named *named; /* its nodes' names, while its definitions are read */
    size_t named_mask;
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

static int tj_out_of_memory(const tj_check *c)
{
    return tj_model_fail(c->err, c->err_len, "%s: out of memory checking the graph's names and "
                         "order", c->file);
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
            return d->node >= TJ_NOT_NODE ? 0 : tj_add_edge(in, d->node, name, in != f);
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
        *idx = NULL; /* the callers free it on every path */
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
    /* a body's node "/e/P" is layer "if/then_branch/e/P", as the walk names it */
    const char *own = f->path[0] && label[0] == '/' ? label + 1 : label;
    snprintf(buf, len, "'%s%s'", tj_escaped(f->path, 128, path, sizeof path),
             tj_escaped(own, 64, name, sizeof name));
}

static const char *tj_op_text(const tj_frame *f, tj_ix i, char *buf, size_t len)
{
    const Onnx__NodeProto *n = f->g->node[i];
    return tj_escaped(n && n->op_type ? n->op_type : "?", 32, buf, len);
}

/* "the main graph" or "body 'loop/body'": graph f, for messages. */
static const char *tj_graph_text(const tj_frame *f, char *buf, size_t len)
{
    if (!f->path[0])
        return "the main graph";
    char path[520];
    size_t n = strlen(tj_escaped(f->path, 128, path, sizeof path));
    if (n && path[n - 1] == '/') /* the path ends in one, before its nodes' names */
        path[n - 1] = '\0';
    snprintf(buf, len, "body '%s'", path);
    return buf;
}

/* A definition `def` of graph f, for messages: "node 'B' (Add) outputs
 * it", "it is a graph input". */
static const char *tj_def_text(const tj_frame *f, tj_ix def, char *buf, size_t len)
{
    static const char *const listed[] = {
        "it is a graph input", "it is a graph input, with an initializer as its default value",
        "it is an initializer", "it is a sparse initializer"};
    if (def >= TJ_NOT_NODE)
        return listed[def - TJ_NOT_NODE];
    char who[800], op[140];
    tj_node_text(f, def, who, sizeof who);
    snprintf(buf, len, "node %s (%s) outputs it", who, tj_op_text(f, def, op, sizeof op));
    return buf;
}

static int tj_is_constant(const tj_frame *f, tj_ix def)
{
    const Onnx__NodeProto *n = def < TJ_NOT_NODE ? f->g->node[def] : NULL;
    return n && n->op_type && strcmp(n->op_type, "Constant") == 0;
}

/* Why node `node` may not define what `def` does: ONNX Runtime makes
 * Constant nodes initializers before it looks, and of two initializers
 * reads the last, with a warning; any other node's second definition it
 * refuses. */
static const char *tj_twice_why(const tj_frame *f, tj_ix def, tj_ix node)
{
    if (tj_is_constant(f, node) && (def >= TJ_NOT_NODE || tj_is_constant(f, def)))
        return " (ONNX defines each name of a graph once, in SSA form, and its checker refuses "
               "it; ONNX Runtime, which makes Constant nodes initializers, warns and reads the "
               "last)";
    return " (ONNX defines each name of a graph once, in SSA form; ONNX Runtime refuses "
           "\"Duplicate definition of name\")";
}

/* Node `node` of f outputs `name`, which `def` of f defines already. */
static int tj_twice_message(const tj_frame *f, const char *name, tj_ix def, tj_ix node)
{
    const tj_check *c = f->check;
    char value[260], graph[540], first[1000], who[800], op[140];
    const char *where = tj_graph_text(f, graph, sizeof graph), *why = tj_twice_why(f, def, node);
    tj_escaped(name, 64, value, sizeof value);
    tj_node_text(f, node, who, sizeof who);
    tj_op_text(f, node, op, sizeof op);
    if (def == node)
        return tj_model_fail(c->err, c->err_len, "%s: '%s' is defined twice in %s: node %s (%s) "
                             "outputs it twice%s", c->file, value, where, who, op, why);
    return tj_model_fail(c->err, c->err_len, "%s: '%s' is defined twice in %s: %s, and node %s "
                         "(%s) outputs it too%s", c->file, value, where,
                         tj_def_text(f, def, first, sizeof first), who, op, why);
}

/* A graph input (kind TJ_INPUT) or an initializer of f named like one
 * listed before it: an input twice, or two initializers. */
static int tj_listed_message(const tj_frame *f, const char *name, tj_ix kind)
{
    const tj_check *c = f->check;
    char value[260], graph[540];
    const char *where = tj_graph_text(f, graph, sizeof graph);
    tj_escaped(name, 64, value, sizeof value);
    if (kind == TJ_INPUT)
        return tj_model_fail(c->err, c->err_len, "%s: '%s' is defined twice in %s: it is listed "
                             "twice as a graph input (ONNX's checker refuses it, and ONNX Runtime: "
                             "\"Duplicate definition-site\")", c->file, value, where);
    return tj_model_fail(c->err, c->err_len, "%s: '%s' is defined twice in %s: two initializers "
                         "(dense or sparse) have it (ONNX's checker refuses it; ONNX Runtime reads "
                         "the last, with a warning, where tensorjit would read the first)",
                         c->file, value, where);
}

/* Node `node` of body f outputs `name`, which graph `in` around f
 * defines (`def`). */
static int tj_outer_message(const tj_frame *f, const char *name, tj_ix node, const tj_frame *in,
                            tj_ix def)
{
    const tj_check *c = f->check;
    char value[260], graph[540], around[540], other[1000], who[800], op[140];
    tj_escaped(name, 64, value, sizeof value);
    tj_node_text(f, node, who, sizeof who);
    tj_op_text(f, node, op, sizeof op);
    return tj_model_fail(c->err, c->err_len, "%s: '%s' is defined twice: node %s (%s) of %s "
                         "outputs it, and %s around that body defines it too: %s (ONNX's IR asks "
                         "a body's node outputs to differ from the names of the graphs around "
                         "it; its checker, which ONNX Runtime runs too, refuses it)",
                         c->file, value, who, op, tj_graph_text(f, graph, sizeof graph),
                         tj_graph_text(in, around, sizeof around),
                         tj_def_text(in, def, other, sizeof other));
}

/* "st" of 1st, "nd" of 2nd: a node's place in its graph's list. */
static const char *tj_ordinal(size_t n)
{
    static const char *const suffix[] = {"th", "st", "nd", "rd"};
    return n % 100 / 10 == 1 || n % 10 > 3 ? "th" : suffix[n % 10];
}

/* Nodes a and b of f have one name. */
static int tj_named_message(const tj_frame *f, tj_ix a, tj_ix b)
{
    const tj_check *c = f->check;
    char graph[540], who[800], op_a[140], op_b[140];
    tj_node_text(f, b, who, sizeof who);
    return tj_model_fail(c->err, c->err_len, "%s: two nodes of %s are named %s: the %zu%s (%s) "
                         "and the %zu%s (%s) in its list (a graph's node names are unique in "
                         "ONNX's IR; ONNX Runtime refuses \"two nodes with same node name\")",
                         c->file, tj_graph_text(f, graph, sizeof graph), who, (size_t)a + 1,
                         tj_ordinal((size_t)a + 1), tj_op_text(f, a, op_a, sizeof op_a),
                         (size_t)b + 1, tj_ordinal((size_t)b + 1),
                         tj_op_text(f, b, op_b, sizeof op_b));
}

/* name -> node in f, unless f defines it already: then that definition. */
static tj_def *tj_def_put(tj_frame *f, const char *name, uint32_t hash, tj_ix node)
{
    size_t i = hash & f->mask;
    for (; f->def[i].name; i = (i + 1) & f->mask)
        if (f->def[i].hash == hash && strcmp(f->def[i].name, name) == 0)
            return &f->def[i];
    f->def[i] = (tj_def){.name = name, .hash = hash, .node = node};
    return NULL;
}

/* A graph input, initializer or sparse initializer (kind) of f. Inputs
 * come first: an initializer of an input's name is its default value
 * (ir_version 4 on; before, every initializer was an input), no second
 * definition. */
static int tj_put_listed(tj_frame *f, const char *name, tj_ix kind)
{
    if (!name || !name[0])
        return 0;
    tj_def *d = tj_def_put(f, name, tj_hash(name), kind);
    if (!d)
        return 0;
    if (d->node == TJ_INPUT && kind != TJ_INPUT) {
        d->node = TJ_DEFAULTED; /* a second initializer of the input's name is one too many */
        return 0;
    }
    return tj_listed_message(f, name, kind);
}

/* A body's node output named like a value of a graph around it. The
 * innermost graph that defines the name is the one the body sees; the
 * outputs of the node whose body this is are not seen yet (ONNX's checker
 * adds them to the scope after that node's bodies, which is how an If's
 * branch may name its output as the If does). */
static int tj_outer_check(const tj_frame *f, const char *name, uint32_t hash, tj_ix node)
{
    for (const tj_frame *in = f->outer; in; in = in->outer) {
        const tj_def *d = tj_def_find(in, name, hash);
        if (d)
            return d->node == in->at ? 0 : tj_outer_message(f, name, node, in, d->node);
    }
    return 0;
}

/* Node i's name into f's table of them: a second node of the name refused. */
static int tj_put_node_name(tj_frame *f, tj_ix i)
{
    const char *name = f->g->node[i]->name;
    uint32_t hash = tj_hash(name);
    size_t s = hash & f->named_mask;
    for (; f->named[s].node_1; s = (s + 1) & f->named_mask) {
        tj_ix other = f->named[s].node_1 - 1;
        if (f->named[s].hash == hash && strcmp(f->g->node[other]->name, name) == 0)
            return tj_named_message(f, other, i);
    }
    f->named[s] = (tj_named){.hash = hash, .node_1 = i + 1};
    return 0;
}

/* Node i's outputs and name into f's tables, each refused where defined
 * already, in f or (a body's output) in a graph around it. */
static int tj_put_node(tj_frame *f, tj_ix i)
{
    const Onnx__NodeProto *n = f->g->node[i];
    if (!n)
        return 0;
    for (size_t k = 0; k < n->n_output; k++) {
        const char *name = n->output[k];
        if (!name || !name[0]) /* an optional output left out */
            continue;
        uint32_t hash = tj_hash(name);
        const tj_def *d = tj_def_put(f, name, hash, i);
        if (d)
            return tj_twice_message(f, name, d->node, i);
        if (f->outer && tj_outer_check(f, name, hash, i) != 0)
            return -1;
    }
    return n->name && n->name[0] && f->named ? tj_put_node_name(f, i) : 0;
}

/* The tables of f's names (kept until f is sorted: its nodes' and its
 * bodies' reads resolve in it) and of its nodes' names (only while they
 * are put), each of at least twice the entries: short probes. */
static int tj_defs_alloc(tj_frame *f)
{
    const Onnx__GraphProto *g = f->g;
    size_t count = g->n_input + g->n_initializer + g->n_sparse_initializer, slots = 16, named = 16;
    for (size_t i = 0; i < g->n_node; i++)
        count += g->node[i] ? g->node[i]->n_output : 0;
    while (slots < 2 * count)
        slots *= 2;
    while (named < 2 * g->n_node)
        named *= 2;
    f->def = calloc(slots, sizeof *f->def);
    f->named = g->n_node > 1 ? calloc(named, sizeof *f->named) : NULL; /* one node: no two */
    if (!f->def || (g->n_node > 1 && !f->named))
        return tj_out_of_memory(f->check);
    f->mask = slots - 1;
    f->named_mask = named - 1;
    return 0;
}

/* f's definitions: inputs, initializers, then node outputs, so that a
 * node's output is the second definition the message names. */
static int tj_defs_build(tj_frame *f)
{
    const Onnx__GraphProto *g = f->g;
    int rc = tj_defs_alloc(f);
    for (size_t i = 0; rc == 0 && i < g->n_input; i++)
        if (g->input[i])
            rc = tj_put_listed(f, g->input[i]->name, TJ_INPUT);
    for (size_t i = 0; rc == 0 && i < g->n_initializer; i++)
        if (g->initializer[i])
            rc = tj_put_listed(f, g->initializer[i]->name, TJ_INITIALIZER);
    for (size_t i = 0; rc == 0 && i < g->n_sparse_initializer; i++) {
        const Onnx__SparseTensorProto *s = g->sparse_initializer[i];
        if (s && s->values)
            rc = tj_put_listed(f, s->values->name, TJ_SPARSE);
    }
    for (size_t i = 0; rc == 0 && i < g->n_node; i++)
        rc = tj_put_node(f, (tj_ix)i);
    free(f->named);
    f->named = NULL;
    return rc;
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
