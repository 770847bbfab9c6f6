/* SPDX-License-Identifier: BSD-2-Clause */
/* The write buffer of the listings (src/analysis/out_buf.h): to a FILE, and in memory mode,
 * where a piece of `decode --jobs` formats its lines in place until its turn comes. Both must
 * give the same bytes whatever the sizes of lines and blocks, and a block that could not grow
 * must drop what follows without writing out of bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "analysis/out_buf.h"

/* Lines of numbers and, every so often, a block of raw bytes of up to 40 KB (more than the
 * buffer holds). */
static void write_text(tk_obuf *o, unsigned seed, unsigned lines)
{
    static char block[40000];
    for (size_t i = 0; i < sizeof(block); i++)
        block[i] = (char)('a' + i % 26);
    uint64_t x = seed;
    for (unsigned i = 0; i < lines; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        char *p = tk_obuf_line(o);
        memcpy(p, "0x", 2);
        p = tk_put_hex(p + 2, x >> (x & 63));
        *p++ = ' ';
        p = tk_put_dec(p, x % 1000);
        *p++ = '\n';
        tk_obuf_done(o, p);
        if (i % 997 == 0)
            tk_obuf_mem(o, block, (size_t)(x >> 40) % sizeof(block));
        if (i % 501 == 0)
            tk_obuf_str(o, "name\n");
    }
}

static char *file_text(unsigned seed, unsigned lines, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    tk_obuf *o = malloc(sizeof(*o));
    assert_non_null(o);
    tk_obuf_init(o, f);
    write_text(o, seed, lines);
    tk_obuf_flush(o);
    free(o);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void test_memory_equals_file(void **state)
{
    (void)state;
    tk_obuf *m = malloc(sizeof(*m));
    assert_non_null(m);
    tk_obuf_init_mem(m);
    for (unsigned seed = 1; seed <= 4; seed++) {
        const unsigned lines = seed * 25000;
        size_t len;
        char *want = file_text(seed, lines, &len);
        assert_true(len > 4 * TK_OBUF_SIZE);
        /* the block is reused (cleared, kept) from one piece to the next */
        tk_obuf_clear_mem(m);
        write_text(m, seed, lines);
        tk_obuf_flush(m); /* memory mode: nothing goes anywhere */
        assert_false(m->failed);
        assert_int_equal(m->n, len);
        assert_memory_equal(m->p, want, len);
        assert_true(m->cap >= m->n);
        free(want);
    }
    tk_obuf_free_mem(m);
    assert_null(m->p);
    assert_int_equal(m->n, 0);
    free(m);
}

/* After a failed growth the text is dropped: what is written next lands in the small
 * buffer, which is emptied whenever it fills, and nothing is written past it. */
static void test_failed_block_drops(void **state)
{
    (void)state;
    tk_obuf *m = malloc(sizeof(*m));
    assert_non_null(m);
    tk_obuf_init_mem(m);
    write_text(m, 7, 100);
    assert_false(m->failed);
    /* as tk_obuf_room leaves it when realloc fails */
    free(m->p);
    m->p = m->b;
    m->n = 0;
    m->cap = TK_OBUF_SIZE;
    m->failed = true;
    write_text(m, 8, 20000);
    assert_true(m->failed);
    assert_true(m->p == m->b);
    assert_true(m->n <= TK_OBUF_SIZE);
    /* A new piece tries again: from the small buffer, whose text the new block keeps. */
    tk_obuf_clear_mem(m);
    assert_false(m->failed);
    size_t len;
    char *want = file_text(9, 30000, &len);
    write_text(m, 9, 30000);
    assert_false(m->failed);
    assert_true(m->p != m->b);
    assert_int_equal(m->n, len);
    assert_memory_equal(m->p, want, len);
    free(want);
    tk_obuf_free_mem(m);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_equals_file),
        cmocka_unit_test(test_failed_block_drops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
