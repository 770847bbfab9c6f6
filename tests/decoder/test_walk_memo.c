/* SPDX-License-Identifier: BSD-2-Clause */
/* The walk memo (src/etrace/walk_memo.h): a decoder that replays remembered walks and chunks
 * of walks sends exactly the events of one that walks every time: the same batches (same
 * entries, same boundaries, same headers), the same other events and messages, the same
 * statistics. For every etrace-ref vector, clean and damaged (bits flipped, bytes dropped or
 * repeated), so that replays also meet errors, resyncs and lost trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etrace/walk_memo.h"
#include "te_ref.h"
#include "testutil.h"
#include "tracekit/te_decoder.h"

/* The events of one decode as a list of words (block pointers as the addresses they stand
 * for: the two decodes have images of their own). */
typedef struct log {
    uint64_t *w;
    size_t n, cap;
} log;

static void put(log *l, uint64_t v)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4096;
        l->w = realloc(l->w, l->cap * sizeof(*l->w));
        assert_non_null(l->w);
    }
    l->w[l->n++] = v;
}

static uint64_t text_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; s && *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

static tk_status on_event(void *ctx, const tk_event *ev)
{
    log *l = ctx;
    put(l, ev->kind);
    put(l, ev->byte_offset);
    put(l, ev->packet_index);
    put(l, ev->priv);
    put(l, ev->context);
    if (ev->kind == TK_EV_BLOCKS) {
        put(l, ev->nblocks);
        for (uint32_t i = 0; i < ev->nblocks; i++) {
            const tk_block_exec *e = &ev->blocks[i];
            put(l, e->block->start);
            put(l, e->block->last);
            put(l, e->block->ninsn);
            put(l, e->next);
            put(l, (uint64_t)e->end << 16 | (uint64_t)e->taken << 8 | e->indirect);
        }
        return TK_OK;
    }
    put(l, ev->first);
    put(l, ev->last);
    put(l, ev->ninsn);
    put(l, ev->next);
    put(l, (uint64_t)ev->end << 16 | (uint64_t)ev->taken << 8 | ev->indirect);
    put(l, ev->kind == TK_EV_ERROR ? text_hash(ev->message) : 0);
    return TK_OK;
}

typedef struct totals {
    size_t decodes;
    uint64_t replayed, chunks;
    uint64_t errors;
} totals;

/* Decode buf with block events, the memo on or off, into l; the decoder's statistics out.
 * Returns what tk_te_decoder_run_raw did (a damaged copy's first bad packet). */
static tk_status decode(const char *dir, const char *prog, const uint8_t *buf, size_t len,
                        bool memo, log *l, tk_te_decoder_stats *st)
{
    tk_te_params p;
    tk_test_ref_params(dir, prog, &p, NULL);
    tk_image *img = tk_test_ref_image(prog, true);
    tk_te_raw *raw;
    assert_int_equal(tk_te_raw_from_buffer(buf, len, &raw), TK_OK);
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(&p, img, on_event, l, &d), TK_OK);
    tk_te_decoder_set_flags(d, TK_TE_DEC_BLOCK_EVENTS);
    assert_int_equal(tk_dec_set_walk_memo(d, memo), TK_OK);
    const tk_status st_run = tk_te_decoder_run_raw(d, raw);
    assert_true(st_run == TK_OK || st_run == TK_ERR_BAD_PACKET || st_run == TK_ERR_TRUNCATED);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    *st = (tk_te_decoder_stats){.size = sizeof(*st)};
    tk_te_decoder_get_stats(d, st);
    tk_te_decoder_free(d);
    tk_te_raw_close(raw);
    tk_image_free(img);
    return st_run;
}

