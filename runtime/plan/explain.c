/* jit_explain: what tensorjit makes of a signature, in words: the op's own
 * description (its attributes, inputs and output shape), the canonical
 * plan, the code shape the generator chooses and why, and the cache key. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "dyn.h"
#include "error.h"
#include "kernel.h"
#include "key.h"
#include "op.h"
#include "plan.h"
#include "shape.h"

typedef struct tj_text {
    char *buf;
    size_t len, cap;
} tj_text;

static void tj_put(tj_text *t, const char *fmt, ...) TJ_PRINTF(2, 3);

static void tj_put(tj_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n < t->cap - t->len ? (size_t)n : t->cap - t->len - 1;
}

/* A number of the explanation as text. Returned by value: the array lives
 * to the end of the full expression (C11 6.2.4p8), so a call can hand
 * several to one tj_put without buffers of its own. */
typedef struct tj_num {
    char s[48];
} tj_num;

static tj_num tj_digits(int64_t v)
{
    tj_num n;
    snprintf(n.s, sizeof n.s, "%" PRId64, v);
    return n;
}

/* Whether the word of p holding field varies with a dynamic family's
 * dims. p is a copy of the template (tj_sig_template), so the field's
 * offset in p is looked up in p->dyn's template. */
static int tj_plan_varies(const tj_plan *p, const void *field)
{
    if (!p->dyn)
        return 0;
    size_t at = (size_t)((const char *)field - (const char *)p);
    return tj_dyn_varies(p->dyn, (const char *)&p->dyn->tmpl + at);
}

/* A count of the plan: its digits, or "?" where each call's dims give it.
 * The template's value there is a placeholder instance's: printing it
 * would read as the kernel's, which it is not. */
static tj_num tj_count(const tj_plan *p, const int64_t *field)
{
    tj_num n = tj_digits(*field);
    if (tj_plan_varies(p, field))
        snprintf(n.s, sizeof n.s, "?");
    return n;
}

/* A count made from others (a block's elements, its bytes and the element
 * size): "?" when any of them varies. */
static tj_num tj_count_of(const tj_plan *p, int64_t v, const int64_t *from)
{
    tj_num n = tj_digits(v);
    if (tj_plan_varies(p, from))
        snprintf(n.s, sizeof n.s, "?");
    return n;
}

/* a list of counts: JIT_MAX_RANK of 20 characters at most, and brackets */
#define TJ_COUNTS_LEN (JIT_MAX_RANK * 21 + 3)

/* "[a,b,...]" of n entries of fields, "?" for those that vary, in buf. */
static const char *tj_counts(const tj_plan *p, const int64_t *fields, int n, char *buf,
                             size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : "",
                               tj_count(p, &fields[i]).s);
    if (at < len)
        snprintf(buf + at, len - at, "]");
    return buf;
}

static void tj_put_levels(tj_text *t, const tj_plan *p)
{
    int gather = p->indexed == TJ_INDEXED_SRC;
    for (int l = 0; l < p->nlevels; l++) {
        const tj_level *v = &p->levels[l];
        tj_put(t, "  level %d%-14s %s x: index +%s, %s +%s bytes, %s +%s bytes\n", l,
               l < p->unit_levels ? " (units)" : "", tj_count(p, &v->trip).s,
               tj_count(p, &v->index_step).s, gather ? "data" : "out",
               tj_count(p, &v->indexed_step).s, gather ? "out" : "updates",
               tj_count(p, &v->dense_step).s);
    }
}

