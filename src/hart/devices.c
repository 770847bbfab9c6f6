/* SPDX-License-Identifier: BSD-2-Clause */
/* Devices of the hart model: spike-style HTIF (tohost/fromhost mailbox), a CLINT (SiFive
 * layout: msip, mtimecmp, mtime) and a 16550-style UART transmitter. */
#include <string.h>

#include "hart_internal.h"

#define MIP_MSIP (1ull << 3)
#define MIP_MTIP (1ull << 7)

/* ---- HTIF ---- */

static uint64_t ram_rd64(tk_sim *s, uint64_t addr)
{
    uint64_t v = 0;
    tk_sim_read_mem(s, addr, &v, 8);
    return v;
}

static void ram_wr64(tk_sim *s, uint64_t addr, uint64_t v)
{
    tk_sim_write_mem(s, addr, &v, 8);
}

static void console(tk_sim *s, const char *p, size_t n)
{
    if (s->console && n)
        s->console(s->console_ctx, p, n);
}

/* The syscall block of riscv-tests/libgloss HTIF: magic_mem[0] = number, [1..3] arguments,
 * the result goes back to magic_mem[0] (spike's syscall proxy). */
static void htif_syscall(tk_sim *s, uint64_t block)
{
    uint64_t m[4];
    int64_t ret = -38; /* ENOSYS */
    for (unsigned i = 0; i < 4; i++)
        m[i] = ram_rd64(s, block + 8 * i);
    if (m[0] == 93) { /* exit */
        s->exited = true;
        s->exit_code = (int64_t)m[1];
        return;
    }
    if (m[0] == 64) { /* write(fd, buf, len) */
        char buf[256];
        uint64_t left = m[3], p = m[2];
        ret = 0;
        while (left) {
            size_t n = left > sizeof(buf) ? sizeof(buf) : (size_t)left;
            if (tk_sim_read_mem(s, p, buf, n) != TK_OK) {
                ret = -14; /* EFAULT */
                break;
            }
            if (m[1] == 1 || m[1] == 2)
                console(s, buf, n);
            left -= n;
            p += n;
            ret += (int64_t)n;
        }
    }
    ram_wr64(s, block, (uint64_t)ret);
    ram_wr64(s, s->fromhost, 1);
}

void tk__htif_poke(tk_sim *s)
{
    uint64_t v = ram_rd64(s, s->tohost);
    unsigned dev = (unsigned)(v >> 56), cmd = (unsigned)(v >> 48) & 0xffu;
    uint64_t payload = v & 0xffffffffffffull;
    if (v == 0)
        return;
    if (dev == 0 && cmd == 0) {
        if (payload & 1) {
            s->exited = true;
            s->exit_code = (int64_t)(payload >> 1);
            return;
        }
        ram_wr64(s, s->tohost, 0);
        htif_syscall(s, payload);
        return;
    }
    ram_wr64(s, s->tohost, 0);
    if (dev == 1 && cmd == 1) { /* console putchar */
        char c = (char)(payload & 0xffu);
        console(s, &c, 1);
        ram_wr64(s, s->fromhost, (1ull << 56) | (1ull << 48));
    }
}

/* ---- CLINT ---- */

/* MTIP rises when virtual time reaches the deadline computed as QEMU's ACLINT does when
 * mtimecmp is written: now + (mtimecmp - mtime) ticks, converted to ns. */
static void clint_set_cmp(tk_sim *s, unsigned i, uint64_t cmp)
{
    uint64_t now = sim_vclock(s), div = s->cfg.timebase_div;
    uint64_t mtime = now / div;
    hart *h = &s->harts[i];
    s->mtimecmp[i] = cmp;
    if (cmp <= mtime) {
        h->mip |= MIP_MTIP;
        s->deadline[i] = UINT64_MAX;
        return;
    }
    h->mip &= ~MIP_MTIP;
    if ((cmp - mtime) > (UINT64_MAX - now) / div)
        s->deadline[i] = UINT64_MAX;
    else
        s->deadline[i] = now + (cmp - mtime) * div;
}

