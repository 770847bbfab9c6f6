/* SPDX-License-Identifier: BSD-2-Clause */
/* Block events (TK_TE_DEC_BLOCK_EVENTS): for every etrace-ref vector (program x setting,
 * with its .scf, decoder .ucf and ELF) the flow decoded with the flag and expanded by
 * tk_blocks_as_ranges is event for event the flow decoded without it, serially and with the
 * parallel decoder; the batches really carry whole blocks, and the count sink gives the same
 * totals from batches as from ranges. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "etrace/decoder_int.h"
#include "te_ref.h"
#include "testutil.h"
#include "tracekit/blocks.h"
#include "tracekit/count.h"
#include "tracekit/encap.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_parallel.h"

/* One event as recorded (message copied; blocks expanded). */
typedef struct rec {
    tk_event ev;
    char msg[200];
    bool batched;     /* came from a TK_EV_BLOCKS batch */
    bool batch_first; /* first entry of its batch */
} rec;

typedef struct flow {
    rec *v;
    size_t n, cap;
    uint64_t batches, batched;
    tk_count count;
    uint64_t stat_insns; /* tk_te_decoder_get_stats after a serial decode (0: not taken) */
    /* set while a batch is being expanded */
    bool in_batch, first_of_batch;
} flow;

static void push(flow *f, const tk_event *ev)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 1024;
        f->v = realloc(f->v, f->cap * sizeof(*f->v));
        assert_non_null(f->v);
    }
    rec *r = &f->v[f->n++];
    memset(r, 0, sizeof(*r));
    r->ev = *ev;
    r->ev.message = NULL;
    r->ev.blocks = NULL;
    if (ev->kind == TK_EV_ERROR && ev->message)
        snprintf(r->msg, sizeof(r->msg), "%s", ev->message);
    r->batched = f->in_batch;
    r->batch_first = f->first_of_batch;
    f->first_of_batch = false;
}

static tk_status on_range(void *ctx, const tk_event *ev)
{
    push(ctx, ev);
    return TK_OK;
}

static tk_status on_event(void *ctx, const tk_event *ev)
{
    flow *f = ctx;
    assert_int_equal(tk_count_event(&f->count, ev), TK_OK);
    if (ev->kind != TK_EV_BLOCKS) {
        push(f, ev);
        return TK_OK;
    }
    assert_true(ev->nblocks >= 1 && ev->nblocks <= TK_BLOCK_BATCH);
    f->batches++;
    f->batched += ev->nblocks;
    for (uint32_t i = 0; i < ev->nblocks; i++) {
        /* whole blocks: the range each entry stands for covers the block exactly */
        const tk_bblock *b = ev->blocks[i].block;
        assert_non_null(b);
        assert_true(b->ninsn >= 1 && b->last >= b->start);
    }
    f->in_batch = f->first_of_batch = true;
    tk_status st = tk_blocks_as_ranges(on_range, f, ev);
    f->in_batch = false;
    return st;
}

static void flow_free(flow *f)
{
    free(f->v);
    memset(f, 0, sizeof(*f));
}

/* want (decoded without the flag) and got (with it, expanded) are the same events; an
 * expanded range carries its batch's offsets: those of the batch's first block, which came
 * at or before its own packet. */
static void compare(const char *what, const flow *want, const flow *got)
{
    if (want->n != got->n)
        fail_msg("%s: %zu events without block events, %zu with", what, want->n, got->n);
    uint64_t batch_off = 0, batch_idx = 0;
    for (size_t i = 0; i < want->n; i++) {
        const tk_event *a = &want->v[i].ev, *b = &got->v[i].ev;
        tk_event x = *b;
        if (got->v[i].batched) {
            assert_int_equal(a->kind, TK_EV_RANGE);
            if (got->v[i].batch_first) {
                batch_off = a->byte_offset;
                batch_idx = a->packet_index;
            }
            if (b->byte_offset != batch_off || b->packet_index != batch_idx ||
                a->byte_offset < batch_off || a->packet_index < batch_idx)
                fail_msg("%s: event %zu: batch offsets %llu/%llu, range's own %llu/%llu", what, i,
                         (unsigned long long)b->byte_offset, (unsigned long long)b->packet_index,
                         (unsigned long long)a->byte_offset, (unsigned long long)a->packet_index);
            x.byte_offset = a->byte_offset;
            x.packet_index = a->packet_index;
        }
        if (memcmp(a, &x, sizeof(x)) != 0 || strcmp(want->v[i].msg, got->v[i].msg) != 0)
            fail_msg("%s: event %zu differs: kind %u/%u first 0x%llx/0x%llx last 0x%llx/0x%llx "
                     "ninsn %llu/%llu end %u/%u next 0x%llx/0x%llx offset %llu/%llu",
                     what, i, a->kind, b->kind, (unsigned long long)a->first,
                     (unsigned long long)b->first, (unsigned long long)a->last,
                     (unsigned long long)b->last, (unsigned long long)a->ninsn,
                     (unsigned long long)b->ninsn, a->end, b->end, (unsigned long long)a->next,
                     (unsigned long long)b->next, (unsigned long long)a->byte_offset,
                     (unsigned long long)b->byte_offset);
    }
    /* the count sink: batches count as the ranges they stand for */
    assert_memory_equal(&want->count, &got->count, sizeof(tk_count));
    /* the decoder's own instruction count, kept apart in the block loop */
    if (want->stat_insns && got->stat_insns)
        assert_int_equal(want->stat_insns, got->stat_insns);
}

