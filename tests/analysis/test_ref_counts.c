/* SPDX-License-Identifier: BSD-2-Clause */
/* Exact counts on real programs: the riscv-ref ELFs and their executed-PC lists from the
 * reference flow (etrace-ref/<p>/<setting>/<p>.decoder.trace.gz, equal to the ISS's PCs).
 * The profile is built twice: from the E-Trace packets through the flow decoder
 * (<p>.te_inst_raw with its .scf/.ucf, every setting present), and from the PC list through
 * tk_pc_flow. Either way every instruction, function, block, branch and call count of the
 * profile must equal the count taken straight from the PC list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_trace.h"
#include "te_ref.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_packet.h"

typedef struct ref_counts {
    pcref_table insn;   /* pc -> executions */
    pcref_table func;   /* symbol address (UINT64_MAX: none) -> instructions */
    pcref_table branch; /* pc -> taken (a), not taken (b) */
    pcref_table call;   /* (site << 1 ^ callee symbol) is not unique: see call_key */
} ref_counts;

/* Calls by (site, callee entry): sites are distinct instructions, callees symbol starts. */
typedef struct call_ref {
    uint64_t site, callee;
    uint64_t calls;
} call_ref;

static uint64_t func_key(tk_image *img, uint64_t pc)
{
    uint64_t off;
    const tk_symbol *s = tk_image_symbolize(img, pc, &off);
    return s ? pc - off : UINT64_MAX;
}

static void count_direct(tk_image *img, const uint64_t *pcs, size_t n, ref_counts *r,
                         call_ref **calls, size_t *ncalls)
{
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        pcref_get(&r->insn, pcs[i])->a++;
        pcref_get(&r->func, func_key(img, pcs[i]))->a++;
        tk_rv_insn in;
        tk_status st = tk_image_fetch(img, pcs[i], &in);
        assert_true(st == TK_OK || st == TK_ERR_BAD_INSN);
        if (i + 1 == n)
            break;
        uint64_t next = pcs[i + 1];
        if (in.cf == TK_RV_CF_BRANCH) {
            pcref_count *c = pcref_get(&r->branch, pcs[i]);
            if (next == pcs[i] + in.len)
                c->b++;
            else if (next == pcs[i] + (uint64_t)in.imm)
                c->a++;
            else
                c->c++; /* a trap came first: the PCs do not show the outcome */
        } else if (tk_rv_range_end(&in) == TK_END_CALL) {
            uint64_t callee = func_key(img, next);
            size_t k = 0;
            while (k < *ncalls && ((*calls)[k].site != pcs[i] || (*calls)[k].callee != callee))
                k++;
            if (k == *ncalls) {
                if (k == cap) {
                    cap = cap ? cap * 2 : 64;
                    *calls = realloc(*calls, cap * sizeof(**calls));
                    assert_non_null(*calls);
                }
                (*calls)[(*ncalls)++] = (call_ref){pcs[i], callee, 0};
            }
            (*calls)[k].calls++;
        }
    }
}

