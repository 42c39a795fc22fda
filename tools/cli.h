/* Shared pieces of the tensorjit commands. */
#ifndef TJ_CLI_H
#define TJ_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "tensorjit.h"

enum { TJ_EXIT_OK = 0, TJ_EXIT_FAILURE = 1, TJ_EXIT_USAGE = 2, TJ_EXIT_BAD_INDEX = 3 };

/* One line "tensorjit: ..." on stderr; returns TJ_EXIT_USAGE. */
int tj_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* text (of cap bytes) rewritten with \xNN for each control character (C0,
 * DEL, C1, bidirectional overrides), each backslash and each byte of no
 * valid UTF-8 (tools/cli_text.c): a model file's names and messages quoting
 * them, safe to print. What does not fit in cap is cut at a whole
 * character or escape. */
void tj_cli_printable(char *text, size_t cap);

/* Strict integer parsing of an option's value; names the option on error. */
int tj_cli_int(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out);

/* An element type by the library's name ("f32") or numpy's ("float32");
 * 0, or -1 after printing the error naming opt. */
int tj_cli_dtype(const char *opt, const char *text, jit_dtype *out);
/* The op commands' shared flags: --engine jit|reference, --index-policy
 * NAME, --dump-ir[=opt] (arg NULL or "opt"; *dump a jit_dump_kind). 0, or
 * -1 after the error line. */
int tj_cli_engine(const char *text, jit_engine *out);
int tj_cli_policy(const char *text, jit_index_policy *out);
int tj_cli_dump_ir(const char *arg, int *dump);

/* The flags every op command takes (tools/cli_common_opts.c): -o/--output,
 * --engine, --index-policy, --verbose, --help, --dump-ir[=opt],
 * --dump-asm, --explain, --dtype and --index-type. A command lists them
 * with TJ_CLI_COMMON_OPTIONS in its getopt table, its own flags' codes
 * from TJ_OPT_OWN on, and gives every code to tj_cli_common_option first:
 * 0 taken, -1 after the error line, 1 not a common flag. --help is the
 * command's to answer. */
enum { TJ_OPT_ENGINE = 256, TJ_OPT_POLICY, TJ_OPT_VERBOSE, TJ_OPT_HELP, TJ_OPT_DUMP_IR,
       TJ_OPT_DUMP_ASM, TJ_OPT_EXPLAIN, TJ_OPT_DTYPE, TJ_OPT_INDEX_TYPE, TJ_OPT_OWN };
#define TJ_CLI_COMMON_OPTIONS                                                                 \
    {"output", required_argument, NULL, 'o'},                                                 \
    {"engine", required_argument, NULL, TJ_OPT_ENGINE},                                       \
    {"index-policy", required_argument, NULL, TJ_OPT_POLICY},                                 \
    {"verbose", no_argument, NULL, TJ_OPT_VERBOSE},                                           \
    {"help", no_argument, NULL, TJ_OPT_HELP},                                                 \
    {"dump-ir", optional_argument, NULL, TJ_OPT_DUMP_IR},                                     \
    {"dump-asm", no_argument, NULL, TJ_OPT_DUMP_ASM},                                         \
    {"explain", no_argument, NULL, TJ_OPT_EXPLAIN},                                           \
    {"dtype", required_argument, NULL, TJ_OPT_DTYPE},                                         \
    {"index-type", required_argument, NULL, TJ_OPT_INDEX_TYPE}

typedef struct tj_cli_common {
    const char *output;
    int verbose, explain;
    int dump; /* -1 none, else a jit_dump_kind */
    int shows; /* how many of --explain, --dump-ir, --dump-asm were given */
    int64_t opset; /* parsed by the command (tj_cli_opset): not every op has versions */
    jit_dtype dtype, index_type;
    int have_dtype, have_index_type; /* given: .npy files name their own types */
    jit_engine engine;
    jit_index_policy policy;
} tj_cli_common;

/* The option getopt_long has just read as the user typed it ("--offsets",
 * not the "--offsets-shape" it expanded that to), into buf; next is
 * optind, arg optarg. */
const char *tj_cli_typed_option(char *const argv[], int next, const char *arg, char *buf,
                                size_t len);

/* The defaults: no dump, f32 and i64, the op's newest version. */
void tj_cli_common_init(tj_cli_common *c, const jit_op_info *op);
int tj_cli_common_option(tj_cli_common *c, int code, const char *arg);
/* After parsing: one of --explain, --dump-ir, --dump-asm at most, and none
 * with -o (which writes a run's result: they print text instead); no -o
 * for check. 0, or -1 after the error line. */
int tj_cli_common_check(const tj_cli_common *c, const char *cmd, int check);
/* A signature by .npy files: --dtype and --index-type, which the files'
 * headers decide, are refused rather than dropped. 0, or -1 after the
 * error line. */
