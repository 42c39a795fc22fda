/* Loading a cached kernel object without LLVM (objload.c says why). */
#ifndef TJ_OBJLOAD_H
#define TJ_OBJLOAD_H

#include <stddef.h>

typedef struct tj_objload tj_objload;

/* A symbol the object may call or take the address of. */
typedef struct tj_objload_symbol {
    const char *name;
    void *address;
} tj_objload_symbol;

/* The object (an x86-64 ELF relocatable file as tensorjit's target machine
 * emits it) mapped, relocated against `runtime` and made executable. NULL
 * and why when it holds anything this loader does not handle (another
 * machine, a writable section, a relocation or symbol it does not know):
 * the caller then loads it through LLJIT. */
tj_objload *tj_objload_load(const void *obj, size_t len, const tj_objload_symbol *runtime,
                            size_t nruntime, char *why, size_t why_len);

/* The address of the function `name` defined in the object, or NULL. */
void *tj_objload_find(const tj_objload *l, const char *name);

/* Bytes of executable sections. */
size_t tj_objload_text_bytes(const tj_objload *l);

/* Unmaps the code. */
void tj_objload_free(tj_objload *l);

#endif
