/* The bench's scratch folders: made under $TMPDIR (else /tmp) and removed
 * by the bench when it is done with them. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

int tj_bench_tmpdir(const char *what, char *dir, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(dir, len, "%s/tensorjit-bench-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", what);
    return n > 0 && (size_t)n < len && mkdtemp(dir) ? 0 : -1;
}

int tj_bench_rmdir(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}
