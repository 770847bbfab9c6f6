/* SPDX-License-Identifier: BSD-2-Clause */
/* Program image: ELF loading, symbols, fetch and basic blocks checked against binutils
 * (objdump/nm) on the reference ELFs; error paths; raw-region images. */
#include "testutil.h"

#include <dirent.h>
#include <unistd.h>

#include "isa/objdump_util.h"
#include "tracekit/image.h"

static char *ref(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "riscv-ref/%s", name);
    return tk_test_data_path(rel);
}

static tk_image *open_ref(const char *name)
{
    char *p = ref(name);
    tk_image *img = NULL;
    tk_diag d;
    tk_diag_clear(&d);
    if (tk_image_open_elf(p, &img, &d) != TK_OK)
        fprintf(stderr, "%s: %s\n", p, d.message);
    free(p);
    assert_non_null(img);
    return img;
}

/* Entry points and ISA from riscv-ref/README.md. */
static void test_open_all(void **state)
{
    static const struct {
        const char *name;
        unsigned xlen;
        uint64_t entry;
    } progs[] = {
        {"dhrystone.riscv", 64, 0x80000000},
        {"median.riscv", 64, 0x80000000},
        {"mm.riscv", 64, 0x80000000},
        {"multiply.riscv", 64, 0x80000000},
        {"qsort.riscv", 64, 0x80000000},
        {"rsort.riscv", 64, 0x80000000},
        {"spmv.riscv", 64, 0x80000000},
        {"towers.riscv", 64, 0x80000000},
        {"vvadd.riscv", 64, 0x80000000},
        {"coremark.riscv", 64, 0x80000000},
        {"br_j_asm.riscv", 64, 0x80000040},
        {"embench-crc32.riscv", 32, 0x20010000},
        {"embench-matmult-int.riscv", 32, 0x20010000},
        {"embench-nettle-sha256.riscv", 32, 0x20010000},
        {"test_discon_branch_exception.riscv", 64, 0x80000000},
    };
    (void)state;
    for (size_t k = 0; k < sizeof(progs) / sizeof(progs[0]); k++) {
        tk_image *img = open_ref(progs[k].name);
        uint64_t a, sz;
        tk_rv_insn i;

        assert_int_equal(tk_image_get_arch(img), TK_ARCH_RISCV);
        assert_int_equal(tk_image_xlen(img), progs[k].xlen);
        assert_int_equal(tk_image_entry(img), progs[k].entry);
        assert_true(tk_image_segment_count(img) >= 1);
        assert_non_null(strstr(tk_image_path(img), progs[k].name));
        assert_int_equal(tk_image_fetch(img, tk_image_entry(img), &i), TK_OK);
        /* every program talks to the host through tohost */
        assert_int_equal(tk_image_lookup(img, "tohost", &a, &sz), TK_OK);
        assert_int_equal(tk_image_lookup(img, "no_such_symbol_xyz", &a, &sz), TK_END);
        tk_image_free(img);
    }
}

/* Every defined symbol nm prints is found by name at nm's address; every sized function
 * symbolises from its first to its last byte. */
static void check_symbols(const char *name, unsigned long *nsyms, unsigned long *nfuncs)
{
    char *p = ref(name), cmd[1200], line[512];
    tk_image *img = open_ref(name);
    FILE *f;

    snprintf(cmd, sizeof(cmd), "riscv64-unknown-elf-nm -S --defined-only '%s'", p);
    f = popen(cmd, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        char a[256], b[256], c[256], d[256];
        int k = sscanf(line, "%255s %255s %255s %255s", a, b, c, d);
        uint64_t addr = strtoull(a, NULL, 16), size = 0, got, gsize;
        const char *sym;
        char type;
        if (k == 4) {
            size = strtoull(b, NULL, 16);
            type = c[0];
            sym = d;
        } else if (k == 3) {
            type = b[0];
            sym = c;
        } else {
            continue;
        }
        if (sym[0] == '$' || !strncmp(sym, ".L", 2) || type == 'a' || type == 'A')
            continue;
        if (tk_image_lookup(img, sym, &got, &gsize) != TK_OK)
            fprintf(stderr, "%s: %s (%c) not found\n", name, sym, type);
        assert_int_equal(tk_image_lookup(img, sym, &got, &gsize), TK_OK);
        /* names can repeat (static functions); then any one of them may be found */
        if (got != addr)
            continue;
        (*nsyms)++;
        if ((type == 'T' || type == 't') && size > 0) {
            uint64_t off;
            const tk_symbol *s = tk_image_symbolize(img, addr, &off);
            assert_non_null(s);
            assert_int_equal(s->addr, addr);
            assert_int_equal(off, 0);
            s = tk_image_symbolize(img, addr + size - 1, &off);
            assert_non_null(s);
            assert_int_equal(s->addr, addr);
            assert_int_equal(off, size - 1);
            (*nfuncs)++;
        }
    }
    pclose(f);
    /* the address list is sorted */
    for (size_t i = 1; i < tk_image_symbol_count(img); i++)
        assert_true(tk_image_symbol(img, i - 1)->addr <= tk_image_symbol(img, i)->addr);
    tk_image_free(img);
    free(p);
}

