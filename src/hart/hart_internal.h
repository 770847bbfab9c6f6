/* SPDX-License-Identifier: BSD-2-Clause */
/* Internals of the hart model shared by its modules (not a public API). */
#ifndef TK_HART_INTERNAL_H
#define TK_HART_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "tracekit/hart.h"

#define TK_LIKELY(x) __builtin_expect(!!(x), 1)
#define TK_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Operations of the pre-decoded form. Compressed instructions decode to the same ops. */
enum hop {
    OP_UNDECODED = 0, /* slot not decoded yet */
    OP_ILLEGAL,       /* architecturally illegal: illegal-instruction trap */
    OP_UNSUPPORTED,   /* valid in some extension the model lacks: stop the simulation */
    OP_LUI,
    OP_AUIPC,
    OP_JAL,
    OP_JALR,
    OP_BEQ,
    OP_BNE,
    OP_BLT,
    OP_BGE,
    OP_BLTU,
    OP_BGEU,
    OP_LB,
    OP_LH,
    OP_LW,
    OP_LD,
    OP_LBU,
    OP_LHU,
    OP_LWU,
    OP_SB,
    OP_SH,
    OP_SW,
    OP_SD,
    OP_ADDI,
    OP_SLTI,
    OP_SLTIU,
    OP_XORI,
    OP_ORI,
    OP_ANDI,
    OP_SLLI,
    OP_SRLI,
    OP_SRAI,
    OP_ADD,
    OP_SUB,
    OP_SLL,
    OP_SLT,
    OP_SLTU,
    OP_XOR,
    OP_SRL,
    OP_SRA,
    OP_OR,
    OP_AND,
    OP_ADDIW,
    OP_SLLIW,
    OP_SRLIW,
    OP_SRAIW,
    OP_ADDW,
    OP_SUBW,
    OP_SLLW,
    OP_SRLW,
    OP_SRAW,
    OP_MUL,
    OP_MULH,
    OP_MULHSU,
    OP_MULHU,
    OP_DIV,
    OP_DIVU,
    OP_REM,
    OP_REMU,
    OP_MULW,
    OP_DIVW,
    OP_DIVUW,
    OP_REMW,
    OP_REMUW,
    OP_MULH32,
    OP_MULHSU32,
    OP_MULHU32, /* RV32 high products */
    OP_FENCE,
    OP_FENCE_I,
    OP_ECALL,
    OP_EBREAK,
    OP_MRET,
    OP_SRET,
    OP_WFI,
    OP_SFENCE_VMA,
    OP_CSRRW,
    OP_CSRRS,
    OP_CSRRC,
    OP_CSRRWI,
    OP_CSRRSI,
    OP_CSRRCI,
    OP_AMO, /* A extension: funct5 in rs3, width in rm (2 = W, 3 = D) */
    OP_FLW,
    OP_FLD,
    OP_FSW,
    OP_FSD,
    OP_FP, /* every other F/D instruction: handled by the fpu module */
    /* Zba / Zbb / Zbs */
    OP_SH1ADD,
    OP_SH2ADD,
    OP_SH3ADD,
    OP_ADD_UW,
    OP_SH1ADD_UW,
    OP_SH2ADD_UW,
    OP_SH3ADD_UW,
    OP_SLLI_UW,
    OP_ANDN,
    OP_ORN,
    OP_XNOR,
    OP_CLZ,
    OP_CTZ,
    OP_CPOP,
    OP_CLZW,
    OP_CTZW,
    OP_CPOPW,
    OP_MAX,
    OP_MAXU,
    OP_MIN,
    OP_MINU,
    OP_SEXT_B,
    OP_SEXT_H,
    OP_ZEXT_H,
    OP_ROL,
    OP_ROR,
    OP_RORI,
    OP_ROLW,
    OP_RORW,
    OP_RORIW,
    OP_ORC_B,
    OP_REV8,
    OP_BCLR,
    OP_BCLRI,
    OP_BEXT,
    OP_BEXTI,
    OP_BINV,
    OP_BINVI,
    OP_BSET,
    OP_BSETI,
    OP_COUNT
};