void tk__clint_update(tk_sim *s)
{
    uint64_t now = sim_vclock(s);
    for (unsigned i = 0; i < s->nharts; i++)
        if (now >= s->deadline[i]) {
            s->harts[i].mip |= MIP_MTIP;
            s->deadline[i] = UINT64_MAX;
        }
}

static int clint_access(tk_sim *s, uint64_t off, unsigned n, uint64_t *v, bool wr)
{
    uint64_t mtime = sim_vclock(s) / s->cfg.timebase_div;
    if (n != 4 && n != 8)
        return -1;
    if (off < 0x4000) {
        unsigned i = (unsigned)(off / 4);
        if (i >= s->nharts || n != 4)
            return wr ? 0 : (*v = 0, 0);
        if (wr) {
            if (*v & 1)
                s->harts[i].mip |= MIP_MSIP;
            else
                s->harts[i].mip &= ~MIP_MSIP;
        } else {
            *v = (s->harts[i].mip & MIP_MSIP) ? 1 : 0;
        }
        return 0;
    }
    if (off >= 0x4000 && off < 0xbff8) {
        unsigned i = (unsigned)((off - 0x4000) / 8), sh = (unsigned)((off & 4) * 8);
        uint64_t cur;
        if (i >= s->nharts)
            return wr ? 0 : (*v = 0, 0);
        cur = s->mtimecmp[i];
        if (!wr) {
            *v = n == 8 ? cur : (cur >> sh) & 0xffffffffu;
            return 0;
        }
        if (n == 8)
            cur = *v;
        else
            cur = (cur & ~(0xffffffffull << sh)) | ((*v & 0xffffffffull) << sh);
        clint_set_cmp(s, i, cur);
        return 0;
    }
    if (off >= 0xbff8 && off < 0xc000) {
        if (!wr)
            *v = n == 8 ? mtime : (mtime >> ((off & 4) * 8)) & 0xffffffffu;
        return 0; /* writes to mtime are ignored */
    }
    return wr ? 0 : (*v = 0, 0);
}

/* ---- UART (16550 registers; transmit only) ---- */

static int uart_access(tk_sim *s, uint64_t off, uint64_t *v, bool wr)
{
    bool dlab = s->uart_regs[3] & 0x80u;
    if (off >= 8)
        return wr ? 0 : (*v = 0, 0);
    if (wr) {
        if (off == 0 && !dlab) {
            char c = (char)(*v & 0xffu);
            console(s, &c, 1);
        } else {
            s->uart_regs[off] = (uint8_t)*v;
        }
        return 0;
    }
    switch (off) {
    case 0:
        *v = dlab ? s->uart_regs[0] : 0;
        break;
    case 2:
        *v = 0xc1;
        break; /* FIFOs enabled, no interrupt pending */
    case 5:
        *v = 0x60;
        break; /* transmitter empty */
    default:
        *v = s->uart_regs[off];
        break;
    }
    return 0;
}

int tk__dev_load(tk_sim *s, hart *h, uint64_t addr, unsigned n, uint64_t *v, bool *hit)
{
    (void)h;
    *hit = false;
    if (s->cfg.clint && addr - s->cfg.clint_base < 0x10000) {
        *hit = true;
        return clint_access(s, addr - s->cfg.clint_base, n, v, false) ? 5 + 1 : 0;
    }
    if (s->cfg.uart && addr - s->cfg.uart_base < 0x100) {
        *hit = true;
        return uart_access(s, addr - s->cfg.uart_base, v, false);
    }
    return 0;
}

int tk__dev_store(tk_sim *s, hart *h, uint64_t addr, unsigned n, uint64_t v, bool *hit)
{
    (void)h;
    *hit = false;
    if (s->cfg.clint && addr - s->cfg.clint_base < 0x10000) {
        *hit = true;
        return clint_access(s, addr - s->cfg.clint_base, n, &v, true) ? 7 + 1 : 0;
    }
    if (s->cfg.uart && addr - s->cfg.uart_base < 0x100) {
        *hit = true;
        return uart_access(s, addr - s->cfg.uart_base, &v, true);
    }
    return 0;
}
