/* SPDX-License-Identifier: BSD-2-Clause */
/* RISC-V mnemonic ids (tk_rv_insn.op) with their objdump names and operand formats.
 * One X-macro list so the enum, the name table and the disassembler formats never drift. */
#ifndef TRACEKIT_RISCV_OPS_H
#define TRACEKIT_RISCV_OPS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Operand formats (what tk_rv_disasm prints after the mnemonic). "f" marks a float
 * register, "[rm]" a rounding mode printed only when it is not dyn. */
typedef enum tk_rv_fmt {
    TK_RV_FMT_NONE,     /* no operands */
    TK_RV_FMT_R,        /* rd,rs1,rs2 */
    TK_RV_FMT_R1,       /* rd,rs1 (clz, sext.b, ...) */
    TK_RV_FMT_I,        /* rd,rs1,imm */
    TK_RV_FMT_SHIFT,    /* rd,rs1,0xshamt */
    TK_RV_FMT_LOAD,     /* rd,imm(rs1) */
    TK_RV_FMT_STORE,    /* rs2,imm(rs1) */
    TK_RV_FMT_BRANCH,   /* rs1,rs2,target */
    TK_RV_FMT_U,        /* rd,0ximm20 */
    TK_RV_FMT_JAL,      /* rd,target */
    TK_RV_FMT_JALR,     /* rd,imm(rs1) */
    TK_RV_FMT_FENCE,    /* pred,succ */
    TK_RV_FMT_CSR,      /* rd,csr,rs1 */
    TK_RV_FMT_CSRI,     /* rd,csr,uimm */
    TK_RV_FMT_AMO,      /* rd,rs2,(rs1) */
    TK_RV_FMT_LR,       /* rd,(rs1) */
    TK_RV_FMT_SFENCE,   /* rs1,rs2 */
    TK_RV_FMT_FLOAD,    /* frd,imm(rs1) */
    TK_RV_FMT_FSTORE,   /* frs2,imm(rs1) */
    TK_RV_FMT_FR4,      /* frd,frs1,frs2,frs3[,rm] */
    TK_RV_FMT_FR_RM,    /* frd,frs1,frs2[,rm] */
    TK_RV_FMT_FR,       /* frd,frs1,frs2 */
    TK_RV_FMT_FR1_RM,   /* frd,frs1[,rm] */
    TK_RV_FMT_FR1,      /* frd,frs1 */
    TK_RV_FMT_FCMP,     /* rd,frs1,frs2 */
    TK_RV_FMT_F2X,      /* rd,frs1 */
    TK_RV_FMT_F2X_RM,   /* rd,frs1[,rm] */
    TK_RV_FMT_X2F,      /* frd,rs1 */
    TK_RV_FMT_X2F_RM,   /* frd,rs1[,rm] */
    TK_RV_FMT_C_RD_IMM, /* rd,imm (c.addi, c.li, c.addiw, c.andi, c.addi16sp) */
    TK_RV_FMT_C_RD_HEX, /* rd,0xshamt (c.slli, c.srli, c.srai) */
    TK_RV_FMT_C_LUI,    /* rd,0ximm20 */
    TK_RV_FMT_C_RD_RS2, /* rd,rs2 (c.mv, c.add, c.sub, ...) */
    TK_RV_FMT_C_RS1,    /* rs1 (c.jr, c.jalr) */
    TK_RV_FMT_C_J,      /* target (c.j, c.jal) */
    TK_RV_FMT_C_BRANCH, /* rs1,target (c.beqz, c.bnez) */
} tk_rv_fmt;

