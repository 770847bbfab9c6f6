/* SPDX-License-Identifier: BSD-2-Clause */
/* Parallel E-Trace flow decoding (te_parallel.h): cutting at format 3 syncs, decoding pieces
 * on worker threads, stitching them by comparing decoder states (decoder_int.h). */
#include "tracekit/te_parallel.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder_int.h"
#include "header_walk.h"
#include "walk_memo.h"
#include "tracekit/encap.h"
#include "tracekit/te_packet.h"

enum { DEFAULT_PIECE = 1u << 20 };

typedef struct piece {
    size_t start, end;    /* byte range; start is a sync packet (or 0) */
    uint64_t first_index; /* index of the packet at start */
    /* worker results */
    tk_te_decoder *dec;
    tk_event_fn sink_fn;
    void *sink;
    bool skipping;       /* events of the first packet go nowhere: the stitch redoes it */
    tk_te_decoder after; /* the decoder right after the first packet (scalars only) */
    bool have_after;
    tk_status fatal;
    uint64_t packets;
    tk_status first_bad;
    bool done; /* the worker has finished it (under sched.mu) */
} piece;

typedef struct worker {
    const tk_te_params *p;
    const tk_te_par_config *cfg;
    const uint8_t *buf;
    tk_image *img;
    tk_walk_memo_loan *loan; /* the memo this thread's pieces pass on to each other */
    piece *pc;
} worker;

static tk_status forward(void *ctx, const tk_event *ev)
{
    piece *pc = ctx;
    if (pc->skipping)
        return TK_OK;
    return pc->sink_fn(pc->sink, ev);
}

/* Decode the packets of s into d (tk_dec_run_scan), sorting its outcome: a damaged packet
 * (reported as an event) is noted in rep, anything else that is not TK_OK is fatal. */
static tk_status run_packets(tk_te_decoder *d, tk_te_scan *s, piece *rep, uint64_t *count)
{
    tk_status st = tk_dec_run_scan(d, s, NULL, count);
    if (st == TK_ERR_BAD_PACKET || st == TK_ERR_TRUNCATED) {
        if (rep->first_bad == TK_OK)
            rep->first_bad = st;
        return TK_OK;
    }
    return st;
}

/* Decode the packets of piece pc into its decoder (made by work()). */
static void decode_piece(worker *w)
{
    piece *pc = w->pc;
    tk_status st;
    tk_te_scan s;
    /* the decoder's own parameters: support packets change the options the codec reads */
    tk_te_scan_init(&s, &pc->dec->p, w->buf, pc->end);
    tk_te_scan_seek(&s, pc->start, pc->first_index);
    if (pc->start > 0) {
        /* the first packet is a sync (the cut guarantees it decodes) */
        tk_te_packet k;
        tk_diag diag;
        pc->skipping = true;
        st = tk_te_scan_next(&s, &k, &diag);
        if (st == TK_OK)
            st = tk_te_decoder_packet(pc->dec, &k, s.offset, s.index);
        /* blocks of that packet still in the batch go nowhere too */
        if (st == TK_OK)
            st = tk_te_decoder_flush(pc->dec);
        pc->skipping = false;
        if (st != TK_OK) {
            pc->fatal = st;
            return;
        }
        pc->packets++;
        pc->after = *pc->dec;
        pc->have_after = true;
    }
    pc->fatal = run_packets(pc->dec, &s, pc, &pc->packets);
}

