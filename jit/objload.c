/*
 * A loader for tensorjit's own cached kernel objects. A second process
 * whose kernels come from the disk cache should not have to start LLVM's
 * JIT for them: creating the LLJIT in a fresh process (first touches of
 * libLLVM's pages, mostly) costs more than everything else on a first
 * call's path together (docs/performance.md, 'Disk cache and tiered
 * kernels').
 *
 * The objects are ours: position-independent x86-64 code from our own
 * target machine, executable and read-only sections only, calling a few
 * runtime functions. Over the 154 objects the test suite makes they need
 * three relocation types (PLT32, REX_GOTPCRELX, PC32); this loader takes
 * those and the other usual x86-64 PIC ones, and refuses anything else (a
 * writable section, an unknown relocation or symbol, another machine): the
 * caller then loads the object through LLJIT, as it always did.
 *
 * An entry reaches here only after its SHA-256 matched, from a folder only
 * this user can write; the parsing still checks every offset and size
 * against the buffer.
 *
 * Layout of one kernel: [executable sections, then a 16-byte jump stub per
 * symbol for calls out of the object] [read-only sections, then the GOT],
 * each part page-aligned, mapped read-write to fill and relocate, then
 * read+execute and read-only (W^X).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "objload.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc.h"

#define TJ_PLT_BYTES 16
#define TJ_NAME_MAX 64

typedef struct tj_objload_fn {
    char name[TJ_NAME_MAX];
    void *address;
} tj_objload_fn;

struct tj_objload {
    unsigned char *base;
    size_t size;
    size_t text_bytes;
    size_t nfns;
    tj_objload_fn *fns;
};

/* The object being loaded: its bytes, copies of its headers, and where
 * each section and symbol ends up. */
typedef struct tj_elf {
    const unsigned char *bytes;
    size_t len;
    Elf64_Shdr *sec;
    size_t nsec;
    size_t symtab, nsyms;   /* section index of the symbol table */
    const char *strtab;
    size_t strtab_len;
    uintptr_t *sec_addr;    /* 0: not loaded */
    uintptr_t *sym_addr;    /* 0: unresolved */
    unsigned char *base;
    size_t rx_size, size;
    uintptr_t plt, got;
    size_t text_bytes;
    char *why;
    size_t why_len;
} tj_elf;

static int tj_refuse(tj_elf *e, const char *what)
{
    snprintf(e->why, e->why_len, "the object loader does not take this object: %s", what);
    return -1;
}

/* 1 when [off, off + n) lies within len, without overflow. */
static int tj_within(uint64_t off, uint64_t n, size_t len)
{
    return off <= len && n <= len - off;
}

static int tj_read_headers(tj_elf *e)
{
    Elf64_Ehdr h;
    if (e->len < sizeof h)
        return tj_refuse(e, "shorter than an ELF header");
    memcpy(&h, e->bytes, sizeof h);
    if (memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 || h.e_ident[EI_CLASS] != ELFCLASS64 ||
        h.e_ident[EI_DATA] != ELFDATA2LSB || h.e_type != ET_REL || h.e_machine != EM_X86_64)
        return tj_refuse(e, "not an x86-64 ELF relocatable object");
    if (h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shnum == 0 ||
        !tj_within(h.e_shoff, (uint64_t)h.e_shnum * sizeof(Elf64_Shdr), e->len))
        return tj_refuse(e, "section headers out of bounds");
    e->nsec = h.e_shnum;
    e->sec = tj_calloc(e->nsec, sizeof *e->sec);
    e->sec_addr = tj_calloc(e->nsec, sizeof *e->sec_addr);
    if (!e->sec || !e->sec_addr)
        return tj_refuse(e, "out of memory");
    memcpy(e->sec, e->bytes + h.e_shoff, e->nsec * sizeof *e->sec);
    for (size_t i = 0; i < e->nsec; i++)
        if (e->sec[i].sh_type != SHT_NOBITS &&
            !tj_within(e->sec[i].sh_offset, e->sec[i].sh_size, e->len))
            return tj_refuse(e, "a section out of bounds");
    return 0;
}

