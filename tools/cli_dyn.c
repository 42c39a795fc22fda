/* Dynamic dims on the command line (SPEC section 6): shapes with `?` and
 * `?:N`, the `--dynamic` spec of the op commands, and shapes as text with
 * their dynamic dims. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const tj_input_names[TJ_DYN_INPUTS] = {"data", "indices", "updates"};

/* One dim of a shape flag: "7", "?" or "?:N"; 0, or -1 (error printed). */
static int tj_parse_dim(const char *opt, const char *text, const char *p, int dim, int64_t *v,
                        int64_t *bound, const char **end)
{
    char *e;
    *bound = 0;
    if (*p == '?') {
        *v = JIT_DIM_DYNAMIC;
        *end = p + 1;
        if (p[1] != ':')
            return 0;
        errno = 0;
        long long b = strtoll(p + 2, &e, 10);
        if (e == p + 2 || errno || b < 1)
            return tj_cli_fail("%s=%s: dimension %d: the bound of ?:N must be a positive "
                               "integer", opt, text, dim), -1;
        *bound = b;
        *end = e;
        return 0;
    }
    errno = 0;
    long long x = strtoll(p, &e, 10);
    if (e == p || errno || x < 0)
        return tj_cli_fail("%s=%s: dimension %d is not a non-negative integer, ? or ?:N", opt,
                           text, dim), -1;
    *v = x;
    *end = e;
    return 0;
}

int tj_cli_parse_shape(const char *opt, const char *text, jit_shape *s, int64_t *bounds)
{
    s->rank = 0;
    memset(bounds, 0, sizeof(int64_t) * JIT_MAX_RANK);
    if (!*text || strcmp(text, "scalar") == 0)
        return 0;
    for (const char *p = text;;) {
        const char *end;
        int64_t v, bound;
        if (s->rank == JIT_MAX_RANK)
            return tj_cli_fail("%s=%s: more than %d dimensions", opt, text, JIT_MAX_RANK), -1;
        if (tj_parse_dim(opt, text, p, s->rank, &v, &bound, &end))
            return -1;
        bounds[s->rank] = bound;
        s->dims[s->rank++] = v;
        if (*end == '\0')
            return 0;
        if (*end != 'x')
            return tj_cli_fail("%s=%s: expected dimensions like 2x3x4 or ?x64", opt, text), -1;
        p = end + 1;
    }
}


/* "data:0" into the spec; 0, or -1 (error printed). */
static int tj_dynamic_item(const char *item, size_t n, const char *text, int has_updates,
                           tj_dyn_spec *spec)
{
    const char *colon = memchr(item, ':', n);
    int input = -1;
    for (int i = 0; colon && i < TJ_DYN_INPUTS; i++)
        if ((size_t)(colon - item) == strlen(tj_input_names[i]) &&
            strncmp(item, tj_input_names[i], (size_t)(colon - item)) == 0)
            input = i;
    if (!colon)
        return tj_cli_fail("--dynamic=%s: '%.*s' is not all or INPUT:DIM (e.g. data:0)", text,
                           (int)n, item), -1;
    if (input < 0 || (input == 2 && !has_updates))
        return tj_cli_fail("--dynamic=%s: '%.*s' is no input of this op (data, indices%s)", text,
                           (int)(colon - item), item, has_updates ? ", updates" : ""), -1;
    char num[24];
    size_t len = n - (size_t)(colon - item) - 1;
    snprintf(num, sizeof num, "%.*s", (int)(len < sizeof num ? len : sizeof num - 1), colon + 1);
    char *end;
    errno = 0;
    long long d = strtoll(num, &end, 10);
    if (!len || len >= sizeof num || end == num || *end || errno || d < 0 || d >= JIT_MAX_RANK)
        return tj_cli_fail("--dynamic=%s: the dim of '%.*s' must be an integer in [0, %d]", text,
                           (int)n, item, JIT_MAX_RANK - 1), -1;
    spec->dims[input][d] = 1;
    return 0;
}

int tj_cli_parse_dynamic(const char *text, int has_updates, tj_dyn_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->given = 1;
    if (strcmp(text, "all") == 0) {
        spec->all = 1;
        return 0;
    }
    if (!*text)
        return tj_cli_fail("--dynamic needs all or a list like data:0,indices:0"), -1;
    for (const char *p = text;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (tj_dynamic_item(p, n, text, has_updates, spec))
            return -1;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* The shapes of sig's inputs, in the order of a dynamic kernel's dims. */
static int tj_sig_inputs(jit_sig *sig, jit_shape *in[TJ_DYN_INPUTS])
{
    jit_op_info info;
    in[0] = &sig->data_shape;
    in[1] = &sig->indices_shape;
    in[2] = &sig->updates_shape;
    return jit_op_describe(sig->op, &info) == 0 && info.has_updates ? 3 : 2;
}

/* Appends "data[0,1]" for the dims of one input marked in mask. */
static size_t tj_names_add(char *names, size_t len, size_t used, const char *input,
                           const unsigned char *mask, int rank)
{
    int first = 1;
    for (int d = 0; d < rank && used < len; d++) {
        if (!mask[d])
            continue;
        used += (size_t)snprintf(names + used, len - used, "%s%s%s%d", first && used ? " " : "",
                                 first ? input : "", first ? "[" : ",", d);
        first = 0;
    }
    if (!first && used < len)
        used += (size_t)snprintf(names + used, len - used, "]");
    return used;
}

int tj_cli_apply_dynamic(const tj_dyn_spec *spec, const jit_sig *concrete, jit_sig *dyn,
                         int64_t *dims, char *names, size_t len)
{
    *dyn = *concrete;
    int at = 0, marked = 0;
    size_t used = 0;
    jit_shape *in[TJ_DYN_INPUTS];
    int n = tj_sig_inputs(dyn, in);
    names[0] = '\0';
    for (int i = 0; i < TJ_DYN_INPUTS; i++)
        for (int d = i < n ? in[i]->rank : 0; d < JIT_MAX_RANK; d++)
            if (spec->dims[i][d])
                return tj_cli_fail("--dynamic: %s:%d is out of range: %s has rank %d",
                                   tj_input_names[i], d, tj_input_names[i],
                                   i < n ? in[i]->rank : 0), -1;
    for (int i = 0; i < n; i++) {
        unsigned char mask[JIT_MAX_RANK] = {0};
        for (int d = 0; d < in[i]->rank; d++) {
            dims[at++] = in[i]->dims[d];
            if (!spec->all && !spec->dims[i][d])
                continue;
            in[i]->dims[d] = JIT_DIM_DYNAMIC;
            mask[d] = 1;
            marked++;
        }
        used = tj_names_add(names, len, used, tj_input_names[i], mask, in[i]->rank);
    }
    return marked;
}
