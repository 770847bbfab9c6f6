/* SPDX-License-Identifier: BSD-2-Clause */
/* Control and status registers, trap entry, xRET and interrupt selection (RISC-V privileged
 * spec: machine-level and supervisor-level CSRs, "Machine Trap Delegation Registers"). */
#include <string.h>

#include "hart_internal.h"

#define MS_SIE (1ull << 1)
#define MS_MIE (1ull << 3)
#define MS_SPIE (1ull << 5)
#define MS_MPIE (1ull << 7)
#define MS_SPP (1ull << 8)
#define MS_MPP (3ull << 11)
#define MS_FS (3ull << 13)
#define MS_MPRV (1ull << 17)
#define MS_SUM (1ull << 18)
#define MS_MXR (1ull << 19)
#define MS_TVM (1ull << 20)
#define MS_TW (1ull << 21)
#define MS_TSR (1ull << 22)
#define MS_UXL (3ull << 32)
#define MS_SXL (3ull << 34)

#define M_WRITABLE                                                                                 \
    (MS_SIE | MS_MIE | MS_SPIE | MS_MPIE | MS_SPP | MS_MPP | MS_FS | MS_MPRV | MS_SUM | MS_MXR |   \
     MS_TVM | MS_TW | MS_TSR)
#define S_VISIBLE (MS_SIE | MS_SPIE | MS_SPP | MS_FS | MS_SUM | MS_MXR | MS_UXL)

#define IRQ_S_SOFT 1
#define IRQ_M_SOFT 3
#define IRQ_S_TIMER 5
#define IRQ_M_TIMER 7
#define IRQ_S_EXT 9
#define IRQ_M_EXT 11
#define S_INTS ((1ull << IRQ_S_SOFT) | (1ull << IRQ_S_TIMER) | (1ull << IRQ_S_EXT))
#define M_INTS ((1ull << IRQ_M_SOFT) | (1ull << IRQ_M_TIMER) | (1ull << IRQ_M_EXT))

void tk__hart_reset(hart *h, unsigned id, unsigned xlen)
{
    memset(h->x, 0, sizeof(h->x));
    memset(h->f, 0, sizeof(h->f));
    h->id = id;
    h->xlen = xlen;
    h->amask = xlen == 32 ? 0xffffffffull : UINT64_MAX;
    h->priv = TK_PRIV_M;
    h->misa = (xlen == 32 ? (1ull << 30) : (2ull << 62)) | (1u << 0) | (1u << 2) | (1u << 3) |
              (1u << 5) | (1u << 8) | (1u << 12) | (1u << 18) | (1u << 20);
    h->mstatus = xlen == 64 ? (2ull << 32) | (2ull << 34) : 0;
    tk__hart_update_fast(h);
}

static uint64_t sext_xlen(const hart *h, uint64_t v)
{
    return h->xlen == 32 ? (uint64_t)(int64_t)(int32_t)v : v;
}

static uint64_t read_mstatus(const hart *h)
{
    uint64_t v = h->mstatus;
    if ((v & MS_FS) == MS_FS)
        v |= h->xlen == 32 ? (1ull << 31) : (1ull << 63);
    return v;
}

int tk__irq_pending(const hart *h)
{
    static const int order[6] = {IRQ_M_EXT, IRQ_M_SOFT, IRQ_M_TIMER,
                                 IRQ_S_EXT, IRQ_S_SOFT, IRQ_S_TIMER};
    uint64_t pend = h->mip & h->mie;
    uint64_t m_en, s_en, take;
    if (!pend)
        return -1;
    m_en = (h->priv < TK_PRIV_M || (h->mstatus & MS_MIE)) ? ~h->mideleg : 0;
    s_en =
        (h->priv < TK_PRIV_S || (h->priv == TK_PRIV_S && (h->mstatus & MS_SIE))) ? h->mideleg : 0;
    take = pend & m_en;
    if (!take)
        take = pend & s_en;
    if (!take)
        return -1;
    for (unsigned i = 0; i < 6; i++)
        if (take & (1ull << order[i]))
            return order[i];
    return -1;
}

