/* What the three embedding-bag ops (op_embedding_bag_offsets.c,
 * op_embedding_bag_packed.c, op_embedding_segments.c) share: the checks of
 * SPEC section 10, the bag plan's filling, the description and the
 * normalization. Each op's file names its form; nothing here is an op. */
#ifndef TJ_BAG_SIG_H
#define TJ_BAG_SIG_H

#include <stddef.h>

#include "op.h"

/* Checks a bag signature of form `form` (every rule of SPEC 10, messages
 * naming the input, the dim and the value) and fills the plan (is_bag,
 * the bag plan, the byte counts) and the output shape; 0 or -1. */
int tj_bag_sig_plan(const jit_sig *s, tj_bag_form form, tj_plan *p, jit_shape *out);

/* The shape rule of bag form `form` (op.h): [bags, table's dims after
 * the first], bags being the packed indices' first dim, the offsets'
 * count (less one with include_last_offset) or num_segments. */
int tj_bag_sig_rule(const jit_sig *s, tj_bag_form form, jit_shape *out);

/* reduction NONE means sum; a padding_idx counted from the end is the
 * row it names (when the table's first dim is static); a default_index of
 * -1 is no default row, as its flag unset is. */
void tj_bag_normalize(jit_sig *s);

/* The first line of jit_explain for a bag signature of def's op. */
void tj_bag_describe(const tj_op_def *def, tj_bag_form form, const jit_sig *s, char *buf,
                     size_t len);

/* The name of the input in updates_shape: "offsets" or "segment_ids". */
const char *tj_bag_offsets_name(tj_bag_form form);

#endif
