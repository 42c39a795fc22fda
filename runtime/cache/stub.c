/*
 * Entry stubs. A kernel that the kernel limit may release is handed out as
 * a stub, 8 bytes of x86-64 code, `jmp *slot(%rip)`, whose slot holds the
 * kernel's body. Why not the body's own address: once its resource tracker
 * is removed, LLVM is free to put a later kernel's code at that very
 * address, and a caller still holding the old pointer would run a kernel
 * of another signature. Stubs are never freed or reused, not even by
 * jit_shutdown, so a released kernel's pointer is never handed out again
 * in the life of the process; releasing points its slot at a handler that
 * returns JIT_STATUS_RELEASED, so a late call fails cleanly instead of
 * running freed memory, and jit_shutdown points every stub in use at a
 * handler that says the kernel was freed. (Unmapped at shutdown, an arena's
 * addresses went back to the system, and a kernel compiled after the
 * shutdown could be handed out at an address an old caller still held.) Tiered kernels (tiered.c) use the same stubs as their
 * switch from the reference kernel to the JIT kernel. The indirect jump shows only on the per-call workloads
 * (the `jit stub` row of `tensorjit bench`; docs/performance.md, 'Kernel
 * limit').
 *
 * An arena is 32 KiB of stub code followed by 32 KiB of slots. The code is
 * written once, before it becomes executable, and never again (W^X); only
 * the slots change, by atomic stores.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "stub.h"

#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TJ_STUB_BYTES 8
#define TJ_STUBS_PER_ARENA 4096
#define TJ_STUB_CODE (TJ_STUBS_PER_ARENA * TJ_STUB_BYTES)
#define TJ_STUB_ARENA (2 * TJ_STUB_CODE)
#define TJ_STUB_MAX_ARENAS 1024 /* 4 M stubs: more releases than a process makes */

#if defined(__x86_64__)

static pthread_mutex_t tj_stub_lock = PTHREAD_MUTEX_INITIALIZER;
/* arenas[i] is written before narenas counts it, and stays mapped for the
 * life of the process */
static unsigned char *tj_arenas[TJ_STUB_MAX_ARENAS];
static _Atomic size_t tj_narenas;
static size_t tj_used; /* stubs handed out from the last arena (lock held) */

int tj_stub_supported(void)
{
    return 1;
}

static _Atomic uintptr_t *tj_slot_of(unsigned char *arena, size_t i)
{
    return (_Atomic uintptr_t *)(void *)(arena + TJ_STUB_CODE + i * TJ_STUB_BYTES);
}

/* A new arena with every stub's code written: stub i jumps through slot i,
 * TJ_STUB_CODE bytes further on, so every stub has the same bytes. */
static unsigned char *tj_arena_new(void)
{
    void *m = mmap(NULL, TJ_STUB_ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                   0);
    if (m == MAP_FAILED)
        return NULL;
    unsigned char *a = m;
    int32_t rel = TJ_STUB_CODE - 6; /* from the end of the 6-byte jmp to its slot */
    for (size_t i = 0; i < TJ_STUBS_PER_ARENA; i++) {
        unsigned char *s = a + i * TJ_STUB_BYTES;
        s[0] = 0xff; /* jmp qword ptr [rip + rel32] */
        s[1] = 0x25;
        memcpy(s + 2, &rel, sizeof rel);
        s[6] = s[7] = 0xcc; /* int3 */
    }
    if (mprotect(a, TJ_STUB_CODE, PROT_READ | PROT_EXEC) != 0) {
        munmap(a, TJ_STUB_ARENA);
        return NULL;
    }
    return a;
}

/* TENSORJIT_FAULT=stub: no stubs, as on other architectures, so that tests
 * reach the paths that do without them. */
static int tj_stub_fault(void)
{
    return tj_config_fault("stub");
}

tj_entry_fn tj_stub_new(tj_entry_fn target)
{
    tj_entry_fn stub = NULL;
    if (tj_stub_fault())
        return NULL;
    pthread_mutex_lock(&tj_stub_lock);
    size_t n = atomic_load_explicit(&tj_narenas, memory_order_relaxed);
    if (n == 0 || tj_used == TJ_STUBS_PER_ARENA) {
        unsigned char *a = n < TJ_STUB_MAX_ARENAS ? tj_arena_new() : NULL;
        if (!a)
            goto done;
        tj_arenas[n] = a;
        atomic_store_explicit(&tj_narenas, ++n, memory_order_release);
        tj_used = 0;
    }
    unsigned char *a = tj_arenas[n - 1];
    atomic_store_explicit(tj_slot_of(a, tj_used), (uintptr_t)target, memory_order_release);
    stub = (tj_entry_fn)(void *)(a + tj_used * TJ_STUB_BYTES);
    tj_used++;
done:
    pthread_mutex_unlock(&tj_stub_lock);
    return stub;
}

/* The slot of the stub at fn, or NULL when fn is no stub's address. */
static _Atomic uintptr_t *tj_slot_at(tj_entry_fn fn)
{
    uintptr_t p = (uintptr_t)fn;
    size_t n = atomic_load_explicit(&tj_narenas, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)tj_arenas[i];
        if (p >= a && p < a + TJ_STUB_CODE && (p - a) % TJ_STUB_BYTES == 0)
            return tj_slot_of(tj_arenas[i], (p - a) / TJ_STUB_BYTES);
    }
    return NULL;
}

int tj_stub_target(tj_entry_fn fn, tj_entry_fn *target)
{
    _Atomic uintptr_t *slot = tj_slot_at(fn);
    uintptr_t t = slot ? atomic_load_explicit(slot, memory_order_acquire) : 0;
    if (!t) /* no stub, or one not handed out yet */
        return 0;
    *target = (tj_entry_fn)t;
    return 1;
}

void tj_stub_point(tj_entry_fn stub, tj_entry_fn target)
{
    _Atomic uintptr_t *slot = tj_slot_at(stub);
    if (slot)
        atomic_store_explicit(slot, (uintptr_t)target, memory_order_release);
}

#else /* no stubs: kernels are never released (jit_set_kernel_limit says so) */

int tj_stub_supported(void)
{
    return 0;
}

tj_entry_fn tj_stub_new(tj_entry_fn target)
{
    (void)target;
    return NULL;
}

int tj_stub_target(tj_entry_fn fn, tj_entry_fn *target)
{
    (void)fn;
    (void)target;
    return 0;
}

void tj_stub_point(tj_entry_fn stub, tj_entry_fn target)
{
    (void)stub;
    (void)target;
}

#endif
