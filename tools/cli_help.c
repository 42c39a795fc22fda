/* What `tensorjit --help` and `tensorjit COMMAND --help` print, and the
 * flags each command takes (for "did you mean"). An op command's usage is
 * written from the op table (jit_op_describe): its attributes, versions and
 * reductions, and from the model reader's table the index policy each of
 * its versions has in a model; nothing here names one op. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "onnx_model.h"
#include "ov_ir.h"
#include "workloads.h"

static const char *const tj_model_flags[] = {"--check", "--explain", "--jobs", "--precompile",
                                             "--dtype", "--index-type", "--axis", "--opset",
                                             "--default-index", "--help", NULL};
static const char *const tj_bench_flags[] = {"--workload", "--json", "--rounds", "--no-compile",
                                             "--compile", "--runs", "--threads", "--policy",
                                             "--bags", "--verbose", "--help", NULL};
static const char *const tj_check_flags[] = {"--runs", "--seed", "--help", NULL};
static const char *const tj_cache_words[] = {"stats", "clear", "--help", NULL};
static const char *const tj_demo_flags[] = {"--help", NULL};

static const char *const tj_commands[] = {"model", "check", "cache", "bench", "demo", "help",
                                          "version", "--help", "--version", NULL};

/* "a|b|c" or "a, b or c": the op's versions. */
void tj_cli_opsets_text(const jit_op_info *op, const char *sep, const char *last, char *buf,
                        size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < 4 && op->opsets[i] && n < len; i++) {
        const char *before = i == 0 ? "" : (i + 1 < 4 && op->opsets[i + 1]) ? sep : last;
        n += (size_t)snprintf(buf + n, len - n, "%s%d", before, op->opsets[i]);
    }
}

int tj_cli_newest_opset(const jit_op_info *op)
{
    int v = 0;
    for (int i = 0; i < 4 && op->opsets[i]; i++)
        v = op->opsets[i] > v ? op->opsets[i] : v;
    return v;
}

/* "none|sum|...": the op's reductions. */
static void tj_reductions_text(const jit_op_info *op, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int r = 0; r < JIT_REDUCTION_COUNT && n < len; r++)
        if (op->reductions & (1u << r))
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "|" : "",
                                  jit_reduction_name((jit_reduction)r));
}

static void tj_policies_text(char *buf, size_t len)
{
    size_t n = 0;
    for (int p = 0; p < JIT_INDEX_POLICY_COUNT && n < len; p++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", p ? "|" : "",
                              jit_index_policy_name((jit_index_policy)p));
}

/* "; in a model: Gather-1 negative-wraps, ...": each version's own rule. */
static void tj_spec_policies_text(const jit_op_info *op, char *buf, size_t len)
{
    const tj_ov_op *m = tj_ov_op_find(op->name);
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; m && i < 4 && m->versions[i].version && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s-%d %s", i ? ", " : "", op->name,
                              m->versions[i].version,
                              jit_index_policy_name(m->versions[i].policy));
}

/* The lines of the op's own attributes and its index policy, which the
 * op's command and its check take alike. */
static void tj_op_attr_lines(const jit_op_info *op, FILE *f)
{
    char versions[64], reductions[128], policies[128], spec[256];
    int newest = tj_cli_newest_opset(op);
    tj_cli_opsets_text(op, "|", "|", versions, sizeof versions);
    tj_reductions_text(op, reductions, sizeof reductions);
    tj_policies_text(policies, sizeof policies);
    tj_spec_policies_text(op, spec, sizeof spec);
    if (op->attrs & JIT_ATTR_AXIS)
        fprintf(f, "  --axis A                   the axis, in [-rank(data), rank(data)-1]\n");
    if (op->attrs & JIT_ATTR_BATCH_DIMS)
        fprintf(f, "  --batch-dims B             leading batch dims (default 0)\n");
    if (op->opsets[1])
        fprintf(f, "  --opset %-18s the op's version (default %d)\n", versions, newest);
    if (op->attrs & JIT_ATTR_REDUCTION)
        fprintf(f, "  --reduction %s\n"
                "                             how an update meets the value it lands on "
                "(default none)\n", reductions);
    if (op->attrs & JIT_ATTR_INIT_VAL)
        fprintf(f, "  --no-init-val              a position hit by an update starts from the\n"
                "                             reduction's neutral value, not data's\n");
    if (op->attrs & JIT_ATTR_TORCH_DIMS)
        fprintf(f, "  --torch-dims               torch's index dims: indices no larger than data\n"
                "                             but along the axis%s\n",
                op->attrs & JIT_ATTR_UPDATES ? ", updates no smaller than indices" : "");
    fprintf(f, "  --index-policy %s\n"
            "                             what an index out of range does (default error%s%s)\n",
            policies, *spec ? "; in a model: " : "", spec);
}

