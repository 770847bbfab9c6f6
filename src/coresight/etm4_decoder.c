/* SPDX-License-Identifier: BSD-2-Clause */
/* ETMv4 flow decoder: turns packets into executed instruction ranges by walking the program
 * image (IHI0064 chapter 4 "The trace element model": every branch is a P0 instruction and
 * gets one atom; E = taken, N = not taken; indirect branch targets and exception targets come
 * from the following address packet). Emits tk_events like every tracekit flow decoder. */
#include <stdlib.h>
#include <string.h>

#include "isa/arm/arm_branch.h"
#include "tracekit/etm4.h"

struct tk_etm4_decoder {
    tk_etm4_config cfg;
    const tk_cs_mem *mem;
    tk_event_fn fn;
    void *ctx;

    uint64_t pc;
    bool pc_valid;
    tk_arm_isa isa;
    tk_etm4_context c;
    bool ctx_valid;
    bool exc_pending; /* an Exception packet waits for its return address */
    uint16_t exc_type;
    uint64_t packet_index, byte_offset;

    /* Return stack (TRCCONFIGR.RS, IHI0064 §4.4.6): with it enabled the trace unit omits the
     * target of an indirect branch that matches the address pushed by the last branch with
     * link; the decoder keeps the same stack. */
    bool rs_enabled, pop_pending;
    unsigned rs_depth;
    struct {
        uint64_t addr;
        uint8_t isa;
    } rs[16];

    tk_event range; /* range event template: only the range fields are ever written */
    /* Block cache: code does not change while decoding, so the walk from an address to its
     * next branch is remembered (direct-mapped, keyed by address). */
    struct block {
        uint64_t start, last;
        uint64_t n;
        uint8_t isa, valid;
        tk_arm_insn br;
    } * blocks;
};

#define NBLOCKS 8192

tk_status tk_etm4_decoder_new(const tk_etm4_config *cfg, const tk_cs_mem *mem, tk_event_fn fn,
                              void *ctx, tk_etm4_decoder **out)
{
    if (!cfg || !fn || !out)
        return TK_ERR_INVALID;
    tk_etm4_decoder *d = calloc(1, sizeof(*d));
    if (!d)
        return TK_ERR_NOMEM;
    d->cfg = *cfg;
    d->mem = mem;
    d->fn = fn;
    d->ctx = ctx;
    d->blocks = calloc(NBLOCKS, sizeof(*d->blocks));
    if (!d->blocks) {
        free(d);
        return TK_ERR_NOMEM;
    }
    d->range.kind = TK_EV_RANGE;
    d->range.trace_id = cfg->trace_id;
    d->rs_enabled = (cfg->configr >> 12) & 1;
    *out = d;
    return TK_OK;
}

void tk_etm4_decoder_free(tk_etm4_decoder *d)
{
    if (!d)
        return;
    free(d->blocks);
    free(d);
}

static tk_status emit(tk_etm4_decoder *d, tk_event *ev)
{
    ev->trace_id = d->cfg.trace_id;
    ev->byte_offset = d->byte_offset;
    ev->packet_index = d->packet_index;
    return d->fn(d->ctx, ev);
}

static tk_status emit_simple(tk_etm4_decoder *d, tk_event_kind kind, uint64_t addr)
{
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    ev.first = addr;
    return emit(d, &ev);
}

static tk_status emit_error(tk_etm4_decoder *d, tk_status status, uint64_t addr, const char *msg)
{
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = TK_EV_ERROR;
    ev.status = status;
    ev.first = addr;
    ev.message = msg;
    return emit(d, &ev);
}

/* Address packets carry the instruction set: AArch64, or A32 (IS0) / T32 (IS1) in AArch32. */
static void set_pc(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    d->pc = p->addr;
    d->pc_valid = true;
    if (d->ctx_valid && d->c.sf)
        d->isa = TK_ARM_A64;
    else if (d->ctx_valid)
        d->isa = p->addr_is ? TK_ARM_T32 : TK_ARM_A32;
    else
        d->isa = p->addr_64 ? TK_ARM_A64 : (p->addr_is ? TK_ARM_T32 : TK_ARM_A32);
}

