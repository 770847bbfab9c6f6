/* SPDX-License-Identifier: BSD-2-Clause */
/* The interpreter: fetches pre-decoded instructions from per-page slot arrays (decoded once,
 * dropped when code is overwritten) and dispatches on a switch. It is instantiated twice,
 * with and without retirement reporting, so that plain runs pay nothing for tracing. */
#include <string.h>

#include "hart_internal.h"

#define X(r) h->x[r]

static inline uint64_t sx32(uint64_t v)
{
    return (uint64_t)(int64_t)(int32_t)(uint32_t)v;
}

/* Hand the buffered records to the callback, keeping the last one back when asked: an
 * interrupt taken after it must still be able to flag it. */
static void flush_records(tk_sim *s, hart *h, bool keep_last)
{
    size_t n = h->rn - (keep_last && h->rn ? 1 : 0);
    if (n && s->retire && s->cb_status == TK_OK) {
        tk_status st = s->retire(s->retire_ctx, h->rbuf, n);
        if (st != TK_OK) {
            s->cb_status = st;
            if (s->stop == TK_OK)
                s->stop = st;
        }
    }
    if (n < h->rn)
        h->rbuf[0] = h->rbuf[h->rn - 1];
    h->rn -= n;
}

static void stop_unsupported(tk_sim *s, hart *h, uint64_t pc, uint32_t raw, unsigned len,
                             const char *why)
{
    s->stop = TK_ERR_UNSUPPORTED;
    if (s->diag) {
        tk_diag_set(s->diag, TK_ERR_UNSUPPORTED, "hart %u: %s: instruction 0x%0*x at 0x%llx", h->id,
                    why, len == 2 ? 4 : 8, raw, (unsigned long long)pc);
        s->diag->address = pc;
    }
}

/* Decode the slot for pc; returns 0 or a fetch fault cause + 1 (tval in *bad). */
static int decode_slot(tk_sim *s, hart *h, ram *r, uint64_t pc, hinsn *d, uint64_t *bad)
{
    (void)s;
    uint64_t off = pc - r->base;
    uint16_t lo, hi = 0;
    memcpy(&lo, r->mem + off, 2);
    if ((lo & 3u) == 3u) {
        if (off + 4 > r->size) {
            *bad = pc + 2;
            return 1 + 1;
        }
        if (((off + 2) & (PAGE_SIZE - 1)) == 0) /* the upper half lies in the next page */
            r->pflags[(off + 2) >> PAGE_SHIFT] |= PF_CODE;
        memcpy(&hi, r->mem + off + 2, 2);
    }
    tk__hart_decode((uint32_t)lo | ((uint32_t)hi << 16), h->xlen, d);
    return 0;
}

/* Slot array of the page holding pc, or NULL on a fetch fault. */
static hinsn *fetch_page(tk_sim *s, uint64_t pc, uint64_t *page_pc, ram **rp)
{
    ram *r = tk__sim_ram(s, pc, 2);
    uint64_t off;
    if (!r)
        return NULL;
    off = pc - r->base;
    *rp = r;
    *page_pc = pc & ~(uint64_t)(PAGE_SIZE - 1);
    return tk__ram_code_page(r, off >> PAGE_SHIFT);
}

