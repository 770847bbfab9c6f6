/* SPDX-License-Identifier: BSD-2-Clause */
/* Decoder and disassembler against GNU objdump (-M no-aliases) on every instruction of the
 * reference-flow ELFs: length, mnemonic, control-flow class, link registers, targets, and
 * the full disassembly text. */
#include "testutil.h"

#include <dirent.h>

#include "objdump_util.h"
#include "tracekit/riscv.h"

static const char *const branches[] = {"beq",  "bne",    "blt",    "bge", "bltu",
                                       "bgeu", "c.beqz", "c.bnez", NULL};
static const char *const jals[] = {"jal", "c.j", "c.jal", NULL};
static const char *const jalrs[] = {"jalr", "c.jr", "c.jalr", NULL};
static const char *const xrets[] = {"mret", "sret", "uret", "dret", "mnret", NULL};
static const char *const ebreaks[] = {"ebreak", "c.ebreak", NULL};

static bool in(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(s, *set))
            return true;
    return false;
}

/* Control-flow class from the mnemonic alone (independent of the decoder). */
static int cf_of(const char *m)
{
    if (in(m, branches))
        return TK_RV_CF_BRANCH;
    if (in(m, jals))
        return TK_RV_CF_JAL;
    if (in(m, jalrs))
        return TK_RV_CF_JALR;
    if (in(m, xrets))
        return TK_RV_CF_XRET;
    if (!strcmp(m, "ecall"))
        return TK_RV_CF_ECALL;
    if (in(m, ebreaks))
        return TK_RV_CF_EBREAK;
    return TK_RV_CF_NONE;
}

static const char *const abi[32] = {"zero", "ra", "sp",  "gp",  "tp", "t0", "t1", "t2",
                                    "s0",   "s1", "a0",  "a1",  "a2", "a3", "a4", "a5",
                                    "a6",   "a7", "s2",  "s3",  "s4", "s5", "s6", "s7",
                                    "s8",   "s9", "s10", "s11", "t3", "t4", "t5", "t6"};

static int reg_of(const char *s, size_t n)
{
    for (int r = 0; r < 32; r++)
        if (strlen(abi[r]) == n && !strncmp(s, abi[r], n))
            return r;
    return -1;
}

typedef struct totals {
    unsigned long insns, cf, targets, links, dis_diff, files;
} totals;

static void check_file(const char *path, totals *t)
{
    FILE *f = od_open(path);
    od_line l;
    unsigned xlen = 0;
    unsigned long n = 0;

    assert_non_null(f);
    while (od_next(f, &l, &xlen)) {
        tk_rv_insn i;
        tk_status st;
        char dis[200], want[200];

        assert_true(xlen == 32 || xlen == 64);
        st = tk_rv_decode(l.raw, xlen, &i);
        n++;
        if (i.len != l.len) {
            fprintf(stderr, "%s %llx: len %u, objdump %u\n", path, (unsigned long long)l.addr,
                    i.len, l.len);
            fail();
        }
        if (l.mnem[0] == '.') { /* objdump could not decode it either */
            assert_int_equal(st, TK_ERR_BAD_INSN);
            continue;
        }
        if (st != TK_OK && i.op != TK_RV_OP_C_UNIMP) {
            fprintf(stderr, "%s %llx: %08x (%s) did not decode: %s\n", path,
                    (unsigned long long)l.addr, l.raw, l.mnem, tk_strerror(st));
            fail();
        }
        /* mnemonic (objdump appends .aq/.rl to atomics) */
        if (strncmp(l.mnem, tk_rv_op_name(i.op), strlen(tk_rv_op_name(i.op)))) {
            fprintf(stderr, "%s %llx: %08x is %s, objdump %s\n", path, (unsigned long long)l.addr,
                    l.raw, tk_rv_op_name(i.op), l.mnem);
            fail();
        }
        assert_int_equal(i.cf, cf_of(l.mnem));
        if (i.cf != TK_RV_CF_NONE)
            t->cf++;
        if (i.cf == TK_RV_CF_BRANCH || i.cf == TK_RV_CF_JAL) {
            /* the target is the last operand, in hex */
            const char *c = strrchr(l.ops, ',');
            uint64_t want_t = strtoull(c ? c + 1 : l.ops, NULL, 16);
            uint64_t got = l.addr + (uint64_t)i.imm;
            if (xlen == 32)
                got &= 0xffffffffu;
            assert_int_equal(got, want_t);
            t->targets++;
        }
        if (i.cf == TK_RV_CF_JALR) {
            /* jalr rd,imm(rs1) / c.jr rs1 / c.jalr rs1 */
            int rd, rs1;
            if (!strcmp(l.mnem, "jalr")) {
                const char *comma = strchr(l.ops, ','), *lp = strchr(l.ops, '('),
                           *rp = strchr(l.ops, ')');
                assert_true(comma && lp && rp);
                rd = reg_of(l.ops, (size_t)(comma - l.ops));
                rs1 = reg_of(lp + 1, (size_t)(rp - lp - 1));
            } else {
                rd = !strcmp(l.mnem, "c.jalr") ? 1 : 0;
                rs1 = reg_of(l.ops, strlen(l.ops));
            }
            assert_int_equal(i.rd, rd);
            assert_int_equal(i.rs1, rs1);
            assert_int_equal(i.jclass, tk_rv_jump_class(&i));
            t->links++;
        }
        /* full text */
        tk_rv_disasm(&i, l.addr, dis, sizeof(dis));
        snprintf(want, sizeof(want), "%s%s%s", l.mnem, l.ops[0] ? "\t" : "", l.ops);
        if (strcmp(dis, want)) {
            if (t->dis_diff < 20)
                fprintf(stderr, "%s %llx: disasm '%s', objdump '%s'\n", path,
                        (unsigned long long)l.addr, dis, want);
            t->dis_diff++;
        }
    }
    pclose(f);
    if (n <= 20)
        fprintf(stderr, "%s: only %lu instructions\n", path, n);
    assert_true(n > 20);
    t->insns += n;
    t->files++;
}

