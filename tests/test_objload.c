/* The loader of cached objects (jit/objload.c), on an object the JIT
 * really made: loaded, called, compared with the reference; refused for
 * another machine, a writable section or a symbol it cannot resolve; and
 * fed every truncation and a corruption of every byte, which it must
 * refuse or load without reading or writing outside its buffers (this
 * test runs under ASan in CI). */
#define _DEFAULT_SOURCE
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc.h"
#include "jit_support.h"
#include "objload.h"
#include "tensorjit.h"

static char base[64], name[80];
static unsigned char *object;
static size_t object_len;

static const tj_objload_symbol runtime[] = {
    {"tj_rt_bad_index", (void *)(uintptr_t)tj_rt_bad_index},
    {"tj_rt_bad_pointer", (void *)(uintptr_t)tj_rt_bad_pointer},
    {"tj_rt_parallel", (void *)(uintptr_t)tj_rt_parallel},
    {"memcpy", (void *)(uintptr_t)memcpy},
    {"memmove", (void *)(uintptr_t)memmove},
    {"memset", (void *)(uintptr_t)memset},
};
#define NRUNTIME (sizeof runtime / sizeof *runtime)

static jit_gather_nd_sig gsig(void)
{
    /* 40 tuples: counted loops, with constants and calls out of the object */
    return (jit_gather_nd_sig){.dtype = JIT_F32, .index_type = JIT_I64,
                               .data_shape = {2, {50, 6}}, .indices_shape = {2, {40, 1}}};
}

/* Compiles gsig() into a fresh cache folder and takes its one entry's
 * object (it starts at the ELF magic after the entry's header) and the
 * kernel's symbol name ("tj_" and the entry's file name). */
static int setup(void **state)
{
    (void)state;
    snprintf(base, sizeof base, "/tmp/tj_objload_XXXXXX");
    if (!mkdtemp(base) || jit_cache_open(base) != 0)
        return -1;
    jit_gather_nd_sig s = gsig();
    if (!jit_gather_nd_compile(&s))
        return -1;
    char cmd[160], file[256];
    snprintf(cmd, sizeof cmd, "ls %s/*.tjk", base);
    FILE *p = popen(cmd, "r");
    if (!p || !fgets(file, sizeof file, p))
        return -1;
    pclose(p);
    file[strcspn(file, "\n")] = '\0';
    const char *slash = strrchr(file, '/');
    snprintf(name, sizeof name, "tj_%.*s", (int)(strlen(slash + 1) - 4), slash + 1);
    FILE *f = fopen(file, "rb");
    static unsigned char buf[1 << 20];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    for (size_t i = 88; i + 4 <= n; i++) /* 88: the fixed part of the header */
        if (memcmp(buf + i, ELFMAG, SELFMAG) == 0) {
            object = buf + i;
            object_len = n - i;
            break;
        }
    jit_shutdown();
    return object ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    return system(cmd);
}

static void test_loads_and_runs(void **state)
{
    (void)state;
    char why[256];
    tj_objload *l = tj_objload_load(object, object_len, runtime, NRUNTIME, why, sizeof why);
    assert_non_null(l);
    assert_true(tj_objload_text_bytes(l) > 0);
    assert_null(tj_objload_find(l, "no_such_function"));
    jit_gather_nd_fn fn = (jit_gather_nd_fn)(uintptr_t)tj_objload_find(l, name);
    assert_non_null(fn);
    float data[300], out[240], want[240];
    int64_t idx[40];
    for (int i = 0; i < 300; i++)
        data[i] = (float)i * 0.25f;
    for (int i = 0; i < 40; i++)
        idx[i] = (i * 17) % 50;
    jit_gather_nd_sig s = gsig();
    s.engine = JIT_ENGINE_REFERENCE;
    assert_int_equal(jit_gather_nd_compile(&s)(data, idx, want), 0);
    assert_int_equal(fn(data, idx, out), 0);
    assert_memory_equal(out, want, sizeof want);
    /* its cold paths call out of the object, through the loader's stubs */
    idx[5] = 50;
    assert_int_equal(fn(data, idx, out), JIT_STATUS_BAD_INDEX);
    assert_int_equal(fn(NULL, idx, out), JIT_STATUS_BAD_POINTER);
    tj_objload_free(l);
    jit_shutdown();
}

