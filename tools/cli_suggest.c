/* "did you mean": the real command or flag nearest to a mistyped one, by
 * edit distance with a swap of two neighbours counted as one edit (the
 * commonest slip: "modle", "--josn"). */
#include <string.h>

#include "cli.h"

#define TJ_SUGGEST_MAX 64 /* longer words are never near a real one */

/* Optimal string alignment distance of a and b (both < TJ_SUGGEST_MAX). */
static int tj_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    int d[TJ_SUGGEST_MAX + 1][TJ_SUGGEST_MAX + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *tj_cli_nearest(const char *word, const char *const *words)
{
    size_t len = strcspn(word, "="); /* --flag=value: the flag */
    char w[TJ_SUGGEST_MAX];
    if (len == 0 || len >= sizeof w || !words)
        return NULL;
    memcpy(w, word, len);
    w[len] = '\0';
    /* a flag's -shape form where the command takes the flag itself (check's
     * --weights, whose shape is the indices'): six edits away, yet meant */
    if (len > 6 && strcmp(w + len - 6, "-shape") == 0)
        for (size_t i = 0; words[i]; i++)
            if (strlen(words[i]) == len - 6 && strncmp(words[i], w, len - 6) == 0)
                return words[i];
    /* at most 2 edits, and fewer than a third of the word: "ab" is near nothing */
    int limit = (int)(len - (w[0] == '-' ? 2 : 0)) / 3;
    const char *best = NULL;
    int best_d = (limit < 2 ? limit : 2) + 1;
    for (size_t i = 0; words[i]; i++) {
        if (strlen(words[i]) >= TJ_SUGGEST_MAX)
            continue;
        int d = tj_edit_distance(w, words[i]);
        if (d < best_d) {
            best_d = d;
            best = words[i];
        }
    }
    return best;
}

int tj_cli_unknown(const char *what, const char *word, const char *const *words)
{
    const char *near = tj_cli_nearest(word, words);
    int flag = word[0] == '-';
    if (near)
        return tj_cli_fail("%s %s%s%s (did you mean %s%s%s?)", what, flag ? "" : "'", word,
                           flag ? "" : "'", flag ? "" : "'", near, flag ? "" : "'");
    return tj_cli_fail("%s %s%s%s (try --help)", what, flag ? "" : "'", word, flag ? "" : "'");
}
