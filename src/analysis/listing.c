/* SPDX-License-Identifier: BSD-2-Clause */
/* Listing sink, in the manner of ptxed: one line per executed instruction with its address,
 * symbol+offset and disassembly; other trace events in brackets between them. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/sink.h"

struct tk_listing {
    tk_image *img;
    FILE *out;
    unsigned flags;
    bool io_error;
};

tk_status tk_listing_new(tk_image *img, FILE *out, unsigned flags, tk_listing **sink)
{
    if (!img || !out || !sink)
        return TK_ERR_INVALID;
    tk_listing *s = calloc(1, sizeof(*s));
    if (!s)
        return TK_ERR_NOMEM;
    s->img = img;
    s->out = out;
    s->flags = flags;
    *sink = s;
    return TK_OK;
}

void tk_listing_free(tk_listing *s)
{
    free(s);
}

tk_status tk_listing_flush(tk_listing *s)
{
    if (fflush(s->out) != 0 || ferror(s->out))
        s->io_error = true;
    return s->io_error ? TK_ERR_IO : TK_OK;
}

static void put_symbol(tk_listing *s, uint64_t pc)
{
    uint64_t off;
    const tk_symbol *sym = tk_image_symbolize(s->img, pc, &off);
    char buf[96];
    if (sym)
        snprintf(buf, sizeof(buf), "<%s+0x%" PRIx64 ">", sym->name, off);
    else
        snprintf(buf, sizeof(buf), "<?>");
    fprintf(s->out, "  %-28s", buf);
}

static tk_status put_range(tk_listing *s, const tk_event *ev)
{
    uint64_t pc = ev->first;
    for (uint64_t i = 0; i < ev->ninsn; i++) {
        tk_rv_insn insn;
        tk_status st = tk_image_fetch(s->img, pc, &insn);
        if (st != TK_OK && st != TK_ERR_BAD_INSN) {
            fprintf(s->out, "%016" PRIx64 "  [no code: %s]\n", pc, tk_strerror(st));
            return TK_OK;
        }
        fprintf(s->out, "%016" PRIx64, pc);
        if (!(s->flags & TK_LISTING_NO_SYMBOLS))
            put_symbol(s, pc);
        if (s->flags & TK_LISTING_RAW)
            fprintf(s->out, insn.len == 2 ? "  %04" PRIx32 "    " : "  %08" PRIx32, insn.raw);
        char text[96];
        tk_rv_disasm(&insn, pc, text, sizeof(text));
        fprintf(s->out, "  %s\n", text);
        pc += insn.len;
    }
    return TK_OK;
}

tk_status tk_listing_event(void *sink, const tk_event *ev)
{
    tk_listing *s = sink;
    if (ev->kind == TK_EV_RANGE) {
        put_range(s, ev);
    } else if (!(s->flags & TK_LISTING_NO_EVENTS)) {
        switch (ev->kind) {
        case TK_EV_TRAP:
            fprintf(s->out, "[%s %" PRIu32 ", epc 0x%" PRIx64 ", handler 0x%" PRIx64 "]\n",
                    ev->interrupt ? "interrupt" : "exception", ev->cause, ev->first, ev->next);
            break;
        case TK_EV_PRIVILEGE:
            fprintf(s->out, "[privilege %u]\n", ev->priv);
            break;
        case TK_EV_CONTEXT:
            fprintf(s->out, "[context 0x%" PRIx64 "]\n", ev->context);
            break;
        case TK_EV_TRACE_ON:
            fprintf(s->out, "[enabled at 0x%" PRIx64 "]\n", ev->first);
            break;
        case TK_EV_TRACE_OFF:
            fprintf(s->out, "[disabled after 0x%" PRIx64 "]\n", ev->first);
            break;
        case TK_EV_LOST:
            fprintf(s->out, "[trace lost after 0x%" PRIx64 "]\n", ev->first);
            break;
        case TK_EV_SYNC:
            fprintf(s->out, "[sync at 0x%" PRIx64 "]\n", ev->first);
            break;
        case TK_EV_NOTIFY:
            fprintf(s->out, "[notify at 0x%" PRIx64 "]\n", ev->first);
            break;
        case TK_EV_ERROR:
            fprintf(s->out, "[offset %" PRIu64 ", packet %" PRIu64 ", 0x%" PRIx64 ": %s]\n",
                    ev->byte_offset, ev->packet_index, ev->first,
                    ev->message ? ev->message : tk_strerror(ev->status));
            break;
        case TK_EV_TIMESTAMP:
            fprintf(s->out, "[time %" PRIu64 "]\n", ev->time);
            break;
        default:
            break;
        }
    }
    if (ferror(s->out)) {
        s->io_error = true;
        return TK_ERR_IO;
    }
    return TK_OK;
}
