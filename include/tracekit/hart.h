/* SPDX-License-Identifier: BSD-2-Clause */
/* RISC-V hart model: an instruction-set simulator for RV32/RV64 IMAFDC + Zicsr + Zifencei
 * (M/S/U modes, traps, CLINT, spike-style HTIF, a 16550 UART) that reports every retired
 * instruction, so that the E-Trace ingress port (te_ingress.h) can be fed from real programs.
 *
 * A simulation (tk_sim) holds the memory, the devices and one or more harts. Harts run in
 * deterministic round-robin slices. Execution reports go to a retirement callback in batches;
 * tk_hart_blocks turns them into ingress blocks (single or multiple retirement). */
#ifndef TRACEKIT_HART_H
#define TRACEKIT_HART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "image.h"
#include "status.h"
#include "te_ingress.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Privilege levels as the ingress port encodes them (ingressPort.adoc, priv). */
enum { TK_PRIV_U = 0, TK_PRIV_S = 1, TK_PRIV_M = 3 };

/* Default device addresses (QEMU virt / spike layout). */
#define TK_SIM_CLINT_BASE 0x02000000u
#define TK_SIM_UART_BASE 0x10000000u

typedef struct tk_sim_config {
    size_t size;     /* sizeof(tk_sim_config) */
    unsigned xlen;   /* 32 or 64 */
    unsigned nharts; /* 1..64 */
    uint64_t ram_base;
    uint64_t ram_size; /* bytes; pages are allocated lazily by the host */
    /* optional second RAM region (0 size: none); data accesses to it take the slow path */
    uint64_t ram2_base;
    uint64_t ram2_size;
    bool clint; /* map a CLINT at clint_base */
    uint64_t clint_base;
    bool uart; /* map a 16550 UART at uart_base */
    uint64_t uart_base;
    /* mtime advances by one every timebase_div instructions of virtual time (QEMU -icount
     * shift=0 with a 10 MHz timebase gives 100). */
    uint32_t timebase_div;
    uint32_t quantum; /* instructions per hart per scheduling slice (several harts) */
    /* Misaligned loads/stores raise address-misaligned exceptions (spike's default) instead
     * of being performed (QEMU's behaviour, the default). AMOs always require alignment. */
    bool misaligned_trap;
} tk_sim_config;

/* Defaults: RV64, one hart, 256 MiB RAM at 0x80000000 and 64 MiB at 0x20000000 (where the
 * RV32 embench programs of the reference flow live), CLINT and UART mapped. */
void tk_sim_config_init(tk_sim_config *c);

/* One executed instruction as reported to the retirement callback. */
typedef struct tk_hart_retire {
    uint64_t pc;
    uint64_t cause; /* trap cause (without the interrupt bit), if a trap flag is set */
    uint64_t tval;  /* trap value of an exception */
    uint64_t epc;   /* with TK_HART_F_INTERRUPT: where the interrupted flow resumes */
    uint32_t insn;  /* instruction bits (16 significant bits when len == 2) */
    uint16_t hart;  /* mhartid */
    uint8_t len;    /* 2 or 4 */
    uint8_t itype;  /* TK_ITYPE_* in 4-bit codes; branches resolved; 0 for traps */
    uint8_t priv;   /* privilege the instruction ran in */
    uint8_t flags;  /* TK_HART_F_* */
    uint8_t rd;     /* destination register of lui/auipc (sijump detection) */
    uint8_t rs1;    /* source register of jalr (sijump detection) */
    /* The instruction's data access, reported only after tk_sim_set_mem_trace(s, true)
     * (mflags 0 otherwise): maddr is the memory address or, with TK_HART_M_CSR, the CSR
     * number; mrdata the value loaded / CSR value read, mwdata the value stored / written,
     * both zero-extended from msize bytes (8 for CSRs). */
    uint64_t maddr;
    uint64_t mrdata;
    uint64_t mwdata;
    uint8_t msize;
    uint8_t mflags; /* TK_HART_M_* */
} tk_hart_retire;

enum {
    TK_HART_M_LOAD = 1u << 0,  /* read memory (loads, AMOs, lr/sc) or a CSR */
    TK_HART_M_STORE = 1u << 1, /* wrote memory (stores, AMOs, sc) or a CSR */
    TK_HART_M_CSR = 1u << 2,   /* the access is to CSR maddr */
};

enum {
    TK_HART_F_RETIRED = 1u << 0,   /* the instruction completed (not a faulting one) */
    TK_HART_F_EXCEPTION = 1u << 1, /* it raised an exception (ecall/ebreak also retire) */
    TK_HART_F_INTERRUPT = 1u << 2, /* an interrupt was taken after it */
    TK_HART_F_UPPER = 1u << 3,     /* lui/auipc/c.lui (writes rd) */
};

/* Receives n >= 1 records in execution order (all harts, interleaved by slice). */
typedef tk_status (*tk_hart_retire_fn)(void *ctx, const tk_hart_retire *recs, size_t n);
/* Console output of the program (HTIF write syscall, HTIF console, UART). */
typedef void (*tk_sim_console_fn)(void *ctx, const char *data, size_t len);

typedef struct tk_sim tk_sim;

tk_status tk_sim_new(const tk_sim_config *cfg, tk_sim **out);
void tk_sim_free(tk_sim *s);

