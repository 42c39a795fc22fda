/* `tensorjit cache stats|clear`: the on-disk kernel cache the CLI uses. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int tj_cmd_cache(int argc, char **argv)
{
    if (argc == 2 && tj_cli_is_help(argv[1])) {
        tj_cli_usage("cache", stdout);
        return TJ_EXIT_OK;
    }
    int clear = argc >= 2 && strcmp(argv[1], "clear") == 0;
    if (argc >= 2 && !clear && strcmp(argv[1], "stats") != 0)
        return tj_cli_unknown("cache: unknown argument", argv[1], tj_cli_words("cache"));
    if (argc > 2)
        return tj_cli_fail("cache: unexpected argument '%s' after %s (give stats or clear, "
                           "alone)", argv[2], argv[1]);
    if (argc != 2)
        return tj_cli_fail("cache: give stats or clear");
    if (tj_cli_open_cache() != 0)
        return TJ_EXIT_USAGE; /* said why */
    int64_t entries, bytes;
    char dir[4096];
    if (jit_cache_stats(clear, &entries, &bytes, dir, sizeof dir) != 0)
        return tj_cli_fail("cache: %s", jit_last_error());
    printf("%s: %" PRId64 " kernel%s, %" PRId64 " bytes%s\n", dir, entries,
           entries == 1 ? "" : "s", bytes, clear ? " removed" : "");
    jit_shutdown();
    return TJ_EXIT_OK;
}
