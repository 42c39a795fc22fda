/* The tensorjit command: a thin client of the public API. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int tj_dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
    int rc = tj_dispatch(argc, argv);
    jit_shutdown(); /* every path: kernels freed, LLVM's start-up thread joined */
    return rc;
}

static int tj_dispatch(int argc, char **argv)
{
    if (argc < 2) {
        tj_cli_usage_main(stderr);
        return TJ_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("tensorjit %s\n", jit_version());
        return TJ_EXIT_OK;
    }
    if (tj_cli_is_help(cmd) || strcmp(cmd, "help") == 0) {
        tj_cli_usage_main(stdout);
        return TJ_EXIT_OK;
    }
    if (strcmp(cmd, "cache") == 0)
        return tj_cmd_cache(argc - 1, argv + 1);
    /* the commands that run kernels use the disk cache (bench measures
     * compiles), opened first: LLVM then starts while the inputs are read */
    jit_op op = jit_op_from_name(cmd);
    jit_op_info info;
    int is_op = op != JIT_OP_NONE && jit_op_describe(op, &info) == 0 &&
                strcmp(cmd, info.command) == 0;
    static const char *const cached[] = {"model", "check", "demo"};
    for (size_t i = 0; i < sizeof cached / sizeof *cached; i++)
        if (is_op || strcmp(cmd, cached[i]) == 0) {
            tj_cli_open_cache();
            break;
        }
    if (is_op)
        return tj_cmd_op(op, argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0)
        return tj_cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "model") == 0)
        return tj_cmd_model(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return tj_cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "demo") == 0)
        return tj_cmd_demo(argc - 1, argv + 1);
    return tj_cli_unknown("unknown command", cmd, tj_cli_words(NULL));
}
