/*
 * Tiered kernels. The entry point is an entry stub (stub.c), whose slot
 * first holds the reference kernel's entry and, once the background
 * compile is done, the JIT kernel's: the switch is one atomic store and the
 * call path one indirect jump, no lock (the `tiered` row of `tensorjit
 * bench`; docs/performance.md, 'Disk cache and tiered kernels'). Calls in
 * flight finish on whichever they jumped to.
 * Both implementations stay alive until jit_shutdown(), so no call ever
 * runs freed code. One background thread compiles every tiered kernel, in
 * the order asked for. Where there are no stubs (not x86-64) the entry is a
 * libffi closure whose handler loads the current implementation with one
 * acquire load and calls it, several times the cost of a small kernel
 * (same section).
 */
#include "tiered.h"

#include <ffi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "dyn.h"
#include "error.h"
#include "op.h"
#include "stub.h"

typedef struct tj_tiered {
    tj_kernel front;                 /* what users hold: its entry is the stub (or closure) */
    _Atomic(tj_kernel *) current;    /* what the entry runs now */
    tj_kernel *reference;            /* kept until shutdown */
    struct tj_dyn *dyn;              /* a family's template, front.plan.dyn (else NULL) */
    unsigned char key[sizeof(((tj_key *)0)->words)];
    size_t key_len;
    struct tj_tiered *queued; /* the next in the compiler's queue */
    ffi_closure *closure;
    ffi_cif cif;
    ffi_type *args[6];
    struct tj_tiered *next;
} tj_tiered;

static pthread_mutex_t tj_tiered_lock = PTHREAD_MUTEX_INITIALIZER;
static tj_tiered *tj_all;

/* One background compiler, started with the first tiered kernel, compiles
 * them in the order they were asked for: a model's hundreds of layers
 * through jit_*_compile_async would otherwise start as many threads (each
 * kept, with its stack, until jit_shutdown joined it) and as many LLVM
 * compiles at once on a host's few cores. (lock) */
static pthread_cond_t tj_work = PTHREAD_COND_INITIALIZER;
static tj_tiered *tj_queue, **tj_queue_end = &tj_queue;
static pthread_t tj_compiler;
static int tj_compiler_on;      /* started, not yet joined */
static int tj_compiler_joining; /* a tj_compiler_end is joining it */
static int tj_compiler_stop;    /* jit_shutdown or exit asks it to end */
static pthread_once_t tj_fork_once = PTHREAD_ONCE_INIT;

static void tj_tiered_call(ffi_cif *cif, void *ret, void **args, void *user)
{
    (void)cif;
    tj_tiered *t = user;
    tj_kernel *k = atomic_load_explicit(&t->current, memory_order_acquire);
    *(ffi_sarg *)ret = tj_abi_of(&k->plan)->call_args(k->entry, args);
}

/* The JIT kernel, through the ordinary cache (so jit_*_compile later returns
 * its direct pointer); then the switch. */
static void tj_tiered_compile(tj_tiered *t)
{
    tj_key key;
    key.len = t->key_len;
    memcpy(key.words, t->key, t->key_len);
    tj_kernel *k = tj_cache_get(&key, &t->front.plan, JIT_ENGINE_AUTO);
    if (k && k->engine == JIT_ENGINE_JIT) {
        atomic_store_explicit(&t->current, k, memory_order_release);
        if (!t->closure) /* held by t until shutdown: its code stays */
            tj_stub_point(t->front.entry, k->entry);
    }
}

/* The compiler's loop: the queue's first kernel, compiled outside the
 * lock, until jit_shutdown says stop (what is still queued then stays on
 * its reference kernel, and is freed with it). */
