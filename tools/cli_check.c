/*
 * What the check commands print (tensorjit check OP, the bag ops' check):
 * the summary line test runners read, and a dynamic family's shapes one
 * line each before it.
 */
#include <stdio.h>

#include "cli.h"
#include "layer_check.h"

int tj_cli_check_report(const tj_check_result *r, const char *what)
{
    if (r->skipped)
        return tj_cli_fail("check %s: %s", what, r->first_failure);
    if (r->failed)
        fprintf(stderr, "tensorjit: check %s: first failure: %s\n", what, r->first_failure);
    printf("%d passed, %d failed\n", r->passed, r->failed);
    return r->failed ? TJ_EXIT_FAILURE : TJ_EXIT_OK;
}

int tj_cli_check_dynamic(const jit_sig *sig, int runs, uint64_t seed, const char *what)
{
    tj_dyn_check_result d;
    char text[512];
    tj_check_dynamic(sig, runs, seed, INT64_C(1) << 32, &d);
    for (int i = 0; i < d.shapes; i++) {
        const tj_check_result *c = &d.shape[i].check;
        tj_dyn_shape_text(&d.shape[i], text, sizeof text);
        printf("shape %s: %s\n", text,
               c->skipped ? c->first_failure : c->failed ? "FAILED" : "ok");
    }
    if (d.shapes && !d.empty)
        printf("none of the empty shapes tried is valid (the family may still have one): none run\n");
    return tj_cli_check_report(&d.total, what);
}
