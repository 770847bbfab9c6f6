/* SPDX-License-Identifier: BSD-2-Clause */
/* Loading a program image (tk_image) into the simulation's RAM. */
#include <string.h>

#include "hart_internal.h"

tk_status tk_sim_load_image(tk_sim *s, const tk_image *img, tk_diag *diag)
{
    uint64_t to = 0, from = 0, size = 0;
    if (tk_image_xlen(img) != s->cfg.xlen)
        return tk_diag_set(diag, TK_ERR_CONFIG, "the ELF is RV%u but the hart model is RV%u",
                           tk_image_xlen(img), s->cfg.xlen);
    for (size_t i = 0; i < tk_image_segment_count(img); i++) {
        const tk_segment *seg = tk_image_segment(img, i);
        if (seg->memsz == 0)
            continue;
        if (!tk__sim_in_ram(s, seg->vaddr, seg->memsz)) {
            tk_diag_set(diag, TK_ERR_NO_CODE, "segment at 0x%llx (%llu bytes) lies outside RAM",
                        (unsigned long long)seg->vaddr, (unsigned long long)seg->memsz);
            if (diag)
                diag->address = seg->vaddr;
            return TK_ERR_NO_CODE;
        }
        {
            ram *r = tk__sim_ram(s, seg->vaddr, seg->memsz);
            tk_sim_write_mem(s, seg->vaddr, seg->data, seg->filesz);
            memset(r->mem + (seg->vaddr - r->base) + seg->filesz, 0, seg->memsz - seg->filesz);
        }
    }
    for (unsigned i = 0; i < s->nharts; i++)
        s->harts[i].pc = tk_image_entry(img);
    if (tk_image_lookup(img, "tohost", &to, &size) == TK_OK &&
        tk_image_lookup(img, "fromhost", &from, &size) == TK_OK)
        tk_sim_set_htif(s, to, from);
    return TK_OK;
}
