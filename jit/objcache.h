/*
 * The on-disk cache of compiled kernels' objects. An entry is the object
 * the JIT emitted (position-independent, no absolute address: runtime
 * helpers are named symbols), under a SHA-256 key of everything that
 * decides its bytes: the signature, the plan, LLVM's version, the target
 * triple, CPU and sorted features, the pass pipeline, codegen level and
 * every code-changing environment knob, and the format version.
 *
 * File: a header (magic, format, symbol name length, object length, key
 * digest, SHA-256 of the object), the symbol name, the object. Written to
 * a temporary file (0600) and renamed, so a reader never sees half an
 * entry; read back only if every field checks. An entry whose contents
 * fail a check is removed; a file that is not a regular file of this user,
 * writable by nobody else and of a possible size, is only skipped. Either
 * way the kernel is compiled again.
 */
#ifndef TJ_OBJCACHE_H
#define TJ_OBJCACHE_H

#include <llvm-c/Core.h>
#include <stddef.h>

#include "config.h"
#include "engine.h"
#include "plan.h"

/* The folder's size cap (TENSORJIT_CACHE_MAX_BYTES changes it): past it,
 * the least recently used entries are deleted, when a store finds the
 * folder may be over it (or has not been looked at for a while). */
#define TJ_OBJCACHE_MAX_BYTES ((int64_t)1 << 30)

typedef struct tj_objkey {
    unsigned char digest[32];
    char name[48]; /* the kernel's symbol: tj_ + 32 hex digits of the digest */
} tj_objkey;

/* 0, or -1 and why: the folder cannot be made or is not safe. NULL closes. */
int tj_objcache_open(const char *dir, char *why, size_t len);
int tj_objcache_enabled(void);
/* Pays the hashing library's one-time start-up now (jit_cache_open calls
 * it on its own thread while the engine starts on the warm-up thread). */
void tj_objcache_warm(void);
/* Initializes OpenSSL (cheap; it registers its atexit cleanup then),
 * without the first digest's provider load. */
void tj_objcache_init_crypto(void);

/* The key of a kernel: the engine's identity, the code-changing
 * configuration (cfg, hashed whole), the plan and the signature's key. */
void tj_objcache_key(const tj_engine *en, const tj_codegen_config *cfg, const tj_plan *p,
                     const void *sig_key, size_t key_len, tj_objkey *out);

/* The entry, checked, as a buffer to free(); *obj points at its object
 * inside it and *obj_len is the object's size. NULL on a miss (an entry
 * whose contents fail a check is removed). */
void *tj_objcache_load(const tj_objkey *k, const void **obj, size_t *obj_len);
/* Best effort: a failed store only costs a compile next time. */
void tj_objcache_store(const tj_objkey *k, const void *obj, size_t len);

/* Entries and bytes in the open folder; with remove, deletes them. */
int tj_objcache_stats(int remove, int64_t *entries, int64_t *bytes, char *dir, size_t dlen);
/* Why the last tj_objcache_open was refused ("" if it was not). */
void tj_objcache_refusal(char *why, size_t len);

#endif
