/* SPDX-License-Identifier: BSD-2-Clause */
/* The PC list and the listing over whole blocks (TK_EV_BLOCKS, which `tracekit decode` asks
 * the decoder for) write exactly what they write over the decoder's range events: for every
 * etrace-ref vector, clean and damaged, byte for byte (the PC list with the same count).
 * Both keep each block's text by block id; the unit tests below reach what the vectors do
 * not: two images whose block ids collide, blocks too long to keep, output crossing the
 * buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "te_ref.h"
#include "testutil.h"
#include "tracekit/blocks.h"
#include "tracekit/sink.h"
#include "tracekit/te_decoder.h"

typedef struct printed {
    char *text;
    size_t len;
    uint64_t count; /* PC list: lines written */
    tk_status run;
} printed;

enum printer { PCS, LISTING, LISTING_RAW, PRINTERS };

/* Decode buf (block events or range events) into a PC list or listing. */
static printed decode(const char *dir, const char *prog, const uint8_t *buf, size_t len,
                      enum printer pr, bool blocks)
{
    tk_te_params p;
    tk_test_ref_params(dir, prog, &p, NULL);
    tk_image *img = tk_test_ref_image(prog, true);
    tk_te_raw *raw;
    assert_int_equal(tk_te_raw_from_buffer(buf, len, &raw), TK_OK);
    printed l = {0};
    FILE *out = open_memstream(&l.text, &l.len);
    assert_non_null(out);
    tk_pc_list *pcs = NULL;
    tk_listing *lst = NULL;
    tk_te_decoder *d;
    if (pr == PCS) {
        assert_int_equal(tk_pc_list_new(img, out, &pcs), TK_OK);
        assert_int_equal(tk_te_decoder_new(&p, img, tk_pc_list_event, pcs, &d), TK_OK);
    } else {
        assert_int_equal(tk_listing_new(img, out, pr == LISTING_RAW ? TK_LISTING_RAW : 0, &lst),
                         TK_OK);
        assert_int_equal(tk_te_decoder_new(&p, img, tk_listing_event, lst, &d), TK_OK);
    }
    tk_te_decoder_set_flags(d, blocks ? TK_TE_DEC_BLOCK_EVENTS : 0u);
    l.run = tk_te_decoder_run_raw(d, raw);
    assert_true(l.run == TK_OK || l.run == TK_ERR_BAD_PACKET || l.run == TK_ERR_TRUNCATED);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    if (pcs) {
        assert_int_equal(tk_pc_list_flush(pcs), TK_OK);
        l.count = tk_pc_list_count(pcs);
    } else {
        assert_int_equal(tk_listing_flush(lst), TK_OK);
    }
    tk_te_decoder_free(d);
    tk_pc_list_free(pcs);
    tk_listing_free(lst);
    fclose(out);
    tk_te_raw_close(raw);
    tk_image_free(img);
    return l;
}

typedef struct totals {
    size_t decodes;
    uint64_t lines, bytes[PRINTERS];
} totals;

static void compare(const char *what, const uint8_t *buf, size_t len, const char *dir,
                    const char *prog, totals *t)
{
    static const char *const names[PRINTERS] = {"PC lists", "listings", "raw listings"};
    for (int pr = 0; pr < PRINTERS; pr++) {
        /* (the listing without raw bytes is the raw one less a field: clean copies only, for
         * time) */
        if (pr == LISTING && strcmp(what, "clean"))
            continue;
        printed r = decode(dir, prog, buf, len, (enum printer)pr, false),
                b = decode(dir, prog, buf, len, (enum printer)pr, true);
        assert_int_equal(r.run, b.run);
        size_t i = 0;
        while (i < r.len && i < b.len && r.text[i] == b.text[i])
            i++;
        if (i < r.len || i < b.len)
            fail_msg("%s/%s %s: the %s differ at byte %zu of %zu/%zu (ranges/blocks)", dir, prog,
                     what, names[pr], i, r.len, b.len);
        assert_int_equal(r.count, b.count);
        t->decodes++;
        t->lines += b.count;
        t->bytes[pr] += b.len;
        free(r.text);
        free(b.text);
    }
}

static void check_vector(const char *prog, const char *setting, void *ctx)
{
    char *dir;
    size_t len;
    uint8_t *raw = tk_test_ref_raw(prog, setting, &dir, &len);
    compare("clean", raw, len, dir, prog, ctx);
    /* bits flipped, 1 byte in 401: errors, resyncs and ranges cut short */
    uint8_t *bad = malloc(len + 1);
    assert_non_null(bad);
    memcpy(bad, raw, len);
    uint32_t seed = (uint32_t)len;
    for (size_t i = 0; i < len; i++) {
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 8) % 401u == 0)
            bad[i] ^= (uint8_t)(1u << ((seed >> 4) & 7u));
    }
    compare("damaged", bad, len, dir, prog, ctx);
    free(bad);
    free(raw);
    free(dir);
}

