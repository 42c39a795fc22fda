/* The on-disk kernel cache: hits across jit_shutdown (as a new process
 * would see them), entries that are corrupt, truncated or made for another
 * key (never loaded: removed and compiled again), folders that are not
 * safe (refused), two processes racing on one key, split kernels; every
 * header field damaged, hostile files where an entry goes, and eviction
 * over many entries; entries whose checksum is right but whose object is
 * not what tensorjit makes. */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <elf.h>
#include <openssl/evp.h>

#include "support.h"
#include "tensorjit.h"

static char base[64], dir[128];

static jit_gather_nd_sig sig(int rows, int threads)
{
    return (jit_gather_nd_sig){.dtype = JIT_F32, .index_type = JIT_I32, .threads = threads,
                               .data_shape = {2, {rows, 16}}, .indices_shape = {2, {2048, 1}}};
}

/* Compiles s with the cache open (as a fresh process: nothing in memory),
 * checks its output against the reference; returns info.cache_hit. */
static int compile_and_check(jit_gather_nd_sig s)
{
    jit_shutdown();
    assert_int_equal(jit_cache_open(dir), 0);
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    jit_kernel_info info;
    assert_int_equal(jit_gather_nd_info(fn, &info), 0);
    assert_int_equal(info.engine, JIT_ENGINE_JIT);
    int rows = (int)s.data_shape.dims[0];
    static float data[64 * 16], o1[2048 * 16], o2[2048 * 16];
    static int32_t idx[2048];
    for (int i = 0; i < rows * 16; i++)
        data[i] = (float)i;
    for (int i = 0; i < 2048; i++)
        idx[i] = (i * 7) % rows;
    jit_gather_nd_sig r = s;
    r.engine = JIT_ENGINE_REFERENCE;
    assert_int_equal(fn(data, idx, o1), 0);
    assert_int_equal(jit_gather_nd_compile(&r)(data, idx, o2), 0);
    assert_memory_equal(o1, o2, sizeof(float) * 2048 * 16);
    return info.cache_hit;
}

/* The one entry file of the folder (the test keeps one at a time). */
static void only_entry(char *path, size_t len)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls %s/*.tjk", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(fgets(path, (int)len, p));
    pclose(p);
    path[strcspn(path, "\n")] = '\0';
}

static void clear(void)
{
    int64_t n, b;
    char d[256];
    jit_cache_open(dir);
    assert_int_equal(jit_cache_stats(1, &n, &b, d, sizeof d), 0);
}

static void test_miss_then_hit(void **state)
{
    (void)state;
    clear();
    assert_int_equal(compile_and_check(sig(64, 0)), 0);
    assert_int_equal(compile_and_check(sig(64, 0)), 1);
    char path[512];
    struct stat st;
    only_entry(path, sizeof path);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    int64_t n, b;
    char d[256];
    assert_int_equal(jit_cache_stats(0, &n, &b, d, sizeof d), 0);
    assert_int_equal(n, 1);
    assert_string_equal(d, dir);
}

/* The entry's header as the format defines it: magic, format, name
 * length, object length at byte 16, key, checksum. */
#define ENTRY_HEADER 88
#define ENTRY_OBJ_LEN_AT 16

static void damage(const char *path, int how)
{
    if (how == 2) { /* shorter than header + name, with an object length that
                     * len - header - name_len wraps around to */
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        int fd = open(path, O_RDWR);
        uint32_t name_len;
        assert_int_equal(pread(fd, &name_len, 4, 12), 4);
        uint64_t kept = ENTRY_HEADER + 10, obj_len = kept - ENTRY_HEADER - name_len;
        assert_int_equal(pwrite(fd, &obj_len, 8, ENTRY_OBJ_LEN_AT), 8);
        close(fd);
        assert_int_equal(truncate(path, (off_t)kept), 0);
    } else if (how == 0) { /* one byte of the object */
        int fd = open(path, O_RDWR);
        off_t end = lseek(fd, 0, SEEK_END);
        unsigned char c;
        assert_int_equal(pread(fd, &c, 1, end - 20), 1);
        c ^= 0x40;
        assert_int_equal(pwrite(fd, &c, 1, end - 20), 1);
        close(fd);
    } else { /* half of it */
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(truncate(path, st.st_size / 2), 0);
    }
}

