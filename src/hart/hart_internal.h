/* SPDX-License-Identifier: BSD-2-Clause */
/* Internals of the hart model shared by its modules (not a public API). */
#ifndef TK_HART_INTERNAL_H
#define TK_HART_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "tracekit/hart.h"
#include "util/compiler.h"

/* Operations of the pre-decoded form, as an X-macro so that the interpreter can build its
 * table of handler addresses in the same order. Compressed instructions decode to the same
 * ops. OP_PAGE_END marks the two sentinel slots past the end of a code page. */
#define TK_HART_OPS(X)                                                                             \
    X(OP_UNDECODED)   /* slot not decoded yet */                                                   \
    X(OP_ILLEGAL)     /* architecturally illegal: illegal-instruction trap */                      \
    X(OP_UNSUPPORTED) /* valid in some extension the model lacks: stop the simulation */           \
    X(OP_LUI)                                                                                      \
    X(OP_AUIPC)                                                                                    \
    X(OP_JAL)                                                                                      \
    X(OP_JALR)                                                                                     \
    X(OP_BEQ)                                                                                      \
    X(OP_BNE)                                                                                      \
    X(OP_BLT)                                                                                      \
    X(OP_BGE)                                                                                      \
    X(OP_BLTU)                                                                                     \
    X(OP_BGEU)                                                                                     \
    X(OP_LB)                                                                                       \
    X(OP_LH)                                                                                       \
    X(OP_LW)                                                                                       \
    X(OP_LD)                                                                                       \
    X(OP_LBU)                                                                                      \
    X(OP_LHU)                                                                                      \
    X(OP_LWU)                                                                                      \
    X(OP_SB)                                                                                       \
    X(OP_SH)                                                                                       \
    X(OP_SW)                                                                                       \
    X(OP_SD)                                                                                       \
    X(OP_ADDI)                                                                                     \
    X(OP_SLTI)                                                                                     \
    X(OP_SLTIU)                                                                                    \
    X(OP_XORI)                                                                                     \
    X(OP_ORI)                                                                                      \
    X(OP_ANDI)                                                                                     \
    X(OP_SLLI)                                                                                     \
    X(OP_SRLI)                                                                                     \
    X(OP_SRAI)                                                                                     \
    X(OP_ADD)                                                                                      \
    X(OP_SUB)                                                                                      \
    X(OP_SLL)                                                                                      \
    X(OP_SLT)                                                                                      \
    X(OP_SLTU)                                                                                     \
    X(OP_XOR)                                                                                      \
    X(OP_SRL)                                                                                      \
    X(OP_SRA)                                                                                      \
    X(OP_OR)                                                                                       \
    X(OP_AND)                                                                                      \
    X(OP_ADDIW)                                                                                    \
    X(OP_SLLIW)                                                                                    \
    X(OP_SRLIW)                                                                                    \
    X(OP_SRAIW)                                                                                    \
    X(OP_ADDW)                                                                                     \
    X(OP_SUBW)                                                                                     \
    X(OP_SLLW)                                                                                     \
    X(OP_SRLW)                                                                                     \
    X(OP_SRAW)                                                                                     \
    X(OP_MUL)                                                                                      \
    X(OP_MULH)                                                                                     \
    X(OP_MULHSU)                                                                                   \
    X(OP_MULHU)                                                                                    \
    X(OP_DIV)                                                                                      \
    X(OP_DIVU)                                                                                     \
    X(OP_REM)                                                                                      \
    X(OP_REMU)                                                                                     \
    X(OP_MULW)                                                                                     \
    X(OP_DIVW)                                                                                     \
    X(OP_DIVUW)                                                                                    \
    X(OP_REMW)                                                                                     \
    X(OP_REMUW)                                                                                    \
    X(OP_MULH32) /* RV32 high products */                                                          \
    X(OP_MULHSU32)                                                                                 \
    X(OP_MULHU32)                                                                                  \
    X(OP_FENCE)                                                                                    \
    X(OP_FENCE_I)                                                                                  \
    X(OP_ECALL)                                                                                    \
    X(OP_EBREAK)                                                                                   \
    X(OP_MRET)                                                                                     \
    X(OP_SRET)                                                                                     \
    X(OP_WFI)                                                                                      \
    X(OP_SFENCE_VMA)                                                                               \
    X(OP_CSRRW)                                                                                    \
    X(OP_CSRRS)                                                                                    \
    X(OP_CSRRC)                                                                                    \
    X(OP_CSRRWI)                                                                                   \
    X(OP_CSRRSI)                                                                                   \
    X(OP_CSRRCI)                                                                                   \
    X(OP_AMO) /* A extension: funct5 in rs3, width in rm (2 = W, 3 = D) */                         \
    X(OP_FLW)                                                                                      \
    X(OP_FLD)                                                                                      \
    X(OP_FSW)                                                                                      \
    X(OP_FSD)                                                                                      \
    X(OP_FP)     /* every other F/D instruction: handled by the fpu module */                      \
    X(OP_SH1ADD) /* Zba / Zbb / Zbs */                                                             \
    X(OP_SH2ADD)                                                                                   \
    X(OP_SH3ADD)                                                                                   \
    X(OP_ADD_UW)                                                                                   \
    X(OP_SH1ADD_UW)                                                                                \
    X(OP_SH2ADD_UW)                                                                                \
    X(OP_SH3ADD_UW)                                                                                \
    X(OP_SLLI_UW)                                                                                  \
    X(OP_ANDN)                                                                                     \
    X(OP_ORN)                                                                                      \
    X(OP_XNOR)                                                                                     \
    X(OP_CLZ)                                                                                      \
    X(OP_CTZ)                                                                                      \
    X(OP_CPOP)                                                                                     \
    X(OP_CLZW)                                                                                     \
    X(OP_CTZW)                                                                                     \
    X(OP_CPOPW)                                                                                    \
    X(OP_MAX)                                                                                      \
    X(OP_MAXU)                                                                                     \
    X(OP_MIN)                                                                                      \
    X(OP_MINU)                                                                                     \
    X(OP_SEXT_B)                                                                                   \
    X(OP_SEXT_H)                                                                                   \
    X(OP_ZEXT_H)                                                                                   \
    X(OP_ROL)                                                                                      \
    X(OP_ROR)                                                                                      \
    X(OP_RORI)                                                                                     \
    X(OP_ROLW)                                                                                     \
    X(OP_RORW)                                                                                     \
    X(OP_RORIW)                                                                                    \
    X(OP_ORC_B)                                                                                    \
    X(OP_REV8)                                                                                     \
    X(OP_BCLR)                                                                                     \
    X(OP_BCLRI)                                                                                    \
    X(OP_BEXT)                                                                                     \
    X(OP_BEXTI)                                                                                    \
    X(OP_BINV)                                                                                     \
    X(OP_BINVI)                                                                                    \
    X(OP_BSET)                                                                                     \
    X(OP_BSETI)                                                                                    \
    X(OP_PAGE_END)