static void test_symbols(void **state)
{
    static const char *const names[] = {"coremark.riscv", "dhrystone.riscv", "embench-crc32.riscv",
                                        "br_j_asm.riscv"};
    unsigned long nsyms = 0, nfuncs = 0;
    tk_image *img;
    uint64_t a, sz, off;
    const tk_symbol *s;
    (void)state;

    if (system("riscv64-unknown-elf-nm --version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "riscv64-unknown-elf-nm absent: nm comparison skipped\n");
    } else {
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
            check_symbols(names[k], &nsyms, &nfuncs);
        fprintf(stderr, "%lu symbols found by name, %lu functions symbolised\n", nsyms, nfuncs);
        assert_true(nsyms > 100 && nfuncs > 50);
    }
    /* main of coremark (readelf: 0x80005e70, 1652 bytes) */
    img = open_ref("coremark.riscv");
    assert_int_equal(tk_image_lookup(img, "main", &a, &sz), TK_OK);
    assert_int_equal(a, 0x80005e70);
    assert_int_equal(sz, 1652);
    s = tk_image_symbolize(img, a + 100, &off);
    assert_non_null(s);
    assert_string_equal(s->name, "main");
    assert_int_equal(off, 100);
    /* _start is an assembly label without size: it covers up to the next code symbol */
    s = tk_image_symbolize(img, 0x80000010, &off);
    assert_non_null(s);
    assert_string_equal(s->name, "_start");
    assert_null(tk_image_symbolize(img, 0x1000, &off));
    tk_image_free(img);
}

/* RISC-V toolchains leave one function per riscv-ref program with a size 4 bytes short of
 * its code (linker relaxation): symbolisation runs such a function on over the short gap to
 * the next symbol. The by-name lookup keeps the ELF's size. */
static void test_short_sizes(void **state)
{
    uint64_t a, sz, off;
    const tk_symbol *s;
    (void)state;
    tk_image *img = open_ref("dhrystone.riscv");
    /* Proc_4: 0x80001276, st_size 0x28; its sb at 0x8000129c runs past that, and its ret
     * at 0x800012a0 follows; Proc_5 starts at 0x800012a2. */
    assert_int_equal(tk_image_lookup(img, "Proc_4", &a, &sz), TK_OK);
    assert_int_equal(a, 0x80001276);
    assert_int_equal(sz, 0x28);
    s = tk_image_symbolize(img, 0x800012a0, &off);
    assert_non_null(s);
    assert_string_equal(s->name, "Proc_4");
    assert_int_equal(off, 0x2a);
    assert_int_equal(s->size, 0x2c);
    assert_string_equal(tk_image_symbolize(img, 0x800012a2, &off)->name, "Proc_5");
    /* abort: its closing `j .` at 0x800016d0, past st_size 0xa */
    s = tk_image_symbolize(img, 0x800016d0, &off);
    assert_non_null(s);
    assert_string_equal(s->name, "abort");
    assert_int_equal(s->size, 0xe);
    tk_image_free(img);

    /* mm's printstr (st_size 0x5a) jumps to a beqz and a `j .` after its stated end, which
     * are followed by a ret up to printhex (0x80003d70). */
    img = open_ref("mm.riscv");
    s = tk_image_symbolize(img, 0x80003d6a, &off);
    assert_non_null(s);
    assert_string_equal(s->name, "printstr");
    assert_int_equal(s->size, 0x60);
    assert_string_equal(tk_image_symbolize(img, 0x80003d70, &off)->name, "printhex");
    tk_image_free(img);

    /* Everywhere: a function covers at least its stated size, and grows only over a gap of
     * at most 16 bytes, up to the next symbol. */
    static const char *const progs[] = {"coremark.riscv", "dhrystone.riscv",     "mm.riscv",
                                        "towers.riscv",   "embench-crc32.riscv", "qsort.riscv"};
    for (size_t k = 0; k < sizeof(progs) / sizeof(progs[0]); k++) {
        img = open_ref(progs[k]);
        size_t grown = 0;
        for (size_t i = 0; i < tk_image_symbol_count(img); i++) {
            const tk_symbol *f = tk_image_symbol(img, i);
            if (!f->is_func || !f->size)
                continue;
            uint64_t addr, stated;
            assert_int_equal(tk_image_lookup(img, f->name, &addr, &stated), TK_OK);
            if (addr != f->addr)
                continue; /* a static function whose name repeats */
            assert_true(f->size >= stated);
            for (size_t j = i + 1; j < tk_image_symbol_count(img); j++)
                if (tk_image_symbol(img, j)->addr > f->addr) {
                    if (f->size > stated) {
                        assert_int_equal(f->addr + f->size, tk_image_symbol(img, j)->addr);
                        assert_true(f->size - stated <= 16);
                    }
                    break;
                }
            grown += f->size > stated;
        }
        /* one short size per program (nm: coremark has two) */
        assert_true(grown >= 1 && grown <= 2);
        tk_image_free(img);
    }
}

static bool in_set(const char *m, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(m, *set))
            return true;
    return false;
}