static int tj_find_symtab(tj_elf *e)
{
    for (size_t i = 0; i < e->nsec; i++) {
        const Elf64_Shdr *s = &e->sec[i];
        if (s->sh_type != SHT_SYMTAB)
            continue;
        if (s->sh_entsize != sizeof(Elf64_Sym) || s->sh_link >= e->nsec ||
            e->sec[s->sh_link].sh_type != SHT_STRTAB)
            return tj_refuse(e, "a malformed symbol table");
        e->symtab = i;
        e->nsyms = s->sh_size / sizeof(Elf64_Sym);
        e->strtab = (const char *)e->bytes + e->sec[s->sh_link].sh_offset;
        e->strtab_len = e->sec[s->sh_link].sh_size;
        e->sym_addr = tj_calloc(e->nsyms ? e->nsyms : 1, sizeof *e->sym_addr);
        return e->sym_addr ? 0 : tj_refuse(e, "out of memory");
    }
    return tj_refuse(e, "no symbol table");
}

static Elf64_Sym tj_sym(const tj_elf *e, size_t i)
{
    Elf64_Sym s;
    memcpy(&s, e->bytes + e->sec[e->symtab].sh_offset + i * sizeof s, sizeof s);
    return s;
}

/* The symbol's name, or NULL when it does not end inside the string table. */
static const char *tj_sym_name(const tj_elf *e, const Elf64_Sym *s)
{
    if (s->st_name >= e->strtab_len || !memchr(e->strtab + s->st_name, '\0',
                                               e->strtab_len - s->st_name))
        return NULL;
    return e->strtab + s->st_name;
}

static size_t tj_align_up(size_t v, size_t a)
{
    return (v + a - 1) & ~(a - 1);
}

/* Places every allocated section (offsets from the base for now). */
static int tj_layout(tj_elf *e)
{
    size_t rx = 0, ro = 0, page = (size_t)sysconf(_SC_PAGESIZE);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < e->nsec; i++) {
            const Elf64_Shdr *s = &e->sec[i];
            if (!(s->sh_flags & SHF_ALLOC) || s->sh_size == 0)
                continue;
            if ((s->sh_flags & SHF_WRITE) || s->sh_type == SHT_NOBITS)
                return tj_refuse(e, "a writable section");
            int exec = (s->sh_flags & SHF_EXECINSTR) != 0;
            if (exec != (pass == 0))
                continue;
            size_t align = s->sh_addralign > 1 ? (size_t)s->sh_addralign : 1;
            if ((align & (align - 1)) || align > page || s->sh_size > ((size_t)1 << 30))
                return tj_refuse(e, "a section alignment or size out of range");
            size_t *at = exec ? &rx : &ro;
            *at = tj_align_up(*at, align);
            e->sec_addr[i] = *at + 1; /* + 1: "placed", made an address later */
            *at += s->sh_size;
            if (exec)
                e->text_bytes += s->sh_size;
        }
    rx = tj_align_up(rx, TJ_PLT_BYTES);
    e->plt = rx;
    rx = tj_align_up(rx + e->nsyms * TJ_PLT_BYTES, page);
    ro = tj_align_up(ro, 8);
    e->got = rx + ro;
    ro = tj_align_up(ro + e->nsyms * 8, page);
    e->rx_size = rx;
    e->size = rx + ro;
    return 0;
}

/* Maps the kernel and copies the sections in; addresses become absolute. */
static int tj_map(tj_elf *e)
{
    void *m = mmap(NULL, e->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return tj_refuse(e, "mmap failed");
    e->base = m;
    uintptr_t b = (uintptr_t)m;
    for (size_t i = 0; i < e->nsec; i++) {
        if (!e->sec_addr[i])
            continue;
        int exec = (e->sec[i].sh_flags & SHF_EXECINSTR) != 0;
        e->sec_addr[i] += b - 1 + (exec ? 0 : e->rx_size);
        memcpy((void *)e->sec_addr[i], e->bytes + e->sec[i].sh_offset, e->sec[i].sh_size);
    }
    e->plt += b;
    e->got += b;
    return 0;
}

static void *tj_runtime_address(const char *name, const tj_objload_symbol *rt, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rt[i].name, name) == 0)
            return rt[i].address;
    return NULL;
}

