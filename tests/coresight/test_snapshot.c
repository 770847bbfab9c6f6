/* SPDX-License-Identifier: BSD-2-Clause */
/* DS-5 snapshot loading: the values below are those written in the snapshot's .ini files. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracekit/coresight.h"

static tk_cs_snapshot *load(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof(rel), "opencsd/snapshots/%s", name);
    char *dir = tk_test_data_path(rel);
    tk_cs_snapshot *ss = NULL;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st = tk_cs_snapshot_load(dir, &ss, &diag);
    if (st)
        print_message("%s: %s\n", dir, diag.message);
    free(dir);
    assert_int_equal(st, TK_OK);
    return ss;
}

static void test_juno_r1_1(void **state)
{
    (void)state;
    tk_cs_snapshot *ss = load("juno_r1_1");
    assert_int_equal(ss->nbuffers, 2);
    assert_string_equal(ss->buffers[0].name, "ETB_0");
    assert_int_equal(ss->buffers[0].format, TK_CS_FMT_FRAMED);
    /* device_8.ini: ETM_2, TRCTRACEIDR 0x12, TRCCONFIGR 0xC1, TRCIDR0 0x28000EA1 */
    const tk_cs_source *s = tk_cs_snapshot_find_id(ss, 0x12);
    assert_non_null(s);
    assert_string_equal(s->name, "ETM_2");
    assert_int_equal(s->protocol, TK_CS_PROTO_ETM4);
    assert_int_equal(s->regs.configr, 0xc1);
    assert_int_equal(s->regs.idr[0], 0x28000ea1);
    assert_int_equal(s->regs.idr[2], 0x488);
    assert_int_equal(s->buffer, 0);
    assert_string_equal(ss->cores[s->core].name, "cpu_2");
    /* STM_12 goes to the second buffer */
    int stm = 0;
    for (size_t i = 0; i < ss->nsources; i++)
        if (ss->sources[i].protocol == TK_CS_PROTO_STM) {
            stm++;
            assert_int_equal(ss->sources[i].buffer, 1);
        }
    assert_int_equal(stm, 1);
    tk_cs_snapshot_free(ss);
}

static void test_memory_dumps(void **state)
{
    (void)state;
    tk_cs_snapshot *ss = load("bugfix-exact-match");
    /* cpu_0.ini: cc1.text_dump.bin at 0x400200 (OpenCSD lists it as 0x400200:5ce9bf) */
    const tk_cs_mem *mem = ss->cores[0].mem;
    size_t avail;
    const uint8_t *p = tk_cs_mem_ptr(mem, 0x400200, &avail);
    assert_non_null(p);
    assert_int_equal(avail, 0x5ce9c0 - 0x400200);
    assert_non_null(tk_cs_mem_ptr(mem, 0x5ce9bf, &avail));
    assert_int_equal(avail, 1);
    assert_non_null(tk_cs_mem_ptr(mem, 0x5ce9c0, &avail)); /* next dump */
    assert_null(tk_cs_mem_ptr(mem, 0x5cf710, &avail));
    assert_null(tk_cs_mem_ptr(mem, 0x4001d0, &avail));
    tk_cs_snapshot_free(ss);
}

static void test_formats(void **state)
{
    (void)state;
    tk_cs_snapshot *ss = load("a55-test-tpiu");
    assert_int_equal(ss->buffers[0].format, TK_CS_FMT_DSTREAM);
    assert_int_equal(ss->sources[0].trace_id, 1);
    tk_cs_snapshot_free(ss);
    ss = load("init-short-addr");
    assert_int_equal(ss->buffers[0].format, TK_CS_FMT_RAW);
    assert_int_equal(ss->sources[0].regs.idr[1], 0x4200f440);
    tk_cs_snapshot_free(ss);
    ss = load("TC2");
    int ptm = 0, etm3 = 0;
    for (size_t i = 0; i < ss->nsources; i++) {
        ptm += ss->sources[i].protocol == TK_CS_PROTO_PTM;
        etm3 += ss->sources[i].protocol == TK_CS_PROTO_ETM3;
    }
    assert_int_equal(ptm, 2);
    assert_int_equal(etm3, 3);
    tk_cs_snapshot_free(ss);
}

/* Sources that are not ETMv4 keep their trace ID in other registers (OpenCSD lists TC2's
 * ETM_0..2 and PTM_0..1 on IDs 0x10..0x14). */
static void test_other_trace_ids(void **state)
{
    (void)state;
    static const struct {
        const char *snapshot, *name;
        uint8_t id;
    } want[] = {
        {"TC2", "ETM_0", 0x10},        {"TC2", "ETM_2", 0x12}, {"TC2", "PTM_0", 0x13},
        {"TC2", "PTM_1", 0x14},        {"TC2", "ITM_0", 0x20}, /* ITMTCR=0x00200006 */
        {"juno_r1_1", "STM_12", 0x20},                         /* STMTCSR=0x00a00005 */
        {"juno_r1_1", "ETM_0", 0x10},
    };
    for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
        tk_cs_snapshot *ss = load(want[w].snapshot);
        const tk_cs_source *src = NULL;
        for (size_t i = 0; i < ss->nsources; i++)
            if (!strcmp(ss->sources[i].name, want[w].name))
                src = &ss->sources[i];
        assert_non_null(src);
        assert_int_equal(src->trace_id, want[w].id);
        tk_cs_snapshot_free(ss);
    }
}

/* A malformed .ini is an error with its line number. */
static void test_bad_ini(void **state)
{
    (void)state;
    char dir[] = "/tmp/tk_cs_snapXXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/snapshot.ini", dir);
    FILE *f = fopen(path, "w");
    fputs("[snapshot]\nversion=1.0\n[device_list\n", f);
    fclose(f);
    tk_cs_snapshot *ss;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_cs_snapshot_load(dir, &ss, &diag), TK_ERR_FORMAT);
    assert_non_null(strstr(diag.message, ":3:"));
    f = fopen(path, "w");
    fputs("[device_list]\ndevice0=missing.ini\n", f);
    fclose(f);
    assert_int_equal(tk_cs_snapshot_load(dir, &ss, &diag), TK_ERR_IO);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_juno_r1_1), cmocka_unit_test(test_memory_dumps),
        cmocka_unit_test(test_formats),   cmocka_unit_test(test_other_trace_ids),
        cmocka_unit_test(test_bad_ini),
    };
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