static void test_corrupt_and_truncated_entries_are_never_loaded(void **state)
{
    (void)state;
    for (int how = 0; how < 3; how++) {
        clear();
        assert_int_equal(compile_and_check(sig(60, 0)), 0);
        char path[512];
        only_entry(path, sizeof path);
        damage(path, how);
        assert_int_equal(compile_and_check(sig(60, 0)), 0); /* detected, compiled again */
        assert_int_equal(compile_and_check(sig(60, 0)), 1); /* and stored whole again */
    }
}

static void test_entry_of_another_key_is_never_loaded(void **state)
{
    (void)state;
    clear();
    assert_int_equal(compile_and_check(sig(50, 0)), 0);
    char a[512], b[512], cmd[1200];
    only_entry(a, sizeof a);
    snprintf(cmd, sizeof cmd, "mv %s %s.keep", a, a);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(compile_and_check(sig(51, 0)), 0);
    only_entry(b, sizeof b);
    snprintf(cmd, sizeof cmd, "mv %s.keep %s", a, b); /* A's bytes under B's name */
    assert_int_equal(system(cmd), 0);
    assert_int_equal(compile_and_check(sig(51, 0)), 0);
    assert_int_equal(compile_and_check(sig(51, 0)), 1);
}

/* An object that fails to load and link (here LLVM meets a symbol nobody
 * defines) is not stored: the next process would only fail on it again. */
static void test_an_object_that_fails_to_load_is_not_stored(void **state)
{
    (void)state;
    clear();
    support_setenv("TENSORJIT_FAULT", "link");
    assert_int_equal(jit_cache_open(dir), 0);
    jit_gather_nd_sig s = sig(44, 0);
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    jit_kernel_info info;
    assert_int_equal(jit_gather_nd_info(fn, &info), 0);
    assert_int_equal(info.engine, JIT_ENGINE_REFERENCE);
    int64_t n, b;
    char d[256];
    assert_int_equal(jit_cache_stats(0, &n, &b, d, sizeof d), 0);
    assert_int_equal(n, 0);
    support_setenv("TENSORJIT_FAULT", NULL);
    assert_int_equal(compile_and_check(sig(44, 0)), 0); /* what loads is stored */
    assert_int_equal(compile_and_check(sig(44, 0)), 1);
}

/* Every knob of the configuration that changes code is in the key: an
 * entry compiled under other knobs is not served, and comes back with
 * them. Each knob goes back to what the run set (build.sh's instrumented
 * steps set TENSORJIT_CODEGEN=0), not to unset. */
static void test_code_knobs_are_in_the_key(void **state)
{
    (void)state;
    static const char *const knobs[][2] = {
        {"TENSORJIT_UNROLL", "1000"},        {"TENSORJIT_VECTOR_WIDTH", "128"},
        {"TENSORJIT_INLINE_COPY_MIN", "64"}, {"TENSORJIT_PASSES", "function(instcombine)"},
        {"TENSORJIT_CODEGEN", "1"},          {"TENSORJIT_INTERLEAVE", "4"},
    };
    clear();
    assert_int_equal(compile_and_check(sig(24, 0)), 0);
    for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++) {
        const char *set = getenv(knobs[i][0]);
        const char *other = set && strcmp(set, knobs[i][1]) == 0 ? "2" : knobs[i][1];
        support_env saved;
        support_env_push(&saved, knobs[i][0], other);
        assert_int_equal(compile_and_check(sig(24, 0)), 0);
        assert_int_equal(compile_and_check(sig(24, 0)), 1);
        support_env_pop(&saved);
        assert_int_equal(compile_and_check(sig(24, 0)), 1);
    }
}

