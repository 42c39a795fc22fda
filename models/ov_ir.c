/*
 * The OpenVINO IR reader. libxml2 parses; this file walks the tree:
 * <net><layers><layer id type version name><data .../><input><port id
 * precision><dim>..</dim></port>...</input><output>...</output></layer>
 * </layers><edges><edge from-layer from-port to-layer to-port/></edges>.
 * Element types come from a port's precision or, failing that, from the
 * layer feeding it; an axis given as an input (ScatterUpdate, Gather) from
 * the Const that feeds that port, read from the .bin at its offset. Which
 * port and attribute holds what is the layer type's entry in ov_ops.c.
 */
#include "ov_ir.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <libxml/hash.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TJ_MODEL_MAX_BYTES (256 << 20)

typedef struct tj_doc {
    xmlDocPtr doc;
    xmlNodePtr layers; /* parent of the <layer> elements (of the net, or of a body) */
    xmlNodePtr edges;  /* <edges>, or NULL (fragments) */
    const char *prefix; /* "loop/body/" before the names of a body's layers; "" */
    const char *name;
    const char *bin_path;
    const tj_model_opts *opts;
    int fragment;
    /* layer id -> <layer>, (to-layer, to-port) -> <edge>: built once per
     * graph (tj_doc_index), each lookup having scanned the graph (10,000
     * layers without port precisions took 45 s to read); NULL: scanned */
    xmlHashTablePtr ids, ends;
} tj_doc;

static int tj_is(xmlNodePtr n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static xmlNodePtr tj_child(xmlNodePtr n, const char *name)
{
    for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
        if (tj_is(c, name))
            return c;
    return NULL;
}

/* An attribute into buf; 1 if present. */
static int tj_attr(xmlNodePtr n, const char *name, char *buf, size_t len)
{
    xmlChar *v = n ? xmlGetProp(n, (const xmlChar *)name) : NULL;
    if (!v) {
        if (len)
            buf[0] = '\0';
        return 0;
    }
    snprintf(buf, len, "%s", (const char *)v);
    xmlFree(v);
    return 1;
}

/* The n-th <port> child of <input> or <output>, in document order. */
static xmlNodePtr tj_port(xmlNodePtr layer, const char *dir, int n)
{
    int i = 0;
    for (xmlNodePtr p = tj_child(tj_child(layer, dir), "port"); p; p = p->next)
        if (tj_is(p, "port") && i++ == n)
            return p;
    return NULL;
}

/* A non-negative integer filling t[0, n), or -2 when there is none (an
 * empty text); -1 when it is not one. */
static int64_t tj_dim_number(const char *t, size_t n)
{
    char buf[32], *end;
    while (n && isspace((unsigned char)*t))
        t++, n--;
    while (n && isspace((unsigned char)t[n - 1]))
        n--;
    if (!n)
        return -2;
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, t, n);
    buf[n] = '\0';
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    return errno || *end || v < -1 ? -1 : v == -1 ? -3 : v;
}

/* One <dim> as OpenVINO writes it (its IR reader's strToDimension): a
 * size; -1 or ? (dynamic); an interval a..b, a.. or ..b (dynamic, bounded
 * by b; a..a is the static a). The lower bound has no place in a
 * signature: a call below it is still served. 0 with *v (JIT_DIM_DYNAMIC
 * for a dynamic dim) and *bound (0: none), or -1. */
static int tj_dim_text(const char *t, int64_t *v, int64_t *bound)
{
    const char *dots = strstr(t, "..");
    *bound = 0;
    if (strchr(t, '?')) {
        *v = JIT_DIM_DYNAMIC;
        return 0;
    }
    if (!dots) {
        int64_t x = tj_dim_number(t, strlen(t));
        *v = x == -3 ? JIT_DIM_DYNAMIC : x;
        return x >= 0 || x == -3 ? 0 : -1;
    }
    int64_t lo = tj_dim_number(t, (size_t)(dots - t)), hi = tj_dim_number(dots + 2, strlen(dots + 2));
    lo = lo == -2 ? 0 : lo;
    if (lo < 0 || hi == -1 || (hi >= 0 && hi < lo))
        return -1;
    *v = hi == lo ? hi : JIT_DIM_DYNAMIC;
    *bound = hi > 0 && hi != lo ? hi : 0; /* ..0 (only 0) stays unbounded: a bound is > 0 */
    return 0;
}

/* A port's <dim> list and the bounds of its dynamic dims (bounds NULL:
 * a dynamic dim is refused, the port must be static); 0, or with why
 * TJ_PORT_CANNOT (no signature holds it: skip the layer) or TJ_PORT_BAD (a
 * dim that is no size: the file contradicts itself, refuse the layer). */
enum { TJ_PORT_CANNOT = -1, TJ_PORT_BAD = -2 };

static int tj_port_shape(xmlNodePtr port, jit_shape *s, int64_t *bounds, char *why, size_t len)
{
    s->rank = 0;
    for (xmlNodePtr d = port ? port->children : NULL; d; d = d->next) {
        if (!tj_is(d, "dim"))
            continue;
        if (s->rank == JIT_MAX_RANK) {
            snprintf(why, len, "more than %d dims", JIT_MAX_RANK);
            return TJ_PORT_CANNOT;
        }
        xmlChar *txt = xmlNodeGetContent(d);
        const char *t = txt ? (const char *)txt : "";
        int64_t v, bound;
        int ok = tj_dim_text(t, &v, &bound) == 0;
        if (!ok || (v == JIT_DIM_DYNAMIC && !bounds)) {
            snprintf(why, len, "dim %d is %s '%s'", s->rank, ok ? "dynamic" : "not a size", t);
            xmlFree(txt);
            return ok ? TJ_PORT_CANNOT : TJ_PORT_BAD;
        }
        xmlFree(txt);
        if (bounds)
            bounds[s->rank] = bound;
        s->dims[s->rank++] = v;
    }
    return 0;
}

static xmlNodePtr tj_layer_by_id(const tj_doc *d, const char *id)
{
    char buf[32];
    if (d->ids)
        return xmlHashLookup(d->ids, BAD_CAST id);
    for (xmlNodePtr l = d->layers ? d->layers->children : NULL; l; l = l->next)
        if (tj_is(l, "layer") && tj_attr(l, "id", buf, sizeof buf) && strcmp(buf, id) == 0)
            return l;
    return NULL;
}

/* The layer (and its output port id) that feeds input port `port_id` of
 * layer `id`, by <edges>. */
static xmlNodePtr tj_producer(const tj_doc *d, const char *id, const char *port_id, char *from_port,
                              size_t len)
{
    char tl[32], tp[32], fl[32];
    xmlNodePtr e = d->ends ? xmlHashLookup2(d->ends, BAD_CAST id, BAD_CAST port_id) : NULL;
    for (e = d->ends ? e : d->edges ? d->edges->children : NULL; e; e = e->next) {
        if (!tj_is(e, "edge") || !tj_attr(e, "to-layer", tl, sizeof tl) ||
            !tj_attr(e, "to-port", tp, sizeof tp) || strcmp(tl, id) || strcmp(tp, port_id))
            continue;
        tj_attr(e, "from-port", from_port, len);
        return tj_attr(e, "from-layer", fl, sizeof fl) ? tj_layer_by_id(d, fl) : NULL;
    }
    return NULL;
}