static void tj_put_plan(tj_text *t, const tj_plan *p)
{
    int gather = p->indexed == TJ_INDEXED_SRC;
    tj_put(t, "plan (an indexed block copy over %d level%s, outermost first%s):\n", p->nlevels,
           p->nlevels == 1 ? "" : "s", p->dyn ? "; ?: from each call's dims" : "");
    tj_put_levels(t, p);
    char b1[TJ_COUNTS_LEN], b2[TJ_COUNTS_LEN];
    tj_put(t, "  %-22s %d: data dims %d.. sizes %s, byte strides %s\n", "index depth", p->depth,
           p->first_dim, tj_counts(p, p->dims, p->depth, b1, sizeof b1),
           tj_counts(p, p->strides, p->depth, b2, sizeof b2));
    tj_put(t, "  %-22s %s bytes (%s elements of %d bytes), %s of them\n",
           gather ? "slice per tuple" : "block per update", tj_count(p, &p->block_bytes).s,
           tj_count_of(p, p->elem_size ? p->block_bytes / p->elem_size : 0, &p->block_bytes).s,
           p->elem_size, tj_count(p, &p->visits).s);
    tj_put(t, "  %-22s %s; dense side %s\n", "indexed side",
           gather ? "source (data)" : "destination (out)", gather ? "out" : "updates");
    if (p->copy_bytes)
        tj_put(t, "  %-22s %s bytes (skipped when out == data)\n", "data copied first",
               tj_count(p, &p->copy_bytes).s);
    tj_put(t, "  %-22s %s (threads split them; %d at most)\n", "units", tj_count(p, &p->units).s,
           p->threads);
    tj_put(t, "  %-22s %s tuples, policy %s\n", "validated first",
           tj_policy_fills(p->policy) ? "0" : tj_count(p, &p->tuples).s,
           jit_index_policy_name(p->policy));
    tj_put(t, "  %-22s data %s, indices %s x %d, %s %s, out %s\n", "bytes",
           tj_count(p, &p->data_bytes).s, tj_count(p, &p->indices_elems).s, p->index_size,
           gather ? "slices" : "updates",
           gather ? tj_count(p, &p->out_bytes).s : tj_count(p, &p->updates_bytes).s,
           tj_count(p, &p->out_bytes).s);
}

/* The key is the normalized signature as int64 words: the op, then
 * attributes, types, policy, engine, threads and shapes (rank, dims...). */
static void tj_put_key(tj_text *t, const tj_key *k)
{
    size_t n = k->len / sizeof(int64_t);
    tj_put(t, "cache key (the normalized signature, %zu words): op %" PRId64, n, k->words[0]);
    for (size_t i = 1; i < n && t->len + 32 < t->cap; i++)
        tj_put(t, " %" PRId64, k->words[i]);
    tj_put(t, ", hash %016" PRIx64 "\n", tj_key_hash(k));
}

static int tj_text_init(tj_text *t)
{
    t->cap = 8192;
    t->len = 0;
    t->buf = tj_malloc(t->cap);
    if (!t->buf)
        return tj_error_set("out of memory explaining a signature");
    t->buf[0] = '\0';
    return 0;
}

/* A count of a bag's plan: its digits, or the letter of SPEC 10 that each
 * call's dims give (a dynamic template's counts are negative codes there:
 * bag_plan.h), never the code itself. */
static tj_num tj_bag_count(int64_t v, const char *letter)
{
    tj_num n = tj_digits(v);
    if (v < 0)
        snprintf(n.s, sizeof n.s, "%s", letter);
    return n;
}

const char *tj_bag_call_dims(const tj_bag_plan *b, char *buf, size_t len)
{
    /* each form's own dims, in SPEC 10's order, and whether the call's */
    const char *name[3];
    int dyn[3];
    if (b->form == TJ_BAG_PACKED) {
        name[0] = "B", dyn[0] = b->bags < 0;
        name[1] = "L", dyn[1] = b->bag_len < 0;
    } else {
        int segments = b->form == TJ_BAG_SEGMENTS;
        name[0] = segments ? "S" : "B";
        dyn[0] = segments ? b->bags < 0 : b->offsets_len < 0;
        name[1] = "N", dyn[1] = b->lookups < 0 || (segments && b->offsets_len < 0);
    }
    name[2] = "E", dyn[2] = b->rows < 0;
    int total = dyn[0] + dyn[1] + dyn[2], put = 0;
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < 3 && n < len; i++)
        if (dyn[i]) {
            put++;
            const char *sep = put == 1 ? "" : put == total ? " and " : ", ";
            n += (size_t)snprintf(buf + n, len - n, "%s%s", sep, name[i]);
        }
    return buf;
}

/* The table's row: its elements, or where a dim after the first is
 * dynamic, the call's (the template's count is a placeholder product). */
static tj_num tj_bag_row(const tj_bag_plan *b, const jit_sig *sig)
{
    tj_num n;
    snprintf(n.s, sizeof n.s, "%" PRId64 " elements", b->row_elems);
    for (int i = 1; i < sig->data_shape.rank; i++)
        if (sig->data_shape.dims[i] == JIT_DIM_DYNAMIC)
            snprintf(n.s, sizeof n.s, "the call's elements");
    return n;
}

