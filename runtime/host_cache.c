/* The kernel's own sysfs entries first: glibc's sysconf(_SC_LEVEL3_CACHE_SIZE)
 * said 320 MB on an AMD EPYC guest whose L3 is 32 MB (sysfs and lscpu
 * agree on 32), which put every table under 320 MB "inside the cache". */
#define _DEFAULT_SOURCE /* sysconf's cache names */
#include <stdio.h>
#include <unistd.h>

#include "host_cache.h"

/* The number in cpu0's cache entry `index`'s file `what`, times its K or
 * M; 0 where there is none. */
static int64_t tj_sysfs_cache_value(int index, const char *what)
{
    char path[96], text[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index, what);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long long v = 0;
    char unit = 0;
    if (!fgets(text, sizeof text, f) || sscanf(text, "%lld%c", &v, &unit) < 1 || v < 0)
        v = 0;
    fclose(f);
    return (int64_t)v * (unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1);
}

static int64_t tj_sysfs_cache_bytes(int index)
{
    return tj_sysfs_cache_value(index, "size");
}

int64_t tj_host_llc_bytes(void)
{
    int64_t best = 0;
    for (int i = 0; i < 8; i++) {
        int64_t v = tj_sysfs_cache_bytes(i);
        best = v > best ? v : best;
    }
    if (best > 0)
        return best;
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return llc > 0 ? llc : 0;
}

int64_t tj_host_l2_bytes(void)
{
    for (int i = 0; i < 8; i++)
        if (tj_sysfs_cache_value(i, "level") == 2)
            return tj_sysfs_cache_bytes(i);
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? l2 : 0;
}
