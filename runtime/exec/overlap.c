#include "overlap.h"

#include <inttypes.h>
#include <stdint.h>

#include "error.h"

typedef struct tj_span {
    const char *name;
    const void *at;
    int64_t bytes;
} tj_span;

/* Whether [a, a + an) and [b, b + bn) share a byte. */
static int tj_ranges_meet(const void *a, int64_t an, const void *b, int64_t bn)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return a && b && an > 0 && bn > 0 && x < y + (uintptr_t)bn && y < x + (uintptr_t)an;
}

/* The first of n inputs out meets, named with both ranges (and_then
 * after the rule, for the in-place exception); skip: an input out may
 * equal (-1: none). */
static int tj_first_overlap(const void *out, int64_t out_bytes, const tj_span *in, int n,
                            int skip, const char *and_then)
{
    for (int i = 0; i < n; i++) {
        if (i == skip && out == in[i].at)
            continue;
        if (tj_ranges_meet(out, out_bytes, in[i].at, in[i].bytes))
            return tj_error_set("out [%p, +%" PRId64 " bytes) overlaps %s [%p, +%" PRId64
                                " bytes): out must not share bytes with an input%s",
                                out, out_bytes, in[i].name, in[i].at, in[i].bytes, and_then);
    }
    return 0;
}

int tj_out_overlap(const tj_plan *p, const void *data, const void *indices,
                   const void *updates, const void *out)
{
    const tj_span in[3] = {{"data", data, p->data_bytes},
                           {"indices", indices, p->indices_elems * p->index_size},
                           {"updates", updates, p->has_updates ? p->updates_bytes : 0}};
    return tj_first_overlap(out, p->out_bytes, in, 3, p->has_updates ? 0 : -1,
                            p->has_updates ? " (but out == data, which runs in place)" : "");
}

/* A bag has no in-place form: an out over offsets or indices let one
 * bag's result change the next bag's lookups after they were checked,
 * and the kernel read past the table (a user's trial). */
int tj_bag_out_overlap(const tj_bag_plan *b, const void *table, const void *indices,
                       const void *offsets, const void *weights, const void *out)
{
    int64_t elem = jit_dtype_size(b->dtype), index = jit_dtype_size(b->index_type);
    const tj_span in[4] = {
        {"table", table, b->rows * b->row_elems * elem}, /* a plan's sizes fit int64 */
        {"indices", indices, b->lookups * index},
        {b->form == TJ_BAG_SEGMENTS ? "segment_ids" : "offsets", offsets, b->offsets_len * index},
        {"weights", weights, b->has_weights ? b->lookups * elem : 0}};
    return tj_first_overlap(out, b->bags * b->row_elems * elem, in, 4, -1, "");
}

int tj_bag_pointers_fit(const tj_bag_plan *b, const void *offsets, const void *weights)
{
    if (weights && !b->has_weights)
        return tj_error_set("weights given to a kernel compiled without weights "
                            "(has_weights = 0): it would ignore them; pass NULL, or compile "
                            "with has_weights = 1");
    if (offsets && b->form == TJ_BAG_PACKED)
        return tj_error_set("offsets given to an EmbeddingBagPacked kernel, which takes none "
                            "(bag b is row b of indices [B, L]): pass NULL");
    return 0;
}
