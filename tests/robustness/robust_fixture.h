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
#include <inttypes.h>
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
    /* trap vectors per privilege (bit p of tvec_set: tvec[p] is set), which the decoder needs
     * for implicit exceptions; the golden vectors have none */
    uint64_t tvec[4];
    uint8_t tvec_set;
    /* tk_te_decoder_set_max_predicted (0: the decoder's default) */
    uint64_t max_predicted;
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

/* A decoder for v reporting to f, with v's trap vectors and branch-count limit. */
static inline tk_te_decoder *rb_decoder_open(const rb_vector *v, size_t len, unsigned flags,
                                             rb_flow *f)
{
    memset(f, 0, sizeof(*f));
    f->img = v->img;
    f->stream_len = len ? len : 1;
    tk_te_decoder *d = NULL;
    assert_int_equal(tk_te_decoder_new(&v->params, v->img, rb_on_event, f, &d), TK_OK);
    tk_te_decoder_set_flags(d, flags);
    for (unsigned priv = 0; priv < 4; priv++)
        if ((v->tvec_set >> priv) & 1u)
            tk_te_decoder_set_trap_vector(d, priv, v->tvec[priv]);
    if (v->max_predicted)
        tk_te_decoder_set_max_predicted(d, v->max_predicted);
    return d;
}

/* One framed packet (flow field, payload) to the codec and the decoder. A packet that is not
 * te_inst or that the codec rejects is reported to the decoder as lost; returns false then. */
static inline bool rb_feed_packet(const rb_vector *v, tk_te_decoder *d, rb_flow *f, unsigned flow,
                                  const uint8_t *payload, size_t len, uint64_t off, uint64_t index)
{
    tk_te_packet pkt;
    tk_diag diag;
    tk_diag_clear(&diag);
    if (flow != TK_ENCAP_FLOW_TE_INST ||
        tk_te_packet_decode(&v->params, payload, len, &pkt, &diag) != TK_OK) {
        f->bad_packets++;
        rb_note_packet(f, off, false);
        assert_int_equal(tk_te_decoder_lost(d, off, index), TK_OK);
        return false;
    }
    rb_note_packet(f, off,
                   pkt.format == TK_TE_F3 &&
                       (pkt.subformat == TK_TE_SF_START || pkt.subformat == TK_TE_SF_TRAP));
    const uint64_t errors_before = f->errors;
    f->feeding = true;
    f->feed_off = off;
    f->feed_index = index;
    assert_int_equal(tk_te_decoder_packet(d, &pkt, off, index), TK_OK);
    f->feeding = false;
    if (pkt.format == TK_TE_F3 && pkt.subformat == TK_TE_SF_SUPPORT &&
        pkt.ioptions != tk_te_params_ioptions(&v->params)) {
        if (f->errors == errors_before)
            f->options_changed = true;
        else
            f->options_refused++;
    }
    return true;
}

/* Decode a raw (.te_inst_raw framing) stream as `tracekit decode` does: a packet the reader
 * or the codec rejects is reported to the decoder as lost, which resumes at the next sync.
 * Asserts the loop ends (every reader call consumes a byte) and errors stay inside the
 * stream. */
static inline void rb_decode_flags(const rb_vector *v, const uint8_t *buf, size_t len,
                                   unsigned flags, rb_flow *f)
{
    tk_te_decoder *d = rb_decoder_open(v, len, flags, f);
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
        rb_feed_packet(v, d, f, rp.msg_type, rp.payload, rp.len, rp.offset, rp.index);
    }
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    tk_te_decoder_free(d);
    tk_te_raw_close(r);
}

/* A trace in the general packet encapsulation (encap.h): the reader's layout and the srcID of
 * the traced hart. */
typedef struct rb_encap {
    tk_encap_config cfg;
    uint16_t srcid;
    /* on an error, read on from the byte after the bad header instead of skipping to the next
     * sync sequence: a reader whose framing is still right (a damaged payload) or realigned
     * by chance keeps the rest of the sync period, and a misaligned one still falls into the
     * next sync sequence (no packet is longer than one) */
    bool keep_reading;
} rb_encap;

