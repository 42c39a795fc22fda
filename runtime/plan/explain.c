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

static void tj_put_plan(tj_text *t, const tj_plan *p)
{
    int gather = p->indexed == TJ_INDEXED_SRC;
    jit_shape dims = {p->depth, {0}};
    for (int i = 0; i < p->depth; i++)
        dims.dims[i] = p->dims[i];
    jit_shape strides = {p->depth, {0}};
    for (int i = 0; i < p->depth; i++)
        strides.dims[i] = p->strides[i];
    char b1[512], b2[512];
    tj_put(t, "plan (an indexed block copy over %d level%s, outermost first):\n", p->nlevels,
           p->nlevels == 1 ? "" : "s");
    for (int l = 0; l < p->nlevels; l++) {
        const tj_level *v = &p->levels[l];
        tj_put(t, "  level %d%-14s %" PRId64 " x: index +%" PRId64 ", %s +%" PRId64
                  " bytes, %s +%" PRId64 " bytes\n",
               l, l < p->unit_levels ? " (units)" : "", v->trip, v->index_step,
               gather ? "data" : "out", v->indexed_step, gather ? "out" : "updates",
               v->dense_step);
    }
    tj_put(t, "  %-22s %d: data dims %d.. sizes %s, byte strides %s\n", "index depth", p->depth,
           p->first_dim, tj_shape_format(&dims, b1, sizeof b1),
           tj_shape_format(&strides, b2, sizeof b2));
    tj_put(t, "  %-22s %" PRId64 " bytes (%" PRId64 " elements of %d bytes), %" PRId64
              " of them\n",
           gather ? "slice per tuple" : "block per update", p->block_bytes,
           p->elem_size ? p->block_bytes / p->elem_size : 0, p->elem_size, p->visits);
    tj_put(t, "  %-22s %s; dense side %s\n", "indexed side",
           gather ? "source (data)" : "destination (out)", gather ? "out" : "updates");
    if (p->copy_bytes)
        tj_put(t, "  %-22s %" PRId64 " bytes (skipped when out == data)\n", "data copied first",
               p->copy_bytes);
    tj_put(t, "  %-22s %" PRId64 " (threads split them; %d at most)\n", "units", p->units,
           p->threads);
    tj_put(t, "  %-22s %" PRId64 " tuples, policy %s\n", "validated first",
           tj_policy_fills(p->policy) ? 0 : p->tuples, jit_index_policy_name(p->policy));
    tj_put(t, "  %-22s data %" PRId64 ", indices %" PRId64 " x %d, %s %" PRId64 ", out %" PRId64
              "\n", "bytes", p->data_bytes, p->indices_elems, p->index_size,
           gather ? "slices" : "updates", gather ? p->out_bytes : p->updates_bytes, p->out_bytes);
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

/* A count of a bag's plan as text: "?" where a dynamic kernel's template
 * holds a placeholder (negative: its dims' placeholders, or counts made
 * from them, such as B = offsets - 1), which the call's dims replace. */
static const char *tj_bag_count(int64_t v, char *buf, size_t len)
{
    if (v < 0)
        return "?";
    snprintf(buf, len, "%" PRId64, v);
    return buf;
}

/* An embedding bag's plan (bag_plan.h): its numbers, not a nest. */
static void tj_put_bag_plan(tj_text *t, const tj_plan *p)
{
    static const char *const forms[] = {"", "offsets", "packed", "segments"};
    const tj_bag_plan *b = &p->bag;
    char n1[24], n2[24], n3[24];
    tj_put(t, "plan (an embedding bag, %s form; ?: from each call's dims):\n", forms[b->form]);
    tj_put(t, "  %-22s %s of %" PRId64 " elements (%s), accumulated in %s\n", "table rows",
           tj_bag_count(b->rows, n1, sizeof n1), b->row_elems, jit_dtype_name(b->dtype),
           jit_dtype_name(b->acc_type));
    tj_put(t, "  %-22s %s (units: threads split them; %d at most), reduction %s\n", "bags",
           tj_bag_count(b->bags, n1, sizeof n1), b->threads, jit_reduction_name(b->reduction));
    tj_put(t, "  %-22s %s (bag length %s, offsets %s), index policy %s\n", "lookups",
           tj_bag_count(b->lookups, n1, sizeof n1), tj_bag_count(b->bag_len, n2, sizeof n2),
           tj_bag_count(b->offsets_len, n3, sizeof n3), jit_index_policy_name(b->policy));
    tj_put(t, "  %-22s weights %s, default row %s, padding row %s, include_last_offset %d\n",
           "attributes", b->has_weights ? "yes" : "no",
           b->default_index < 0 ? "none" : tj_bag_count(b->default_index, n1, sizeof n1),
           b->padding_row < 0 ? "none" : tj_bag_count(b->padding_row, n2, sizeof n2),
           b->include_last_offset);
}

static void tj_put_strategy(tj_text *t, const tj_plan *p, const jit_sig *sig)
{
    char buf[512];
    tj_backend_strategy(p, buf, sizeof buf);
    tj_put(t, "strategy: %s\n", buf);
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
    if (!d->jit_ok) {
        tj_put(t, "  reference kernel: %s\n", d->why);
        return;
    }
    tj_put(t, "  the plan below is at placeholder dims; from each call's dims:");
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
    tj_put(t, "%s; every other number is a constant of the code\n", any ? "" : " nothing");
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
    if (p.is_bag)
        tj_put_bag_plan(&t, &p);
    else
        tj_put_plan(&t, &p);
    tj_put_strategy(&t, &p, sig);
    tj_put_key(&t, &k);
    return t.buf;
}
