/* The thread-local error message behind jit_last_error(). */
#ifndef TJ_ERROR_H
#define TJ_ERROR_H

#include <stddef.h>

#define TJ_ERROR_MAX 1024

#if defined(__GNUC__)
#define TJ_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TJ_PRINTF(a, b)
#endif

/* Replaces the calling thread's message. Always returns -1 so that a
 * failing function can end with `return tj_error_set(...)`. */
int tj_error_set(const char *fmt, ...) TJ_PRINTF(1, 2);
void tj_error_clear(void);

/* While muted (on the calling thread; the calls nest), tj_error_set
 * formats nothing and leaves the message as it was: for searches that
 * try thousands of plans and drop each failure's words, whose formatting
 * (a rank-29 shape in an overflow message) cost most of the search. */
void tj_error_mute(void);
void tj_error_unmute(void);
/* Whether they are: a message's arguments formatted before the call (a
 * shape as text) are worth skipping too. */
int tj_error_is_muted(void);

/* "an" before a name that starts with a vowel (EmbeddingBagOffsets),
 * else "a": messages that say "this is a ... kernel". */
const char *tj_article(const char *name);

#endif