static void test_vectors(void **state)
{
    (void)state;
    totals t = {0};
    const size_t n = tk_test_ref_each(check_vector, &t);
    print_message("%zu vectors, %zu decodes, %llu PCs; %llu, %llu and %llu bytes of PC lists, "
                  "listings and raw listings\n",
                  n, t.decodes, (unsigned long long)t.lines, (unsigned long long)t.bytes[PCS],
                  (unsigned long long)t.bytes[LISTING], (unsigned long long)t.bytes[LISTING_RAW]);
    assert_true(n >= 20);
    assert_true(t.lines > 1000000);
    /* the listings are whole: a line per instruction at least */
    assert_true(t.bytes[LISTING] > 20 * t.lines && t.bytes[LISTING_RAW] > t.bytes[LISTING]);
}

/* ---- unit tests over hand-made blocks ---------------------------------------------------- */

/* c.li a0,1 (2) ; addi a0,a0,1 (4) ; c.nop (2) ; c.j -6 (back to the addi) */
static const uint8_t loop[] = {0x05, 0x45, 0x13, 0x05, 0x15, 0x00, 0x01, 0x00, 0xed, 0xbf};

static tk_image *image_at(uint64_t base, const uint8_t *code, size_t len)
{
    tk_image *img;
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &img), TK_OK);
    assert_int_equal(tk_image_add_region(img, base, code, len), TK_OK);
    return img;
}

/* N c.nop and a c.jr ra: one block longer than the printers keep. */
enum { N = 300 };
static void nop_run(uint8_t code[2 * N + 2])
{
    for (unsigned i = 0; i < N; i++) {
        code[2 * i] = 0x01;
        code[2 * i + 1] = 0x00;
    }
    code[2 * N] = 0x82;
    code[2 * N + 1] = 0x80;
}

/* A batch of n entries of block b. */
static tk_status put_blocks(tk_pc_list *s, const tk_bblock *b, uint32_t n)
{
    tk_block_exec e[TK_BLOCK_BATCH];
    assert_true(n <= TK_BLOCK_BATCH);
    for (uint32_t i = 0; i < n; i++)
        e[i] = (tk_block_exec){.block = b, .next = b->target};
    tk_event ev = {.kind = TK_EV_BLOCKS, .blocks = e, .nblocks = n};
    return tk_pc_list_event(s, &ev);
}

/* Blocks of two images with the same id, alternately, many times (output crossing the
 * buffer): each keeps its own lines. Both images hold the same code at the same two places
 * (the sink reads instruction lengths from its own), their first blocks built are at
 * different ones. */
static void test_colliding_ids(void **state)
{
    (void)state;
    tk_image *a = image_at(0x80000000, loop, sizeof(loop));
    tk_image *b = image_at(0x80000000, loop, sizeof(loop));
    assert_int_equal(tk_image_add_region(a, 0x40000000, loop, sizeof(loop)), TK_OK);
    assert_int_equal(tk_image_add_region(b, 0x40000000, loop, sizeof(loop)), TK_OK);
    const tk_bblock *ba, *bb;
    assert_int_equal(tk_image_block(a, 0x80000000, &ba), TK_OK);
    assert_int_equal(tk_image_block(b, 0x40000000, &bb), TK_OK);
    assert_int_equal(ba->id, bb->id);
    assert_int_equal(ba->ninsn, 4);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    tk_pc_list *s;
    assert_int_equal(tk_pc_list_new(a, out, &s), TK_OK);
    const unsigned rounds = 3000;
    for (unsigned i = 0; i < rounds; i++) {
        assert_int_equal(put_blocks(s, ba, 3), TK_OK);
        assert_int_equal(put_blocks(s, bb, 1), TK_OK);
    }
    assert_int_equal(tk_pc_list_flush(s), TK_OK);
    assert_int_equal(tk_pc_list_count(s), (uint64_t)rounds * 4 * 4);
    fclose(out);
    const char *la = "80000000\n80000002\n80000006\n80000008\n";
    const char *lb = "40000000\n40000002\n40000006\n40000008\n";
    assert_int_equal(len, (size_t)rounds * 4 * 36);
    for (unsigned i = 0; i < rounds; i++) {
        for (unsigned k = 0; k < 3; k++)
            assert_memory_equal(text + (i * 4 + k) * 36, la, 36);
        assert_memory_equal(text + (i * 4 + 3) * 36, lb, 36);
    }
    free(text);
    tk_pc_list_free(s);
    tk_image_free(a);
    tk_image_free(b);
}

/* A block of 300 instructions (longer than the sink keeps) and a short one, alternately:
 * the long one goes through the range path every time. */