static void work(worker *w)
{
    piece *pc = w->pc;
    tk_status st = w->cfg->sink_new(w->cfg->ctx, w->img, &pc->sink_fn, &pc->sink);
    if (st == TK_OK)
        st = tk_te_decoder_new(w->p, w->img, forward, pc, &pc->dec);
    if (st != TK_OK) {
        pc->fatal = st;
        return;
    }
    /* no memo of its own: it gets the thread's (below) */
    (void)tk_dec_set_walk_memo(pc->dec, false);
    tk_te_decoder_set_flags(pc->dec, w->cfg->flags);
    if (w->cfg->max_predicted)
        tk_te_decoder_set_max_predicted(pc->dec, w->cfg->max_predicted);
    for (unsigned priv = 0; priv < 4; priv++)
        if ((w->cfg->tvec_set >> priv) & 1u)
            tk_te_decoder_set_trap_vector(pc->dec, priv, w->cfg->tvec[priv]);
    tk_walk_memo_lend(pc->dec, w->loan);
    decode_piece(w);
    /* the decoder goes on (stitched) without it: on the stitching thread, or serially on
     * this image, its walks then run, which only the first packet of the next piece needs */
    tk_walk_memo_take_back(pc->dec, w->loan);
}

/* ---- cutting -----------------------------------------------------------------------------
 * Incremental: a piece's end is found when a worker takes it (walking one piece of headers,
 * well under a millisecond), so decoding starts at once instead of after a walk over the
 * whole trace. Pieces are allocated one by one and never move: workers hold them while the
 * list grows. */

typedef struct cuts {
    piece **v;
    size_t n, cap;
    tk_status st; /* TK_ERR_NOMEM if a piece could not be added */
    const uint8_t *buf;
    size_t len, piece_bytes;
    size_t pos, last; /* header walk position; start of the last piece */
    uint64_t index;   /* packet index at pos */
    bool complete;    /* every piece is known, the last one's end too */
} cuts;

static bool add_piece(cuts *c, size_t start, uint64_t index)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        piece **nv = realloc(c->v, cap * sizeof(*nv));
        if (!nv)
            return false;
        c->v = nv;
        c->cap = cap;
    }
    /* Cache lines of their own: a worker writes its piece's packet count as it goes while
     * another reads the next piece's sink for every event it forwards; pieces are made one
     * after the other, and the end of one and the start of the next shared a line. */
    enum { LINE = 64 };
    const size_t size = (sizeof(piece) + LINE - 1) / LINE * LINE;
    piece *pc = aligned_alloc(LINE, size);
    if (!pc)
        return false;
    memset(pc, 0, size);
    pc->start = start;
    pc->first_index = index;
    if (c->n)
        c->v[c->n - 1]->end = start;
    c->v[c->n++] = pc;
    c->last = start;
    return true;
}

static void cuts_init(cuts *c, const uint8_t *buf, size_t len, size_t piece_bytes)
{
    memset(c, 0, sizeof(*c));
    c->buf = buf;
    c->len = len;
    c->piece_bytes = piece_bytes;
    if (!add_piece(c, 0, 0)) {
        c->st = TK_ERR_NOMEM;
        c->complete = true;
    }
}

static void cuts_finish(cuts *c)
{
    c->complete = true;
    if (c->n)
        c->v[c->n - 1]->end = c->len;
}

/* Walk the headers (the scanner's framing rules) until piece k's end is known: a piece
 * starts at the first format 3 start or trap packet at least piece_bytes after the previous
 * cut. Runs under the scheduler's lock, so it is kept short: up to that distance only the
 * lengths are followed (a header's length field, 0 for a padding byte, is what precedes the
 * next header either way), by tk_te_walk_headers with several walks in flight. */