/* Load the image's segments (each must lie in RAM), set every hart's pc to the entry and
 * find the tohost/fromhost symbols for HTIF. Errors: TK_ERR_NO_CODE (segment outside RAM). */
tk_status tk_sim_load_image(tk_sim *s, const tk_image *img, tk_diag *diag);
/* Copy bytes into / out of RAM (unit tests place code this way). TK_ERR_NO_CODE if outside. */
tk_status tk_sim_write_mem(tk_sim *s, uint64_t addr, const void *data, size_t len);
tk_status tk_sim_read_mem(const tk_sim *s, uint64_t addr, void *data, size_t len);
/* HTIF mailbox addresses (0 disables HTIF). */
void tk_sim_set_htif(tk_sim *s, uint64_t tohost, uint64_t fromhost);
void tk_sim_set_console(tk_sim *s, tk_sim_console_fn fn, void *ctx);
void tk_sim_set_retire(tk_sim *s, tk_hart_retire_fn fn, void *ctx);
/* Report every retired instruction's load, store and CSR access in its record (maddr,
 * mrdata, mwdata, msize, mflags), for data trace. Off by default (no cost). */
void tk_sim_set_mem_trace(tk_sim *s, bool on);

/* Register access for tests and tools. */
void tk_sim_set_pc(tk_sim *s, unsigned hart, uint64_t pc);
uint64_t tk_sim_get_pc(const tk_sim *s, unsigned hart);
uint64_t tk_sim_get_xreg(const tk_sim *s, unsigned hart, unsigned r);
void tk_sim_set_xreg(tk_sim *s, unsigned hart, unsigned r, uint64_t v);
uint64_t tk_sim_get_freg(const tk_sim *s, unsigned hart, unsigned r);
unsigned tk_sim_get_priv(const tk_sim *s, unsigned hart);
/* Read a CSR as the hart would in machine mode; TK_ERR_INVALID if it does not exist. */
tk_status tk_sim_get_csr(tk_sim *s, unsigned hart, unsigned csr, uint64_t *value);

typedef struct tk_sim_result {
    bool exited;           /* the program exited through HTIF */
    int64_t exit_code;     /* valid if exited */
    uint64_t instructions; /* executed instructions (all harts, faulting ones included) */
    uint64_t retired;      /* of which completed (not trapping: ecall/ebreak excluded, as
                              minstret counts) */
} tk_sim_result;

/* Run until the program exits, max_insns instructions were executed (0 = no limit: returns
 * TK_END), or something unsupported happens (TK_ERR_TRAP / TK_ERR_UNSUPPORTED with the
 * instruction and address in diag). Returns TK_OK when the program exited, TK_END at the
 * limit, or the error of the retirement callback. Can be called again to continue. */
tk_status tk_sim_run(tk_sim *s, uint64_t max_insns, tk_sim_result *res, tk_diag *diag);

/* ---- Retirement records -> ingress blocks ---- */

typedef struct tk_hart_blocks_options {
    size_t size;          /* sizeof(tk_hart_blocks_options) */
    unsigned itype_width; /* 3 or 4 */
    bool sijump;          /* mark jumps made inferable by a preceding lui/auipc */
    unsigned retires;     /* instructions per cycle (1 = single retirement) */
    unsigned taken;       /* most blocks ending in a non-zero itype per cycle (>= 1) */
    int hart;             /* only this hart's records (-1: all) */
    /* xRET as the spec's itype 3 (true), or as an uninferable "other" jump, 14 (6 with 3-bit
     * itypes), as the reference post-iss writes it and the reference encoder expects
     * (false, the default; VERSIONS.md C.9 quirks). */
    bool xret_itype3;
    /* Hand over the blocks of many cycles per call, in order, instead of one call per cycle
     * (the call comes when 256 blocks are gathered and at the end of every
     * tk_hart_blocks_push): for consumers that take blocks one after the other, such as
     * tk_te_encoder_push_run, the per-instruction call is most of the cost. */
    bool batch;
} tk_hart_blocks_options;

void tk_hart_blocks_options_init(tk_hart_blocks_options *o);

/* Called once per cycle with that cycle's blocks (n >= 1), or with the blocks of several
 * cycles (options.batch). context holds the hart id; time is 0 (as post-iss writes it). */
typedef tk_status (*tk_hart_blocks_fn)(void *ctx, const tk_te_block *blocks, size_t n);

typedef struct tk_hart_blocks tk_hart_blocks;
tk_status tk_hart_blocks_new(const tk_hart_blocks_options *o, tk_hart_blocks_fn fn, void *ctx,
                             tk_hart_blocks **out);
/* A tk_hart_retire_fn: pass the tk_hart_blocks as ctx. */
tk_status tk_hart_blocks_push(void *blocks, const tk_hart_retire *recs, size_t n);
/* Emit the last, partly filled cycle (multiple retirement). */
tk_status tk_hart_blocks_finish(tk_hart_blocks *b);
void tk_hart_blocks_free(tk_hart_blocks *b);

/* The spike CSV row of a record (VERSIONS.md C.4). */
void tk_hart_retire_to_spike(const tk_hart_retire *r, tk_spike_row *row);

#ifdef __cplusplus
}
#endif
#endif
