/*
 * How an embedding bag's kernel is made (bag_ir.h): the host's vector
 * width, the accumulators' blocks of columns, the prefetch distance in
 * bytes of rows, the interleaving of short bags, streaming stores and the
 * split over threads, from the plan, the host and the configuration's
 * knobs; and the same in words for --explain.
 */
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bag_ir.h"
#include "host_cache.h"

static int tj_has_feature(const char *features, const char *name)
{
    size_t n = strlen(name);
    for (const char *f = features; f && (f = strstr(f, name)); f += n)
        if ((f == features || f[-1] == ',') && (f[n] == ',' || f[n] == '\0'))
            return 1;
    return 0;
}

/* What a layout needs of the host, read once per process: LLVM builds
 * its feature string anew on every read, and each compile read it more
 * than once (docs/performance.md, 'Compile time of a bag kernel'). */
typedef struct tj_bag_host {
    int vector_bits;
    int f16c;
    int64_t llc_bytes, l2_bytes;
    int intel;
} tj_bag_host;

static tj_bag_host tj_host;
static pthread_once_t tj_host_once = PTHREAD_ONCE_INIT;

static void tj_read_host(void)
{
    char *features = LLVMGetHostCPUFeatures();
    tj_host.vector_bits = tj_has_feature(features, "+avx512f") ? 512
                          : tj_has_feature(features, "+avx2")  ? 256
                                                               : 128;
    tj_host.f16c = tj_has_feature(features, "+f16c");
    LLVMDisposeMessage(features);
    tj_host.llc_bytes = tj_host_llc_bytes();
    tj_host.l2_bytes = tj_host_l2_bytes();
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    tj_host.intel = __builtin_cpu_is("intel");
#endif
}

static int tj_bag_acc_size(jit_dtype acc)
{
    return acc == JIT_F32 ? 4 : 8;
}

void tj_bag_layout_of(const tj_plan *p, const tj_ir_strategy *s, tj_bag_layout *l)
{
    const tj_bag_plan *g = &p->bag;
    memset(l, 0, sizeof *l);
    pthread_once(&tj_host_once, tj_read_host);
    l->vector_bits = tj_host.vector_bits;
    l->f16c = tj_host.f16c;
    l->mask_regs = tj_host.vector_bits == 512;
    int asked = atoi(s->vector_width);
    if (asked == 128 || asked == 256 || asked == 512)
        l->vector_bits = asked;
    l->lanes = l->vector_bits / 8 / tj_bag_acc_size(g->acc_type);
    int64_t most = TJ_BAG_ACC_VECTORS * l->lanes;
    l->block_elems = g->row_elems < most ? g->row_elems : most;
    l->row_bytes = g->row_elems * jit_dtype_size(g->dtype);
    /* a dynamic table's size is the call's: as large as any */
    l->table_bytes = g->rows >= 0 ? g->rows * l->row_bytes : INT64_MAX;
    l->llc_bytes = tj_host.llc_bytes;
    l->l2_bytes = tj_host.l2_bytes;
    const tj_knob *far = &tj_config_get()->codegen.prefetch_far;
    l->far_prefetch = far->set ? far->value != 0 : tj_host.intel;
    /* Short bags several at a time, as many as TENSORJIT_INTERLEAVE asks
     * and the registers hold; one at a time by default: on E2a (one-hot
     * bags) the kernel of one bag at a time ran as fast on the AMD host and
     * on the Xeon, and compiled in 2 ms less (docs/performance.md,
     * 'Interleaved bags'). */
    const tj_knob *together = &tj_config_get()->codegen.interleave;
    int64_t avg = g->form == TJ_BAG_PACKED ? g->bag_len : g->bags ? g->lookups / g->bags : 0;
    if (g->dynamic && (g->form != TJ_BAG_PACKED || g->bag_len < 0))
        avg = INT64_MAX; /* the call's: not known to be short */
    l->bag_len = avg;
    int64_t vectors = (l->block_elems + l->lanes - 1) / l->lanes;
    int64_t regs = l->vector_bits == 512 ? 16 : 8;
    l->interleave = 1;
    if (together->set && together->value > 1 && g->form != TJ_BAG_SEGMENTS &&
        (g->bags >= 2 || (g->dynamic && g->bags < 0)) && avg <= TJ_BAG_INTERLEAVE_MAX_LEN &&
        vectors > 0) {
        int64_t n = regs / vectors;
        n = n > together->value ? together->value : n;
        l->interleave = n > TJ_BAG_INTERLEAVE_MAX ? TJ_BAG_INTERLEAVE_MAX : n < 2 ? 1 : n;
    }
}

