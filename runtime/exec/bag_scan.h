/* The check pass of an embedding bag's JIT kernel: whether any offset,
 * segment id or index that a call reads is bad (SPEC section 10), in
 * vectors of the host's widest integer instructions. A static JIT kernel
 * calls it before its bags and, when it says 1, asks tj_rt_bag_bad
 * (jit_support.h, which words it by bag_check.h) for the status and the
 * message naming the lowest bad one; a dynamic one's tj_rt_bag_dyn_begin
 * does both (through tj_bag_scan_plan). */
#ifndef TJ_BAG_SCAN_H
#define TJ_BAG_SCAN_H

#include <stdint.h>

#include "plan.h"

/* What a call's scan checks (the flags argument). The form: offsets
 * (each in [0, N], non-decreasing; the indices from offsets[0] to the last
 * bag's end), segment ids (each in [0, S); every index) or neither
 * (packed: every index). The index type: i64, else i32. The index policy:
 * error (each in [0, E)), negative-wraps (each in [-E, E)), clamp (none
 * read from a table without rows), or none of them (a policy that drops
 * bad indices: nothing checked). */
enum {
    TJ_SCAN_OFFSETS = 1 << 0,
    TJ_SCAN_SEGMENTS = 1 << 1,
    TJ_SCAN_LAST_OFFSET = 1 << 2, /* include_last_offset */
    TJ_SCAN_I64 = 1 << 3,
    TJ_SCAN_ERROR = 1 << 4,
    TJ_SCAN_WRAPS = 1 << 5,
    TJ_SCAN_CLAMP = 1 << 6,
};

/* What the scan checks at a call of g; 0: nothing (the packed form
 * under a policy that drops bad indices). */
int64_t tj_bag_scan_flags(const tj_bag_plan *g);

/* 1 when an offset (or segment id) of offsets[0, offsets_len) or an index
 * of indices that some bag reads is bad, else 0. lookups is N, rows E,
 * bags B (the offsets form) or S (segments). Reads nothing past either
 * buffer's count; the buffers of no elements may be anything. */
int tj_rt_bag_scan(const void *indices, const void *offsets, int64_t offsets_len,
                   int64_t lookups, int64_t rows, int64_t bags, int64_t flags);

/* tj_rt_bag_scan over the inputs of a call of the static plan g (its
 * counts): 1 when something a call reads is bad, else 0. */
int tj_bag_scan_plan(const tj_bag_plan *g, const void *indices, const void *offsets);

/* Part `part` of `parts` of tj_bag_scan_plan's check (jit_validate_bag_part):
 * 1 when the part's slice of the offsets (or segment ids), or of the
 * indices the bags read, holds a bad one. Every part together checks what
 * the whole scan does; each reads only its slices, the offset before its
 * slice of the offsets, and the first and last offsets (the bags' reach). */
int tj_bag_scan_plan_part(const tj_bag_plan *g, const void *indices, const void *offsets,
                          int64_t part, int64_t parts);

/* Tests: the instructions the scan uses from now on, the widest the host
 * has at most (2: AVX-512, 1: AVX2, 0: none, -1: the widest); the level
 * in use, after. */
int tj_bag_scan_level(int most);

#endif