static void test_unsafe_folders_are_refused(void **state)
{
    (void)state;
    jit_shutdown();
    assert_int_equal(chmod(dir, 0777), 0);
    assert_int_equal(jit_cache_open(dir), -1);
    assert_non_null(strstr(jit_last_error(), "is writable by group or others (mode 777)"));
    assert_int_equal(chmod(dir, 0700), 0);
    if (geteuid() == 0) { /* only root can give a folder away */
        assert_int_equal(chown(dir, 4242, 4242), 0);
        assert_int_equal(jit_cache_open(dir), -1);
        assert_non_null(strstr(jit_last_error(), "is owned by uid 4242"));
        assert_int_equal(chown(dir, 0, 0), 0);
    }
    char file[256];
    snprintf(file, sizeof file, "%s/file", base);
    FILE *f = fopen(file, "w");
    fclose(f);
    assert_int_equal(jit_cache_open(file), -1);
    assert_non_null(strstr(jit_last_error(), "is not a folder"));
    assert_int_equal(jit_cache_open(dir), 0);
}

/* A relative folder is the one the checks saw: after a chdir to a folder
 * holding another "kc", writable by anyone, entries still go to the first
 * (jit_cache_stats names it, absolute) and none to the second. */
static void test_relative_folder_survives_chdir(void **state)
{
    (void)state;
    char here[4096], a[256], b[256];
    assert_non_null(getcwd(here, sizeof here));
    snprintf(a, sizeof a, "%s/rel-a", base);
    snprintf(b, sizeof b, "%s/rel-b", base);
    assert_int_equal(mkdir(a, 0700), 0);
    assert_int_equal(mkdir(b, 0700), 0);
    assert_int_equal(chdir(a), 0);
    jit_shutdown();
    assert_int_equal(jit_cache_open("kc"), 0);
    char open_dir[512], want[512];
    assert_int_equal(jit_cache_stats(0, NULL, NULL, open_dir, sizeof open_dir), 0);
    snprintf(want, sizeof want, "%s/kc", a);
    assert_string_equal(open_dir, want);
    assert_int_equal(chdir(b), 0);
    assert_int_equal(mkdir("kc", 0777), 0);
    assert_int_equal(chmod("kc", 0777), 0); /* whatever the umask */
    jit_gather_nd_sig s = sig(27, 0);
    assert_non_null(jit_gather_nd_compile(&s));
    int64_t n = -1;
    assert_int_equal(jit_cache_stats(0, &n, NULL, open_dir, sizeof open_dir), 0);
    assert_string_equal(open_dir, want);
    assert_int_equal(n, 1);
    assert_int_equal(system("test -z \"$(ls kc)\""), 0); /* nothing in the unsafe one */
    assert_int_equal(chdir(here), 0);
    jit_shutdown();
    assert_int_equal(jit_cache_open(dir), 0);
}

/* jit_cache_stats says when the open folder vanished (not "no cache folder
 * is open"), and refuses a dir too short for the path instead of cutting
 * it, before clearing anything. */
static void test_stats_name_a_vanished_folder_and_a_short_buffer(void **state)
{
    (void)state;
    char gone[256], cmd[300], small[8];
    snprintf(gone, sizeof gone, "%s/vanishing", base);
    jit_shutdown();
    assert_int_equal(jit_cache_open(gone), 0);
    jit_gather_nd_sig s = sig(26, 0);
    assert_non_null(jit_gather_nd_compile(&s));
    int64_t n = -1;
    assert_int_equal(jit_cache_stats(1, &n, NULL, small, sizeof small), -1);
    assert_non_null(strstr(jit_last_error(), "dir_len 8 cannot hold the folder's path"));
    assert_int_equal(jit_cache_stats(0, &n, NULL, NULL, 0), 0);
    assert_int_equal(n, 1); /* not cleared */
    snprintf(cmd, sizeof cmd, "rm -rf %s", gone);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(jit_cache_stats(0, &n, NULL, NULL, 0), -1);
    assert_non_null(strstr(jit_last_error(), "vanishing cannot be listed: No such file"));
    assert_null(strstr(jit_last_error(), "no cache folder is open"));
    jit_shutdown();
    assert_int_equal(jit_cache_open(dir), 0);
}

