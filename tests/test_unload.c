/* The library unloaded (jit_shutdown, dlclose) while a thread that ran a
 * mean still lives: that thread's scratch memory (runtime/exec/scratch.c) must
 * not call back into the unmapped library when the thread exits. Before
 * the scratch key was deleted at unload, this crashed at thread exit.
 * A plain program, not cmocka: the failure is a crash after main's checks. */
#define _DEFAULT_SOURCE /* RTLD_NOLOAD */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tensorjit.h"

typedef jit_kernel (*compile_fn)(const jit_sig *);
typedef int (*call_fn)(jit_kernel, const void *, const void *, const void *, void *);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t moved = PTHREAD_COND_INITIALIZER;
static int stage; /* 1: the worker called its mean; 2: the library is gone */
static compile_fn lib_compile;
static call_fn lib_call;
static int status = -1;
static float result[4];

static void wait_for(int s)
{
    pthread_mutex_lock(&lock);
    while (stage < s)
        pthread_cond_wait(&moved, &lock);
    pthread_mutex_unlock(&lock);
}

static void move_to(int s)
{
    pthread_mutex_lock(&lock);
    stage = s;
    pthread_cond_broadcast(&moved);
    pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
    (void)arg;
    for (int eng = 0; eng < 2; eng++) { /* both engines take the scratch */
        jit_sig s = {.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .dtype = JIT_F32,
                     .index_type = JIT_I64, .reduction = JIT_REDUCTION_MEAN,
                     .engine = eng ? JIT_ENGINE_REFERENCE : JIT_ENGINE_AUTO,
                     .data_shape = {1, {4}}, .indices_shape = {1, {3}},
                     .updates_shape = {1, {3}}};
        const float data[4] = {1, 2, 3, 4}, upd[3] = {10, 20, 30};
        const int64_t idx[3] = {1, 1, 3};
        jit_kernel k = lib_compile(&s);
        status = k ? lib_call(k, data, idx, upd, result) : -2;
        if (status != 0)
            break;
    }
    move_to(1);
    wait_for(2);
    return NULL; /* thread-specific destructors run now, after the unload */
}

int main(void)
{
    void *h = dlopen(TJ_SHARED_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "test_unload: %s\n", dlerror());
        return 1;
    }
    lib_compile = (compile_fn)dlsym(h, "jit_compile");
    lib_call = (call_fn)dlsym(h, "jit_call");
    void (*lib_shutdown)(void) = (void (*)(void))dlsym(h, "jit_shutdown");
    if (!lib_compile || !lib_call || !lib_shutdown) {
        fprintf(stderr, "test_unload: missing symbols\n");
        return 1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    wait_for(1);
    lib_shutdown();
    dlclose(h);
    int unmapped = dlopen(TJ_SHARED_PATH, RTLD_NOW | RTLD_NOLOAD) == NULL;
    move_to(2);
    pthread_join(t, NULL);
    const float want[4] = {1, 32.0f / 3, 3, 17};
    if (status != 0 || memcmp(result, want, sizeof want) != 0) {
        fprintf(stderr, "test_unload: the mean gave status %d\n", status);
        return 1;
    }
    printf("test_unload: a mean's thread exited after the library was %s: ok\n",
           unmapped ? "unmapped" : "closed (still mapped)");
    return 0;
}