typedef struct vector {
    tk_te_params p;
    char *elf;
    uint8_t *raw;
    size_t len;
} vector;

static void vector_open(vector *v, const char *dir, const char *prog)
{
    char path[2048];
    snprintf(path, sizeof(path), "%s/%s.te_inst_raw", dir, prog);
    tk_test_ref_params(dir, prog, &v->p, &v->elf);
    assert_non_null(v->elf);
    v->raw = tk_test_read_file(path, &v->len);
    assert_non_null(v->raw);
}

static tk_image *open_image(const vector *v)
{
    tk_image *img;
    tk_diag diag;
    assert_int_equal(tk_image_open_elf(v->elf, &img, &diag), TK_OK);
    assert_int_equal(tk_te_add_spike_reset_code(img, false), TK_OK);
    return img;
}

/* Serial decode with tk_te_decoder_run_raw, which must return bad (TK_OK, or the status of
 * the first damaged packet). */
static void decode_serial_bad(const vector *v, unsigned flags, flow *f, tk_status bad)
{
    tk_image *img = open_image(v);
    tk_te_raw *raw;
    assert_int_equal(tk_te_raw_from_buffer(v->raw, v->len, &raw), TK_OK);
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(&v->p, img, on_event, f, &d), TK_OK);
    tk_te_decoder_set_flags(d, flags);
    assert_int_equal(tk_te_decoder_run_raw(d, raw), bad);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    tk_te_decoder_stats st = {.size = sizeof(st)};
    tk_te_decoder_get_stats(d, &st);
    f->stat_insns = st.instructions;
    tk_te_decoder_free(d);
    tk_te_raw_close(raw);
    tk_image_free(img);
}

static void decode_serial(const vector *v, unsigned flags, flow *f)
{
    decode_serial_bad(v, flags, f, TK_OK);
}

/* ---- the parallel decoder: every piece records into its own flow, appended in order ---- */

typedef struct par_ctx {
    const vector *v;
    flow *all;
} par_ctx;

static tk_status par_open_image(void *ctx, tk_image **out)
{
    *out = open_image(((par_ctx *)ctx)->v);
    return TK_OK;
}

static tk_status par_sink_new(void *ctx, tk_image *img, tk_event_fn *fn, void **sink)
{
    (void)ctx;
    (void)img;
    flow *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    *fn = on_event;
    *sink = f;
    return TK_OK;
}

static tk_status par_sink_done(void *ctx, void *sink)
{
    flow *all = ((par_ctx *)ctx)->all, *f = sink;
    for (size_t i = 0; i < f->n; i++) {
        all->in_batch = f->v[i].batched;
        all->first_of_batch = f->v[i].batch_first;
        push(all, &f->v[i].ev);
        snprintf(all->v[all->n - 1].msg, sizeof(all->v[0].msg), "%s", f->v[i].msg);
    }
    all->in_batch = all->first_of_batch = false;
    tk_count_add(&all->count, &f->count);
    all->batches += f->batches;
    all->batched += f->batched;
    flow_free(f);
    free(f);
    return TK_OK;
}

static void par_sink_drop(void *ctx, void *sink)
{
    (void)ctx;
    flow_free(sink);
    free(sink);
}

