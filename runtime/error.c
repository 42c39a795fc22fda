#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tensorjit.h"

static _Thread_local char tj_last_error[TJ_ERROR_MAX];
static _Thread_local int tj_error_muted;

void tj_error_mute(void)
{
    tj_error_muted++;
}

void tj_error_unmute(void)
{
    tj_error_muted--;
}

int tj_error_is_muted(void)
{
    return tj_error_muted != 0;
}

int tj_error_set(const char *fmt, ...)
{
    if (tj_error_muted)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tj_last_error, sizeof tj_last_error, fmt, ap);
    va_end(ap);
    return -1;
}

void tj_error_clear(void)
{
    tj_last_error[0] = '\0';
}

const char *jit_last_error(void)
{
    return tj_last_error;
}

const char *tj_article(const char *name)
{
    return name && name[0] && strchr("AEIOUaeiou", name[0]) ? "an" : "a";
}
