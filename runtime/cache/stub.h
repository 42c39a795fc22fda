/* Entry stubs: stable, never-reused pointers in front of kernels that the
 * kernel limit may release, and the switch point of tiered kernels
 * (runtime/cache/stub.c says how and why). */
#ifndef TJ_STUB_H
#define TJ_STUB_H

#include "kernel.h"

/* 1 when this build can make stubs (x86-64), else 0. */
int tj_stub_supported(void);

/* A new stub that jumps to target; NULL when out of stubs or memory. */
tj_entry_fn tj_stub_new(tj_entry_fn target);

/* 1 and *target set (what the stub jumps to now) when fn is a stub; 0 when
 * fn is any other address. Lock-free. */
int tj_stub_target(tj_entry_fn fn, tj_entry_fn *target);

/* Points the stub somewhere else (an atomic store: calls that already
 * jumped finish where they went). */
void tj_stub_point(tj_entry_fn stub, tj_entry_fn target);

#endif
