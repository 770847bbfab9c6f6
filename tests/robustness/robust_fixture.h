/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by the robustness tests: the golden vectors of etrace-ref (parameters, ELF and raw
 * trace of one program x setting), a decode of a raw byte stream into its executed flow, and
 * comparison of two flows.
 *
 * A flow is kept as its maximal sequential runs (first address, instruction count, last
 * address): two PC sequences are equal exactly when their run lists are, whatever ranges the
 * decoder happened to emit, and comparing runs costs one step per run, not per instruction. */
#ifndef TK_ROBUST_FIXTURE_H
#define TK_ROBUST_FIXTURE_H

#include "testutil.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/encap.h"
#include "tracekit/te_decoder.h"

/* One golden vector. */
typedef struct rb_vector {
    char prog[64];
    char setting[64];
    tk_te_params params;
    tk_image *img;
    uint8_t *raw;
    size_t raw_len;
} rb_vector;

typedef struct rb_run {
    uint64_t first, last, ninsn;
} rb_run;

/* A decoded flow plus what the decode reported. */
typedef struct rb_flow {
    rb_run *runs;
    size_t nruns, cap;
    uint64_t ninsn;
    uint64_t errors;     /* TK_EV_ERROR events */
    uint64_t mismatches; /* of them, trace and program disagree (wrong binary) */
    uint64_t lost;       /* TK_EV_LOST events (reader/codec damage reported to the decoder) */
    uint64_t bad_packets;
    uint64_t first_problem; /* instructions emitted before the first error or loss */
    bool problem_seen;
    /* a support packet carried ioptions other than the configured ones and the decoder took
     * them (no error while it was fed): they apply to every later packet (payload.adoc,
     * F3SF3), so a damaged one it believed changes how the rest of the trace is read */
    bool options_changed;
    uint64_t options_refused; /* such packets the decoder reported and did not apply */
    /* the packet being fed: events emitted meanwhile must carry its offset and index */
    bool feeding;
    uint64_t feed_off, feed_index;
    /* the flow's last restart after an error or loss: the offset of the packet during which
     * the first instructions after it were emitted, and the instructions before them */
    uint64_t restart_off, restart_insn;
    bool resynced, awaiting_restart;
    size_t stream_len;
    /* packets a byte may hold at most (0 taken as 1; 2 for the nibble trace): an error's
     * packet index is at most index_per_byte * (byte offset + 1) */
    unsigned index_per_byte;
    tk_image *img;
    /* per packet fed (in order): byte offset, and instructions emitted before it was fed */
    uint64_t *pkt_off, *pkt_insn;
    uint8_t *pkt_sync; /* format 3 start or trap: a point the decoder resynchronises at */
    size_t npkts, pkt_cap;
} rb_flow;

static inline void rb_flow_free(rb_flow *f)
{
    free(f->runs);
    free(f->pkt_off);
    free(f->pkt_insn);
    free(f->pkt_sync);
    memset(f, 0, sizeof(*f));
}

static inline void rb_note_problem(rb_flow *f)
{
    f->awaiting_restart = true;
    if (!f->problem_seen) {
        f->problem_seen = true;
        f->first_problem = f->ninsn;
    }
}

static inline void rb_add_range(rb_flow *f, uint64_t first, uint64_t last, uint64_t ninsn)
{
    f->ninsn += ninsn;
    if (f->nruns) {
        rb_run *prev = &f->runs[f->nruns - 1];
        tk_rv_insn insn;
        /* without an image (ETMv4: memory is the snapshot's) ranges are kept as emitted */
        if (f->img && tk_image_fetch(f->img, prev->last, &insn) == TK_OK &&
            prev->last + insn.len == first) {
            prev->last = last;
            prev->ninsn += ninsn;
            return;
        }
    }
    if (f->nruns == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 1024;
        f->runs = realloc(f->runs, f->cap * sizeof(*f->runs));
        assert_non_null(f->runs);
    }
    f->runs[f->nruns++] = (rb_run){first, last, ninsn};
}

static inline tk_status rb_on_event(void *ctx, const tk_event *ev)
{
    rb_flow *f = ctx;
    switch (ev->kind) {
    case TK_EV_RANGE:
        assert_true(ev->ninsn > 0);
        if (f->awaiting_restart) {
            f->awaiting_restart = false;
            f->resynced = true;
            f->restart_off = ev->byte_offset;
            f->restart_insn = f->ninsn;
        }
        rb_add_range(f, ev->first, ev->last, ev->ninsn);
        break;
    case TK_EV_ERROR:
        /* every diagnostic locates itself in the stream and says what happened */
        assert_non_null(ev->message);
        assert_true(ev->message[0] != '\0');
        assert_true(ev->byte_offset < f->stream_len);
        assert_true(ev->packet_index <=
                    (f->index_per_byte ? f->index_per_byte : 1u) * (ev->byte_offset + 1));
        if (f->feeding) {
            assert_int_equal(ev->byte_offset, f->feed_off);
            assert_int_equal(ev->packet_index, f->feed_index);
        }
        f->errors++;
        if (ev->status == TK_ERR_MISMATCH || ev->status == TK_ERR_NO_CODE ||
            ev->status == TK_ERR_BAD_INSN)
            f->mismatches++;
        rb_note_problem(f);
        break;
    case TK_EV_LOST:
        f->lost++;
        rb_note_problem(f);
        break;

    default:
        break;
    }
    return TK_OK;
}

