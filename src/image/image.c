/* SPDX-License-Identifier: BSD-2-Clause */
/* Program image core: segments, raw regions, byte reads and instruction fetch. */
#include "image_internal.h"

#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

tk_status tk_image_new(tk_image_arch arch, unsigned xlen, tk_image **out)
{
    tk_image *img;

    if (!out)
        return TK_ERR_INVALID;
    *out = NULL;
    if (arch > TK_ARCH_AARCH64 || (xlen != 32 && xlen != 64))
        return TK_ERR_INVALID;
    img = calloc(1, sizeof(*img));
    if (!img)
        return TK_ERR_NOMEM;
    img->arch = arch;
    img->xlen = xlen;
    atomic_init(&img->last_seg, 0);
    *out = img;
    return TK_OK;
}

/* Regions must be added before blocks are built: a cached block that stopped for lack
 * of code would otherwise be stale. */
tk_status tk_image_add_region(tk_image *img, uint64_t vaddr, const void *data, size_t len)
{
    tk_segment *segs;
    uint8_t **owned, *copy;

    if (!img || (!data && len) || len == 0 || vaddr + len - 1 < vaddr)
        return TK_ERR_INVALID;
    if (img->blocks.nblocks)
        return TK_ERR_STATE;
    segs = realloc(img->segs, (img->nseg + 1) * sizeof(*segs));
    if (!segs)
        return TK_ERR_NOMEM;
    img->segs = segs;
    owned = realloc(img->owned, (img->nseg + 1) * sizeof(*owned));
    if (!owned)
        return TK_ERR_NOMEM;
    if (!img->owned) /* the ELF's own segments (if any) are not owned copies */
        memset(owned, 0, img->nseg * sizeof(*owned));
    img->owned = owned;
    copy = malloc(len);
    if (!copy)
        return TK_ERR_NOMEM;
    memcpy(copy, data, len);
    owned[img->nseg] = copy;
    segs[img->nseg] = (tk_segment){
        .vaddr = vaddr, .filesz = len, .memsz = len, .data = copy, .exec = true, .write = false};
    img->nseg++;
    return TK_OK;
}

void tk_image_free(tk_image *img)
{
    if (!img)
        return;
    tk_image_free_blocks(img);
    tk_image_free_lines(img);
    tk_image_free_symbols(img);
    if (img->elf)
        elf_end(img->elf);
    if (img->map)
        munmap(img->map, img->map_len);
    if (img->owned) {
        for (size_t i = 0; i < img->nseg; i++)
            free(img->owned[i]);
        free(img->owned);
    }
    free(img->segs);
    free(img->path);
    free(img);
}

tk_image_arch tk_image_get_arch(const tk_image *img)
{
    return img->arch;
}

unsigned tk_image_xlen(const tk_image *img)
{
    return img->xlen;
}

uint64_t tk_image_entry(const tk_image *img)
{
    return img->entry;
}

const char *tk_image_path(const tk_image *img)
{
    return img->path ? img->path : "";
}

size_t tk_image_segment_count(const tk_image *img)
{
    return img->nseg;
}

const tk_segment *tk_image_segment(const tk_image *img, size_t i)
{
    return i < img->nseg ? &img->segs[i] : NULL;
}

static inline bool seg_has(const tk_segment *s, uint64_t addr, uint64_t n)
{
    return addr >= s->vaddr && addr - s->vaddr < s->filesz && s->filesz - (addr - s->vaddr) >= n;
}

const tk_segment *tk_image_find_segment(const tk_image *img, uint64_t addr, uint64_t n)
{
    size_t last = atomic_load_explicit(&((tk_image *)img)->last_seg, memory_order_relaxed);

    if (last < img->nseg && seg_has(&img->segs[last], addr, n))
        return &img->segs[last];
    for (size_t i = 0; i < img->nseg; i++) {
        if (seg_has(&img->segs[i], addr, n)) {
            atomic_store_explicit(&((tk_image *)img)->last_seg, i, memory_order_relaxed);
            return &img->segs[i];
        }
    }
    return NULL;
}

tk_status tk_image_read(const tk_image *img, uint64_t addr, void *buf, size_t n)
{
    uint8_t *dst = buf;

    if (!img || (!buf && n))
        return TK_ERR_INVALID;
    while (n) {
        const tk_segment *s = NULL;
        uint64_t off, avail;

        /* Bytes past filesz but inside memsz read as zero (bss). */
        for (size_t i = 0; i < img->nseg; i++) {
            const tk_segment *c = &img->segs[i];
            if (addr >= c->vaddr && addr - c->vaddr < c->memsz) {
                s = c;
                break;
            }
        }
        if (!s)
            return TK_ERR_NO_CODE;
        off = addr - s->vaddr;
        avail = s->memsz - off;
        if (avail > n)
            avail = n;
        for (uint64_t k = 0; k < avail; k++)
            dst[k] = off + k < s->filesz ? s->data[off + k] : 0;
        dst += avail;
        addr += avail;
        n -= avail;
    }
    return TK_OK;
}

tk_status tk_image_fetch(const tk_image *img, uint64_t pc, tk_rv_insn *out)
{
    const tk_segment *s;
    const uint8_t *p;
    uint32_t bits;

    if (img->arch != TK_ARCH_RISCV)
        return TK_ERR_UNSUPPORTED;
    /* Fast path inline: the segment of the previous fetch. */
    s = img->nseg
            ? &img->segs[atomic_load_explicit(&((tk_image *)img)->last_seg, memory_order_relaxed)]
            : NULL;
    if (!s || !seg_has(s, pc, 2)) {
        s = tk_image_find_segment(img, pc, 2);
        if (!s)
            return TK_ERR_NO_CODE;
    }
    p = s->data + (pc - s->vaddr);
    bits = (uint32_t)p[0] | (uint32_t)p[1] << 8;
    if ((bits & 3u) == 3u) {
        if (s->filesz - (pc - s->vaddr) >= 4) {
            bits |= (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        } else {
            /* The upper half lies in another segment (or nowhere). */
            uint8_t hi[2];
            if (tk_image_read(img, pc + 2, hi, 2) != TK_OK)
                return TK_ERR_NO_CODE;
            bits |= (uint32_t)hi[0] << 16 | (uint32_t)hi[1] << 24;
        }
    }
    return tk_rv_decode(bits, img->xlen, out);
}