/* Every symbol's address, its GOT entry, and for runtime functions a jump
 * stub within reach of a 32-bit call. Unresolved symbols stay 0: only a
 * relocation that uses one is an error. */
static void tj_resolve(tj_elf *e, const tj_objload_symbol *rt, size_t nrt)
{
    for (size_t i = 1; i < e->nsyms; i++) {
        Elf64_Sym s = tj_sym(e, i);
        const char *name = tj_sym_name(e, &s);
        uintptr_t a = 0;
        if (s.st_shndx == SHN_UNDEF && name) {
            a = (uintptr_t)tj_runtime_address(name, rt, nrt);
            if (a) { /* jmp *got[i](%rip), then int3 padding */
                unsigned char *stub = (unsigned char *)(e->plt + i * TJ_PLT_BYTES);
                int32_t rel = (int32_t)((int64_t)(e->got + i * 8) - (int64_t)(e->plt + i * TJ_PLT_BYTES + 6));
                memset(stub, 0xcc, TJ_PLT_BYTES);
                stub[0] = 0xff;
                stub[1] = 0x25;
                memcpy(stub + 2, &rel, 4);
            }
        } else if (s.st_shndx == SHN_ABS) {
            a = (uintptr_t)s.st_value;
        } else if (s.st_shndx < e->nsec && e->sec_addr[s.st_shndx] &&
                   s.st_value <= e->sec[s.st_shndx].sh_size) {
            a = e->sec_addr[s.st_shndx] + (uintptr_t)s.st_value;
        }
        e->sym_addr[i] = a;
        memcpy((void *)(e->got + i * 8), &a, 8);
    }
}

/* v, a two's-complement difference, written if it fits a signed 32-bit field. */
static int tj_put32(tj_elf *e, unsigned char *at, uint64_t v)
{
    if (v + UINT64_C(0x80000000) > UINT64_C(0xffffffff))
        return tj_refuse(e, "a 32-bit relocation out of range");
    int32_t w = (int32_t)(uint32_t)v;
    memcpy(at, &w, 4);
    return 0;
}

/* One relocation at P = where (in the section `target`). */
static int tj_relocate_one(tj_elf *e, size_t target, const Elf64_Rela *r)
{
    size_t sym = ELF64_R_SYM(r->r_info);
    uint32_t type = ELF64_R_TYPE(r->r_info);
    size_t width = type == R_X86_64_64 || type == R_X86_64_PC64 ? 8 : 4;
    if (sym == 0 || sym >= e->nsyms || !e->sym_addr[sym])
        return tj_refuse(e, "a relocation against an unknown symbol");
    if (!tj_within(r->r_offset, width, e->sec[target].sh_size))
        return tj_refuse(e, "a relocation out of its section");
    unsigned char *at = (unsigned char *)(e->sec_addr[target] + (uintptr_t)r->r_offset);
    /* unsigned, so that any addend wraps instead of overflowing; what must
     * fit 32 bits is checked after */
    uint64_t p = (uintptr_t)at, a = (uint64_t)r->r_addend, s = e->sym_addr[sym];
    Elf64_Sym es = tj_sym(e, sym);
    if (es.st_shndx == SHN_UNDEF) /* a runtime function: reached through its stub */
        s = e->plt + sym * TJ_PLT_BYTES;
    uint64_t got = e->got + sym * 8, v;
    switch (type) {
    case R_X86_64_PC32:
    case R_X86_64_PLT32:
        return tj_put32(e, at, s + a - p);
    case R_X86_64_GOTPCREL:
    case R_X86_64_GOTPCRELX:
    case R_X86_64_REX_GOTPCRELX:
        return tj_put32(e, at, got + a - p);
    case R_X86_64_64:
        v = e->sym_addr[sym] + a;
        memcpy(at, &v, 8);
        return 0;
    case R_X86_64_PC64:
        v = s + a - p;
        memcpy(at, &v, 8);
        return 0;
    default:
        return tj_refuse(e, "a relocation type it does not know");
    }
}