static void test_reference_elfs(void **state)
{
    char *dir = tk_test_data_path("riscv-ref");
    DIR *d = opendir(dir);
    struct dirent *e;
    totals t = {0};

    (void)state;
    assert_non_null(d);
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        char path[1024];
        if (n < 7 || strcmp(e->d_name + n - 6, ".riscv"))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        check_file(path, &t);
    }
    closedir(d);
    free(dir);
    fprintf(stderr,
            "%lu files, %lu instructions: %lu control-flow, %lu targets, %lu jalr forms checked; "
            "%lu disassembly differences\n",
            t.files, t.insns, t.cf, t.targets, t.links, t.dis_diff);
    assert_true(t.files >= 15);
    assert_int_equal(t.dis_diff, 0);
}

/* Every op of the decoder, assembled at test time (RV64 and RV32 variants). */
static const char asm_common[] =
    "1: lui a0,0x12345\n auipc t1,0xfffff\n jal ra,1b\n jalr t0,-12(a5)\n"
    "beq a0,a1,1b\n bne a0,a1,1b\n blt a0,a1,1b\n bge a0,a1,1b\n bltu a0,a1,1b\n"
    "bgeu a0,a1,1b\n lb a0,-1(a1)\n lh a0,2(a1)\n lw a0,4(a1)\n lbu a0,5(a1)\n"
    "lhu a0,6(a1)\n sb a0,-7(sp)\n sh a0,8(sp)\n sw a0,2047(sp)\n addi a0,a1,-2048\n"
    "slti a0,a1,5\n sltiu a0,a1,5\n xori a0,a1,-1\n ori a0,a1,3\n andi a0,a1,7\n"
    "slli a0,a1,3\n srli a0,a1,31\n srai a0,a1,1\n add a0,a1,a2\n sub a0,a1,a2\n"
    "sll a0,a1,a2\n slt a0,a1,a2\n sltu a0,a1,a2\n xor a0,a1,a2\n srl a0,a1,a2\n"
    "sra a0,a1,a2\n or a0,a1,a2\n and a0,a1,a2\n fence iorw,iorw\n fence r,w\n fence.tso\n"
    "fence.i\n ecall\n ebreak\n sret\n mret\n dret\n wfi\n sfence.vma a0,a1\n"
    "csrrw a0,mstatus,a1\n csrrs a0,cycle,zero\n csrrc zero,mie,a1\n csrrwi a0,0x7c0,5\n"
    "csrrsi zero,mstatus,8\n csrrci a0,pmpaddr3,31\n csrrs a0,mhpmcounter4,zero\n"
    "mul a0,a1,a2\n mulh a0,a1,a2\n mulhsu a0,a1,a2\n mulhu a0,a1,a2\n div a0,a1,a2\n"
    "divu a0,a1,a2\n rem a0,a1,a2\n remu a0,a1,a2\n"
    "lr.w a0,(a1)\n sc.w.aq a0,a2,(a1)\n amoswap.w.rl a0,a2,(a1)\n amoadd.w.aqrl a0,a2,(a1)\n"
    "amoxor.w a0,a2,(a1)\n amoand.w a0,a2,(a1)\n amoor.w a0,a2,(a1)\n amomin.w a0,a2,(a1)\n"
    "amomax.w a0,a2,(a1)\n amominu.w a0,a2,(a1)\n amomaxu.w a0,a2,(a1)\n"
    "flw fa0,-4(a1)\n fsw fa0,4(a1)\n fld fs1,8(sp)\n fsd fs1,-8(sp)\n"
    "fmadd.s fa0,fa1,fa2,fa3\n fmsub.s fa0,fa1,fa2,fa3,rtz\n fnmsub.d fa0,fa1,fa2,fa3\n"
    "fnmadd.d ft0,ft1,ft2,ft3,rne\n fadd.s fa0,fa1,fa2\n fsub.d fa0,fa1,fa2,rdn\n"
    "fmul.s fa0,fa1,fa2,rup\n fdiv.d fa0,fa1,fa2,rmm\n fsqrt.s fa0,fa1\n fsqrt.d fa0,fa1,rtz\n"
    "fsgnj.s fa0,fa1,fa2\n fsgnjn.d fa0,fa1,fa2\n fsgnjx.s fa0,fa1,fa2\n fmin.s fa0,fa1,fa2\n"
    "fmax.d fa0,fa1,fa2\n fcvt.w.s a0,fa0,rtz\n fcvt.wu.d a0,fa0\n fmv.x.w a0,ft11\n"
    "feq.s a0,fa0,fa1\n flt.d a0,fa0,fa1\n fle.s a0,fa0,fa1\n fclass.d a0,fa0\n"
    "fcvt.s.w fa0,a0\n fcvt.s.wu fa0,a0,rtz\n fmv.w.x fa0,a0\n fcvt.d.w fa0,a0\n"
    "fcvt.d.wu fa0,a0\n fcvt.s.d fa0,fa1\n fcvt.d.s fa0,fa1\n fclass.s a0,fa1\n"
    "sh1add a0,a1,a2\n sh2add a0,a1,a2\n sh3add a0,a1,a2\n andn a0,a1,a2\n orn a0,a1,a2\n"
    "xnor a0,a1,a2\n clz a0,a1\n ctz a0,a1\n cpop a0,a1\n max a0,a1,a2\n maxu a0,a1,a2\n"
    "min a0,a1,a2\n minu a0,a1,a2\n sext.b a0,a1\n sext.h a0,a1\n zext.h a0,a1\n"
    "rol a0,a1,a2\n ror a0,a1,a2\n rori a0,a1,7\n orc.b a0,a1\n rev8 a0,a1\n"
    "bclr a0,a1,a2\n bclri a0,a1,3\n bext a0,a1,a2\n bexti a0,a1,4\n binv a0,a1,a2\n"
    "binvi a0,a1,5\n bset a0,a1,a2\n bseti a0,a1,6\n"
    ".option rvc\n c.addi4spn a0,sp,1020\n c.fld fa0,248(a1)\n c.lw a0,124(a1)\n"
    "c.fsd fa0,8(a1)\n c.sw a0,4(a1)\n c.nop\n c.addi a0,-32\n c.li a0,31\n"
    "c.addi16sp sp,496\n c.lui a0,0xfffe0\n c.srli a0,1\n c.srai a0,31\n c.andi a0,-1\n"
    "c.sub a0,a1\n c.xor a0,a1\n c.or a0,a1\n c.and a0,a1\n c.j 1b\n c.beqz a0,1b\n"
    "c.bnez a0,1b\n c.slli a0,31\n c.fldsp fa0,504(sp)\n c.lwsp a0,252(sp)\n c.jr a0\n"
    "c.mv a0,a1\n c.ebreak\n c.jalr a0\n c.add a0,a1\n c.fsdsp fa0,504(sp)\n"
    "c.swsp a0,252(sp)\n c.unimp\n .insn 0x8002\n .insn 0x0000100b\n";