#define TK_HART_OP_ENUM(name) name,
enum hop { TK_HART_OPS(TK_HART_OP_ENUM) OP_COUNT };

/* One pre-decoded instruction (one slot per half-word of a code page), 24 bytes. The
 * interpreter steps through a page by nextb bytes and recovers the pc from off, so it keeps
 * no pc of its own between jumps. An integer destination x0 is stored as rd = 32 (a scratch
 * register that is never read): handlers then write their result unconditionally and x0
 * stays zero without a per-instruction reset. rd & 31 is the architectural register. */
typedef struct hinsn {
    uint8_t op; /* enum hop */
    uint8_t rd, rs1, rs2, rs3;
    uint8_t len;   /* 2 or 4 */
    uint8_t itype; /* trace class: TK_ITYPE_* (NOT_TAKEN for branches: resolved at run time) */
    uint8_t upper; /* lui/auipc */
    int32_t imm;
    uint32_t raw;
    uint16_t off;  /* offset of the instruction in its page (set by the interpreter) */
    uint8_t nextb; /* len / 2 * sizeof(hinsn): step to the next sequential slot */
    uint8_t fmt;   /* FP format: 0 single, 1 double */
    union {
        struct {
            uint8_t rm;  /* FP rounding mode / AMO width / FP sub-op variant */
            uint8_t fop; /* FP operation (fpu.c) */
        };
        /* branches and jal (set by the interpreter): byte distance from this slot to the
         * target's, when the target lies in the same page; 0 otherwise */
        int32_t jdelta;
    };
} hinsn;

#define PAGE_SHIFT 12
#define PAGE_SIZE (1u << PAGE_SHIFT)
#define SLOTS_PER_PAGE (PAGE_SIZE / 2)
/* Two OP_PAGE_END sentinels follow a page's slots: sequential execution runs into one of them
 * (the second after a 32-bit instruction at the page's last half-word) and then looks the
 * next page up, so that a step within a page needs no bounds check. */
#define SLOTS_ALLOC (SLOTS_PER_PAGE + 2)

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
    uint64_t x[33]; /* x[32]: where writes to x0 go (hinsn.rd) */
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