/* X(ID, "name", format) */
#define TK_RV_OP_LIST(X)                                                                           \
    X(UNKNOWN, "unknown", NONE)                                                                    \
    /* RV32I / RV64I */                                                                            \
    X(LUI, "lui", U)                                                                               \
    X(AUIPC, "auipc", U)                                                                           \
    X(JAL, "jal", JAL)                                                                             \
    X(JALR, "jalr", JALR)                                                                          \
    X(BEQ, "beq", BRANCH)                                                                          \
    X(BNE, "bne", BRANCH)                                                                          \
    X(BLT, "blt", BRANCH)                                                                          \
    X(BGE, "bge", BRANCH)                                                                          \
    X(BLTU, "bltu", BRANCH)                                                                        \
    X(BGEU, "bgeu", BRANCH)                                                                        \
    X(LB, "lb", LOAD)                                                                              \
    X(LH, "lh", LOAD)                                                                              \
    X(LW, "lw", LOAD)                                                                              \
    X(LD, "ld", LOAD)                                                                              \
    X(LBU, "lbu", LOAD)                                                                            \
    X(LHU, "lhu", LOAD)                                                                            \
    X(LWU, "lwu", LOAD)                                                                            \
    X(SB, "sb", STORE)                                                                             \
    X(SH, "sh", STORE)                                                                             \
    X(SW, "sw", STORE)                                                                             \
    X(SD, "sd", STORE)                                                                             \
    X(ADDI, "addi", I)                                                                             \
    X(SLTI, "slti", I)                                                                             \
    X(SLTIU, "sltiu", I)                                                                           \
    X(XORI, "xori", I)                                                                             \
    X(ORI, "ori", I)                                                                               \
    X(ANDI, "andi", I)                                                                             \
    X(SLLI, "slli", SHIFT)                                                                         \
    X(SRLI, "srli", SHIFT)                                                                         \
    X(SRAI, "srai", SHIFT)                                                                         \
    X(ADD, "add", R)                                                                               \
    X(SUB, "sub", R)                                                                               \
    X(SLL, "sll", R)                                                                               \
    X(SLT, "slt", R)                                                                               \
    X(SLTU, "sltu", R)                                                                             \
    X(XOR, "xor", R)                                                                               \
    X(SRL, "srl", R)                                                                               \
    X(SRA, "sra", R)                                                                               \
    X(OR, "or", R)                                                                                 \
    X(AND, "and", R)                                                                               \
    X(ADDIW, "addiw", I)                                                                           \
    X(SLLIW, "slliw", SHIFT)                                                                       \
    X(SRLIW, "srliw", SHIFT)                                                                       \
    X(SRAIW, "sraiw", SHIFT)                                                                       \
    X(ADDW, "addw", R)                                                                             \
    X(SUBW, "subw", R)                                                                             \
    X(SLLW, "sllw", R)                                                                             \
    X(SRLW, "srlw", R)                                                                             \
    X(SRAW, "sraw", R)                                                                             \
    X(FENCE, "fence", FENCE)                                                                       \
    X(FENCE_TSO, "fence.tso", NONE)                                                                \
    X(FENCE_I, "fence.i", NONE)                                                                    \
    X(ECALL, "ecall", NONE)                                                                        \
    X(EBREAK, "ebreak", NONE)                                                                      \
    /* privileged */                                                                               \
    X(URET, "uret", NONE)                                                                          \
    X(SRET, "sret", NONE)                                                                          \
    X(MRET, "mret", NONE)                                                                          \
    X(MNRET, "mnret", NONE)                                                                        \
    X(DRET, "dret", NONE)                                                                          \
    X(WFI, "wfi", NONE)                                                                            \
    X(SFENCE_VMA, "sfence.vma", SFENCE)                                                            \
    /* Zicsr */                                                                                    \
    X(CSRRW, "csrrw", CSR)                                                                         \
    X(CSRRS, "csrrs", CSR)                                                                         \
    X(CSRRC, "csrrc", CSR)                                                                         \
    X(CSRRWI, "csrrwi", CSRI)                                                                      \
    X(CSRRSI, "csrrsi", CSRI)                                                                      \
    X(CSRRCI, "csrrci", CSRI)                                                                      \
    /* M */                                                                                        \
    X(MUL, "mul", R)                                                                               \
    X(MULH, "mulh", R)                                                                             \
    X(MULHSU, "mulhsu", R)                                                                         \
    X(MULHU, "mulhu", R)                                                                           \
    X(DIV, "div", R)                                                                               \
    X(DIVU, "divu", R)                                                                             \
    X(REM, "rem", R)                                                                               \
    X(REMU, "remu", R)                                                                             \
    X(MULW, "mulw", R)                                                                             \
    X(DIVW, "divw", R)                                                                             \
    X(DIVUW, "divuw", R)                                                                           \
    X(REMW, "remw", R)                                                                             \
    X(REMUW, "remuw", R)                                                                           \
    /* A (aq/rl suffixes come from the raw bits) */                                                \
    X(LR_W, "lr.w", LR)                                                                            \
    X(SC_W, "sc.w", AMO)                                                                           \
    X(AMOSWAP_W, "amoswap.w", AMO)                                                                 \
    X(AMOADD_W, "amoadd.w", AMO)                                                                   \
    X(AMOXOR_W, "amoxor.w", AMO)                                                                   \
    X(AMOAND_W, "amoand.w", AMO)                                                                   \
    X(AMOOR_W, "amoor.w", AMO)                                                                     \
    X(AMOMIN_W, "amomin.w", AMO)                                                                   \
    X(AMOMAX_W, "amomax.w", AMO)                                                                   \
    X(AMOMINU_W, "amominu.w", AMO)                                                                 \
    X(AMOMAXU_W, "amomaxu.w", AMO)                                                                 \
    X(LR_D, "lr.d", LR)                                                                            \
    X(SC_D, "sc.d", AMO)                                                                           \
    X(AMOSWAP_D, "amoswap.d", AMO)                                                                 \
    X(AMOADD_D, "amoadd.d", AMO)                                                                   \
    X(AMOXOR_D, "amoxor.d", AMO)                                                                   \
    X(AMOAND_D, "amoand.d", AMO)                                                                   \
    X(AMOOR_D, "amoor.d", AMO)                                                                     \
    X(AMOMIN_D, "amomin.d", AMO)                                                                   \
    X(AMOMAX_D, "amomax.d", AMO)                                                                   \
    X(AMOMINU_D, "amominu.d", AMO)                                                                 \
    X(AMOMAXU_D, "amomaxu.d", AMO)                                                                 \
    /* F */                                                                                        \
    X(FLW, "flw", FLOAD)                                                                           \
    X(FSW, "fsw", FSTORE)                                                                          \
    X(FMADD_S, "fmadd.s", FR4)                                                                     \
    X(FMSUB_S, "fmsub.s", FR4)                                                                     \
    X(FNMSUB_S, "fnmsub.s", FR4)                                                                   \
    X(FNMADD_S, "fnmadd.s", FR4)                                                                   \
    X(FADD_S, "fadd.s", FR_RM)                                                                     \
    X(FSUB_S, "fsub.s", FR_RM)                                                                     \
    X(FMUL_S, "fmul.s", FR_RM)                                                                     \
    X(FDIV_S, "fdiv.s", FR_RM)                                                                     \
    X(FSQRT_S, "fsqrt.s", FR1_RM)                                                                  \
    X(FSGNJ_S, "fsgnj.s", FR)                                                                      \
    X(FSGNJN_S, "fsgnjn.s", FR)                                                                    \
    X(FSGNJX_S, "fsgnjx.s", FR)                                                                    \
    X(FMIN_S, "fmin.s", FR)                                                                        \
    X(FMAX_S, "fmax.s", FR)                                                                        \
    X(FCVT_W_S, "fcvt.w.s", F2X_RM)                                                                \
    X(FCVT_WU_S, "fcvt.wu.s", F2X_RM)                                                              \
    X(FCVT_L_S, "fcvt.l.s", F2X_RM)                                                                \
    X(FCVT_LU_S, "fcvt.lu.s", F2X_RM)                                                              \
    X(FMV_X_W, "fmv.x.w", F2X)                                                                     \
    X(FEQ_S, "feq.s", FCMP)                                                                        \
    X(FLT_S, "flt.s", FCMP)                                                                        \
    X(FLE_S, "fle.s", FCMP)                                                                        \
    X(FCLASS_S, "fclass.s", F2X)                                                                   \
    X(FCVT_S_W, "fcvt.s.w", X2F_RM)                                                                \
    X(FCVT_S_WU, "fcvt.s.wu", X2F_RM)                                                              \
    X(FCVT_S_L, "fcvt.s.l", X2F_RM)                                                                \
    X(FCVT_S_LU, "fcvt.s.lu", X2F_RM)                                                              \
    X(FMV_W_X, "fmv.w.x", X2F)                                                                     \
    /* D */                                                                                        \
    X(FLD, "fld", FLOAD)                                                                           \
    X(FSD, "fsd", FSTORE)                                                                          \
    X(FMADD_D, "fmadd.d", FR4)                                                                     \
    X(FMSUB_D, "fmsub.d", FR4)                                                                     \
    X(FNMSUB_D, "fnmsub.d", FR4)                                                                   \
    X(FNMADD_D, "fnmadd.d", FR4)                                                                   \
    X(FADD_D, "fadd.d", FR_RM)                                                                     \
    X(FSUB_D, "fsub.d", FR_RM)                                                                     \
    X(FMUL_D, "fmul.d", FR_RM)                                                                     \
    X(FDIV_D, "fdiv.d", FR_RM)                                                                     \
    X(FSQRT_D, "fsqrt.d", FR1_RM)                                                                  \
    X(FSGNJ_D, "fsgnj.d", FR)                                                                      \
    X(FSGNJN_D, "fsgnjn.d", FR)                                                                    \
    X(FSGNJX_D, "fsgnjx.d", FR)                                                                    \
    X(FMIN_D, "fmin.d", FR)                                                                        \
    X(FMAX_D, "fmax.d", FR)                                                                        \
    X(FCVT_S_D, "fcvt.s.d", FR1_RM)                                                                \
    X(FCVT_D_S, "fcvt.d.s", FR1)                                                                   \
    X(FEQ_D, "feq.d", FCMP)                                                                        \
    X(FLT_D, "flt.d", FCMP)                                                                        \
    X(FLE_D, "fle.d", FCMP)                                                                        \
    X(FCLASS_D, "fclass.d", F2X)                                                                   \
    X(FCVT_W_D, "fcvt.w.d", F2X_RM)                                                                \
    X(FCVT_WU_D, "fcvt.wu.d", F2X_RM)                                                              \
    X(FCVT_L_D, "fcvt.l.d", F2X_RM)                                                                \
    X(FCVT_LU_D, "fcvt.lu.d", F2X_RM)                                                              \
    X(FMV_X_D, "fmv.x.d", F2X)                                                                     \
    X(FCVT_D_W, "fcvt.d.w", X2F)                                                                   \
    X(FCVT_D_WU, "fcvt.d.wu", X2F)                                                                 \
    X(FCVT_D_L, "fcvt.d.l", X2F_RM)                                                                \
    X(FCVT_D_LU, "fcvt.d.lu", X2F_RM)                                                              \
    X(FMV_D_X, "fmv.d.x", X2F)                                                                     \
    /* Zba */                                                                                      \
    X(SH1ADD, "sh1add", R)                                                                         \
    X(SH2ADD, "sh2add", R)                                                                         \
    X(SH3ADD, "sh3add", R)                                                                         \
    X(ADD_UW, "add.uw", R)                                                                         \
    X(SH1ADD_UW, "sh1add.uw", R)                                                                   \
    X(SH2ADD_UW, "sh2add.uw", R)                                                                   \
    X(SH3ADD_UW, "sh3add.uw", R)                                                                   \
    X(SLLI_UW, "slli.uw", SHIFT)                                                                   \
    /* Zbb */                                                                                      \
    X(ANDN, "andn", R)                                                                             \
    X(ORN, "orn", R)                                                                               \
    X(XNOR, "xnor", R)                                                                             \
    X(CLZ, "clz", R1)                                                                              \
    X(CTZ, "ctz", R1)                                                                              \
    X(CPOP, "cpop", R1)                                                                            \
    X(CLZW, "clzw", R1)                                                                            \
    X(CTZW, "ctzw", R1)                                                                            \
    X(CPOPW, "cpopw", R1)                                                                          \
    X(MAX, "max", R)                                                                               \
    X(MAXU, "maxu", R)                                                                             \
    X(MIN, "min", R)                                                                               \
    X(MINU, "minu", R)                                                                             \
    X(SEXT_B, "sext.b", R1)                                                                        \
    X(SEXT_H, "sext.h", R1)                                                                        \
    X(ZEXT_H, "zext.h", R1)                                                                        \
    X(ROL, "rol", R)                                                                               \
    X(ROR, "ror", R)                                                                               \
    X(RORI, "rori", SHIFT)                                                                         \
    X(ROLW, "rolw", R)                                                                             \
    X(RORW, "rorw", R)                                                                             \
    X(RORIW, "roriw", SHIFT)                                                                       \
    X(ORC_B, "orc.b", R1)                                                                          \
    X(REV8, "rev8", R1)                                                                            \
    /* Zbs */                                                                                      \
    X(BCLR, "bclr", R)                                                                             \
    X(BCLRI, "bclri", SHIFT)                                                                       \
    X(BEXT, "bext", R)                                                                             \
    X(BEXTI, "bexti", SHIFT)                                                                       \
    X(BINV, "binv", R)                                                                             \
    X(BINVI, "binvi", SHIFT)                                                                       \
    X(BSET, "bset", R)                                                                             \
    X(BSETI, "bseti", SHIFT)                                                                       \
    /* C (rd/rs1/rs2/imm are those of the expanded 32-bit form) */                                 \
    X(C_UNIMP, "c.unimp", NONE)                                                                    \
    X(C_ADDI4SPN, "c.addi4spn", I)                                                                 \
    X(C_FLD, "c.fld", FLOAD)                                                                       \
    X(C_LW, "c.lw", LOAD)                                                                          \
    X(C_FLW, "c.flw", FLOAD)                                                                       \
    X(C_LD, "c.ld", LOAD)                                                                          \
    X(C_FSD, "c.fsd", FSTORE)                                                                      \
    X(C_SW, "c.sw", STORE)                                                                         \
    X(C_FSW, "c.fsw", FSTORE)                                                                      \
    X(C_SD, "c.sd", STORE)                                                                         \
    X(C_ADDI, "c.addi", C_RD_IMM)                                                                  \
    X(C_JAL, "c.jal", C_J)                                                                         \
    X(C_ADDIW, "c.addiw", C_RD_IMM)                                                                \
    X(C_LI, "c.li", C_RD_IMM)                                                                      \
    X(C_ADDI16SP, "c.addi16sp", C_RD_IMM)                                                          \
    X(C_LUI, "c.lui", C_LUI)                                                                       \
    X(C_SRLI, "c.srli", C_RD_HEX)                                                                  \
    X(C_SRAI, "c.srai", C_RD_HEX)                                                                  \
    X(C_ANDI, "c.andi", C_RD_IMM)                                                                  \
    X(C_SUB, "c.sub", C_RD_RS2)                                                                    \
    X(C_XOR, "c.xor", C_RD_RS2)                                                                    \
    X(C_OR, "c.or", C_RD_RS2)                                                                      \
    X(C_AND, "c.and", C_RD_RS2)                                                                    \
    X(C_SUBW, "c.subw", C_RD_RS2)                                                                  \
    X(C_ADDW, "c.addw", C_RD_RS2)                                                                  \
    X(C_J, "c.j", C_J)                                                                             \
    X(C_BEQZ, "c.beqz", C_BRANCH)                                                                  \
    X(C_BNEZ, "c.bnez", C_BRANCH)                                                                  \
    X(C_SLLI, "c.slli", C_RD_HEX)                                                                  \
    X(C_FLDSP, "c.fldsp", FLOAD)                                                                   \
    X(C_LWSP, "c.lwsp", LOAD)                                                                      \
    X(C_FLWSP, "c.flwsp", FLOAD)                                                                   \
    X(C_LDSP, "c.ldsp", LOAD)                                                                      \
    X(C_JR, "c.jr", C_RS1)                                                                         \
    X(C_MV, "c.mv", C_RD_RS2)                                                                      \
    X(C_EBREAK, "c.ebreak", NONE)                                                                  \
    X(C_JALR, "c.jalr", C_RS1)                                                                     \
    X(C_ADD, "c.add", C_RD_RS2)                                                                    \
    X(C_FSDSP, "c.fsdsp", FSTORE)                                                                  \
    X(C_SWSP, "c.swsp", STORE)                                                                     \
    X(C_FSWSP, "c.fswsp", FSTORE)                                                                  \
    X(C_SDSP, "c.sdsp", STORE)

#define TK_RV_OP_ENUM_(id, name, fmt) TK_RV_OP_##id,
typedef enum tk_rv_op { TK_RV_OP_LIST(TK_RV_OP_ENUM_) TK_RV_OP_COUNT } tk_rv_op;
#undef TK_RV_OP_ENUM_

#ifdef __cplusplus
}
#endif
#endif
