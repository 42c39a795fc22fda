/* The tensorjit command: a thin client of the public API. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void tj_usage(FILE *f)
{
    fprintf(f,
            "usage: tensorjit COMMAND [options]\n"
            "commands:\n"
            "  gather-nd       run GatherND on .npy files (--help for options)\n"
            "  scatter-update  run ScatterUpdate on .npy files (--help for options)\n"
            "  model FILE.xml  compile every GatherND/ScatterUpdate layer of an OpenVINO IR\n"
            "                  model ([--check] [--explain])\n"
            "  check OP ...    JIT vs reference on random inputs of one signature\n"
            "  cache stats|clear  the on-disk kernel cache (TENSORJIT_CACHE_DIR, or\n"
            "                  $XDG_CACHE_HOME/tensorjit; TENSORJIT_CACHE_DIR=off: none)\n"
            "  bench           the performance table of the workloads, and compile times\n"
            "                  ([--workload ID] [--json] [--compile] [--no-compile])\n"
            "  demo            run the GatherND-8 batch_dims=2 example of the spec\n"
            "  --version       print the version\n"
            "  --help          print this help\n"
            "exit status: 0 success, 2 invalid arguments or signature, 3 index out of range\n");
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
    static const char *const cached[] = {"gather-nd", "scatter-update", "model", "check",
                                         "demo"};
    for (size_t i = 0; i < sizeof cached / sizeof *cached; i++)
        if (strcmp(cmd, cached[i]) == 0)
            tj_cli_open_cache();
    if (strcmp(cmd, "gather-nd") == 0)
        return tj_cmd_gather_nd(argc - 1, argv + 1);
    if (strcmp(cmd, "scatter-update") == 0)
        return tj_cmd_scatter_update(argc - 1, argv + 1);
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
