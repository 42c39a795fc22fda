#include "key.h"

#include <string.h>

static void tj_key_put(tj_key *k, int64_t v)
{
    memcpy(k->bytes + k->len, &v, sizeof v);
    k->len += sizeof v;
}

static void tj_key_put_shape(tj_key *k, const jit_shape *s)
{
    tj_key_put(k, s->rank);
    for (int i = 0; i < s->rank; i++)
        tj_key_put(k, s->dims[i]);
}

void tj_key_gather_nd(const jit_gather_nd_sig *s, tj_key *k)
{
    k->len = 0;
    tj_key_put(k, 'G');
    tj_key_put(k, s->opset ? s->opset : 8);
    tj_key_put(k, s->batch_dims);
    tj_key_put(k, s->dtype);
    tj_key_put(k, s->index_type);
    tj_key_put(k, s->index_policy);
    tj_key_put(k, s->engine);
    tj_key_put_shape(k, &s->data_shape);
    tj_key_put_shape(k, &s->indices_shape);
}

void tj_key_scatter_update(const jit_scatter_update_sig *s, tj_key *k)
{
    int64_t r = s->data_shape.rank;
    k->len = 0;
    tj_key_put(k, 'S');
    tj_key_put(k, s->axis < 0 ? s->axis + r : s->axis);
    tj_key_put(k, s->dtype);
    tj_key_put(k, s->index_type);
    tj_key_put(k, s->index_policy);
    tj_key_put(k, s->engine);
    tj_key_put_shape(k, &s->data_shape);
    tj_key_put_shape(k, &s->indices_shape);
}

uint64_t tj_key_hash(const unsigned char *bytes, size_t len)
{
    /* FNV-1a: keys are short and built in-process, so no attacker chooses
     * them to collide; chains stay short. */
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= bytes[i];
        h *= 1099511628211ULL;
    }
    return h;
}
