/* SPDX-License-Identifier: BSD-2-Clause */
/* The code view over a RISC-V program image: instruction lengths, conditional branches and
 * direct targets from the decoder in isa/riscv, function symbols from the ELF. */
#include "tracekit/analysis.h"
#include "tracekit/image.h"
#include "tracekit/riscv.h"

static tk_status image_insn(void *ctx, uint64_t addr, tk_code_insn *out)
{
    tk_image *img = ctx;
    tk_rv_insn in;
    tk_status st = tk_image_fetch(img, addr, &in);
    if (st != TK_OK && st != TK_ERR_BAD_INSN)
        return st;
    /* An unknown encoding still has a length: count it, it is not control flow. */
    if (in.len != 2 && in.len != 4)
        return TK_ERR_BAD_INSN;
    out->len = in.len;
    out->cond_branch = in.cf == TK_RV_CF_BRANCH;
    out->target = 0;
    if (in.cf == TK_RV_CF_BRANCH || in.cf == TK_RV_CF_JAL) {
        uint64_t t = addr + (uint64_t)in.imm;
        if (tk_image_xlen(img) == 32)
            t &= 0xffffffffu;
        out->target = t;
    }
    return TK_OK;
}

static const tk_symbol *image_symbolize(void *ctx, uint64_t addr, uint64_t *offset)
{
    return tk_image_symbolize(ctx, addr, offset);
}

void tk_code_view_from_image(tk_image *img, tk_code_view *out)
{
    out->ctx = img;
    out->insn = image_insn;
    out->symbolize = image_symbolize;
}
