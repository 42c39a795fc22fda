#include "key.h"

#include "op.h"

static void tj_put(tj_key *k, int64_t v)
{
    k->words[k->len / sizeof(int64_t)] = v;
    k->len += sizeof(int64_t);
}

/* A dynamic dim's bound (JIT_DIM_DYNAMIC, then the bound) goes with it. */
static int tj_put_shape(tj_key *k, const jit_shape *s, const int64_t *bound)
{
    if (s->rank < 0 || s->rank > JIT_MAX_RANK)
        return -1;
    tj_put(k, s->rank);
    for (int i = 0; i < s->rank; i++) {
        tj_put(k, s->dims[i]);
        if (bound && s->dims[i] == JIT_DIM_DYNAMIC)
            tj_put(k, bound[i]); /* a negative one (refused) never meets a valid key */
    }
    return 0;
}

int tj_key_sig(const tj_op_def *def, const jit_sig *sig, tj_key *k)
{
    jit_sig s = *sig;
    tj_sig_normalize(def, &s);
    k->len = 0;
    tj_put(k, s.op);
    tj_put(k, s.opset);
    tj_put(k, s.axis);
    tj_put(k, s.batch_dims);
    tj_put(k, s.dtype);
    tj_put(k, s.updates_dtype);
    tj_put(k, s.index_type);
    tj_put(k, s.axis_type);
    tj_put(k, s.index_policy);
    tj_put(k, s.engine);
    tj_put(k, s.threads);
    tj_put(k, s.reduction);
    tj_put(k, s.no_init_val);
    tj_put(k, s.torch_dims);
    if (def->info.attrs & JIT_ATTR_BAG) { /* the other ops' keys stay as they were */
        tj_put(k, s.has_weights);
        tj_put(k, s.has_default_index);
        tj_put(k, s.default_index);
        tj_put(k, s.has_padding_idx);
        tj_put(k, s.padding_idx);
        tj_put(k, s.include_last_offset);
        tj_put(k, s.num_segments);
        tj_put(k, s.num_segments_bound);
    }
    return tj_put_shape(k, &s.axis_shape, NULL) || tj_put_shape(k, &s.data_shape, s.data_bound) ||
                   tj_put_shape(k, &s.indices_shape, s.indices_bound) ||
                   tj_put_shape(k, &s.updates_shape, s.updates_bound)
               ? -1
               : 0;
}

uint64_t tj_key_hash(const tj_key *k)
{
    /* a word at a time: keys are built in-process from signatures, not
     * chosen by an attacker, so a fast mix is enough */
    uint64_t h = 0x243f6a8885a308d3ULL ^ k->len;
    for (size_t i = 0; i < k->len / sizeof(int64_t); i++) {
        h = (h ^ (uint64_t)k->words[i]) * 0x9e3779b97f4a7c15ULL;
        h ^= h >> 29;
    }
    return h;
}
