/* SPDX-License-Identifier: BSD-2-Clause */
/* objdump-like disassembly ("-M no-aliases" spelling): ABI register names, decimal
 * offsets, hex shift amounts and upper immediates, absolute branch/jump targets. */
#include "riscv_internal.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const xnames[32] = {"zero", "ra", "sp",  "gp",  "tp", "t0", "t1", "t2",
                                       "s0",   "s1", "a0",  "a1",  "a2", "a3", "a4", "a5",
                                       "a6",   "a7", "s2",  "s3",  "s4", "s5", "s6", "s7",
                                       "s8",   "s9", "s10", "s11", "t3", "t4", "t5", "t6"};

static const char *const fnames[32] = {"ft0", "ft1", "ft2",  "ft3",  "ft4", "ft5", "ft6",  "ft7",
                                       "fs0", "fs1", "fa0",  "fa1",  "fa2", "fa3", "fa4",  "fa5",
                                       "fa6", "fa7", "fs2",  "fs3",  "fs4", "fs5", "fs6",  "fs7",
                                       "fs8", "fs9", "fs10", "fs11", "ft8", "ft9", "ft10", "ft11"};

static const char *const rm_names[8] = {"rne", "rtz", "rdn", "rup", "rmm", "rm5", "rm6", "dyn"};

typedef struct out {
    char *buf;
    size_t cap;
    size_t n; /* characters that would have been written */
} out;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
put(out *o, const char *fmt, ...)
{
    va_list ap;
    int k;
    size_t room = o->n < o->cap ? o->cap - o->n : 0;

    va_start(ap, fmt);
    k = vsnprintf(room ? o->buf + o->n : NULL, room, fmt, ap);
    va_end(ap);
    if (k > 0)
        o->n += (size_t)k;
}

static const char *X(unsigned r)
{
    return xnames[r & 31];
}

static const char *F(unsigned r)
{
    return fnames[r & 31];
}

static void put_rm(out *o, uint32_t raw)
{
    unsigned rm = (raw >> 12) & 7;
    if (rm != 7)
        put(o, ",%s", rm_names[rm]);
}

static void put_fence_set(out *o, unsigned set)
{
    if (!set) {
        put(o, "unknown"); /* objdump's spelling of an empty set */
        return;
    }
    put(o, "%s%s%s%s", set & 8 ? "i" : "", set & 4 ? "o" : "", set & 2 ? "r" : "",
        set & 1 ? "w" : "");
}

static uint64_t target(const tk_rv_insn *i, uint64_t pc)
{
    uint64_t t = pc + (uint64_t)i->imm;
    return i->xlen == 32 ? (t & 0xffffffffu) : t;
}