static void decode_parallel_bad(const vector *v, unsigned flags, unsigned jobs, flow *f,
                                tk_te_par_stats *pst, tk_status want_bad)
{
    par_ctx c = {.v = v, .all = f};
    tk_te_par_config cfg = {.size = sizeof(cfg),
                            .jobs = jobs,
                            .piece_bytes = 2048, /* many seams even in short traces */
                            .flags = flags,
                            .ctx = &c,
                            .open_image = par_open_image,
                            .sink_new = par_sink_new,
                            .sink_done = par_sink_done,
                            .sink_drop = par_sink_drop};
    tk_status bad = TK_OK;
    *pst = (tk_te_par_stats){.size = sizeof(*pst)};
    assert_int_equal(tk_te_decode_parallel(&v->p, v->raw, v->len, &cfg, pst, &bad), TK_OK);
    assert_int_equal(bad, want_bad);
}

static void decode_parallel(const vector *v, unsigned flags, unsigned jobs, flow *f,
                            tk_te_par_stats *pst)
{
    decode_parallel_bad(v, flags, jobs, f, pst, TK_OK);
}

/* The instructions of a flow, one address each (whatever the cuts). */
static uint64_t *pcs_of(const flow *f, tk_image *img, size_t *n)
{
    size_t cap = 1024;
    uint64_t *pcs = malloc(cap * sizeof(*pcs));
    assert_non_null(pcs);
    *n = 0;
    for (size_t i = 0; i < f->n; i++) {
        const tk_event *ev = &f->v[i].ev;
        if (ev->kind != TK_EV_RANGE)
            continue;
        uint64_t pc = ev->first;
        for (uint64_t k = 0; k < ev->ninsn; k++) {
            if (*n == cap) {
                cap *= 2;
                pcs = realloc(pcs, cap * sizeof(*pcs));
                assert_non_null(pcs);
            }
            pcs[(*n)++] = pc;
            tk_rv_insn insn;
            if (k + 1 < ev->ninsn) {
                assert_int_equal(tk_image_fetch(img, pc, &insn), TK_OK);
                pc += insn.len;
            }
        }
        assert_int_equal(pc, ev->last);
    }
    return pcs;
}

/* Where tk_te_decode_parallel should cut buf at piece_bytes (its rule, walked here packet by
 * packet): at each format 3 start or trap packet at least piece_bytes after the previous
 * cut; a header's low 5 bits are its payload's length (0: a padding byte), a packet that
 * runs past the end ends the walk. Returns the number of pieces. */
static size_t expected_cuts(const uint8_t *buf, size_t len, size_t piece_bytes, size_t *starts)
{
    size_t pieces = 1, last = 0;
    starts[0] = 0;
    for (size_t pos = 0; pos < len;) {
        const unsigned n = buf[pos] & 0x1fu;
        if (n && pos + 1 + n > len)
            break;
        if (n && (buf[pos] >> 5) == TK_ENCAP_FLOW_TE_INST && (buf[pos + 1] & 3u) == 3u &&
            ((buf[pos + 1] >> 2) & 3u) <= 1u && pos - last >= piece_bytes) {
            starts[pieces++] = pos;
            last = pos;
        }
        pos += 1 + n;
    }
    return pieces;
}

/* The parallel decoder's cuts of buf, at piece sizes around the longest packet and up, are
 * exactly the expected ones. */
static void check_cuts(const uint8_t *buf, size_t len, const char *what)
{
    static const size_t sizes[] = {1, 31, 32, 33, 63, 100, 300, 2048, 4096, SIZE_MAX / 2};
    size_t *want = malloc((len + 2) * sizeof(*want)), *got = malloc((len + 2) * sizeof(*got));
    assert_non_null(want);
    assert_non_null(got);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        const size_t nw = expected_cuts(buf, len, sizes[i], want);
        const size_t ng = tk_te_par_cut_starts(buf, len, sizes[i], got, len + 2);
        if (nw != ng || memcmp(want, got, nw * sizeof(*want)))
            fail_msg("%s: cuts at %zu bytes: %zu pieces, expected %zu", what, sizes[i], ng, nw);
    }
    free(want);
    free(got);
}

typedef struct totals {
    size_t vectors;
    uint64_t ranges, batched, batches, seams;
    uint64_t errors; /* error events in the damaged traces */
} totals;