static void compare(const char *what, const uint8_t *buf, size_t len, const char *dir,
                    const char *prog, totals *t)
{
    log off = {0}, on = {0};
    tk_te_decoder_stats s_off, s_on;
    assert_int_equal(decode(dir, prog, buf, len, false, &off, &s_off),
                     decode(dir, prog, buf, len, true, &on, &s_on));
    size_t i = 0;
    while (i < off.n && i < on.n && off.w[i] == on.w[i])
        i++;
    if (i < off.n || i < on.n)
        fail_msg("%s/%s %s: the events differ at word %zu of %zu/%zu (memo off/on)", dir, prog,
                 what, i, off.n, on.n);
    assert_int_equal(s_off.walks_replayed, 0);
    assert_int_equal(s_off.chunks_replayed, 0);
    assert_int_equal(s_off.packets, s_on.packets);
    assert_int_equal(s_off.instructions, s_on.instructions);
    assert_int_equal(s_off.errors, s_on.errors);
    assert_int_equal(s_off.traps, s_on.traps);
    t->decodes++;
    t->replayed += s_on.walks_replayed;
    t->chunks += s_on.chunks_replayed;
    t->errors += s_on.errors;
    free(off.w);
    free(on.w);
}

static uint32_t next_rand(uint32_t *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

static void check_vector(const char *prog, const char *setting, void *ctx)
{
    totals *t = ctx;
    char *dir;
    size_t len;
    uint8_t *raw = tk_test_ref_raw(prog, setting, &dir, &len);
    compare("clean", raw, len, dir, prog, t);

    uint8_t *bad = malloc(len * 2 + 1);
    assert_non_null(bad);
    uint32_t seed = (uint32_t)len;
    for (int round = 0; round < 4; round++) {
        /* 0, 1: bits flipped (1 in 997, 1 in 211 bytes); 2: bytes dropped; 3: repeated */
        size_t n = 0;
        for (size_t i = 0; i < len; i++) {
            const bool hit = next_rand(&seed) % (round == 1 ? 211u : 997u) == 0;
            if (hit && round == 2)
                continue;
            bad[n++] = raw[i];
            if (hit && round < 2)
                bad[n - 1] ^= (uint8_t)(1u << (next_rand(&seed) & 7u));
            if (hit && round == 3)
                bad[n++] = raw[i];
        }
        char what[32];
        snprintf(what, sizeof(what), "damaged (%d)", round);
        compare(what, bad, n, dir, prog, t);
    }
    free(bad);
    free(raw);
    free(dir);
}

static void test_memo_changes_nothing(void **state)
{
    (void)state;
    totals t = {0};
    const size_t n = tk_test_ref_each(check_vector, &t);
    print_message("%zu vectors, %zu decodes: %llu walks and %llu chunks replayed, %llu error "
                  "events\n",
                  n, t.decodes, (unsigned long long)t.replayed, (unsigned long long)t.chunks,
                  (unsigned long long)t.errors);
    assert_true(n >= 20);
    /* the memo is used, and the damaged copies reach the error paths */
    assert_true(t.replayed > 10000);
    assert_true(t.chunks > 10000);
    assert_true(t.errors > 0);
}

/* One decode of buf on img with block events, its memo lent from loan and taken back into it
 * afterwards, as a parallel decode's worker decodes each of its pieces (parallel.c). */
static void decode_lent(const tk_te_params *p, tk_image *img, const uint8_t *buf, size_t len,
                        tk_walk_memo_loan *loan, log *l, tk_te_decoder_stats *st)
{
    tk_te_raw *raw;
    assert_int_equal(tk_te_raw_from_buffer(buf, len, &raw), TK_OK);
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(p, img, on_event, l, &d), TK_OK);
    assert_int_equal(tk_dec_set_walk_memo(d, false), TK_OK);
    tk_te_decoder_set_flags(d, TK_TE_DEC_BLOCK_EVENTS);
    tk_walk_memo_lend(d, loan);
    assert_null(loan->memo);
    assert_int_equal(tk_te_decoder_run_raw(d, raw), TK_OK);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    *st = (tk_te_decoder_stats){.size = sizeof(*st)};
    tk_te_decoder_get_stats(d, st);
    tk_walk_memo_take_back(d, loan);
    assert_non_null(loan->memo);
    tk_te_decoder_free(d);
    tk_te_raw_close(raw);
}