void tj_cli_usage_op(const jit_op_info *op, FILE *f)
{
    char versions[64];
    if (op->attrs & JIT_ATTR_BAG) {
        tj_cli_usage_bag(op, f);
        return;
    }
    tj_cli_opsets_text(op, "|", "|", versions, sizeof versions);
    fprintf(f, "usage: tensorjit %s --data D.npy --indices I.npy%s%s [-o OUT.npy|-] [options]\n",
            op->command, op->attrs & JIT_ATTR_UPDATES ? " --updates U.npy" : "",
            op->attrs & JIT_ATTR_AXIS ? " --axis A" : "");
    fprintf(f, "       tensorjit %s --data-shape S --indices-shape S%s%s "
            "--explain|--dump-ir[=opt]|--dump-asm\n",
            op->command, op->attrs & JIT_ATTR_UPDATES ? " --updates-shape S" : "",
            op->attrs & JIT_ATTR_AXIS ? " --axis A" : "");
    fprintf(f, "%s, versions %s (default %d, the newest)\n", op->name, versions,
            tj_cli_newest_opset(op));
    fprintf(f, "options of %s:\n", op->command);
    tj_op_attr_lines(op, f);
    fprintf(f,
            "  --engine jit|reference     engine to run (default jit; falls back to reference)\n"
            "  -o, --output OUT.npy|-     write the result as .npy (- : to stdout); without\n"
            "                             it, print it (first line: its shape and dtype)\n"
            "  --verbose                  say on stderr which engine ran and why\n"
            "  --dynamic all|INPUT:DIM,...  run a dynamic kernel on the .npy inputs: every dim\n"
            "                             (all) or the listed ones (data:0,indices:0) dynamic\n"
            "  --explain                  print the plan, the code shape chosen, the cache key\n"
            "  --dump-ir[=opt]            print the kernel's LLVM IR (before / after optimization)\n"
            "  --dump-asm                 print the kernel's machine code\n"
            "a signature by flags (with --explain, --dump-ir, --dump-asm, or tensorjit check):\n"
            "  --data-shape 2x3x4 --indices-shape 2x1%s  ('' or scalar: 0-D;\n"
            "                             a dim ? is dynamic, ?:N dynamic up to N)\n"
            "  --dtype T --index-type T   default f32 and i64; T as bool, i8..i64, u8..u64,\n"
            "                             f16, bf16, f32, f64 or numpy's int8, float32, ...\n"
            "exit status: 0 success, 2 invalid arguments or signature, 3 index out of range\n",
            op->attrs & JIT_ATTR_UPDATES ? " --updates-shape 2x3" : "");
}

/* tensorjit check OP --help of an op that is no bag (the bags have their
 * own, tj_cli_usage_check_bag): the op's attributes with check's flags. */
void tj_cli_usage_check_op(const jit_op_info *op, FILE *f)
{
    fprintf(f, "usage: tensorjit check %s --data-shape S --indices-shape S%s%s\n"
            "       [--runs N] [--seed S] [--explain] [options]\n"
            "       (or the shapes and types of .npy files: --data D.npy --indices I.npy%s)\n",
            op->command, op->attrs & JIT_ATTR_UPDATES ? " --updates-shape S" : "",
            op->attrs & JIT_ATTR_AXIS ? " --axis A" : "",
            op->attrs & JIT_ATTR_UPDATES ? " --updates U.npy" : "");
    fprintf(f, "runs the JIT kernel and the reference kernel of %s on N random inputs (the\n"
            "last with a bad index) and prints 'N passed, M failed'. A dim '?' (or '?:N') is\n"
            "dynamic: the dynamic kernel runs on several shapes of its family, each against\n"
            "the reference kernel of that shape\n", op->name);
    fprintf(f, "options of check %s:\n", op->command);
    tj_op_attr_lines(op, f);
    fprintf(f, "  --dtype T --index-type T   default f32 and i64\n"
            "  --runs N                   random inputs (default 100)\n"
            "  --seed S                   makes them repeatable (default 1)\n"
            "  --explain                  print the plan first\n"
            "exit status: 0 every run passed, 1 a run failed, 2 invalid arguments or\n"
            "signature\n");
}