/* The table fits the host's last-level cache (a dynamic table never does:
 * its size is the call's), on a core that prefetches far: rows from that
 * cache went further ahead on the Xeon only, once a row of 128 f32 was a
 * loop over two blocks on the AMD host (bag_ir.h). */
static int tj_bag_table_in_llc(const tj_bag_layout *l)
{
    return l->far_prefetch && l->llc_bytes > 0 && l->table_bytes <= l->llc_bytes;
}

/* Bags of TJ_BAG_PREFETCH_LONG_BAG lookups or more on average (a dynamic
 * kernel's are the call's: not known to be long). */
static int tj_bag_long(const tj_bag_layout *l)
{
    return l->bag_len >= TJ_BAG_PREFETCH_LONG_BAG && l->bag_len != INT64_MAX;
}

/* The rows ahead on a core that prefetches far (bag_ir.h): as many as its
 * L2's share holds, at most TJ_BAG_PREFETCH_FAR_ROWS and never fewer than
 * the usual rule's `usual` (nor, the L2 unknown, more). */
static int64_t tj_bag_far_rows(const tj_bag_layout *l, int64_t usual)
{
    int64_t share = l->l2_bytes > 0 ? l->l2_bytes / TJ_BAG_PREFETCH_L2_SHARE : 0;
    int64_t rows = l->row_bytes > 0 && share > 0 ? share / l->row_bytes : usual;
    rows = rows > TJ_BAG_PREFETCH_FAR_ROWS ? TJ_BAG_PREFETCH_FAR_ROWS : rows;
    return rows > usual ? rows : usual;
}

void tj_bag_choose(const tj_plan *p, const tj_codegen_config *cfg, tj_ir_strategy *s)
{
    const tj_bag_plan *g = &p->bag;
    tj_bag_layout l;
    memset(s, 0, sizeof *s);
    snprintf(s->vector_width, sizeof s->vector_width, "%s", cfg->vector_width);
    tj_bag_layout_of(p, s, &l);
    snprintf(s->vector_width, sizeof s->vector_width, "%d", l.vector_bits);
    s->tuples = g->lookups;
    s->budget = cfg->unroll.set ? cfg->unroll.value : TJ_IR_UNROLL_BUDGET;
    int64_t rows = l.row_bytes > 0 ? TJ_BAG_PREFETCH_BYTES / l.row_bytes : 0;
    rows = rows < TJ_BAG_PREFETCH_MIN_ROWS   ? TJ_BAG_PREFETCH_MIN_ROWS
           : rows > TJ_BAG_PREFETCH_MAX_ROWS ? TJ_BAG_PREFETCH_MAX_ROWS
                                             : rows;
    if (tj_bag_long(&l) || tj_bag_table_in_llc(&l))
        rows = TJ_BAG_PREFETCH_MAX_ROWS;
    else if (l.far_prefetch)
        rows = tj_bag_far_rows(&l, rows);
    int large_table = l.table_bytes >= TJ_BAG_PREFETCH_MIN_TABLE;
    if (cfg->prefetch.set) /* asked for: whatever the table's size */
        rows = cfg->prefetch.value > 0 ? cfg->prefetch.value : 0, large_table = 1;
    s->prefetch = l.row_bytes > 0 && large_table && (g->lookups > 1 || g->dynamic) ? rows : 0;
    int64_t out_bytes = g->bags * l.row_bytes;
    int can_stream = g->form != TJ_BAG_SEGMENTS && l.row_bytes % 64 == 0 &&
                     g->row_elems % l.lanes == 0 && out_bytes > 0;
    int large = out_bytes >= TJ_BAG_NT_MIN_OUT && out_bytes > l.llc_bytes;
    s->nontemporal = can_stream && !g->dynamic &&
                     (cfg->nontemporal.set ? cfg->nontemporal.value != 0 : large);
    int64_t lines = l.row_bytes / 64 + 1;
    /* a dynamic kernel's counts are its call's: the split rule weighs each
     * call (runtime/exec/jit_support.c) */
    s->split = p->bag.threads > 1 &&
               (g->dynamic || (g->bags >= 2 && (cfg->split_min.set ||
                                                g->lookups >= TJ_IR_SPLIT_MIN_WORK / lines)));
    /* a static split kernel's range function is loaded with it (its
     * checks, for the parts API, are the runtime's scan) */
    s->ranges = s->split && !g->dynamic;
    s->checks_part = 0;
}

/* Why the rows ahead are more than the usual, in words ("" if not). */
static const char *tj_bag_prefetch_why(const tj_bag_layout *l, char *buf, size_t len)
{
    if (tj_bag_long(l) || tj_bag_table_in_llc(l))
        snprintf(buf, len, ", %s: further ahead",
                 tj_bag_long(l) ? "long bags" : "inside the last-level cache");
    else if (l->far_prefetch && l->l2_bytes > 0)
        snprintf(buf, len, ", short bags from memory as on an Intel core: further ahead, "
                 "within 1/%d of its %" PRId64 "-byte L2", TJ_BAG_PREFETCH_L2_SHARE, l->l2_bytes);
    else
        buf[0] = '\0';
    return buf;
}