/* The same trace decoded three times on one image, each decoder lent the memo the previous
 * one left: the events are the same each time, and the second and third decodes, which start
 * with every walk of the trace remembered, replay at least as many walks as the first. */
static void check_lent(const char *prog, const char *setting, void *ctx)
{
    totals *t = ctx;
    char *dir;
    size_t len;
    uint8_t *buf = tk_test_ref_raw(prog, setting, &dir, &len);
    tk_te_params p;
    tk_test_ref_params(dir, prog, &p, NULL);
    tk_image *img = tk_test_ref_image(prog, true);
    tk_walk_memo_loan loan = {0};
    log first = {0};
    tk_te_decoder_stats s_first;
    decode_lent(&p, img, buf, len, &loan, &first, &s_first);
    for (int round = 0; round < 2; round++) {
        log again = {0};
        tk_te_decoder_stats s;
        decode_lent(&p, img, buf, len, &loan, &again, &s);
        if (again.n != first.n || memcmp(again.w, first.w, first.n * sizeof(*first.w)) != 0)
            fail_msg("%s/%s: a decoder lent a used memo sends other events", prog, setting);
        assert_int_equal(s.instructions, s_first.instructions);
        assert_true(s.walks_replayed >= s_first.walks_replayed);
        t->replayed += s.walks_replayed - s_first.walks_replayed;
        free(again.w);
    }
    t->decodes++;
    free(first.w);
    tk_walk_memo_loan_free(&loan);
    assert_null(loan.memo);
    tk_image_free(img);
    free(buf);
    free(dir);
}

static void test_lent_memo(void **state)
{
    (void)state;
    totals t = {0};
    const size_t n = tk_test_ref_each(check_lent, &t);
    print_message("%zu vectors: %llu more walks replayed with a lent memo\n", n,
                  (unsigned long long)t.replayed);
    assert_true(n >= 20);
    /* a warm memo is used: walks the first decode had to learn are replayed */
    assert_true(t.replayed > 0);
}

/* How often the walks around format 3 syncs were replayed (tk_te_decoder_stats). */
typedef struct sync_walks {
    uint64_t syncs, syncs_replayed;   /* format 3 subformat 0 packets */
    uint64_t before, before_replayed; /* the packets just before them */
    uint64_t after, after_replayed;   /* and just after */
} sync_walks;

/* Feed buf packet by packet to a decoder with block events and its memo, and count in sw the
 * walks replayed around the syncs at byte offset from or later. */
static void count_sync_walks(const tk_te_params *p, tk_image *img, const uint8_t *buf, size_t len,
                             size_t from, sync_walks *sw)
{
    log l = {0};
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(p, img, on_event, &l, &d), TK_OK);
    tk_te_decoder_set_flags(d, TK_TE_DEC_BLOCK_EVENTS);
    tk_te_scan s;
    tk_te_scan_init(&s, p, buf, len);
    tk_te_packet pkt;
    tk_diag diag = {.size = sizeof(diag)};
    bool prev_sync = false, prev_replayed = false;
    uint64_t replayed = 0;
    tk_status st;
    while ((st = tk_te_scan_next(&s, &pkt, &diag)) == TK_OK) {
        assert_int_equal(tk_te_decoder_packet(d, &pkt, s.offset, s.index), TK_OK);
        tk_te_decoder_stats now = {.size = sizeof(now)};
        tk_te_decoder_get_stats(d, &now);
        const bool r = now.walks_replayed > replayed;
        replayed = now.walks_replayed;
        const bool sync = pkt.format == TK_TE_F3 && pkt.subformat == TK_TE_SF_START;
        if (s.offset >= from && sync) {
            sw->syncs++;
            sw->syncs_replayed += r;
            sw->before++;
            sw->before_replayed += prev_replayed;
        }
        if (s.offset >= from && prev_sync) {
            sw->after++;
            sw->after_replayed += r;
        }
        prev_sync = sync;
        prev_replayed = r;
    }
    assert_int_equal(st, TK_END);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    tk_te_decoder_free(d);
    free(l.w);
}