static void cut_through(cuts *c, size_t k)
{
    if (c->piece_bytes == SIZE_MAX && !c->complete)
        cuts_finish(c); /* not cut: one piece */
    const uint8_t *const buf = c->buf;
    const size_t len = c->len;
    size_t pos = c->pos;
    uint64_t index = c->index;
    while (!c->complete && c->n < k + 2) {
        /* no cut before from; a packet (at most 32 bytes) that starts 32 before it is
         * whole, so headers are followed by length alone while pos + 32 <= from */
        const size_t from = c->piece_bytes < len - c->last ? c->last + c->piece_bytes : len;
        pos = tk_te_walk_headers(buf, pos, from > 31 ? from - 31 : 0, &index);
        if (pos >= len) {
            cuts_finish(c);
            break;
        }
        const uint8_t h = buf[pos];
        const unsigned n = h & 0x1fu;
        if (n == 0) {
            pos++;
            continue;
        }
        if (pos + 1 + n > len) {
            cuts_finish(c);
            break;
        }
        const uint8_t b0 = buf[pos + 1];
        /* te_inst, format 3, subformat 0 (start) or 1 (trap) */
        if ((h & 0xe0u) == (TK_ENCAP_FLOW_TE_INST << 5) && (b0 & 3u) == 3u &&
            ((b0 >> 2) & 3u) <= 1u && pos - c->last >= c->piece_bytes &&
            !add_piece(c, pos, index)) {
            c->st = TK_ERR_NOMEM;
            cuts_finish(c);
            break;
        }
        pos += 1 + n;
        index++;
    }
    c->pos = pos;
    c->index = index;
}

static void cuts_free(cuts *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i]);
    free(c->v);
}

size_t tk_te_par_cut_starts(const uint8_t *buf, size_t len, size_t piece_bytes, size_t *starts,
                            size_t max)
{
    cuts c;
    cuts_init(&c, buf, len, piece_bytes);
    for (size_t k = 0; !c.complete; k++)
        cut_through(&c, k);
    for (size_t i = 0; i < c.n && i < max; i++)
        starts[i] = c.v[i]->start;
    const size_t n = c.n;
    cuts_free(&c);
    return n;
}

/* ---- stitching --------------------------------------------------------------------------- */

static bool same_options(const tk_te_options *a, const tk_te_options *b)
{
    return a->resync_max == b->resync_max && a->full_address == b->full_address &&
           a->implicit_except == b->implicit_except && a->sijump == b->sijump &&
           a->implicit_return == b->implicit_return &&
           a->branch_prediction == b->branch_prediction &&
           a->jump_target_cache == b->jump_target_cache && a->cycle_accurate == b->cycle_accurate &&
           a->use_rv32_isa == b->use_rv32_isa;
}

static bool same_irstack(const tk_te_irstack *a, const tk_te_irstack *b)
{
    if (a->cap != b->cap || a->depth != b->depth || a->counter != b->counter ||
        a->return_since_call != b->return_since_call ||
        a->branch_since_return != b->branch_since_return)
        return false;
    for (uint32_t i = 0; i < a->depth; i++)
        if (a->addr[(a->head + i) % a->cap] != b->addr[(b->head + i) % b->cap])
            return false;
    return true;
}

static bool same_modes(const tk_te_decoder *a, const tk_te_decoder *b)
{
    /* branch predictor and jump target cache: reset by every sync, compared all the same */
    if (a->bp.size_bits != b->bp.size_bits || a->jtc.size_bits != b->jtc.size_bits ||
        a->pred_pending != b->pred_pending || a->fail_pending != b->fail_pending ||
        a->walk_uninf != b->walk_uninf || a->tvec_set != b->tvec_set ||
        memcmp(a->tvec, b->tvec, sizeof(a->tvec)) != 0)
        return false;
    if (a->bp.state && b->bp.state &&
        memcmp(a->bp.state, b->bp.state, (size_t)1 << a->bp.size_bits) != 0)
        return false;
    if (a->jtc.valid && b->jtc.valid) {
        const size_t n = (size_t)1 << a->jtc.size_bits;
        for (size_t i = 0; i < n; i++)
            if (a->jtc.valid[i] != b->jtc.valid[i] ||
                (a->jtc.valid[i] && a->jtc.addr[i] != b->jtc.addr[i]))
                return false;
    }
    return (a->bp.state == NULL) == (b->bp.state == NULL) &&
           (a->jtc.valid == NULL) == (b->jtc.valid == NULL);
}

/* Whether the serial decoder a (after the sync) will behave like the fresh decoder b did
 * (after the same sync): all state later packets read, with a's open range ending where
 * b's starts. */
