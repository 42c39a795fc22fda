/* Replays a harness on files, without libFuzzer: every committed corpus
 * entry and every input that once crashed, in the ordinary (and the ASan)
 * test builds. Usage: regress_NAME FILE_OR_DIR... */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_input.h"

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)(n > 0 ? n : 1));
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    return 1;
}

static int replay(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return replay_file(path);
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        n += replay(p);
    }
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int n = 0;
    for (int i = 1; i < argc; i++)
        n += replay(argv[i]);
    printf("%d passed, 0 failed\n", n);
    return n > 0 ? 0 : 1;
}