/* The walks around a format 3 sync: the one before it reports the instruction before the
 * sync's address, often the last of a block, and stops there, inside the block; the sync's
 * own walk, and the next packet's after a sync inside a block, start there. They are replayed
 * from the memo like the others (walks that stop inside a block are kept, those that start
 * inside one are remembered under the block and the place in it, and a sync's walk under its
 * mark). Dhrystone's trace twice in a row: the same events with the memo as without, and in
 * the second copy nearly all walks around its syncs replayed (none of the sync's own and of the
 * walks before it were, when only walks from a block's start to a block's start were kept). */
static void test_sync_walks_replay(void **state)
{
    (void)state;
    char *dir;
    size_t len;
    uint8_t *raw = tk_test_ref_raw("dhrystone", "itype3_basic", &dir, &len);
    uint8_t *twice = malloc(2 * len);
    assert_non_null(twice);
    memcpy(twice, raw, len);
    memcpy(twice + len, raw, len);
    totals t = {0};
    compare("twice", twice, 2 * len, dir, "dhrystone", &t);

    tk_te_params p;
    tk_test_ref_params(dir, "dhrystone", &p, NULL);
    tk_image *img = tk_test_ref_image("dhrystone", true);
    sync_walks sw = {0};
    count_sync_walks(&p, img, twice, 2 * len, len, &sw);
    print_message("second copy: %llu/%llu syncs, %llu/%llu packets before, %llu/%llu after "
                  "replayed\n",
                  (unsigned long long)sw.syncs_replayed, (unsigned long long)sw.syncs,
                  (unsigned long long)sw.before_replayed, (unsigned long long)sw.before,
                  (unsigned long long)sw.after_replayed, (unsigned long long)sw.after);
    assert_true(sw.syncs > 100);
    assert_true(sw.syncs_replayed * 10 >= sw.syncs * 9);
    assert_true(sw.before_replayed * 10 >= sw.before * 9);
    assert_true(sw.after_replayed * 10 >= sw.after * 9);
    tk_image_free(img);
    free(twice);
    free(raw);
    free(dir);
}

/* ---- random packets over a tiny program ---- */
#define ENC_I(op, rd, rs1, imm)                                                                    \
    ((((uint32_t)(imm)) & 0xfffu) << 20 | (rs1) << 15 | (rd) << 7 | (op))
#define NOP ENC_I(0x13u, 0u, 0u, 0)
#define JALR(rd, rs1) ENC_I(0x67u, rd, rs1, 0)
#define JAL0(imm)                                                                                  \
    ((((uint32_t)(imm) >> 20) & 1u) << 31 | (((uint32_t)(imm) >> 1) & 0x3ffu) << 21 |              \
     (((uint32_t)(imm) >> 11) & 1u) << 20 | (((uint32_t)(imm) >> 12) & 0xffu) << 12 | 0x6fu)
#define BRANCH(f3, imm)                                                                            \
    ((((uint32_t)(imm) >> 12) & 1u) << 31 | (((uint32_t)(imm) >> 5) & 0x3fu) << 25 | 2u << 20 |    \
     1u << 15 | (f3) << 12 | (((uint32_t)(imm) >> 1) & 0xfu) << 8 |                                \
     (((uint32_t)(imm) >> 11) & 1u) << 7 | 0x63u)
#define RAND_BASE 0x80000000ull

/* Loops into the middle of blocks, a jump and a return (uninferable) among blocks of one to
 * four instructions: walks that start and stop inside blocks, go round loops and come back
 * to where they started, with few enough blocks that random packets meet the same walk
 * inputs again and again. */
