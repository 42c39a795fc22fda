#define _DEFAULT_SOURCE /* fchmod, O_NOFOLLOW */
#include "objcache.h"

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <llvm/Config/llvm-config.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TJ_OBJ_MAGIC "TJKCACHE"
#define TJ_OBJ_FORMAT 22u /* 2: the plan of levels; 3: range functions take flags;
                            4: a bag kernel on one thread is one function;
                            5: dynamic and segments bag kernels split;
                            6: a bag kernel's loops compiled for compile time;
                            7: a bag check's masks made before its loop;
                            8: long bags prefetch further;
                            9: 64-byte moves in zmm where 256 bits are preferred,
                               small odd slices in ascending moves,
                               bags from a table inside the last-level cache prefetch further;
                            10: bags on an Intel core prefetch further;
                            11: a bag sum's NaN redo is the reference kernel's (a call);
                            12: split kernels of 1 MB of indices or more check them in parts;
                            13: the check's chunks keep their largest value, not a mask;
                            14: a bag kernel's check pass is the runtime's (tj_rt_bag_scan),
                                its NaN redo finds its bags by their rows;
                            15: a split bag kernel has no check function, a bf16 or f16
                                row rounds in a loop, a bag kernel's passes are mem2reg
                                alone, bags one at a time (TENSORJIT_INTERLEAVE);
                            16: a bag kernel's priming is the runtime's (tj_rt_bag_prime);
                            17: a bag row of several blocks is a loop over them;
                            18: the primer is given the index type, not a width and sign;
                            19: dynamic split kernels check calls of 1 MB of indices in parts;
                            20: bags from a cached table prefetch further on Intel cores only;
                            21: a dynamic bag kernel's checks are one runtime call;
                            22: a dynamic ScatterElementsUpdate's levels before the axis
                                are units whether or not indices span data there, its
                                range's copy a word of the call */
#define TJ_OBJ_MAX (256u << 20) /* no entry is larger: refuse before reading */

typedef struct tj_obj_header {
    char magic[8];
    uint32_t format;
    uint32_t name_len;
    uint64_t obj_len;
    unsigned char key[32];
    unsigned char sum[32];
} tj_obj_header;

static pthread_mutex_t tj_objcache_lock = PTHREAD_MUTEX_INITIALIZER;
static char tj_objcache_dir[4096]; /* "" when closed */
static char tj_objcache_refused[600]; /* why the last open failed, "" if it did not */
/* The folder's bytes as of the last scan plus what this process stored
 * since (-1: not scanned yet). Scanning lists and stats every entry; doing
 * it after every store made filling a folder quadratic (docs/performance.md,
 * 'Disk cache and tiered kernels'). It now runs when the estimate passes
 * the cap, and every TJ_SCAN_EVERY stores for what other processes wrote. */
static int64_t tj_folder_bytes = -1;
static int tj_stores_since_scan;
#define TJ_SCAN_EVERY 64

static int tj_sha256(const void *a, size_t an, const void *b, size_t bn, unsigned char out[32])
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) && EVP_DigestUpdate(c, a, an) &&
             (!bn || EVP_DigestUpdate(c, b, bn)) && EVP_DigestFinal_ex(c, out, NULL);
    EVP_MD_CTX_free(c);
    return ok ? 0 : -1;
}

/* mkdir -p, each folder it creates 0700. */
static int tj_make_dirs(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0700) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* A cache is code: only a folder of our own that nobody else may write. */
static int tj_check_dir(const char *dir, char *why, size_t len)
{
    struct stat st;
    if (lstat(dir, &st) != 0)
        return snprintf(why, len, "cache folder %s: %s", dir, strerror(errno)), -1;
    if (!S_ISDIR(st.st_mode))
        return snprintf(why, len, "cache folder %s is not a folder (a link or a file)", dir), -1;
    if (st.st_uid != geteuid())
        return snprintf(why, len, "cache folder %s is owned by uid %u, not by this process "
                        "(uid %u): refused, since whoever writes the cache runs code",
                        dir, (unsigned)st.st_uid, (unsigned)geteuid()), -1;
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return snprintf(why, len, "cache folder %s is writable by group or others (mode %03o): "
                        "refused, since whoever writes the cache runs code",
                        dir, (unsigned)(st.st_mode & 0777)), -1;
    /* one this process may only read serves its entries and stores none
     * (a server's read-only image of a cache --precompile filled) */
    if (access(dir, R_OK | X_OK) != 0)
        return snprintf(why, len, "cache folder %s cannot be listed and read: %s", dir,
                        strerror(errno)), -1;
    return 0;
}

