/* SPDX-License-Identifier: BSD-2-Clause */
/* The legacy trace formats (legacy.h): a nibble trace file (seed 001) or a run-length trace
 * file (seed 003), read by its file reader and, when it reads, decoded against a fixed program
 * (dhrystone of riscv-ref). Input: one selector byte (bit 0: 0 nibble, 1 run-length; for the
 * nibble trace bit 1 also scans the sequences), then the file, header included, so the
 * parameters it carries are fuzzed too. Properties: no fault; ranges non-empty and inside the
 * image; errors carry a message and lie inside the trace data; the readers' errors carry a
 * message and an offset inside the file. */
#include "fuzz_common.h"

#include "tracekit/legacy.h"
#include "tracekit/te_decoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Set once in LLVMFuzzerInitialize (libFuzzer's setup hook takes no context). */
static tk_image *image;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    image = tk_fuzz_dhrystone_image("fuzz_legacy");
    return 0;
}

typedef struct ctx {
    uint64_t limit; /* events' byte offsets stay below it */
} ctx;

static tk_status on_event(void *c, const tk_event *ev)
{
    const ctx *x = c;
    TK_FUZZ_CHECK(ev->kind >= TK_EV_RANGE && ev->kind <= TK_EV_TIMESTAMP);
    if (ev->kind == TK_EV_RANGE) {
        TK_FUZZ_CHECK(ev->ninsn > 0);
        tk_rv_insn insn;
        TK_FUZZ_CHECK(tk_image_fetch(image, ev->first, &insn) == TK_OK);
        TK_FUZZ_CHECK(tk_image_fetch(image, ev->last, &insn) == TK_OK);
    } else if (ev->kind == TK_EV_ERROR) {
        TK_FUZZ_CHECK(ev->message && ev->message[0]);
        TK_FUZZ_CHECK(ev->byte_offset < x->limit);
    }
    return TK_OK;
}

static tk_status on_access(void *c, const tk_access *a)
{
    (void)c;
    TK_FUZZ_CHECK(a->kind == TK_ACC_LOAD || a->kind == TK_ACC_STORE);
    return TK_OK;
}

static tk_status on_seq(void *c, const tk_nibble_seq *s)
{
    (void)c;
    TK_FUZZ_CHECK(s->header <= 0xf);
    return TK_OK;
}

static void nibble(const char *path, size_t size, bool scan)
{
    tk_nibble_trace t;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st = tk_nibble_read_file(path, &t, &diag);
    if (st != TK_OK) {
        TK_FUZZ_CHECK(diag.message[0]);
        TK_FUZZ_CHECK(st != TK_ERR_TRUNCATED || diag.byte_offset <= size);
        /* a cut unwrapped buffer keeps its whole words: decode them too */
        if (st != TK_ERR_TRUNCATED || !t.nwords) {
            tk_nibble_trace_free(&t);
            return;
        }
        TK_FUZZ_CHECK(!t.wrapped && t.nwords * 4 <= size);
    }
    TK_FUZZ_CHECK(tk_nibble_params_validate(&t.params, &diag) == TK_OK);
    ctx x = {t.nwords * 4 + 1};
    if (scan) {
        tk_diag_clear(&diag);
        (void)tk_nibble_scan(&t, on_seq, NULL, &diag);
    }
    tk_nibble_decoder *d = NULL;
    if (tk_nibble_decoder_new(&t.params, image, on_event, &x, on_access, NULL, &d) == TK_OK) {
        (void)tk_nibble_decoder_run(d, &t);
        tk_nibble_decoder_free(d);
    }
    tk_nibble_trace_free(&t);
}

static void rle(const char *path, size_t size)
{
    tk_rle_params p;
    tk_rle_pair *pairs = NULL;
    size_t n = 0;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st = tk_rle_read_file(path, &p, &pairs, &n, &diag);
    if (st != TK_OK) {
        TK_FUZZ_CHECK(diag.message[0]);
        TK_FUZZ_CHECK(st != TK_ERR_TRUNCATED || diag.byte_offset <= size);
        /* a cut file keeps its whole pairs: decode them too */
        if (st != TK_ERR_TRUNCATED) {
            TK_FUZZ_CHECK(pairs == NULL);
            return;
        }
    }
    TK_FUZZ_CHECK(n * ((tk_rle_pair_bits(&p) + 7) / 8) <= size);
    ctx x = {size + 1};
    uint64_t insns = 0;
    (void)tk_rle_decode(&p, image, pairs, n, on_event, &x, &insns);
    free(pairs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!image || size < 1)
        return 0;
    const uint8_t sel = data[0];
    char path[64];
    int fd = tk_fuzz_memfile(data + 1, size - 1, path, sizeof(path));
    if (fd < 0)
        return 0;
    if (sel & 1)
        rle(path, size - 1);
    else
        nibble(path, size - 1, sel & 2);
    close(fd);
    return 0;
}