/* "dynamic (B, N and E from the call's dims) " naming the dims the plan
 * takes from each call (tj_bag_call_dims: the form's own, those that are
 * dynamic), or "" for a static plan. */
static const char *tj_bag_dynamic_words(const tj_bag_plan *g, char *buf, size_t len)
{
    char dims[32];
    if (!g->dynamic)
        buf[0] = '\0';
    else if (tj_bag_call_dims(g, dims, sizeof dims)[0])
        snprintf(buf, len, "dynamic (%s from the call's dims) ", dims);
    else
        snprintf(buf, len, "dynamic ");
    return buf;
}

/* The table's size as the prefetch rule weighed it: its bytes, or for a
 * dynamic table (E the call's: l->table_bytes is INT64_MAX, a stand-in
 * for "as large as any", not a size to print) those words. */
static const char *tj_bag_table_words(const tj_bag_plan *g, const tj_bag_layout *l, char *buf,
                                      size_t len)
{
    if (g->rows < 0)
        snprintf(buf, len, "a table of E rows, the call's, taken as");
    else
        snprintf(buf, len, "table of %" PRId64 " bytes", l->table_bytes);
    return buf;
}

void tj_bag_strategy_describe(const tj_plan *p, const tj_ir_strategy *s, char *buf, size_t len)
{
    const tj_bag_plan *g = &p->bag;
    tj_bag_layout l;
    tj_bag_layout_of(p, s, &l);
    int64_t vectors = l.lanes ? (g->row_elems + l.lanes - 1) / l.lanes : 0;
    char why[160], dyn[64], table[64];
    int n = snprintf(buf, len,
                     "%sembedding bag: rows of %" PRId64 " elements (%" PRId64 " bytes) "
                     "accumulated in %" PRId64 " %d-bit vectors%s",
                     tj_bag_dynamic_words(g, dyn, sizeof dyn), g->row_elems, l.row_bytes,
                     vectors, l.vector_bits,
                     g->row_elems > l.block_elems ? " a block of columns at a time" : "");
    if (n < 0 || (size_t)n >= len)
        return;
    tj_bag_table_words(g, &l, table, sizeof table);
    if (s->prefetch)
        n += snprintf(buf + n, len - (size_t)n,
                      "; prefetch %" PRId64 " rows (%" PRId64 " bytes) ahead, primed for the "
                      "first rows (%s >= %d%s)",
                      s->prefetch, s->prefetch * l.row_bytes, table,
                      TJ_BAG_PREFETCH_MIN_TABLE, tj_bag_prefetch_why(&l, why, sizeof why));
    else if (g->rows < 0) /* a dynamic table is taken as large: only the knob (or empty rows) */
        n += snprintf(buf + n, len - (size_t)n, "; no prefetch (TENSORJIT_PREFETCH=0, or rows "
                      "of 0 bytes)");
    else
        n += snprintf(buf + n, len - (size_t)n, "; no prefetch (%s < %d, or TENSORJIT_PREFETCH=0)",
                      table, TJ_BAG_PREFETCH_MIN_TABLE);
    if ((size_t)n >= len)
        return;
    if (l.interleave > 1)
        n += snprintf(buf + n, len - (size_t)n,
                      "; %" PRId64 " bags interleaved (at most %d lookups a bag)", l.interleave,
                      TJ_BAG_INTERLEAVE_MAX_LEN);
    if ((size_t)n >= len)
        return;
    if (g->bags >= 0)
        n += snprintf(buf + n, len - (size_t)n, "; %s stores (out %" PRId64 " bytes, last-level "
                      "cache %" PRId64 " bytes)", s->nontemporal ? "streaming" : "cached",
                      g->bags * l.row_bytes, l.llc_bytes);
    else /* a dynamic template's bags are a placeholder: the call's count decides */
        n += snprintf(buf + n, len - (size_t)n, "; %s stores (out of each call's bags, "
                      "last-level cache %" PRId64 " bytes)", s->nontemporal ? "streaming" : "cached",
                      l.llc_bytes);
    if ((size_t)n >= len)
        return;
    if (s->split)
        snprintf(buf + n, len - (size_t)n, "; %s split across up to %d threads as the "
                 "measured cost says%s", g->form == TJ_BAG_SEGMENTS ? "segments" : "bags",
                 g->threads, g->dynamic ? " (each call's counts weighed)" : "");
    else
        snprintf(buf + n, len - (size_t)n, "; on the caller's thread");
}