/* d's layers by id and edges by the port they feed, the first of each
 * (as a scan finds). Where memory is short, lookups scan. */
static void tj_doc_index(tj_doc *d)
{
    char id[32], port[32];
    d->ids = xmlHashCreate(64);
    d->ends = d->edges ? xmlHashCreate(64) : NULL;
    for (xmlNodePtr l = d->ids && d->layers ? d->layers->children : NULL; l; l = l->next)
        if (tj_is(l, "layer") && tj_attr(l, "id", id, sizeof id))
            xmlHashAddEntry(d->ids, BAD_CAST id, l); /* -1 for a repeat: the first stays */
    for (xmlNodePtr e = d->ends ? d->edges->children : NULL; e; e = e->next)
        if (tj_is(e, "edge") && tj_attr(e, "to-layer", id, sizeof id) &&
            tj_attr(e, "to-port", port, sizeof port))
            xmlHashAddEntry2(d->ends, BAD_CAST id, BAD_CAST port, e);
}

static void tj_doc_unindex(tj_doc *d)
{
    xmlHashFree(d->ids, NULL);
    xmlHashFree(d->ends, NULL);
    d->ids = d->ends = NULL;
}

/* The element type of an input port: its precision, else what its
 * producer says of its output. UNSET when nothing says. */
static jit_dtype tj_port_type(const tj_doc *d, xmlNodePtr layer, xmlNodePtr port)
{
    char buf[64], id[32], pid[32], from_port[32];
    if (tj_attr(port, "precision", buf, sizeof buf))
        return tj_ov_type(buf);
    if (!tj_attr(layer, "id", id, sizeof id) || !tj_attr(port, "id", pid, sizeof pid))
        return JIT_DTYPE_UNSET;
    xmlNodePtr src = tj_producer(d, id, pid, from_port, sizeof from_port);
    if (!src)
        return JIT_DTYPE_UNSET;
    for (xmlNodePtr p = tj_child(tj_child(src, "output"), "port"); p; p = p->next)
        if (tj_is(p, "port") && tj_attr(p, "id", buf, sizeof buf) && !strcmp(buf, from_port) &&
            tj_attr(p, "precision", buf, sizeof buf))
            return tj_ov_type(buf);
    xmlNodePtr data = tj_child(src, "data");
    if (tj_attr(data, "element_type", buf, sizeof buf) ||
        tj_attr(data, "destination_type", buf, sizeof buf))
        return tj_ov_type(buf);
    return JIT_DTYPE_UNSET;
}

/* Element type of input n, or the fragment's (noted: from the flag that
 * gave it, given_by, or the default where that is NULL). */
static jit_dtype tj_input_type(const tj_doc *d, xmlNodePtr layer, int n, jit_dtype dflt,
                               const char *given_by, unsigned flag, tj_model_layer *out,
                               const char *what)
{
    jit_dtype t = tj_port_type(d, layer, tj_port(layer, "input", n));
    if (t != JIT_DTYPE_UNSET)
        return t;
    if (given_by)
        out->flags_used |= flag;
    tj_model_note(out, "%s %s (%s%s)", what, jit_dtype_name(dflt),
                  given_by ? "from " : "default: the IR names none", given_by ? given_by : "");
    return dflt;
}

/* The layer's data and index types (ports 0 and 1). */
static void tj_input_types(const tj_doc *d, xmlNodePtr layer, jit_sig *s, tj_model_layer *out)
{
    const tj_model_opts *o = d->opts;
    s->dtype = tj_input_type(d, layer, 0, o->dtype, o->have_dtype ? "--dtype" : NULL,
                             TJ_MODEL_USED_DTYPE, out, "dtype");
    s->index_type = tj_input_type(d, layer, 1, o->index_type,
                                  o->have_index_type ? "--index-type" : NULL,
                                  TJ_MODEL_USED_INDEX_TYPE, out, "index type");
}

static int tj_input_shape(xmlNodePtr layer, int n, jit_shape *s, int64_t *bounds,
                          tj_model_layer *out, const char *what)
{
    char why[160];
    xmlNodePtr port = tj_port(layer, "input", n);
    if (!port) {
        snprintf(out->skip, sizeof out->skip, "input port %d (%s) is missing", n, what);
        return -1;
    }
    int got = tj_port_shape(port, s, bounds, why, sizeof why);
    if (got == TJ_PORT_BAD)
        return tj_model_refuse(out, "input port %d (%s): %s", n, what, why);
    if (got != 0) {
        snprintf(out->skip, sizeof out->skip, "input port %d (%s): %s", n, what, why);
        return -1;
    }
    return 0;
}

enum { TJ_INT_OK = 0, TJ_INT_NONE = -1, TJ_INT_RANGE = -2 };

/* A whole decimal text in [lo, hi] into *v; TJ_INT_NONE when it is no
 * integer (atoll took "16abc" as 16), TJ_INT_RANGE when it is one outside
 * [lo, hi] or beyond int64 (atoll clamped it, sscanf's %d wrapped it). */
static int tj_parse_int(const char *text, int64_t lo, int64_t hi, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, 10);
    if (end == text || *end)
        return TJ_INT_NONE;
    if (errno == ERANGE || x < lo || x > hi)
        return TJ_INT_RANGE;
    *v = x;
    return TJ_INT_OK;
}

/* `text`, the value of `what`, in [lo, hi]: 0 and *v, or -1 with the layer
 * refused, the value named as written. */
static int tj_int_value_of(const char *what, const char *text, int64_t lo, int64_t hi, int64_t *v,
                           tj_model_layer *out)
{
    int got = tj_parse_int(text, lo, hi, v);
    if (got == TJ_INT_NONE)
        return tj_model_refuse(out, "%s '%s' is not an integer", what, text);
    if (got == TJ_INT_RANGE)
        return tj_model_refuse(out, "%s '%s' is not in [%lld, %lld]", what, text, (long long)lo,
                         (long long)hi);
    return 0;
}

/* The .bin opened to read, or NULL with why. Its path is derived from the
 * .xml's, so whoever packed the model chose what it is: a FIFO there would
 * block a plain open forever, waiting for a writer. Opened non-blocking,
 * and refused unless the open file is a regular one. */
static FILE *tj_open_bin(const char *path, char *why, size_t len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    FILE *f = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        snprintf(why, len, "%s is not a regular file", path);
    else if (!(f = fdopen(fd, "rb")))
        snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
    if (!f)
        close(fd);
    return f;
}

/* Reads `size` bytes at `offset` of the .bin (both >= 0); 0 or -1 with
 * why. The range is compared as end - offset, never offset + size, which
 * overflows for an offset near INT64_MAX; the message names the real end
 * (both fit an int64, so their sum fits a uint64). */
