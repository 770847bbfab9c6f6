/* SPDX-License-Identifier: BSD-2-Clause */
#include "arm_branch.h"

#include <string.h>

static int64_t sext(uint64_t v, unsigned bits)
{
    uint64_t m = 1ull << (bits - 1);
    v &= (1ull << bits) - 1;
    return (int64_t)((v ^ m) - m);
}

/* A64 (DDI0487 C4.1.3 "Branches, Exception Generating and System instructions"). */
static void a64(uint64_t addr, uint32_t i, tk_arm_insn *o)
{
    o->size = 4;
    o->target_isa = TK_ARM_A64;
    if ((i & 0x7c000000) == 0x14000000) { /* B, BL: op [31], imm26 */
        o->kind = TK_ARM_BRANCH;
        o->link = i >> 31;
        o->target = addr + (uint64_t)(sext(i, 26) * 4);
    } else if ((i & 0xff000000) == 0x54000000) { /* B.cond, BC.cond */
        o->kind = TK_ARM_BRANCH;
        o->cond = 1;
        o->target = addr + (uint64_t)(sext(i >> 5, 19) * 4);
    } else if ((i & 0x7e000000) == 0x34000000) { /* CBZ, CBNZ */
        o->kind = TK_ARM_BRANCH;
        o->cond = 1;
        o->target = addr + (uint64_t)(sext(i >> 5, 19) * 4);
    } else if ((i & 0x7e000000) == 0x36000000) { /* TBZ, TBNZ */
        o->kind = TK_ARM_BRANCH;
        o->cond = 1;
        o->target = addr + (uint64_t)(sext(i >> 5, 14) * 4);
    } else if ((i & 0xffffffdf) == 0xd503205f || (i & 0xffffffc0) == 0xd5031000) {
        /* WFE, WFI (CRm=0, op2 = 2/3) and WFET, WFIT (FEAT_WFxT, op2 = 0/1 with Rd) */
        o->wfx = 1;
        o->target = addr + 4;
    } else if ((i & 0xffffffe0) == 0xd5233060) {
        /* TSTART (FEAT_TME): a P0 instruction in ETE; execution continues in line. */
        o->kind = TK_ARM_BRANCH;
        o->target = addr + 4;
    } else if ((i & 0xfffff0ff) == 0xd50330df) {
        /* ISB: a P0 instruction in ETMv4 (IHI0064 §4.1.1), executed as a taken branch to the
         * next instruction. */
        o->kind = TK_ARM_BRANCH;
        o->target = addr + 4;
    } else if ((i & 0xfe000000) == 0xd6000000) {
        /* Unconditional branch (register): opc [24:21] = BR 0, BLR 1, RET 2, ERET 4,
         * DRPS 5, and the pointer-authenticating forms BRA* 8, BLRA* 9 (RETA*, ERETA* keep
         * opc 2 and 4). */
        unsigned opc = (i >> 21) & 0xf;
        if (opc != 0 && opc != 1 && opc != 2 && opc != 4 && opc != 5 && opc != 8 && opc != 9)
            return; /* unallocated */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
        o->link = opc == 1 || opc == 9;
        o->ret = opc == 2;
        o->eret = opc == 4 || opc == 5;
    }
}