void tk__trap(tk_sim *s, hart *h, uint64_t cause, bool interrupt, uint64_t tval, uint64_t epc)
{
    uint64_t deleg = interrupt ? h->mideleg : h->medeleg;
    uint64_t ibit = h->xlen == 32 ? (1ull << 31) : (1ull << 63);
    uint64_t vec;
    (void)s;
    h->res_valid = false;
    h->wfi = false;
    if (h->priv <= TK_PRIV_S && ((deleg >> cause) & 1u)) {
        h->scause = cause | (interrupt ? ibit : 0);
        h->sepc = epc;
        h->stval = tval;
        h->mstatus = (h->mstatus & ~(MS_SPIE | MS_SPP)) | ((h->mstatus & MS_SIE) ? MS_SPIE : 0) |
                     (h->priv == TK_PRIV_S ? MS_SPP : 0);
        h->mstatus &= ~MS_SIE;
        vec = h->stvec;
        h->priv = TK_PRIV_S;
    } else {
        h->mcause = cause | (interrupt ? ibit : 0);
        h->mepc = epc;
        h->mtval = tval;
        h->mstatus = (h->mstatus & ~(MS_MPIE | MS_MPP)) | ((h->mstatus & MS_MIE) ? MS_MPIE : 0) |
                     ((uint64_t)h->priv << 11);
        h->mstatus &= ~MS_MIE;
        vec = h->mtvec;
        h->priv = TK_PRIV_M;
    }
    h->pc = ((vec & ~3ull) + ((interrupt && (vec & 1u)) ? 4 * cause : 0)) & h->amask;
    tk__hart_update_fast(h);
}

/* Returns 0 or an exception cause + 1. */
int tk__xret(tk_sim *s, hart *h, bool m, uint64_t *npc)
{
    (void)s;
    if (m) {
        unsigned mpp;
        if (h->priv != TK_PRIV_M)
            return 2 + 1;
        mpp = (unsigned)((h->mstatus >> 11) & 3u);
        h->mstatus =
            (h->mstatus & ~(MS_MIE | MS_MPP)) | ((h->mstatus & MS_MPIE) ? MS_MIE : 0) | MS_MPIE;
        if (mpp != TK_PRIV_M)
            h->mstatus &= ~MS_MPRV;
        h->priv = (uint8_t)(mpp == 2 ? TK_PRIV_U : mpp);
        *npc = h->mepc & h->amask;
    } else {
        unsigned spp;
        if (h->priv == TK_PRIV_U || (h->priv == TK_PRIV_S && (h->mstatus & MS_TSR)))
            return 2 + 1;
        spp = (h->mstatus & MS_SPP) ? TK_PRIV_S : TK_PRIV_U;
        h->mstatus =
            (h->mstatus & ~(MS_SIE | MS_SPP)) | ((h->mstatus & MS_SPIE) ? MS_SIE : 0) | MS_SPIE;
        h->mstatus &= ~MS_MPRV;
        h->priv = (uint8_t)spp;
        *npc = h->sepc & h->amask;
    }
    h->res_valid = false;
    tk__hart_update_fast(h);
    return 0;
}

static uint64_t mtime_now(const tk_sim *s)
{
    return sim_vclock(s) / s->cfg.timebase_div;
}

/* Counters follow QEMU's icount clock: cycle and instret both count completed instructions
 * (including the reading one) plus sleeping time, which is what programs printing their
 * cycle counts expect under `-icount shift=0`. */
static uint64_t counter(const tk_sim *s, const hart *h)
{
    (void)h;
    return sim_vclock(s);
}