/* Walk from pc to the next branch (stop_at == 0) or up to, not including, stop_at. Fills the
 * range; *br receives the branch. Returns TK_OK, or TK_ERR_NO_CODE when code is missing
 * (pc then stays at the first inaccessible instruction). */
static tk_status walk(tk_etm4_decoder *d, uint64_t stop_at, bool to_addr, tk_event *ev,
                      tk_arm_insn *br)
{
    uint64_t pc = d->pc;
    uint64_t n = 0, last = pc;
    memset(br, 0, sizeof(*br));
    for (;;) {
        if (to_addr && pc == stop_at)
            break;
        size_t avail;
        const uint8_t *b = d->mem ? tk_cs_mem_ptr(d->mem, pc, &avail) : NULL;
        if (!b) {
            ev->ninsn = n;
            ev->last = last;
            d->pc = pc;
            return TK_ERR_NO_CODE;
        }
        /* Classify a whole mapped stretch without re-looking-up the region. */
        if (d->isa == TK_ARM_A64) {
            for (; avail >= 4; avail -= 4, b += 4) {
                if (to_addr && pc == stop_at)
                    goto done;
                uint32_t i =
                    b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
                /* Fast reject: all A64 branches live in op0 = x101 (bits [28:26]). */
                if ((i & 0x1c000000) == 0x14000000) {
                    tk_arm_classify(TK_ARM_A64, pc, b, 4, br);
                    if (br->kind == TK_ARM_BRANCH && !to_addr) {
                        ev->first = d->pc;
                        ev->last = pc;
                        ev->ninsn = n + 1;
                        return TK_OK;
                    }
                }
                last = pc;
                pc += 4;
                n++;
            }
            if (avail) {
                ev->ninsn = n;
                ev->last = last;
                d->pc = pc;
                return TK_ERR_NO_CODE;
            }
            continue;
        }
        if (tk_arm_classify(d->isa, pc, b, avail, br) < 0) {
            ev->ninsn = n;
            ev->last = last;
            d->pc = pc;
            return TK_ERR_NO_CODE;
        }
        if (br->kind == TK_ARM_BRANCH && !to_addr) {
            ev->first = d->pc;
            ev->last = pc;
            ev->ninsn = n + 1;
            return TK_OK;
        }
        last = pc;
        pc += br->size;
        n++;
    }
done:
    ev->first = d->pc;
    ev->last = last;
    ev->ninsn = n;
    memset(br, 0, sizeof(*br));
    return TK_OK;
}

static tk_status no_code(tk_etm4_decoder *d)
{
    uint64_t at = d->pc;
    d->pc_valid = false;
    return emit_error(d, TK_ERR_NO_CODE, at, "no code in the memory images at this address");
}

/* One atom: execute up to and including the next branch. */
static void rs_push(tk_etm4_decoder *d, uint64_t addr)
{
    if (d->rs_depth == 16) { /* full: the oldest entry is lost */
        memmove(&d->rs[0], &d->rs[1], sizeof(d->rs[0]) * 15);
        d->rs_depth--;
    }
    d->rs[d->rs_depth].addr = addr;
    d->rs[d->rs_depth].isa = (uint8_t)d->isa;
    d->rs_depth++;
}

/* The previous element was a taken indirect branch without an address: its target is the top
 * of the return stack. */
static tk_status rs_pop(tk_etm4_decoder *d)
{
    if (!d->pop_pending)
        return TK_OK;
    d->pop_pending = false;
    if (!d->rs_depth) {
        d->pc_valid = false;
        return emit_error(d, TK_ERR_MISMATCH, 0, "return stack empty: indirect target unknown");
    }
    d->rs_depth--;
    d->pc = d->rs[d->rs_depth].addr;
    d->isa = (tk_arm_isa)d->rs[d->rs_depth].isa;
    d->pc_valid = true;
    return TK_OK;
}

static void rs_flush(tk_etm4_decoder *d)
{
    d->rs_depth = 0;
    d->pop_pending = false;
}

