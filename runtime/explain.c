/* jit_*_explain: what tensorjit makes of a signature, in words: the
 * canonical plan, the code shape the generator chooses and why, the cache
 * key, and the output shape under both GatherND opsets. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "error.h"
#include "key.h"
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
    int gather = p->op == TJ_OP_GATHER_ND;
    jit_shape dims = {p->depth, {0}};
    for (int i = 0; i < p->depth; i++)
        dims.dims[i] = p->dims[i];
    jit_shape strides = {p->depth, {0}};
    for (int i = 0; i < p->depth; i++)
        strides.dims[i] = p->strides[i];
    char b1[512], b2[512];
    tj_put(t, "plan (an indexed block copy):\n");
    tj_put(t, "  %-22s %" PRId64 "\n", gather ? "batches (outer)" : "outer positions", p->outer);
    tj_put(t, "  %-22s %" PRId64 "\n", gather ? "tuples per batch" : "indices", p->items);
    tj_put(t, "  %-22s %d: data dims %d.. sizes %s, byte strides %s\n", "index depth", p->depth,
           p->first_dim, tj_shape_format(&dims, b1, sizeof b1),
           tj_shape_format(&strides, b2, sizeof b2));
    tj_put(t, "  %-22s %" PRId64 " bytes (%" PRId64 " elements of %d bytes)\n",
           gather ? "slice per tuple" : "block per update", p->block_bytes,
           p->elem_size ? p->block_bytes / p->elem_size : 0, p->elem_size);
    tj_put(t, "  %-22s %s, %" PRId64 " bytes apart per outer position\n", "indexed side",
           gather ? "source (data)" : "destination (out)", p->indexed_outer_bytes);
    tj_put(t, "  %-22s %s, %" PRId64 " bytes per outer position\n", "dense side",
           gather ? "out" : "updates", p->plain_outer_bytes);
    if (!gather)
        tj_put(t, "  %-22s %" PRId64 " bytes (skipped when out == data)\n", "data copied first",
               p->copy_bytes);
    tj_put(t, "  %-22s %" PRId64 " tuples (%s), policy %s\n", "validated first",
           tj_plan_tuples_to_check(p), gather ? "every batch's own" : "shared by every outer",
           jit_index_policy_name(p->policy));
    tj_put(t, "  %-22s data %" PRId64 ", indices %" PRId64 " x %d, %s %" PRId64 ", out %" PRId64
              "\n", "bytes", p->data_bytes, p->indices_elems, p->index_size,
           gather ? "slices" : "updates", gather ? p->out_bytes : p->updates_bytes, p->out_bytes);
}

/* The key is the normalized signature as int64 words: op letter, then
 * attributes, types, policy, engine, threads and shapes (rank, dims...). */
static void tj_put_key(tj_text *t, const tj_key *k)
{
    size_t n = k->len / sizeof(int64_t);
    tj_put(t, "cache key (the normalized signature, %zu words): %c", n, (char)k->words[0]);
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

static void tj_put_strategy(tj_text *t, const tj_plan *p)
{
    char buf[512];
    tj_backend_strategy(p, buf, sizeof buf);
    tj_put(t, "strategy: %s\n", buf);
}

char *jit_gather_nd_explain(const jit_gather_nd_sig *sig)
{
    tj_plan p;
    tj_key k;
    jit_shape out8, out5;
    tj_text t;
    if (!sig) {
        tj_error_set("the GatherND signature is NULL");
        return NULL;
    }
    jit_gather_nd_sig s5 = *sig, s8 = *sig;
    s5.opset = 5;
    s8.opset = 8;
    /* the plan of the signature as given, after both output shapes */
    if (tj_gather_nd_plan(&s8, &p, &out8) || tj_gather_nd_plan(&s5, &p, &out5) ||
        tj_gather_nd_plan(sig, &p, NULL) || tj_text_init(&t))
        return NULL;
    tj_key_gather_nd(sig, &k);
    char b1[512], b2[512];
    tj_put(&t, "GatherND-%d, batch_dims %d, data %s %s, indices %s %s, index policy %s\n",
           sig->opset ? sig->opset : 8, sig->batch_dims, jit_dtype_name(sig->dtype),
           tj_shape_format(&sig->data_shape, b1, sizeof b1), jit_dtype_name(sig->index_type),
           tj_shape_format(&sig->indices_shape, b2, sizeof b2),
           jit_index_policy_name(sig->index_policy));
    tj_put(&t, "output shape: %s (opset 8), %s (opset 5)\n", tj_shape_format(&out8, b1, sizeof b1),
           tj_shape_format(&out5, b2, sizeof b2));
    tj_put_plan(&t, &p);
    tj_put_strategy(&t, &p);
    tj_put_key(&t, &k);
    return t.buf;
}

char *jit_scatter_update_explain(const jit_scatter_update_sig *sig)
{
    tj_plan p;
    tj_key k;
    jit_shape out;
    tj_text t;
    if (!sig) {
        tj_error_set("the ScatterUpdate signature is NULL");
        return NULL;
    }
    if (tj_scatter_update_plan(sig, &p, &out) || tj_text_init(&t))
        return NULL;
    tj_key_scatter_update(sig, &k);
    char b1[512], b2[512], b3[512];
    tj_put(&t, "ScatterUpdate-3, axis %" PRId64 ", data %s %s, indices %s %s, updates %s, "
               "index policy %s\n",
           sig->axis, jit_dtype_name(sig->dtype), tj_shape_format(&sig->data_shape, b1, sizeof b1),
           jit_dtype_name(sig->index_type), tj_shape_format(&sig->indices_shape, b2, sizeof b2),
           tj_shape_format(&sig->updates_shape, b3, sizeof b3),
           jit_index_policy_name(sig->index_policy));
    tj_put(&t, "output shape: %s (the data shape)\n", tj_shape_format(&out, b1, sizeof b1));
    tj_put_plan(&t, &p);
    tj_put_strategy(&t, &p);
    tj_put_key(&t, &k);
    return t.buf;
}