/* Decode an encapsulated stream: a packet the reader rejects, of another srcID, not te_inst
 * or rejected by the codec is reported to the decoder as lost, and the reader moves on to the
 * next synchronisation point (tk_encap_reader_sync_forward), searched from the byte after the
 * bad packet's header: the misread packet may have run into a sync sequence, and a search from
 * its end could start inside the run and miss it. With e->keep_reading it reads on where the
 * reader stopped instead (after a truncated packet, which moves the reader to the end, from the
 * byte after its header: that header may be a misread byte in mid-stream). */
static inline void rb_decode_encap_flags(const rb_vector *v, const rb_encap *e, const uint8_t *buf,
                                         size_t len, unsigned flags, rb_flow *f)
{
    tk_te_decoder *d = rb_decoder_open(v, len, flags, f);
    tk_encap_reader *r = NULL;
    assert_int_equal(tk_encap_reader_alloc(&r, &e->cfg, buf, len), TK_OK);
    size_t calls = 0;
    for (;;) {
        assert_true(calls++ <= len);
        tk_encap_packet p;
        tk_diag diag;
        tk_diag_clear(&diag);
        const uint64_t at = tk_encap_reader_get_offset(r);
        tk_status st = tk_encap_reader_next(r, &p, &diag);
        if (st == TK_END)
            break;
        bool ok;
        uint64_t off;
        if (st != TK_OK) {
            off = diag.byte_offset;
            assert_true(off >= at && off < len);
            f->bad_packets++;
            assert_int_equal(tk_te_decoder_lost(d, off, diag.packet_index), TK_OK);
            ok = false;
        } else if (p.srcid != e->srcid) {
            off = p.offset;
            f->bad_packets++;
            rb_note_packet(f, off, false);
            assert_int_equal(tk_te_decoder_lost(d, off, p.index), TK_OK);
            ok = false;
        } else {
            off = p.offset;
            ok = rb_feed_packet(v, d, f, p.flow, p.payload, p.payload_len, p.offset, p.index);
        }
        if (ok)
            continue;
        if (!e->keep_reading) {
            assert_int_equal(tk_encap_reader_sync_set(r, off + 1), TK_OK);
            (void)tk_encap_reader_sync_forward(r); /* TK_END: no sync left, the loop ends */
        } else if (st == TK_ERR_TRUNCATED) {
            /* the reader moved to the end; the header may be a misread byte mid-stream */
            assert_int_equal(tk_encap_reader_sync_set(r, off + 1), TK_OK);
        }
    }
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    tk_te_decoder_free(d);
    tk_encap_reader_free(r);
}