/* The lookups and what counts them: only the form's own sizes (a bag
 * length means something for the packed form alone). */
static void tj_put_bag_lookups(tj_text *t, const tj_bag_plan *b)
{
    const char *name = "lookups";
    tj_num n = tj_bag_count(b->lookups, "N");
    if (b->form == TJ_BAG_PACKED && b->lookups < 0) /* B x L, one (or both) the call's */
        tj_put(t, "  %-22s %s x %s (bag length %s)", name, tj_bag_count(b->bags, "B").s,
               tj_bag_count(b->bag_len, "L").s, tj_bag_count(b->bag_len, "L").s);
    else if (b->form == TJ_BAG_PACKED)
        tj_put(t, "  %-22s %s (bag length %s)", name, n.s, tj_digits(b->bag_len).s);
    else if (b->form == TJ_BAG_OFFSETS)
        tj_put(t, "  %-22s %s (offsets %s)", name, n.s,
               tj_bag_count(b->offsets_len, b->include_last_offset ? "B + 1" : "B").s);
    else
        tj_put(t, "  %-22s %s (segment ids %s)", name, n.s, tj_bag_count(b->offsets_len, "N").s);
    tj_put(t, ", index policy %s\n", jit_index_policy_name(b->policy));
}

/* The padding row: a negative padding_idx p is the row E + p (SPEC 10),
 * so on a table whose rows are the call's it is "E - |p|" of each call;
 * the template holds E + p at a placeholder E, no row of any call. */
static tj_num tj_bag_padding(const tj_bag_plan *b, const jit_sig *sig)
{
    tj_num n = tj_digits(b->padding_row);
    if (b->padding_row < 0)
        snprintf(n.s, sizeof n.s, "none");
    else if (b->rows < 0 && sig->has_padding_idx && sig->padding_idx < 0)
        snprintf(n.s, sizeof n.s, "E - %" PRId64 " (of each call's table)", -sig->padding_idx);
    return n;
}

/* The form's own attributes (SPEC 10): a default row for Offsets and
 * Segments, a padding row for Offsets and Packed, include_last_offset for
 * Offsets; an attribute the op has not would read as one it ignores. */
static void tj_put_bag_attrs(tj_text *t, const tj_bag_plan *b, const jit_sig *sig)
{
    tj_put(t, "  %-22s weights %s", "attributes", b->has_weights ? "yes" : "no");
    if (b->form != TJ_BAG_PACKED)
        tj_put(t, ", default row %s",
               b->default_index < 0 ? "none" : tj_digits(b->default_index).s);
    if (b->form != TJ_BAG_SEGMENTS)
        tj_put(t, ", padding row %s", tj_bag_padding(b, sig).s);
    if (b->form == TJ_BAG_OFFSETS)
        tj_put(t, ", include_last_offset %d", b->include_last_offset);
    tj_put(t, "\n");
}

/* An embedding bag's plan (bag_plan.h): its numbers, not a nest; the
 * counts a dynamic family's calls give are SPEC 10's letters. */
static void tj_put_bag_plan(tj_text *t, const tj_plan *p, const jit_sig *sig)
{
    static const char *const forms[] = {"", "offsets", "packed", "segments"};
    const tj_bag_plan *b = &p->bag;
    char dims[32];
    tj_bag_call_dims(b, dims, sizeof dims);
    tj_put(t, "plan (an embedding bag, %s form%s%s%s):\n", forms[b->form], dims[0] ? "; " : "",
           dims, dims[0] ? " from each call's dims" : "");
    tj_put(t, "  %-22s %s of %s (%s), accumulated in %s\n", "table rows",
           tj_bag_count(b->rows, "E").s, tj_bag_row(b, sig).s, jit_dtype_name(b->dtype),
           jit_dtype_name(b->acc_type));
    tj_put(t, "  %-22s %s (units: threads split them; %d at most), reduction %s\n", "bags",
           tj_bag_count(b->bags, b->form == TJ_BAG_SEGMENTS ? "S" : "B").s, b->threads,
           jit_reduction_name(b->reduction));
    tj_put_bag_lookups(t, b);
    tj_put_bag_attrs(t, b, sig);
}