/* A folder this process may only read serves its entries and stores none
 * (a server's read-only image of a cache --precompile filled): it was
 * refused, and every kernel compiled again. jit_cache_stats takes NULL
 * for what a caller does not want (it wrote through them), and says why
 * the last folder asked for was refused. */
static void test_read_only_folder_serves_its_entries(void **state)
{
    (void)state;
    clear();
    assert_int_equal(compile_and_check(sig(64, 0)), 0);
    assert_int_equal(chmod(dir, 0500), 0);
    assert_int_equal(compile_and_check(sig(64, 0)), 1);
    assert_int_equal(compile_and_check(sig(32, 0)), 0);
    int64_t n = -1;
    assert_int_equal(jit_cache_stats(0, &n, NULL, NULL, 0), 0);
    if (geteuid() != 0) /* root writes whatever the mode says */
        assert_int_equal(n, 1);
    assert_int_equal(jit_cache_stats(0, NULL, NULL, NULL, 0), 0);
    assert_int_equal(chmod(dir, 0700), 0);

    char file[256];
    snprintf(file, sizeof file, "%s/not-a-folder", base);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(jit_cache_open(file), -1);
    assert_int_equal(jit_cache_stats(0, NULL, NULL, NULL, 0), -1);
    assert_non_null(strstr(jit_last_error(), "no cache folder is open (the last one asked for "
                                             "was refused: cache folder"));
    assert_non_null(strstr(jit_last_error(), "is not a folder"));
    jit_cache_close();
    assert_int_equal(jit_cache_stats(0, NULL, NULL, NULL, 0), -1);
    assert_string_equal(jit_last_error(), "no cache folder is open");
    assert_int_equal(jit_cache_open(dir), 0);
}

static int64_t cache_bytes(void)
{
    int64_t n, b;
    char d[256];
    jit_cache_open(dir);
    assert_int_equal(jit_cache_stats(0, &n, &b, d, sizeof d), 0);
    return b;
}

/* Past the size cap the least recently used entry goes: A stored, B
 * stored, A used again, C stored -> B is evicted. */
static void test_size_cap_evicts_least_recently_used(void **state)
{
    (void)state;
    clear();
    compile_and_check(sig(30, 0));
    compile_and_check(sig(31, 0));
    compile_and_check(sig(32, 0));
    int64_t all = cache_bytes();
    clear();
    char cap[32];
    snprintf(cap, sizeof cap, "%lld", (long long)(all - 1));
    support_setenv("TENSORJIT_CACHE_MAX_BYTES", cap);
    assert_int_equal(compile_and_check(sig(30, 0)), 0);
    usleep(20000);
    assert_int_equal(compile_and_check(sig(31, 0)), 0);
    usleep(20000);
    assert_int_equal(compile_and_check(sig(30, 0)), 1); /* A is used again */
    usleep(20000);
    assert_int_equal(compile_and_check(sig(32, 0)), 0); /* over the cap: B goes */
    assert_true(cache_bytes() <= all - 1);
    assert_int_equal(compile_and_check(sig(30, 0)), 1);
    assert_int_equal(compile_and_check(sig(32, 0)), 1);
    support_setenv("TENSORJIT_CACHE_MAX_BYTES", NULL);
    assert_int_equal(compile_and_check(sig(31, 0)), 0);
}

static void test_two_processes_race_on_one_key(void **state)
{
    (void)state;
    clear();
    jit_shutdown();
    pid_t kids[2];
    for (int i = 0; i < 2; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            jit_gather_nd_sig s = sig(40, 0);
            if (jit_cache_open(dir) != 0)
                _exit(2);
            jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
            static float data[40 * 16], out[2048 * 16];
            static int32_t idx[2048];
            int ok = fn && fn(data, idx, out) == 0;
            jit_shutdown(); /* _exit skips atexit: join the warm-up thread here */
            _exit(ok ? 0 : 1);
        }
    }
    for (int i = 0; i < 2; i++) {
        int st;
        waitpid(kids[i], &st, 0);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    assert_int_equal(compile_and_check(sig(40, 0)), 1); /* one whole entry */
}