/* Either framing: encapsulated when e is non-NULL. */
static inline void rb_decode_stream(const rb_vector *v, const rb_encap *e, const uint8_t *buf,
                                    size_t len, unsigned flags, rb_flow *f)
{
    if (e)
        rb_decode_encap_flags(v, e, buf, len, flags, f);
    else
        rb_decode_flags(v, buf, len, flags, f);
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

/* ---- seeded damage of a raw stream (test_corruption.c, test_mode_corruption.c) ---------- */

enum { RB_TRUNC, RB_FLIP, RB_DROP, RB_DUP, RB_ZERO, RB_RANDOM, RB_NKINDS };
static const char *const rb_kind_names[RB_NKINDS] = {
    "truncated end", "flipped bits", "dropped bytes", "duplicated", "zero run", "random bytes"};

/* Resynchronisation must happen at the first or second sync after the damage. */
#define RB_MAX_SYNC_SKIPPED 1

typedef struct rb_kind_stats {
    unsigned long mutations;
    unsigned long with_error; /* the damage was reported (error or loss event) */
    unsigned long recovered_at[RB_MAX_SYNC_SKIPPED + 1];
    unsigned long no_sync_after; /* reported, but no sync follows the damage */
    /* of those, the framing never realigned although the clean trace has a sync where it
     * could have (rb_check_mutant); the others are damage in the trace's last stretch */
    unsigned long never_realigned;
    unsigned long silent;   /* flow differs, nothing reported: the damage left valid packets */
    unsigned long harmless; /* flow identical (e.g. a flipped sign-extension bit) */
    unsigned long options_refused;  /* the decoder refused a support packet's options */
    unsigned long options_believed; /* it took them (trace start only; see rb_decode_mutant) */
    uint64_t lost, lost_max;
    uint64_t clean_insns;
} rb_kind_stats;

static inline uint64_t rb_rng_below(uint64_t *s, uint64_t n)
{
    return n ? tk_test_xorshift64star(s) % n : 0;
}

static inline uint64_t rb_seed_of(const char *a, const char *b)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *p = a; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    for (const char *p = b; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    return h ? h : 1;
}

/* Where the damage is: [start, end) in the damaged copy's offsets, and the copy's length
 * minus the clean length. */
typedef struct rb_damage {
    size_t start, end;
    long delta;
} rb_damage;

/* The damaged copy: out (cap >= len + 64) gets the stream; returns its length. */
static inline size_t rb_mutate(int kind, uint64_t *rng, const uint8_t *in, size_t len,
                               size_t last_pkt, uint8_t *out, rb_damage *dm)
{
    size_t pos = rb_rng_below(rng, len), k;
    memcpy(out, in, len);
    switch (kind) {
    case RB_TRUNC: /* cut inside the final packet, after its header */
        k = 1 + rb_rng_below(rng, len - last_pkt - 1);
        *dm = (rb_damage){len - k, len - k, -(long)k};
        return len - k;
    case RB_FLIP:
        for (k = 1 + rb_rng_below(rng, 3); k; k--)
            out[pos] ^= (uint8_t)(1u << rb_rng_below(rng, 8));
        *dm = (rb_damage){pos, pos + 1, 0};
        return len;
    case RB_DROP:
        k = 1 + rb_rng_below(rng, 8);
        if (pos + k > len)
            k = len - pos;
        memmove(out + pos, in + pos + k, len - pos - k);
        *dm = (rb_damage){pos, pos, -(long)k};
        return len - k;
    case RB_DUP:
        k = 1 + rb_rng_below(rng, 8);
        if (pos + k > len)
            k = len - pos;
        memcpy(out + pos + k, in + pos, len - pos);
        *dm = (rb_damage){pos, pos + 2 * k, (long)k};
        return len + k;
    case RB_ZERO:
    case RB_RANDOM:
        k = 1 + rb_rng_below(rng, kind == RB_ZERO ? 64 : 16);
        if (pos + k > len)
            k = len - pos;
        for (size_t i = 0; i < k; i++)
            out[pos + i] = kind == RB_ZERO ? 0 : (uint8_t)tk_test_xorshift64star(rng);
        *dm = (rb_damage){pos, pos + k, 0};
        return len;
    }
    return len;
}

static inline bool rb_fed_at(const rb_flow *f, uint64_t off)
{
    size_t lo = 0, hi = f->npkts;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->pkt_off[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->npkts && f->pkt_off[lo] == off;
}

/* Keep the damaged stream of a failure for `tracekit decode` (in the test's folder). */
static inline void rb_save_failure(const rb_vector *v, unsigned m, const uint8_t *buf, size_t len)
{
    char path[256];
    snprintf(path, sizeof(path), "corrupt-%.64s-%.64s-%u.te_inst_raw", v->prog, v->setting, m);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(buf, 1, len, f);
        fclose(f);
        printf("damaged stream written to %s\n", path);
    }
}

/* One damaged stream and what is known of it. */
typedef struct rb_mutant {
    const rb_vector *v;
    const rb_flow *clean;
    size_t first_sync; /* byte offset of the clean trace's first sync */
    unsigned m;        /* mutation number, for messages */
    int kind;
    const uint8_t *buf;
    size_t len;
    rb_damage dm;
    /* NULL: the raw framing; else the encapsulation, and the clean stream's sync sequences
     * (byte offsets, ascending), after the first of which the framing must be aligned */
    const rb_encap *encap;
    const uint64_t *seq_off;
    size_t nseq;
} rb_mutant;

/* Decode the damaged stream into bad. The decoder believes a damaged support packet's options
 * only where a support packet may announce new options (decoder.c, support_refusal): before
 * the first sync or after a trace's clean end. In a trace of one run that is the first packet
 * (the closing support packet has nothing after it), so the damage must be before the first
 * sync; the flow is then decoded with the wrong options throughout (or, where the flow does not
 * depend on them, the trace's closing support packet with the real options is refused, after
 * the last sync), and no check can tell a flipped full-address bit from a real announcement.
 * A decoder told the options are fixed (as
 * a tool that programmed the encoder knows them) refuses the packet and recovers: that decode
 * is the one checked. */
static inline void rb_decode_mutant(const rb_mutant *mu, rb_kind_stats *ks, rb_flow *bad)
{
    const rb_vector *v = mu->v;
    rb_decode_stream(v, mu->encap, mu->buf, mu->len, 0, bad);
    if (bad->options_refused)
        ks->options_refused++;
    if (!bad->options_changed)
        return;
    ks->options_believed++;
    if (mu->dm.start >= mu->first_sync) {
        rb_save_failure(v, mu->m, mu->buf, mu->len);
        fail_msg("%s/%s mutation %u (%s, bytes %zu..%zu): the decoder took a damaged support "
                 "packet's options after the first sync (offset %zu)",
                 v->prog, v->setting, mu->m, rb_kind_names[mu->kind], mu->dm.start, mu->dm.end,
                 mu->first_sync);
    }
    rb_flow_free(bad);
    rb_decode_stream(v, mu->encap, mu->buf, mu->len, TK_TE_DEC_FIXED_OPTIONS, bad);
    assert_false(bad->options_changed);
}

/* Where the decoder came back, in terms of the clean trace's syncs. */
typedef struct rb_restart {
    bool after;        /* it restarted (after an error or loss) after the damage began */
    bool aligned_sync; /* a sync after the damage is read on its boundary */
    unsigned skipped;  /* such syncs it let pass before the restart */
    bool sync_after;   /* the clean trace has a sync after the damage */
    /* the clean trace has a sync after the first encapsulation sync sequence after the
     * damage, and the first such sync is read on its boundary */
    bool seq_then_sync, seq_then_aligned;
} rb_restart;

/* Damage the decoder saw makes it restart at a later sync (TK_EV_TRACE_ON). Count the syncs
 * after the damage, where the framing is aligned again, that it let pass first: the restart
 * happened at the last aligned sync at or before restart_off. */
static inline rb_restart rb_locate_restart(const rb_mutant *mu, const rb_flow *bad)
{
    const rb_flow *clean = mu->clean;
    const rb_damage *dm = &mu->dm;
    rb_restart r = {.after = bad->resynced && bad->restart_off >= dm->start};
    const uint64_t dend_clean = (uint64_t)((long)dm->end - dm->delta);
    size_t seq = 0;
    while (seq < mu->nseq && mu->seq_off[seq] < dend_clean)
        seq++;
    for (size_t i = 0; i < clean->npkts; i++) {
        if (!clean->pkt_sync[i] || clean->pkt_off[i] < dend_clean)
            continue;
        r.sync_after = true;
        const bool fed = rb_fed_at(bad, (uint64_t)((long)clean->pkt_off[i] + dm->delta));
        if (seq < mu->nseq && clean->pkt_off[i] > mu->seq_off[seq] && !r.seq_then_sync) {
            r.seq_then_sync = true;
            r.seq_then_aligned = fed;
        }
        if (!fed)
            continue;
        if (r.after && bad->restart_off >= dm->end &&
            clean->pkt_off[i] <= (uint64_t)((long)bad->restart_off - dm->delta) && r.aligned_sync)
            r.skipped++;
        r.aligned_sync = true;
    }
    return r;
}

/* Check one damaged stream and count it in ks: the flow from the decoder's restart to the end
 * must be the clean flow's end, the restart at the first or second aligned sync after the
 * damage; damage reported with an aligned sync after it must make the decoder restart. */
static inline void rb_check_mutant(const rb_mutant *mu, rb_kind_stats *ks)
{
    const rb_vector *v = mu->v;
    const rb_damage *dm = &mu->dm;
    rb_flow bad;
    rb_decode_mutant(mu, ks, &bad);
    const uint64_t n = mu->clean->ninsn;
    const uint64_t pre = rb_common_prefix(mu->clean, &bad);
    const uint64_t suf = rb_common_suffix(mu->clean, &bad);
    const uint64_t lost = pre + suf >= n ? 0 : n - pre - suf;
    ks->mutations++;
    ks->clean_insns += n;
    ks->lost += lost;
    if (lost > ks->lost_max)
        ks->lost_max = lost;
    const bool reported = bad.errors || bad.lost || bad.bad_packets;
    if (reported)
        ks->with_error++;
    const rb_restart r = rb_locate_restart(mu, &bad);
    if (r.seq_then_sync && !r.seq_then_aligned) {
        rb_save_failure(v, mu->m, mu->buf, mu->len);
        fail_msg("%s/%s mutation %u (%s, bytes %zu..%zu of %zu, length change %ld): the "
                 "encapsulated stream is not read on its packet boundaries after the sync "
                 "sequence that follows the damage",
                 v->prog, v->setting, mu->m, rb_kind_names[mu->kind], dm->start, dm->end, mu->len,
                 dm->delta);
    }
    const uint64_t tail = bad.ninsn - bad.restart_insn, restart_off = bad.restart_off;
    rb_flow_free(&bad);
    if (!r.after) {
        if (reported && r.aligned_sync) {
            rb_save_failure(v, mu->m, mu->buf, mu->len);
            fail_msg("%s/%s mutation %u (%s, bytes %zu..%zu of %zu, length change %ld): "
                     "damage reported, but the decoder did not restart at a later sync",
                     v->prog, v->setting, mu->m, rb_kind_names[mu->kind], dm->start, dm->end,
                     mu->len, dm->delta);
        }
        if (reported) {
            ks->no_sync_after++;
            /* the raw framing could realign at any later sync; a reader of the encapsulation
             * skips to the next sync sequence on an error, so it could only at a sync after
             * that sequence (the rest of the damaged sync period is given up) */
            if (!r.aligned_sync && (mu->encap ? r.seq_then_sync : r.sync_after))
                ks->never_realigned++;
        } else if (pre + suf < n)
            ks->silent++; /* a wrong flow no check could tell from a right one */
        else
            ks->harmless++;
        return;
    }
    if (suf < tail || r.skipped > RB_MAX_SYNC_SKIPPED) {
        rb_save_failure(v, mu->m, mu->buf, mu->len);
        fail_msg("%s/%s mutation %u (%s, bytes %zu..%zu of %zu, length change %ld): after the "
                 "restart at offset %" PRIu64 " (%u aligned syncs after the damage passed "
                 "first), %" PRIu64 " instructions decoded, of which only %" PRIu64
                 " match the clean flow's end",
                 v->prog, v->setting, mu->m, rb_kind_names[mu->kind], dm->start, dm->end, mu->len,
                 dm->delta, restart_off, r.skipped, tail, suf);
    }
    ks->recovered_at[r.skipped]++;
}

/* Damage a clean stream (v's raw trace, or mu_tmpl->encap's encapsulation of it)
 * `mutations` times, the kinds in turn, seeded from the vector's names, and check each
 * (rb_check_mutant); clean is the stream's clean decode, which must be error-free. Counts go
 * to k[kind]. */
static inline void rb_mutate_stream(const rb_vector *v, const rb_flow *clean, const uint8_t *in,
                                    size_t in_len, const rb_mutant *mu_tmpl, unsigned mutations,
                                    rb_kind_stats k[RB_NKINDS])
{
    if (clean->errors || clean->bad_packets)
        fail_msg("%s/%s: the clean trace does not decode cleanly", v->prog, v->setting);
    assert_true(clean->npkts > 0);
    const size_t last_pkt = clean->pkt_off[clean->npkts - 1];
    size_t first_sync = 0;
    while (first_sync < clean->npkts && !clean->pkt_sync[first_sync])
        first_sync++;
    assert_true(first_sync < clean->npkts);
    uint8_t *buf = malloc(in_len + 64);
    assert_non_null(buf);
    rb_mutant mu = {0};
    if (mu_tmpl)
        mu = *mu_tmpl;
    mu.v = v;
    mu.clean = clean;
    mu.first_sync = clean->pkt_off[first_sync];
    mu.buf = buf;
    uint64_t rng = rb_seed_of(v->prog, v->setting);
    for (mu.m = 0; mu.m < mutations; mu.m++) {
        mu.kind = (int)(mu.m % RB_NKINDS);
        mu.len = rb_mutate(mu.kind, &rng, in, in_len, last_pkt, buf, &mu.dm);
        rb_check_mutant(&mu, &k[mu.kind]);
    }
    free(buf);
}

/* v's raw trace (test_corruption.c, test_mode_corruption.c). */
static inline void rb_mutate_vector(const rb_vector *v, const rb_flow *clean, unsigned mutations,
                                    rb_kind_stats k[RB_NKINDS])
{
    rb_mutate_stream(v, clean, v->raw, v->raw_len, NULL, mutations, k);
}

/* The per-kind table; with `mode` non-NULL each row starts with it, and the mean instructions
 * lost per mutation are shown too. */
static inline void rb_print_stats_header(bool with_mode)
{
    if (with_mode)
        printf("%-16s ", "mode");
    printf("%-14s %9s %9s %7s %7s %8s %7s %8s %8s %8s %11s %9s", "damage", "mutations", "reported",
           "sync+0", "sync+1", "no-sync", "silent", "harmless", "refused", "believed", "insns lost",
           "worst");
    printf(with_mode ? " %9s\n" : "\n", "mean");
}

static inline void rb_print_stats_row(const char *mode, const char *damage, const rb_kind_stats *ks)
{
    if (mode)
        printf("%-16s ", mode);
    printf("%-14s %9lu %9lu %7lu %7lu %8lu %7lu %8lu %8lu %8lu %10.2f%% %9" PRIu64, damage,
           ks->mutations, ks->with_error, ks->recovered_at[0], ks->recovered_at[1],
           ks->no_sync_after, ks->silent, ks->harmless, ks->options_refused, ks->options_believed,
           ks->clean_insns ? 100.0 * ks->lost / ks->clean_insns : 0.0, ks->lost_max);
    if (mode)
        printf(" %9.1f", ks->mutations ? (double)ks->lost / ks->mutations : 0.0);
    printf("\n");
}

/* Add src's counts to dst (totals over kinds or vectors). */
static inline void rb_kind_stats_add(rb_kind_stats *dst, const rb_kind_stats *src)
{
    dst->mutations += src->mutations;
    dst->with_error += src->with_error;
    for (int i = 0; i <= RB_MAX_SYNC_SKIPPED; i++)
        dst->recovered_at[i] += src->recovered_at[i];
    dst->no_sync_after += src->no_sync_after;
    dst->never_realigned += src->never_realigned;
    dst->silent += src->silent;
    dst->harmless += src->harmless;
    dst->options_refused += src->options_refused;
    dst->options_believed += src->options_believed;
    dst->lost += src->lost;
    if (src->lost_max > dst->lost_max)
        dst->lost_max = src->lost_max;
    dst->clean_insns += src->clean_insns;
}

#endif
