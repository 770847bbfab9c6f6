/* SPDX-License-Identifier: BSD-2-Clause */
/* Trace events from an executed-PC list. With every PC known, the flow is exact: each PC's
 * instruction (from the image) says whether it ends a range and how; the next PC says
 * whether a branch was taken and whether a trap intervened. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tracekit/analysis.h"
#include "tracekit/riscv.h"

struct tk_pc_flow {
    tk_image *img;
    tk_event_fn fn;
    void *ctx;
    bool open;       /* a range is being built */
    bool in_gap;     /* PCs without code are being skipped */
    tk_event ev;     /* the range being built */
    uint8_t end;     /* how its last instruction leaves it */
    uint8_t len;     /* length of its last instruction */
    uint64_t target; /* direct target of its last instruction */
};

tk_status tk_pc_flow_new(tk_image *img, tk_event_fn fn, void *ctx, tk_pc_flow **out)
{
    if (!img || !fn || !out)
        return TK_ERR_INVALID;
    tk_pc_flow *f = calloc(1, sizeof(*f));
    if (!f)
        return TK_ERR_NOMEM;
    f->img = img;
    f->fn = fn;
    f->ctx = ctx;
    *out = f;
    return TK_OK;
}

void tk_pc_flow_free(tk_pc_flow *f)
{
    free(f);
}

/* Emit the open range; next is the PC executed after it, have_next false at the end. */
static tk_status flush(tk_pc_flow *f, bool have_next, uint64_t next)
{
    if (!f->open)
        return TK_OK;
    f->open = false;
    tk_event *ev = &f->ev;
    uint64_t fall = ev->last + f->len;
    ev->end = f->end;
    ev->next = have_next ? next : 0;
    bool trap = false;
    if (f->end == TK_END_BRANCH) {
        if (!have_next || (next != fall && next != f->target)) {
            /* Outcome not shown: the trace ends, or a trap came first. */
            ev->end = TK_END_NONE;
            trap = have_next;
        } else {
            ev->taken = next != fall;
        }
    } else if (f->end == TK_END_NONE) {
        trap = have_next && next != fall;
    } else if (f->end == TK_END_TRAP) {
        trap = have_next;
    }
    tk_status st = f->fn(f->ctx, ev);
    if (st != TK_OK || !trap)
        return st;
    tk_event tr;
    memset(&tr, 0, sizeof(tr));
    tr.kind = TK_EV_TRAP;
    /* ecall/ebreak trap at themselves; anything else looks like an interrupt taken before
     * the fall-through instruction. After a branch the PCs do not tell where it went: the
     * branch's own address stands for the unknown epc, so that no outcome is implied. */
    tr.interrupt = f->end != TK_END_TRAP;
    tr.first = f->end == TK_END_TRAP || f->end == TK_END_BRANCH ? ev->last : fall;
    tr.next = next;
    return f->fn(f->ctx, &tr);
}

tk_status tk_pc_flow_pc(tk_pc_flow *f, uint64_t pc)
{
    tk_rv_insn in;
    tk_status st = tk_image_fetch(f->img, pc, &in);
    if (st == TK_ERR_BAD_INSN && (in.len == 2 || in.len == 4))
        st = TK_OK; /* unknown encoding: still one instruction of known length */
    if (st != TK_OK) {
        tk_status fs = flush(f, false, 0);
        if (fs != TK_OK)
            return fs;
        if (!f->in_gap) {
            f->in_gap = true;
            tk_event err;
            memset(&err, 0, sizeof(err));
            err.kind = TK_EV_ERROR;
            err.status = st;
            err.first = pc;
            err.message = "executed PC outside the program image's code";
            if ((fs = f->fn(f->ctx, &err)) != TK_OK)
                return fs;
        }
        return TK_OK;
    }
    f->in_gap = false;
    if (f->open) {
        if (f->end == TK_END_NONE && pc == f->ev.last + f->len) {
            f->ev.last = pc;
            f->ev.ninsn++;
            goto classify;
        }
        if ((st = flush(f, true, pc)) != TK_OK)
            return st;
    }
    memset(&f->ev, 0, sizeof(f->ev));
    f->ev.kind = TK_EV_RANGE;
    f->ev.first = f->ev.last = pc;
    f->ev.ninsn = 1;
    f->open = true;
classify:
    f->end = tk_rv_range_end(&in);
    f->len = in.len;
    f->target = in.cf == TK_RV_CF_BRANCH || in.cf == TK_RV_CF_JAL ? pc + (uint64_t)in.imm : 0;
    if (tk_image_xlen(f->img) == 32)
        f->target &= 0xffffffffu;
    return TK_OK;
}

tk_status tk_pc_flow_trap(tk_pc_flow *f, uint64_t epc, uint32_t cause, bool interrupt)
{
    if (f->open) {
        f->open = false;
        tk_event *ev = &f->ev;
        uint64_t fall = ev->last + f->len;
        ev->end = f->end == TK_END_TRAP ? TK_END_TRAP : TK_END_NONE;
        ev->next = epc;
        /* An exception at the fall-through (or the target) of a branch shows its outcome. */
        if (f->end == TK_END_BRANCH && (epc == fall || epc == f->target)) {
            ev->end = TK_END_BRANCH;
            ev->taken = epc != fall;
        }
        tk_status st = f->fn(f->ctx, ev);
        if (st != TK_OK)
            return st;
    }
    tk_event tr;
    memset(&tr, 0, sizeof(tr));
    tr.kind = TK_EV_TRAP;
    tr.first = tr.last = epc;
    tr.cause = cause;
    tr.interrupt = interrupt;
    return f->fn(f->ctx, &tr);
}

tk_status tk_pc_flow_finish(tk_pc_flow *f)
{
    return flush(f, false, 0);
}

tk_status tk_pc_flow_read_file(tk_pc_flow *f, const char *path, tk_diag *diag)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return tk_diag_set(diag, TK_ERR_IO, "%s: cannot open", path);
    char line[256];
    uint64_t lineno = 0;
    tk_status st = TK_OK;
    while (st == TK_OK && gzgets(gz, line, sizeof(line))) {
        lineno++;
        char *c = line;
        while (isspace((unsigned char)*c))
            c++;
        if (!*c || *c == '#')
            continue;
        if (c[0] == '0' && (c[1] == 'x' || c[1] == 'X'))
            c += 2;
        char *endp;
        uint64_t pc = strtoull(c, &endp, 16);
        while (isspace((unsigned char)*endp))
            endp++;
        if (endp == c || *endp) {
            st = tk_diag_set(diag, TK_ERR_FORMAT, "%s:%llu: not a hex PC", path,
                             (unsigned long long)lineno);
            if (diag)
                diag->line = lineno;
            break;
        }
        st = tk_pc_flow_pc(f, pc);
    }
    int err = 0;
    const char *msg = gzerror(gz, &err);
    if (st == TK_OK && err != Z_OK && err != Z_STREAM_END)
        st = tk_diag_set(diag, TK_ERR_IO, "%s: %s", path, msg);
    gzclose(gz);
    return st;
}
