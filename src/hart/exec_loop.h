/* SPDX-License-Identifier: BSD-2-Clause */
/* The interpreter loop, a template included by exec.c once per variant (GCC cannot inline a
 * function that takes label addresses, so each variant is its own function). Parameters:
 *   RUN_NAME        the function's name
 *   RUN_TRACE       fill retirement records (constant, or an expression for the slow variant)
 *   RUN_MTRACE      fill their data-access fields
 *   RUN_SLOWFETCH   check PMP on every fetch (no page-sized straight-line stepping)
 *   RUN_ALIGN       all-ones when misaligned accesses trap, else 0 (QEMU performs them)
 *
 * Instructions are pre-decoded once per code page (mem.c) into 24-byte slots. With GCC or
 * clang each handler ends in its own indirect jump through a table of label addresses
 * (direct threading: one predictable branch per handler instead of a shared switch); other
 * compilers, or TK_HART_SWITCH_DISPATCH, get the same handlers as switch cases. A handler that
 * does not jump steps to the next slot (nextb bytes on); running off the page's end hits a
 * sentinel slot that looks the next page up. The pc is recovered from the slot when needed
 * (jumps, auipc, traps, records), not counted per instruction. */
static uint64_t RUN_NAME(tk_sim *s, hart *h, uint64_t budget, bool *mode_switch)
{
    const bool trace = RUN_TRACE;
    const bool mtrace = RUN_MTRACE;
    const bool slowfetch = RUN_SLOWFETCH;
    ram *const r0 = &s->ram[0];
    ram *cr = r0; /* region of the current code page */
    uint8_t *const mem = r0->mem;
    uint8_t *const pflags = r0->pflags;
    const uint64_t amask = h->amask;
    const bool rv32 = h->xlen == 32;
    const unsigned shm = h->xlen - 1;
    /* all-ones when misaligned accesses trap, else 0 (QEMU performs them) */
    const uint64_t align = RUN_ALIGN;
    /* fast-path state kept in registers; it changes only through traps (refreshed below)
     * and through CSR writes and xRET, which end the slice */
    uint64_t fbase = h->fast_base, flimit = h->fast_limit;
    const uint64_t base_exec = h->executed;
    uint64_t pc = h->pc;            /* valid at fetch, out and exception (when d is NULL) */
    int64_t left = (int64_t)budget; /* instructions still allowed; -1 after the last one */
    uint64_t cpage = 1;             /* address of the page of slots (odd: none yet) */
    hinsn *slots = NULL;
    uint64_t cause = 0, tval = 0;
    uint8_t ipriv = h->priv;
    hinsn *d = NULL;
#ifdef TK_HART_THREADED
#define TK_HART_LABEL(name) &&L_##name,
    static const void *const tbl[OP_COUNT] = {TK_HART_OPS(TK_HART_LABEL)};
#undef TK_HART_LABEL
#endif

    if (budget > INT64_MAX)
        left = INT64_MAX, budget = INT64_MAX;
    goto fetch;

    {
#ifndef TK_HART_THREADED
    dispatch:
        switch ((enum hop)d->op) {
#endif
            CASE(OP_LUI)
            X(d->rd) = (uint64_t)(int64_t)d->imm;
            SEQ();
            CASE(OP_AUIPC)
            {
                uint64_t v = PC + (uint64_t)(int64_t)d->imm;
                X(d->rd) = rv32 ? sx32(v) : v;
                SEQ();
            }
            CASE(OP_JAL)
            {
                uint64_t link = PC + d->len;
                X(d->rd) = rv32 ? sx32(link) : link;
                TAKEN();
            }
            CASE(OP_JALR)
            {
                uint64_t t = EA() & ~1ull, link = PC + d->len;
                X(d->rd) = rv32 ? sx32(link) : link;
                JUMP(t);
            }
            CASE(OP_BEQ)
            if (X(d->rs1) == X(d->rs2))
                TAKEN();
            SEQ();
            CASE(OP_BNE)
            if (X(d->rs1) != X(d->rs2))
                TAKEN();
            SEQ();
            CASE(OP_BLT)
            if ((int64_t)X(d->rs1) < (int64_t)X(d->rs2))
                TAKEN();
            SEQ();
            CASE(OP_BGE)
            if ((int64_t)X(d->rs1) >= (int64_t)X(d->rs2))
                TAKEN();
            SEQ();
            CASE(OP_BLTU)
            if (X(d->rs1) < X(d->rs2))
                TAKEN();
            SEQ();
            CASE(OP_BGEU)
            if (X(d->rs1) >= X(d->rs2))
                TAKEN();
            SEQ();
            CASE(OP_LB)
            {
                int8_t v;
                LOAD(int8_t, 1, v);
                X(d->rd) = (uint64_t)(int64_t)v;
                SEQ();
            }
            CASE(OP_LH)
            {
                int16_t v;
                LOAD(int16_t, 2, v);
                X(d->rd) = (uint64_t)(int64_t)v;
                SEQ();
            }
            CASE(OP_LW)
            {
                int32_t v;
                LOAD(int32_t, 4, v);
                X(d->rd) = (uint64_t)(int64_t)v;
                SEQ();
            }
            CASE(OP_LD)
            {
                uint64_t v;
                LOAD(uint64_t, 8, v);
                X(d->rd) = v;
                SEQ();
            }
            CASE(OP_LBU)
            {
                uint8_t v;
                LOAD(uint8_t, 1, v);
                X(d->rd) = v;
                SEQ();
            }
            CASE(OP_LHU)
            {
                uint16_t v;
                LOAD(uint16_t, 2, v);
                X(d->rd) = v;
                SEQ();
            }
            CASE(OP_LWU)
            {
                uint32_t v;
                LOAD(uint32_t, 4, v);
                X(d->rd) = v;
                SEQ();
            }
            CASE(OP_SB)
            STORE(1, X(d->rs2));
            SEQ();
            CASE(OP_SH)
            STORE(2, X(d->rs2));
            SEQ();
            CASE(OP_SW)
            STORE(4, X(d->rs2));
            SEQ();
            CASE(OP_SD)
            STORE(8, X(d->rs2));
            SEQ();
            CASE(OP_ADDI)
            X(d->rd) = X(d->rs1) + (uint64_t)(int64_t)d->imm;
            SEQ();
            CASE(OP_SLTI)
            X(d->rd) = (int64_t)X(d->rs1) < (int64_t)d->imm;
            SEQ();
            CASE(OP_SLTIU)
            X(d->rd) = X(d->rs1) < (uint64_t)(int64_t)d->imm;
            SEQ();
            CASE(OP_XORI)
            X(d->rd) = X(d->rs1) ^ (uint64_t)(int64_t)d->imm;
            SEQ();
            CASE(OP_ORI)
            X(d->rd) = X(d->rs1) | (uint64_t)(int64_t)d->imm;
            SEQ();
            CASE(OP_ANDI)
            X(d->rd) = X(d->rs1) & (uint64_t)(int64_t)d->imm;
            SEQ();
            CASE(OP_SLLI)
            X(d->rd) = X(d->rs1) << d->imm;
            SEQ();
            CASE(OP_SRLI)
            X(d->rd) = X(d->rs1) >> d->imm;
            SEQ();
            CASE(OP_SRAI)
            X(d->rd) = (uint64_t)((int64_t)X(d->rs1) >> d->imm);
            SEQ();
            CASE(OP_ADD)
            X(d->rd) = X(d->rs1) + X(d->rs2);
            SEQ();
            CASE(OP_SUB)
            X(d->rd) = X(d->rs1) - X(d->rs2);
            SEQ();
            CASE(OP_SLL)
            X(d->rd) = X(d->rs1) << (X(d->rs2) & 63u);
            SEQ();
            CASE(OP_SLT)
            X(d->rd) = (int64_t)X(d->rs1) < (int64_t)X(d->rs2);
            SEQ();
            CASE(OP_SLTU)
            X(d->rd) = X(d->rs1) < X(d->rs2);
            SEQ();
            CASE(OP_XOR)
            X(d->rd) = X(d->rs1) ^ X(d->rs2);
            SEQ();
            CASE(OP_SRL)
            X(d->rd) = X(d->rs1) >> (X(d->rs2) & 63u);
            SEQ();
            CASE(OP_SRA)
            X(d->rd) = (uint64_t)((int64_t)X(d->rs1) >> (X(d->rs2) & 63u));
            SEQ();
            CASE(OP_OR)
            X(d->rd) = X(d->rs1) | X(d->rs2);
            SEQ();
            CASE(OP_AND)
            X(d->rd) = X(d->rs1) & X(d->rs2);
            SEQ();
            CASE(OP_ADDIW)
            X(d->rd) = sx32(X(d->rs1) + (uint64_t)(int64_t)d->imm);
            SEQ();
            CASE(OP_SLLIW)
            X(d->rd) = sx32((uint32_t)X(d->rs1) << d->imm);
            SEQ();
            CASE(OP_SRLIW)
            X(d->rd) = sx32((uint32_t)X(d->rs1) >> d->imm);
            SEQ();
            CASE(OP_SRAIW)
            X(d->rd) = (uint64_t)(int64_t)((int32_t)(uint32_t)X(d->rs1) >> d->imm);
            SEQ();
            CASE(OP_ADDW)
            X(d->rd) = sx32(X(d->rs1) + X(d->rs2));
            SEQ();
            CASE(OP_SUBW)
            X(d->rd) = sx32(X(d->rs1) - X(d->rs2));
            SEQ();
            CASE(OP_SLLW)
            X(d->rd) = sx32((uint32_t)X(d->rs1) << (X(d->rs2) & 31u));
            SEQ();
            CASE(OP_SRLW)
            X(d->rd) = sx32((uint32_t)X(d->rs1) >> (X(d->rs2) & 31u));
            SEQ();
            CASE(OP_SRAW)
            X(d->rd) = (uint64_t)(int64_t)((int32_t)(uint32_t)X(d->rs1) >> (X(d->rs2) & 31u));
            SEQ();
            CASE(OP_MUL)
            X(d->rd) = X(d->rs1) * X(d->rs2);
            SEQ();
            CASE(OP_MULH)
            X(d->rd) = (uint64_t)(((__int128)(int64_t)X(d->rs1) * (int64_t)X(d->rs2)) >> 64);
            SEQ();
            CASE(OP_MULHSU)
            X(d->rd) = (uint64_t)(((__int128)(int64_t)X(d->rs1) * (__int128)X(d->rs2)) >> 64);
            SEQ();
            CASE(OP_MULHU)
            X(d->rd) = (uint64_t)(((unsigned __int128)X(d->rs1) * X(d->rs2)) >> 64);
            SEQ();
            CASE(OP_DIV)
            {
                int64_t a = (int64_t)X(d->rs1), b = (int64_t)X(d->rs2);
                X(d->rd) = b == 0                        ? UINT64_MAX
                           : (a == INT64_MIN && b == -1) ? (uint64_t)a
                                                         : (uint64_t)(a / b);
                SEQ();
            }
            CASE(OP_DIVU)
            {
                uint64_t a = X(d->rs1), b = X(d->rs2);
                X(d->rd) = b == 0 ? UINT64_MAX : a / b;
                SEQ();
            }
            CASE(OP_REM)
            {
                int64_t a = (int64_t)X(d->rs1), b = (int64_t)X(d->rs2);
                X(d->rd) = b == 0                        ? (uint64_t)a
                           : (a == INT64_MIN && b == -1) ? 0
                                                         : (uint64_t)(a % b);
                SEQ();
            }
            CASE(OP_REMU)
            {
                uint64_t a = X(d->rs1), b = X(d->rs2);
                X(d->rd) = b == 0 ? a : a % b;
                SEQ();
            }
            CASE(OP_MULW)
            X(d->rd) = sx32(X(d->rs1) * X(d->rs2));
            SEQ();
            CASE(OP_DIVW)
            {
                int32_t a = (int32_t)X(d->rs1), b = (int32_t)X(d->rs2);
                X(d->rd) = b == 0                        ? UINT64_MAX
                           : (a == INT32_MIN && b == -1) ? (uint64_t)(int64_t)a
                                                         : (uint64_t)(int64_t)(a / b);
                SEQ();
            }
            CASE(OP_DIVUW)
            {
                uint32_t a = (uint32_t)X(d->rs1), b = (uint32_t)X(d->rs2);
                X(d->rd) = b == 0 ? UINT64_MAX : sx32(a / b);
                SEQ();
            }
            CASE(OP_REMW)
            {
                int32_t a = (int32_t)X(d->rs1), b = (int32_t)X(d->rs2);
                X(d->rd) = b == 0                        ? (uint64_t)(int64_t)a
                           : (a == INT32_MIN && b == -1) ? 0
                                                         : (uint64_t)(int64_t)(a % b);
                SEQ();
            }
            CASE(OP_REMUW)
            {
                uint32_t a = (uint32_t)X(d->rs1), b = (uint32_t)X(d->rs2);
                X(d->rd) = b == 0 ? sx32(a) : sx32(a % b);
                SEQ();
            }
            CASE(OP_MULH32)
            X(d->rd) =
                sx32((uint64_t)(((int64_t)(int32_t)X(d->rs1) * (int64_t)(int32_t)X(d->rs2)) >> 32));
            SEQ();
            CASE(OP_MULHSU32)
            X(d->rd) = sx32(
                (uint64_t)(((int64_t)(int32_t)X(d->rs1) * (int64_t)(uint32_t)X(d->rs2)) >> 32));
            SEQ();
            CASE(OP_MULHU32)
            X(d->rd) = sx32(((uint64_t)(uint32_t)X(d->rs1) * (uint32_t)X(d->rs2)) >> 32);
            SEQ();
            CASE(OP_FENCE)
            SEQ();
            CASE(OP_FENCE_I)
            for (unsigned i = 0; i < s->nram; i++)
                tk__ram_flush_code(&s->ram[i]);
            /* the flush also emptied this slot: decode it again for its record and step */
            {
                uint64_t bad = 0;
                (void)predecode(h, cr, SLOT_PC(d), d, &bad);
            }
            SEQ();
            CASE(OP_ECALL)
            EXC(h->priv == TK_PRIV_M ? 11 : h->priv == TK_PRIV_S ? 9 : 8, 0);
            CASE(OP_EBREAK)
            EXC(3, PC);
            CASE(OP_MRET)
            CASE(OP_SRET)
            {
                uint64_t npc = PC + d->len;
                int c;
                SYNC();
                c = tk__xret(s, h, d->op == OP_MRET, &npc);
                if (c)
                    EXC(2, d->raw);
                END_SLICE();
                JUMP(npc);
            }
            CASE(OP_WFI)
            /* QEMU's rule: TW traps below M; U-mode WFI traps when S-mode exists */
            if (h->priv == TK_PRIV_U || (h->priv == TK_PRIV_S && (h->mstatus & (1ull << 21))))
                EXC(2, d->raw);
            if (!(h->mip & h->mie))
                h->wfi = true;
            END_SLICE();
            SEQ();
            CASE(OP_SFENCE_VMA)
            if (h->priv == TK_PRIV_U || (h->priv == TK_PRIV_S && (h->mstatus & (1ull << 20))))
                EXC(2, d->raw);
            SEQ();
            CASE(OP_CSRRW)
            CASE(OP_CSRRS)
            CASE(OP_CSRRC)
            CASE(OP_CSRRWI)
            CASE(OP_CSRRSI)
            CASE(OP_CSRRCI)
            {
                unsigned k = (unsigned)(d->op - OP_CSRRW) % 3u;
                bool imm = d->op >= OP_CSRRWI;
                uint64_t src = imm ? d->rs1 : X(d->rs1), old = 0;
                bool wr = k == 0 || d->rs1 != 0;
                bool rd = !(k == 0 && (d->rd & 31u) == 0);
                int c;
                SYNC();
                c = tk__csr_op(s, h, (unsigned)d->imm & 0xfffu, k, src, wr, rd, &old);
                if (c < 0) {
                    left++;
                    pc = PC;
                    stop_unsupported(s, h, pc, d->raw, d->len,
                                     "virtual memory (satp) not modelled");
                    goto out;
                }
                if (c)
                    EXC(2, d->raw);
                X(d->rd) = old;
                if (mtrace) {
                    h->m_addr = (unsigned)d->imm & 0xfffu;
                    h->m_size = 8;
                    h->m_rdata = old;
                    h->m_wdata = k == 0 ? src : k == 1 ? old | src : old & ~src;
                    h->m_flags = (uint8_t)(TK_HART_M_CSR | (rd ? TK_HART_M_LOAD : 0) |
                                           (wr ? TK_HART_M_STORE : 0));
                }
                END_SLICE();
                SEQ();
            }
            CASE(OP_AMO)
            {
                unsigned nb = d->rm == 2 ? 4 : 8, f5 = d->rs3;
                uint64_t a = X(d->rs1) & amask, old = 0, nv = 0, b = X(d->rs2);
                int c;
                SYNC();
                if (a & (nb - 1))
                    EXC(f5 == 0x02 ? 4 : 6, a);
                c = tk__mem_load(s, h, a, nb, &old);
                if (c)
                    EXC(f5 == 0x02 ? 5 : 7, a);
                if (f5 != 0x03) /* sc's read of the reservation is not an access */
                    MNOTE(TK_HART_M_LOAD, a, old, nb);
                if (nb == 4)
                    old = sx32(old);
                if (f5 == 0x02) { /* lr */
                    h->res_valid = true;
                    h->res_addr = a;
                    h->res_val = old;
                    X(d->rd) = old;
                    SEQ();
                }
                if (f5 == 0x03) { /* sc: succeeds while the reserved value is unchanged (QEMU) */
                    bool ok = h->res_valid && h->res_addr == a && h->res_val == old;
                    h->res_valid = false;
                    if (ok) {
                        c = tk__mem_store(s, h, a, nb, b);
                        if (c)
                            EXC(7, a);
                        MNOTE(TK_HART_M_STORE, a, b, nb);
                    }
                    X(d->rd) = ok ? 0 : 1;
                    END_SLICE();
                    SEQ();
                }
                if (nb == 4)
                    b = sx32(b);
                switch (f5) {
                case 0x01:
                    nv = b;
                    break;
                case 0x00:
                    nv = old + b;
                    break;
                case 0x04:
                    nv = old ^ b;
                    break;
                case 0x0c:
                    nv = old & b;
                    break;
                case 0x08:
                    nv = old | b;
                    break;
                case 0x10:
                    nv = (int64_t)old < (int64_t)b ? old : b;
                    break;
                case 0x14:
                    nv = (int64_t)old > (int64_t)b ? old : b;
                    break;
                case 0x18:
                    nv = (nb == 4 ? (uint32_t)old < (uint32_t)b : old < b) ? old : b;
                    break;
                default:
                    nv = (nb == 4 ? (uint32_t)old > (uint32_t)b : old > b) ? old : b;
                    break;
                }
                c = tk__mem_store(s, h, a, nb, nv);
                if (c)
                    EXC(7, a);
                MNOTE(TK_HART_M_STORE, a, nv, nb);
                X(d->rd) = old;
                END_SLICE();
                SEQ();
            }
            CASE(OP_FLW)
            CASE(OP_FLD)
            {
                uint64_t v;
                if (!(h->mstatus & (3ull << 13)))
                    EXC(2, d->raw);
                if (d->op == OP_FLW) {
                    uint32_t w;
                    LOAD(uint32_t, 4, w);
                    v = 0xffffffff00000000ull | w;
                } else {
                    LOAD(uint64_t, 8, v);
                }
                h->f[d->rd] = v;
                h->mstatus |= 3ull << 13;
                SEQ();
            }
            CASE(OP_FSW)
            if (!(h->mstatus & (3ull << 13)))
                EXC(2, d->raw);
            STORE(4, h->f[d->rs2]);
            SEQ();
            CASE(OP_FSD)
            if (!(h->mstatus & (3ull << 13)))
                EXC(2, d->raw);
            STORE(8, h->f[d->rs2]);
            SEQ();
            CASE(OP_FP)
            {
                int c = tk__fp_exec(h, d);
                if (c < 0) {
                    left++;
                    pc = PC;
                    stop_unsupported(s, h, pc, d->raw, d->len,
                                     "rounding mode RMM on FP arithmetic not modelled");
                    goto out;
                }
                if (c)
                    EXC(2, d->raw);
                SEQ();
            }
            CASE(OP_SH1ADD)
            X(d->rd) = (X(d->rs1) << 1) + X(d->rs2);
            goto fix32;
            CASE(OP_SH2ADD)
            X(d->rd) = (X(d->rs1) << 2) + X(d->rs2);
            goto fix32;
            CASE(OP_SH3ADD)
            X(d->rd) = (X(d->rs1) << 3) + X(d->rs2);
            goto fix32;
            CASE(OP_ADD_UW)
            X(d->rd) = (uint64_t)(uint32_t)X(d->rs1) + X(d->rs2);
            SEQ();
            CASE(OP_SH1ADD_UW)
            X(d->rd) = ((uint64_t)(uint32_t)X(d->rs1) << 1) + X(d->rs2);
            SEQ();
            CASE(OP_SH2ADD_UW)
            X(d->rd) = ((uint64_t)(uint32_t)X(d->rs1) << 2) + X(d->rs2);
            SEQ();
            CASE(OP_SH3ADD_UW)
            X(d->rd) = ((uint64_t)(uint32_t)X(d->rs1) << 3) + X(d->rs2);
            SEQ();
            CASE(OP_SLLI_UW)
            X(d->rd) = (uint64_t)(uint32_t)X(d->rs1) << d->imm;
            SEQ();
            /* Zbb */
            CASE(OP_ANDN)
            X(d->rd) = X(d->rs1) & ~X(d->rs2);
            SEQ();
            CASE(OP_ORN)
            X(d->rd) = X(d->rs1) | ~X(d->rs2);
            SEQ();
            CASE(OP_XNOR)
            X(d->rd) = ~(X(d->rs1) ^ X(d->rs2));
            SEQ();
            CASE(OP_CLZ)
            X(d->rd) = X(d->rs1) ? (uint64_t)__builtin_clzll(X(d->rs1)) : 64;
            SEQ();
            CASE(OP_CTZ)
            X(d->rd) = X(d->rs1) ? (uint64_t)__builtin_ctzll(X(d->rs1)) : 64;
            SEQ();
            CASE(OP_CPOP)
            X(d->rd) = (uint64_t)__builtin_popcountll(X(d->rs1));
            SEQ();
            CASE(OP_CLZW)
            {
                uint32_t v = (uint32_t)X(d->rs1);
                X(d->rd) = v ? (uint64_t)__builtin_clz(v) : 32;
                SEQ();
            }
            CASE(OP_CTZW)
            {
                uint32_t v = (uint32_t)X(d->rs1);
                X(d->rd) = v ? (uint64_t)__builtin_ctz(v) : 32;
                SEQ();
            }
            CASE(OP_CPOPW)
            X(d->rd) = (uint64_t)__builtin_popcount((uint32_t)X(d->rs1));
            SEQ();
            CASE(OP_MAX)
            X(d->rd) = (int64_t)X(d->rs1) > (int64_t)X(d->rs2) ? X(d->rs1) : X(d->rs2);
            SEQ();
            CASE(OP_MIN)
            X(d->rd) = (int64_t)X(d->rs1) < (int64_t)X(d->rs2) ? X(d->rs1) : X(d->rs2);
            SEQ();
            CASE(OP_MAXU)
            X(d->rd) = X(d->rs1) > X(d->rs2) ? X(d->rs1) : X(d->rs2);
            SEQ();
            CASE(OP_MINU)
            X(d->rd) = X(d->rs1) < X(d->rs2) ? X(d->rs1) : X(d->rs2);
            SEQ();
            CASE(OP_SEXT_B)
            X(d->rd) = (uint64_t)(int64_t)(int8_t)X(d->rs1);
            SEQ();
            CASE(OP_SEXT_H)
            X(d->rd) = (uint64_t)(int64_t)(int16_t)X(d->rs1);
            SEQ();
            CASE(OP_ZEXT_H)
            X(d->rd) = (uint16_t)X(d->rs1);
            SEQ();
            CASE(OP_ROL)
            {
                unsigned k = X(d->rs2) & 63u;
                X(d->rd) = (X(d->rs1) << k) | (X(d->rs1) >> ((64 - k) & 63u));
                SEQ();
            }
            CASE(OP_ROR)
            CASE(OP_RORI)
            {
                unsigned k = (d->op == OP_RORI ? (unsigned)d->imm : (unsigned)X(d->rs2)) & 63u;
                X(d->rd) = (X(d->rs1) >> k) | (X(d->rs1) << ((64 - k) & 63u));
                SEQ();
            }
            CASE(OP_ROLW)
            {
                uint32_t v = (uint32_t)X(d->rs1);
                unsigned k = X(d->rs2) & 31u;
                X(d->rd) = sx32((v << k) | (v >> ((32 - k) & 31u)));
                SEQ();
            }
            CASE(OP_RORW)
            CASE(OP_RORIW)
            {
                uint32_t v = (uint32_t)X(d->rs1);
                unsigned k = (d->op == OP_RORIW ? (unsigned)d->imm : (unsigned)X(d->rs2)) & 31u;
                X(d->rd) = sx32((v >> k) | (v << ((32 - k) & 31u)));
                SEQ();
            }
            CASE(OP_ORC_B)
            {
                uint64_t v = X(d->rs1), o = 0;
                for (unsigned b = 0; b < 64; b += 8)
                    if ((v >> b) & 0xffu)
                        o |= 0xffull << b;
                X(d->rd) = o;
                goto fix32;
            }
            CASE(OP_REV8)
            X(d->rd) =
                rv32 ? sx32(__builtin_bswap32((uint32_t)X(d->rs1))) : __builtin_bswap64(X(d->rs1));
            SEQ();
            /* Zbs */
            CASE(OP_BCLR)
            X(d->rd) = X(d->rs1) & ~(1ull << (X(d->rs2) & shm));
            goto fix32;
            CASE(OP_BCLRI)
            X(d->rd) = X(d->rs1) & ~(1ull << d->imm);
            goto fix32;
            CASE(OP_BSET)
            X(d->rd) = X(d->rs1) | (1ull << (X(d->rs2) & shm));
            goto fix32;
            CASE(OP_BSETI)
            X(d->rd) = X(d->rs1) | (1ull << d->imm);
            goto fix32;
            CASE(OP_BINV)
            X(d->rd) = X(d->rs1) ^ (1ull << (X(d->rs2) & shm));
            goto fix32;
            CASE(OP_BINVI)
            X(d->rd) = X(d->rs1) ^ (1ull << d->imm);
            goto fix32;
            CASE(OP_BEXT)
            X(d->rd) = (X(d->rs1) >> (X(d->rs2) & shm)) & 1u;
            SEQ();
            CASE(OP_BEXTI)
            X(d->rd) = (X(d->rs1) >> d->imm) & 1u;
            SEQ();

            CASE(OP_ILLEGAL)
            EXC(2, d->raw);
            CASE(OP_UNDECODED)
            {
                /* first execution of this slot: decode it, then dispatch again (already counted) */
                uint64_t bad = 0;
                pc = SLOT_PC(d);
                if (predecode(h, cr, pc, d, &bad)) {
                    d = NULL;
                    EXC(1, bad);
                }
                DISPATCH();
            }
            CASE(OP_PAGE_END)
            left++; /* a sentinel, not an instruction */
            pc = PC;
            goto fetch;
#ifndef TK_HART_THREADED
        default:
#endif
            CASE(OP_UNSUPPORTED)
            left++;
            pc = PC;
            stop_unsupported(s, h, pc, d->raw, d->len, "unsupported instruction");
            goto out;
        fix32:
            if (rv32)
                X(d->rd) = sx32(X(d->rd));
            SEQ();
#ifndef TK_HART_THREADED
        }
#endif
    }

retire_seq:
    /* an instruction that did not jump completed (tracing, or checked fetches) */
    if (trace)
        RECORD(d->itype, PC);
    d = STEP(d);
    if (slowfetch) {
        pc = SLOT_PC(d);
        goto fetch;
    }
    NEXT();

jumped : {
    /* a jump, xRET or taken branch completed with pc its target (tracing) */
    uint64_t ipc = PC;
    uint8_t it = d->itype;
    if (it == TK_ITYPE_NOT_TAKEN && pc != ipc + d->len)
        it = TK_ITYPE_TAKEN;
    RECORD(it, ipc);
    FAST_FETCH();
}

fetch : {
    /* pc holds the address of the next instruction */
    uint64_t off = pc - cpage;
    if (TK_UNLIKELY(slowfetch || off >= PAGE_SIZE)) {
        ram *nr = NULL;
        hinsn *ns;
        if (left <= 0)
            goto out;
        ns = fetch_page(s, pc, &nr);
        /* PMP applies to fetches when the fast path is off: check every one */
        if (!ns || (slowfetch && !tk__pmp_ok(h, pc, 2, 4, h->priv))) {
            left--;
            d = NULL;
            EXC(1, pc);
        }
        slots = ns;
        cr = nr;
        cpage = pc & ~(uint64_t)(PAGE_SIZE - 1);
        off = pc - cpage;
    }
    d = SLOT(off);
    NEXT();
}

exception:
    /* The faulting instruction is reported (spike CSV style) but does not complete; ecall
     * and ebreak are reported as retired, as the ingress port wants (iretire = 1). */
    if (d)
        pc = PC;
    h->faulted++;
    if (trace) {
        tk_hart_retire *rr = &h->rbuf[h->rn++];
        bool retires = d && (d->op == OP_ECALL || d->op == OP_EBREAK);
        uint16_t lo = 0;
        rr->pc = pc;
        rr->cause = cause;
        rr->tval = tval;
        rr->epc = 0;
        if (d) {
            rr->insn = d->raw;
            rr->len = d->len;
        } else {
            tk_sim_read_mem(s, pc, &lo, 2);
            rr->insn = lo;
            rr->len = (lo & 3u) == 3u ? 4 : 2;
        }
        rr->hart = (uint16_t)h->id;
        rr->itype = TK_ITYPE_NONE;
        rr->priv = h->priv;
        rr->flags = (uint8_t)(TK_HART_F_EXCEPTION | (retires ? TK_HART_F_RETIRED : 0));
        rr->rd = 0;
        rr->rs1 = 0;
        rr->mflags = 0; /* a faulting access did not happen */
        h->m_flags = 0;
        if (TK_UNLIKELY(h->rn == RBUF_CAP))
            flush_records(s, h, true);
    }
    SYNC();
    tk__trap(s, h, cause, false, tval, pc);
    /* the privilege may have changed: refresh the fast-path bounds */
    fbase = h->fast_base;
    flimit = h->fast_limit;
    pc = h->pc;
    ipriv = h->priv;
    if (h->fast_fetch == slowfetch) {
        /* continue in the other variant (same slice: invisible to the program) */
        *mode_switch = true;
        goto out;
    }
    goto fetch;

out_d:
    /* the budget ran out before the instruction (or page end) at d */
    pc = SLOT_PC(d);
    left = 0;
out:
    h->executed = base_exec + (budget - (uint64_t)left);
    h->pc = pc;
    return budget - (uint64_t)left;
}
