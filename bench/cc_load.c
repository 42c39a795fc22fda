/* The C peers' common step: a generated C file compiled by the system's
 * compiler into a shared object in a scratch folder, then loaded. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

int tj_bench_cc_load(const char *what, const char *flags, tj_bench_emit_fn emit, const void *arg,
                     void **handle, char *why, size_t len)
{
    char dir[4096], src[4200], so[4200], cmd[12800];
    *handle = NULL;
    if (tj_bench_tmpdir(what, dir, sizeof dir) != 0) {
        snprintf(why, len, "cannot make a temporary folder");
        return -1;
    }
    snprintf(src, sizeof src, "%s/%s.c", dir, what);
    snprintf(so, sizeof so, "%s/%s.so", dir, what);
    FILE *f = fopen(src, "w");
    if (!f) {
        snprintf(why, len, "cannot write %s", src);
        tj_bench_rmdir(dir);
        return -1;
    }
    emit(f, arg);
    fclose(f);
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    snprintf(cmd, sizeof cmd, "%s %s -shared -fPIC -o %s %s 2>%s/cc.log", cc, flags, so, src, dir);
    int rc = system(cmd);
    *handle = rc == 0 ? dlopen(so, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!*handle) { /* the folder stays, for its cc.log */
        snprintf(why, len, "'%s %s' failed (see %s/cc.log)", cc, flags, dir);
        return -1;
    }
    tj_bench_rmdir(dir); /* the loaded object stays mapped */
    return 0;
}

void *tj_bench_cc_find(void *handle, const char *prefix, const char *id)
{
    char name[64];
    snprintf(name, sizeof name, "%s_%s", prefix, id);
    return handle ? dlsym(handle, name) : NULL;
}

void tj_bench_cc_close(void *handle)
{
    if (handle)
        dlclose(handle);
}
