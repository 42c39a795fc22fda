/* The tensorjit command: a thin client of the public API. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* "gather-nd, scatter-update, ...": every op's command. */
static const char *tj_op_commands(void)
{
    static char buf[256];
    size_t n = 0;
    buf[0] = '\0';
    for (int op = JIT_OP_NONE + 1; op < JIT_OP_COUNT; op++) {
        jit_op_info info;
        if (jit_op_describe((jit_op)op, &info) == 0 && n < sizeof buf)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? ", " : "", info.command);
    }
    return buf;
}

static void tj_usage(FILE *f)
{
    fprintf(f,
            "usage: tensorjit COMMAND [options]\n"
            "commands:\n"
            "  OP              run one op on .npy files (OP --help for its options):\n"
            "                  %s\n"
            "                  (--dynamic all|data:0,...: through a dynamic kernel)\n"
            "  model FILE.xml  compile every indexing layer of an OpenVINO IR model\n"
            "                  ([--check] [--explain])\n"
            "  check OP ...    JIT vs reference on random inputs of one signature\n"
            "                  (dims '?' / '?:N' dynamic: run on several shapes of the family)\n"
            "  cache stats|clear  the on-disk kernel cache (TENSORJIT_CACHE_DIR, or\n"
            "                  $XDG_CACHE_HOME/tensorjit; TENSORJIT_CACHE_DIR=off: none)\n"
            "  bench           the performance table of the workloads, and compile times\n"
            "                  ([--workload ID] [--json] [--compile] [--no-compile])\n"
            "  demo            run the GatherND-8 batch_dims=2 example of the spec\n"
            "  --version       print the version\n"
            "  --help          print this help\n"
            "exit status: 0 success, 2 invalid arguments or signature, 3 index out of range\n",
            tj_op_commands());
}

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
        tj_usage(stderr);
        return TJ_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("tensorjit %s\n", jit_version());
        return TJ_EXIT_OK;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        tj_usage(stdout);
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
    return tj_cli_fail("unknown command '%s' (try --help)", cmd);
}