/* A32 (DDI0487 F4.1). Only instructions that can write the PC are branches here. */
static void a32(uint64_t addr, uint32_t i, tk_arm_insn *o)
{
    unsigned cond = i >> 28;
    o->size = 4;
    o->target_isa = TK_ARM_A32;
    if (cond == 0xf) {
        if ((i & 0xfffffff0) == 0xf57ff060) { /* ISB: P0 instruction, branch to next */
            o->kind = TK_ARM_BRANCH;
            o->target = addr + 4;
        } else if ((i & 0x0e000000) == 0x0a000000) { /* BLX (immediate): to T32 */
            o->kind = TK_ARM_BRANCH;
            o->link = 1;
            o->target_isa = TK_ARM_T32;
            o->target = (addr + 8 + (uint64_t)(sext(i, 24) * 4) + ((i >> 23) & 2)) & 0xffffffffu;
        }
        return;
    }
    o->cond = cond != 0xe;
    if ((i & 0x0e000000) == 0x0a000000) { /* B, BL */
        o->kind = TK_ARM_BRANCH;
        o->link = (i >> 24) & 1;
        o->target = (addr + 8 + (uint64_t)(sext(i, 24) * 4)) & 0xffffffffu;
    } else if ((i & 0x0ffffff0) == 0x012fff10 || (i & 0x0ffffff0) == 0x012fff30 ||
               (i & 0x0ffffff0) == 0x012fff20) { /* BX, BLX (register), BXJ */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
        o->link = (i & 0xf0) == 0x30;
        o->ret = (i & 0xf0) == 0x10 && (i & 0xf) == 14;
    } else if ((i & 0x0e108000) == 0x08108000) { /* LDM with the PC in the list */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
        o->ret = ((i >> 16) & 0xf) == 13;        /* POP / LDMIA sp! */
    } else if ((i & 0x0c50f000) == 0x0410f000) { /* LDR pc, [...] */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
        o->ret = ((i >> 16) & 0xf) == 13;
    } else if ((i & 0x0c00f000) == 0x0000f000 && (i & 0x0e000090) != 0x00000090 &&
               ((i >> 23) & 3) != 2) {
        /* Data processing with Rd = PC (MOV pc, lr; ADD pc, ...; SUBS pc, lr, #..). */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
        unsigned op = (i >> 21) & 0xf;
        o->ret = op == 0xd && (i & 0x0200000f) == 0xe && !((i >> 4) & 0xff);
        o->eret = (i >> 20) & 1;                 /* S bit: restores CPSR from SPSR */
    } else if ((i & 0x0fffffff) == 0x0160006e) { /* ERET */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
        o->eret = 1;
    }
}

/* T32 (DDI0487 F3.1): 16-bit unless bits [15:11] of the first halfword are 0b11101, 0b11110 or
 * 0b11111. */