static void expect_refused(const unsigned char *obj, size_t len, const tj_objload_symbol *rt,
                           size_t nrt, const char *why_part)
{
    char why[256] = "";
    tj_objload *l = tj_objload_load(obj, len, rt, nrt, why, sizeof why);
    assert_null(l);
    assert_non_null(strstr(why, why_part));
}

static void test_refuses_what_it_does_not_handle(void **state)
{
    (void)state;
    unsigned char *copy = malloc(object_len);
    assert_non_null(copy);

    memcpy(copy, object, object_len);
    uint16_t arm = EM_AARCH64;
    memcpy(copy + offsetof(Elf64_Ehdr, e_machine), &arm, 2);
    expect_refused(copy, object_len, runtime, NRUNTIME, "not an x86-64 ELF");

    /* no runtime functions to call: the relocations that need them fail */
    expect_refused(object, object_len, runtime, 0, "unknown symbol");

    memcpy(copy, object, object_len);
    Elf64_Ehdr h;
    memcpy(&h, copy, sizeof h);
    int marked = 0;
    for (size_t i = 0; i < h.e_shnum; i++) {
        Elf64_Shdr sh;
        unsigned char *at = copy + h.e_shoff + i * sizeof sh;
        memcpy(&sh, at, sizeof sh);
        if (sh.sh_flags & SHF_EXECINSTR) {
            sh.sh_flags |= SHF_WRITE;
            memcpy(at, &sh, sizeof sh);
            marked = 1;
        }
    }
    assert_true(marked);
    expect_refused(copy, object_len, runtime, NRUNTIME, "writable section");
    expect_refused(object, 10, runtime, NRUNTIME, "shorter than an ELF header");
    free(copy);
}

