/* `tensorjit embedding-bag-offsets --help` and the other bags', and
 * `tensorjit check OP --help` of a bag: written from the op table
 * (jit_op_describe): the inputs and attributes an op takes, its versions
 * and reductions; nothing here names one op. */
#include <stdio.h>

#include "cli.h"

/* "sum|mean|max": the op's reductions (NONE, which means sum, left out). */
static void tj_bag_reductions_text(const jit_op_info *op, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int r = 1; r < JIT_REDUCTION_COUNT && n < len; r++)
        if (op->reductions & (1u << r))
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "|" : "",
                                  jit_reduction_name((jit_reduction)r));
}

static void tj_bag_usage_lines(const jit_op_info *op, FILE *f)
{
    int seg = (op->attrs & JIT_ATTR_NUM_SEGMENTS) != 0;
    int off = (op->attrs & JIT_ATTR_OFFSETS) && !seg;
    fprintf(f, "usage: tensorjit %s --table T.npy --indices I.npy%s%s [--weights W.npy] "
            "[-o OUT.npy|-] [options]\n",
            op->command, off ? " --offsets O.npy" : "",
            seg ? " --segment-ids S.npy --num-segments S" : "");
    fprintf(f, "       tensorjit %s --table-shape S --indices-shape S%s%s [--weights-shape S] "
            "--explain|--dump-ir[=opt]|--dump-asm\n",
            op->command, off ? " --offsets-shape S" : "",
            seg ? " --segment-ids-shape S --num-segments S" : "");
}

/* switch_weights: check's --weights, random weights rather than a file. */
static void tj_bag_attr_lines(const jit_op_info *op, int switch_weights, FILE *f)
{
    char versions[64], reductions[64];
    tj_cli_opsets_text(op, "|", "|", versions, sizeof versions);
    tj_bag_reductions_text(op, reductions, sizeof reductions);
    if (op->attrs & JIT_ATTR_NUM_SEGMENTS)
        fprintf(f, "  --num-segments S           the output's rows (with shape flags, ? or ?:N:\n"
                   "                             a dynamic S)\n");
    /* "sum only" where the op has other reductions: EmbeddingSegmentsSum has
     * no --reduction to pair it with */
    const char *sum_only = (op->attrs & JIT_ATTR_REDUCTION) ? " (with reduction sum only)" : "";
    if ((op->attrs & JIT_ATTR_WEIGHTS) && switch_weights)
        fprintf(f, "  --weights                  random per-lookup weights%s\n", sum_only);
    else if (op->attrs & JIT_ATTR_WEIGHTS)
        fprintf(f, "  --weights W.npy            per-lookup weights of the table's type, the\n"
                "                             indices' shape%s\n", sum_only);
    if (op->opsets[1])
        fprintf(f, "  --opset %-18s the op's version (default %d, the newest)\n", versions,
                tj_cli_newest_opset(op));
    if (op->attrs & JIT_ATTR_REDUCTION)
        fprintf(f, "  --reduction %-14s how a bag's rows are pooled (default sum)\n",
                reductions);
    if (op->attrs & JIT_ATTR_DEFAULT_INDEX)
        fprintf(f, "  --default-index K          the table row an empty bag gets (default: "
                "zeros)\n");
    if (op->attrs & JIT_ATTR_PADDING_IDX)
        fprintf(f, "  --padding-idx P            a lookup of row P (in [-E, E)) adds nothing "
                "and\n"
                "                             is not counted by mean\n");
    if (op->attrs & JIT_ATTR_LAST_OFFSET)
        fprintf(f, "  --include-last-offset      offsets has B + 1 entries, the last ending "
                "the last bag\n");
}