int tj_cli_common_files(const tj_cli_common *c, const char *cmd);
/* --opset N, one of the op's versions; 0, or -1 after the error line. */
int tj_cli_opset(const jit_op_info *op, const char *arg, int64_t *opset);
/* A bag op of segment ids (EmbeddingSegmentsSum), not offsets. */
int tj_cli_bag_segments(const jit_op_info *op);
/* Whether bag op takes the option of getopt code `code` in options, by its
 * name and the op's attributes (--offsets needs offsets, --weights per-sample
 * weights, ...): what --help lists and "did you mean" chooses from. */
struct option;
int tj_cli_bag_takes(const jit_op_info *op, const struct option *options, int code);
/* --NAME SHAPE into *shape and bound, *have set; 0, or -1 after the error. */
int tj_cli_shape_option(const char *name, const char *arg, int *have, jit_shape *shape,
                        int64_t *bound);
/* The bag commands' --num-segments (S or a dynamic ?[:N]) and --reduction. */
int tj_cli_num_segments(const char *arg, int64_t *num_segments, int64_t *bound);
int tj_cli_bag_reduction(const jit_op_info *op, const char *arg, jit_reduction *out);

/* The "--name" words of a getopt table for "did you mean": those takes
 * accepts for op (every one for a NULL takes), in buf, NULL-terminated
 * (a table longer than TJ_CLI_MAX_OPTIONS - 1 is cut there). */
#define TJ_CLI_MAX_OPTIONS 48
typedef struct tj_cli_words_buf {
    char names[TJ_CLI_MAX_OPTIONS][32];
    const char *words[TJ_CLI_MAX_OPTIONS];
} tj_cli_words_buf;
struct option;
const char *const *tj_cli_option_words(const struct option *options, const jit_op_info *op,
                                       int (*takes)(const jit_op_info *op, int code),
                                       tj_cli_words_buf *buf);
/* An option getopt refused that is one of options (or -o): its line
 * printed (a value missing, or one given to a flag that takes none), 1;
 * 0 for an unknown one. */
int tj_cli_known_option(const char *cmd, const struct option *options, const char *arg);
/* A flag getopt refused: a known one (tj_cli_known_option), else an
 * unknown one with the nearest of words. */
void tj_cli_bad_option(const char *cmd, const struct option *options, const char *arg,
                       const char *const *words);
/* Prints what --dump-ir, --dump-asm or --explain asked for (NULL: the
 * library's error) and frees it; an exit status. */
int tj_cli_print_dump(char *text);

/* Writes element i of a tensor as text. */
void tj_cli_print_elem(FILE *f, jit_dtype t, const void *data, int64_t i);

/* A tensor as nested brackets, short tensors in full (at most 1000
 * elements, then "..."); an empty one as "[] (shape [N,0])", whatever
 * its other dims. */
void tj_cli_print_tensor(FILE *f, jit_dtype t, const jit_shape *s, const void *data);

/* A result as the CLI prints it: "shape [2,3], dtype f32", then the tensor. */
void tj_cli_print_result(FILE *f, jit_dtype t, const jit_shape *s, const void *data);

/* "engine: jit (compile 3.1 ms)" or "engine: reference (<why>)". */
void tj_cli_print_engine(FILE *f, const jit_kernel_info *info);

/* "engine: jit (dynamic data[0] indices[0]; compile 3.1 ms, ...)" or
 * "engine: reference (dynamic data[0]; <why>)": a dynamic kernel's engine
 * for the call of dims (jit_dynamic_engine), with the dims marked dynamic
 * (names, from tj_cli_apply_dynamic). */
void tj_cli_print_engine_dynamic(FILE *f, jit_kernel fn, const jit_kernel_info *info,
                                 const int64_t *dims, const char *names);

/* Dynamic dims on the command line (tools/cli_dyn.c). */
#define TJ_DYN_INPUTS 3 /* data, indices, updates */

/* "2x3x4", "?x64", "?:100x64" (a dynamic dim with its bound), "" or
 * "scalar" into a shape and its bounds (0: none); 0, or -1 after printing
 * the error naming opt and the dim. */
int tj_cli_parse_shape(const char *opt, const char *text, jit_shape *s, int64_t *bounds);


/* --dynamic all | data:0,indices:1,...: the dims of the .npy inputs that
 * are made dynamic. */
typedef struct tj_dyn_spec {
    int given, all;
    unsigned char dims[TJ_DYN_INPUTS][JIT_MAX_RANK]; /* [input][dim] marked */
} tj_dyn_spec;

/* Parses the spec (syntax, input names, dims in [0, JIT_MAX_RANK)); 0, or
 * -1 after printing the error. */
int tj_cli_parse_dynamic(const char *text, int has_updates, tj_dyn_spec *spec);

