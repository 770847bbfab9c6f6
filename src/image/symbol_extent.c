/* SPDX-License-Identifier: BSD-2-Clause */
/* Function sizes that stop short of the function's code. RISC-V toolchains emit such sizes:
 * in every riscv-ref program one function's st_size ends 4 bytes early (linker relaxation
 * moved the code after the size was fixed): dhrystone's Proc_4 stops before its ret, mm's
 * printstr before a branch and a `j .` that its own jumps reach. Taken at its word, the
 * size leaves those instructions to no function, and a profile shows a call-less [unknown]
 * frame under main for every call of Proc_4. So a sized function whose stated end leaves a
 * short gap before the next symbol covers the gap: such a gap is that stray code or
 * alignment padding after the function. A longer stretch without a symbol is code of its
 * own (a static function whose symbol was stripped) and stays outside. */
#include "image_internal.h"

/* The longest gap taken in: 16-byte function alignment pads at most 14 bytes. */
enum { TK_EXTENT_SLACK = 16 };

void tk_image_fix_symbol_extents(tk_image *img)
{
    if (img->arch != TK_ARCH_RISCV)
        return;
    for (size_t k = 0; k < img->nfunc; k++) {
        tk_symbol *s = &img->syms[img->funcs[k]];
        /* Labels without size already cover up to the next code symbol. */
        if (!s->size)
            continue;
        /* The next symbol of any kind: code never runs on into an object. */
        size_t j = img->funcs[k] + 1;
        while (j < img->nsym && img->syms[j].addr <= s->addr)
            j++;
        if (j == img->nsym)
            continue;
        const uint64_t end = s->addr + s->size, next = img->syms[j].addr;
        if (end > s->addr && end < next && next - end <= TK_EXTENT_SLACK)
            s->size = next - s->addr;
    }
}