/* One pre-decoded instruction (one slot per half-word of a code page). */
typedef struct hinsn {
    uint16_t op;
    uint8_t rd, rs1, rs2, rs3;
    uint8_t len;   /* 2 or 4 */
    uint8_t itype; /* trace class: TK_ITYPE_* (NOT_TAKEN for branches: resolved at run time) */
    int32_t imm;
    uint8_t rm;    /* FP rounding mode / AMO width / FP sub-op variant */
    uint8_t fop;   /* FP operation (fpu.c) */
    uint8_t upper; /* lui/auipc */
    uint8_t fmt;   /* FP format: 0 single, 1 double */
    uint32_t raw;
} hinsn;

#define PAGE_SHIFT 12
#define PAGE_SIZE (1u << PAGE_SHIFT)
#define SLOTS_PER_PAGE (PAGE_SIZE / 2)

/* Page flags in RAM. */
enum { PF_CODE = 1, PF_WATCH = 2 };

typedef struct ram {
    uint64_t base, size;
    uint8_t *mem;
    uint8_t *pflags; /* one byte per page */
    hinsn **pages;   /* decoded pages, lazily allocated */
    uint64_t npages;
} ram;

typedef struct hart {
    uint64_t x[32];
    uint64_t f[32];
    uint64_t pc;
    unsigned id;
    unsigned xlen;
    uint64_t amask; /* address mask: 32 or 64 bits */
    uint8_t priv;
    bool wfi; /* waiting for an interrupt */
    /* fast data path: [fast_base, fast_base + fast_limit] is directly accessible RAM
     * (fast_limit is 0 with fast_ok false when PMP must be checked) */
    bool fast_data, fast_fetch;
    uint64_t fast_base, fast_limit; /* data fast path when addr - fast_base < fast_limit */
    uint64_t rbase, rsize;          /* RAM (copy) */
    /* CSRs */
    uint64_t mstatus, misa, medeleg, mideleg, mie, mip, mtvec, mscratch, mepc, mcause, mtval;
    uint64_t mcounteren, scounteren, menvcfg, senvcfg, mcountinhibit;
    uint64_t stvec, sscratch, sepc, scause, stval, satp;
    uint32_t fflags, frm;
    uint64_t pmpcfg[16]; /* one byte per entry, packed 8 per uint64 (entries 0..63) */
    uint64_t pmpaddr[64];
    uint64_t tselect, tdata1, tdata2;
    uint64_t executed; /* instructions executed (faulting ones included) */
    uint64_t faulted;  /* of which raised an exception without retiring */
    uint64_t cycle_off, instret_off;
    /* LR/SC */
    bool res_valid;
    uint64_t res_addr, res_val;
    /* trace */
    tk_hart_retire *rbuf;
    size_t rn;
    /* data access of the instruction being executed (tk_sim_set_mem_trace) */
    uint64_t m_addr, m_rdata, m_wdata;
    uint8_t m_size, m_flags;
} hart;

#define MAX_RAM 2

typedef struct tk_sim {
    tk_sim_config cfg;
    ram ram[MAX_RAM]; /* [0] is the primary region (fast data path) */
    unsigned nram;
    hart *harts;
    unsigned nharts;
    uint64_t tohost, fromhost;
    tk_sim_console_fn console;
    void *console_ctx;
    tk_hart_retire_fn retire;
    void *retire_ctx;
    bool mem_trace; /* fill the records' data-access fields */
    /* CLINT */
    uint64_t *mtimecmp;
    uint64_t *deadline; /* virtual ns at which MTIP rises (UINT64_MAX: never) */
    uint64_t warp;      /* virtual time added by WFI sleeps */
    /* UART */
    uint8_t uart_regs[8];
    /* state */
    bool exited;
    int64_t exit_code;
    tk_status stop; /* non-zero: an error stopped the simulation */
    tk_diag *diag;
    tk_status cb_status;
} tk_sim;

