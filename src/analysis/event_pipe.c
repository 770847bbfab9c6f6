/* SPDX-License-Identifier: BSD-2-Clause */
/* The event pipe (event_pipe.h): chunks of copied events handed from the producer to a
 * consumer thread (util/chunk_pipe.h). A chunk holds many events so that the lock is taken
 * once per chunk, not per event: the producer fills one chunk while the consumer drains
 * another. */
#include "tracekit/event_pipe.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/chunk_pipe.h"
#include "util/compiler.h"

/* Sized so that a chunk (about 350 KB) is a few hundred microseconds of a sink's work:
 * the hand-over cost disappears in it, and the chunks in flight stay in the caches. */
enum {
    CHUNK_ENTRIES = 1024,
    CHUNK_BLOCKS = 8192,
    CHUNK_TEXT = 16384,
    NOTE_MAX = 1024, /* longest note or message kept */
    NCHUNKS = 8,     /* the producer ahead sleeps until 4 are free: one wake-up per 4 chunks */
};

/* ENTRY_PLAIN: an event without text or blocks, delivered as it is (the fast path's). */
typedef enum entry_kind { ENTRY_EVENT, ENTRY_NOTE, ENTRY_PLAIN } entry_kind;

/* An event as pushed; its blocks and message live in the chunk, at the offsets given (the
 * pointers are set when it is delivered). A note uses ev.status, ev.byte_offset and the
 * text. */
typedef struct entry {
    tk_event ev;
    uint32_t blocks_at;
    uint32_t text_at; /* UINT32_MAX: no text */
    uint8_t kind;     /* entry_kind */
} entry;

/* The entries first: the chunk pipe's chunks are malloc'd (16-byte aligned), so a 128-byte
 * entry spans two or three cache lines wherever it starts, never more because of the counts. */
typedef struct chunk {
    entry entries[CHUNK_ENTRIES];
    tk_block_exec blocks[CHUNK_BLOCKS];
    char text[CHUNK_TEXT];
    size_t nentries, nblocks, ntext;
} chunk;

struct tk_event_pipe {
    tk_event_fn fn;
    tk_event_note_fn note;
    void *ctx;
    tk_chunk_pipe *cp;
    chunk *cur; /* the chunk pipe's producer chunk */
    bool finished;
    tk_status sink; /* the sink's first non-TK_OK status, as the producer has heard it */
};

/* The chunk pipe's consumer: every entry to the sink (or nothing: deliver false), then the
 * chunk is empty again. */
static tk_status deliver(void *ctx, void *chunk_, bool deliver)
{
    tk_event_pipe *p = ctx;
    chunk *c = chunk_;
    tk_status st = TK_OK;
    const size_t n = deliver ? c->nentries : 0;
    for (size_t i = 0; i < n && st == TK_OK; i++) {
        entry *e = &c->entries[i];
        if (e->kind != ENTRY_PLAIN) {
            const char *text = e->text_at == UINT32_MAX ? NULL : c->text + e->text_at;
            if (e->kind == ENTRY_NOTE) {
                if (p->note)
                    p->note(p->ctx, e->ev.status, e->ev.byte_offset, text);
                continue;
            }
            e->ev.message = text;
            e->ev.blocks = e->ev.kind == TK_EV_BLOCKS ? c->blocks + e->blocks_at : NULL;
        }
        st = p->fn(p->ctx, &e->ev);
    }
    c->nentries = c->nblocks = c->ntext = 0;
    return st;
}

/* Hand the producer's chunk over and take an empty one. Returns the sink's status, which the
 * producer passes on to stop. */
static tk_status hand_over(tk_event_pipe *p)
{
    tk_status st = tk_chunk_pipe_hand_over(p->cp);
    p->cur = tk_chunk_pipe_chunk(p->cp);
    if (p->sink == TK_OK)
        p->sink = st;
    return st;
}

tk_status tk_event_pipe_new(tk_event_fn fn, tk_event_note_fn note, void *ctx, tk_event_pipe **out)
{
    if (!out)
        return TK_ERR_INVALID;
    *out = NULL;
    if (!fn)
        return TK_ERR_INVALID;
    tk_event_pipe *p = calloc(1, sizeof(*p));
    if (!p)
        return TK_ERR_NOMEM;
    p->fn = fn;
    p->note = note;
    p->ctx = ctx;
    tk_status st = tk_chunk_pipe_new(sizeof(chunk), NCHUNKS, deliver, p, &p->cp);
    if (st != TK_OK) {
        free(p);
        return st;
    }
    p->cur = tk_chunk_pipe_chunk(p->cp);
    *out = p;
    return TK_OK;
}