int tk_rv_disasm(const tk_rv_insn *i, uint64_t pc, char *buf, size_t cap)
{
    out o = {buf, cap, 0};
    unsigned fmt = tk_rv_op_fmt(i->op);
    char csr[32];

    if (cap)
        buf[0] = '\0';
    if (i->op == TK_RV_OP_UNKNOWN || i->op >= TK_RV_OP_COUNT) {
        if (i->len == 2)
            put(&o, ".2byte\t0x%x", i->raw & 0xffffu);
        else
            put(&o, ".4byte\t0x%x", i->raw);
        return (int)o.n;
    }
    put(&o, "%s", tk_rv_op_name(i->op));
    if (fmt == TK_RV_FMT_AMO || fmt == TK_RV_FMT_LR) {
        unsigned aqrl = (i->raw >> 25) & 3;
        put(&o, "%s", aqrl == 3 ? ".aqrl" : aqrl == 2 ? ".aq" : aqrl == 1 ? ".rl" : "");
    }
    if (fmt == TK_RV_FMT_NONE)
        return (int)o.n;
    put(&o, "\t");
    switch ((tk_rv_fmt)fmt) {
    case TK_RV_FMT_NONE:
        break;
    case TK_RV_FMT_R:
        put(&o, "%s,%s,%s", X(i->rd), X(i->rs1), X(i->rs2));
        break;
    case TK_RV_FMT_R1:
        put(&o, "%s,%s", X(i->rd), X(i->rs1));
        break;
    case TK_RV_FMT_I:
        put(&o, "%s,%s,%lld", X(i->rd), X(i->rs1), (long long)i->imm);
        break;
    case TK_RV_FMT_SHIFT:
        put(&o, "%s,%s,0x%llx", X(i->rd), X(i->rs1), (unsigned long long)i->imm);
        break;
    case TK_RV_FMT_LOAD:
        put(&o, "%s,%lld(%s)", X(i->rd), (long long)i->imm, X(i->rs1));
        break;
    case TK_RV_FMT_STORE:
        put(&o, "%s,%lld(%s)", X(i->rs2), (long long)i->imm, X(i->rs1));
        break;
    case TK_RV_FMT_BRANCH:
        put(&o, "%s,%s,%llx", X(i->rs1), X(i->rs2), (unsigned long long)target(i, pc));
        break;
    case TK_RV_FMT_U:
    case TK_RV_FMT_C_LUI:
        put(&o, "%s,0x%llx", X(i->rd), (unsigned long long)(((uint64_t)i->imm >> 12) & 0xfffff));
        break;
    case TK_RV_FMT_JAL:
        put(&o, "%s,%llx", X(i->rd), (unsigned long long)target(i, pc));
        break;
    case TK_RV_FMT_JALR:
        put(&o, "%s,%lld(%s)", X(i->rd), (long long)i->imm, X(i->rs1));
        break;
    case TK_RV_FMT_FENCE:
        put_fence_set(&o, (unsigned)(i->imm >> 4) & 15);
        put(&o, ",");
        put_fence_set(&o, (unsigned)i->imm & 15);
        break;
    case TK_RV_FMT_CSR:
        tk_rv_csr_name((unsigned)i->imm, csr, sizeof(csr));
        put(&o, "%s,%s,%s", X(i->rd), csr, X(i->rs1));
        break;
    case TK_RV_FMT_CSRI:
        tk_rv_csr_name((unsigned)i->imm, csr, sizeof(csr));
        put(&o, "%s,%s,%u", X(i->rd), csr, i->rs1);
        break;
    case TK_RV_FMT_AMO:
        put(&o, "%s,%s,(%s)", X(i->rd), X(i->rs2), X(i->rs1));
        break;
    case TK_RV_FMT_LR:
        put(&o, "%s,(%s)", X(i->rd), X(i->rs1));
        break;
    case TK_RV_FMT_SFENCE:
        put(&o, "%s,%s", X(i->rs1), X(i->rs2));
        break;
    case TK_RV_FMT_FLOAD:
        put(&o, "%s,%lld(%s)", F(i->rd), (long long)i->imm, X(i->rs1));
        break;
    case TK_RV_FMT_FSTORE:
        put(&o, "%s,%lld(%s)", F(i->rs2), (long long)i->imm, X(i->rs1));
        break;
    case TK_RV_FMT_FR4:
        put(&o, "%s,%s,%s,%s", F(i->rd), F(i->rs1), F(i->rs2), F(i->raw >> 27));
        put_rm(&o, i->raw);
        break;
    case TK_RV_FMT_FR_RM:
        put(&o, "%s,%s,%s", F(i->rd), F(i->rs1), F(i->rs2));
        put_rm(&o, i->raw);
        break;
    case TK_RV_FMT_FR:
        put(&o, "%s,%s,%s", F(i->rd), F(i->rs1), F(i->rs2));
        break;
    case TK_RV_FMT_FR1_RM:
        put(&o, "%s,%s", F(i->rd), F(i->rs1));
        put_rm(&o, i->raw);
        break;
    case TK_RV_FMT_FR1:
        put(&o, "%s,%s", F(i->rd), F(i->rs1));
        break;
    case TK_RV_FMT_FCMP:
        put(&o, "%s,%s,%s", X(i->rd), F(i->rs1), F(i->rs2));
        break;
    case TK_RV_FMT_F2X:
        put(&o, "%s,%s", X(i->rd), F(i->rs1));
        break;
    case TK_RV_FMT_F2X_RM:
        put(&o, "%s,%s", X(i->rd), F(i->rs1));
        put_rm(&o, i->raw);
        break;
    case TK_RV_FMT_X2F:
        put(&o, "%s,%s", F(i->rd), X(i->rs1));
        break;
    case TK_RV_FMT_X2F_RM:
        put(&o, "%s,%s", F(i->rd), X(i->rs1));
        put_rm(&o, i->raw);
        break;
    case TK_RV_FMT_C_RD_IMM:
        put(&o, "%s,%lld", X(i->rd), (long long)i->imm);
        break;
    case TK_RV_FMT_C_RD_HEX:
        put(&o, "%s,0x%llx", X(i->rd), (unsigned long long)i->imm);
        break;
    case TK_RV_FMT_C_RD_RS2:
        put(&o, "%s,%s", X(i->rd), X(i->rs2));
        break;
    case TK_RV_FMT_C_RS1:
        put(&o, "%s", X(i->rs1));
        break;
    case TK_RV_FMT_C_J:
        put(&o, "%llx", (unsigned long long)target(i, pc));
        break;
    case TK_RV_FMT_C_BRANCH:
        put(&o, "%s,%llx", X(i->rs1), (unsigned long long)target(i, pc));
        break;
    }
    return (int)o.n;
}