static void test_split_kernels_load_their_parts(void **state)
{
    (void)state;
    clear();
    assert_int_equal(compile_and_check(sig(64, 2)), 0);
    assert_int_equal(compile_and_check(sig(64, 2)), 1);
    jit_gather_nd_sig s = sig(64, 2);
    static int32_t idx[2048];
    assert_int_equal(jit_gather_nd_validate(jit_gather_nd_compile(&s), idx), 0);
}

/* An entry damaged in each field of its header (magic, format, name
 * length, object length, key, checksum, the name after it), made writable
 * by group, emptied, or replaced by a link to a good copy: never loaded,
 * compiled again, and stored whole again in its place. */
static void test_hostile_entries_are_never_loaded(void **state)
{
    (void)state;
    /* offsets in the 88-byte header: magic 0, format 8, name_len 12,
     * obj_len 16, key 24, sum 56; the name follows it */
    static const long bytes[] = {0, 8, 12, 16, 24, 56, 88 + 3};
    enum { BYTES = sizeof bytes / sizeof *bytes };
    for (int how = 0; how < BYTES + 3; how++) {
        clear();
        assert_int_equal(compile_and_check(sig(44, 0)), 0);
        char path[512], copy[600];
        only_entry(path, sizeof path);
        if (how < BYTES) {
            int fd = open(path, O_RDWR);
            unsigned char c;
            assert_int_equal(pread(fd, &c, 1, bytes[how]), 1);
            c ^= 0x01;
            assert_int_equal(pwrite(fd, &c, 1, bytes[how]), 1);
            close(fd);
        } else if (how == BYTES) {
            assert_int_equal(chmod(path, 0620), 0);
        } else if (how == BYTES + 1) {
            assert_int_equal(truncate(path, 0), 0);
        } else {
            snprintf(copy, sizeof copy, "%s.copy", path);
            assert_int_equal(rename(path, copy), 0);
            assert_int_equal(symlink(copy, path), 0);
        }
        assert_int_equal(compile_and_check(sig(44, 0)), 0); /* refused, compiled again */
        assert_int_equal(compile_and_check(sig(44, 0)), 1); /* and stored whole again */
        struct stat st;
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 0777, 0600);
        if (how == BYTES + 2)
            unlink(copy);
    }
}

/* A folder where the entry would go: the store fails cleanly (no temporary
 * file left), the kernel still works, and stats count no entry. */
static void test_entry_path_taken_by_a_folder(void **state)
{
    (void)state;
    clear();
    assert_int_equal(compile_and_check(sig(45, 0)), 0);
    char path[512];
    only_entry(path, sizeof path);
    clear();
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(compile_and_check(sig(45, 0)), 0);
    assert_int_equal(compile_and_check(sig(45, 0)), 0); /* still nothing cached */
    int64_t n, b;
    char d[256];
    assert_int_equal(jit_cache_stats(0, &n, &b, d, sizeof d), 0);
    assert_int_equal(n, 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls %s | grep -v '\\.tjk$')\"", dir);
    assert_int_equal(system(cmd), 0); /* no .tmp left behind */
    assert_int_equal(rmdir(path), 0);
}

/* A FIFO where the entry would go: opening it to read must not wait for a
 * writer that never comes (the compile hung forever); it is a miss, the
 * kernel is compiled, and the store replaces the FIFO with a whole entry.
 * alarm() ends a test that hangs. */
static void test_entry_path_taken_by_a_fifo(void **state)
{
    (void)state;
    clear();
    assert_int_equal(compile_and_check(sig(46, 0)), 0);
    char path[512];
    only_entry(path, sizeof path);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(60);
    assert_int_equal(compile_and_check(sig(46, 0)), 0);
    alarm(0);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(compile_and_check(sig(46, 0)), 1);
}

