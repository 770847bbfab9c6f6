/* SPDX-License-Identifier: BSD-2-Clause */
/* The whole CoreSight pipeline on real snapshots (coresight.h, etm4.h): deformatter, ETMv4
 * packet parser and flow decoder, with the configuration and program memory of an OpenCSD
 * test snapshot and the trace buffer replaced by the input. Input: a snapshot selector, then
 * the buffer. The snapshots are loaded once from TK_TESTDATA. */
#include "fuzz_common.h"

#include "tracekit/etm4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* framed (ETB), DSTREAM (FSYNC), unformatted (M-profile), unformatted short addresses */
static const char *const snapshot_names[] = {"juno-ret-stck", "a55-test-tpiu", "armv8_1m_branches",
                                             "init-short-addr", "a57_single_step"};
enum { NSNAP = sizeof(snapshot_names) / sizeof(snapshot_names[0]) };
/* Read-only after initialisation: libFuzzer's one-time setup hook has no context pointer. */
static tk_cs_snapshot *snapshots[NSNAP];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (int i = 0; i < NSNAP; i++) {
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s/opencsd/snapshots/%s", TK_TESTDATA, snapshot_names[i]);
        tk_diag diag;
        tk_diag_clear(&diag);
        if (tk_cs_snapshot_load(dir, &snapshots[i], &diag) != TK_OK)
            fprintf(stderr, "fuzz_cs_snapshot: %s not loaded: %s\n", dir, diag.message);
    }
    return 0;
}

/* the trace buffer's length: errors lie inside it */
typedef struct ctx {
    size_t len;
} ctx;

static tk_status on_event(void *c, const tk_event *ev)
{
    const ctx *x = c;
    TK_FUZZ_CHECK(ev->kind >= TK_EV_RANGE && ev->kind <= TK_EV_TIMESTAMP);
    if (ev->kind == TK_EV_RANGE)
        TK_FUZZ_CHECK(ev->ninsn > 0 && ev->last >= ev->first);
    if (ev->kind == TK_EV_ERROR) {
        TK_FUZZ_CHECK(ev->message && ev->message[0]);
        TK_FUZZ_CHECK(ev->byte_offset < x->len);
    }
    return TK_OK;
}

static tk_status on_frame_error(void *c, tk_status st, uint64_t offset, const char *msg)
{
    const ctx *x = c;
    (void)st;
    TK_FUZZ_CHECK(msg && msg[0]);
    TK_FUZZ_CHECK(offset < x->len);
    return TK_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    const tk_cs_snapshot *ss = snapshots[tk_fuzz_u8(&in) % NSNAP];
    if (!ss)
        return 0;
    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = -1;
    o.id = -1;
    o.decode = true;
    o.on_event = on_event;
    o.on_frame_error = on_frame_error;
    o.data = in.p;
    o.data_len = in.n;
    /* an empty buffer would make the runner read the snapshot's own file */
    static const uint8_t none[1] = {0};
    if (!in.n) {
        o.data = none;
        o.data_len = 1;
    }
    ctx x = {o.data_len};
    o.ctx = &x;
    tk_diag diag;
    tk_diag_clear(&diag);
    (void)tk_etm4_run_snapshot(ss, &o, &diag);
    return 0;
}
