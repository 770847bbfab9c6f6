/* SPDX-License-Identifier: BSD-2-Clause */
/* The simulation: memory, devices and harts, program loading, and the deterministic
 * scheduler that runs harts in slices and delivers interrupts between instructions. */
#include <stdlib.h>
#include <string.h>

#include "hart_internal.h"

void tk_sim_config_init(tk_sim_config *c)
{
    memset(c, 0, sizeof(*c));
    c->size = sizeof(*c);
    c->xlen = 64;
    c->nharts = 1;
    c->ram_base = 0x80000000u;
    c->ram_size = 256u << 20;
    c->ram2_base = 0x20000000u;
    c->ram2_size = 64u << 20;
    c->clint = true;
    c->clint_base = TK_SIM_CLINT_BASE;
    c->uart = true;
    c->uart_base = TK_SIM_UART_BASE;
    c->timebase_div = 100;
    c->quantum = 100;
}

tk_status tk_sim_new(const tk_sim_config *cfg, tk_sim **out)
{
    tk_sim *s;
    tk_status st;
    *out = NULL;
    if (!cfg || (cfg->xlen != 32 && cfg->xlen != 64) || cfg->nharts < 1 || cfg->nharts > 64 ||
        cfg->timebase_div == 0 || cfg->quantum == 0)
        return TK_ERR_INVALID;
    if (cfg->xlen == 32 && cfg->ram_base + cfg->ram_size > (1ull << 32))
        return TK_ERR_INVALID;
    s = calloc(1, sizeof(*s));
    if (!s)
        return TK_ERR_NOMEM;
    s->cfg = *cfg;
    st = tk__ram_init(&s->ram[0], cfg->ram_base, cfg->ram_size);
    if (st == TK_OK && cfg->ram2_size) {
        if (cfg->ram2_base < cfg->ram_base + cfg->ram_size &&
            cfg->ram_base < cfg->ram2_base + cfg->ram2_size)
            st = TK_ERR_INVALID;
        else
            st = tk__ram_init(&s->ram[1], cfg->ram2_base, cfg->ram2_size);
    }
    s->nram = cfg->ram2_size ? 2 : 1;
    if (st != TK_OK) {
        tk_sim_free(s);
        return st;
    }
    s->nharts = cfg->nharts;
    s->harts = calloc(cfg->nharts, sizeof(hart));
    s->mtimecmp = calloc(cfg->nharts, sizeof(uint64_t));
    s->deadline = calloc(cfg->nharts, sizeof(uint64_t));
    if (!s->harts || !s->mtimecmp || !s->deadline) {
        tk_sim_free(s);
        return TK_ERR_NOMEM;
    }
    for (unsigned i = 0; i < cfg->nharts; i++) {
        hart *h = &s->harts[i];
        h->rbase = cfg->ram_base;
        h->rsize = cfg->ram_size;
        tk__hart_reset(h, i, cfg->xlen);
        h->pc = cfg->ram_base;
        h->rbuf = malloc(RBUF_CAP * sizeof(tk_hart_retire));
        if (!h->rbuf) {
            tk_sim_free(s);
            return TK_ERR_NOMEM;
        }
        s->mtimecmp[i] = UINT64_MAX;
        s->deadline[i] = UINT64_MAX;
    }
    *out = s;
    return TK_OK;
}

void tk_sim_free(tk_sim *s)
{
    if (!s)
        return;
    if (s->harts)
        for (unsigned i = 0; i < s->nharts; i++)
            free(s->harts[i].rbuf);
    free(s->harts);
    free(s->mtimecmp);
    free(s->deadline);
    for (unsigned i = 0; i < MAX_RAM; i++)
        tk__ram_free(&s->ram[i]);
    free(s);
}

bool tk__sim_in_ram(const tk_sim *s, uint64_t addr, size_t len)
{
    return tk__sim_ram((tk_sim *)s, addr, len) != NULL;
}