static const char *const cf_mnems[] = {"beq",    "bne",    "blt",    "bge",      "bltu",  "bgeu",
                                       "c.beqz", "c.bnez", "jal",    "c.j",      "c.jal", "jalr",
                                       "c.jr",   "c.jalr", "mret",   "sret",     "uret",  "dret",
                                       "mnret",  "ecall",  "ebreak", "c.ebreak", NULL};

/* Blocks against objdump: for every instruction address, the block built there must end
 * at the first control-flow mnemonic objdump lists from that address on. */
static void check_blocks(const char *path, unsigned long *nblocks, unsigned long *nfetch)
{
    tk_image *img = NULL;
    FILE *f = od_open(path);
    od_line *lines = NULL;
    size_t n = 0, cap = 0;
    unsigned xlen = 0;
    tk_diag d;

    assert_int_equal(tk_image_open_elf(path, &img, &d), TK_OK);
    assert_non_null(f);
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            lines = realloc(lines, cap * sizeof(*lines));
            assert_non_null(lines);
        }
        if (!od_next(f, &lines[n], &xlen))
            break;
        n++;
    }
    pclose(f);
    for (size_t k = 0; k < n; k++) {
        tk_rv_insn i;
        assert_int_equal(tk_image_fetch(img, lines[k].addr, &i) == TK_OK ||
                             lines[k].mnem[0] == '.' || !strcmp(lines[k].mnem, "c.unimp"),
                         1);
        assert_int_equal(i.raw, lines[k].raw);
        (*nfetch)++;
    }
    for (size_t k = 0; k < n; k++) {
        const tk_bblock *b, *b2;
        size_t e = k;
        tk_status st;

        if (lines[k].mnem[0] == '.' || !strcmp(lines[k].mnem, "c.unimp"))
            continue;
        /* expected end: first control-flow line, if objdump's listing stays contiguous */
        while (e < n && !in_set(lines[e].mnem, cf_mnems) && lines[e].mnem[0] != '.' &&
               strcmp(lines[e].mnem, "c.unimp") && e + 1 < n &&
               lines[e + 1].addr == lines[e].addr + lines[e].len)
            e++;
        st = tk_image_block(img, lines[k].addr, &b);
        assert_int_equal(st, TK_OK);
        assert_int_equal(b->start, lines[k].addr);
        if (e < n && in_set(lines[e].mnem, cf_mnems)) {
            assert_int_equal(b->status, TK_OK);
            assert_int_equal(b->last, lines[e].addr);
            assert_int_equal(b->ninsn, e - k + 1);
            assert_int_equal(b->bytes, lines[e].addr + lines[e].len - lines[k].addr);
            assert_int_equal(b->term.raw, lines[e].raw);
            assert_string_equal(tk_rv_op_name(b->term.op), lines[e].mnem);
            if (e > k)
                assert_int_equal(b->prev.raw, lines[e - 1].raw);
            (*nblocks)++;
        } else if (e < n && (lines[e].mnem[0] == '.' || !strcmp(lines[e].mnem, "c.unimp"))) {
            /* straight-line code running into something undecodable */
            assert_int_equal(b->status, TK_ERR_BAD_INSN);
            assert_int_equal(b->last + b->term.len, lines[e].addr);
        }
        /* cached: the same block comes back */
        assert_int_equal(tk_image_block(img, lines[k].addr, &b2), TK_OK);
        assert_ptr_equal(b, b2);
    }
    free(lines);
    tk_image_free(img);
}