/* Copy text into the chunk's text area (cut at NOTE_MAX); false if it has no room. */
static bool put_text(chunk *c, const char *msg, uint32_t *at)
{
    if (!msg) {
        *at = UINT32_MAX;
        return true;
    }
    size_t n = strnlen(msg, NOTE_MAX - 1);
    if (CHUNK_TEXT - c->ntext < n + 1)
        return false;
    memcpy(c->text + c->ntext, msg, n);
    c->text[c->ntext + n] = '\0';
    *at = (uint32_t)c->ntext;
    c->ntext += n + 1;
    return true;
}

/* Room in the producer's chunk for one entry with its text (handing the chunk over when it
 * is full); the entry, or NULL with *st the sink's failure. */
static entry *next_entry(tk_event_pipe *p, const char *msg, tk_status *st)
{
    chunk *c = p->cur;
    uint32_t at = UINT32_MAX;
    if (c->nentries == CHUNK_ENTRIES || !put_text(c, msg, &at)) {
        if ((*st = hand_over(p)) != TK_OK)
            return NULL;
        c = p->cur;
        put_text(c, msg, &at); /* an empty chunk has room for NOTE_MAX */
    }
    entry *e = &c->entries[c->nentries++];
    e->text_at = at;
    return e;
}

/* Every event the fast path below does not take: text, block batches, a full chunk, bad
 * arguments. Kept out of line so that the fast path saves no registers. */
TK_NOINLINE static tk_status event_general(tk_event_pipe *p, const tk_event *ev)
{
    if (!p || !ev)
        return TK_ERR_INVALID;
    if (p->finished)
        return TK_ERR_STATE;
    tk_status st = TK_OK;
    if (ev->kind != TK_EV_BLOCKS) {
        entry *e = next_entry(p, ev->message, &st);
        if (!e)
            return st;
        e->kind = ENTRY_EVENT;
        e->ev = *ev;
        e->blocks_at = 0;
        return TK_OK;
    }
    /* A batch larger than the room left is split into batches of the same event (each a
     * valid TK_EV_BLOCKS event, in order). */
    const tk_block_exec *b = ev->blocks;
    uint32_t left = ev->nblocks;
    do {
        chunk *c = p->cur;
        if (c->nblocks == CHUNK_BLOCKS || c->nentries == CHUNK_ENTRIES) {
            if ((st = hand_over(p)) != TK_OK)
                return st;
            c = p->cur;
        }
        uint32_t room = (uint32_t)(CHUNK_BLOCKS - c->nblocks);
        uint32_t n = left < room ? left : room;
        entry *e = next_entry(p, NULL, &st); /* no text: cannot hand over here */
        e->kind = ENTRY_EVENT;
        e->ev = *ev;
        e->ev.nblocks = n;
        e->blocks_at = (uint32_t)c->nblocks;
        if (n)
            memcpy(c->blocks + c->nblocks, b, n * sizeof(*b));
        c->nblocks += n;
        b += n;
        left -= n;
    } while (left);
    return TK_OK;
}

tk_status tk_event_pipe_event(void *pipe, const tk_event *ev)
{
    tk_event_pipe *p = pipe;
    /* Events without text or blocks (a producer of range events: one per branch) with room
     * in the chunk cost the copy and these tests. Through the general path a range cost
     * about 100 instructions, three times what the ETMv4 decoder spent on it. (cur is NULL
     * once finished.) */
    chunk *c = p && ev ? p->cur : NULL;
    if (c && ev->kind != TK_EV_BLOCKS && !ev->message && c->nentries < CHUNK_ENTRIES) {
        entry *e = &c->entries[c->nentries++];
        e->ev = *ev;
        e->ev.blocks = NULL; /* as the general path delivers events of other kinds */
        e->kind = ENTRY_PLAIN;
        return TK_OK;
    }
    return event_general(p, ev);
}

tk_status tk_event_pipe_note(tk_event_pipe *p, tk_status st, uint64_t offset, const char *msg)
{
    if (!p)
        return TK_ERR_INVALID;
    if (p->finished)
        return TK_ERR_STATE;
    tk_status fail = TK_OK;
    entry *e = next_entry(p, msg ? msg : "", &fail); /* the callback always gets text */
    if (!e)
        return fail;
    e->kind = ENTRY_NOTE;
    e->ev = (tk_event){.status = st, .byte_offset = offset};
    return TK_OK;
}

tk_status tk_event_pipe_finish(tk_event_pipe *p)
{
    if (!p)
        return TK_ERR_INVALID;
    if (p->finished)
        return TK_ERR_STATE;
    p->finished = true;
    tk_status st = tk_chunk_pipe_finish(p->cp, p->cur->nentries > 0);
    p->cur = NULL;
    return p->sink != TK_OK ? p->sink : st;
}

void tk_event_pipe_free(tk_event_pipe *p)
{
    if (!p)
        return;
    tk_chunk_pipe_free(p->cp);
    free(p);
}
