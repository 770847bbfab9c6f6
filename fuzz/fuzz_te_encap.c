/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace in the general packet encapsulation, as `tracekit decode --encap L --srcid N` reads
 * it: the layout's text form (tk_encap_config_parse), then tk_te_decoder_run_encap against
 * a fixed program (dhrystone, as fuzz_te_decoder). Input: the layout text up to a newline,
 * a srcID byte, a parameter selector (fuzz_common.h), then the stream. Properties: no
 * fault; a layout that parses is valid; errors carry a message and an offset inside the
 * stream; the source's packets plus the others plus the damaged ones never exceed the
 * stream's bytes (each is at least one byte); the work per input stays bounded. */
#include "fuzz_common.h"

#include <string.h>

#include "tracekit/encap.h"
#include "tracekit/te_decoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* As fuzz_te_decoder (bug 7): a tool taking untrusted trace bounds predicted branches. */
#define FUZZ_MAX_PREDICTED 1024u

static tk_image *image; /* set once in LLVMFuzzerInitialize (the hook takes no context) */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    image = tk_fuzz_dhrystone_image("fuzz_te_encap");
    return 0;
}

static tk_status on_event(void *c, const tk_event *ev)
{
    const size_t len = *(const size_t *)c;
    if (ev->kind == TK_EV_ERROR) {
        TK_FUZZ_CHECK(ev->message && ev->message[0]);
        TK_FUZZ_CHECK(ev->byte_offset < len);
    }
    return TK_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!image)
        return 0;
    const uint8_t *nl = memchr(data, '\n', size < 64 ? size : 64);
    if (!nl)
        return 0;
    char text[64];
    memcpy(text, data, (size_t)(nl - data));
    text[nl - data] = '\0';
    tk_encap_config cfg;
    tk_diag diag;
    tk_diag_clear(&diag);
    if (tk_encap_config_parse(text, &cfg, &diag) != TK_OK) {
        TK_FUZZ_CHECK(diag.message[0]);
        return 0;
    }
    TK_FUZZ_CHECK(tk_encap_config_validate(&cfg, NULL) == TK_OK);
    tk_fuzz_in in = {nl + 1, size - (size_t)(nl + 1 - data)};
    const uint16_t srcid = tk_fuzz_u8(&in);
    tk_te_params p;
    if (!tk_fuzz_params_pick(&in, &p))
        return 0;
    size_t len = in.n ? in.n : 1;
    tk_te_decoder *d = NULL;
    tk_te_raw *r = NULL;
    if (tk_te_decoder_new(&p, image, on_event, &len, &d) != TK_OK ||
        tk_te_raw_from_buffer(in.p, in.n, &r) != TK_OK) {
        tk_te_decoder_free(d);
        return 0;
    }
    tk_te_decoder_set_flags(d, TK_TE_DEC_BLOCK_EVENTS);
    tk_te_decoder_set_max_predicted(d, FUZZ_MAX_PREDICTED);
    tk_te_encap_stats st = {.size = sizeof(st)};
    (void)tk_te_decoder_run_encap(d, r, &cfg, srcid, &st);
    (void)tk_te_decoder_finish(d);
    TK_FUZZ_CHECK(st.packets + st.other_packets + st.damaged <= in.n);
    tk_te_decoder_free(d);
    tk_te_raw_close(r);
    return 0;
}
