/* SPDX-License-Identifier: BSD-2-Clause */
/* Program image: loadable segments and symbols of an ELF (libelf), instruction fetch by
 * address, a basic-block cache the flow decoders walk, and source lines (libdw). */
#ifndef TRACEKIT_IMAGE_H
#define TRACEKIT_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "riscv.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_image tk_image;

typedef enum tk_image_arch {
    TK_ARCH_RISCV = 0,
    TK_ARCH_ARM = 1, /* A32/T32 */
    TK_ARCH_AARCH64 = 2,
} tk_image_arch;

typedef struct tk_segment {
    uint64_t vaddr;
    uint64_t filesz; /* bytes present in data */
    uint64_t memsz;  /* bytes in memory (rest zero) */
    const uint8_t *data;
    bool exec;
    bool write;
} tk_segment;

typedef struct tk_symbol {
    const char *name;
    uint64_t addr;
    uint64_t size;
    bool is_func;
} tk_symbol;

/* A basic block: straight-line instructions from start up to and including the first
 * control-flow instruction (or until code ends). term is the last instruction decoded;
 * prev is the instruction before it (for sequentially inferable jumps; valid if ninsn > 1). */
typedef struct tk_bblock {
    uint64_t start;
    uint64_t last; /* address of the last instruction */
    uint32_t ninsn;
    uint32_t bytes;
    tk_rv_insn term;
    tk_rv_insn prev;
    tk_status status; /* TK_OK, or why the block stopped before a control-flow instruction:
                       * the fetch status of the next instruction (TK_ERR_NO_CODE,
                       * TK_ERR_BAD_INSN, TK_ERR_UNSUPPORTED for 48/64-bit encodings), or
                       * TK_ERR_OVERFLOW after 16 MiB of straight-line code */
    /* Precomputed once when the block is built, so a flow decoder follows whole blocks
     * without looking at single instructions: */
    uint64_t fall;   /* address after the block: last + term.len (wrapped to xlen) */
    uint64_t target; /* static target of term: taken branch, jal, jalr with rs1 = x0 (wrapped
                      * to xlen); 0 when term has none */
    uint32_t id;     /* index of the block in the cache (0, 1, 2 ... in build order): lets
                      * sinks keep per-block data in a plain array */
    uint8_t end;     /* tk_rv_range_end(&term) */
    /* Successor blocks already looked up through tk_image_block_next(): [0] at fall, [1] at
     * target. NULL until then. */
    const struct tk_bblock *link[2];
} tk_bblock;

/* Open an ELF executable. Errors: TK_ERR_IO (cannot open/map), TK_ERR_FORMAT (not an ELF,
 * truncated, no loadable segment), TK_ERR_NOT_RISCV (names the machine found in diag).
 * tk_image_open_elf_any also accepts ARM and AArch64 ELFs (other machines:
 * TK_ERR_UNSUPPORTED). The whole file is mapped; the image owns it. */
tk_status tk_image_open_elf(const char *path, tk_image **out, tk_diag *diag);
tk_status tk_image_open_elf_any(const char *path, tk_image **out, tk_diag *diag);
/* An empty image to which raw memory regions can be added (used for CoreSight snapshots). */
tk_status tk_image_new(tk_image_arch arch, unsigned xlen, tk_image **out);
/* Add a copy of bytes at vaddr as an executable region. Regions must be added before the
 * first tk_image_block call (TK_ERR_STATE afterwards: cached blocks could be stale). */
tk_status tk_image_add_region(tk_image *img, uint64_t vaddr, const void *data, size_t len);
void tk_image_free(tk_image *img);

tk_image_arch tk_image_get_arch(const tk_image *img);
unsigned tk_image_xlen(const tk_image *img); /* 32 or 64 */
uint64_t tk_image_entry(const tk_image *img);
const char *tk_image_path(const tk_image *img);
size_t tk_image_segment_count(const tk_image *img);
const tk_segment *tk_image_segment(const tk_image *img, size_t i);

/* Copy n bytes at addr; TK_ERR_NO_CODE if any byte is outside the loaded segments. */
tk_status tk_image_read(const tk_image *img, uint64_t addr, void *buf, size_t n);
/* Fetch and decode the instruction at pc: the statuses of tk_rv_decode, TK_ERR_NO_CODE
 * outside the segments' file bytes, TK_ERR_UNSUPPORTED for a non-RISC-V image. Safe to call
 * from several threads on one image. */
tk_status tk_image_fetch(const tk_image *img, uint64_t pc, tk_rv_insn *out);
/* The basic block starting at pc, from the cache (built on first use; later calls do one
 * hash probe and no allocation). The pointer stays valid until the image is freed. If even
 * the first instruction cannot be fetched, its status is returned and no block is made.
 * Not thread-safe for one image: use one image per thread. */
tk_status tk_image_block(tk_image *img, uint64_t pc, const tk_bblock **out);
/* The block at b's fall-through (which = 0) or static target (which = 1), as tk_image_block
 * would give it, remembered in b->link[which] so the next call is one load. The inline
 * tk_image_block_succ() is the fast path. */
tk_status tk_image_block_next(tk_image *img, const tk_bblock *b, unsigned which,
                              const tk_bblock **out);
static inline tk_status tk_image_block_succ(tk_image *img, const tk_bblock *b, unsigned which,
                                            const tk_bblock **out)
{
    if (b->link[which]) {
        *out = b->link[which];
        return TK_OK;
    }
    return tk_image_block_next(img, b, which, out);
}
/* Number of blocks in the cache so far (ids are below it). */
uint32_t tk_image_block_count(const tk_image *img);
/* Bytes of executable code (file bytes of executable segments): a bound on the number of
 * distinct instructions and blocks the program has. */
uint64_t tk_image_code_bytes(const tk_image *img);

/* Symbols sorted by address: functions, objects with a size, and code labels (assembly
 * symbols without type in executable sections, is_func with size 0). */
size_t tk_image_symbol_count(const tk_image *img);
const tk_symbol *tk_image_symbol(const tk_image *img, size_t i);
/* The function symbol covering addr, or NULL; *offset = addr - symbol start. A code label
 * without size covers up to the next code symbol. */
const tk_symbol *tk_image_symbolize(const tk_image *img, uint64_t addr, uint64_t *offset);
/* Address and size of a named symbol (any defined symbol: functions, objects, labels);
 * TK_END if there is none. */
tk_status tk_image_lookup(const tk_image *img, const char *name, uint64_t *addr, uint64_t *size);

/* Source line for an address from DWARF (libdw); TK_END if none. *file is owned by img. */
tk_status tk_image_source_line(tk_image *img, uint64_t addr, const char **file, int *line);

#ifdef __cplusplus
}
#endif
#endif
