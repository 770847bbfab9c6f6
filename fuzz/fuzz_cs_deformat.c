/* SPDX-License-Identifier: BSD-2-Clause */
/* The CoreSight formatter frame deformatter (coresight.h). Input: a flags byte and a piece
 * size, then the raw buffer, fed in pieces of that size (frames straddle calls). Properties:
 * it never delivers more bytes than it was given, runs are non-empty with valid IDs, and
 * every error offset lies inside the input; with DSTREAM blocks no run spans a footer; joined
 * frames (tk_cs_deformatter_set_frames_fn, _at_fn; built with AVX2 where the CPU has it and
 * without) give the same bytes at the same indices, in the same order with the errors, as runs
 * of single frames. */
#include "fuzz_common.h"

#include "coresight/deformat_int.h"
#include "tracekit/coresight.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct ctx {
    size_t len;
    size_t delivered;
    unsigned flags;
    uint64_t hash; /* of every (id, index, byte) and error offset, in order */
} ctx;

static void mix(ctx *x, uint64_t v)
{
    x->hash = (x->hash ^ v) * 1099511628211ull;
}

static tk_status on_data(void *c, uint8_t id, const uint8_t *d, size_t n, uint64_t index)
{
    ctx *x = c;
    TK_FUZZ_CHECK(n > 0 && id != 0 && id < 0x70 && index < x->len);
    TK_FUZZ_CHECK(!(x->flags & TK_CS_DEFMT_DSTREAM_BLOCKS) || index % 512 + n <= 504);
    volatile uint8_t touch = d[0] ^ d[n - 1]; /* ASan checks the run is readable */
    (void)touch;
    x->delivered += n;
    TK_FUZZ_CHECK(x->delivered <= x->len);
    for (size_t k = 0; k < n; k++)
        mix(x, (uint64_t)id << 56 | (index + k) << 8 | d[k]);
    return TK_OK;
}

static tk_status on_frames(void *c, uint8_t id, const uint8_t *d, size_t n, uint64_t index)
{
    ctx *x = c;
    TK_FUZZ_CHECK(n > 0 && (n % 15 == 0 || n % 15 == 14) && index + n + n / 15 <= x->len);
    for (size_t k = 0; k < n; k++)
        mix(x, (uint64_t)id << 56 | (index + k + k / 15) << 8 | d[k]);
    x->delivered += n;
    return TK_OK;
}

static tk_status on_frames_at(void *c, uint8_t id, const uint8_t *d, const uint16_t *at, size_t n,
                              uint64_t index)
{
    ctx *x = c;
    TK_FUZZ_CHECK(n > 0 && at[0] == 0 && index + at[n - 1] < x->len);
    for (size_t k = 0; k < n; k++) {
        TK_FUZZ_CHECK(k == 0 || at[k] == at[k - 1] + 1 || at[k] % 16 == 0);
        mix(x, (uint64_t)id << 56 | (index + at[k]) << 8 | d[k]);
    }
    x->delivered += n;
    return TK_OK;
}

static tk_status on_error(void *c, tk_status st, uint64_t offset, const char *message)
{
    ctx *x = c;
    TK_FUZZ_CHECK(st < 0 && message != NULL && offset <= x->len);
    mix(x, ~offset);
    return TK_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    unsigned flags = tk_fuzz_u8(&in) & 7; /* FSYNC, HSYNC, DSTREAM blocks */
    size_t piece = 1 + tk_fuzz_u8(&in);
    uint64_t hash[5];
    /* single frames, joined, joined with frames_at; the two joined ways without AVX2 */
    for (int way = 0; way < 5; way++) {
        ctx x = {in.n, 0, flags, 1469598103934665603ull};
        tk_cs_deformatter *d = NULL;
        if (tk_cs_deformatter_new(flags, on_data, on_error, &x, &d) != TK_OK)
            return 0;
        if (way == 1 || way == 3)
            tk_cs_deformatter_set_frames_fn(d, on_frames);
        else if (way == 2 || way == 4)
            tk_cs_deformatter_set_frames_at_fn(d, on_frames_at);
        if (way >= 3)
            tk_cs_deformatter_use_avx2(d, false);
        for (size_t off = 0; off < in.n; off += piece) {
            size_t n = in.n - off < piece ? in.n - off : piece;
            if (tk_cs_deformat(d, in.p + off, n) != TK_OK)
                break;
        }
        (void)tk_cs_deformat_end(d);
        tk_cs_deformatter_free(d);
        TK_FUZZ_CHECK(x.delivered <= x.len);
        hash[way] = x.hash;
    }
    for (int way = 1; way < 5; way++)
        TK_FUZZ_CHECK(hash[way] == hash[0]);
    return 0;
}
