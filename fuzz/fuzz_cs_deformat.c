/* SPDX-License-Identifier: BSD-2-Clause */
/* The CoreSight formatter frame deformatter (coresight.h). Input: a flags byte and a piece
 * size, then the raw buffer, fed in pieces of that size (frames straddle calls). Properties:
 * it never delivers more bytes than it was given, runs are non-empty with valid IDs, and
 * every error offset lies inside the input; with DSTREAM blocks no run spans a footer. */
#include "fuzz_common.h"

#include "tracekit/coresight.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct ctx {
    size_t len;
    size_t delivered;
    unsigned flags;
} ctx;

static tk_status on_data(void *c, uint8_t id, const uint8_t *d, size_t n, uint64_t index)
{
    ctx *x = c;
    TK_FUZZ_CHECK(n > 0 && id != 0 && id < 0x70 && index < x->len);
    TK_FUZZ_CHECK(!(x->flags & TK_CS_DEFMT_DSTREAM_BLOCKS) || index % 512 + n <= 504);
    volatile uint8_t touch = d[0] ^ d[n - 1]; /* ASan checks the run is readable */
    (void)touch;
    x->delivered += n;
    TK_FUZZ_CHECK(x->delivered <= x->len);
    return TK_OK;
}

static tk_status on_error(void *c, tk_status st, uint64_t offset, const char *message)
{
    ctx *x = c;
    TK_FUZZ_CHECK(st < 0 && message != NULL && offset <= x->len);
    return TK_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    unsigned flags = tk_fuzz_u8(&in) & 7; /* FSYNC, HSYNC, DSTREAM blocks */
    size_t piece = 1 + tk_fuzz_u8(&in);
    ctx x = {in.n, 0, flags};
    tk_cs_deformatter *d = NULL;
    if (tk_cs_deformatter_new(flags, on_data, on_error, &x, &d) != TK_OK)
        return 0;
    for (size_t off = 0; off < in.n; off += piece) {
        size_t n = in.n - off < piece ? in.n - off : piece;
        if (tk_cs_deformat(d, in.p + off, n) != TK_OK)
            break;
    }
    (void)tk_cs_deformat_end(d);
    tk_cs_deformatter_free(d);
    return 0;
}