/* Eviction over more entries than its first table holds (64), ordered by
 * the seconds of their mtimes: exactly the oldest go, until the folder
 * fits; other files, and folders named like entries, are left alone. */
static void test_eviction_over_many_entries(void **state)
{
    (void)state;
    enum { FAKES = 70, FAKE_BYTES = 1000, EVICTED = 35 };
    clear();
    assert_int_equal(compile_and_check(sig(46, 0)), 0);
    int64_t real = cache_bytes();
    clear();
    char path[512];
    static char junk[FAKE_BYTES];
    memset(junk, 'x', sizeof junk);
    for (int i = 0; i < FAKES; i++) {
        snprintf(path, sizeof path, "%s/fake%02d.tjk", dir, i);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
        fclose(f);
        /* seconds apart, the newest fake long before the real entry */
        struct timespec t[2] = {{.tv_sec = 1000000000 + 10 * i}, {.tv_sec = 1000000000 + 10 * i}};
        assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
    }
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not an entry\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/folder.tjk", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    char cap[32];
    snprintf(cap, sizeof cap, "%lld",
             (long long)(real + (FAKES - EVICTED) * FAKE_BYTES + FAKE_BYTES / 2));
    setenv("TENSORJIT_CACHE_MAX_BYTES", cap, 1);
    assert_int_equal(compile_and_check(sig(46, 0)), 0); /* stored: the scan evicts */
    unsetenv("TENSORJIT_CACHE_MAX_BYTES");
    for (int i = 0; i < FAKES; i++) {
        struct stat st;
        snprintf(path, sizeof path, "%s/fake%02d.tjk", dir, i);
        if ((stat(path, &st) == 0) != (i >= EVICTED))
            fail_msg("fake entry %d: %s, expected the %d oldest evicted", i,
                     i >= EVICTED ? "evicted" : "kept", EVICTED);
    }
    assert_int_equal(compile_and_check(sig(46, 0)), 1); /* the newest stays */
    struct stat st;
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof path, "%s/folder.tjk", dir);
    assert_int_equal(stat(path, &st), 0);
    int64_t n, b;
    char d[256];
    assert_int_equal(jit_cache_stats(1, &n, &b, d, sizeof d), 0); /* clear: entries only */
    assert_int_equal(n, 1 + FAKES - EVICTED);
    assert_int_equal(rmdir(path), 0);
}

/* Rewrites the object of the entry at path with edit() and puts its right
 * SHA-256 in the header (sum at offset 56; name_len at 12; the object
 * after the 88-byte header and the name): what a writer of the folder
 * could do, so the checksum no longer vouches for the object. */
static void rewrite_entry(const char *path, void (*edit)(unsigned char *obj, size_t len))
{
    static unsigned char buf[1 << 20];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    uint32_t name_len;
    memcpy(&name_len, buf + 12, 4);
    assert_true(n > 88 + name_len);
    unsigned char *obj = buf + 88 + name_len;
    size_t len = n - 88 - name_len;
    edit(obj, len);
    unsigned int sum_len = 0;
    assert_int_equal(EVP_Digest(obj, len, buf + 56, &sum_len, EVP_sha256(), NULL), 1);
    assert_int_equal(sum_len, 32);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
}

/* Every "tj_" symbol name becomes "tk_": the kernel's function is gone. */
static void rename_functions(unsigned char *obj, size_t len)
{
    int renamed = 0;
    for (size_t i = 0; i + 4 < len; i++)
        if (memcmp(obj + i, "tj_", 3) == 0 && obj[i + 3] != 'r') /* not tj_rt_* */
            obj[i + 1] = 'k', renamed++;
    assert_true(renamed > 0);
}

/* Only the validation function of a split kernel is renamed ("_check" ->
 * "_chekk"): its main function is there, its parts are not. */