static inline __attribute__((always_inline)) uint64_t run(tk_sim *s, hart *h, uint64_t budget,
                                                          const bool trace, const bool mtrace)
{
    ram *const r0 = &s->ram[0];
    ram *cr = r0; /* region of the current code page */
    uint8_t *const mem = r0->mem;
    uint8_t *const pflags = r0->pflags;
    const uint64_t amask = h->amask;
    const bool rv32 = h->xlen == 32;
    const unsigned shm = h->xlen - 1;
    /* all-ones when misaligned accesses trap, else 0 (QEMU performs them) */
    const uint64_t align = s->cfg.misaligned_trap ? UINT64_MAX : 0;
    /* fast-path state kept in registers; it changes only through traps (refreshed below)
     * and through CSR writes and xRET, which end the slice */
    uint64_t fbase = h->fast_base, flimit = h->fast_limit;
    bool ffetch = h->fast_fetch;
    const uint64_t base_exec = h->executed;
    uint64_t pc = h->pc;
    uint64_t left = budget; /* instructions still allowed in this slice */
    uint64_t page_pc = 1;   /* odd: no page yet */
    hinsn *slots = NULL;
    uint64_t cause = 0, tval = 0;
    uint8_t ipriv = h->priv;
    const hinsn *d = NULL;

#define SYNC() (h->executed = base_exec + (budget - left))
#define END_SLICE() (budget -= left, left = 0)
#define EXC(c, t)                                                                                  \
    do {                                                                                           \
        cause = (c);                                                                               \
        tval = (t);                                                                                \
        goto exception;                                                                            \
    } while (0)
#define EA() ((X(d->rs1) + (uint64_t)(int64_t)d->imm) & amask)
/* Note the instruction's data access for its record (tk_sim_set_mem_trace). */
#define MASKB(nb) ((nb) >= 8 ? ~0ull : (1ull << (8 * (nb))) - 1)
#define MNOTE(fl, a, v, nb)                                                                        \
    do {                                                                                           \
        if (mtrace) {                                                                              \
            h->m_addr = (a);                                                                       \
            h->m_size = (uint8_t)(nb);                                                             \
            h->m_flags |= (fl);                                                                    \
            if ((fl)&TK_HART_M_LOAD)                                                               \
                h->m_rdata = (uint64_t)(v)&MASKB(nb);                                              \
            else                                                                                   \
                h->m_wdata = (uint64_t)(v)&MASKB(nb);                                              \
        }                                                                                          \
    } while (0)
#define LOAD(T, nb, dst)                                                                           \
    do {                                                                                           \
        uint64_t a_ = EA(), o_ = a_ - fbase;                                                       \
        T t_;                                                                                      \
        if (TK_LIKELY(o_ < flimit && !(a_ & ((nb)-1u) & align))) {                                 \
            memcpy(&t_, mem + o_, nb);                                                             \
        } else {                                                                                   \
            uint64_t v_ = 0;                                                                       \
            int c_;                                                                                \
            SYNC();                                                                                \
            c_ = tk__mem_load(s, h, a_, nb, &v_);                                                  \
            if (c_)                                                                                \
                EXC((uint64_t)(c_ - 1), a_);                                                       \
            t_ = (T)v_;                                                                            \
        }                                                                                          \
        dst = t_;                                                                                  \
        MNOTE(TK_HART_M_LOAD, a_, t_, nb);                                                         \
    } while (0)
#define STORE(nb, val)                                                                             \
    do {                                                                                           \
        uint64_t a_ = EA(), o_ = a_ - fbase, v_ = (val);                                           \
        MNOTE(TK_HART_M_STORE, a_, v_, nb);                                                        \
        if (TK_LIKELY(o_ < flimit && !(a_ & ((nb)-1u) & align))) {                                 \
            memcpy(mem + o_, &v_, nb);                                                             \
            if (TK_UNLIKELY(pflags[o_ >> PAGE_SHIFT])) {                                           \
                if (pflags[o_ >> PAGE_SHIFT] & PF_CODE)                                            \
                    tk__ram_invalidate(r0, a_, nb);                                                \
                if ((pflags[o_ >> PAGE_SHIFT] & PF_WATCH) && a_ < s->tohost + 8 &&                 \
                    a_ + (nb) > s->tohost) {                                                       \
                    SYNC();                                                                        \
                    tk__htif_poke(s);                                                              \
                    END_SLICE();                                                                   \
                }                                                                                  \
            }                                                                                      \
        } else {                                                                                   \
            int c_;                                                                                \
            SYNC();                                                                                \
            c_ = tk__mem_store(s, h, a_, nb, v_);                                                  \
            if (c_)                                                                                \
                EXC((uint64_t)(c_ - 1), a_);                                                       \
            END_SLICE(); /* a device may have raised an interrupt or ended the run */              \
        }                                                                                          \
    } while (0)

    while (left) {
        uint64_t npc, off = pc - page_pc;
        if (TK_UNLIKELY(off >= PAGE_SIZE)) {
            slots = fetch_page(s, pc, &page_pc, &cr);
            if (!slots) {
                page_pc = 1;
                left--;
                d = NULL;
                EXC(1, pc);
            }
            off = pc - page_pc;
            if (!ffetch) {
                /* PMP applies to fetches: check this one and make the next miss too */
                page_pc = 1;
                if (!tk__pmp_ok(h, pc, 2, 4, h->priv)) {
                    left--;
                    d = NULL;
                    EXC(1, pc);
                }
            }
        }
        d = &slots[off >> 1];
        left--;
        if (trace)
            ipriv = h->priv;
    dispatch:
        npc = pc + d->len;
        switch (d->op) {
        case OP_LUI:
            X(d->rd) = (uint64_t)(int64_t)d->imm;
            break;
        case OP_AUIPC: {
            uint64_t v = pc + (uint64_t)(int64_t)d->imm;
            X(d->rd) = rv32 ? sx32(v) : v;
            break;
        }
        case OP_JAL:
            X(d->rd) = rv32 ? sx32(npc) : npc;
            npc = (pc + (uint64_t)(int64_t)d->imm) & amask;
            break;
        case OP_JALR: {
            uint64_t t = EA() & ~1ull;
            X(d->rd) = rv32 ? sx32(npc) : npc;
            npc = t;
            break;
        }
        case OP_BEQ:
            if (X(d->rs1) == X(d->rs2))
                npc = (pc + (uint64_t)(int64_t)d->imm) & amask;
            break;
        case OP_BNE:
            if (X(d->rs1) != X(d->rs2))
                npc = (pc + (uint64_t)(int64_t)d->imm) & amask;
            break;
        case OP_BLT:
            if ((int64_t)X(d->rs1) < (int64_t)X(d->rs2))
                npc = (pc + (uint64_t)(int64_t)d->imm) & amask;
            break;
        case OP_BGE:
            if ((int64_t)X(d->rs1) >= (int64_t)X(d->rs2))
                npc = (pc + (uint64_t)(int64_t)d->imm) & amask;
            break;
        case OP_BLTU:
            if (X(d->rs1) < X(d->rs2))
                npc = (pc + (uint64_t)(int64_t)d->imm) & amask;
            break;
        case OP_BGEU:
            if (X(d->rs1) >= X(d->rs2))
                npc = (pc + (uint64_t)(int64_t)d->imm) & amask;
            break;
        case OP_LB: {
            int8_t v;
            LOAD(int8_t, 1, v);
            X(d->rd) = (uint64_t)(int64_t)v;
            break;
        }
        case OP_LH: {
            int16_t v;
            LOAD(int16_t, 2, v);
            X(d->rd) = (uint64_t)(int64_t)v;
            break;
        }
        case OP_LW: {
            int32_t v;
            LOAD(int32_t, 4, v);
            X(d->rd) = (uint64_t)(int64_t)v;
            break;
        }
        case OP_LD: {
            uint64_t v;
            LOAD(uint64_t, 8, v);
            X(d->rd) = v;
            break;
        }
        case OP_LBU: {
            uint8_t v;
            LOAD(uint8_t, 1, v);
            X(d->rd) = v;
            break;
        }
        case OP_LHU: {
            uint16_t v;
            LOAD(uint16_t, 2, v);
            X(d->rd) = v;
            break;
        }
        case OP_LWU: {
            uint32_t v;
            LOAD(uint32_t, 4, v);
            X(d->rd) = v;
            break;
        }
        case OP_SB:
            STORE(1, X(d->rs2));
            break;
        case OP_SH:
            STORE(2, X(d->rs2));
            break;
        case OP_SW:
            STORE(4, X(d->rs2));
            break;
        case OP_SD:
            STORE(8, X(d->rs2));
            break;
        case OP_ADDI:
            X(d->rd) = X(d->rs1) + (uint64_t)(int64_t)d->imm;
            break;
        case OP_SLTI:
            X(d->rd) = (int64_t)X(d->rs1) < (int64_t)d->imm;
            break;
        case OP_SLTIU:
            X(d->rd) = X(d->rs1) < (uint64_t)(int64_t)d->imm;
            break;
        case OP_XORI:
            X(d->rd) = X(d->rs1) ^ (uint64_t)(int64_t)d->imm;
            break;
        case OP_ORI:
            X(d->rd) = X(d->rs1) | (uint64_t)(int64_t)d->imm;
            break;
        case OP_ANDI:
            X(d->rd) = X(d->rs1) & (uint64_t)(int64_t)d->imm;
            break;
        case OP_SLLI:
            X(d->rd) = X(d->rs1) << d->imm;
            break;
        case OP_SRLI:
            X(d->rd) = X(d->rs1) >> d->imm;
            break;
        case OP_SRAI:
            X(d->rd) = (uint64_t)((int64_t)X(d->rs1) >> d->imm);
            break;
        case OP_ADD:
            X(d->rd) = X(d->rs1) + X(d->rs2);
            break;
        case OP_SUB:
            X(d->rd) = X(d->rs1) - X(d->rs2);
            break;
        case OP_SLL:
            X(d->rd) = X(d->rs1) << (X(d->rs2) & 63u);
            break;
        case OP_SLT:
            X(d->rd) = (int64_t)X(d->rs1) < (int64_t)X(d->rs2);
            break;
        case OP_SLTU:
            X(d->rd) = X(d->rs1) < X(d->rs2);
            break;
        case OP_XOR:
            X(d->rd) = X(d->rs1) ^ X(d->rs2);
            break;
        case OP_SRL:
            X(d->rd) = X(d->rs1) >> (X(d->rs2) & 63u);
            break;
        case OP_SRA:
            X(d->rd) = (uint64_t)((int64_t)X(d->rs1) >> (X(d->rs2) & 63u));
            break;
        case OP_OR:
            X(d->rd) = X(d->rs1) | X(d->rs2);
            break;
        case OP_AND:
            X(d->rd) = X(d->rs1) & X(d->rs2);
            break;
        case OP_ADDIW:
            X(d->rd) = sx32(X(d->rs1) + (uint64_t)(int64_t)d->imm);
            break;
        case OP_SLLIW:
            X(d->rd) = sx32((uint32_t)X(d->rs1) << d->imm);
            break;
        case OP_SRLIW:
            X(d->rd) = sx32((uint32_t)X(d->rs1) >> d->imm);
            break;
        case OP_SRAIW:
            X(d->rd) = (uint64_t)(int64_t)((int32_t)(uint32_t)X(d->rs1) >> d->imm);
            break;
        case OP_ADDW:
            X(d->rd) = sx32(X(d->rs1) + X(d->rs2));
            break;
        case OP_SUBW:
            X(d->rd) = sx32(X(d->rs1) - X(d->rs2));
            break;
        case OP_SLLW:
            X(d->rd) = sx32((uint32_t)X(d->rs1) << (X(d->rs2) & 31u));
            break;
        case OP_SRLW:
            X(d->rd) = sx32((uint32_t)X(d->rs1) >> (X(d->rs2) & 31u));
            break;
        case OP_SRAW:
            X(d->rd) = (uint64_t)(int64_t)((int32_t)(uint32_t)X(d->rs1) >> (X(d->rs2) & 31u));
            break;
        case OP_MUL:
            X(d->rd) = X(d->rs1) * X(d->rs2);
            break;
        case OP_MULH:
            X(d->rd) = (uint64_t)(((__int128)(int64_t)X(d->rs1) * (int64_t)X(d->rs2)) >> 64);
            break;
        case OP_MULHSU:
            X(d->rd) = (uint64_t)(((__int128)(int64_t)X(d->rs1) * (__int128)X(d->rs2)) >> 64);
            break;
        case OP_MULHU:
            X(d->rd) = (uint64_t)(((unsigned __int128)X(d->rs1) * X(d->rs2)) >> 64);
            break;
        case OP_DIV: {
            int64_t a = (int64_t)X(d->rs1), b = (int64_t)X(d->rs2);
            X(d->rd) = b == 0                        ? UINT64_MAX
                       : (a == INT64_MIN && b == -1) ? (uint64_t)a
                                                     : (uint64_t)(a / b);
            break;
        }
        case OP_DIVU: {
            uint64_t a = X(d->rs1), b = X(d->rs2);
            X(d->rd) = b == 0 ? UINT64_MAX : a / b;
            break;
        }
        case OP_REM: {
            int64_t a = (int64_t)X(d->rs1), b = (int64_t)X(d->rs2);
            X(d->rd) = b == 0 ? (uint64_t)a : (a == INT64_MIN && b == -1) ? 0 : (uint64_t)(a % b);
            break;
        }
        case OP_REMU: {
            uint64_t a = X(d->rs1), b = X(d->rs2);
            X(d->rd) = b == 0 ? a : a % b;
            break;
        }
        case OP_MULW:
            X(d->rd) = sx32(X(d->rs1) * X(d->rs2));
            break;
        case OP_DIVW: {
            int32_t a = (int32_t)X(d->rs1), b = (int32_t)X(d->rs2);
            X(d->rd) = b == 0                        ? UINT64_MAX
                       : (a == INT32_MIN && b == -1) ? (uint64_t)(int64_t)a
                                                     : (uint64_t)(int64_t)(a / b);
            break;
        }
        case OP_DIVUW: {
            uint32_t a = (uint32_t)X(d->rs1), b = (uint32_t)X(d->rs2);
            X(d->rd) = b == 0 ? UINT64_MAX : sx32(a / b);
            break;
        }
        case OP_REMW: {
            int32_t a = (int32_t)X(d->rs1), b = (int32_t)X(d->rs2);
            X(d->rd) = b == 0                        ? (uint64_t)(int64_t)a
                       : (a == INT32_MIN && b == -1) ? 0
                                                     : (uint64_t)(int64_t)(a % b);
            break;
        }
        case OP_REMUW: {
            uint32_t a = (uint32_t)X(d->rs1), b = (uint32_t)X(d->rs2);
            X(d->rd) = b == 0 ? sx32(a) : sx32(a % b);
            break;
        }
        case OP_MULH32:
            X(d->rd) =
                sx32((uint64_t)(((int64_t)(int32_t)X(d->rs1) * (int64_t)(int32_t)X(d->rs2)) >> 32));
            break;
        case OP_MULHSU32:
            X(d->rd) = sx32(
                (uint64_t)(((int64_t)(int32_t)X(d->rs1) * (int64_t)(uint32_t)X(d->rs2)) >> 32));
            break;
        case OP_MULHU32:
            X(d->rd) = sx32(((uint64_t)(uint32_t)X(d->rs1) * (uint32_t)X(d->rs2)) >> 32);
            break;
        case OP_FENCE:
            break;
        case OP_FENCE_I:
            for (unsigned i = 0; i < s->nram; i++)
                tk__ram_flush_code(&s->ram[i]);
            break;
        case OP_ECALL:
            EXC(h->priv == TK_PRIV_M ? 11 : h->priv == TK_PRIV_S ? 9 : 8, 0);
        case OP_EBREAK:
            EXC(3, pc);
        case OP_MRET:
        case OP_SRET: {
            int c;
            SYNC();
            c = tk__xret(s, h, d->op == OP_MRET, &npc);
            if (c)
                EXC(2, d->raw);
            END_SLICE();
            break;
        }
        case OP_WFI:
            /* QEMU's rule: TW traps below M; U-mode WFI traps when S-mode exists */
            if (h->priv == TK_PRIV_U || (h->priv == TK_PRIV_S && (h->mstatus & (1ull << 21))))
                EXC(2, d->raw);
            if (!(h->mip & h->mie))
                h->wfi = true;
            END_SLICE();
            break;
        case OP_SFENCE_VMA:
            if (h->priv == TK_PRIV_U || (h->priv == TK_PRIV_S && (h->mstatus & (1ull << 20))))
                EXC(2, d->raw);
            break;
        case OP_CSRRW:
        case OP_CSRRS:
        case OP_CSRRC:
        case OP_CSRRWI:
        case OP_CSRRSI:
        case OP_CSRRCI: {
            unsigned k = (unsigned)(d->op - OP_CSRRW) % 3u;
            bool imm = d->op >= OP_CSRRWI;
            uint64_t src = imm ? d->rs1 : X(d->rs1), old = 0;
            bool wr = k == 0 || d->rs1 != 0;
            int c;
            SYNC();
            c = tk__csr_op(s, h, (unsigned)d->imm & 0xfffu, k, src, wr, !(k == 0 && d->rd == 0),
                           &old);
            if (c < 0) {
                left++;
                stop_unsupported(s, h, pc, d->raw, d->len, "virtual memory (satp) not modelled");
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
                h->m_flags =
                    (uint8_t)(TK_HART_M_CSR | (!(k == 0 && d->rd == 0) ? TK_HART_M_LOAD : 0) |
                              (wr ? TK_HART_M_STORE : 0));
            }
            END_SLICE();
            break;
        }
        case OP_AMO: {
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
                break;
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
                break;
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
            break;
        }
        case OP_FLW:
        case OP_FLD: {
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
            break;
        }
        case OP_FSW:
            if (!(h->mstatus & (3ull << 13)))
                EXC(2, d->raw);
            STORE(4, h->f[d->rs2]);
            break;
        case OP_FSD:
            if (!(h->mstatus & (3ull << 13)))
                EXC(2, d->raw);
            STORE(8, h->f[d->rs2]);
            break;
        case OP_FP: {
            int c = tk__fp_exec(h, d);
            if (c < 0) {
                left++;
                stop_unsupported(s, h, pc, d->raw, d->len,
                                 "rounding mode RMM on FP arithmetic not modelled");
                goto out;
            }
            if (c)
                EXC(2, d->raw);
            break;
        }
        /* Zba */
        case OP_SH1ADD:
            X(d->rd) = (X(d->rs1) << 1) + X(d->rs2);
            goto fix32;
        case OP_SH2ADD:
            X(d->rd) = (X(d->rs1) << 2) + X(d->rs2);
            goto fix32;
        case OP_SH3ADD:
            X(d->rd) = (X(d->rs1) << 3) + X(d->rs2);
            goto fix32;
        case OP_ADD_UW:
            X(d->rd) = (uint64_t)(uint32_t)X(d->rs1) + X(d->rs2);
            break;
        case OP_SH1ADD_UW:
            X(d->rd) = ((uint64_t)(uint32_t)X(d->rs1) << 1) + X(d->rs2);
            break;
        case OP_SH2ADD_UW:
            X(d->rd) = ((uint64_t)(uint32_t)X(d->rs1) << 2) + X(d->rs2);
            break;
        case OP_SH3ADD_UW:
            X(d->rd) = ((uint64_t)(uint32_t)X(d->rs1) << 3) + X(d->rs2);
            break;
        case OP_SLLI_UW:
            X(d->rd) = (uint64_t)(uint32_t)X(d->rs1) << d->imm;
            break;
        /* Zbb */
        case OP_ANDN:
            X(d->rd) = X(d->rs1) & ~X(d->rs2);
            break;
        case OP_ORN:
            X(d->rd) = X(d->rs1) | ~X(d->rs2);
            break;
        case OP_XNOR:
            X(d->rd) = ~(X(d->rs1) ^ X(d->rs2));
            break;
        case OP_CLZ:
            X(d->rd) = X(d->rs1) ? (uint64_t)__builtin_clzll(X(d->rs1)) : 64;
            break;
        case OP_CTZ:
            X(d->rd) = X(d->rs1) ? (uint64_t)__builtin_ctzll(X(d->rs1)) : 64;
            break;
        case OP_CPOP:
            X(d->rd) = (uint64_t)__builtin_popcountll(X(d->rs1));
            break;
        case OP_CLZW: {
            uint32_t v = (uint32_t)X(d->rs1);
            X(d->rd) = v ? (uint64_t)__builtin_clz(v) : 32;
            break;
        }
        case OP_CTZW: {
            uint32_t v = (uint32_t)X(d->rs1);
            X(d->rd) = v ? (uint64_t)__builtin_ctz(v) : 32;
            break;
        }
        case OP_CPOPW:
            X(d->rd) = (uint64_t)__builtin_popcount((uint32_t)X(d->rs1));
            break;
        case OP_MAX:
            X(d->rd) = (int64_t)X(d->rs1) > (int64_t)X(d->rs2) ? X(d->rs1) : X(d->rs2);
            break;
        case OP_MIN:
            X(d->rd) = (int64_t)X(d->rs1) < (int64_t)X(d->rs2) ? X(d->rs1) : X(d->rs2);
            break;
        case OP_MAXU:
            X(d->rd) = X(d->rs1) > X(d->rs2) ? X(d->rs1) : X(d->rs2);
            break;
        case OP_MINU:
            X(d->rd) = X(d->rs1) < X(d->rs2) ? X(d->rs1) : X(d->rs2);
            break;
        case OP_SEXT_B:
            X(d->rd) = (uint64_t)(int64_t)(int8_t)X(d->rs1);
            break;
        case OP_SEXT_H:
            X(d->rd) = (uint64_t)(int64_t)(int16_t)X(d->rs1);
            break;
        case OP_ZEXT_H:
            X(d->rd) = (uint16_t)X(d->rs1);
            break;
        case OP_ROL: {
            unsigned k = X(d->rs2) & 63u;
            X(d->rd) = (X(d->rs1) << k) | (X(d->rs1) >> ((64 - k) & 63u));
            break;
        }
        case OP_ROR:
        case OP_RORI: {
            unsigned k = (d->op == OP_RORI ? (unsigned)d->imm : (unsigned)X(d->rs2)) & 63u;
            X(d->rd) = (X(d->rs1) >> k) | (X(d->rs1) << ((64 - k) & 63u));
            break;
        }
        case OP_ROLW: {
            uint32_t v = (uint32_t)X(d->rs1);
            unsigned k = X(d->rs2) & 31u;
            X(d->rd) = sx32((v << k) | (v >> ((32 - k) & 31u)));
            break;
        }
        case OP_RORW:
        case OP_RORIW: {
            uint32_t v = (uint32_t)X(d->rs1);
            unsigned k = (d->op == OP_RORIW ? (unsigned)d->imm : (unsigned)X(d->rs2)) & 31u;
            X(d->rd) = sx32((v >> k) | (v << ((32 - k) & 31u)));
            break;
        }
        case OP_ORC_B: {
            uint64_t v = X(d->rs1), o = 0;
            for (unsigned b = 0; b < 64; b += 8)
                if ((v >> b) & 0xffu)
                    o |= 0xffull << b;
            X(d->rd) = o;
            goto fix32;
        }
        case OP_REV8:
            X(d->rd) =
                rv32 ? sx32(__builtin_bswap32((uint32_t)X(d->rs1))) : __builtin_bswap64(X(d->rs1));
            break;
        /* Zbs */
        case OP_BCLR:
            X(d->rd) = X(d->rs1) & ~(1ull << (X(d->rs2) & shm));
            goto fix32;
        case OP_BCLRI:
            X(d->rd) = X(d->rs1) & ~(1ull << d->imm);
            goto fix32;
        case OP_BSET:
            X(d->rd) = X(d->rs1) | (1ull << (X(d->rs2) & shm));
            goto fix32;
        case OP_BSETI:
            X(d->rd) = X(d->rs1) | (1ull << d->imm);
            goto fix32;
        case OP_BINV:
            X(d->rd) = X(d->rs1) ^ (1ull << (X(d->rs2) & shm));
            goto fix32;
        case OP_BINVI:
            X(d->rd) = X(d->rs1) ^ (1ull << d->imm);
            goto fix32;
        case OP_BEXT:
            X(d->rd) = (X(d->rs1) >> (X(d->rs2) & shm)) & 1u;
            break;
        case OP_BEXTI:
            X(d->rd) = (X(d->rs1) >> d->imm) & 1u;
            break;
        case OP_ILLEGAL:
            EXC(2, d->raw);
        case OP_UNDECODED: {
            /* first execution of this slot: decode it, then dispatch again */
            uint64_t bad = pc;
            if (decode_slot(s, h, cr, pc, (hinsn *)d, &bad)) {
                d = NULL;
                EXC(1, bad);
            }
            goto dispatch;
        }
        case OP_UNSUPPORTED:
        default:
            left++;
            stop_unsupported(s, h, pc, d->raw, d->len, "unsupported instruction");
            goto out;
        fix32:
            if (rv32)
                X(d->rd) = sx32(X(d->rd));
            break;
        }
        X(0) = 0;
        if (trace) {
            tk_hart_retire *rr = &h->rbuf[h->rn++];
            uint8_t it = d->itype;
            if (it == TK_ITYPE_NOT_TAKEN && npc != pc + d->len)
                it = TK_ITYPE_TAKEN;
            rr->pc = pc;
            rr->cause = 0;
            rr->tval = 0;
            rr->epc = 0;
            rr->insn = d->raw;
            rr->hart = (uint16_t)h->id;
            rr->len = d->len;
            rr->itype = it;
            rr->priv = ipriv;
            rr->flags = (uint8_t)(TK_HART_F_RETIRED | (d->upper ? TK_HART_F_UPPER : 0));
            rr->rd = d->rd;
            rr->rs1 = d->rs1;
            rr->mflags = 0;
            if (mtrace && h->m_flags) {
                rr->maddr = h->m_addr;
                rr->mrdata = h->m_rdata;
                rr->mwdata = h->m_wdata;
                rr->msize = h->m_size;
                rr->mflags = h->m_flags;
                h->m_flags = 0;
            }
            if (TK_UNLIKELY(h->rn == RBUF_CAP))
                flush_records(s, h, true);
        }
        pc = npc;
        continue;

    exception:
        /* The faulting instruction is reported (spike CSV style) but does not complete; ecall
         * and ebreak are reported as retired, as the ingress port wants (iretire = 1). */
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
        ffetch = h->fast_fetch;
        pc = h->pc;
        X(0) = 0;
    }
out:
    h->executed = base_exec + (budget - left);
    h->pc = pc;
    return budget - left;
#undef SYNC
#undef END_SLICE
#undef EXC
#undef EA
#undef LOAD
#undef STORE
#undef MNOTE
#undef MASKB
}

uint64_t tk__hart_run(tk_sim *s, hart *h, uint64_t budget)
{
    if (s->retire)
        return s->mem_trace ? run(s, h, budget, true, true) : run(s, h, budget, true, false);
    return run(s, h, budget, false, false);
}

void tk__hart_flush_records(tk_sim *s, hart *h, bool keep_last)
{
    flush_records(s, h, keep_last);
}
