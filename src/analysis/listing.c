/* SPDX-License-Identifier: BSD-2-Clause */
/* Listing sink, in the manner of ptxed: one line per executed instruction with its address,
 * symbol+offset and disassembly; other trace events in brackets between them. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "block_text.h"
#include "tracekit/sink.h"

/* A line is at most: 16 digits, "  " and a symbol field of up to 95 characters, raw bytes
 * (10), "  ", a disassembly of up to 95 and the newline. */
#define LST_LINE_MAX 256
/* TK_EV_BLOCKS: the lines of a whole block are always the same, so they are formatted once
 * and kept by block id (block_text.h); blocks of more than LST_BLOCK_LINES instructions, and
 * any once LST_ARENA_MAX bytes are kept, are formatted every time. */
#define LST_BLOCK_LINES 64
#define LST_ARENA_MAX (16u << 20)

struct tk_listing {
    tk_image *img;
    FILE *out;
    unsigned flags;
    bool io_error;
    tk_block_text blocks;
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
    tk_block_text_init(&s->blocks, LST_ARENA_MAX, 1);
    *sink = s;
    return TK_OK;
}

void tk_listing_free(tk_listing *s)
{
    if (s)
        tk_block_text_free(&s->blocks);
    free(s);
}

tk_status tk_listing_flush(tk_listing *s)
{
    if (fflush(s->out) != 0 || ferror(s->out))
        s->io_error = true;
    return s->io_error ? TK_ERR_IO : TK_OK;
}

/* The line of insn at pc into p (LST_LINE_MAX bytes); returns its length. */
static size_t format_line(tk_listing *s, uint64_t pc, const tk_rv_insn *insn, char *p)
{
    size_t n = (size_t)snprintf(p, LST_LINE_MAX, "%016" PRIx64, pc);
    if (!(s->flags & TK_LISTING_NO_SYMBOLS)) {
        uint64_t off;
        const tk_symbol *sym = tk_image_symbolize(s->img, pc, &off);
        char buf[96];
        if (sym)
            snprintf(buf, sizeof(buf), "<%s+0x%" PRIx64 ">", sym->name, off);
        else
            snprintf(buf, sizeof(buf), "<?>");
        n += (size_t)snprintf(p + n, LST_LINE_MAX - n, "  %-28s", buf);
    }
    if (s->flags & TK_LISTING_RAW)
        n += (size_t)snprintf(p + n, LST_LINE_MAX - n,
                              insn->len == 2 ? "  %04" PRIx32 "    " : "  %08" PRIx32, insn->raw);
    char text[96];
    tk_rv_disasm(insn, pc, text, sizeof(text));
    n += (size_t)snprintf(p + n, LST_LINE_MAX - n, "  %s\n", text);
    return n < LST_LINE_MAX ? n : LST_LINE_MAX - 1;
}

/* The line of the instruction at *pc into p (LST_LINE_MAX bytes), *pc moved past it;
 * returns its length, or 0 with *st set when the code there cannot be read. */
static size_t next_line(tk_listing *s, uint64_t *pc, char *p, tk_status *st)
{
    tk_rv_insn insn;
    *st = tk_image_fetch(s->img, *pc, &insn);
    if (*st != TK_OK && *st != TK_ERR_BAD_INSN)
        return 0;
    size_t n = format_line(s, *pc, &insn, p);
    *pc += insn.len;
    return n;
}

static void put_range(tk_listing *s, uint64_t first, uint64_t ninsn)
{
    uint64_t pc = first;
    char line[LST_LINE_MAX];
    for (uint64_t i = 0; i < ninsn; i++) {
        tk_status st;
        size_t n = next_line(s, &pc, line, &st);
        if (!n) {
            fprintf(s->out, "%016" PRIx64 "  [no code: %s]\n", pc, tk_strerror(st));
            return;
        }
        fwrite(line, 1, n, s->out);
    }
}

/* Block b's lines, formatted and kept under its id; NULL (nothing kept) if it is too
 * long, there is no room, or its code cannot be read again. */
static const tk_block_text_ref *keep_block(tk_listing *s, const tk_bblock *b)
{
    char *p = b->ninsn <= LST_BLOCK_LINES
                  ? tk_block_text_room(&s->blocks, b, (size_t)b->ninsn * LST_LINE_MAX)
                  : NULL;
    if (!p)
        return NULL;
    size_t len = 0;
    uint64_t pc = b->start;
    for (uint32_t i = 0; i < b->ninsn; i++) {
        tk_status st;
        size_t n = next_line(s, &pc, p + len, &st);
        if (!n)
            return NULL;
        len += n;
    }
    tk_block_text_keep(&s->blocks, b, len);
    return tk_block_text_find(&s->blocks, b);
}

static void put_blocks(tk_listing *s, const tk_event *ev)
{
    for (uint32_t i = 0; i < ev->nblocks; i++) {
        const tk_bblock *b = ev->blocks[i].block;
        const tk_block_text_ref *t = tk_block_text_find(&s->blocks, b);
        if (!t && !(t = keep_block(s, b)))
            put_range(s, b->start, b->ninsn);
        else
            fwrite(s->blocks.arena + t->off, 1, t->len, s->out);
    }
}

tk_status tk_listing_event(void *sink, const tk_event *ev)
{
    tk_listing *s = sink;
    if (ev->kind == TK_EV_RANGE) {
        put_range(s, ev->first, ev->ninsn);
    } else if (ev->kind == TK_EV_BLOCKS) {
        put_blocks(s, ev);
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