static bool same_state(const tk_te_decoder *a, const tk_te_decoder *b)
{
    if (a->pc != b->pc || a->branch_map != b->branch_map || a->branches != b->branches ||
        a->stop_at_last_branch != b->stop_at_last_branch ||
        a->inferred_address != b->inferred_address || a->start_of_trace != b->start_of_trace ||
        a->address != b->address || a->privilege != b->privilege || a->have_priv != b->have_priv ||
        a->have_pc != b->have_pc || a->trap_pending != b->trap_pending ||
        a->desynced != b->desynced || a->nosync_told != b->nosync_told ||
        a->context != b->context || a->flags != b->flags || !same_options(&a->p.o, &b->p.o) ||
        !same_irstack(&a->ir, &b->ir) || !same_modes(a, b))
        return false;
    /* the instruction before pc only matters for sequentially inferable jumps */
    if (a->p.o.sijump && (a->last_valid != b->last_valid || a->last_pc != b->last_pc ||
                          memcmp(&a->last_insn, &b->last_insn, sizeof(a->last_insn)) != 0))
        return false;
    /* b reached pc at the sync and nothing else yet */
    return a->have_pc && b->range_first == b->pc && b->range_ninsn == 1 && a->range_ninsn >= 1;
}

typedef struct run {
    const tk_te_params *p;
    const tk_te_par_config *cfg;
    const uint8_t *buf;
    tk_te_decoder *prev; /* the decoder holding the serial state so far */
    piece *prev_piece;   /* whose sink prev's events go to */
    tk_te_par_stats st;
    tk_status first_bad;
} run;

static void report_piece(run *r, const piece *pc)
{
    if (r->first_bad == TK_OK)
        r->first_bad = pc->first_bad;
}

/* Piece pc decoded again from the serial state, into the previous piece's sink: the packets
 * that s has left, after `done` of the piece's decoded already. */
static tk_status redecode(run *r, piece *pc, tk_te_scan *s, uint64_t done)
{
    r->st.redecoded++;
    if (pc->sink)
        r->cfg->sink_drop(r->cfg->ctx, pc->sink);
    pc->sink = NULL;
    tk_te_decoder_free(pc->dec);
    pc->dec = NULL;
    pc->first_bad = TK_OK;
    pc->packets = done;
    const tk_status st = run_packets(r->prev, s, pc, &pc->packets);
    report_piece(r, pc);
    return st;
}

/* prev has decoded up to pc->start; take piece pc over, or decode it again. */
static tk_status stitch(run *r, piece *pc)
{
    tk_te_decoder *a = r->prev;
    tk_te_scan s;
    tk_te_scan_init(&s, &a->p, r->buf, pc->end);
    tk_te_scan_seek(&s, pc->start, pc->first_index);
    tk_te_packet k;
    tk_diag diag;
    tk_status st = tk_te_scan_next(&s, &k, &diag);
    if (st == TK_END)
        return TK_ERR_INVALID; /* the cut keeps a whole packet after it */
    if (st != TK_OK) {
        /* The cut looked like a sync by its first bytes, but the packet is damaged: the
         * worker stopped on it, and the serial decode reports it and goes on, as a decode
         * of the piece from its start does. */
        tk_te_scan_seek(&s, pc->start, pc->first_index);
        return redecode(r, pc, &s, 0);
    }
    if ((st = tk_te_decoder_packet(a, &k, s.offset, s.index)) != TK_OK)
        return st;
    /* the blocks a collected up to here come before the cut range (and a may end here) */
    if ((st = tk_te_decoder_flush(a)) != TK_OK)
        return st;
    if (pc->have_after && pc->fatal == TK_OK && same_state(a, &pc->after)) {
        /* piece i's events after P are the serial ones */
        if (a->range_ninsn > 1) {
            /* the serial range was open at the sync: its part before the sync ends here */
            tk_event ev = {.kind = TK_EV_RANGE,
                           .end = TK_END_NONE,
                           .first = a->range_first,
                           .last = a->last_pc,
                           .ninsn = a->range_ninsn - 1,
                           .next = a->pc,
                           .priv = a->privilege,
                           .context = a->context,
                           .byte_offset = a->byte_offset,
                           .packet_index = a->packet_index};
            if ((st = a->fn(a->ctx, &ev)) != TK_OK)
                return st;
        }
        a->range_ninsn = 0;
        r->st.stitched++;
        tk_te_decoder_free(a);
        if ((st = r->cfg->sink_done(r->cfg->ctx, r->prev_piece->sink)) != TK_OK)
            return st;
        r->prev_piece->sink = NULL;
        report_piece(r, pc);
        r->prev = pc->dec;
        r->prev_piece = pc;
        pc->dec = NULL;
        return TK_OK;
    }
    return redecode(r, pc, &s, 1);
}