static const char asm_rv64[] =
    ".option norvc\n ld a0,-8(a1)\n lwu a0,4(a1)\n sd a0,8(sp)\n slli a0,a1,63\n srai a0,a1,40\n"
    "addiw a0,a1,-1\n slliw a0,a1,31\n srliw a0,a1,3\n sraiw a0,a1,3\n addw a0,a1,a2\n"
    "subw a0,a1,a2\n sllw a0,a1,a2\n srlw a0,a1,a2\n sraw a0,a1,a2\n mulw a0,a1,a2\n"
    "divw a0,a1,a2\n divuw a0,a1,a2\n remw a0,a1,a2\n remuw a0,a1,a2\n lr.d a0,(a1)\n"
    "sc.d a0,a2,(a1)\n amoswap.d a0,a2,(a1)\n amoadd.d a0,a2,(a1)\n amoxor.d a0,a2,(a1)\n"
    "amoand.d a0,a2,(a1)\n amoor.d a0,a2,(a1)\n amomin.d a0,a2,(a1)\n amomax.d a0,a2,(a1)\n"
    "amominu.d a0,a2,(a1)\n amomaxu.d.aq a0,a2,(a1)\n fcvt.l.s a0,fa0\n fcvt.lu.s a0,fa0\n"
    "fcvt.s.l fa0,a0\n fcvt.s.lu fa0,a0\n fcvt.l.d a0,fa0,rtz\n fcvt.lu.d a0,fa0\n"
    "fmv.x.d a0,fa0\n fcvt.d.l fa0,a0\n fcvt.d.lu fa0,a0\n fmv.d.x fa0,a0\n"
    "add.uw a0,a1,a2\n sh1add.uw a0,a1,a2\n sh2add.uw a0,a1,a2\n sh3add.uw a0,a1,a2\n"
    "slli.uw a0,a1,40\n clzw a0,a1\n ctzw a0,a1\n cpopw a0,a1\n rolw a0,a1,a2\n"
    "rorw a0,a1,a2\n roriw a0,a1,3\n rori a0,a1,60\n"
    ".option rvc\n c.ld a0,248(a1)\n c.sd a0,248(a1)\n c.addiw a0,-1\n c.subw a0,a1\n"
    "c.addw a0,a1\n c.ldsp a0,504(sp)\n c.sdsp a0,504(sp)\n c.slli a0,63\n";