static const uint32_t rand_code[] = {
    NOP,               /* 0x00 */
    NOP,               /* 0x04 */
    BRANCH(0u, -8),    /* 0x08 beq -> 0x00 */
    NOP,               /* 0x0c */
    BRANCH(1u, 12),    /* 0x10 bne -> 0x1c */
    NOP,               /* 0x14 */
    JAL0(-20),         /* 0x18 j -> 0x04 */
    NOP,               /* 0x1c */
    NOP,               /* 0x20 */
    JALR(0u, 1u),      /* 0x24 ret */
    BRANCH(0u, -28),   /* 0x28 beq -> 0x0c */
    BRANCH(1u, -0x24), /* 0x2c bne -> 0x08 */
    JAL0(-0x30)        /* 0x30 j -> 0x00 */
};
#define RAND_NINSN (sizeof(rand_code) / sizeof(rand_code[0]))

/* What rand_code[i] does: 0 sequential, 1 branch, 2 jump, 3 return; and where to. */
static unsigned rand_kind(size_t i, uint64_t *target)
{
    const uint32_t w = rand_code[i];
    if ((w & 0x7fu) == 0x63u) {
        const uint32_t imm = (w >> 31 & 1u) << 12 | (w >> 7 & 1u) << 11 | (w >> 25 & 0x3fu) << 5 |
                             (w >> 8 & 0xfu) << 1;
        *target = RAND_BASE + 4u * i + (uint64_t)(int64_t)((int32_t)(imm << 19) >> 19);
        return 1;
    }
    if ((w & 0x7fu) == 0x6fu) {
        const uint32_t imm = (w >> 31 & 1u) << 20 | (w >> 12 & 0xffu) << 12 | (w >> 20 & 1u) << 11 |
                             (w >> 21 & 0x3ffu) << 1;
        *target = RAND_BASE + 4u * i + (uint64_t)(int64_t)((int32_t)(imm << 11) >> 11);
        return 2;
    }
    return (w & 0x7fu) == 0x67u ? 3 : 0;
}

/* An image of n instructions at RAND_BASE. */
static tk_image *code_image(const uint32_t *code, size_t n)
{
    tk_image *img;
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &img), TK_OK);
    uint8_t bytes[4 * RAND_NINSN];
    assert_true(n <= RAND_NINSN);
    for (size_t i = 0; i < n; i++)
        for (unsigned b = 0; b < 4; b++)
            bytes[4 * i + b] = (uint8_t)(code[i] >> (8 * b));
    assert_int_equal(tk_image_add_region(img, RAND_BASE, bytes, 4 * n), TK_OK);
    return img;
}

/* Decode the packets of a random run of rand_code (from seed, n instructions) with block
 * events, the memo on or off; the events into l, the statistics into st. The packets are
 * those an encoder could send (a report at each return's target, others anywhere, syncs
 * anywhere carrying their own branch), except that now and then one has notify or updiscon
 * set or a sync another privilege, which the decoder may take as damage: the memo must
 * tell such walks apart from the others all the same. */