/* The dynamic signature of the spec over a concrete one, the concrete
 * dims in a dynamic kernel's order, and the marked dims as text
 * ("data[0] indices[0,1]"). The number of dims marked, or -1 after
 * printing the error (a dim beyond an input's rank). */
int tj_cli_apply_dynamic(const tj_dyn_spec *spec, const jit_sig *concrete, jit_sig *dyn,
                         int64_t *dims, char *names, size_t len);

/* Opens the on-disk kernel cache as the CLI does by default:
 * $TENSORJIT_CACHE_DIR ("off": none), else $XDG_CACHE_HOME/tensorjit, else
 * ~/.cache/tensorjit. A folder that is refused leaves the cache off, said
 * once on stderr with the library's reason; -1 then. */
int tj_cli_open_cache(void);
int tj_cmd_cache(int argc, char **argv);

/* tensorjit OP ...: one kernel of the op on .npy files (or by flags). */
int tj_cmd_op(jit_op op, int argc, char **argv);
int tj_cmd_demo(int argc, char **argv);

/* tensorjit embedding-bag-offsets | embedding-bag-packed |
 * embedding-segments (tools/cmd_bags.c): the ops of JIT_ATTR_BAG, whose
 * inputs are a table, indices, offsets or segment ids and weights. Their
 * usage (tools/cli_help_bags.c) and the flags an op of them takes. */
int tj_cmd_bag(const jit_op_info *op, int argc, char **argv);
void tj_cli_usage_bag(const jit_op_info *op, FILE *f);
const char *const *tj_cli_bag_words(const jit_op_info *op);

/* tensorjit check OP for the bags (tools/cmd_check_bags.c): their JIT and
 * reference kernels on random bags of a signature given by shape flags;
 * its usage (tools/cli_help_bags.c), its synopsis line (after lead: the
 * usage's first line, or one of `check --help`), and the flags it takes. */
int tj_cmd_check_bag(const jit_op_info *op, int argc, char **argv);
void tj_cli_usage_check_bag(const jit_op_info *op, FILE *f);
void tj_cli_check_bag_synopsis(const jit_op_info *op, const char *lead, FILE *f);
const char *const *tj_cli_check_bag_words(const jit_op_info *op);

/* The .npy of a result to the file output, or to stdout for "-". */
int tj_cli_write_output(const char *output, jit_dtype t, const jit_shape *s, const void *out);
int tj_cmd_bench(int argc, char **argv);
int tj_cmd_model(int argc, char **argv);
int tj_cmd_check(int argc, char **argv);

/* "GatherND-8, ScatterUpdate-3, ...": the layers tensorjit demo runs. */
const char *tj_demo_layers(void);

/* Usage texts (tools/cli_help.c). tj_cli_usage: of model, check, cache,
 * bench or demo, -1 for another name. tj_cli_words: the flags (or words)
 * a command takes, the top-level commands (the ops' included) for NULL;
 * NULL-terminated. */
void tj_cli_usage_main(FILE *f);
void tj_cli_usage_op(const jit_op_info *op, FILE *f);
void tj_cli_usage_check_op(const jit_op_info *op, FILE *f);
int tj_cli_usage(const char *command, FILE *f);
const char *const *tj_cli_words(const char *command);
/* The op commands alone (gather-nd, gather, ...), NULL-terminated. */
const char *const *tj_cli_op_words(void);
int tj_cli_is_help(const char *arg); /* --help or -h */
void tj_cli_opsets_text(const jit_op_info *op, const char *sep, const char *last, char *buf,
                        size_t len);
int tj_cli_newest_opset(const jit_op_info *op);

/* "did you mean" (tools/cli_suggest.c): the word of words nearest to
 * word (a --flag=value compares its flag), NULL when none is near; and the
 * error line "WHAT WORD (did you mean X?)", returning TJ_EXIT_USAGE. */
const char *tj_cli_nearest(const char *word, const char *const *words);
int tj_cli_unknown(const char *what, const char *word, const char *const *words);

/* Errors that name the flag to change (tools/cli_hint.c). tj_cli_check_sig:
 * 0 for a valid signature, else its error line, with the --opset that
 * takes it where another does, and TJ_EXIT_USAGE. tj_cli_bad_index: the
 * index error of the last call, with the --index-policy values under which
 * the inputs run (out is scratch of the output's size);
 * TJ_EXIT_BAD_INDEX. */
int tj_cli_check_sig(const jit_op_info *op, const jit_sig *sig);
int tj_cli_sig_fail(const jit_op_info *op, const jit_sig *sig);
int tj_cli_bad_index(const jit_sig *sig, const void *data, const void *indices,
                     const void *updates, void *out);
int tj_cli_bad_index_bag(const jit_sig *sig, const void *table, const void *indices,
                         const void *offsets, const void *weights, void *out);

#endif
