/* The ONNX reader on arbitrary bytes: refused with one line, or layers
 * whose usable signatures the library takes without crashing. No folder
 * is given, so no external data file is ever opened. Seeded with the
 * models tests/onnx/gen_models.py writes. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "onnx_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tj_model_opts opts = {.dtype = JIT_F32, .index_type = JIT_I64};
    tj_model m;
    char err[512];
    if (tj_onnx_parse(data, size, "fuzz.onnx", NULL, &opts, &m, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n'))
            abort(); /* one line, always */
        return 0;
    }
    for (int i = 0; i < m.count; i++) {
        const tj_model_layer *l = &m.layers[i];
        jit_shape out;
        /* a usable layer is one the library accepts: its output shape exists,
         * but for a GatherND whose tuple length (indices' last dim) is
         * dynamic, whose output rank only a call gives */
        const jit_shape *ix = &l->sig.indices_shape;
        int rank_varies = l->sig.op == JIT_OP_GATHER_ND && ix->rank > 0 &&
                          ix->dims[ix->rank - 1] == JIT_DIM_DYNAMIC;
        if (l->usable && jit_output_shape(&l->sig, &out) != 0 && !rank_varies)
            abort();
        if (!l->usable && !l->skip[0])
            abort(); /* a skip always says why */
    }
    tj_model_free(&m);
    return 0;
}