static void decode_random(uint32_t seed, size_t n, bool memo, log *l, tk_te_decoder_stats *st)
{
    tk_image *img = code_image(rand_code, RAND_NINSN);
    tk_te_params p;
    tk_te_params_init(&p);
    p.s.iaddress_width = 64;
    p.s.iaddress_lsb = 0;
    p.s.return_stack_size = 0;
    p.s.call_counter_size = 0;
    p.o.full_address = true;
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(&p, img, on_event, l, &d), TK_OK);
    tk_te_decoder_set_flags(d, TK_TE_DEC_BLOCK_EVENTS);
    assert_int_equal(tk_dec_set_walk_memo(d, memo), TK_OK);
    uint32_t map = 0; /* outcomes since the last report (1: not taken), this one's last */
    unsigned bits = 0;
    uint64_t index = 0;
    size_t at = next_rand(&seed) % RAND_NINSN; /* the instruction reached */
    uint64_t target = 0;
    unsigned kind = rand_kind(at, &target);
    bool taken = next_rand(&seed) & 1u, reported = false;
    for (size_t i = 0; i < n; i++) {
        if (kind == 1) {
            map |= (uint32_t)!taken << bits;
            bits++;
        }
        const uint32_t r = next_rand(&seed);
        tk_te_packet pkt = {.address = RAND_BASE + 4u * at};
        if (i == 0 || (!reported && r % 23 == 1)) {
            /* a sync: it follows the outcomes before it and carries this branch's */
            pkt.format = 3;
            pkt.branch = kind == 1 && !taken;
            pkt.privilege = r % 13 == 0 ? 1 : 3;
        } else if (reported || bits >= 20 || r % 11 == 2) {
            pkt.format = bits ? 1 : 2;
            pkt.branches = (uint8_t)bits;
            pkt.branch_map = map;
            pkt.notify = r % 37 == 4;
            pkt.updiscon = r % 31 == 5;
        }
        if (pkt.format) {
            assert_int_equal(tk_te_decoder_packet(d, &pkt, 4 * index, index), TK_OK);
            index++;
            map = 0;
            bits = 0;
        }
        /* the next instruction; a return goes anywhere, and is reported there */
        reported = kind == 3;
        const uint64_t next = kind == 3 ? RAND_BASE + 4u * (next_rand(&seed) % 4u * 3u + 1u)
                              : kind == 2 || (kind == 1 && taken) ? target
                                                                  : RAND_BASE + 4u * (at + 1);
        at = (size_t)((next - RAND_BASE) / 4u);
        assert_true(at < RAND_NINSN);
        kind = rand_kind(at, &target);
        taken = next_rand(&seed) % 4u != 0;
    }
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    *st = (tk_te_decoder_stats){.size = sizeof(*st)};
    tk_te_decoder_get_stats(d, st);
    tk_te_decoder_free(d);
    tk_image_free(img);
}

/* Random packets over a tiny program: the same events with the memo as without. Few blocks,
 * so the inputs of a walk come back often with only what the memo's key must tell apart
 * changed: where in its block the walk starts, a packet's flags, a sync's privilege. */
static void test_random_walks(void **state)
{
    (void)state;
    uint64_t replayed = 0, errors = 0;
    for (uint32_t seed = 1; seed <= 400; seed++) {
        log off = {0}, on = {0};
        tk_te_decoder_stats s_off, s_on;
        decode_random(seed, 4000, false, &off, &s_off);
        decode_random(seed, 4000, true, &on, &s_on);
        size_t i = 0;
        while (i < off.n && i < on.n && off.w[i] == on.w[i])
            i++;
        if (i < off.n || i < on.n)
            fail_msg("seed %u: the events differ at word %zu of %zu/%zu (memo off/on)", seed, i,
                     off.n, on.n);
        assert_int_equal(s_off.instructions, s_on.instructions);
        assert_int_equal(s_off.errors, s_on.errors);
        replayed += s_on.walks_replayed;
        errors += s_on.errors;
        free(off.w);
        free(on.w);
    }
    print_message("%llu walks replayed, %llu error events\n", (unsigned long long)replayed,
                  (unsigned long long)errors);
    assert_true(replayed > 10000);
}

/* Packets by hand over loop_code, a loop without a branch (an idle loop): a walk that starts
 * inside its block goes round it to an address at or before its start, while one from the
 * block's start, or from before the address, stops there at once. */
static const uint32_t loop_code[] = {
    NOP,      /* 0x00 */
    NOP,      /* 0x04 */
    JAL0(-8), /* 0x08 j -> 0x00 */
};

typedef struct hand {
    tk_te_decoder *d;
    uint64_t index;
} hand;