/* What serves the kernel and how: first the choice jit_compile makes
 * between the JIT and the reference kernel (tj_kernel_jit_planned, which
 * jit_info's engine and why come from), then the JIT's code shape. The
 * JIT's words for a kernel it will not make would mislead. */
static void tj_put_strategy(tj_text *t, const tj_plan *p, const jit_sig *sig)
{
    char buf[512];
    if (tj_kernel_jit_planned(p, sig->engine, buf, sizeof buf)) {
        char how[512];
        tj_backend_strategy(p, how, sizeof how);
        tj_put(t, "strategy: %s\n", how);
    } else {
        tj_put(t, "strategy: engine reference (the reference kernel, on the caller's thread): "
                  "%s\n", buf);
    }
    int threads = p->is_bag ? p->bag.threads : p->threads;
    if (threads > 1 && tj_threads_unused(sig, p))
        tj_put(t, "  threads %d: %s, so the one-thread kernel serves (the same pointer as "
                  "threads = 1)\n", threads,
               tj_backend_splits(p) ? "the reference kernel runs on the calling thread"
                                    : "this kernel would not split");
}

/* Which of the plan's numbers a dynamic kernel takes from each call. */
static void tj_put_dynamic(tj_text *t, const tj_dyn *d)
{
    const tj_plan *p = &d->tmpl;
    char out[512];
    tj_put(t, "dynamic: one kernel for every shape of the family; output shape %s\n",
           d->out_rank_varies ? "of a rank that varies too"
                              : tj_shape_format(&d->out_shape, out, sizeof out));
    if (!d->jit_ok)
        return; /* no nest serves the family: the strategy says why */
    tj_put(t, "  from each call's dims:");
    int any = 0;
    for (int l = 0; l < p->nlevels; l++) {
        const tj_level *v = &p->levels[l];
        const int64_t *f[4] = {&v->trip, &v->index_step, &v->indexed_step, &v->dense_step};
        const char *n[4] = {"trip", "index step", "indexed step", "dense step"};
        for (int i = 0; i < 4; i++)
            if (tj_dyn_varies(d, f[i]))
                tj_put(t, "%s level %d %s", any++ ? "," : "", l, n[i]);
    }
    for (int e = 0; e < p->depth; e++) {
        if (tj_dyn_varies(d, &p->dims[e]))
            tj_put(t, "%s entry %d dim", any++ ? "," : "", e);
        if (tj_dyn_varies(d, &p->strides[e]))
            tj_put(t, "%s entry %d stride", any++ ? "," : "", e);
    }
    if (tj_dyn_varies(d, &p->block_bytes))
        tj_put(t, "%s block bytes", any++ ? "," : "");
    if (tj_dyn_varies(d, &p->copy_bytes))
        tj_put(t, "%s bytes copied first", any++ ? "," : "");
    tj_put(t, "%s; they and the counts made from them are ? in the plan below, every other "
              "number a constant of the code\n", any ? "" : " nothing");
}

/* The plan's part of the text. A dynamic family no one nest serves has no
 * plan to show: its template is one instance's, every word marked as
 * varying, and the reference kernel plans each call. */
static void tj_put_any_plan(tj_text *t, const tj_plan *p, const jit_sig *sig)
{
    if (p->is_bag)
        tj_put_bag_plan(t, p, sig);
    else if (p->dyn && !p->dyn->jit_ok)
        tj_put(t, "plan: each call's own (no loop nest serves every shape of the family)\n");
    else
        tj_put_plan(t, p);
}

char *jit_explain(const jit_sig *sig)
{
    tj_plan p;
    tj_key k;
    tj_text t;
    tj_dyn d;
    const tj_op_def *def = tj_sig_op(sig);
    if (!def || tj_sig_template(def, sig, &p, NULL, &d) || tj_key_sig(def, sig, &k) ||
        tj_text_init(&t))
        return NULL;
    char head[2048];
    def->describe(sig, head, sizeof head);
    tj_put(&t, "%s", head);
    if (p.dyn && !p.is_bag)
        tj_put_dynamic(&t, &d);
    tj_put_any_plan(&t, &p, sig);
    tj_put_strategy(&t, &p, sig);
    tj_put_key(&t, &k);
    return t.buf;
}