/* The object's section headers and symbol table, for the tests that edit it. */
static Elf64_Shdr shdr(const unsigned char *obj, size_t i)
{
    Elf64_Ehdr h;
    Elf64_Shdr sh;
    memcpy(&h, obj, sizeof h);
    memcpy(&sh, obj + h.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
}

static size_t nsections(const unsigned char *obj)
{
    Elf64_Ehdr h;
    memcpy(&h, obj, sizeof h);
    return h.e_shnum;
}

/* The index of the kernel's symbol; its value and section in *sym. */
static size_t kernel_symbol(const unsigned char *obj, Elf64_Sym *sym)
{
    for (size_t i = 0; i < nsections(obj); i++) {
        Elf64_Shdr st = shdr(obj, i);
        if (st.sh_type != SHT_SYMTAB)
            continue;
        Elf64_Shdr str = shdr(obj, st.sh_link);
        for (size_t k = 1; k < st.sh_size / sizeof *sym; k++) {
            memcpy(sym, obj + st.sh_offset + k * sizeof *sym, sizeof *sym);
            if (ELF64_ST_TYPE(sym->st_info) == STT_FUNC && /* not the FILE symbol */
                strcmp((const char *)obj + str.sh_offset + sym->st_name, name) == 0)
                return k;
        }
    }
    fail_msg("no symbol %s in the object", name);
    return 0;
}

/* The two 64-bit relocation types the code generator may emit (absolute
 * and PC-relative), which the kernels of the suite happen not to contain:
 * one relocation of the kernel's section is made each, against the kernel
 * itself, and the 8 bytes written must be S + A and S + A - P. */
static void test_64_bit_relocations(void **state)
{
    (void)state;
    Elf64_Sym ksym;
    size_t k = kernel_symbol(object, &ksym);
    unsigned char *copy = malloc(object_len);
    assert_non_null(copy);
    static const uint32_t types[] = {R_X86_64_64, R_X86_64_PC64};
    for (size_t t = 0; t < 2; t++) {
        memcpy(copy, object, object_len);
        Elf64_Rela r = {0};
        size_t at = 0;
        for (size_t i = 0; i < nsections(copy) && !at; i++) {
            Elf64_Shdr rs = shdr(copy, i);
            if (rs.sh_type != SHT_RELA || rs.sh_info != ksym.st_shndx)
                continue;
            Elf64_Shdr target = shdr(copy, rs.sh_info);
            for (size_t j = 0; j < rs.sh_size / sizeof r; j++) {
                at = rs.sh_offset + j * sizeof r;
                memcpy(&r, copy + at, sizeof r);
                if (r.r_offset + 8 <= target.sh_size)
                    break;
                at = 0;
            }
        }
        if (!at)
            fail_msg("no relocation of section %u (%zu sections)", (unsigned)ksym.st_shndx, nsections(copy));
        r.r_info = ELF64_R_INFO(k, types[t]);
        r.r_addend = 24;
        memcpy(copy + at, &r, sizeof r);
        char why[256] = "";
        tj_objload *l = tj_objload_load(copy, object_len, runtime, NRUNTIME, why, sizeof why);
        if (!l)
            fail_msg("refused: %s", why);
        uintptr_t fn = (uintptr_t)tj_objload_find(l, name);
        assert_true(fn != 0);
        uintptr_t p = fn - ksym.st_value + r.r_offset; /* where it was written */
        uint64_t v;
        memcpy(&v, (const void *)p, 8);
        assert_int_equal(v, types[t] == R_X86_64_64 ? fn + 24 : fn + 24 - p);
        tj_objload_free(l);
    }
    /* REL (no addends) is not what our code generator emits: refused */
    memcpy(copy, object, object_len);
    Elf64_Ehdr h;
    memcpy(&h, copy, sizeof h);
    for (size_t i = 0; i < h.e_shnum; i++) {
        Elf64_Shdr sh = shdr(copy, i);
        if (sh.sh_type == SHT_RELA) {
            sh.sh_type = SHT_REL;
            memcpy(copy + h.e_shoff + i * sizeof sh, &sh, sizeof sh);
            break;
        }
    }
    expect_refused(copy, object_len, runtime, NRUNTIME, "REL relocations");
    free(copy);
}

/* Each allocation of a load fails in turn: refused with "out of memory",
 * or loaded and right. */
static void test_allocation_failures(void **state)
{
    (void)state;
    int refused = 0, loaded = 0;
    for (long n = 1; n < 12; n++) {
        char why[256] = "";
        tj_alloc_fail_after(n);
        tj_objload *l = tj_objload_load(object, object_len, runtime, NRUNTIME, why, sizeof why);
        tj_alloc_fail_after(0);
        if (!l) {
            assert_non_null(strstr(why, "out of memory"));
            refused++;
            continue;
        }
        assert_non_null(tj_objload_find(l, name));
        tj_objload_free(l);
        loaded++;
    }
    assert_true(refused >= 3);
    assert_true(loaded > 0);
}

static void load_whatever(const unsigned char *obj, size_t len)
{
    char why[256];
    tj_objload *l = tj_objload_load(obj, len, runtime, NRUNTIME, why, sizeof why);
    tj_objload_free(l); /* loaded or not: nothing outside the buffers touched */
}

static void test_every_truncation_and_corrupted_byte(void **state)
{
    (void)state;
    for (size_t n = 0; n < object_len; n++) {
        unsigned char *cut = malloc(n ? n : 1); /* exactly n bytes: ASan sees past them */
        assert_non_null(cut);
        memcpy(cut, object, n);
        load_whatever(cut, n);
        free(cut);
    }
    unsigned char *bad = malloc(object_len);
    assert_non_null(bad);
    for (size_t i = 0; i < object_len; i++)
        for (int k = 0; k < 2; k++) {
            memcpy(bad, object, object_len);
            bad[i] ^= k ? 0xff : 0x80;
            load_whatever(bad, object_len);
        }
    free(bad);
}

int main(void)
{
#if !defined(__x86_64__)
    return 77; /* the loader takes x86-64 objects only */
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_and_runs),
        cmocka_unit_test(test_refuses_what_it_does_not_handle),
        cmocka_unit_test(test_64_bit_relocations),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_every_truncation_and_corrupted_byte),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
