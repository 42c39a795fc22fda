/* The kernel limit's settings and what a released kernel's stub runs. */
#ifndef TJ_LIMIT_H
#define TJ_LIMIT_H

#include <stdint.h>

#include "kernel.h"

/* TENSORJIT_MAX_KERNELS and TENSORJIT_MAX_CODE_BYTES as the configuration
 * holds them (config.h: the environment read once, on first use and again
 * after jit_shutdown), each left alone when unset; a value that is not a
 * whole number >= 0 was ignored when read (said on stderr under
 * TENSORJIT_DEBUG). */
void tj_limit_from_env(int64_t *max_kernels, int64_t *max_code_bytes);

/* 1 when fn is the stub of a released kernel. */
int tj_is_released(tj_entry_fn fn);

#endif