static int tj_read_bin(const tj_doc *d, int64_t offset, int64_t size, void *buf, char *why,
                       size_t len)
{
    if (!d->bin_path) {
        snprintf(why, len, "no .bin to read the constant from");
        return -1;
    }
    FILE *f = tj_open_bin(d->bin_path, why, len);
    if (!f)
        return -1;
    long end = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    int ok = end >= 0 && offset <= end && size <= end - offset &&
             fseek(f, (long)offset, SEEK_SET) == 0 && fread(buf, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok)
        snprintf(why, len, "the constant's bytes [%lld, %llu) are not in %s (%ld bytes)",
                 (long long)offset, (unsigned long long)offset + (unsigned long long)size,
                 d->bin_path, end);
    return ok ? 0 : -1;
}

/* The byte-sized integer types tj_int_value reads. */
static int tj_is_int_type(jit_dtype t)
{
    return t == JIT_I8 || t == JIT_U8 || t == JIT_I16 || t == JIT_U16 || t == JIT_I32 ||
           t == JIT_U32 || t == JIT_I64 || t == JIT_U64;
}

/* The integer of type t at b into *x; -1 (the layer refused) for a u64
 * no int64 holds, which was once read as INT64_MAX and named so. */
static int tj_int_value(const unsigned char *b, jit_dtype t, const char *what, int64_t *x,
                        tj_model_layer *out)
{
    union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
            int64_t i64; uint64_t u64; } v;
    memcpy(&v, b, (size_t)jit_dtype_size(t));
    switch (t) {
    case JIT_I8: *x = v.i8; break;
    case JIT_U8: *x = v.u8; break;
    case JIT_I16: *x = v.i16; break;
    case JIT_U16: *x = v.u16; break;
    case JIT_I32: *x = v.i32; break;
    case JIT_U32: *x = v.u32; break;
    case JIT_U64:
        if (v.u64 > INT64_MAX)
            return tj_model_refuse(out, "%s Const holds %llu (u64), more than an int64 holds",
                                   what, (unsigned long long)v.u64);
        *x = (int64_t)v.u64;
        break;
    default: *x = v.i64;
    }
    return 0;
}

/* The layer feeding input `port_no` of layer, or NULL: no such port, or
 * no edge to it. */
static xmlNodePtr tj_input_source(const tj_doc *d, xmlNodePtr layer, int port_no)
{
    char id[32], pid[32], from_port[32];
    xmlNodePtr port = tj_port(layer, "input", port_no);
    if (!port || !tj_attr(layer, "id", id, sizeof id) || !tj_attr(port, "id", pid, sizeof pid))
        return NULL;
    return tj_producer(d, id, pid, from_port, sizeof from_port);
}

static int tj_is_const(xmlNodePtr layer)
{
    char type[64];
    return tj_attr(layer, "type", type, sizeof type) && strcmp(type, "Const") == 0;
}

/* The one integer of the Const feeding input `port_no` (`what`: "axis",
 * "num_segments", ...), read from the .bin: 0 with *type and *value, or -1
 * with the layer skipped (no Const there) or refused (not an integer). */
static int tj_read_const_int(const tj_doc *d, xmlNodePtr layer, int port_no, const char *what,
                             jit_dtype *type, int64_t *value, tj_model_layer *out)
{
    char buf[64], why[200];
    if (!tj_port(layer, "input", port_no))
        return snprintf(out->skip, sizeof out->skip, "input port %d (%s) is missing", port_no,
                        what), -1;
    xmlNodePtr src = tj_input_source(d, layer, port_no);
    if (!src)
        return snprintf(out->skip, sizeof out->skip, "no edge feeds input port %d (%s)",
                        port_no, what), -1;
    if (!tj_is_const(src)) {
        char name[64];
        tj_attr(src, "name", name, sizeof name);
        tj_attr(src, "type", buf, sizeof buf);
        return snprintf(out->skip, sizeof out->skip,
                        "%s comes from layer '%s' of type %s, not a Const: it is not known "
                        "before run time",
                        what, name, buf[0] ? buf : "?"),
               -1;
    }
    xmlNodePtr data = tj_child(src, "data");
    char off[32], size[32], field[64];
    if (!tj_attr(data, "element_type", buf, sizeof buf) || !tj_attr(data, "offset", off, sizeof off) ||
        !tj_attr(data, "size", size, sizeof size))
        return snprintf(out->skip, sizeof out->skip,
                        "%s Const lacks element_type, offset or size", what), -1;
    *type = tj_ov_type(buf);
    int es = jit_dtype_size(*type);
    int64_t o, n;
    unsigned char bytes[8];
    /* an f32's bytes are no integer (they once filled half of an int64 axis) */
    if (es > 0 && !tj_is_int_type(*type))
        return tj_model_refuse(out, "%s Const is %s, not an integer type", what, buf);
    snprintf(field, sizeof field, "%s Const: offset", what);
    if (tj_int_value_of(field, off, 0, INT64_MAX, &o, out))
        return -1;
    snprintf(field, sizeof field, "%s Const: size", what);
    if (tj_int_value_of(field, size, 0, INT64_MAX, &n, out))
        return -1;
    /* a size that is not one integer of its type contradicts the op's
     * scalar input (OpenVINO's reader refuses such a Const too) */
    if (es == 0)
        return tj_model_refuse(out, "%s Const is %s, %s", what, buf,
                               *type == JIT_DTYPE_UNSET ? "not an element type"
                                                        : "not a type of whole bytes");
    if (n != es)
        return tj_model_refuse(out, "%s Const holds %lld bytes of %s; one integer (%d bytes) was "
                               "expected", what, (long long)n, buf, es);
    if (tj_read_bin(d, o, n, bytes, why, sizeof why) != 0)
        return snprintf(out->skip, sizeof out->skip, "%s Const: %s", what, why), -1;
    return tj_int_value(bytes, *type, what, value, out);
}

/* The axis: the Const feeding input `port_no`, read from the .bin. */
static int tj_read_axis(const tj_doc *d, xmlNodePtr layer, int port_no, tj_model_layer *out)
{
    return tj_read_const_int(d, layer, port_no, "axis", &out->sig.axis_type, &out->sig.axis, out);
}

/* An attribute of the layer's <data>. A fragment's may sit on the <layer>
 * tag itself, as the ScatterElementsUpdate-12 and ScatterNDUpdate-15 specs
 * print them (<layer ... use_init_val="false" reduction="sum" type=...>):
 * read only from <data>, those layers once compiled as plain updates. A
 * model's IR keeps them in <data>, so only fragments look on the tag. */
static int tj_data_attr(const tj_doc *d, xmlNodePtr layer, const char *name, char *buf,
                        size_t len)
{
    return tj_attr(tj_child(layer, "data"), name, buf, len) ||
           (d->fragment && tj_attr(layer, name, buf, len));
}

/* An integer attribute of <data>: 1 and *v when present, 0 when absent,
 * -1 (the layer refused) when it is no integer or outside [lo, hi]. The
 * range is checked on the text's own value, before anything narrows it:
 * an int field once took batch_dims 4294967297 as 1. */
static int tj_int_attr(const tj_doc *d, xmlNodePtr layer, const char *name, int64_t lo,
                       int64_t hi, int64_t *v, tj_model_layer *out)
{
    char buf[64];
    if (!name || !tj_data_attr(d, layer, name, buf, sizeof buf))
        return 0;
    return tj_int_value_of(name, buf, lo, hi, v, out) == 0 ? 1 : -1;
}