/* The op commands into words; how many. */
static size_t tj_op_commands(const char **words)
{
    size_t n = 0;
    for (int op = JIT_OP_NONE + 1; op < JIT_OP_COUNT; op++) {
        jit_op_info info;
        if (jit_op_describe((jit_op)op, &info) == 0)
            words[n++] = info.command;
    }
    return n;
}

/* "gather-nd, scatter-update, ...": every op's command. */
static void tj_op_command_list(char *buf, size_t len)
{
    const char *words[JIT_OP_COUNT];
    size_t count = tj_op_commands(words), n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", words[i]);
}

void tj_cli_usage_main(FILE *f)
{
    char ops[256];
    tj_op_command_list(ops, sizeof ops);
    fprintf(f,
            "usage: tensorjit COMMAND [options]  (COMMAND --help: its own options)\n"
            "commands:\n"
            "  OP              run one op on .npy files, or explain / dump a signature:\n"
            "                  %s\n"
            "  model FILE      compile every indexing layer of an OpenVINO IR (.xml) or\n"
            "                  ONNX (.onnx) model ([--check] [--explain] [--jobs N]\n"
            "                  [--precompile])\n"
            "  check OP ...    JIT vs reference on random inputs of one signature\n"
            "  cache stats|clear  the on-disk kernel cache\n"
            "  bench           the performance table of the workloads, and compile times\n"
            "  demo            run the specifications' example layers (%s)\n"
            "                  through the model reader, each checked and timed\n"
            "  --version       print the version\n"
            "  --help, -h      print this help\n"
            "exit status: 0 success, 1 a failed check or a refused model layer, 2 invalid\n"
            "arguments or signature, 3 an index (a bag's offset, segment id) out of range\n",
            ops, tj_demo_layers());
}

static void tj_usage_model(FILE *f)
{
    fprintf(f, "usage: tensorjit model FILE.xml|FILE.onnx [--check] [--explain] [--jobs N] "
            "[--precompile]\n"
            "       fragments: [--dtype T] [--index-type T] [--axis A] [--opset V]\n"
            "                  [--default-index R] (a bag's default_index port; -1: none)\n"
            "layers: %s; --opset V: the op's version where the IR names no opset\n"
            "dynamic dims (-1, ?, a..b) are listed as ? (?:b), compiled into one kernel\n"
            "for the family; --check runs it on several shapes, empty ones included\n",
            tj_ov_op_types());
    fprintf(f, "ONNX nodes (FILE.onnx): %s\n",
            tj_onnx_available() ? tj_onnx_node_types() : "none: built without the ONNX reader");
    fprintf(f, "exit status: 0 every layer compiled (skipped ones included), 1 a refused "
            "layer\nor a failed check, 2 an unreadable model or bad arguments\n");
}

static void tj_usage_check(FILE *f)
{
    fprintf(f, "usage: tensorjit check OP --data-shape .. --indices-shape ..\n"
            "       [--updates-shape ..] [--axis A] [--batch-dims B] [--opset V] [--dtype T]\n"
            "       [--index-type T] [--index-policy P] [--runs N] [--seed S] [--explain]\n"
            "runs the JIT kernel and the reference kernel of OP (gather-nd, gather, ...) on N\n"
            "random inputs (the last with a bad index) and prints 'N passed, M failed';\n"
            "exit 1 if any failed. A dim '?' (or '?:N', bounded) is dynamic: the dynamic\n"
            "kernel then runs on several shapes of its family (every '?' 1, 2, 3, 0, ...),\n"
            "each against the reference kernel of that shape, one line per shape.\n"
            "OP --help lists the options of one op\n");
    fprintf(f, "the embedding bags take their own shapes and attributes (--weights: random\n"
            "weights; --default-index, --padding-idx, --include-last-offset, --reduction),\n"
            "their bad runs also a bad offset or segment id; check OP --help lists them:\n");
    for (int op = JIT_OP_NONE + 1; op < JIT_OP_COUNT; op++) {
        jit_op_info info;
        if (jit_op_describe((jit_op)op, &info) == 0 && (info.attrs & JIT_ATTR_BAG))
            tj_cli_check_bag_synopsis(&info, "  ", f);
    }
}