static inline void rb_note_packet(rb_flow *f, uint64_t off, bool sync)
{
    if (f->npkts == f->pkt_cap) {
        f->pkt_cap = f->pkt_cap ? 2 * f->pkt_cap : 1024;
        f->pkt_off = realloc(f->pkt_off, f->pkt_cap * sizeof(*f->pkt_off));
        f->pkt_insn = realloc(f->pkt_insn, f->pkt_cap * sizeof(*f->pkt_insn));
        f->pkt_sync = realloc(f->pkt_sync, f->pkt_cap);
        assert_true(f->pkt_off && f->pkt_insn && f->pkt_sync);
    }
    f->pkt_off[f->npkts] = off;
    f->pkt_insn[f->npkts] = f->ninsn;
    f->pkt_sync[f->npkts] = sync;
    f->npkts++;
}

/* Decode a raw (.te_inst_raw framing) stream as `tracekit decode` does: a packet the reader
 * or the codec rejects is reported to the decoder as lost, which resumes at the next sync.
 * Asserts the loop ends (every reader call consumes a byte) and errors stay inside the
 * stream. */
static inline void rb_decode_flags(const rb_vector *v, const uint8_t *buf, size_t len,
                                   unsigned flags, rb_flow *f)
{
    memset(f, 0, sizeof(*f));
    f->img = v->img;
    f->stream_len = len ? len : 1;
    tk_te_decoder *d = NULL;
    assert_int_equal(tk_te_decoder_new(&v->params, v->img, rb_on_event, f, &d), TK_OK);
    tk_te_decoder_set_flags(d, flags);
    tk_te_raw *r = NULL;
    assert_int_equal(tk_te_raw_from_buffer(buf, len, &r), TK_OK);
    size_t calls = 0;
    for (;;) {
        assert_true(calls++ <= len);
        tk_te_raw_packet rp;
        tk_diag diag;
        tk_diag_clear(&diag);
        tk_status st = tk_te_raw_next(r, &rp, &diag);
        if (st == TK_END)
            break;
        if (st != TK_OK) {
            assert_true(diag.byte_offset < len);
            f->bad_packets++;
            if (st != TK_ERR_BAD_PACKET)
                break; /* truncated: the stream ends here */
            assert_int_equal(tk_te_decoder_lost(d, diag.byte_offset, diag.packet_index), TK_OK);
            continue;
        }
        tk_te_packet pkt;
        if (rp.msg_type != TK_ENCAP_FLOW_TE_INST ||
            tk_te_packet_decode(&v->params, rp.payload, rp.len, &pkt, &diag) != TK_OK) {
            f->bad_packets++;
            rb_note_packet(f, rp.offset, false);
            assert_int_equal(tk_te_decoder_lost(d, rp.offset, rp.index), TK_OK);
            continue;
        }
        rb_note_packet(f, rp.offset,
                       pkt.format == TK_TE_F3 &&
                           (pkt.subformat == TK_TE_SF_START || pkt.subformat == TK_TE_SF_TRAP));
        const uint64_t errors_before = f->errors;
        f->feeding = true;
        f->feed_off = rp.offset;
        f->feed_index = rp.index;
        assert_int_equal(tk_te_decoder_packet(d, &pkt, rp.offset, rp.index), TK_OK);
        f->feeding = false;
        if (pkt.format == TK_TE_F3 && pkt.subformat == TK_TE_SF_SUPPORT &&
            pkt.ioptions != tk_te_params_ioptions(&v->params)) {
            if (f->errors == errors_before)
                f->options_changed = true;
            else
                f->options_refused++;
        }
    }
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    tk_te_decoder_free(d);
    tk_te_raw_close(r);
}

/* With the decoder's default flags, as `tracekit decode` runs it. */
static inline void rb_decode(const rb_vector *v, const uint8_t *buf, size_t len, rb_flow *f)
{
    rb_decode_flags(v, buf, len, 0, f);
}

/* Instructions two flows share at their start. */
static inline uint64_t rb_common_prefix(const rb_flow *a, const rb_flow *b)
{
    uint64_t n = 0;
    for (size_t i = 0; i < a->nruns && i < b->nruns; i++) {
        const rb_run *x = &a->runs[i], *y = &b->runs[i];
        if (x->first != y->first)
            break;
        if (x->ninsn != y->ninsn || x->last != y->last) {
            /* same start, sequential: the shorter run is a prefix of the longer */
            n += x->ninsn < y->ninsn ? x->ninsn : y->ninsn;
            break;
        }
        n += x->ninsn;
    }
    return n;
}