/* The axis of a layer that takes one: an attribute, or a Const input (a
 * fragment carries no constants: --axis gives it). 0 or -1. */
static int tj_layer_axis(const tj_doc *d, xmlNodePtr layer, const tj_ov_op *m,
                         tj_model_layer *out)
{
    jit_sig *s = &out->sig;
    char why[160];
    if (m->axis_attr) {
        int got =
            tj_int_attr(d, layer, m->axis_attr, -JIT_MAX_RANK, JIT_MAX_RANK - 1, &s->axis, out);
        if (got == 0)
            snprintf(out->skip, sizeof out->skip, "<data> has no %s attribute", m->axis_attr);
        return got == 1 ? 0 : -1;
    }
    int got = tj_port_shape(tj_port(layer, "input", m->axis_port), &s->axis_shape, NULL, why,
                            sizeof why);
    if (got == TJ_PORT_BAD)
        return tj_model_refuse(out, "input port %d (axis): %s", m->axis_port, why);
    if (got != 0) {
        snprintf(out->skip, sizeof out->skip, "input port %d (axis): %s", m->axis_port, why);
        return -1;
    }
    if (!d->fragment)
        return tj_read_axis(d, layer, m->axis_port, out);
    if (!d->opts->have_axis) {
        snprintf(out->skip, sizeof out->skip,
                 "a fragment carries no constants: give the axis with --axis");
        return -1;
    }
    s->axis = d->opts->axis;
    s->axis_type = JIT_I64;
    out->flags_used |= TJ_MODEL_USED_AXIS;
    tj_model_note(out, "axis %lld (from --axis)", (long long)s->axis);
    return 0;
}

/* The reduction and use_init_val of <data>, when the layer type has them
 * (an absent one keeps the default: none, true). 0, or -1 with skip set. */
static int tj_reduction_attrs(const tj_doc *d, xmlNodePtr layer, const tj_ov_op *m,
                              tj_model_layer *out)
{
    char buf[64];
    if (m->reduction_attr && tj_data_attr(d, layer, m->reduction_attr, buf, sizeof buf)) {
        for (char *c = buf; *c; c++) /* the IR writes them in either case */
            *c = (char)tolower((unsigned char)*c);
        if (jit_reduction_from_name(buf, &out->sig.reduction) != 0)
            return snprintf(out->skip, sizeof out->skip, "reduction '%s' is not one of none, "
                            "sum, sub, prod, min, max, mean", buf), -1;
    }
    if (m->init_val_attr && tj_data_attr(d, layer, m->init_val_attr, buf, sizeof buf)) {
        if (strcmp(buf, "false") != 0 && strcmp(buf, "true") != 0)
            return snprintf(out->skip, sizeof out->skip, "%s '%s' is not true or false",
                            m->init_val_attr, buf), -1;
        out->sig.no_init_val = strcmp(buf, "false") == 0;
    }
    return 0;
}

/*
 * The embedding bags (SPEC 10). Their inputs in OpenVINO's order: emb_table,
 * indices, offsets or segment_ids, num_segments (Segments), then the
 * optional default_index and per_sample_weights, which a layer gives in that
 * order (weights only after a default_index). default_index and
 * num_segments are Consts; a num_segments that is not one makes S, the
 * output's first dim, dynamic (SPEC 10), while a default_index that is not
 * one skips the layer: it is a row chosen at run time, which no signature
 * holds.
 */
static int tj_is_bag(const tj_ov_op *m)
{
    jit_op_info info;
    return jit_op_describe(m->op, &info) == 0 && (info.attrs & JIT_ATTR_BAG);
}

/* reduction (version 15): sum or mean, as OpenVINO defines it; max is
 * tensorjit's extension for torch, which no IR holds. Absent: sum. */