/* Read (and then possibly write) one CSR. op: 0 write, 1 set, 2 clear. */
int tk__csr_op(tk_sim *s, hart *h, unsigned csr, unsigned op, uint64_t src, bool write, bool read,
               uint64_t *old)
{
    unsigned minpriv = (csr >> 8) & 3u;
    uint64_t v = 0;
    uint64_t *reg = NULL;
    uint64_t wmask = UINT64_MAX;
    bool rv32 = h->xlen == 32;
    (void)read;
    if (h->priv < minpriv)
        return 2 + 1;
    if (write && (csr >> 10) == 3)
        return 2 + 1;

    switch (csr) {
    case 0x001:
    case 0x002:
    case 0x003:
        if ((h->mstatus & MS_FS) == 0)
            return 2 + 1;
        v = csr == 1 ? h->fflags : csr == 2 ? h->frm : (h->frm << 5) | h->fflags;
        break;
    case 0xc00:
    case 0xc01:
    case 0xc02:
    case 0xc80:
    case 0xc81:
    case 0xc82: {
        unsigned bit = csr & 0x1fu;
        if ((csr & 0x80) && !rv32)
            return 2 + 1;
        if (h->priv < TK_PRIV_M && !((h->mcounteren >> bit) & 1u))
            return 2 + 1;
        if (h->priv < TK_PRIV_S && !((h->scounteren >> bit) & 1u))
            return 2 + 1;
        if (bit == 1) {
            if (!s->cfg.clint)
                return 2 + 1; /* no timer: QEMU without an ACLINT traps too */
            v = mtime_now(s);
        } else {
            v = counter(s, h) + (bit == 0 ? h->cycle_off : h->instret_off);
        }
        if (csr & 0x80)
            v >>= 32;
        break;
    }
    case 0x100:
        v = read_mstatus(h) & (S_VISIBLE | (1ull << 63) | (1ull << 31));
        break;
    case 0x104:
        v = h->mie & h->mideleg;
        break;
    case 0x105:
        reg = &h->stvec;
        break;
    case 0x106:
        reg = &h->scounteren;
        break;
    case 0x10a:
        reg = &h->senvcfg;
        break;
    case 0x140:
        reg = &h->sscratch;
        break;
    case 0x141:
        reg = &h->sepc;
        wmask = ~1ull;
        break;
    case 0x142:
        reg = &h->scause;
        break;
    case 0x143:
        reg = &h->stval;
        break;
    case 0x144:
        v = h->mip & h->mideleg;
        break;
    case 0x180:
        if (h->priv == TK_PRIV_S && (h->mstatus & MS_TVM))
            return 2 + 1;
        reg = &h->satp;
        break;
    case 0xf11:
    case 0xf12:
    case 0xf13:
    case 0xf15:
        v = 0;
        break;
    case 0xf14:
        v = h->id;
        break;
    case 0x300:
        v = read_mstatus(h);
        break;
    case 0x301:
        v = h->misa;
        break;
    case 0x302:
        reg = &h->medeleg;
        wmask = 0xb3ffull & ~(1ull << 11);
        break;
    case 0x303:
        reg = &h->mideleg;
        wmask = S_INTS;
        break;
    case 0x304:
        reg = &h->mie;
        wmask = S_INTS | M_INTS;
        break;
    case 0x305:
        reg = &h->mtvec;
        break;
    case 0x306:
        reg = &h->mcounteren;
        break;
    case 0x30a:
        reg = &h->menvcfg;
        break;
    case 0x310:
        v = 0;
        if (!rv32)
            return 2 + 1;
        break; /* mstatush */
    case 0x31a:
        if (!rv32)
            return 2 + 1;
        v = 0;
        break;
    case 0x320:
        reg = &h->mcountinhibit;
        break;
    case 0x340:
        reg = &h->mscratch;
        break;
    case 0x341:
        reg = &h->mepc;
        wmask = ~1ull;
        break;
    case 0x342:
        reg = &h->mcause;
        break;
    case 0x343:
        reg = &h->mtval;
        break;
    case 0x344:
        v = h->mip;
        break;
    case 0x34a:
    case 0x34b:
        v = 0;
        break;
    case 0x7a0:
        reg = &h->tselect;
        wmask = 0;
        break;
    case 0x7a1:
        v = 0;
        break;
    case 0x7a2:
        reg = &h->tdata2;
        break;
    case 0x7a3:
        v = 0;
        break;
    case 0xb00:
    case 0xb02:
    case 0xb80:
    case 0xb82:
        if ((csr & 0x80) && !rv32)
            return 2 + 1;
        v = counter(s, h) + ((csr & 2) ? h->instret_off : h->cycle_off);
        if (csr & 0x80)
            v >>= 32;
        break;
    default:
        if (csr >= 0x3a0 && csr <= 0x3af) { /* pmpcfg */
            unsigned idx = csr - 0x3a0;
            if (!rv32 && (idx & 1))
                return 2 + 1;
            v = rv32 ? (h->pmpcfg[idx / 2] >> (32 * (idx & 1))) & 0xffffffffu : h->pmpcfg[idx / 2];
            break;
        }
        if (csr >= 0x3b0 && csr <= 0x3ef) {
            reg = &h->pmpaddr[csr - 0x3b0];
            wmask = rv32 ? 0xffffffffull : 0x003fffffffffffffull;
            break;
        }
        if ((csr >= 0xb03 && csr <= 0xb1f) || (csr >= 0x323 && csr <= 0x33f) ||
            (rv32 && csr >= 0xb83 && csr <= 0xb9f)) {
            v = 0; /* hardwired performance counters and events */
            break;
        }
        if ((csr >= 0xc03 && csr <= 0xc1f) || (rv32 && csr >= 0xc83 && csr <= 0xc9f)) {
            unsigned bit = csr & 0x1fu;
            if (h->priv < TK_PRIV_M && !((h->mcounteren >> bit) & 1u))
                return 2 + 1;
            if (h->priv < TK_PRIV_S && !((h->scounteren >> bit) & 1u))
                return 2 + 1;
            v = 0;
            break;
        }
        return 2 + 1;
    }
    if (reg)
        v = *reg;
    *old = sext_xlen(h, v);
    if (!write)
        return 0;

    {
        uint64_t nv = op == 0 ? src : op == 1 ? (v | src) : (v & ~src);
        if (rv32)
            nv &= 0xffffffffull;
        switch (csr) {
        case 0x001:
            h->fflags = (uint32_t)nv & 0x1fu;
            h->mstatus |= MS_FS;
            break;
        case 0x002:
            h->frm = (uint32_t)nv & 7u;
            h->mstatus |= MS_FS;
            break;
        case 0x003:
            h->fflags = (uint32_t)nv & 0x1fu;
            h->frm = (uint32_t)(nv >> 5) & 7u;
            h->mstatus |= MS_FS;
            break;
        case 0x100:
            h->mstatus = (h->mstatus & ~(S_VISIBLE & ~MS_UXL)) | (nv & S_VISIBLE & ~MS_UXL);
            break;
        case 0x104:
            h->mie = (h->mie & ~h->mideleg) | (nv & h->mideleg);
            break;
        case 0x144:
            h->mip = (h->mip & ~(h->mideleg & (1ull << IRQ_S_SOFT))) |
                     (nv & h->mideleg & (1ull << IRQ_S_SOFT));
            break;
        case 0x180:
            if (nv >> (rv32 ? 31 : 60)) {
                /* virtual memory is not modelled: stop rather than run untranslated */
                return -1;
            }
            h->satp = nv;
            break;
        case 0x300:
            h->mstatus = (h->mstatus & ~M_WRITABLE) | (nv & M_WRITABLE);
            if (((h->mstatus >> 11) & 3u) == 2)
                h->mstatus &= ~MS_MPP; /* WARL: reserved MPP reads as U */
            break;
        case 0x301:
            break; /* misa writes are ignored (WARL) */
        case 0x305:
        case 0x105:
            if ((nv & 3u) < 2)
                *reg = nv;
            break;
        case 0x344: {
            uint64_t m = (1ull << IRQ_S_SOFT) | (1ull << IRQ_S_TIMER) | (1ull << IRQ_S_EXT);
            h->mip = (h->mip & ~m) | (nv & m);
            break;
        }
        case 0xb00:
        case 0xb02: {
            uint64_t cur = counter(s, h);
            if (csr == 0xb00)
                h->cycle_off = nv - cur;
            else
                h->instret_off = nv - cur;
            break;
        }
        case 0xb80:
        case 0xb82:
            break;
        default:
            if (csr >= 0x3a0 && csr <= 0x3af) {
                unsigned idx = csr - 0x3a0;
                uint64_t cur = h->pmpcfg[idx / 2];
                if (rv32) {
                    unsigned sh = 32 * (idx & 1);
                    cur = (cur & ~(0xffffffffull << sh)) | (nv << sh);
                } else {
                    cur = nv;
                }
                /* locked entries keep their value; W without R is reserved (reads as 0) */
                for (unsigned b = 0; b < 8; b++) {
                    uint64_t oldb = (h->pmpcfg[idx / 2] >> (8 * b)) & 0xffu;
                    uint64_t newb = (cur >> (8 * b)) & 0xffu;
                    if (oldb & 0x80u)
                        newb = oldb;
                    else if ((newb & 3u) == 2u)
                        newb &= ~3ull;
                    cur = (cur & ~(0xffull << (8 * b))) | (newb << (8 * b));
                }
                h->pmpcfg[idx / 2] = cur;
            } else if (reg && wmask) {
                *reg = (*reg & ~wmask) | (nv & wmask);
            }
            break;
        }
    }
    tk__hart_update_fast(h);
    return 0;
}
