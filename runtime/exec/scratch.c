#include "scratch.h"

#include <pthread.h>
#include "alloc.h"

typedef struct tj_scratch_buf {
    void *p;
    size_t size;
    void *shapes; /* tj_scratch_shapes: allocated once, zeroed */
} tj_scratch_buf;

static pthread_key_t tj_scratch_key;
static pthread_once_t tj_scratch_once = PTHREAD_ONCE_INIT;
static int tj_scratch_ok;

/* The calling thread's shapes memory, kept in a thread-local pointer too:
 * a dynamic kernel asks for it on every call, and a thread-local read
 * costs less than pthread_getspecific. Cleared with the buffer: the
 * destructor runs on the owning thread, and a later key destructor of the
 * same exiting thread may still call a kernel. */
static _Thread_local void *tj_shapes_here;

static void tj_scratch_free(void *v)
{
    tj_scratch_buf *b = v;
    tj_shapes_here = NULL;
    if (b) {
        tj_free(b->p);
        tj_free(b->shapes);
        tj_free(b);
    }
}

static void tj_scratch_init(void)
{
    tj_scratch_ok = pthread_key_create(&tj_scratch_key, tj_scratch_free) == 0;
}

static tj_scratch_buf *tj_scratch_of_thread(void)
{
    pthread_once(&tj_scratch_once, tj_scratch_init);
    if (!tj_scratch_ok)
        return NULL;
    tj_scratch_buf *b = pthread_getspecific(tj_scratch_key);
    if (!b) {
        b = tj_calloc(1, sizeof *b);
        if (!b || pthread_setspecific(tj_scratch_key, b) != 0) {
            tj_free(b);
            return NULL;
        }
    }
    return b;
}

void *tj_scratch_shapes(size_t bytes)
{
    if (tj_shapes_here)
        return tj_shapes_here;
    tj_scratch_buf *b = tj_scratch_of_thread();
    if (b && !b->shapes)
        b->shapes = tj_calloc(1, bytes);
    tj_shapes_here = b ? b->shapes : NULL;
    return tj_shapes_here;
}

void *tj_scratch(size_t bytes)
{
    tj_scratch_buf *b = tj_scratch_of_thread();
    if (!b)
        return NULL;
    if (b->size < bytes) {
        /* no realloc: the old contents are not needed, and a fresh
         * allocation of a large size is pages not yet touched */
        tj_free(b->p);
        b->p = tj_malloc(bytes);
        b->size = b->p ? bytes : 0;
    }
    return b->p;
}

void tj_scratch_release(void)
{
    pthread_once(&tj_scratch_once, tj_scratch_init);
    if (!tj_scratch_ok)
        return;
    tj_scratch_free(pthread_getspecific(tj_scratch_key));
    pthread_setspecific(tj_scratch_key, NULL);
    tj_shapes_here = NULL;
}

/* At unload (dlclose), the key goes: a thread exiting later must not run
 * tj_scratch_free, which is gone with the library; its buffer leaks. */
__attribute__((destructor)) static void tj_scratch_unload(void)
{
    if (tj_scratch_ok)
        pthread_key_delete(tj_scratch_key);
}