static int tj_bag_reduction(const tj_doc *d, xmlNodePtr layer, const tj_ov_op *m,
                            tj_model_layer *out)
{
    char buf[64];
    out->sig.reduction = JIT_REDUCTION_SUM;
    if (!m->reduction_attr) {
        /* the ...Sum types have no such attribute: OpenVINO ignores one
         * given, and so does this reader, but says so */
        if (tj_data_attr(d, layer, "reduction", buf, sizeof buf) && strcasecmp(buf, "sum") != 0)
            tj_model_note(out, "reduction '%s' ignored: %s sums (it has no reduction "
                          "attribute)", buf, m->type);
        return 0;
    }
    if (!tj_data_attr(d, layer, m->reduction_attr, buf, sizeof buf))
        return 0;
    for (char *c = buf; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    if (strcmp(buf, "sum") != 0 && strcmp(buf, "mean") != 0)
        return tj_model_refuse(out, "%s '%s' is not one of sum, mean", m->reduction_attr, buf);
    return jit_reduction_from_name(buf, &out->sig.reduction);
}

/* per_sample_weights: the indices' shape and the table's type, when the
 * IR states them. */
static int tj_bag_weights(const tj_doc *d, xmlNodePtr layer, const tj_ov_op *m,
                          tj_model_layer *out)
{
    jit_sig *s = &out->sig;
    jit_shape w;
    int64_t bound[JIT_MAX_RANK];
    if (!m->weights_port || !tj_port(layer, "input", m->weights_port))
        return 0;
    if (tj_input_shape(layer, m->weights_port, &w, bound, out, "per_sample_weights"))
        return -1;
    if (!tj_model_shapes_agree(&w, &s->indices_shape)) {
        char a[160], b[160];
        tj_model_shape_text(&w, bound, a, sizeof a);
        tj_model_shape_text(&s->indices_shape, s->indices_bound, b, sizeof b);
        return tj_model_refuse(out, "input port %d (per_sample_weights) has the shape %s, not "
                               "the indices' %s", m->weights_port, a, b);
    }
    jit_dtype t = tj_port_type(d, layer, tj_port(layer, "input", m->weights_port));
    if (t != JIT_DTYPE_UNSET && t != s->dtype)
        return tj_model_refuse(out, "input port %d (per_sample_weights) is %s, not the "
                               "table's %s", m->weights_port, jit_dtype_name(t),
                               jit_dtype_name(s->dtype));
    s->has_weights = 1;
    return 0;
}

/* 0, or -1 (refused) where a num_segments or default_index Const (what)
 * has another integer type than the indices the IR names (OpenVINO takes
 * one index type for both; where the IR names none, a default or
 * --index-type stood in for it, and the Const's own type is no conflict). */
static int tj_const_index_type(const tj_doc *d, xmlNodePtr layer, const char *what,
                               jit_dtype type, tj_model_layer *out)
{
    jit_dtype indices = out->sig.index_type;
    if (type == indices || tj_port_type(d, layer, tj_port(layer, "input", 1)) == JIT_DTYPE_UNSET)
        return 0;
    return tj_model_refuse(out, "%s Const is %s, not the indices' %s (OpenVINO takes one index "
                           "type for both)", what, jit_dtype_name(type), jit_dtype_name(indices));
}

/* num_segments: a Const's value, else a dynamic S bounded where the
 * output port's first dim is an interval. */
static int tj_bag_num_segments(const tj_doc *d, xmlNodePtr layer, const tj_ov_op *m,
                               tj_model_layer *out)
{
    jit_sig *s = &out->sig;
    jit_dtype type;
    if (!m->num_segments_port)
        return 0;
    xmlNodePtr src = tj_input_source(d, layer, m->num_segments_port);
    int present = tj_port(layer, "input", m->num_segments_port) != NULL;
    if (present && (d->fragment || (src && !tj_is_const(src)))) {
        jit_shape o;
        int64_t bound[JIT_MAX_RANK];
        char why[160];
        s->num_segments = JIT_DIM_DYNAMIC;
        int shaped = tj_port_shape(tj_port(layer, "output", 0), &o, bound, why, sizeof why) == 0 &&
                     o.rank > 0;
        if (shaped && o.dims[0] != JIT_DIM_DYNAMIC) {
            /* OpenVINO's shape inference knew S: the output port says it */
            s->num_segments = o.dims[0];
            tj_model_note(out, "num_segments is not a Const: S = %lld, the output port's first "
                          "dim", (long long)o.dims[0]);
            return 0;
        }
        if (shaped)
            s->num_segments_bound = bound[0];
        tj_model_note(out, "num_segments is not a Const: S, the output's first dim, is dynamic");
        return 0;
    }
    if (tj_read_const_int(d, layer, m->num_segments_port, "num_segments", &type,
                          &s->num_segments, out))
        return -1;
    if (tj_const_index_type(d, layer, "num_segments", type, out) != 0)
        return -1;
    /* -1 would read as JIT_DIM_DYNAMIC */
    if (s->num_segments < 0)
        return tj_model_refuse(out, "num_segments Const holds %lld, a count must not be "
                               "negative", (long long)s->num_segments);
    return 0;
}

/* default_index: a Const's row, -1 meaning none (OpenVINO's). */
static int tj_bag_default_index(const tj_doc *d, xmlNodePtr layer, const tj_ov_op *m,
                                tj_model_layer *out)
{
    jit_dtype type;
    if (!m->default_index_port || !tj_port(layer, "input", m->default_index_port))
        return 0;
    if (d->fragment && !d->opts->have_default_index)
        return snprintf(out->skip, sizeof out->skip,
                        "a fragment carries no constants: give its default_index with "
                        "--default-index"), -1;
    if (d->fragment) {
        out->sig.default_index = d->opts->default_index;
        out->sig.has_default_index = 1;
        out->flags_used |= TJ_MODEL_USED_DEFAULT_INDEX;
        tj_model_note(out, "default_index %lld (from --default-index)",
                (long long)d->opts->default_index);
        return 0;
    }
    if (tj_read_const_int(d, layer, m->default_index_port, "default_index", &type,
                          &out->sig.default_index, out))
        return -1;
    if (tj_const_index_type(d, layer, "default_index", type, out) != 0)
        return -1;
    out->sig.has_default_index = 1;
    return 0;
}

static void tj_read_bag(const tj_doc *d, xmlNodePtr layer, const tj_ov_op *m, tj_model_layer *out)
{
    jit_sig *s = &out->sig;
    const char *offsets = m->num_segments_port ? "segment_ids" : "offsets";
    if (tj_bag_reduction(d, layer, m, out) ||
        tj_input_shape(layer, 0, &s->data_shape, s->data_bound, out, "emb_table") ||
        tj_input_shape(layer, 1, &s->indices_shape, s->indices_bound, out, "indices") ||
        (m->updates_port >= 0 && tj_input_shape(layer, m->updates_port, &s->updates_shape,
                                                s->updates_bound, out, offsets)))
        return;
    tj_input_types(d, layer, s, out);
    if (m->updates_port >= 0)
        s->updates_dtype = tj_port_type(d, layer, tj_port(layer, "input", m->updates_port));
    if (tj_bag_weights(d, layer, m, out) || tj_bag_num_segments(d, layer, m, out) ||
        tj_bag_default_index(d, layer, m, out))
        return;
    out->usable = 1;
}

/* 0, or -1 (refused) where the layer has more input ports than its type
 * takes: the table's last port of any input plus one (data and indices at
 * least). OpenVINO's shape inference refuses such a layer; it was read as
 * if the extra ports were not there. */
static int tj_input_count(xmlNodePtr layer, const tj_ov_op *m, tj_model_layer *out)
{
    int last = 1, n = 0;
    const int ports[] = {m->updates_port, m->axis_port, m->weights_port, m->default_index_port,
                         m->num_segments_port};
    for (size_t i = 0; i < sizeof ports / sizeof *ports; i++)
        last = ports[i] > last ? ports[i] : last;
    for (xmlNodePtr p = tj_child(tj_child(layer, "input"), "port"); p; p = p->next)
        n += tj_is(p, "port");
    if (n > last + 1)
        return tj_model_refuse(out, "%d input ports: %s takes at most %d", n, m->type, last + 1);
    return 0;
}

/* The signature of a layer of type m; usable, or skip says why not. */
static void tj_read_op(const tj_doc *d, xmlNodePtr layer, const tj_ov_op *m, tj_model_layer *out)
{
    jit_sig *s = &out->sig;
    int64_t batch_dims = 0;
    if (tj_input_count(layer, m, out) != 0)
        return;
    if (tj_is_bag(m))
        return tj_read_bag(d, layer, m, out);
    /* no rank exceeds JIT_MAX_RANK: a batch_dims beyond it is never valid,
     * and one within it fits the int */
    if (tj_int_attr(d, layer, m->batch_dims_attr, -JIT_MAX_RANK, JIT_MAX_RANK, &batch_dims, out) < 0)
        return;
    s->batch_dims = (int)batch_dims;
    if (tj_reduction_attrs(d, layer, m, out) != 0)
        return;
    if (tj_input_shape(layer, 0, &s->data_shape, s->data_bound, out, "data") ||
        tj_input_shape(layer, 1, &s->indices_shape, s->indices_bound, out, "indices") ||
        (m->updates_port >= 0 && tj_input_shape(layer, m->updates_port, &s->updates_shape,
                                                s->updates_bound, out, "updates")))
        return;
    if ((m->axis_port >= 0 || m->axis_attr) && tj_layer_axis(d, layer, m, out) != 0)
        return;
    tj_input_types(d, layer, s, out);
    if (m->updates_port >= 0)
        s->updates_dtype = tj_port_type(d, layer, tj_port(layer, "input", m->updates_port));
    out->usable = 1;
}

/* N of a `version` "opsetN": 1 and *n; 0 when the version names no opset;
 * -1 (the layer refused) when N is out of an int's range, which sscanf's
 * %d once wrapped (opset4294967304 read as opset8). */
static int tj_opset_number(const char *version, int *n, tj_model_layer *out)
{
    int64_t x;
    int got = strncmp(version, "opset", 5) == 0 ? tj_parse_int(version + 5, 1, INT_MAX, &x)
                                                : TJ_INT_NONE;
    if (got == TJ_INT_NONE)
        return 0;
    if (got == TJ_INT_RANGE)
        return tj_model_refuse(out, "version '%s': the opset number is not in [1, %d]", version,
                         INT_MAX);
    *n = (int)x;
    return 1;
}

/* The op's version in force in opset N (the IR's `version`) and its index
 * policy; a version that names no opset takes --opset or the op's
 * default, noted. */
static void tj_layer_version(const tj_doc *d, xmlNodePtr layer, const tj_ov_op *m,
                             tj_model_layer *out)
{
    char version[32] = "";
    int n = 0;
    tj_attr(layer, "version", version, sizeof version);
    int named = tj_opset_number(version, &n, out);
    if (named < 0)
        return;
    jit_op_info info;
    jit_op_describe(m->op, &info);
    if (named) {
        int v = -1;
        for (int i = 0; i < 4 && m->versions[i].version; i++)
            if (n >= m->versions[i].opset)
                v = i;
        if (v < 0) {
            snprintf(out->skip, sizeof out->skip, "%s is older than %s's first version (opset%d)",
                     version, m->type, m->versions[0].opset);
            return;
        }
        out->sig.opset = m->versions[v].version;
    } else {
        /* --opset where it is one of this layer type's versions (a fragment
         * may mix layer types), else the op's default if the type has it,
         * else the type's newest. The type's, not the op's: the op
         * EmbeddingBagOffsets has versions 3 and 15, but the type
         * EmbeddingBagOffsetsSum is only version 3 (and EmbeddingBagOffsets
         * only 15), so a version-less EmbeddingBagOffsetsSum once read as
         * EmbeddingBagOffsetsSum-15, a version that does not exist. */
        int given = 0, has_default = 0, newest = 0;
        for (int i = 0; i < 4 && m->versions[i].version; i++) {
            given |= m->versions[i].version == d->opts->opset;
            has_default |= m->versions[i].version == info.default_opset;
            newest = m->versions[i].version;
        }
        out->sig.opset = given ? d->opts->opset : has_default ? info.default_opset : newest;
        if (given)
            out->flags_used |= TJ_MODEL_USED_OPSET;
        else if (d->opts->opset)
            out->flags_used |= TJ_MODEL_OPSET_NOT_ITS;
        tj_model_note(out, "%s%s%s read as %s-%d%s", version[0] ? "version '" : "no version",
                      version, version[0] ? "'" : "", m->type, out->sig.opset,
                      given ? " (--opset)" : "");
    }
    for (int i = 0; i < 4 && m->versions[i].version; i++)
        if (m->versions[i].version == out->sig.opset)
            out->sig.index_policy = m->versions[i].policy;
}

/* The layer type's entry if tensorjit compiles the layer, else NULL. A
 * fragment's type is matched regardless of case: ScatterNDUpdate-15's
 * spec prints its example as type="ScatterNdUpdate", and a reader of the
 * spec pasting it would otherwise get no layer and no word why. A model's
 * type is matched exactly, as OpenVINO's reader matches it. */
static const tj_ov_op *tj_layer_kind(xmlNodePtr layer, int fragment)
{
    char type[64];
    if (!tj_attr(layer, "type", type, sizeof type))
        return NULL;
    const tj_ov_op *m = tj_ov_op_find(type);
    return m || !fragment ? m : tj_ov_op_find_nocase(type);
}

/* A usable layer whose signature gives another output shape than its own
 * output port declares is refused: the signature is then not the layer
 * the model means (an axis Const of the wrong value, a wrong batch_dims),
 * and --check cannot tell, its reference sharing the signature. */
static void tj_check_output_shape(tj_model_layer *out)
{
    jit_shape derived;
    if (!out->usable || !out->ir_output_known || jit_output_shape(&out->sig, &derived) != 0 ||
        tj_model_shapes_agree(&derived, &out->ir_output))
        return;
    char a[160], b[160];
    tj_model_shape_text(&derived, NULL, a, sizeof a);
    tj_model_shape_text(&out->ir_output, out->ir_output_bound, b, sizeof b);
    out->usable = 0;
    tj_model_refuse(out, "the output shape of its inputs and attributes %s contradicts the IR's "
                   "output port %s", a, b);
}

/* The same for the element type, which every op here takes from its data:
 * compared only when the IR states the data's (not a fragment's default). */
static void tj_check_output_type(const tj_doc *d, xmlNodePtr layer, tj_model_layer *out)
{
    char precision[64];
    jit_dtype data = tj_port_type(d, layer, tj_port(layer, "input", 0));
    if (!out->usable || data == JIT_DTYPE_UNSET ||
        !tj_attr(tj_port(layer, "output", 0), "precision", precision, sizeof precision) ||
        tj_ov_type(precision) == JIT_DTYPE_UNSET || tj_ov_type(precision) == data)
        return;
    out->usable = 0;
    tj_model_refuse(out, "the output's element type %s (its data's) contradicts the IR's output "
                   "port %s", jit_dtype_name(data), precision);
}

static void tj_read_layer(const tj_doc *d, xmlNodePtr layer, const tj_ov_op *m, int position,
                          tj_model_layer *out)
{
    char why[160];
    snprintf(out->type, sizeof out->type, "%s", m->type);
    out->sig.op = m->op;
    char name[sizeof out->name];
    tj_attr(layer, "id", out->id, sizeof out->id);
    if (!tj_attr(layer, "name", name, sizeof name))
        snprintf(name, sizeof name, "%s#%d (line %d)", m->type, position, (int)layer->line);
    snprintf(out->name, sizeof out->name, "%s%s", d->prefix, name);
    char typed[64];
    if (tj_attr(layer, "type", typed, sizeof typed) && strcmp(typed, m->type) != 0)
        tj_model_note(out, "type '%s' read as %s", typed, m->type);
    tj_layer_version(d, layer, m, out);
    if (!out->skip[0])
        tj_read_op(d, layer, m, out);
    xmlNodePtr port = tj_port(layer, "output", 0);
    int got = port ? tj_port_shape(port, &out->ir_output, out->ir_output_bound, why, sizeof why)
                   : TJ_PORT_CANNOT;
    out->ir_output_known = got == 0;
    if (got == TJ_PORT_BAD && !out->refused)
        tj_model_refuse(out, "output port: %s", why);
    tj_check_output_shape(out);
    tj_check_output_type(d, layer, out);
}

/*
 * Loop, TensorIterator and If run graphs of their own: <body>, or
 * <then_body> and <else_body>, each with its own <layers> and <edges>
 * (ids restart in every body; port_map and back_edges join it to the
 * layer's ports, which nothing here needs). Their indexing layers are
 * read like the net's, under "layer/body/" names; bodies nest.
 */
static const char *const tj_body_tags[] = {"body", "then_body", "else_body"};

static int tj_has_bodies(xmlNodePtr layer)
{
    char type[64];
    return tj_attr(layer, "type", type, sizeof type) &&
           (strcmp(type, "Loop") == 0 || strcmp(type, "TensorIterator") == 0 ||
            strcmp(type, "If") == 0);
}

/* The <layers> of a body of `layer`, the k-th of tj_body_tags; NULL if none. */
static xmlNodePtr tj_body_layers(xmlNodePtr layer, size_t k)
{
    return tj_child(tj_child(layer, tj_body_tags[k]), "layers");
}

/* The indexing layers of a graph and of every body in it. The depth is
 * libxml2's to bound (256 elements, three per body). */
static int tj_count_layers(xmlNodePtr layers, int fragment)
{
    int n = 0;
    for (xmlNodePtr l = layers ? layers->children : NULL; l; l = l->next) {
        if (!tj_is(l, "layer"))
            continue;
        n += tj_layer_kind(l, fragment) != NULL;
        for (size_t k = 0; tj_has_bodies(l) && k < sizeof tj_body_tags / sizeof *tj_body_tags; k++)
            n += tj_count_layers(tj_body_layers(l, k), fragment);
    }
    return n;
}

static void tj_collect_graph(const tj_doc *d, tj_model *m);

/* The bodies of `layer` as graphs of their own, named "prefix/name/body/". */
static void tj_collect_bodies(const tj_doc *d, xmlNodePtr layer, tj_model *m)
{
    char name[128], id[32], prefix[sizeof m->layers->name];
    if (!tj_attr(layer, "name", name, sizeof name)) {
        tj_attr(layer, "id", id, sizeof id);
        tj_attr(layer, "type", name, sizeof name);
        snprintf(name + strlen(name), sizeof name - strlen(name), "#%s", id);
    }
    for (size_t k = 0; k < sizeof tj_body_tags / sizeof *tj_body_tags; k++) {
        if (!tj_body_layers(layer, k))
            continue;
        tj_doc sub = *d;
        sub.layers = tj_body_layers(layer, k);
        sub.edges = tj_child(tj_child(layer, tj_body_tags[k]), "edges");
        snprintf(prefix, sizeof prefix, "%s%s/%s/", d->prefix, name, tj_body_tags[k]);
        sub.prefix = prefix;
        tj_doc_index(&sub);
        tj_collect_graph(&sub, m);
        tj_doc_unindex(&sub);
    }
}

/* Reads the indexing layers of one graph into m, in document order, a
 * body's after the layer that runs it. */
static void tj_collect_graph(const tj_doc *d, tj_model *m)
{
    for (xmlNodePtr l = d->layers ? d->layers->children : NULL; l; l = l->next) {
        if (!tj_is(l, "layer"))
            continue;
        /* read in place (calloc'd): no layer on the stack of each nested body */
        const tj_ov_op *op = tj_layer_kind(l, d->fragment);
        if (op) {
            tj_read_layer(d, l, op, m->count + 1, &m->layers[m->count]);
            m->count++;
        }
        if (tj_has_bodies(l))
            tj_collect_bodies(d, l, m);
    }
}

static int tj_collect(const tj_doc *d, tj_model *m, char *err, size_t len)
{
    int n = tj_count_layers(d->layers, d->fragment);
    m->layers = calloc((size_t)(n ? n : 1), sizeof *m->layers);
    if (!m->layers)
        return tj_model_fail(err, len, "%s: out of memory", d->name);
    tj_collect_graph(d, m);
    return 0;
}

/*
 * The specs print layers as a reader would write them, not as XML:
 * <data batch_dims=0 /> (an unquoted value) and <layer ... type="X">.
 * libxml2's recover mode drops both (the attribute, the whole start tag),
 * so fragments get this pass first: inside a tag, a bare value is quoted
 * and a "..." is removed. Comments are copied as they are. Returns a new
 * buffer wrapped in <fragment>...</fragment>, or NULL.
 */
/* The first `needle` in in[0, len), which need not end in a NUL. */
static const char *tj_find(const char *in, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(in + i, needle, n) == 0)
            return in + i;
    return NULL;
}