tk_status tk_sim_write_mem(tk_sim *s, uint64_t addr, const void *data, size_t len)
{
    ram *r = tk__sim_ram(s, addr, len);
    if (!r)
        return TK_ERR_NO_CODE;
    memcpy(r->mem + (addr - r->base), data, len);
    for (size_t done = 0; done < len;) {
        uint64_t a = addr + done;
        size_t chunk = PAGE_SIZE - (size_t)((a - r->base) & (PAGE_SIZE - 1));
        if (chunk > len - done)
            chunk = len - done;
        if (r->pflags[(a - r->base) >> PAGE_SHIFT] & PF_CODE)
            tk__ram_invalidate(r, a, (unsigned)chunk);
        done += chunk;
    }
    return TK_OK;
}

tk_status tk_sim_read_mem(const tk_sim *s, uint64_t addr, void *data, size_t len)
{
    const ram *r = tk__sim_ram((tk_sim *)s, addr, len);
    if (!r)
        return TK_ERR_NO_CODE;
    memcpy(data, r->mem + (addr - r->base), len);
    return TK_OK;
}

void tk_sim_set_htif(tk_sim *s, uint64_t tohost, uint64_t fromhost)
{
    s->tohost = tohost;
    s->fromhost = fromhost;
    ram *r = tohost ? tk__sim_ram(s, tohost, 8) : NULL;
    if (r) {
        r->pflags[(tohost - r->base) >> PAGE_SHIFT] |= PF_WATCH;
        r->pflags[(tohost + 7 - r->base) >> PAGE_SHIFT] |= PF_WATCH;
    } else {
        s->tohost = 0;
    }
}

void tk_sim_set_console(tk_sim *s, tk_sim_console_fn fn, void *ctx)
{
    s->console = fn;
    s->console_ctx = ctx;
}

void tk_sim_set_retire(tk_sim *s, tk_hart_retire_fn fn, void *ctx)
{
    s->retire = fn;
    s->retire_ctx = ctx;
}

void tk_sim_set_mem_trace(tk_sim *s, bool on)
{
    s->mem_trace = on;
}

void tk_sim_set_pc(tk_sim *s, unsigned i, uint64_t pc)
{
    if (i < s->nharts)
        s->harts[i].pc = pc;
}
uint64_t tk_sim_get_pc(const tk_sim *s, unsigned i)
{
    return i < s->nharts ? s->harts[i].pc : 0;
}
uint64_t tk_sim_get_xreg(const tk_sim *s, unsigned i, unsigned r)
{
    return i < s->nharts && r < 32 ? s->harts[i].x[r] : 0;
}
void tk_sim_set_xreg(tk_sim *s, unsigned i, unsigned r, uint64_t v)
{
    if (i < s->nharts && r > 0 && r < 32)
        s->harts[i].x[r] = s->cfg.xlen == 32 ? (uint64_t)(int64_t)(int32_t)v : v;
}
uint64_t tk_sim_get_freg(const tk_sim *s, unsigned i, unsigned r)
{
    return i < s->nharts && r < 32 ? s->harts[i].f[r] : 0;
}
unsigned tk_sim_get_priv(const tk_sim *s, unsigned i)
{
    return i < s->nharts ? s->harts[i].priv : 0;
}

tk_status tk_sim_get_csr(tk_sim *s, unsigned i, unsigned csr, uint64_t *value)
{
    hart *h;
    uint8_t priv;
    int c;
    if (i >= s->nharts)
        return TK_ERR_INVALID;
    h = &s->harts[i];
    priv = h->priv;
    h->priv = TK_PRIV_M;
    c = tk__csr_op(s, h, csr, 1, 0, false, true, value);
    h->priv = priv;
    tk__hart_update_fast(h);
    return c ? TK_ERR_INVALID : TK_OK;
}

/* Take a pending interrupt before the hart's next instruction, and flag the record of the
 * last instruction that retired before it (ingress itype 2 goes on that instruction). */