static void test_blocks_vs_objdump(void **state)
{
    char *dir = tk_test_data_path("riscv-ref");
    DIR *dd = opendir(dir);
    struct dirent *e;
    unsigned long nblocks = 0, nfetch = 0;
    (void)state;

    if (!od_available()) {
        fprintf(stderr, "%s absent: block comparison skipped\n", TK_OBJDUMP);
        closedir(dd);
        free(dir);
        return;
    }
    assert_non_null(dd);
    while ((e = readdir(dd))) {
        size_t n = strlen(e->d_name);
        char path[1024];
        if (n < 7 || strcmp(e->d_name + n - 6, ".riscv"))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        check_blocks(path, &nblocks, &nfetch);
    }
    closedir(dd);
    free(dir);
    fprintf(stderr, "%lu fetches and %lu blocks match objdump\n", nfetch, nblocks);
    assert_true(nblocks > 10000);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void test_errors(void **state)
{
    tk_image *img = NULL;
    tk_diag d;
    char *p = ref("coremark.riscv");
    size_t len;
    uint8_t *elf = tk_test_read_file(p, &len);
    (void)state;

    assert_non_null(elf);
    tk_diag_clear(&d);
    assert_int_equal(tk_image_open_elf("/nonexistent/x.elf", &img, &d), TK_ERR_IO);
    assert_null(img);

    write_file("image_not_elf.txt", "hello, not an ELF\n", 18);
    assert_int_equal(tk_image_open_elf("image_not_elf.txt", &img, &d), TK_ERR_FORMAT);
    assert_non_null(strstr(d.message, "not an ELF"));
    write_file("image_empty.elf", "", 0);
    assert_int_equal(tk_image_open_elf("image_empty.elf", &img, &d), TK_ERR_FORMAT);

    /* cut inside the ELF header, then inside the first segment */
    write_file("image_trunc_hdr.elf", elf, 40);
    assert_int_equal(tk_image_open_elf("image_trunc_hdr.elf", &img, &d), TK_ERR_FORMAT);
    write_file("image_trunc_seg.elf", elf, 0x1100);
    assert_int_equal(tk_image_open_elf("image_trunc_seg.elf", &img, &d), TK_ERR_FORMAT);
    assert_non_null(strstr(d.message, "truncated"));
    assert_null(img);

    /* a host ELF is not RISC-V; the message names the machine */
    if (access("/bin/true", R_OK) == 0) {
        assert_int_equal(tk_image_open_elf("/bin/true", &img, &d), TK_ERR_NOT_RISCV);
        assert_non_null(strstr(d.message, "not RISC-V"));
#if defined(__x86_64__)
        assert_non_null(strstr(d.message, "x86-64"));
        assert_int_equal(tk_image_open_elf_any("/bin/true", &img, &d), TK_ERR_UNSUPPORTED);
#endif
        assert_null(img);
    }

    /* no code outside the segments */
    img = open_ref("coremark.riscv");
    {
        tk_rv_insn i;
        const tk_bblock *b;
        uint8_t buf[8];
        assert_int_equal(tk_image_fetch(img, 0x1000, &i), TK_ERR_NO_CODE);
        assert_int_equal(tk_image_block(img, 0x1000, &b), TK_ERR_NO_CODE);
        assert_int_equal(tk_image_read(img, 0x7ffffffc, buf, 8), TK_ERR_NO_CODE);
        /* bss reads as zeros (second segment: filesz 0x61c4, memsz 0x69c8) */
        memset(buf, 0xff, sizeof(buf));
        assert_int_equal(tk_image_read(img, 0x800071c4 + 0x10, buf, 8), TK_OK);
        for (int k = 0; k < 8; k++)
            assert_int_equal(buf[k], 0);
        assert_int_equal(tk_image_fetch(img, 0x800071c4 + 0x10, &i), TK_ERR_NO_CODE);
    }
    tk_image_free(img);
    free(elf);
    free(p);
}

/* A raw-memory image holding the code bytes of coremark's first segment behaves like the
 * ELF it came from. */
static void test_regions(void **state)
{
    tk_image *elf = open_ref("coremark.riscv"), *raw = NULL;
    const tk_segment *s = tk_image_segment(elf, 0);
    const tk_bblock *a, *b;
    uint8_t junk[4] = {0x13, 0, 0, 0};
    (void)state;

    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &raw), TK_OK);
    assert_int_equal(tk_image_add_region(raw, s->vaddr, s->data, s->filesz), TK_OK);
    assert_int_equal(tk_image_segment_count(raw), 1);
    assert_true(tk_image_segment(raw, 0)->exec);
    for (uint64_t pc = s->vaddr; pc < s->vaddr + s->filesz;) {
        tk_rv_insn x, y;
        assert_int_equal(tk_image_fetch(elf, pc, &x), tk_image_fetch(raw, pc, &y));
        assert_int_equal(x.raw, y.raw);
        if (tk_image_block(elf, pc, &a) == TK_OK) {
            assert_int_equal(tk_image_block(raw, pc, &b), TK_OK);
            /* the raw region ends where the first segment does */
            if (a->last < s->vaddr + s->filesz && b->status == TK_OK) {
                assert_int_equal(a->last, b->last);
                assert_int_equal(a->term.raw, b->term.raw);
            }
        }
        pc += x.len ? x.len : 2;
    }
    /* regions go in before blocks are built */
    assert_int_equal(tk_image_add_region(raw, 0x1000, junk, sizeof(junk)), TK_ERR_STATE);
    assert_int_equal(tk_image_add_region(raw, 0x1000, NULL, 4), TK_ERR_INVALID);
    tk_image_free(raw);

    /* a block that runs off the end of its region carries the status */
    {
        /* addi a0,a0,1 ; c.addi a0,1 ; (end) */
        static const uint8_t code[] = {0x13, 0x05, 0x15, 0x00, 0x05, 0x05};
        const tk_bblock *blk;
        assert_int_equal(tk_image_new(TK_ARCH_RISCV, 32, &raw), TK_OK);
        assert_int_equal(tk_image_add_region(raw, 0x100, code, sizeof(code)), TK_OK);
        assert_int_equal(tk_image_block(raw, 0x100, &blk), TK_OK);
        assert_int_equal(blk->status, TK_ERR_NO_CODE);
        assert_int_equal(blk->ninsn, 2);
        assert_int_equal(blk->bytes, 6);
        assert_int_equal(blk->last, 0x104);
        assert_int_equal(blk->term.op, TK_RV_OP_C_ADDI);
        assert_int_equal(blk->prev.op, TK_RV_OP_ADDI);
        tk_image_free(raw);
    }
    /* fetch is RISC-V only */
    {
        tk_rv_insn i;
        assert_int_equal(tk_image_new(TK_ARCH_AARCH64, 64, &raw), TK_OK);
        assert_int_equal(tk_image_add_region(raw, 0x100, junk, sizeof(junk)), TK_OK);
        assert_int_equal(tk_image_fetch(raw, 0x100, &i), TK_ERR_UNSUPPORTED);
        assert_int_equal(tk_image_read(raw, 0x100, junk, 4), TK_OK);
        tk_image_free(raw);
    }
    tk_image_free(elf);
}