static tk_status atom(tk_etm4_decoder *d, bool taken)
{
    tk_status st;
    if (d->pop_pending && (st = rs_pop(d)))
        return st;
    if (!d->pc_valid)
        return TK_OK; /* waiting for an address after a discontinuity */
    struct block *b = &d->blocks[((d->pc >> 2) ^ (d->pc >> 15)) & (NBLOCKS - 1)];
    if (!b->valid || b->start != d->pc || b->isa != d->isa) {
        tk_event ev;
        memset(&ev, 0, sizeof(ev));
        st = walk(d, 0, false, &ev, &b->br);
        if (st == TK_ERR_NO_CODE) {
            b->valid = 0;
            return no_code(d);
        }
        b->start = ev.first;
        b->last = ev.last;
        b->n = ev.ninsn;
        b->isa = (uint8_t)d->isa;
        b->valid = 1;
    }
    const tk_arm_insn *br = &b->br;
    tk_event *ev = &d->range;
    ev->first = b->start;
    ev->last = b->last;
    ev->ninsn = b->n;
    ev->taken = taken;
    ev->indirect = br->indirect;
    if (br->eret)
        ev->end = TK_END_TRAP_RETURN;
    else if (br->ret)
        ev->end = TK_END_RETURN;
    else if (br->link)
        ev->end = TK_END_CALL;
    else if (br->cond)
        ev->end = TK_END_BRANCH;
    else
        ev->end = TK_END_JUMP;
    ev->next = 0;
    if (taken && br->link && d->rs_enabled)
        rs_push(d, b->last + br->size);
    if (!taken) {
        d->pc = b->last + br->size;
        ev->next = d->pc;
    } else if (!br->indirect) {
        d->pc = br->target;
        d->isa = (tk_arm_isa)br->target_isa;
        ev->next = d->pc;
    } else {
        d->pc_valid = false; /* the next address packet (or the return stack) gives it */
        d->pop_pending = d->rs_enabled;
    }
    ev->byte_offset = d->byte_offset;
    ev->packet_index = d->packet_index;
    return d->fn(d->ctx, ev);
}

/* Exception (§6.4.7): the instructions up to the preferred return address were executed. */
static tk_status exception(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    tk_status st;
    d->exc_pending = false;
    if (d->pc_valid && d->pc != p->addr) {
        tk_event ev;
        tk_arm_insn br;
        memset(&ev, 0, sizeof(ev));
        /* Guard against walking forever when the return address is not ahead of pc. */
        st = p->addr > d->pc && p->addr - d->pc < (1u << 20) ? walk(d, p->addr, true, &ev, &br)
                                                             : TK_ERR_MISMATCH;
        if (st == TK_ERR_NO_CODE)
            return no_code(d);
        if (st == TK_OK && ev.ninsn) {
            ev.kind = TK_EV_RANGE;
            ev.end = TK_END_TRAP;
            ev.next = p->addr;
            if ((st = emit(d, &ev)))
                return st;
        }
    }
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = TK_EV_TRAP;
    ev.cause = d->exc_type;
    ev.first = p->addr;
    d->pc_valid = false; /* the handler address follows */
    return emit(d, &ev);
}

static tk_status context(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    if (!p->ctx_updated)
        return TK_OK;
    d->c = p->ctx;
    d->ctx_valid = true;
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = TK_EV_CONTEXT;
    ev.context = p->ctx.has_cid ? p->ctx.cid : 0;
    ev.priv = p->ctx.el;
    return emit(d, &ev);
}