static void *tj_compiler_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&tj_tiered_lock);
    for (;;) {
        while (!tj_queue && !tj_compiler_stop)
            pthread_cond_wait(&tj_work, &tj_tiered_lock);
        if (tj_compiler_stop)
            break;
        tj_tiered *t = tj_queue;
        if (!(tj_queue = t->queued))
            tj_queue_end = &tj_queue;
        pthread_mutex_unlock(&tj_tiered_lock);
        tj_tiered_compile(t);
        pthread_mutex_lock(&tj_tiered_lock);
    }
    pthread_mutex_unlock(&tj_tiered_lock);
    return NULL;
}

/* fork: the lock is taken around it, so that the child's copy is in a
 * known state (not one the compiler held); the child has no compiler, and
 * tj_work, copied with the parent's compiler counted as its waiter, would
 * make the child's first signal wait for that waiter forever: a fresh one. */
static void tj_fork_prepare(void)
{
    pthread_mutex_lock(&tj_tiered_lock);
}

static void tj_fork_parent(void)
{
    pthread_mutex_unlock(&tj_tiered_lock);
}

static void tj_fork_child(void)
{
    tj_work = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    tj_compiler_on = tj_compiler_joining = 0;
    pthread_mutex_unlock(&tj_tiered_lock);
}

static void tj_fork_handlers(void)
{
    pthread_atfork(tj_fork_prepare, tj_fork_parent, tj_fork_child);
}

/* Stops the compiler, dropping what is queued (those kernels stay on their
 * reference kernels), and joins it: at jit_shutdown, and at exit, so that
 * an exit waits for one compile at most. (LLVM's statics made after this
 * handler was registered are destroyed before it runs: a process should
 * still call jit_shutdown before it exits with compiles in flight.) */
static void tj_compiler_end(void)
{
    pthread_mutex_lock(&tj_tiered_lock);
    tj_queue = NULL;
    tj_queue_end = &tj_queue;
    int join = tj_compiler_on && !tj_compiler_joining; /* one joins it, once */
    pthread_t compiler = tj_compiler;
    tj_compiler_joining |= join;
    tj_compiler_stop = 1;
    pthread_cond_broadcast(&tj_work);
    pthread_mutex_unlock(&tj_tiered_lock);
    if (!join)
        return;
    pthread_join(compiler, NULL); /* its compile in flight, if any, ends first */
    pthread_mutex_lock(&tj_tiered_lock);
    tj_compiler_on = tj_compiler_joining = 0;
    pthread_mutex_unlock(&tj_tiered_lock);
}

/* The compiler started where there is work and it is not running (lock
 * held); tried again at the next request where the thread could not be
 * made, and meanwhile the kernels run their reference kernels. */
static void tj_compiler_start(void)
{
    static pid_t at_exit; /* registered by this process (a fork's child: again, later) */
    if (!tj_queue || tj_compiler_on)
        return;
    if (at_exit != getpid() && atexit(tj_compiler_end) == 0)
        at_exit = getpid();
    tj_compiler_stop = 0;
    tj_compiler_on = pthread_create(&tj_compiler, NULL, tj_compiler_main, NULL) == 0;
}

/* t at the queue's end, for the compiler (lock held). */
static void tj_enqueue(tj_tiered *t)
{
    *tj_queue_end = t;
    tj_queue_end = &t->queued;
    tj_compiler_start();
    pthread_cond_signal(&tj_work);
}

static int tj_tiered_bind(tj_tiered *t)
{
    tj_entry_fn stub = tj_stub_new(t->reference->entry);
    if (stub) {
        t->front.entry = t->front.user_entry = stub;
        return 0;
    }
    unsigned nargs = tj_abi_of(&t->front.plan)->nargs;
    void *code;
    for (unsigned i = 0; i < nargs; i++)
        t->args[i] = &ffi_type_pointer;
    t->closure = tj_closure_alloc(&code);
    if (!t->closure)
        return -1;
    if (ffi_prep_cif(&t->cif, FFI_DEFAULT_ABI, nargs, &ffi_type_sint, t->args) != FFI_OK ||
        ffi_prep_closure_loc(t->closure, &t->cif, tj_tiered_call, t, code) != FFI_OK) {
        ffi_closure_free(t->closure);
        return -1;
    }
    t->front.entry = t->front.user_entry = (tj_entry_fn)code;
    return 0;
}