/* The folder as the checks saw it, made absolute: a relative one resolved
 * against the working folder of each later store would follow a chdir to
 * a folder nobody checked. Links are left as they are (tj_check_dir
 * refused the last component being one). */
static int tj_absolute_dir(const char *dir, char *why, size_t len)
{
    char cwd[4096];
    if (dir[0] == '/') {
        snprintf(tj_objcache_dir, sizeof tj_objcache_dir, "%s", dir);
        return 0;
    }
    if (!getcwd(cwd, sizeof cwd))
        return snprintf(why, len, "cache folder %s: the working folder it is relative to "
                        "cannot be read: %s", dir, strerror(errno)), -1;
    if (strlen(cwd) + 1 + strlen(dir) > sizeof tj_objcache_dir - 80)
        return snprintf(why, len, "cache folder path is too long (%s/%s)", cwd, dir), -1;
    size_t c = strcmp(cwd, "/") ? strlen(cwd) : 0; /* the length checked above */
    memcpy(tj_objcache_dir, cwd, c);
    tj_objcache_dir[c] = '/';
    memcpy(tj_objcache_dir + c + 1, dir, strlen(dir) + 1);
    return 0;
}

int tj_objcache_open(const char *dir, char *why, size_t len)
{
    int rc = 0;
    pthread_mutex_lock(&tj_objcache_lock);
    tj_objcache_dir[0] = '\0';
    tj_folder_bytes = -1;
    if (dir && *dir) {
        if (strlen(dir) > sizeof tj_objcache_dir - 80)
            rc = (snprintf(why, len, "cache folder path is too long"), -1);
        else if (tj_make_dirs(dir) != 0)
            rc = (snprintf(why, len, "cannot create cache folder %s: %s", dir, strerror(errno)), -1);
        else if ((rc = tj_check_dir(dir, why, len)) == 0)
            rc = tj_absolute_dir(dir, why, len);
    }
    snprintf(tj_objcache_refused, sizeof tj_objcache_refused, "%s", rc ? why : "");
    pthread_mutex_unlock(&tj_objcache_lock);
    return rc;
}

void tj_objcache_refusal(char *why, size_t len)
{
    pthread_mutex_lock(&tj_objcache_lock);
    snprintf(why, len, "%s", tj_objcache_refused);
    pthread_mutex_unlock(&tj_objcache_lock);
}

void tj_objcache_init_crypto(void)
{
    OPENSSL_init_crypto(0, NULL);
}

void tj_objcache_warm(void)
{
    /* OpenSSL 3 loads its provider on the first digest of a process, which
     * costs more than the rest of a cached first call (docs/performance.md,
     * 'Disk cache and tiered kernels'): done here, off the first call's
     * path */
    unsigned char d[32];
    tj_sha256("", 0, NULL, 0, d);
}

int tj_objcache_enabled(void)
{
    pthread_mutex_lock(&tj_objcache_lock);
    int on = tj_objcache_dir[0] != '\0';
    pthread_mutex_unlock(&tj_objcache_lock);
    return on;
}

/* The engine's part of what decides the object's bytes (the environment's
 * part is the codegen configuration, hashed as it is). */