static void take_interrupt(tk_sim *s, hart *h, int irq)
{
    if (s->retire) {
        tk_hart_retire *last = h->rn ? &h->rbuf[h->rn - 1] : NULL;
        if (last && (last->flags & TK_HART_F_RETIRED) && !(last->flags & TK_HART_F_EXCEPTION) &&
            !(last->flags & TK_HART_F_INTERRUPT)) {
            last->flags |= TK_HART_F_INTERRUPT;
            last->cause = (uint64_t)irq;
            last->epc = h->pc;
        } else {
            /* nothing retired since the last trap: report the interrupt on its own */
            tk_hart_retire *rr;
            uint16_t lo = 0;
            if (h->rn == RBUF_CAP)
                tk__hart_flush_records(s, h, false);
            rr = &h->rbuf[h->rn++];
            memset(rr, 0, sizeof(*rr));
            tk_sim_read_mem(s, h->pc, &lo, 2);
            rr->pc = h->pc;
            rr->insn = lo;
            rr->len = (lo & 3u) == 3u ? 4 : 2;
            rr->hart = (uint16_t)h->id;
            rr->priv = h->priv;
            rr->flags = TK_HART_F_INTERRUPT;
            rr->cause = (uint64_t)irq;
            rr->epc = h->pc;
        }
    }
    tk__trap(s, h, (uint64_t)irq, true, 0, h->pc);
}

static uint64_t total_executed(const tk_sim *s)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < s->nharts; i++)
        t += s->harts[i].executed;
    return t;
}

static uint64_t next_deadline(const tk_sim *s)
{
    uint64_t m = UINT64_MAX;
    for (unsigned i = 0; i < s->nharts; i++)
        if (s->deadline[i] < m)
            m = s->deadline[i];
    return m;
}

tk_status tk_sim_run(tk_sim *s, uint64_t max_insns, tk_sim_result *res, tk_diag *diag)
{
    uint64_t start = total_executed(s);
    tk_status st = TK_OK;
    s->diag = diag;
    while (!s->exited && s->stop == TK_OK) {
        bool all_wait = true;
        for (unsigned i = 0; i < s->nharts && !s->exited && s->stop == TK_OK; i++) {
            hart *h = &s->harts[i];
            uint64_t done = total_executed(s) - start, budget, now, dl;
            int irq;
            if (max_insns && done >= max_insns)
                break;
            tk__clint_update(s);
            irq = tk__irq_pending(h);
            if (h->wfi && (h->mip & h->mie))
                h->wfi = false;
            if (h->wfi)
                continue;
            all_wait = false;
            if (irq >= 0)
                take_interrupt(s, h, irq);
            budget = s->nharts > 1 ? s->cfg.quantum : (1u << 20);
            if (max_insns && max_insns - done < budget)
                budget = max_insns - done;
            now = sim_vclock(s);
            dl = next_deadline(s);
            if (dl != UINT64_MAX && dl > now && dl - now < budget)
                budget = dl - now;
            tk__hart_run(s, h, budget);
        }
        if (max_insns && total_executed(s) - start >= max_insns)
            break;
        if (all_wait && !s->exited && s->stop == TK_OK) {
            /* Every hart sleeps in WFI: jump virtual time to the next timer deadline, as
             * QEMU does with -icount sleep=off. */
            uint64_t dl = next_deadline(s), now = sim_vclock(s);
            if (dl == UINT64_MAX) {
                s->stop = tk_diag_set(diag, TK_ERR_TRAP,
                                      "hart 0 waits in WFI at 0x%llx for an interrupt that "
                                      "can never arrive",
                                      (unsigned long long)s->harts[0].pc);
                if (diag)
                    diag->address = s->harts[0].pc;
                break;
            }
            if (dl > now)
                s->warp += dl - now;
        }
    }
    for (unsigned i = 0; i < s->nharts; i++)
        tk__hart_flush_records(s, &s->harts[i], false);
    if (res) {
        res->exited = s->exited;
        res->exit_code = s->exit_code;
        res->instructions = total_executed(s);
        res->retired = 0;
        for (unsigned i = 0; i < s->nharts; i++)
            res->retired += s->harts[i].executed - s->harts[i].faulted;
    }
    if (s->cb_status != TK_OK)
        return s->cb_status;
    if (s->stop != TK_OK) {
        st = s->stop;
        return st;
    }
    return s->exited ? TK_OK : TK_END;
}