/* Whether the next tag in in[0, len), past blanks and comments, is <dim>. */
static int tj_next_tag_is_dim(const char *in, size_t len)
{
    size_t i = 0;
    for (;;) {
        while (i < len && isspace((unsigned char)in[i]))
            i++;
        if (len - i >= 4 && memcmp(in + i, "<!--", 4) == 0) {
            const char *end = tj_find(in + i, len - i, "-->");
            if (!end)
                return 0;
            i = (size_t)(end - in) + 3;
            continue;
        }
        return len - i >= 5 && memcmp(in + i, "<dim", 4) == 0 &&
               (in[i + 4] == '>' || isspace((unsigned char)in[i + 4]));
    }
}

static char *tj_fragment_text(const char *in, size_t len, size_t *out_len)
{
    char *out = malloc(2 * len + 32);
    if (!out)
        return NULL;
    size_t o = 0;
    memcpy(out, "<fragment>", 10);
    o = 10;
    int in_tag = 0;
    size_t tag_at = 0; /* where the open tag starts, in out */
    for (size_t i = 0; i < len;) {
        if (!in_tag && len - i >= 4 && memcmp(in + i, "<!--", 4) == 0) {
            const char *end = tj_find(in + i, len - i, "-->");
            size_t n = end ? (size_t)(end - (in + i)) + 3 : len - i;
            memcpy(out + o, in + i, n);
            o += n;
            i += n;
            continue;
        }
        char c = in[i];
        if (!in_tag && c == '<' && i + 1 < len && (isalpha((unsigned char)in[i + 1]) || in[i + 1] == '/')) {
            in_tag = 1;
            tag_at = o;
        } else if (in_tag && c == '>')
            in_tag = 0;
        if (in_tag && len - i >= 3 && memcmp(in + i, "...", 3) == 0) {
            i += 3;
            continue;
        }
        /* The bag specs print an input as <port id="2"/> followed by its
         * <dim>s and a </port>: a start tag closed by mistake. As XML the
         * port is a scalar and the stray </port> closes the <input> (in
         * recover mode the rest of the file is lost), so a <port .../>
         * whose next tag, past blanks and comments, is a <dim> is opened. */
        if (in_tag && c == '/' && i + 1 < len && in[i + 1] == '>' && o - tag_at >= 5 &&
            memcmp(out + tag_at, "<port", 5) == 0 &&
            (o - tag_at == 5 || isspace((unsigned char)out[tag_at + 5])) &&
            tj_next_tag_is_dim(in + i + 2, len - i - 2)) {
            i++;
            continue;
        }
        out[o++] = c;
        i++;
        if (in_tag && c == '=') {
            while (i < len && in[i] == ' ')
                i++;
            if (i < len && in[i] != '"' && in[i] != '\'') {
                out[o++] = '"';
                while (i < len && !isspace((unsigned char)in[i]) && in[i] != '>' &&
                       !(in[i] == '/' && i + 1 < len && in[i + 1] == '>'))
                    out[o++] = in[i++];
                out[o++] = '"';
            }
        }
    }
    memcpy(out + o, "</fragment>", 11);
    *out_len = o + 11;
    return out;
}

