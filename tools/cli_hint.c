/* Errors that point at the flag that changes the outcome. The library's
 * message says what is wrong; the hint says what to type instead, found by
 * asking the library again with that flag changed (another --opset,
 * another --index-policy): what the op table and the kernels accept
 * decides, not a list kept here. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A dynamic family has no one output shape: its (reference) kernel says. */
static int tj_sig_valid(const jit_sig *sig)
{
    jit_shape out;
    if (!jit_sig_is_dynamic(sig))
        return jit_output_shape(sig, &out) == 0;
    jit_sig r = *sig;
    r.engine = JIT_ENGINE_REFERENCE;
    return jit_compile(&r) != NULL;
}

/* The flags of an op command that a version of the op may refuse: "given"
 * writes the flag as typed when the signature has it, "reset" takes it
 * back. */
static int tj_flag_text(const jit_sig *s, int k, char *buf, size_t len)
{
    switch (k) {
    case 0:
        return s->reduction != JIT_REDUCTION_NONE &&
               snprintf(buf, len, "--reduction %s", jit_reduction_name(s->reduction)) > 0;
    case 1: return s->no_init_val && snprintf(buf, len, "--no-init-val") > 0;
    case 2: return s->batch_dims != 0 && snprintf(buf, len, "--batch-dims %d", s->batch_dims) > 0;
    case 3:
        return s->has_padding_idx &&
               snprintf(buf, len, "--padding-idx %lld", (long long)s->padding_idx) > 0;
    case 4: return s->include_last_offset && snprintf(buf, len, "--include-last-offset") > 0;
    default: return 0;
    }
}

static void tj_flag_reset(jit_sig *s, int k)
{
    if (k == 0)
        s->reduction = JIT_REDUCTION_NONE;
    else if (k == 1)
        s->no_init_val = 0;
    else if (k == 2)
        s->batch_dims = 0;
    else if (k == 3)
        s->has_padding_idx = 0;
    else
        s->include_last_offset = 0;
}

/* "; --reduction sum needs --opset 15": the versions of the op that take
 * the signature, and the one flag the given version refuses; "" when no
 * other version takes it. */
static void tj_opset_hint(const jit_op_info *op, const jit_sig *sig, char *buf, size_t len)
{
    int ok[4], n = 0;
    buf[0] = '\0';
    for (int i = 0; i < 4 && op->opsets[i]; i++) {
        jit_sig s = *sig;
        s.opset = op->opsets[i];
        if (s.opset != sig->opset && tj_sig_valid(&s))
            ok[n++] = s.opset;
    }
    if (n == 0)
        return;
    char flag[64] = "", versions[64] = "";
    for (int k = 0; k < 5 && !*flag; k++) {
        jit_sig s = *sig;
        tj_flag_reset(&s, k);
        if (tj_flag_text(sig, k, flag, sizeof flag) && !tj_sig_valid(&s))
            flag[0] = '\0';
    }
    size_t m = 0;
    for (int i = 0; i < n; i++)
        m += (size_t)snprintf(versions + m, sizeof versions - m, "%s%d",
                              i == 0 ? "" : i + 1 < n ? ", " : " or ", ok[i]);
    if (*flag)
        snprintf(buf, len, "; %s needs --opset %s", flag, versions);
    else
        snprintf(buf, len, "; --opset %s takes this signature", versions);
}

int tj_cli_sig_fail(const jit_op_info *op, const jit_sig *sig)
{
    char why[1024], hint[256];
    snprintf(why, sizeof why, "%s", jit_last_error());
    tj_opset_hint(op, sig, hint, sizeof hint);
    return tj_cli_fail("%s%s", why, hint);
}

int tj_cli_check_sig(const jit_op_info *op, const jit_sig *sig)
{
    return tj_sig_valid(sig) ? 0 : tj_cli_sig_fail(op, sig);
}

/* The policies under which the reference kernel takes these inputs
 * (weights: an embedding bag's, whose kernels take five arguments). */
static int tj_policies_taking(const jit_sig *sig, const void *data, const void *indices,
                              const void *updates, const void *weights, void *out, int *taking)
{
    jit_op_info op;
    int bag = jit_op_describe(sig->op, &op) == 0 && (op.attrs & JIT_ATTR_BAG);
    int n = 0;
    for (int p = 0; p < JIT_INDEX_POLICY_COUNT; p++) {
        jit_sig s = *sig;
        s.index_policy = (jit_index_policy)p;
        s.engine = JIT_ENGINE_REFERENCE;
        jit_kernel fn = p == (int)sig->index_policy ? NULL : jit_compile(&s);
        int rc = !fn ? -1
                 : bag ? jit_call_bag(fn, data, indices, updates, weights, out)
                       : jit_call(fn, data, indices, updates, out);
        if (rc == JIT_OK)
            taking[n++] = p;
    }
    return n;
}

static int tj_bad_index(const jit_sig *sig, const void *data, const void *indices,
                        const void *updates, const void *weights, void *out)
{
    char why[1024], hint[256];
    int taking[JIT_INDEX_POLICY_COUNT];
    snprintf(why, sizeof why, "%s", jit_last_error());
    int n = tj_policies_taking(sig, data, indices, updates, weights, out, taking);
    size_t m = (size_t)snprintf(hint, sizeof hint, " (--index-policy ");
    for (int i = 0; i < n; i++)
        m += (size_t)snprintf(hint + m, sizeof hint - m, "%s%s",
                              i == 0 ? "" : i + 1 < n ? ", " : " or ",
                              jit_index_policy_name((jit_index_policy)taking[i]));
    snprintf(hint + m, sizeof hint - m, "%s", n == 0 ? "": n == 1 ? " takes it)" : " take it)");
    if (n == 0)
        snprintf(hint, sizeof hint, " (no --index-policy takes it)");
    tj_cli_fail("%s%s", why, hint);
    return TJ_EXIT_BAD_INDEX;
}

int tj_cli_bad_index(const jit_sig *sig, const void *data, const void *indices,
                     const void *updates, void *out)
{
    return tj_bad_index(sig, data, indices, updates, NULL, out);
}

int tj_cli_bad_index_bag(const jit_sig *sig, const void *table, const void *indices,
                         const void *offsets, const void *weights, void *out)
{
    return tj_bad_index(sig, table, indices, offsets, weights, out);
}
