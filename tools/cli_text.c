/* Text from a model file made safe to print: a node's name or a symbolic
 * dim is whatever bytes the file holds, and a newline or an ANSI escape
 * in one broke the listing's columns or recoloured the terminal. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* The length of the valid UTF-8 sequence at s that encodes no control
 * character (C0, DEL, C1), or 0. */
static size_t tj_printable_char(const unsigned char *s)
{
    if (s[0] >= 0x20 && s[0] < 0x7f)
        return 1;
    size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
               : s[0] >= 0xf0 && s[0] <= 0xf4                             ? 4
                                                                            : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) /* U+0080..U+009F: C1 controls */
        return 0;
    if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
        (n == 4 && s[0] == 0xf0 && s[1] < 0x90) || (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
        return 0; /* overlong, a surrogate, or past U+10FFFF */
    return n;
}

void tj_cli_printable(char *text, size_t cap)
{
    char out[1024];
    size_t o = 0;
    const unsigned char *s = (const unsigned char *)text;
    int changed = 0;
    while (*s && o + 5 < sizeof out) {
        size_t n = tj_printable_char(s);
        if (n) {
            memcpy(out + o, s, n);
            o += n;
            s += n;
            continue;
        }
        o += (size_t)snprintf(out + o, sizeof out - o, "\\x%02x", *s++);
        changed = 1;
    }
    if (!changed)
        return;
    out[o] = '\0';
    snprintf(text, cap, "%s", out);
}