static void hand_packet(hand *h, unsigned format, uint64_t address, bool notify)
{
    tk_te_packet pkt = {.format = (uint8_t)format,
                        .address = RAND_BASE + address,
                        .notify = notify,
                        .privilege = 3};
    assert_int_equal(tk_te_decoder_packet(h->d, &pkt, 4 * h->index, h->index), TK_OK);
    h->index++;
}

/* Start again at 0x04 and stop at 0x00 (notify), then at address (notify) unless it is 0:
 * the next walk starts there, inside the block if address is not 0. */
static void hand_restart(hand *h, uint64_t address)
{
    assert_int_equal(tk_te_decoder_lost(h->d, 4 * h->index, h->index), TK_OK);
    h->index++;
    hand_packet(h, 3, 0x04, false);
    hand_packet(h, 2, 0x00, true);
    if (address)
        hand_packet(h, 2, address, true);
}

static void decode_hand(bool memo, log *l, tk_te_decoder_stats *st)
{
    tk_image *img = code_image(loop_code, sizeof(loop_code) / sizeof(loop_code[0]));
    tk_te_params p;
    tk_te_params_init(&p);
    p.s.iaddress_width = 64;
    p.s.iaddress_lsb = 0;
    p.s.return_stack_size = 0;
    p.s.call_counter_size = 0;
    p.o.full_address = true;
    hand h = {0};
    assert_int_equal(tk_te_decoder_new(&p, img, on_event, l, &h.d), TK_OK);
    tk_te_decoder_set_flags(h.d, TK_TE_DEC_BLOCK_EVENTS);
    assert_int_equal(tk_dec_set_walk_memo(h.d, memo), TK_OK);
    /* from 0x08 round the loop to 0x04 (twice: a walk that starts inside a block is kept the
     * second time, tk_walk_memo_second_sight), then from the block's start to 0x04 */
    for (int i = 0; i < 2; i++) {
        hand_restart(&h, 0x08);
        hand_packet(&h, 2, 0x04, false);
    }
    hand_restart(&h, 0);
    hand_packet(&h, 2, 0x04, false);
    /* from 0x04 to 0x08 (twice), then from 0x08 round the loop to 0x08 */
    for (int i = 0; i < 2; i++) {
        hand_restart(&h, 0x04);
        hand_packet(&h, 2, 0x08, false);
    }
    hand_restart(&h, 0x08);
    hand_packet(&h, 2, 0x08, false);
    assert_int_equal(tk_te_decoder_finish(h.d), TK_OK);
    *st = (tk_te_decoder_stats){.size = sizeof(*st)};
    tk_te_decoder_get_stats(h.d, st);
    tk_te_decoder_free(h.d);
    tk_image_free(img);
}

/* A walk that starts inside a block is not the one from the block's start, nor one from
 * another place in it, with the same branch map and address: the memo tells them apart. */
static void test_inside_walks_apart(void **state)
{
    (void)state;
    log off = {0}, on = {0};
    tk_te_decoder_stats s_off, s_on;
    decode_hand(false, &off, &s_off);
    decode_hand(true, &on, &s_on);
    assert_int_equal(s_off.errors, 0);
    assert_int_equal(s_on.errors, 0);
    assert_int_equal(s_off.instructions, s_on.instructions);
    assert_int_equal(off.n, on.n);
    assert_memory_equal(off.w, on.w, off.n * sizeof(*off.w));
    /* the memo is used: the walk from the block's start to 0x08 (notify), the second time */
    print_message("%llu walks replayed\n", (unsigned long long)s_on.walks_replayed);
    assert_true(s_on.walks_replayed >= 1);
    free(off.w);
    free(on.w);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memo_changes_nothing), cmocka_unit_test(test_lent_memo),
        cmocka_unit_test(test_sync_walks_replay),    cmocka_unit_test(test_random_walks),
        cmocka_unit_test(test_inside_walks_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
