/* The OpenVINO IR reader on arbitrary bytes (as a model or a fragment):
 * refused with one line, or layers whose usable signatures pass the
 * library's own checks without crashing. */
#include <stdlib.h>

#include "fuzz_input.h"
#include <string.h>

#include "ov_ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tj_model_opts opts = {.dtype = JIT_F32, .index_type = JIT_I64, .have_axis = size & 1,
                          .axis = (int64_t)(size % 5) - 2};
    tj_model m;
    char err[512];
    if (tj_model_parse((const char *)data, size, "fuzz.xml", NULL, &opts, &m, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n'))
            abort(); /* one line, always */
        return 0;
    }
    for (int i = 0; i < m.count; i++) {
        jit_shape out;
        const tj_model_layer *l = &m.layers[i];
        if (!l->usable)
            continue;
        jit_output_shape(&l->sig, &out);
    }
    tj_model_free(&m);
    return 0;
}