tk_status tk_etm4_decoder_packet(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    tk_status st;
    d->byte_offset = p->index;
    d->packet_index++;
    switch (p->type) {
    case TK_ETM4_ATOM_F1:
    case TK_ETM4_ATOM_F2:
    case TK_ETM4_ATOM_F3:
    case TK_ETM4_ATOM_F4:
    case TK_ETM4_ATOM_F5:
    case TK_ETM4_ATOM_F6:
        for (unsigned i = 0; i < p->atom_num; i++)
            if ((st = atom(d, (p->atoms >> i) & 1)))
                return st;
        return TK_OK;
    case TK_ETM4_ADDR_CTXT_L_32IS0:
    case TK_ETM4_ADDR_CTXT_L_32IS1:
    case TK_ETM4_ADDR_CTXT_L_64IS0:
    case TK_ETM4_ADDR_CTXT_L_64IS1:
        if ((st = context(d, p)))
            return st;
        /* fall through */
    case TK_ETM4_ADDR_MATCH:
    case TK_ETM4_ADDR_S_IS0:
    case TK_ETM4_ADDR_S_IS1:
    case TK_ETM4_ADDR_L_32IS0:
    case TK_ETM4_ADDR_L_32IS1:
    case TK_ETM4_ADDR_L_64IS0:
    case TK_ETM4_ADDR_L_64IS1:
        d->pop_pending = false; /* the address replaces the return stack entry */
        if (d->exc_pending)
            return exception(d, p);
        set_pc(d, p);
        return TK_OK;
    case TK_ETM4_CTXT:
        return context(d, p);
    case TK_ETM4_EXCEPT:
        /* A taken return just before the exception got its target from the return stack. */
        if (d->pop_pending && (st = rs_pop(d)))
            return st;
        d->exc_pending = true;
        d->exc_type = p->exc_type;
        return TK_OK;
    case TK_ETM4_TRACE_INFO:
        /* A periodic A-Sync + Trace Info may sit between an address and the atoms that use
         * it (the case the bugfix-exact-match snapshot records): the address stays valid. Only
         * the packet-level compression state is reset (in the parser). */
        d->exc_pending = false;
        rs_flush(d);
        return TK_OK;
    case TK_ETM4_TRACE_ON:
        rs_flush(d);
        d->pc_valid = false;
        return emit_simple(d, TK_EV_TRACE_ON, 0);
    case TK_ETM4_DISCARD:
        d->pc_valid = false;
        return emit_simple(d, TK_EV_TRACE_OFF, d->pc);
    case TK_ETM4_OVERFLOW:
        d->pc_valid = false;
        return emit_simple(d, TK_EV_LOST, 0);
    case TK_ETM4_TIMESTAMP: {
        tk_event ev;
        memset(&ev, 0, sizeof(ev));
        ev.kind = TK_EV_TIMESTAMP;
        ev.time = p->timestamp;
        return emit(d, &ev);
    }
    case TK_ETM4_Q:
        /* A Q element only counts instructions; the path through them is not traced, so the
         * flow is lost until the next address. */
        d->pc_valid = false;
        return emit_error(d, TK_ERR_UNSUPPORTED, d->pc, "Q element: instruction path unknown");
    case TK_ETM4_MISPREDICT:
    case TK_ETM4_CANCEL_F1:
    case TK_ETM4_CANCEL_F1_MISPRED:
    case TK_ETM4_CANCEL_F2:
    case TK_ETM4_CANCEL_F3:
        /* Without a speculation model (TRCIDR8.MAXSPEC = 0 on every core traced so far) a
         * cancel means the stream is inconsistent with the decoded flow. */
        d->pc_valid = false;
        return emit_error(d, TK_ERR_UNSUPPORTED, d->pc,
                          "speculative trace (cancel/mispredict) not modelled");
    case TK_ETM4_NOT_SYNC:
        d->pc_valid = false;
        return TK_OK;
    case TK_ETM4_BAD_SEQUENCE:
    case TK_ETM4_RESERVED:
    case TK_ETM4_RESERVED_CFG:
    case TK_ETM4_INCOMPLETE_EOT:
        d->pc_valid = false;
        d->exc_pending = false;
        return emit_error(d, TK_ERR_BAD_PACKET, 0, tk_etm4_pkt_name((tk_etm4_pkt_type)p->type));
    default:
        return TK_OK; /* timing, events, commits, conditional and DS packets: no flow */
    }
}

tk_status tk_etm4_decoder_end(tk_etm4_decoder *d)
{
    (void)d;
    return TK_OK;
}
