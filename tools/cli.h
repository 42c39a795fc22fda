/* Shared pieces of the tensorjit commands. */
#ifndef TJ_CLI_H
#define TJ_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "tensorjit.h"

enum { TJ_EXIT_OK = 0, TJ_EXIT_FAILURE = 1, TJ_EXIT_USAGE = 2, TJ_EXIT_BAD_INDEX = 3 };

/* One line "tensorjit: ..." on stderr; returns TJ_EXIT_USAGE. */
int tj_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict integer parsing of an option's value; names the option on error. */
int tj_cli_int(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out);

/* Writes element i of a tensor as text. */
void tj_cli_print_elem(FILE *f, jit_dtype t, const void *data, int64_t i);

/* A tensor as nested brackets, short tensors in full. */
void tj_cli_print_tensor(FILE *f, jit_dtype t, const jit_shape *s, const void *data);

/* "engine: jit (compile 3.1 ms)" or "engine: reference (<why>)". */
void tj_cli_print_engine(FILE *f, const jit_kernel_info *info);

/* Opens the on-disk kernel cache as the CLI does by default:
 * $TENSORJIT_CACHE_DIR ("off": none), else $XDG_CACHE_HOME/tensorjit, else
 * ~/.cache/tensorjit. A folder that is refused leaves the cache off. */
int tj_cli_open_cache(void);
int tj_cmd_cache(int argc, char **argv);

/* tensorjit OP ...: one kernel of the op on .npy files (or by flags). */
int tj_cmd_op(jit_op op, int argc, char **argv);
int tj_cmd_demo(int argc, char **argv);
int tj_cmd_bench(int argc, char **argv);
int tj_cmd_model(int argc, char **argv);
int tj_cmd_check(int argc, char **argv);

#endif