#define RBUF_CAP 512

/* Virtual time in ns under QEMU's icount shift=0: instructions that completed, plus sleeps. */
static inline uint64_t sim_vclock(const tk_sim *s)
{
    uint64_t t = s->warp;
    for (unsigned i = 0; i < s->nharts; i++)
        t += s->harts[i].executed - s->harts[i].faulted;
    return t;
}

/* decode.c */
void tk__hart_decode(uint32_t bits, unsigned xlen, hinsn *d);

/* mem.c */
tk_status tk__ram_init(ram *r, uint64_t base, uint64_t size);
void tk__ram_free(ram *r);
hinsn *tk__ram_code_page(ram *r, uint64_t page_index);
void tk__ram_invalidate(ram *r, uint64_t addr, unsigned n);
void tk__ram_flush_code(ram *r);
/* Load/store through the slow path (devices, PMP, faults). Returns 0 or a trap cause + 1. */
int tk__mem_load(tk_sim *s, hart *h, uint64_t addr, unsigned n, uint64_t *v);
int tk__mem_store(tk_sim *s, hart *h, uint64_t addr, unsigned n, uint64_t v);
bool tk__pmp_ok(const hart *h, uint64_t addr, unsigned n, unsigned access, unsigned priv);
void tk__hart_update_fast(hart *h);

/* csr.c */
/* Returns 0 or an exception cause + 1. */
int tk__csr_op(tk_sim *s, hart *h, unsigned csr, unsigned op, uint64_t src, bool write, bool read,
               uint64_t *old);
void tk__trap(tk_sim *s, hart *h, uint64_t cause, bool interrupt, uint64_t tval, uint64_t epc);
int tk__xret(tk_sim *s, hart *h, bool m, uint64_t *npc);
/* Pending and enabled interrupt, or -1. */
int tk__irq_pending(const hart *h);
void tk__hart_reset(hart *h, unsigned id, unsigned xlen);

/* fpu.c: executes OP_FP and FP loads' boxing; returns 0 or an exception cause + 1. */
int tk__fp_exec(hart *h, const hinsn *d);
/* FP op codes (hinsn.fop) */
enum fop {
    F_ADD,
    F_SUB,
    F_MUL,
    F_DIV,
    F_SQRT,
    F_SGNJ,
    F_SGNJN,
    F_SGNJX,
    F_MIN,
    F_MAX,
    F_CVT_W,
    F_CVT_WU,
    F_CVT_L,
    F_CVT_LU,
    F_MV_X,
    F_CLASS,
    F_EQ,
    F_LT,
    F_LE,
    F_CVT_FROM_W,
    F_CVT_FROM_WU,
    F_CVT_FROM_L,
    F_CVT_FROM_LU,
    F_MV_F,
    F_CVT_SD,
    F_MADD,
    F_MSUB,
    F_NMSUB,
    F_NMADD
};

/* devices.c */
int tk__dev_load(tk_sim *s, hart *h, uint64_t addr, unsigned n, uint64_t *v, bool *hit);
int tk__dev_store(tk_sim *s, hart *h, uint64_t addr, unsigned n, uint64_t v, bool *hit);
void tk__htif_poke(tk_sim *s);
void tk__clint_update(tk_sim *s);

/* sim.c */
bool tk__sim_in_ram(const tk_sim *s, uint64_t addr, size_t len);
/* The RAM region holding [addr, addr + len), or NULL. */
static inline ram *tk__sim_ram(tk_sim *s, uint64_t addr, uint64_t len)
{
    for (unsigned i = 0; i < s->nram; i++) {
        ram *r = &s->ram[i];
        if (addr - r->base < r->size && len <= r->size - (addr - r->base))
            return r;
    }
    return NULL;
}

/* exec.c */
uint64_t tk__hart_run(tk_sim *s, hart *h, uint64_t budget);
void tk__hart_flush_records(tk_sim *s, hart *h, bool keep_last);

#endif