/* Instructions two flows share at their end. */
static inline uint64_t rb_common_suffix(const rb_flow *a, const rb_flow *b)
{
    uint64_t n = 0;
    for (size_t i = a->nruns, j = b->nruns; i > 0 && j > 0; i--, j--) {
        const rb_run *x = &a->runs[i - 1], *y = &b->runs[j - 1];
        if (x->last != y->last)
            break;
        if (x->ninsn != y->ninsn || x->first != y->first) {
            n += x->ninsn < y->ninsn ? x->ninsn : y->ninsn;
            break;
        }
        n += x->ninsn;
    }
    return n;
}

/* Load etrace-ref/<prog>/<setting>; with elf_prog non-NULL, that program's ELF instead of
 * the one the .ucf names (for wrong-binary tests). Returns false if the vector is absent. */
static inline bool rb_vector_load(rb_vector *v, const char *prog, const char *setting,
                                  const char *elf_prog)
{
    memset(v, 0, sizeof(*v));
    char rel[3][512];
    /* names that do not fit are not vectors of the test data (and would be cut) */
    if (snprintf(v->prog, sizeof(v->prog), "%s", prog) >= (int)sizeof(v->prog) ||
        snprintf(v->setting, sizeof(v->setting), "%s", setting) >= (int)sizeof(v->setting) ||
        snprintf(rel[0], sizeof(rel[0]), "etrace-ref/%s/%s/%s.scf", prog, setting, prog) >=
            (int)sizeof(rel[0]) ||
        snprintf(rel[1], sizeof(rel[1]), "etrace-ref/%s/%s/%s.decoder.ucf", prog, setting, prog) >=
            (int)sizeof(rel[1]) ||
        snprintf(rel[2], sizeof(rel[2]), "etrace-ref/%s/%s/%s.te_inst_raw", prog, setting, prog) >=
            (int)sizeof(rel[2]))
        return false;
    char *scf = tk_test_data_path(rel[0]), *ucf = tk_test_data_path(rel[1]);
    char *raw = tk_test_data_path(rel[2]), *elf = NULL;
    v->raw = tk_test_read_file(raw, &v->raw_len);
    bool ok = v->raw != NULL;
    if (ok) {
        tk_diag diag;
        tk_diag_clear(&diag);
        tk_te_params_init(&v->params);
        if (tk_te_params_read_scf(&v->params, scf, &diag) != TK_OK ||
            tk_te_params_read_ucf(&v->params, ucf, &elf, &diag) != TK_OK ||
            tk_te_params_validate(&v->params, &diag) != TK_OK)
            fail_msg("%s", diag.message);
        char *other = NULL;
        if (elf_prog) {
            snprintf(rel[0], sizeof(rel[0]), "riscv-ref/%.64s.riscv", elf_prog);
            other = tk_test_data_path(rel[0]);
        }
        if (tk_image_open_elf(other ? other : elf, &v->img, &diag) != TK_OK)
            fail_msg("%s", diag.message);
        /* the reference decoder adds spike's reset code, where its traces begin */
        assert_int_equal(tk_te_add_spike_reset_code(v->img, tk_image_xlen(v->img) == 32), TK_OK);
        free(other);
    }
    free(elf);
    free(scf);
    free(ucf);
    free(raw);
    return ok;
}

static inline void rb_vector_free(rb_vector *v)
{
    tk_image_free(v->img);
    free(v->raw);
    memset(v, 0, sizeof(*v));
}

/* The golden vectors present: calls fn for each program x setting with a .te_inst_raw. */
static inline void rb_for_each_vector(void (*fn)(const char *prog, const char *setting, void *ctx),
                                      void *ctx)
{
    char *root = tk_test_data_path("etrace-ref");
    DIR *progs = opendir(root);
    assert_non_null(progs);
    /* sorted, so runs are reproducible whatever order readdir gives */
    struct dirent **pl = NULL;
    int np = scandir(root, &pl, NULL, alphasort);
    closedir(progs);
    for (int i = 0; i < np; i++) {
        if (pl[i]->d_name[0] != '.') {
            char *pdir = malloc(strlen(root) + strlen(pl[i]->d_name) + 2);
            sprintf(pdir, "%s/%s", root, pl[i]->d_name);
            struct dirent **sl = NULL;
            int ns = scandir(pdir, &sl, NULL, alphasort);
            for (int j = 0; j < ns; j++) {
                if (sl[j]->d_name[0] != '.' && strchr(sl[j]->d_name, '.') == NULL)
                    fn(pl[i]->d_name, sl[j]->d_name, ctx);
                free(sl[j]);
            }
            free(sl);
            free(pdir);
        }
        free(pl[i]);
    }
    free(pl);
    free(root);
}

#endif