static void check_vector(const char *dir, const char *prog, totals *t)
{
    vector v;
    vector_open(&v, dir, prog);

    flow want = {0}, got = {0};
    decode_serial(&v, 0, &want);
    decode_serial(&v, TK_TE_DEC_BLOCK_EVENTS, &got);
    assert_int_equal(want.batches, 0);
    compare(dir, &want, &got);
    t->ranges += got.count.ranges;
    t->batched += got.batched;
    t->batches += got.batches;

    /* parallel, 2 threads, with and without the flag: the same events; and the same
     * instructions as the serial decode */
    flow pwant = {0}, pgot = {0};
    tk_te_par_stats s1, s2;
    decode_parallel(&v, 0, 2, &pwant, &s1);
    decode_parallel(&v, TK_TE_DEC_BLOCK_EVENTS, 2, &pgot, &s2);
    assert_int_equal(s1.pieces, s2.pieces);
    assert_int_equal(s2.stitched + s2.redecoded + 1, s2.pieces);
    check_cuts(v.raw, v.len, dir);
    /* padding bytes sprinkled in (one after every 7th packet) and a packet cut short at
     * the end */
    uint8_t *pad = malloc(v.len + v.len / 2 + 2);
    assert_non_null(pad);
    size_t np = 0, packets = 0;
    for (size_t pos = 0; pos < v.len;) {
        const size_t n = 1 + (v.raw[pos] & 0x1fu);
        memcpy(pad + np, v.raw + pos, pos + n <= v.len ? n : v.len - pos);
        np += pos + n <= v.len ? n : v.len - pos;
        pos += n;
        if (++packets % 7 == 0)
            pad[np++] = 0;
    }
    check_cuts(pad, np - (np > 3 ? 3 : 0), dir);
    free(pad);
    char what[2100];
    snprintf(what, sizeof(what), "%s (-j2)", dir);
    compare(what, &pwant, &pgot);
    tk_image *img = open_image(&v);
    size_t n1, n2;
    uint64_t *a = pcs_of(&want, img, &n1), *b = pcs_of(&pgot, img, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1 * sizeof(*a));
    assert_int_equal(want.count.instructions, pgot.count.instructions);
    t->seams += s2.stitched + s2.redecoded;
    free(a);
    free(b);
    tk_image_free(img);

    flow_free(&want);
    flow_free(&got);
    flow_free(&pwant);
    flow_free(&pgot);
    free(v.raw);
    free(v.elf);
    t->vectors++;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t list_dirs(const char *dir, char ***out)
{
    DIR *dh = opendir(dir);
    assert_non_null(dh);
    char **names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dh))) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (de->d_name[0] == '.' || !is_dir(path))
            continue;
        names = realloc(names, (n + 1) * sizeof(*names));
        assert_non_null(names);
        names[n++] = strdup(de->d_name);
    }
    closedir(dh);
    qsort(names, n, sizeof(*names), cmp_str);
    *out = names;
    return n;
}

static void check_records(const char *dir, const char *prog, uint64_t *errors);

static void test_all_vectors(void **state)
{
    (void)state;
    char *root = tk_test_data_path("etrace-ref");
    char **progs;
    size_t nprogs = list_dirs(root, &progs);
    totals t = {0};
    for (size_t i = 0; i < nprogs; i++) {
        char pdir[1024];
        snprintf(pdir, sizeof(pdir), "%s/%s", root, progs[i]);
        char **settings;
        size_t nset = list_dirs(pdir, &settings);
        for (size_t j = 0; j < nset; j++) {
            char vdir[1200];
            snprintf(vdir, sizeof(vdir), "%s/%s", pdir, settings[j]);
            check_vector(vdir, progs[i], &t);
            check_records(vdir, progs[i], &t.errors);
            free(settings[j]);
        }
        free(settings);
        free(progs[i]);
    }
    free(progs);
    free(root);
    print_message("%zu vectors: %llu ranges, %llu of them in %llu batches; %llu seams at -j2; "
                  "%llu error events in damaged copies\n",
                  t.vectors, (unsigned long long)t.ranges, (unsigned long long)t.batched,
                  (unsigned long long)t.batches, (unsigned long long)t.seams,
                  (unsigned long long)t.errors);
    assert_true(t.vectors >= 20);
    assert_true(t.seams > 0);
    assert_true(t.errors > 0);
    /* nearly every range of these traces is a whole block (tests/analysis/test_block_batch) */
    assert_true(t.batched * 100 >= t.ranges * 99);
}

/* tk_te_decoder_run_raw (scanner records) against the plain packet path: tk_te_scan_next for
 * every packet into tk_te_decoder_packet, a damaged one recorded as the error event run_raw
 * reports (status, message without its "offset N (packet K): " prefix, offset, index) and
 * then tk_te_decoder_lost. */