static int tj_relocate(tj_elf *e)
{
    for (size_t i = 0; i < e->nsec; i++) {
        const Elf64_Shdr *s = &e->sec[i];
        if (s->sh_type == SHT_REL)
            return tj_refuse(e, "REL relocations");
        if (s->sh_type != SHT_RELA || s->sh_info >= e->nsec || !e->sec_addr[s->sh_info])
            continue; /* relocations of a section not loaded (debug info) */
        if (s->sh_entsize != sizeof(Elf64_Rela) || s->sh_link != e->symtab)
            return tj_refuse(e, "a malformed relocation section");
        for (size_t k = 0; k < s->sh_size / sizeof(Elf64_Rela); k++) {
            Elf64_Rela r;
            memcpy(&r, e->bytes + s->sh_offset + k * sizeof r, sizeof r);
            if (tj_relocate_one(e, s->sh_info, &r) != 0)
                return -1;
        }
    }
    return 0;
}

/* The functions the object defines, by name. */
static int tj_collect(tj_elf *e, tj_objload *l)
{
    l->fns = tj_calloc(e->nsyms ? e->nsyms : 1, sizeof *l->fns);
    if (!l->fns)
        return tj_refuse(e, "out of memory");
    for (size_t i = 1; i < e->nsyms; i++) {
        Elf64_Sym s = tj_sym(e, i);
        const char *name = tj_sym_name(e, &s);
        if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_shndx == SHN_UNDEF || !name ||
            !e->sym_addr[i] || strlen(name) >= TJ_NAME_MAX)
            continue;
        snprintf(l->fns[l->nfns].name, TJ_NAME_MAX, "%s", name);
        l->fns[l->nfns++].address = (void *)e->sym_addr[i];
    }
    return 0;
}

static int tj_protect(tj_elf *e)
{
    if (mprotect(e->base, e->rx_size, PROT_READ | PROT_EXEC) != 0 ||
        (e->size > e->rx_size && mprotect(e->base + e->rx_size, e->size - e->rx_size, PROT_READ) != 0))
        return tj_refuse(e, "mprotect failed");
    return 0;
}

tj_objload *tj_objload_load(const void *obj, size_t len, const tj_objload_symbol *runtime,
                            size_t nruntime, char *why, size_t why_len)
{
    tj_elf e = {.bytes = obj, .len = len, .why = why, .why_len = why_len};
    tj_objload *l = tj_calloc(1, sizeof *l);
    int rc = l ? 0 : tj_refuse(&e, "out of memory");
    if (rc == 0)
        rc = tj_read_headers(&e);
    if (rc == 0)
        rc = tj_find_symtab(&e);
    if (rc == 0)
        rc = tj_layout(&e);
    if (rc == 0)
        rc = tj_map(&e);
    if (rc == 0) {
        tj_resolve(&e, runtime, nruntime);
        rc = tj_relocate(&e);
    }
    if (rc == 0)
        rc = tj_collect(&e, l);
    if (rc == 0)
        rc = tj_protect(&e);
    if (l) {
        l->base = e.base;
        l->size = e.size;
        l->text_bytes = e.text_bytes;
    }
    tj_free(e.sec);
    tj_free(e.sec_addr);
    tj_free(e.sym_addr);
    if (rc != 0) {
        tj_objload_free(l);
        return NULL;
    }
    return l;
}

void *tj_objload_find(const tj_objload *l, const char *name)
{
    for (size_t i = 0; i < l->nfns; i++)
        if (strcmp(l->fns[i].name, name) == 0)
            return l->fns[i].address;
    return NULL;
}

size_t tj_objload_text_bytes(const tj_objload *l)
{
    return l->text_bytes;
}

void tj_objload_free(tj_objload *l)
{
    if (!l)
        return;
    if (l->base)
        munmap(l->base, l->size);
    tj_free(l->fns);
    tj_free(l);
}