/* A document that starts with a <layer> is a fragment: wrapped in one
 * root so that several layers, as the specs print them, parse together. */
static int tj_is_fragment(const char *xml, size_t len)
{
    size_t i = 0;
    for (;;) {
        while (i < len && isspace((unsigned char)xml[i]))
            i++;
        if (i + 1 < len && xml[i] == '<' && (xml[i + 1] == '?' || xml[i + 1] == '!')) {
            const char *close = memchr(xml + i, '>', len - i);
            if (!close)
                return 0;
            i = (size_t)(close - xml) + 1;
            continue;
        }
        return len - i >= 6 && memcmp(xml + i, "<layer", 6) == 0;
    }
}

/* The byte at line `line`, column `col` of xml[0, len) as libxml2 counts
 * them (from 1; a column counts characters, not bytes), or len when the
 * text is shorter. */
static size_t tj_text_at(const char *xml, size_t len, int line, int col)
{
    size_t i = 0;
    for (int l = 1; l < line && i < len; i++)
        l += xml[i] == '\n';
    for (int c = 1; c < col && ++i < len;)
        c += ((unsigned char)xml[i] & 0xC0) != 0x80; /* a UTF-8 character's first byte */
    return i < len ? i : len;
}

/* Whether xml[at, len) holds only blanks, comments and the wrapper's
 * </fragment>: where recover mode stopped there, nothing was left unread. */