/* ---- scheduling ---------------------------------------------------------------------------
 * Workers take pieces in trace order as they come free, each on its own image; the calling
 * thread stitches the pieces in order as they finish, on an image of its own (the decoder
 * it carries is moved onto it, since the worker whose image it was may be decoding the next
 * piece already). No wave barrier: a worker never waits for the slowest of a wave. At most
 * `window` pieces past the last stitched one are started, which bounds the output held
 * (PC lists, listings) and the trace pages in use. */

typedef struct sched {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a piece finished, the window moved, or stop */
    size_t next;       /* next piece to hand out */
    size_t limit;      /* pieces below this may be started */
    bool stop;
    cuts *c;
} sched;

typedef struct pool_worker {
    sched *s;
    worker w; /* p, cfg, buf and this thread's image */
} pool_worker;

static void *pool_loop(void *arg)
{
    pool_worker *pw = arg;
    sched *s = pw->s;
    tk_walk_memo_loan loan = {0};
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && s->next >= s->limit)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->stop)
            break;
        cut_through(s->c, s->next);
        if (s->next >= s->c->n)
            break;
        piece *pc = s->c->v[s->next++];
        pthread_mutex_unlock(&s->mu);
        worker w = pw->w;
        w.pc = pc;
        w.loan = &loan;
        work(&w);
        pthread_mutex_lock(&s->mu);
        pc->done = true;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    tk_walk_memo_loan_free(&loan);
    return NULL;
}

/* Stitch piece k (finished) onto the serial state. */
static tk_status take_piece(run *r, piece *pc, tk_image *stitch_img)
{
    tk_status st;
    if (!r->prev) {
        if ((st = pc->fatal) != TK_OK)
            return st;
        report_piece(r, pc);
        r->prev = pc->dec;
        r->prev_piece = pc;
        pc->dec = NULL;
    } else {
        if (stitch_img)
            tk_dec_rebind_image(r->prev, stitch_img);
        if ((st = stitch(r, pc)) != TK_OK)
            return st;
    }
    r->st.packets += pc->packets;
    return TK_OK;
}