static void decode_packets(const vector *v, const uint8_t *buf, size_t len, flow *f)
{
    tk_image *img = open_image(v);
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(&v->p, img, on_event, f, &d), TK_OK);
    tk_te_params p = v->p; /* support packets change the options the codec reads */
    tk_te_scan s;
    tk_te_scan_init(&s, &p, buf, len);
    for (;;) {
        tk_te_packet k;
        tk_diag diag;
        tk_diag_clear(&diag);
        tk_status st = tk_te_scan_next(&s, &k, &diag);
        if (st == TK_END)
            break;
        if (st == TK_OK) {
            const size_t before = f->n;
            assert_int_equal(tk_te_decoder_packet(d, &k, s.offset, s.index), TK_OK);
            /* the decoder applies a support packet's options unless it refuses it (an
             * error event says so) */
            bool refused = false;
            for (size_t i = before; i < f->n; i++)
                refused |= f->v[i].ev.kind == TK_EV_ERROR &&
                           !strncmp(f->v[i].msg, "support packet not applied", 26);
            if (k.format == TK_TE_F3 && k.subformat == TK_TE_SF_SUPPORT && !refused)
                tk_te_params_apply_ioptions(&p, k.ioptions);
            continue;
        }
        const char *m = strstr(diag.message, "(packet ");
        m = m ? strstr(m, "): ") : NULL;
        const tk_event ev = {.kind = TK_EV_ERROR,
                             .status = st,
                             .message = m ? m + 3 : diag.message,
                             .byte_offset = s.offset,
                             .packet_index = s.index};
        push(f, &ev);
        assert_int_equal(tk_te_decoder_lost(d, s.offset, s.index), TK_OK);
        if (st == TK_ERR_TRUNCATED)
            break;
    }
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    tk_te_decoder_free(d);
    tk_image_free(img);
}

/* Serial decode of buf with run_raw, without block events. */
static tk_status decode_raw(const vector *v, const uint8_t *buf, size_t len, flow *f)
{
    tk_image *img = open_image(v);
    tk_te_raw *raw;
    assert_int_equal(tk_te_raw_from_buffer(buf, len, &raw), TK_OK);
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(&v->p, img, on_event, f, &d), TK_OK);
    tk_status st = tk_te_decoder_run_raw(d, raw);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    tk_te_decoder_free(d);
    tk_te_raw_close(raw);
    tk_image_free(img);
    return st;
}

/* Errors compare by what run_raw puts in them for a damaged packet. */
static void compare_packets(const char *what, const flow *want, const flow *got)
{
    if (want->n != got->n)
        fail_msg("%s: %zu events from the packet path, %zu from run_raw", what, want->n, got->n);
    for (size_t i = 0; i < want->n; i++) {
        const tk_event *a = &want->v[i].ev, *b = &got->v[i].ev;
        bool same;
        if (a->kind == TK_EV_ERROR)
            same = b->kind == TK_EV_ERROR && a->status == b->status &&
                   a->byte_offset == b->byte_offset && a->packet_index == b->packet_index &&
                   !strcmp(want->v[i].msg, got->v[i].msg);
        else
            same = memcmp(a, b, sizeof(*a)) == 0;
        if (!same)
            fail_msg("%s: event %zu differs: kind %u/%u offset %llu/%llu index %llu/%llu "
                     "first 0x%llx/0x%llx message '%s'/'%s'",
                     what, i, a->kind, b->kind, (unsigned long long)a->byte_offset,
                     (unsigned long long)b->byte_offset, (unsigned long long)a->packet_index,
                     (unsigned long long)b->packet_index, (unsigned long long)a->first,
                     (unsigned long long)b->first, want->v[i].msg, got->v[i].msg);
    }
}

/* Every vector as recorded and with damage (a byte of every few hundred changed, from a
 * fixed seed): run_raw gives the events of the plain packet path. */