void tj_cli_usage_bag(const jit_op_info *op, FILE *f)
{
    int seg = (op->attrs & JIT_ATTR_NUM_SEGMENTS) != 0;
    int off = (op->attrs & JIT_ATTR_OFFSETS) && !seg;
    char versions[64], policies[128] = "";
    size_t n = 0;
    tj_cli_opsets_text(op, ", ", " or ", versions, sizeof versions);
    for (int p = 0; p < JIT_INDEX_POLICY_COUNT && n < sizeof policies; p++)
        n += (size_t)snprintf(policies + n, sizeof policies - n, "%s%s", p ? "|" : "",
                              jit_index_policy_name((jit_index_policy)p));
    tj_bag_usage_lines(op, f);
    fprintf(f, "%s, an embedding bag (SPEC section 10), version%s %s\n", op->name,
            op->opsets[1] ? "s" : "", versions);
    fprintf(f, "options of %s:\n", op->command);
    tj_bag_attr_lines(op, 0, f);
    fprintf(f, "  --index-policy %s\n"
            "                             what an index out of range does (default error;\n"
            "                             offsets and segment ids are always checked)\n",
            policies);
    fprintf(f,
            "  --engine jit|reference     engine to run (default jit; falls back to reference)\n"
            "  -o, --output OUT.npy|-     write the result as .npy (- : to stdout); without\n"
            "                             it, print it (first line: its shape and dtype)\n"
            "  --verbose                  say on stderr which engine ran and why\n"
            "  --dynamic all|INPUT:DIM,...  run a dynamic kernel on the .npy inputs: every dim\n"
            "                             (all) or the listed ones (table, indices%s%s)\n"
            "  --explain                  print the plan, the code shape chosen, the cache key\n"
            "  --dump-ir[=opt]            print the kernel's LLVM IR (before / after optimization)\n"
            "  --dump-asm                 print the kernel's machine code\n"
            "a signature by flags (with --explain, --dump-ir or --dump-asm):\n"
            "  --table-shape 10x4 --indices-shape %s%s%s\n"
            "                             (a dim ? is dynamic, ?:N dynamic up to N)\n"
            "  --dtype T --index-type T   default f32 and i64 (indices and %s: i32 or i64)\n"
            "exit status: 0 success, 2 invalid arguments or signature, 3 an index, offset\n"
            "or segment id out of range (the message names its position)\n",
            off ? ", offsets" : "", seg ? ", segment_ids, num_segments" : "",
            op->attrs & JIT_ATTR_OFFSETS ? "6" : "2x3", off ? " --offsets-shape 2" : "",
            seg ? " --segment-ids-shape 6 --num-segments 3" : "",
            seg ? "segment ids" : "offsets");
}

void tj_cli_check_bag_synopsis(const jit_op_info *op, const char *lead, FILE *f)
{
    int seg = (op->attrs & JIT_ATTR_NUM_SEGMENTS) != 0;
    int off = (op->attrs & JIT_ATTR_OFFSETS) && !seg;
    fprintf(f, "%stensorjit check %s --table-shape .. --indices-shape ..%s%s\n", lead,
            op->command, off ? " --offsets-shape .." : "",
            seg ? " --segment-ids-shape .. --num-segments S" : "");
}

void tj_cli_usage_check_bag(const jit_op_info *op, FILE *f)
{
    char policies[128] = "";
    size_t n = 0;
    for (int p = 0; p < JIT_INDEX_POLICY_COUNT && n < sizeof policies; p++)
        n += (size_t)snprintf(policies + n, sizeof policies - n, "%s%s", p ? "|" : "",
                              jit_index_policy_name((jit_index_policy)p));
    tj_cli_check_bag_synopsis(op, "usage: ", f);
    fprintf(f, "       [--runs N] [--seed S] [--explain] [options]\n");
    fprintf(f, "runs the JIT kernel and the reference kernel of %s on N random\n"
            "bags (indices the index policy takes, some bags empty; the last run with a bad\n"
            "index%s) and prints 'N passed, M failed'. Both\n"
            "must give the same bits, or refuse alike naming the same position. A dim '?'\n"
            "(or '?:N') is dynamic: the dynamic kernel runs on several shapes of its family,\n"
            "each against the reference kernel of that shape\n",
            op->name, !(op->attrs & JIT_ATTR_OFFSETS) ? ""
                      : op->attrs & JIT_ATTR_NUM_SEGMENTS ? ", the one before a bad segment id"
                                                          : ", the one before a bad offset");
    fprintf(f, "options of check %s:\n", op->command);
    tj_bag_attr_lines(op, 1, f);
    fprintf(f, "  --index-policy %s\n"
            "                             what an index out of range does (default error)\n"
            "  --dtype T --index-type T   default f32 and i64 (the index type: i32 or i64)\n"
            "  --runs N                   random inputs (default 100)\n"
            "  --seed S                   makes them repeatable (default 1)\n"
            "  --explain                  print the plan first\n"
            "exit status: 0 every run passed, 1 a run failed, 2 invalid arguments or\n"
            "signature\n", policies);
}