static void tj_usage_cache(FILE *f)
{
    fprintf(f, "usage: tensorjit cache stats|clear\n"
            "stats: the cache folder, its kernels and bytes; clear: delete them first\n"
            "folder: $TENSORJIT_CACHE_DIR, else $XDG_CACHE_HOME/tensorjit, else\n"
            "~/.cache/tensorjit; TENSORJIT_CACHE_DIR=off: none. A folder writable by\n"
            "others or owned by another user is refused (said once on stderr)\n");
}

static void tj_usage_bench(FILE *f)
{
    char policies[128];
    tj_policies_text(policies, sizeof policies);
    fprintf(f, "usage: tensorjit bench [--workload ID] [--json] [--rounds N] [--no-compile]\n"
            "       tensorjit bench --compile [--runs N] [--json]\n"
            "       tensorjit bench --threads 1,2,... [--policy P] [--workload ID] [--json] "
            "[--rounds N] [--verbose]\n"
            "       tensorjit bench --bags [--workload E1|E2a|E2b|E3|E4|E5] [--threads 1,2,...] [--json] "
            "[--rounds N]\n"
            "  --workload ID    one workload (%s)\n"
            "  --rounds N       rounds per timing, 3 to 64 (default 11)\n"
            "  --no-compile     leave out compile times\n"
            "  --compile        compile times only, over --runs N processes (1 to 64, "
            "default 9)\n"
            "  --threads LIST   the JIT kernel on 1 to 64 threads each (e.g. 1,2,4)\n"
            "  --policy P       the index policy of the --threads runs: %s\n"
            "  --verbose        with --threads: what the split rule did with each kernel's\n"
            "                   calls (split, alone, probes, the costs it weighed)\n"
            "  --bags           the embedding-bag workloads E1..E5 with their peers (they are\n"
            "                   not in the default run: E2's table is 2 GB); --rounds N\n"
            "                   interleaved rounds (default 5), each timing every row once in\n"
            "                   turn: the median is reported, with the min and max; --threads\n"
            "                   gives a row \"jit xN\" for each count N above 1 (default 2)\n"
            "  --json           a JSON array, one object a line\n",
            tj_workload_ids(), policies);
}

static void tj_usage_demo(FILE *f)
{
    fprintf(f, "usage: tensorjit demo\n"
            "runs the specifications' example layers (%s) from\n"
            "built-in IR fragments through the model reader: for each, the plan, a few lines\n"
            "of IR, the output checked against the specification's, and the time per call\n"
            "of the JIT kernel against the reference kernel\n",
            tj_demo_layers());
}

static const struct {
    const char *name;
    void (*usage)(FILE *f);
    const char *const *words;
} tj_helps[] = {
    {"model", tj_usage_model, tj_model_flags}, {"check", tj_usage_check, tj_check_flags},
    {"cache", tj_usage_cache, tj_cache_words}, {"bench", tj_usage_bench, tj_bench_flags},
    {"demo", tj_usage_demo, tj_demo_flags},
};

int tj_cli_usage(const char *command, FILE *f)
{
    for (size_t i = 0; i < sizeof tj_helps / sizeof *tj_helps; i++)
        if (strcmp(tj_helps[i].name, command) == 0) {
            tj_helps[i].usage(f);
            return 0;
        }
    return -1;
}

const char *const *tj_cli_op_words(void)
{
    static const char *words[JIT_OP_COUNT];
    words[tj_op_commands(words)] = NULL;
    return words;
}

/* The op commands, then the others: the words tensorjit takes first. */
static const char *const *tj_top_words(void)
{
    static const char *words[JIT_OP_COUNT + sizeof tj_commands / sizeof *tj_commands];
    size_t n = tj_op_commands(words);
    for (size_t i = 0; tj_commands[i]; i++)
        words[n++] = tj_commands[i];
    words[n] = NULL;
    return words;
}

const char *const *tj_cli_words(const char *command)
{
    if (!command)
        return tj_top_words();
    for (size_t i = 0; i < sizeof tj_helps / sizeof *tj_helps; i++)
        if (strcmp(tj_helps[i].name, command) == 0)
            return tj_helps[i].words;
    return NULL;
}

int tj_cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}
