/* The run-time checks of an embedding bag's inputs (SPEC section 10): the
 * reference kernel's check pass, and the message a JIT kernel's cold path
 * asks for (exec/jit_support.c, tj_rt_bag_bad). Both engines name the
 * same lowest bad position: offsets (or segment ids) before indices. */
#ifndef TJ_BAG_CHECK_H
#define TJ_BAG_CHECK_H

#include "plan.h"

/* JIT_STATUS_BAD_INDEX with jit_last_error() naming the input, the
 * position, the value and the allowed range of the lowest bad offset,
 * segment id or index (offsets: the segment ids of a Segments plan, NULL
 * for Packed); JIT_OK when every one is valid. */
int tj_bag_report_bad(const tj_plan *p, const void *indices, const void *offsets);

/* JIT_STATUS_BAD_POINTER with the message when a buffer the bag plan
 * reads or writes bytes of is NULL; else JIT_OK. */
int tj_bag_check_buffers(const tj_bag_plan *g, const void *table, const void *indices,
                         const void *offsets, const void *weights, const void *out);

/* A dynamic template's bag plan (bag_ir.h: counts constant or -1 - i
 * for dims[i]) bound to a call's dims: JIT_OK and *call, or
 * JIT_STATUS_BAD_SHAPE naming the dim and the rule it breaks (a negative
 * dim, a count whose bytes overflow, segment ids not as long as the
 * indices, a default or padding row past the table). */
int tj_bag_bind(const tj_bag_plan *tmpl, const int64_t *dims, tj_bag_plan *call);

#endif