static int tj_rest_is_empty(const char *xml, size_t len, size_t at)
{
    static const char wrapper_end[] = "</fragment>";
    for (;;) {
        while (at < len && isspace((unsigned char)xml[at]))
            at++;
        if (len - at < 4 || memcmp(xml + at, "<!--", 4) != 0)
            break;
        const char *end = tj_find(xml + at, len - at, "-->");
        if (!end)
            return 0;
        at = (size_t)(end - xml) + 3;
    }
    return len - at == sizeof wrapper_end - 1 && memcmp(xml + at, wrapper_end, len - at) == 0;
}

static xmlDocPtr tj_parse_xml(const char *xml, size_t len, const char *name, int recover,
                              char *err, size_t err_len)
{
    xmlParserCtxtPtr ctx = xmlNewParserCtxt();
    if (!ctx)
        return tj_model_fail(err, err_len, "%s: out of memory", name), NULL;
    int flags = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                (recover ? XML_PARSE_RECOVER : 0);
    xmlDocPtr doc = xmlCtxtReadMemory(ctx, xml, (int)len, name, NULL, flags);
    xmlErrorPtr e = xmlCtxtGetLastError(ctx);
    /* Recover mode stops at "Extra content at the end of the document":
     * a stray end tag closed the root early, and every layer after it
     * would be dropped without a word (the bag specs' <port id="2"/>
     * followed by </port> did that to the layers after it). A fragment
     * read in part is refused, at the line where reading stopped; one
     * whose stray end tag was its last (a </layers> after the layers) lost
     * nothing and is read as recover mode built it. */
    if (doc && recover && e && e->code == XML_ERR_DOCUMENT_END &&
        !tj_rest_is_empty(xml, len, tj_text_at(xml, len, e->line, e->int2))) {
        tj_model_fail(err, err_len, "%s:%d: an end tag on this line or before it has no start "
                      "tag (a <port/> closed by </port>?) and ends the fragment here: the layers "
                      "from here on would be lost", name, e->line);
        xmlFreeDoc(doc);
        doc = NULL;
    } else if (!doc || (!recover && !ctx->wellFormed)) {
        char msg[256] = "not XML";
        if (e && e->message) {
            snprintf(msg, sizeof msg, "%s", e->message);
            msg[strcspn(msg, "\n")] = '\0';
        }
        tj_model_fail(err, err_len, "%s:%d: %s", name, e ? e->line : 0, msg);
        if (doc)
            xmlFreeDoc(doc);
        doc = NULL;
    }
    xmlFreeParserCtxt(ctx);
    return doc;
}

int tj_model_parse(const char *xml, size_t len, const char *name, const char *bin_path,
                   const tj_model_opts *opts, tj_model *m, char *err, size_t err_len)
{
    tj_doc d = {.name = name, .bin_path = bin_path, .opts = opts, .prefix = ""};
    memset(m, 0, sizeof *m);
    if (len > INT32_MAX)
        return tj_model_fail(err, err_len, "%s: larger than 2 GiB", name);
    d.fragment = m->fragment = tj_is_fragment(xml, len);
    char *wrapped = NULL;
    if (d.fragment) {
        /* <?xml ...?> may only open a document: drop it inside the wrapper */
        const char *body = xml;
        if (len > 5 && memcmp(xml, "<?xml", 5) == 0) {
            const char *close = memchr(xml, '>', len);
            body = close ? close + 1 : xml;
        }
        wrapped = tj_fragment_text(body, len - (size_t)(body - xml), &len);
        if (!wrapped)
            return tj_model_fail(err, err_len, "%s: out of memory", name);
        xml = wrapped;
    }
    /* a model must be well-formed; a fragment as the specs print it may
     * need libxml2's recover mode (<data batch_dims=0 />, <layer ... >) */
    d.doc = tj_parse_xml(xml, len, name, 0, err, err_len);
    if (!d.doc && d.fragment)
        d.doc = tj_parse_xml(xml, len, name, 1, err, err_len);
    free(wrapped);
    if (!d.doc)
        return -1;
    xmlNodePtr root = xmlDocGetRootElement(d.doc);
    int rc = 0;
    if (d.fragment) {
        d.layers = root;
    } else if (!tj_is(root, "net")) {
        rc = tj_model_fail(err, err_len, "%s:%d: the root element is <%s>, not <net> or <layer>", name,
                     root ? root->line : 0, root ? (const char *)root->name : "");
    } else {
        d.layers = tj_child(root, "layers");
        d.edges = tj_child(root, "edges");
        if (!d.layers)
            rc = tj_model_fail(err, err_len, "%s:%d: <net> has no <layers>", name, root->line);
    }
    if (rc == 0) {
        tj_doc_index(&d);
        rc = tj_collect(&d, m, err, err_len);
        tj_doc_unindex(&d);
    }
    xmlFreeDoc(d.doc);
    return rc;
}

int tj_model_read(const char *xml_path, const tj_model_opts *opts, tj_model *m, char *err,
                  size_t err_len)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(xml_path, "rb");
    if (!f)
        return tj_model_fail(err, err_len, "%s: cannot open: %s", xml_path, strerror(errno));
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size < 0 || size > TJ_MODEL_MAX_BYTES || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return tj_model_fail(err, err_len, "%s: %s", xml_path,
                       size > TJ_MODEL_MAX_BYTES ? "larger than 256 MiB" : "cannot read");
    }
    char *xml = malloc((size_t)size + 1);
    size_t got = xml ? fread(xml, 1, (size_t)size, f) : 0;
    fclose(f);
    if (!xml || got != (size_t)size) {
        free(xml);
        return tj_model_fail(err, err_len, "%s: cannot read", xml_path);
    }
    char bin[4096];
    size_t n = strlen(xml_path);
    if (n > 4 && strcmp(xml_path + n - 4, ".xml") == 0 && n < sizeof bin)
        snprintf(bin, sizeof bin, "%.*s.bin", (int)(n - 4), xml_path);
    else
        snprintf(bin, sizeof bin, "%s.bin", xml_path);
    int rc = tj_model_parse(xml, (size_t)size, xml_path, bin, opts, m, err, err_len);
    free(xml);
    return rc;
}

void tj_model_free(tj_model *m)
{
    free(m->layers);
    m->layers = NULL;
    m->count = 0;
}