static void t32(uint64_t addr, uint32_t hw1, uint32_t hw2, tk_arm_insn *o)
{
    o->target_isa = TK_ARM_T32;
    if ((hw1 & 0xf800) < 0xe800) {
        o->size = 2;
        if ((hw1 & 0xf000) == 0xd000 && ((hw1 >> 8) & 0xf) < 0xe) { /* B<c> T1 */
            o->kind = TK_ARM_BRANCH;
            o->cond = 1;
            o->target = (addr + 4 + (uint64_t)(sext(hw1, 8) * 2)) & 0xffffffffu;
        } else if ((hw1 & 0xf800) == 0xe000) { /* B T2 */
            o->kind = TK_ARM_BRANCH;
            o->target = (addr + 4 + (uint64_t)(sext(hw1, 11) * 2)) & 0xffffffffu;
        } else if ((hw1 & 0xf500) == 0xb100) { /* CBZ, CBNZ */
            o->kind = TK_ARM_BRANCH;
            o->cond = 1;
            o->target =
                (addr + 4 + (((hw1 >> 9) & 1) << 6) + (((hw1 >> 3) & 0x1f) << 1)) & 0xffffffffu;
        } else if ((hw1 & 0xff00) == 0x4700) { /* BX, BLX (register) */
            o->kind = TK_ARM_BRANCH;
            o->indirect = 1;
            o->link = (hw1 >> 7) & 1;
            o->ret = !o->link && ((hw1 >> 3) & 0xf) == 14;
        } else if ((hw1 & 0xff00) == 0xbd00) { /* POP {..., pc} */
            o->kind = TK_ARM_BRANCH;
            o->indirect = 1;
            o->ret = 1;
        } else if ((hw1 & 0xff87) == 0x4687 || (hw1 & 0xff87) == 0x4487) { /* MOV/ADD pc, Rm */
            o->kind = TK_ARM_BRANCH;
            o->indirect = 1;
        }
        return;
    }
    o->size = 4;
    if (hw1 == 0xf3bf && (hw2 & 0xfff0) == 0x8f60) { /* ISB: P0 instruction */
        o->kind = TK_ARM_BRANCH;
        o->target = addr + 4;
        return;
    }
    if ((hw1 & 0xffd0) == 0xf000 && (hw1 & 0xf) == 0xf && (hw2 & 0xf001) == 0xc001) {
        /* Armv8.1-M LE/LETP (loop end): a conditional backward branch to the loop start. */
        uint32_t imm = ((hw2 >> 1) & 0x3ff) << 2 | ((hw2 >> 11) & 1) << 1;
        o->kind = TK_ARM_BRANCH;
        o->cond = 1;
        o->target = (addr + 4 - imm) & 0xffffffffu;
        return;
    }
    if ((hw1 & 0xfff0) == 0xf040 && (hw2 & 0xf001) == 0xc001) {
        /* Armv8.1-M WLS/WLSTP: branches forward past the loop when it runs zero times. */
        uint32_t imm = ((hw2 >> 1) & 0x3ff) << 2 | ((hw2 >> 11) & 1) << 1;
        o->kind = TK_ARM_BRANCH;
        o->cond = 1;
        o->target = (addr + 4 + imm) & 0xffffffffu;
        return;
    }
    if ((hw1 & 0xf800) == 0xf000 && (hw2 & 0x8000)) {
        unsigned op1 = (hw2 >> 12) & 7;
        uint32_t s = (hw1 >> 10) & 1, j1 = (hw2 >> 13) & 1, j2 = (hw2 >> 11) & 1;
        if ((op1 & 5) == 0) { /* B<c>.W T3 (op1 = 0x0 / 0x2) */
            if (((hw1 >> 7) & 7) == 7)
                return; /* system/misc instructions */
            uint32_t imm =
                (s << 20) | (j2 << 19) | (j1 << 18) | ((hw1 & 0x3f) << 12) | ((hw2 & 0x7ff) << 1);
            o->kind = TK_ARM_BRANCH;
            o->cond = 1;
            o->target = (addr + 4 + (uint64_t)sext(imm, 21)) & 0xffffffffu;
            return;
        }
        if ((op1 & 5) == 4 && (hw2 & 1))
            return; /* BLX with H = 1: Armv8.1-M DLS / branch future (BF*), not a branch here */
        uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
        uint32_t imm =
            (s << 24) | (i1 << 23) | (i2 << 22) | ((hw1 & 0x3ff) << 12) | ((hw2 & 0x7ff) << 1);
        int64_t off = sext(imm, 25);
        o->kind = TK_ARM_BRANCH;
        if (op1 & 4) { /* BL (op1 1x1) or BLX (op1 1x0) */
            o->link = 1;
            if (!(op1 & 1)) {
                o->target_isa = TK_ARM_A32;
                o->target = ((addr + 4) & ~3ull) + (uint64_t)off;
            } else {
                o->target = addr + 4 + (uint64_t)off;
            }
        } else { /* B.W T4 */
            o->target = addr + 4 + (uint64_t)off;
        }
        o->target &= 0xffffffffu;
        return;
    }
    if ((hw1 & 0xfff0) == 0xe8d0 && (hw2 & 0xffe0) == 0xf000) { /* TBB, TBH */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
    } else if ((hw1 & 0xffd0) == 0xe890 && (hw2 & 0x8000)) { /* LDMIA/POP.W with pc */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
        o->ret = (hw1 & 0xf) == 13;
    } else if ((hw1 & 0xffd0) == 0xe910 && (hw2 & 0x8000)) { /* LDMDB with pc */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
    } else if ((hw1 & 0xfff0) == 0xf8d0 && (hw2 & 0xf000) == 0xf000) { /* LDR.W pc, [Rn,#] */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
    } else if ((hw1 & 0xfff0) == 0xf850 && (hw2 & 0xf000) == 0xf000) { /* LDR pc, [Rn,#-/!] */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
        o->ret = (hw1 & 0xf) == 13 && (hw2 & 0x0fff) == 0x0b04; /* POP.W {pc} */
    } else if (hw1 == 0xf3de && (hw2 & 0xff00) == 0x8f00) {     /* SUBS pc, lr, #imm (ERET) */
        o->kind = TK_ARM_BRANCH;
        o->indirect = 1;
        o->eret = 1;
    }
}

int tk_arm_classify(tk_arm_isa isa, uint64_t addr, const uint8_t *b, size_t avail, tk_arm_insn *o)
{
    memset(o, 0, sizeof(*o));
    if (isa == TK_ARM_T32) {
        if (avail < 2) {
            o->size = 2;
            return -1;
        }
        uint32_t hw1 = b[0] | (uint32_t)b[1] << 8;
        uint32_t hw2 = 0;
        if ((hw1 & 0xf800) >= 0xe800) {
            if (avail < 4) {
                o->size = 4;
                return -1;
            }
            hw2 = b[2] | (uint32_t)b[3] << 8;
        }
        t32(addr, hw1, hw2, o);
        return 0;
    }
    if (avail < 4) {
        o->size = 4;
        return -1;
    }
    uint32_t i = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    if (isa == TK_ARM_A64)
        a64(addr, i, o);
    else
        a32(addr, i, o);
    return 0;
}
