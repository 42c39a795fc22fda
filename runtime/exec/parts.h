/* The caller's own pool (parts.c): how a count is cut into parts. */
#ifndef TJ_PARTS_H
#define TJ_PARTS_H

#include <stdint.h>

/* Part `part` of `parts` near-equal slices of n items: [*begin, *end),
 * the split of library.md's example (parts >= 1, part in [0, parts)). */
void tj_part_bounds(int64_t n, int64_t part, int64_t parts, int64_t *begin, int64_t *end);

#endif