/* A non-RISC-V ELF (AArch64 vDSO dumped in an OpenCSD snapshot): open_elf refuses it and
 * names the machine; open_elf_any loads it for the CoreSight decoder. */
static void test_other_arch(void **state)
{
    char *p = tk_test_data_path("opencsd/snapshots/juno-uname-001/vdso.bin");
    tk_image *img = NULL;
    tk_diag d;
    tk_rv_insn i;
    const tk_bblock *b;
    uint8_t word[4];
    (void)state;

    tk_diag_clear(&d);
    assert_int_equal(tk_image_open_elf(p, &img, &d), TK_ERR_NOT_RISCV);
    assert_non_null(strstr(d.message, "AArch64"));
    assert_null(img);
    assert_int_equal(tk_image_open_elf_any(p, &img, &d), TK_OK);
    assert_int_equal(tk_image_get_arch(img), TK_ARCH_AARCH64);
    assert_int_equal(tk_image_xlen(img), 64);
    assert_int_equal(tk_image_segment_count(img), 1);
    assert_true(tk_image_segment(img, 0)->exec);
    assert_int_equal(tk_image_segment(img, 0)->filesz, 0x718);
    assert_int_equal(tk_image_read(img, 0, word, 4), TK_OK);
    assert_memory_equal(word,
                        "\x7f"
                        "ELF",
                        4);
    assert_int_equal(tk_image_fetch(img, 0, &i), TK_ERR_UNSUPPORTED);
    assert_int_equal(tk_image_block(img, 0, &b), TK_ERR_UNSUPPORTED);
    tk_image_free(img);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_all),    cmocka_unit_test(test_symbols),
        cmocka_unit_test(test_short_sizes), cmocka_unit_test(test_blocks_vs_objdump),
        cmocka_unit_test(test_errors),      cmocka_unit_test(test_regions),
        cmocka_unit_test(test_other_arch),
    };
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
