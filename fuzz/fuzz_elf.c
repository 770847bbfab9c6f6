/* SPDX-License-Identifier: BSD-2-Clause */
/* ELF loading (image.h): the input is the file, handed over through a memfd. Properties:
 * opening never crashes; a loaded image's segments, symbols, instruction fetch, basic blocks
 * and source lines can all be queried without faults, and every segment's bytes are
 * readable (filesz <= memsz, data inside the mapping). */
#include "fuzz_common.h"

#include "tracekit/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(tk_image *img)
{
    size_t nseg = tk_image_segment_count(img);
    uint64_t sum = 0;
    for (size_t i = 0; i < nseg; i++) {
        const tk_segment *s = tk_image_segment(img, i);
        TK_FUZZ_CHECK(s != NULL && s->filesz <= s->memsz);
        for (uint64_t k = 0; k < s->filesz; k += 61)
            sum += s->data[k]; /* ASan flags bytes outside the mapping */
        if (s->filesz)
            sum += s->data[s->filesz - 1];
        /* fetch and block at the segment start and a few places inside it */
        for (uint64_t off = 0; off < s->memsz && off < 4096; off += 26) {
            tk_rv_insn insn;
            const tk_bblock *b = NULL;
            (void)tk_image_fetch(img, s->vaddr + off, &insn);
            if (tk_image_block(img, s->vaddr + off, &b) == TK_OK)
                TK_FUZZ_CHECK(b && b->start == s->vaddr + off && b->last >= b->start);
        }
        uint8_t buf[16];
        (void)tk_image_read(img, s->vaddr, buf, sizeof(buf));
        (void)tk_image_read(img, s->vaddr + s->memsz - 1, buf, sizeof(buf));
    }
    (void)sum;
    const tk_bblock *b = NULL;
    (void)tk_image_block(img, tk_image_entry(img), &b);
    size_t nsym = tk_image_symbol_count(img);
    for (size_t i = 0; i < nsym; i++) {
        const tk_symbol *sym = tk_image_symbol(img, i);
        TK_FUZZ_CHECK(sym && sym->name);
        TK_FUZZ_CHECK(i == 0 || tk_image_symbol(img, i - 1)->addr <= sym->addr);
        uint64_t off = 0, addr = 0, sz = 0;
        (void)tk_image_symbolize(img, sym->addr + sym->size / 2, &off);
        if (i < 64)
            TK_FUZZ_CHECK(tk_image_lookup(img, sym->name, &addr, &sz) == TK_OK);
    }
    const char *file = NULL;
    int line = 0;
    (void)tk_image_source_line(img, tk_image_entry(img), &file, &line);
    (void)tk_image_path(img);
    (void)tk_image_xlen(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = tk_fuzz_memfile(data, size, path, sizeof(path));
    if (fd < 0)
        return 0;
    tk_image *img = NULL;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st = tk_image_open_elf_any(path, &img, &diag);
    if (st == TK_OK) {
        walk(img);
        tk_image_free(img);
    } else {
        TK_FUZZ_CHECK(img == NULL && diag.message[0] != '\0');
    }
    close(fd);
    return 0;
}