/* The packets of dir/prog.te_inst_raw through the decoder into the profile. */
static void check_program(const char *prog, const char *setting, bool decode)
{
    char rel[512];
    snprintf(rel, sizeof(rel), "etrace-ref/%s/%s/%s.decoder.trace.gz", prog, setting, prog);
    char *trace = tk_test_data_path(rel);
    tk_image *img = tk_test_ref_image(prog, decode);
    size_t n = 0;
    uint64_t *pcs = ref_read_pcs(trace, &n);
    assert_non_null(pcs);
    /* Leading PCs in the simulator's boot ROM (0x1000) are not in the ELF: start after. */
    size_t skip = 0;
    tk_rv_insn probe;
    while (skip < n && tk_image_fetch(img, pcs[skip], &probe) == TK_ERR_NO_CODE)
        skip++;
    memmove(pcs, pcs + skip, (n - skip) * sizeof(*pcs));
    n -= skip;
    assert_true(n > 0);

    tk_code_view v;
    tk_code_view_from_image(img, &v);
    tk_profile *p = NULL;
    assert_int_equal(tk_profile_new(&v, &p), TK_OK);
    if (decode) {
        snprintf(rel, sizeof(rel), "etrace-ref/%s/%s", prog, setting);
        char *dir = tk_test_data_path(rel);
        tk_test_ref_decode(dir, prog, img, 0, tk_profile_event, p);
        free(dir);
    } else {
        /* The profile reads the file itself, through the library's PC-list flow. */
        tk_diag diag;
        tk_diag_clear(&diag);
        tk_pc_flow *flow = NULL;
        assert_int_equal(tk_pc_flow_new(img, tk_profile_event, p, &flow), TK_OK);
        assert_int_equal(tk_pc_flow_read_file(flow, trace, &diag), TK_OK);
        assert_int_equal(tk_pc_flow_finish(flow), TK_OK);
        tk_pc_flow_free(flow);
    }
    assert_int_equal(tk_profile_finish(p), TK_OK);

    ref_counts r;
    memset(&r, 0, sizeof(r));
    call_ref *calls = NULL;
    size_t ncalls = 0;
    count_direct(img, pcs, n, &r, &calls, &ncalls);

    tk_profile_totals t;
    tk_profile_get_totals(p, &t);
    assert_int_equal(t.insns, n);
    assert_int_equal(t.bad_ranges, 0);
    /* PC lists: the boot ROM run is reported once; decoded traces have no error. */
    assert_int_equal(t.errors, decode ? 0 : skip > 0);

    /* Instructions. */
    assert_int_equal(tk_profile_insn_count(p), r.insn.n);
    for (size_t i = 0; i < tk_profile_insn_count(p); i++) {
        const tk_prof_insn *in = tk_profile_insn(p, i);
        const pcref_count *c = pcref_find(&r.insn, in->addr);
        assert_non_null(c);
        assert_int_equal(in->count, c->a);
    }
    /* Functions. */
    assert_int_equal(tk_profile_func_count(p), r.func.n);
    uint64_t self = 0;
    for (size_t i = 0; i < tk_profile_func_count(p); i++) {
        const tk_prof_func *f = tk_profile_func(p, i);
        uint64_t key = strcmp(f->name, "[unknown]") ? f->addr : UINT64_MAX;
        const pcref_count *c = pcref_find(&r.func, key);
        assert_non_null(c);
        assert_int_equal(f->self, c->a);
        assert_true(f->inclusive >= f->self);
        self += f->self;
    }
    assert_int_equal(self, n);
    /* Blocks: a block's count is its first instruction's, and every instruction of it ran
     * that often. */
    uint64_t block_insns = 0;
    for (size_t i = 0; i < tk_profile_block_count(p); i++) {
        const tk_prof_block *b = tk_profile_block(p, i);
        assert_int_equal(b->count, pcref_find(&r.insn, b->start)->a);
        size_t k = tk_profile_find_insn(p, b->start);
        for (uint32_t j = 0; j < b->ninsn; j++)
            assert_int_equal(tk_profile_insn(p, k + j)->count, b->count);
        block_insns += b->count * b->ninsn;
    }
    assert_int_equal(block_insns, n);
    /* Branches: every executed conditional branch, with the outcomes the PCs show. */
    size_t executed_branches = 0;
    for (size_t i = 0; i < tk_profile_insn_count(p); i++)
        executed_branches += tk_profile_insn(p, i)->cond_branch;
    assert_int_equal(tk_profile_branch_count(p), executed_branches);
    size_t matched = 0;
    for (size_t i = 0; i < tk_profile_branch_count(p); i++) {
        const tk_prof_branch *b = tk_profile_branch(p, i);
        const pcref_count *c = pcref_find(&r.branch, b->addr);
        matched += c != NULL;
        uint64_t taken = c ? c->a : 0, not_taken = c ? c->b : 0, unknown = c ? c->c : 0;
        /* Where a trap followed the branch, the decoder may know more than the PCs show
         * (an exception at the fall-through: not taken); elsewhere the counts are equal. */
        assert_in_range(b->taken, taken, taken + unknown);
        assert_in_range(b->not_taken, not_taken, not_taken + unknown);
        assert_true(b->taken + b->not_taken <= taken + not_taken + unknown);
    }
    assert_int_equal(matched, r.branch.n);
    /* Calls: every call site and callee seen in the PCs has exactly its count. */
    for (size_t k = 0; k < ncalls; k++) {
        uint64_t got = 0;
        for (size_t i = 0; i < tk_profile_call_count(p); i++) {
            const tk_prof_call *c = tk_profile_call(p, i);
            const tk_prof_func *callee = tk_profile_func(p, c->callee);
            uint64_t key = strcmp(callee->name, "[unknown]") ? callee->addr : UINT64_MAX;
            if (c->site == calls[k].site && key == calls[k].callee && !c->trap)
                got += c->calls;
        }
        assert_int_equal(got, calls[k].calls);
    }
    printf("%-7s %-12s %-10s %8zu insns %5zu funcs %6zu blocks %5zu branches %4zu call sites; "
           "unmatched returns %llu, max depth %llu\n",
           decode ? "decoded" : "pcs", setting, prog, n, tk_profile_func_count(p),
           tk_profile_block_count(p), tk_profile_branch_count(p), ncalls,
           (unsigned long long)t.unmatched_returns, (unsigned long long)t.max_depth);

    free(calls);
    free(r.insn.v);
    free(r.func.v);
    free(r.branch.v);
    free(pcs);
    tk_profile_free(p);
    tk_image_free(img);
    free(trace);
}

static void test_benchmarks(void **state)
{
    (void)state;
    /* (the programs but the last, test_discon_branch_exception: test_discontinuities) */
    for (size_t i = 0; i + 1 < tk_test_ref_nprogs; i++)
        check_program(tk_test_ref_progs[i], "itype3_basic", false);
}

static void check_decoded(const char *prog, const char *setting, void *ctx)
{
    (void)ctx;
    check_program(prog, setting, true);
}

/* The same counts from the decoded E-Trace packets, for every setting of every program. */
static void test_decoded_traces(void **state)
{
    (void)state;
    assert_true(tk_test_ref_each(check_decoded, NULL) >= 20);
}

/* Exceptions and a hand-edited discontinuity (the reference flow's own test). */
static void test_discontinuities(void **state)
{
    (void)state;
    check_program("test_discon_branch_exception", "itype3_basic", false);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_benchmarks),
        cmocka_unit_test(test_discontinuities),
        cmocka_unit_test(test_decoded_traces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