static void check_records(const char *dir, const char *prog, uint64_t *errors)
{
    vector v;
    vector_open(&v, dir, prog);
    uint8_t *bad = malloc(v.len ? v.len : 1);
    assert_non_null(bad);
    uint32_t seed = 12345;
    for (int round = 0; round < 3; round++) {
        memcpy(bad, v.raw, v.len);
        if (round > 0)
            for (size_t i = 0; i < v.len; i++) {
                seed = seed * 1103515245u + 12345u;
                if ((seed >> 16) % (round == 1 ? 997u : 211u) == 0)
                    bad[i] ^= (uint8_t)(1u << ((seed >> 8) & 7u));
            }
        flow want = {0}, got = {0};
        decode_packets(&v, bad, v.len, &want);
        tk_status st = decode_raw(&v, bad, v.len, &got);
        assert_true(st == TK_OK || st == TK_ERR_BAD_PACKET || st == TK_ERR_TRUNCATED);
        if (round == 0)
            assert_int_equal(st, TK_OK);
        char what[2100];
        snprintf(what, sizeof(what), "%s (damage round %d)", dir, round);
        compare_packets(what, &want, &got);
        *errors += got.count.errors;
        flow_free(&want);
        flow_free(&got);
    }
    free(bad);
    free(v.raw);
    free(v.elf);
}

/* A callback that stops on a batch stops the decoder with its status. */
static tk_status stop_on_blocks(void *ctx, const tk_event *ev)
{
    (*(int *)ctx)++;
    return ev->kind == TK_EV_BLOCKS ? TK_ERR_IO : TK_OK;
}

static void test_stop_on_batch(void **state)
{
    (void)state;
    char *dir = tk_test_data_path("etrace-ref/dhrystone/itype3_basic");
    vector v;
    vector_open(&v, dir, "dhrystone");
    tk_image *img = open_image(&v);
    tk_te_raw *raw;
    assert_int_equal(tk_te_raw_from_buffer(v.raw, v.len, &raw), TK_OK);
    int calls = 0;
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(&v.p, img, stop_on_blocks, &calls, &d), TK_OK);
    tk_te_decoder_set_flags(d, TK_TE_DEC_BLOCK_EVENTS);
    assert_int_equal(tk_te_decoder_run_raw(d, raw), TK_ERR_IO);
    assert_true(calls >= 1);
    tk_te_decoder_free(d);
    tk_te_raw_close(raw);
    tk_image_free(img);
    free(v.raw);
    free(v.elf);
    free(dir);
}

/* A cut at a packet that looks like a format 3 start by its first two bytes but does not
 * decode (its length set to 31 bytes, longer than any sync): the serial decode reports it and goes
 * on, and so must the parallel one, which decodes that piece again from the serial state. (It
 * failed the whole decode with the packet's status; found by fuzz_te_parallel.) */
static void test_damaged_sync_at_cut(void **state)
{
    (void)state;
    char *dir = tk_test_data_path("etrace-ref/dhrystone/itype3_basic");
    vector v;
    vector_open(&v, dir, "dhrystone");
    /* the first format 3 start at least one piece (decode_parallel's 2048 bytes) in */
    size_t at = 0;
    for (size_t pos = 0; pos + 1 < v.len && !at; pos += 1 + (v.raw[pos] & 0x1fu))
        if (pos >= 2048 && (v.raw[pos] & 0x1fu) && (v.raw[pos] >> 5) == TK_ENCAP_FLOW_TE_INST &&
            (v.raw[pos + 1] & 0x0fu) == 0x03u)
            at = pos;
    assert_true(at > 0);
    v.raw[at] = (uint8_t)((v.raw[at] & 0xe0u) | 31u);
    size_t *cut = malloc((v.len / 2048 + 2) * sizeof(*cut));
    assert_non_null(cut);
    const size_t ncut = expected_cuts(v.raw, v.len, 2048, cut);
    bool cut_there = false;
    for (size_t i = 0; i < ncut; i++)
        cut_there |= cut[i] == at;
    assert_true(cut_there);
    free(cut);

    flow want = {0}, got = {0};
    decode_serial_bad(&v, TK_TE_DEC_BLOCK_EVENTS, &want, TK_ERR_BAD_PACKET);
    tk_te_par_stats pst;
    decode_parallel_bad(&v, TK_TE_DEC_BLOCK_EVENTS, 2, &got, &pst, TK_ERR_BAD_PACKET);
    assert_true(pst.redecoded >= 1);
    assert_int_equal(got.count.errors, want.count.errors);
    assert_true(want.count.errors >= 1);
    tk_image *img = open_image(&v);
    size_t n1, n2;
    uint64_t *a = pcs_of(&want, img, &n1), *b = pcs_of(&got, img, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1 * sizeof(*a));
    free(a);
    free(b);
    tk_image_free(img);
    flow_free(&want);
    flow_free(&got);
    free(v.raw);
    free(v.elf);
    free(dir);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_vectors),
        cmocka_unit_test(test_stop_on_batch),
        cmocka_unit_test(test_damaged_sync_at_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
