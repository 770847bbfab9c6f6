/* SPDX-License-Identifier: BSD-2-Clause */
/* The printers' per-block text store (src/analysis/block_text.h): texts are found by their
 * block (not just its id), aligned, intact when the arena grows, and once the arena would
 * pass its limit nothing more is kept while what was kept stays. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/block_text.h"
#include "testutil.h"

static void keep(tk_block_text *t, const tk_bblock *b, const char *text)
{
    char *p = tk_block_text_room(t, b, strlen(text));
    assert_non_null(p);
    memcpy(p, text, strlen(text));
    tk_block_text_keep(t, b, strlen(text));
}

static void assert_text(const tk_block_text *t, const tk_bblock *b, const char *text)
{
    const tk_block_text_ref *r = tk_block_text_find(t, b);
    assert_non_null(r);
    assert_int_equal(r->len, strlen(text));
    assert_memory_equal(t->arena + r->off, text, r->len);
}

static void test_found_by_block(void **state)
{
    (void)state;
    tk_block_text t;
    tk_block_text_init(&t, 1u << 20, 32);
    enum { N = 3000 };
    tk_bblock *b = calloc(N, sizeof(*b)), *other = calloc(1, sizeof(*other));
    assert_non_null(b);
    assert_non_null(other);
    for (uint32_t i = 0; i < N; i++)
        b[i].id = i;
    other->id = 7; /* another image's block with a kept block's id */
    char text[64];
    /* every other block, in an order that grows the id table and the arena many times */
    for (uint32_t i = 0; i < N; i += 2) {
        snprintf(text, sizeof(text), "block %u\n", i);
        keep(&t, &b[i], text);
        assert_int_equal(t.ref[i].off % 32, 0);
    }
    for (uint32_t i = 0; i < N; i++) {
        snprintf(text, sizeof(text), "block %u\n", i);
        if (i % 2)
            assert_null(tk_block_text_find(&t, &b[i]));
        else
            assert_text(&t, &b[i], text);
    }
    assert_null(tk_block_text_find(&t, other));
    tk_bblock far = {.id = 1u << 20};
    assert_null(tk_block_text_find(&t, &far));
    tk_block_text_free(&t);
    assert_null(tk_block_text_find(&t, &b[0]));
    free(b);
    free(other);
}

static void test_limit(void **state)
{
    (void)state;
    tk_block_text t;
    tk_block_text_init(&t, 64u << 10, 1); /* 64 KiB */
    tk_bblock b[200];
    memset(b, 0, sizeof(b));
    char text[1024];
    memset(text, 'x', sizeof(text) - 1);
    text[sizeof(text) - 1] = 0;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < 200; i++) {
        b[i].id = i;
        char *p = tk_block_text_room(&t, &b[i], strlen(text));
        if (!p)
            break;
        text[0] = (char)('a' + i % 26);
        memcpy(p, text, strlen(text));
        tk_block_text_keep(&t, &b[i], strlen(text));
        kept++;
    }
    /* 1023 bytes each: 64 fit in 64 KiB, the 65th does not */
    assert_int_equal(kept, 64);
    assert_true(t.cap <= 64u << 10);
    for (uint32_t i = 0; i < kept; i++) {
        text[0] = (char)('a' + i % 26);
        assert_text(&t, &b[i], text);
    }
    for (uint32_t i = kept; i < 200; i++)
        assert_null(tk_block_text_find(&t, &b[i]));
    /* a short text still fits in what is left */
    keep(&t, &b[150], "short\n");
    assert_text(&t, &b[150], "short\n");
    tk_block_text_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found_by_block),
        cmocka_unit_test(test_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