tk_status tk_te_decode_parallel(const tk_te_params *p, const uint8_t *buf, size_t len,
                                const tk_te_par_config *cfg, tk_te_par_stats *stats,
                                tk_status *first_bad)
{
    if (!p || (!buf && len) || !cfg || cfg->jobs < 1 || !cfg->open_image || !cfg->sink_new ||
        !cfg->sink_done || !cfg->sink_drop)
        return TK_ERR_INVALID;
    const unsigned jobs = cfg->jobs > 256 ? 256 : cfg->jobs;
    tk_status st = TK_OK;
    /* only the 2.0 layout is cut (the sync test reads its format 3 bits); others are one
     * piece */
    const size_t piece_bytes = p->spec == TK_TE_SPEC_2_0
                                   ? (cfg->piece_bytes ? cfg->piece_bytes : DEFAULT_PIECE)
                                   : SIZE_MAX;
    cuts c;
    cuts_init(&c, buf, len, piece_bytes);
    const bool several = piece_bytes != SIZE_MAX && len > piece_bytes;
    const unsigned nthreads = several && jobs > 1 ? jobs : 0;
    tk_image *imgs[257] = {0}; /* one per worker, then the stitching thread's */
    pool_worker pws[256];
    pthread_t th[256];
    for (unsigned t = 0; st == TK_OK && t < (nthreads ? nthreads + 1 : 1); t++)
        st = cfg->open_image(cfg->ctx, &imgs[t]);
    run r = {.p = p, .cfg = cfg, .buf = buf, .st = {.size = sizeof(r.st)}};
    sched sc = {.c = &c, .limit = 4 * (size_t)(nthreads ? nthreads : 1)};
    unsigned started = 0;
    tk_walk_memo_loan serial_loan = {0};
    const bool pooled = st == TK_OK && nthreads;
    if (pooled) {
        pthread_mutex_init(&sc.mu, NULL);
        pthread_cond_init(&sc.cv, NULL);
        for (; started < nthreads; started++) {
            pws[started] = (pool_worker){
                .s = &sc, .w = {.p = p, .cfg = cfg, .buf = buf, .img = imgs[started]}};
            if (pthread_create(&th[started], NULL, pool_loop, &pws[started]) != 0)
                break;
        }
    }
    tk_image *stitch_img = started ? imgs[nthreads] : NULL;
    for (size_t k = 0; st == TK_OK; k++) {
        /* the cuts grow under the lock while workers run; serially nothing else touches them */
        if (started)
            pthread_mutex_lock(&sc.mu);
        cut_through(&c, k);
        piece *pc = k < c.n ? c.v[k] : NULL;
        const size_t next_start = k + 1 < c.n ? c.v[k + 1]->start : 0;
        while (started && pc && !pc->done)
            pthread_cond_wait(&sc.cv, &sc.mu);
        if (started)
            pthread_mutex_unlock(&sc.mu);
        if (pc && !started) {
            /* serially (one job, one piece, or no thread could be started) */
            worker w = {
                .p = p, .cfg = cfg, .buf = buf, .img = imgs[0], .loan = &serial_loan, .pc = pc};
            work(&w);
        }
        if (!pc) {
            st = c.st;
            break;
        }
        st = take_piece(&r, pc, stitch_img);
        if (st == TK_OK && started) {
            pthread_mutex_lock(&sc.mu);
            sc.limit = k + 1 + 4 * (size_t)nthreads;
            pthread_cond_broadcast(&sc.cv);
            pthread_mutex_unlock(&sc.mu);
        }
        /* every piece before the next one is done: its pages may go */
        if (cfg->release && st == TK_OK && next_start)
            cfg->release(cfg->ctx, next_start);
    }
    if (started) {
        pthread_mutex_lock(&sc.mu);
        sc.stop = true;
        pthread_cond_broadcast(&sc.cv);
        pthread_mutex_unlock(&sc.mu);
        for (unsigned t = 0; t < started; t++)
            pthread_join(th[t], NULL);
    }
    if (pooled) {
        pthread_cond_destroy(&sc.cv);
        pthread_mutex_destroy(&sc.mu);
    }
    r.st.pieces = c.n;
    if (st == TK_OK && r.prev) {
        st = tk_te_decoder_finish(r.prev);
        if (st == TK_OK)
            st = cfg->sink_done(cfg->ctx, r.prev_piece->sink);
        r.prev_piece->sink = NULL;
    }
    tk_te_decoder_free(r.prev);
    for (size_t i = 0; i < c.n; i++) {
        tk_te_decoder_free(c.v[i]->dec);
        if (c.v[i]->sink)
            cfg->sink_drop(cfg->ctx, c.v[i]->sink);
    }
    tk_walk_memo_loan_free(&serial_loan);
    for (unsigned t = 0; t < 257; t++)
        tk_image_free(imgs[t]);
    cuts_free(&c);
    if (stats) {
        size_t n = stats->size && stats->size < sizeof(r.st) ? stats->size : sizeof(r.st);
        memcpy(stats, &r.st, n);
        stats->size = n;
    }
    if (first_bad)
        *first_bad = r.first_bad;
    return st;
}