static void rename_check_function(unsigned char *obj, size_t len)
{
    int renamed = 0;
    for (size_t i = 0; i + 6 <= len; i++)
        if (memcmp(obj + i, "_check", 6) == 0)
            obj[i + 4] = 'k', renamed++;
    assert_true(renamed > 0);
}

/* The code section marked writable: not what our code generator makes. */
static void writable_code(unsigned char *obj, size_t len)
{
    Elf64_Ehdr h;
    memcpy(&h, obj, sizeof h);
    assert_true(h.e_shoff + (size_t)h.e_shnum * sizeof(Elf64_Shdr) <= len);
    int marked = 0;
    for (size_t i = 0; i < h.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, obj + h.e_shoff + i * sizeof sh, sizeof sh);
        if (sh.sh_flags & SHF_EXECINSTR) {
            sh.sh_flags |= SHF_WRITE;
            memcpy(obj + h.e_shoff + i * sizeof sh, &sh, sizeof sh);
            marked = 1;
        }
    }
    assert_true(marked);
}

/* An entry whose checksum is right but whose object is not what tensorjit
 * makes. Without the kernel's function (or a split kernel's validation
 * function), neither loader takes it: compiled again and stored whole. With a writable code section, tensorjit's loader
 * refuses it and LLJIT (which maps sections itself) loads it: a hit that
 * still runs right. */
static void test_valid_checksum_foreign_objects(void **state)
{
    (void)state;
    char path[512];
    clear();
    assert_int_equal(compile_and_check(sig(47, 0)), 0);
    only_entry(path, sizeof path);
    rewrite_entry(path, rename_functions);
    assert_int_equal(compile_and_check(sig(47, 0)), 0); /* not loaded: compiled */
    assert_int_equal(compile_and_check(sig(47, 0)), 1); /* and stored whole again */

    clear();
    assert_int_equal(compile_and_check(sig(48, 2)), 0); /* a split kernel: three functions */
    only_entry(path, sizeof path);
    rewrite_entry(path, rename_check_function);
    assert_int_equal(compile_and_check(sig(48, 2)), 0);
    assert_int_equal(compile_and_check(sig(48, 2)), 1);

    clear();
    assert_int_equal(compile_and_check(sig(49, 0)), 0);
    only_entry(path, sizeof path);
    rewrite_entry(path, writable_code);
    assert_int_equal(compile_and_check(sig(49, 0)), 1);
}

static int setup(void **state)
{
    (void)state;
    snprintf(base, sizeof base, "/tmp/tj_cache_XXXXXX");
    if (!mkdtemp(base))
        return -1;
    snprintf(dir, sizeof dir, "%s/made/by/us", base); /* mkdir -p, 0700 */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    jit_shutdown();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    return system(cmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_miss_then_hit),
        cmocka_unit_test(test_corrupt_and_truncated_entries_are_never_loaded),
        cmocka_unit_test(test_entry_of_another_key_is_never_loaded),
        cmocka_unit_test(test_an_object_that_fails_to_load_is_not_stored),
        cmocka_unit_test(test_code_knobs_are_in_the_key),
        cmocka_unit_test(test_unsafe_folders_are_refused),
        cmocka_unit_test(test_relative_folder_survives_chdir),
        cmocka_unit_test(test_stats_name_a_vanished_folder_and_a_short_buffer),
        cmocka_unit_test(test_read_only_folder_serves_its_entries),
        cmocka_unit_test(test_two_processes_race_on_one_key),
        cmocka_unit_test(test_size_cap_evicts_least_recently_used),
        cmocka_unit_test(test_split_kernels_load_their_parts),
        cmocka_unit_test(test_hostile_entries_are_never_loaded),
        cmocka_unit_test(test_entry_path_taken_by_a_folder),
        cmocka_unit_test(test_entry_path_taken_by_a_fifo),
        cmocka_unit_test(test_eviction_over_many_entries),
        cmocka_unit_test(test_valid_checksum_foreign_objects),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