static void test_long_block(void **state)
{
    (void)state;
    uint8_t code[2 * N + 2];
    nop_run(code);
    tk_image *img = image_at(0x1000, code, sizeof(code));
    const tk_bblock *lb, *sb;
    assert_int_equal(tk_image_block(img, 0x1000, &lb), TK_OK);
    assert_int_equal(tk_image_block(img, 0x1000 + 2 * (N - 1), &sb), TK_OK);
    assert_int_equal(lb->ninsn, N + 1);
    assert_int_equal(sb->ninsn, 2);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    tk_pc_list *s;
    assert_int_equal(tk_pc_list_new(img, out, &s), TK_OK);
    const unsigned rounds = 200;
    for (unsigned i = 0; i < rounds; i++) {
        assert_int_equal(put_blocks(s, lb, 1), TK_OK);
        assert_int_equal(put_blocks(s, sb, 2), TK_OK);
    }
    assert_int_equal(tk_pc_list_flush(s), TK_OK);
    fclose(out);
    char *want = malloc((size_t)(N + 5) * 8);
    size_t w = 0;
    for (unsigned k = 0; k <= N; k++)
        w += (size_t)sprintf(want + w, "%x\n", 0x1000 + 2 * k);
    for (unsigned r = 0; r < 2; r++)
        w += (size_t)sprintf(want + w, "%x\n%x\n", 0x1000 + 2 * (N - 1), 0x1000 + 2 * N);
    assert_int_equal(len, (size_t)rounds * w);
    for (unsigned i = 0; i < rounds; i++)
        assert_memory_equal(text + i * w, want, w);
    assert_int_equal(tk_pc_list_count(s), (uint64_t)rounds * (N + 1 + 4));
    free(want);
    free(text);
    tk_pc_list_free(s);
    tk_image_free(img);
}

/* The listing of batches of blocks from two images with colliding ids, of a block too long
 * to keep, with and without raw bytes, equals the listing of the same entries as range
 * events (tk_blocks_as_ranges). */
static void test_listing_blocks(void **state)
{
    (void)state;
    uint8_t code[2 * N + 2];
    nop_run(code);
    tk_image *a = image_at(0x80000000, loop, sizeof(loop));
    tk_image *b = image_at(0x80000000, loop, sizeof(loop));
    assert_int_equal(tk_image_add_region(a, 0x40000000, loop, sizeof(loop)), TK_OK);
    assert_int_equal(tk_image_add_region(b, 0x40000000, loop, sizeof(loop)), TK_OK);
    assert_int_equal(tk_image_add_region(a, 0x1000, code, sizeof(code)), TK_OK);
    const tk_bblock *ba, *bb, *lb;
    assert_int_equal(tk_image_block(a, 0x80000000, &ba), TK_OK);
    assert_int_equal(tk_image_block(b, 0x40000000, &bb), TK_OK);
    assert_int_equal(tk_image_block(a, 0x1000, &lb), TK_OK);
    assert_int_equal(ba->id, bb->id);
    for (unsigned flags = 0; flags < 2; flags++) {
        char *text[2] = {NULL, NULL};
        size_t len[2] = {0, 0};
        for (int way = 0; way < 2; way++) {
            FILE *out = open_memstream(&text[way], &len[way]);
            tk_listing *s;
            assert_int_equal(tk_listing_new(a, out, flags ? TK_LISTING_RAW : 0, &s), TK_OK);
            for (unsigned i = 0; i < 50; i++) {
                const tk_bblock *order[4] = {ba, bb, lb, ba};
                tk_block_exec e[4];
                for (unsigned k = 0; k < 4; k++)
                    e[k] = (tk_block_exec){.block = order[k], .next = order[k]->fall};
                tk_event ev = {.kind = TK_EV_BLOCKS, .blocks = e, .nblocks = 4};
                assert_int_equal(way ? tk_listing_event(s, &ev)
                                     : tk_blocks_as_ranges(tk_listing_event, s, &ev),
                                 TK_OK);
            }
            assert_int_equal(tk_listing_flush(s), TK_OK);
            tk_listing_free(s);
            fclose(out);
        }
        assert_int_equal(len[0], len[1]);
        assert_memory_equal(text[0], text[1], len[0]);
        assert_true(len[0] > 50 * (N + 9) * 30);
        assert_non_null(strstr(text[0], "0000000040000002"));
        free(text[0]);
        free(text[1]);
    }
    tk_image_free(a);
    tk_image_free(b);
}

int main(void)
{
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_colliding_ids),
        cmocka_unit_test(test_long_block),
        cmocka_unit_test(test_listing_blocks),
    };
    int rc = cmocka_run_group_tests(unit, NULL, NULL);
    if (rc || !tk_test_data_present())
        return rc;
    const struct CMUnitTest vectors[] = {
        cmocka_unit_test(test_vectors),
    };
    return cmocka_run_group_tests(vectors, NULL, NULL);
}