/* front.plan as plan; a family's template copied, so that the background
 * compile plans from memory of t's own, not the caller's stack. */
static int tj_tiered_plan(tj_tiered *t, const tj_plan *plan)
{
    t->front.plan = *plan;
    if (!plan->dyn)
        return 0;
    t->dyn = tj_malloc(sizeof *t->dyn);
    if (!t->dyn)
        return -1;
    *t->dyn = *plan->dyn;
    t->front.plan.dyn = t->front.dyn = t->dyn;
    return 0;
}

static void tj_tiered_free(tj_tiered *t)
{
    if (t->reference)
        tj_kernel_destroy(t->reference);
    tj_free(t->dyn);
    tj_free(t);
}

static tj_tiered *tj_find(const tj_key *key)
{
    for (tj_tiered *t = tj_all; t; t = t->next)
        if (t->key_len == key->len && memcmp(t->key, key->words, key->len) == 0)
            return t;
    return NULL;
}

tj_kernel *tj_tiered_get(const tj_key *key, const tj_plan *plan)
{
    pthread_once(&tj_fork_once, tj_fork_handlers);
    pthread_mutex_lock(&tj_tiered_lock);
    tj_tiered *t = tj_find(key);
    if (t) {
        tj_compiler_start(); /* where an earlier try could not make the thread */
        pthread_mutex_unlock(&tj_tiered_lock);
        return &t->front;
    }
    t = tj_calloc(1, sizeof *t);
    tj_kernel *ref = t ? tj_kernel_build(plan, key->words, key->len, JIT_ENGINE_REFERENCE) : NULL;
    if (t)
        t->reference = ref;
    if (!t || !ref || tj_tiered_plan(t, plan) != 0) {
        if (t)
            tj_tiered_free(t);
        pthread_mutex_unlock(&tj_tiered_lock);
        tj_error_set("out of memory making a tiered kernel");
        return NULL;
    }
    t->key_len = key->len;
    memcpy(t->key, key->words, key->len);
    atomic_init(&t->current, ref);
    if (tj_tiered_bind(t) != 0) {
        tj_tiered_free(t);
        pthread_mutex_unlock(&tj_tiered_lock);
        tj_error_set("libffi could not make a tiered kernel's entry point");
        return NULL;
    }
    t->front.engine = JIT_ENGINE_REFERENCE;
    tj_enqueue(t);
    t->next = tj_all;
    tj_all = t;
    pthread_mutex_unlock(&tj_tiered_lock);
    return &t->front;
}

const tj_kernel *tj_tiered_current(tj_entry_fn fn)
{
    const tj_kernel *k = NULL;
    pthread_mutex_lock(&tj_tiered_lock);
    for (tj_tiered *t = tj_all; t; t = t->next)
        if (t->front.entry == fn) {
            k = atomic_load_explicit(&t->current, memory_order_acquire);
            break;
        }
    pthread_mutex_unlock(&tj_tiered_lock);
    return k;
}

void tj_tiered_shutdown(void)
{
    tj_compiler_end();
    pthread_mutex_lock(&tj_tiered_lock);
    tj_tiered *all = tj_all;
    tj_all = NULL;
    tj_queue = NULL; /* none of them queued any more, whatever came in meanwhile */
    tj_queue_end = &tj_queue;
    pthread_mutex_unlock(&tj_tiered_lock);
    for (tj_tiered *t = all, *next; t; t = next) {
        next = t->next;
        if (!t->closure) /* behind a stub, which outlives the shutdown (stub.c) */
            tj_stub_point(t->front.entry, tj_abi_of(&t->reference->plan)->freed);
        if (t->closure)
            ffi_closure_free(t->closure);
        tj_tiered_free(t);
    }
}