static size_t tj_engine_identity(const tj_engine *en, char *buf, size_t len)
{
    int n = snprintf(buf, len, "tjk%u|LLVM %s|%s|%s|%s|%s|%s|%d|%d", TJ_OBJ_FORMAT,
                     LLVM_VERSION_STRING, en->triple, en->cpu, en->features, en->pipeline,
                     en->bag_pipeline ? en->bag_pipeline : "-", en->llvm_loop_opts,
                     (int)en->codegen_level);
    return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* The plan as bytes, field by field (no padding): what the code is made
 * of (the fields for messages are the runtime's, not the code's). */
static size_t tj_plan_bytes(const tj_plan *p, int64_t *w, size_t cap)
{
    int64_t f[] = {p->op, p->indexed, p->has_updates, p->reduction, p->no_init_val, p->dtype,
                   p->index_type, p->policy,
                   p->elem_size, p->index_size, p->nlevels, p->unit_levels, p->units, p->visits,
                   p->depth, p->block_bytes, p->copy_bytes, p->unit_copy_bytes, p->tuples,
                   p->threads, p->data_bytes, p->indices_elems, p->updates_bytes, p->out_bytes};
    size_t n = 0;
    for (size_t i = 0; i < sizeof f / sizeof *f && n < cap; i++)
        w[n++] = f[i];
    for (int l = 0; l < p->nlevels && n + 4 <= cap; l++) {
        w[n++] = p->levels[l].trip;
        w[n++] = p->levels[l].index_step;
        w[n++] = p->levels[l].indexed_step;
        w[n++] = p->levels[l].dense_step;
    }
    for (int d = 0; d < p->depth && n + 2 <= cap; d++) {
        w[n++] = p->dims[d];
        w[n++] = p->strides[d];
    }
    return n * sizeof *w;
}

void tj_objcache_key(const tj_engine *en, const tj_codegen_config *cfg, const tj_plan *p,
                     const void *sig_key, size_t key_len, tj_objkey *out)
{
    static const char hex[] = "0123456789abcdef";
    char id[4096];
    int64_t plan[32 + 4 * TJ_MAX_LEVELS + 2 * JIT_MAX_RANK];
    size_t idn = tj_engine_identity(en, id, sizeof id);
    size_t pn = tj_plan_bytes(p, plan, sizeof plan / sizeof *plan);
    unsigned char a[32], b[32], c[32];
    tj_sha256(id, idn, cfg, sizeof *cfg, a);
    tj_sha256(a, sizeof a, plan, pn, b);
    tj_sha256(b, sizeof b, sig_key, key_len, c);
    memcpy(b, c, sizeof b);
    memcpy(out->digest, b, 32);
    memcpy(out->name, "tj_", 3);
    for (int i = 0; i < 16; i++) {
        out->name[3 + 2 * i] = hex[b[i] >> 4];
        out->name[4 + 2 * i] = hex[b[i] & 15];
    }
    out->name[35] = '\0';
}

static void tj_entry_path(const tj_objkey *k, const char *dir, char *path, size_t len)
{
    snprintf(path, len, "%s/%s.tjk", dir, k->name + 3);
}

/* Reads the whole entry at path into a new buffer; 0 or -1. O_NONBLOCK:
 * anyone who can name a file in the folder could leave a FIFO there, and a
 * blocking open of a FIFO waits for a writer forever; the type is checked
 * on the open descriptor (fstat), so nothing can swap the file in between.
 * On a regular file O_NONBLOCK changes nothing. */
static int tj_read_entry(const char *path, unsigned char **buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
             !(st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_size >= (off_t)sizeof(tj_obj_header) &&
             (uint64_t)st.st_size <= TJ_OBJ_MAX;
    unsigned char *b = ok ? malloc((size_t)st.st_size) : NULL;
    size_t got = 0;
    while (b && got < (size_t)st.st_size) {
        ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!b || got != (size_t)st.st_size) {
        free(b);
        return -1;
    }
    *buf = b;
    *len = got;
    return 0;
}

/* 0 when every field of the entry checks against k. The lengths are
 * compared before anything is read past the header: an entry shorter than
 * its header and name must not make len - sizeof h - nl wrap around. */
static int tj_entry_valid(const tj_objkey *k, const unsigned char *buf, size_t len)
{
    tj_obj_header h;
    if (len < sizeof h)
        return -1;
    memcpy(&h, buf, sizeof h);
    size_t nl = strlen(k->name);
    unsigned char sum[32];
    if (memcmp(h.magic, TJ_OBJ_MAGIC, 8) != 0 || h.format != TJ_OBJ_FORMAT ||
        memcmp(h.key, k->digest, 32) != 0 || h.name_len != nl || len - sizeof h < nl ||
        h.obj_len != len - sizeof h - nl || memcmp(buf + sizeof h, k->name, nl) != 0)
        return -1;
    if (tj_sha256(buf + sizeof h + nl, (size_t)h.obj_len, NULL, 0, sum) != 0 ||
        memcmp(sum, h.sum, 32) != 0)
        return -1;
    return 0;
}

void *tj_objcache_load(const tj_objkey *k, const void **obj, size_t *obj_len)
{
    char dir[4096], path[4200];
    pthread_mutex_lock(&tj_objcache_lock);
    snprintf(dir, sizeof dir, "%s", tj_objcache_dir);
    pthread_mutex_unlock(&tj_objcache_lock);
    if (!dir[0])
        return NULL;
    tj_entry_path(k, dir, path, sizeof path);
    unsigned char *buf;
    size_t len;
    if (tj_read_entry(path, &buf, &len) != 0)
        return NULL;
    if (tj_entry_valid(k, buf, len) != 0) {
        unlink(path); /* truncated, corrupted or another key's: never loaded */
        free(buf);
        return NULL;
    }
    size_t off = sizeof(tj_obj_header) + strlen(k->name);
    *obj = buf + off;
    *obj_len = len - off;
    utimensat(AT_FDCWD, path, NULL, 0); /* recently used: evicted last */
    return buf;
}

typedef struct tj_entry_stat {
    char name[64];
    time_t mtime;
    long mtime_ns;
    int64_t bytes;
} tj_entry_stat;

static int tj_older(const void *a, const void *b)
{
    const tj_entry_stat *x = a, *y = b;
    if (x->mtime != y->mtime)
        return x->mtime < y->mtime ? -1 : 1;
    return x->mtime_ns < y->mtime_ns ? -1 : x->mtime_ns > y->mtime_ns;
}

/* The cap in bytes: TENSORJIT_CACHE_MAX_BYTES, else TJ_OBJCACHE_MAX_BYTES. */
static int64_t tj_cache_cap(void)
{
    int64_t n = tj_config_get()->cache_max_bytes;
    return n > 0 ? n : TJ_OBJCACHE_MAX_BYTES;
}

/* Least recently used first (a load refreshes an entry's mtime), entries
 * are deleted until the folder holds at most the cap. Other processes may
 * evict at the same time: a file already gone is fine. Returns the bytes
 * left, or -1 when the folder cannot be read. */
static int64_t tj_evict(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t n = 0, cap = 64;
    tj_entry_stat *all = malloc(cap * sizeof *all);
    int64_t total = 0;
    for (struct dirent *e; all && (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        char path[4400];
        struct stat st;
        if (l < 5 || l >= sizeof all->name || strcmp(e->d_name + l - 4, ".tjk") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            tj_entry_stat *more = realloc(all, 2 * cap * sizeof *all);
            if (!more)
                break;
            all = more;
            cap *= 2;
        }
        memcpy(all[n].name, e->d_name, l + 1); /* l < sizeof name: checked above */
        all[n].mtime = st.st_mtim.tv_sec;
        all[n].mtime_ns = st.st_mtim.tv_nsec;
        all[n].bytes = st.st_size;
        total += st.st_size;
        n++;
    }
    closedir(d);
    int64_t limit = tj_cache_cap();
    if (all && total > limit) {
        qsort(all, n, sizeof *all, tj_older);
        for (size_t i = 0; i < n && total > limit; i++) {
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", dir, all[i].name);
            if (unlink(path) == 0 || errno == ENOENT)
                total -= all[i].bytes;
        }
    }
    free(all);
    return all ? total : -1;
}

/* After a store of `bytes`: scans (and evicts) when the folder may be over
 * the cap, or has not been looked at for TJ_SCAN_EVERY stores. */
static void tj_after_store(const char *dir, int64_t bytes)
{
    pthread_mutex_lock(&tj_objcache_lock);
    if (tj_folder_bytes >= 0)
        tj_folder_bytes += bytes;
    int scan = tj_folder_bytes < 0 || tj_folder_bytes > tj_cache_cap() ||
               ++tj_stores_since_scan >= TJ_SCAN_EVERY;
    if (scan)
        tj_stores_since_scan = 0;
    pthread_mutex_unlock(&tj_objcache_lock);
    if (!scan)
        return;
    int64_t left = tj_evict(dir);
    pthread_mutex_lock(&tj_objcache_lock);
    if (strcmp(dir, tj_objcache_dir) == 0) /* still the open folder */
        tj_folder_bytes = left;
    pthread_mutex_unlock(&tj_objcache_lock);
}

void tj_objcache_store(const tj_objkey *k, const void *obj, size_t len)
{
    char dir[4096], path[4200], tmp[4300];
    pthread_mutex_lock(&tj_objcache_lock);
    snprintf(dir, sizeof dir, "%s", tj_objcache_dir);
    pthread_mutex_unlock(&tj_objcache_lock);
    if (!dir[0] || len > TJ_OBJ_MAX)
        return;
    tj_entry_path(k, dir, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.%ld.%lx.tmp", path, (long)getpid(), (unsigned long)pthread_self());
    tj_obj_header h = {.format = TJ_OBJ_FORMAT, .obj_len = len};
    memcpy(h.magic, TJ_OBJ_MAGIC, 8);
    memcpy(h.key, k->digest, 32);
    h.name_len = (uint32_t)strlen(k->name);
    if (tj_sha256(obj, len, NULL, 0, h.sum) != 0)
        return;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    int ok = write(fd, &h, sizeof h) == (ssize_t)sizeof h &&
             write(fd, k->name, h.name_len) == (ssize_t)h.name_len &&
             write(fd, obj, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    /* rename is atomic: readers see the old entry, none, or this whole one.
     * No fsync: an entry a power loss leaves short or garbled fails its
     * length or checksum check and is compiled again (docs/cache.md) */
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return;
    }
    tj_after_store(dir, (int64_t)(sizeof h + h.name_len + len));
}

/* Counts (and with remove, deletes) the folder's entries: 0, -1 when no
 * folder is open, -2 (errno set) when the open one cannot be listed (it
 * was removed since), -3 when dir_out cannot hold its path (found before
 * anything is counted or deleted: a cut path names another folder). */
static int tj_walk_entries(int remove, int64_t *entries, int64_t *bytes, char *dir_out, size_t dlen)
{
    char dir[4096];
    pthread_mutex_lock(&tj_objcache_lock);
    snprintf(dir, sizeof dir, "%s", tj_objcache_dir);
    pthread_mutex_unlock(&tj_objcache_lock);
    *entries = *bytes = 0;
    if (dir[0] && strlen(dir) >= dlen)
        return -3;
    snprintf(dir_out, dlen, "%s", dir);
    if (!dir[0])
        return -1;
    DIR *d = opendir(dir);
    if (!d)
        return -2;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".tjk") != 0)
            continue;
        char path[4400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (remove && unlink(path) != 0)
            continue;
        (*entries)++;
        *bytes += st.st_size;
    }
    closedir(d);
    return 0;
}

int tj_objcache_stats(int remove, int64_t *entries, int64_t *bytes, char *dir, size_t dlen)
{
    return tj_walk_entries(remove, entries, bytes, dir, dlen);
}
