/* `tensorjit demo`: the README's first command. Runs the GatherND-8
 * batch_dims=2 example of the specification (seeds/ GatherND-8, examples
 * 6 and 7) and prints input, output and the engine that ran it. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int tj_cmd_demo(int argc, char **argv)
{
    (void)argv;
    if (argc > 1)
        return tj_cli_fail("demo takes no arguments");
    static const int32_t data[24] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                     13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
    static const int32_t indices[6] = {1, 0, 2, 0, 2, 2};
    jit_gather_nd_sig sig = {.opset = 8, .batch_dims = 2, .dtype = JIT_I32,
                             .index_type = JIT_I32,
                             .data_shape = {3, {2, 3, 4}},
                             .indices_shape = {4, {2, 3, 1, 1}}};
    jit_shape out_shape;
    int32_t out[6];
    jit_kernel_info info;
    jit_gather_nd_fn fn = jit_gather_nd_compile(&sig);
    if (!fn || jit_gather_nd_output_shape(&sig, &out_shape) || jit_gather_nd_info(fn, &info))
        return tj_cli_fail("demo: %s", jit_last_error());
    printf("GatherND-8, batch_dims=2 (the specification's example)\n");
    printf("data %s [2,3,4]:\n", jit_dtype_name(sig.dtype));
    tj_cli_print_tensor(stdout, sig.dtype, &sig.data_shape, data);
    printf("indices %s [2,3,1,1]:\n", jit_dtype_name(sig.index_type));
    tj_cli_print_tensor(stdout, sig.index_type, &sig.indices_shape, indices);
    int status = fn(data, indices, out);
    if (status != JIT_OK) {
        tj_cli_fail("demo: %s", jit_last_error());
        jit_shutdown();
        return TJ_EXIT_FAILURE;
    }
    printf("output [2,3,1]:\n");
    tj_cli_print_tensor(stdout, sig.dtype, &out_shape, out);
    tj_cli_print_engine(stdout, &info);
    static const int32_t expected[6] = {2, 5, 11, 13, 19, 23};
    int ok = memcmp(out, expected, sizeof out) == 0;
    printf("%s\n", ok ? "matches the specification's output [[[2],[5],[11]],[[13],[19],[23]]]"
                      : "DOES NOT match the specification's output");
    jit_shutdown();
    return ok ? TJ_EXIT_OK : TJ_EXIT_FAILURE;
}
