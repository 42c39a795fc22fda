/* Text from a model file made safe to print: a node's name or a symbolic
 * dim is whatever bytes the file holds, and a newline or an ANSI escape
 * in one broke the listing's columns or recoloured the terminal. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Code points a terminal acts on or reorders the line by: C1 controls, the
 * bidirectional embeddings, overrides and isolates (a name that prints
 * reversed). */
static int tj_acts(unsigned long c)
{
    return (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
           (c >= 0x2066 && c <= 0x2069) || c == 0x200e || c == 0x200f || c == 0x061c;
}

/* The length of the valid UTF-8 sequence at s that encodes a printable
 * character, or 0. A truncated sequence stops at its first byte that is
 * no continuation (NUL is none), so nothing past the end is read. */
static size_t tj_printable_char(const unsigned char *s)
{
    if (s[0] >= 0x20 && s[0] < 0x7f)
        return s[0] == '\\' ? 0 : 1; /* a backslash is escaped too: "\x1b" is then unambiguous */
    size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
               : s[0] >= 0xf0 && s[0] <= 0xf4                             ? 4
                                                                            : 0;
    unsigned long c = n == 2 ? s[0] & 0x1fu : n == 3 ? s[0] & 0x0fu : s[0] & 0x07u;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3fu);
    }
    if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10ffff ||
        (c >= 0xd800 && c <= 0xdfff))
        return 0; /* overlong, past U+10FFFF, or a surrogate */
    return n && !tj_acts(c) ? n : 0;
}

void tj_cli_printable(char *text, size_t cap)
{
    if (cap == 0)
        return;
    char *out = malloc(cap);
    if (!out) { /* no room to escape: print nothing of it rather than raw bytes */
        text[0] = '\0';
        return;
    }
    size_t o = 0;
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        size_t n = tj_printable_char(s);
        char esc[5];
        const char *unit = (const char *)s;
        size_t len = n;
        if (!n) {
            snprintf(esc, sizeof esc, "\\x%02x", *s);
            unit = esc;
            len = 4;
            n = 1;
        }
        if (o + len >= cap) /* whole units only: never half an escape or a character */
            break;
        memcpy(out + o, unit, len);
        o += len;
        s += n;
    }
    out[o] = '\0';
    memcpy(text, out, o + 1);
    free(out);
}
