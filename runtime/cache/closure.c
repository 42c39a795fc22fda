/* Binds the reference kernel to one plan behind a plain C function pointer
 * of the kernel ABI, with no extra argument: a libffi closure carries the
 * kernel (and so its plan) as user data. This is the fallback the JIT returns when it cannot
 * serve, so callers never branch on the engine. */
#include <ffi.h>
#include <pthread.h>

#include "alloc.h"
#include "error.h"
#include "kernel.h"
#include "op.h"

typedef struct tj_closure {
    ffi_closure *closure;
    void *code;
    ffi_cif cif;
    ffi_type *args[6];
} tj_closure;

/* libffi sets its closure allocator up on the first ffi_closure_alloc of a
 * process with an unlocked check of a flag; two threads making their first
 * kernels at once race there (ThreadSanitizer caught it). The first
 * allocation is done once, under pthread_once, before any other. */
static pthread_once_t tj_ffi_once = PTHREAD_ONCE_INIT;

static void tj_ffi_first_alloc(void)
{
    void *code;
    ffi_closure *c = ffi_closure_alloc(sizeof(ffi_closure), &code);
    if (c)
        ffi_closure_free(c);
}

void *tj_closure_alloc(void **code)
{
    pthread_once(&tj_ffi_once, tj_ffi_first_alloc);
    return ffi_closure_alloc(sizeof(ffi_closure), code);
}

int tj_closure_bind(tj_kernel *k)
{
    tj_closure *c = tj_calloc(1, sizeof *c);
    if (!c)
        return tj_error_set("out of memory binding the reference kernel");
    const tj_abi *abi = tj_abi_of(&k->plan);
    unsigned nargs = abi->nargs;
    for (unsigned i = 0; i < nargs; i++)
        c->args[i] = &ffi_type_pointer;
    c->closure = tj_closure_alloc(&c->code);
    if (!c->closure) {
        tj_free(c);
        return tj_error_set("libffi could not allocate a closure for the reference kernel");
    }
    void (*fun)(ffi_cif *, void *, void **, void *) =
        (void (*)(ffi_cif *, void *, void **, void *))abi->ref_trampoline;
    if (ffi_prep_cif(&c->cif, FFI_DEFAULT_ABI, nargs, &ffi_type_sint, c->args) != FFI_OK ||
        ffi_prep_closure_loc(c->closure, &c->cif, fun, k, c->code) != FFI_OK) {
        ffi_closure_free(c->closure);
        tj_free(c);
        return tj_error_set("libffi could not prepare the reference kernel's closure");
    }
    k->closure = c;
    k->entry = (tj_entry_fn)c->code;
    return 0;
}

void tj_closure_free(tj_kernel *k)
{
    tj_closure *c = k->closure;
    if (!c)
        return;
    ffi_closure_free(c->closure);
    tj_free(c);
    k->closure = NULL;
}
