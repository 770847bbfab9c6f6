/* SPDX-License-Identifier: BSD-2-Clause */
/* The program image's private state, shared by the image modules (open, fetch, blocks,
 * symbols, source lines). */
#ifndef TK_IMAGE_INTERNAL_H
#define TK_IMAGE_INTERNAL_H

#include <stdatomic.h>

#include "tracekit/image.h"

typedef struct Elf Elf;
typedef struct Dwarf Dwarf;

/* One DWARF line-table row: a half-open range starts here (end_seq rows close one). */
typedef struct tk_line_row {
    uint64_t addr;
    const char *file;
    int line;
    bool end_seq;
} tk_line_row;

/* Basic-block cache: blocks live in fixed-size chunks so pointers handed out stay valid;
 * an open-addressing table maps start address -> block index. */
#define TK_BLOCK_CHUNK 1024u

typedef struct tk_block_slot {
    uint64_t start;
    tk_bblock *block; /* NULL: empty slot */
} tk_block_slot;

typedef struct tk_block_cache {
    tk_bblock **chunks;
    size_t nchunks;
    uint32_t nblocks;
    tk_block_slot *slots; /* key and value side by side: one cache line per probe */
    uint32_t mask;        /* capacity - 1 (capacity is a power of two) */
    uint32_t used;
} tk_block_cache;

struct tk_image {
    tk_image_arch arch;
    unsigned xlen;
    uint64_t entry;
    char *path;

    /* The mapped ELF (NULL for images built from regions). */
    void *map;
    size_t map_len;
    Elf *elf;

    tk_segment *segs;
    uint8_t **owned; /* copies made by tk_image_add_region, one per segment (or NULL) */
    size_t nseg;
    _Atomic size_t last_seg; /* fetch fast path: the segment of the previous hit */

    tk_symbol *syms; /* sorted by address */
    size_t nsym;
    uint32_t *funcs; /* indices into syms of code symbols, by address */
    size_t nfunc;
    tk_symbol *byname; /* every named symbol, sorted by name (lookup) */
    size_t nbyname;
    char *strpool; /* names of syms and byname */

    tk_block_cache blocks;

    /* Source lines (built on first use). */
    Dwarf *dwarf;
    bool lines_built;
    tk_line_row *lines;
    size_t nlines;
};

/* Find the segment holding [addr, addr + n) within its file bytes; NULL if none. */
const tk_segment *tk_image_find_segment(const tk_image *img, uint64_t addr, uint64_t n);

tk_status tk_image_load_symbols(tk_image *img, tk_diag *diag);
/* symbol_extent.c: RISC-V function sizes that stop a short gap before the next symbol, made
 * to cover the gap (after syms and funcs are sorted). */
void tk_image_fix_symbol_extents(tk_image *img);
void tk_image_free_symbols(tk_image *img);
void tk_image_free_blocks(tk_image *img);
void tk_image_free_lines(tk_image *img);

#endif
