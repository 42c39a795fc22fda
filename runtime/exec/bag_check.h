/* The run-time checks of an embedding bag (SPEC 10): offsets, segment ids
 * and the indices some bag reads. Both engines run them before anything
 * is written. */
#ifndef TJ_BAG_CHECK_H
#define TJ_BAG_CHECK_H

#include "plan.h"

/* JIT_OK, or JIT_STATUS_BAD_INDEX with jit_last_error() naming the lowest
 * bad position (offsets or segment ids before indices): the input, the
 * position, the value and the range allowed. offsets: the segment ids for
 * Segments, unused for Packed. */
int tj_bag_report_bad(const tj_plan *p, const void *indices, const void *offsets);

#endif