static const char asm_rv32[] = ".option norvc\n .option rvc\n 2: c.jal 2b\n c.flw fa0,124(a1)\n "
                               "c.fsw fa0,4(a1)\n c.flwsp fa0,252(sp)\n"
                               "c.fswsp fa0,4(sp)\n c.srli a0,31\n";

/* Assemble text in the build directory and check its disassembly like a reference ELF. */
static void check_asm(const char *march, const char *text)
{
    char src[256], obj[256], cmd[1024];
    FILE *f;
    totals t = {0};

    snprintf(src, sizeof(src), "isa_ops_%s.s", march);
    snprintf(obj, sizeof(obj), "isa_ops_%s.o", march);
    f = fopen(src, "w");
    assert_non_null(f);
    fprintf(f, ".text\n.option norvc\n%s%s", text, march[2] == '6' ? asm_rv64 : asm_rv32);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "riscv64-unknown-elf-as -march=%s -o %s %s", march, obj, src);
    assert_int_equal(system(cmd), 0);
    check_file(obj, &t);
    fprintf(stderr, "%s: %lu instructions, %lu disassembly differences\n", march, t.insns,
            t.dis_diff);
    assert_int_equal(t.dis_diff, 0);
}

static void test_all_ops_rv64(void **state)
{
    (void)state;
    check_asm("rv64gc_zba_zbb_zbs", asm_common);
}

static void test_all_ops_rv32(void **state)
{
    (void)state;
    check_asm("rv32gc_zba_zbb_zbs", asm_common);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_elfs),
        cmocka_unit_test(test_all_ops_rv64),
        cmocka_unit_test(test_all_ops_rv32),
    };
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    if (!od_available()) {
        fprintf(stderr, "SKIP: %s not found\n", TK_OBJDUMP);
        return TK_TEST_SKIP;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
