/* Runs one compiled kernel against the reference kernel on random data of
 * its signature's shapes: valid indices, then one bad index (scatters also
 * in place). Used by `tensorjit model --check` and `tensorjit check`. */
#ifndef TJ_LAYER_CHECK_H
#define TJ_LAYER_CHECK_H

#include <stdint.h>

#include "tensorjit.h"

typedef struct tj_check_result {
    int runs, passed, failed, skipped;
    int refused; /* runs both engines refused alike (a bad index, offset or segment id) */
    char first_failure[256];
} tj_check_result;

/* One run's outcome by one engine: its status, the error message of a
 * refusal, its output. */
typedef struct tj_outcome {
    int status;
    const char *message;
    const void *out;
} tj_outcome;

/* NULL when the two outcomes agree: the same status, the same message
 * for a refusal (when messages: an embedding bag's engines name the same
 * position), and the same bytes of output, bit for bit (NaN payloads
 * too). Else what differs. */
const char *tj_check_compare(const tj_outcome *jit, const tj_outcome *ref, size_t bytes,
                             int messages);

/* `runs` random inputs of the signature (the last one with a bad index
 * when it has any index; an embedding bag's with offsets or segment ids,
 * from 3 runs on, also the one before with a bad one of those); seed
 * makes them repeatable. Buffers (inputs and
 * two outputs) above max_bytes in total are skipped with a note, however
 * far above: nothing over the budget is allocated. */
void tj_check_layer(const jit_sig *sig, int runs, uint64_t seed, int64_t max_bytes,
                    tj_check_result *r);

/* A dynamic signature checked on concrete shapes of its family: the
 * dynamic kernel against the reference kernel of each concrete signature
 * (jit_sig_bind), the same runs as tj_check_layer. */
#define TJ_DYN_SHAPES 6

typedef struct tj_dyn_shape {
    int64_t dims[3 * JIT_MAX_RANK]; /* as the dynamic kernel takes them */
    int ndims;
    int empty;                      /* an input or the output has no element */
    const char *empty_part;         /* the first that has none ("data", "out"), or NULL */
    jit_sig sig;                    /* the concrete signature */
    tj_check_result check;
} tj_dyn_shape;

typedef struct tj_dyn_check_result {
    int shapes, empty, nonempty;    /* the valid shapes run, empty ones among them */
    int over_budget;                /* valid candidates not run: over max_bytes even with
                                       their dynamic dims shrunk */
    tj_dyn_shape shape[TJ_DYN_SHAPES];
    tj_check_result total;          /* every shape's runs; failed also when no shape with
                                       elements is valid, skipped when none fits max_bytes */
} tj_dyn_check_result;

/* Candidates: every dynamic dim 1, 2, 3, 0 (bounds cap them), the same
 * with dims tied to other inputs' static dims, then a mixed assignment;
 * those that bind are run (at most TJ_DYN_SHAPES), each within max_bytes.
 * Candidates over it are dropped, or, when no shape with elements fits,
 * have their dynamic dims shrunk (halved, largest first) until they fit;
 * then the family is skipped only if the static dims alone exceed it. */
void tj_check_dynamic(const jit_sig *sig, int runs, uint64_t seed, int64_t max_bytes,
                      tj_dyn_check_result *r);

/* "data [3,64], indices [3,1]": the concrete shapes of one checked shape,
 * and " (empty indices)" after them where one has no element (the first
 * such input, or out). */
void tj_dyn_shape_text(const tj_dyn_shape *s, char *buf, size_t len);

/* The check commands' output (cli_check.c). The summary line test runners
 * read, "N passed, M failed" (a skipped check is an error naming `what`);
 * the exit status. */
int tj_cli_check_report(const tj_check_result *r, const char *what);
/* A dynamic signature's kernel on a few shapes of its family, each against
 * the reference kernel of that shape, one line per shape, then the
 * summary; the exit status. */
int tj_cli_check_dynamic(const jit_sig *sig, int runs, uint64_t seed, const char *what);

#endif
