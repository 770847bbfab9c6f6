/* SPDX-License-Identifier: BSD-2-Clause */
/* Instruction encoders for the hart unit tests (RISC-V unprivileged spec, base formats), so
 * that tests place code bytes directly into the model's RAM. */
#ifndef TK_TEST_HART_ASM_H
#define TK_TEST_HART_ASM_H

#include <stdint.h>

#define BASE 0x80000000u

static inline uint32_t enc_r(uint32_t op, uint32_t rd, uint32_t f3, uint32_t rs1, uint32_t rs2,
                             uint32_t f7)
{
    return (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op;
}
static inline uint32_t enc_i(uint32_t op, uint32_t rd, uint32_t f3, uint32_t rs1, int32_t imm)
{
    return ((uint32_t)imm << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op;
}
static inline uint32_t enc_s(uint32_t op, uint32_t f3, uint32_t rs1, uint32_t rs2, int32_t imm)
{
    uint32_t u = (uint32_t)imm;
    return ((u >> 5) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((u & 31u) << 7) | op;
}
static inline uint32_t enc_b(uint32_t f3, uint32_t rs1, uint32_t rs2, int32_t imm)
{
    uint32_t u = (uint32_t)imm;
    return (((u >> 12) & 1u) << 31) | (((u >> 5) & 63u) << 25) | (rs2 << 20) | (rs1 << 15) |
           (f3 << 12) | (((u >> 1) & 15u) << 8) | (((u >> 11) & 1u) << 7) | 0x63u;
}
static inline uint32_t enc_u(uint32_t op, uint32_t rd, uint32_t imm20)
{
    return (imm20 << 12) | (rd << 7) | op;
}
static inline uint32_t enc_j(uint32_t rd, int32_t imm)
{
    uint32_t u = (uint32_t)imm;
    return (((u >> 20) & 1u) << 31) | (((u >> 1) & 1023u) << 21) | (((u >> 11) & 1u) << 20) |
           (((u >> 12) & 255u) << 12) | (rd << 7) | 0x6fu;
}

#define ADDI(rd, rs, imm) enc_i(0x13, rd, 0, rs, imm)
#define ADDIW(rd, rs, imm) enc_i(0x1b, rd, 0, rs, imm)
#define SLLI(rd, rs, sh) enc_i(0x13, rd, 1, rs, sh)
#define SRAI(rd, rs, sh) enc_i(0x13, rd, 5, rs, 0x400 | (sh))
#define ADD(rd, a, b) enc_r(0x33, rd, 0, a, b, 0)
#define SUB(rd, a, b) enc_r(0x33, rd, 0, a, b, 0x20)
#define SLTU(rd, a, b) enc_r(0x33, rd, 3, a, b, 0)
#define SLT(rd, a, b) enc_r(0x33, rd, 2, a, b, 0)
#define ADDW(rd, a, b) enc_r(0x3b, rd, 0, a, b, 0)
#define MUL(rd, a, b) enc_r(0x33, rd, 0, a, b, 1)
#define MULH(rd, a, b) enc_r(0x33, rd, 1, a, b, 1)
#define MULHSU(rd, a, b) enc_r(0x33, rd, 2, a, b, 1)
#define MULHU(rd, a, b) enc_r(0x33, rd, 3, a, b, 1)
#define DIV(rd, a, b) enc_r(0x33, rd, 4, a, b, 1)
#define DIVU(rd, a, b) enc_r(0x33, rd, 5, a, b, 1)
#define REM(rd, a, b) enc_r(0x33, rd, 6, a, b, 1)
#define DIVW(rd, a, b) enc_r(0x3b, rd, 4, a, b, 1)
#define LUI(rd, imm20) enc_u(0x37, rd, imm20)
#define AUIPC(rd, imm20) enc_u(0x17, rd, imm20)
#define JAL(rd, off) enc_j(rd, off)
#define JALR(rd, rs, off) enc_i(0x67, rd, 0, rs, off)
#define BEQ(a, b, off) enc_b(0, a, b, off)
#define BNE(a, b, off) enc_b(1, a, b, off)
#define BLT(a, b, off) enc_b(4, a, b, off)
#define LB(rd, rs, off) enc_i(0x03, rd, 0, rs, off)
#define LBU(rd, rs, off) enc_i(0x03, rd, 4, rs, off)
#define LW(rd, rs, off) enc_i(0x03, rd, 2, rs, off)
#define LD(rd, rs, off) enc_i(0x03, rd, 3, rs, off)
#define SB(rs2, rs1, off) enc_s(0x23, 0, rs1, rs2, off)
#define SW(rs2, rs1, off) enc_s(0x23, 2, rs1, rs2, off)
#define SD(rs2, rs1, off) enc_s(0x23, 3, rs1, rs2, off)
#define CSRRW(rd, csr, rs) enc_i(0x73, rd, 1, rs, csr)
#define CSRRS(rd, csr, rs) enc_i(0x73, rd, 2, rs, csr)
#define CSRRWI(rd, csr, imm) enc_i(0x73, rd, 5, imm, csr)
#define ECALL 0x00000073u
#define EBREAK 0x00100073u
#define MRET 0x30200073u
#define SRET 0x10200073u
#define WFI 0x10500073u
#define FENCE_I 0x0000100fu
/* F/D: fmt 0 single, 1 double */
#define FOP(f7, rd, rs1, rs2, rm) enc_r(0x53, rd, rm, rs1, rs2, f7)
#define FMV_D_X(fd, rs) FOP(0x79, fd, rs, 0, 0)
#define FMV_W_X(fd, rs) FOP(0x78, fd, rs, 0, 0)
#define FMV_X_D(rd, fs) FOP(0x71, rd, fs, 0, 0)
#define FMV_X_W(rd, fs) FOP(0x70, rd, fs, 0, 0)
#define FADD_D(fd, a, b) FOP(0x01, fd, a, b, 7)
#define FADD_S(fd, a, b) FOP(0x00, fd, a, b, 7)
#define FDIV_D(fd, a, b) FOP(0x0d, fd, a, b, 7)
#define FSQRT_D(fd, a) FOP(0x2d, fd, a, 0, 7)
#define FMIN_D(fd, a, b) FOP(0x15, fd, a, b, 0)
#define FCVT_W_D(rd, fs, rm) FOP(0x61, rd, fs, 0, rm)
#define FLT_D(rd, a, b) FOP(0x51, rd, a, b, 1)
#define FEQ_D(rd, a, b) FOP(0x51, rd, a, b, 2)

#endif
