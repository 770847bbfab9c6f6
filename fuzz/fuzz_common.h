/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers shared by the libFuzzer targets: a byte reader over the fuzz input, the E-Trace
 * parameter sets the te_inst targets cycle through, and in-memory files (memfd) for the
 * parsers whose API takes a path. Header-only so every target is one translation unit. */
#ifndef TK_FUZZ_COMMON_H
#define TK_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracekit/image.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_params.h"

/* Abort (a libFuzzer "crash") when a property every input must satisfy does not hold. */
#define TK_FUZZ_CHECK(cond)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Consume bytes from the front of the input; reading past the end yields zeros. */
typedef struct tk_fuzz_in {
    const uint8_t *p;
    size_t n;
} tk_fuzz_in;

static inline uint8_t tk_fuzz_u8(tk_fuzz_in *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

static inline uint32_t tk_fuzz_u32(tk_fuzz_in *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)tk_fuzz_u8(in) << (8 * i);
    return v;
}

/* Parameter sets: the four settings of the golden vectors (etrace-ref README), then ones
 * that switch on every optional field and extension, the two drafts, and a narrow RV32 one.
 * Covering several layouts matters because field widths decide where every later field of a
 * packet starts. */
enum { TK_FUZZ_NPARAMS = 9 };

static inline void tk_fuzz_params_fixed(unsigned which, tk_te_params *p)
{
    tk_te_params_init(p);
    tk_te_static *s = &p->s;
    s->iaddress_width = 64;
    p->o.resync_max = 0;
    switch (which % TK_FUZZ_NPARAMS) {
    case 0: /* itype3_basic */
        break;
    case 1: /* itype4_basic */
        s->itype_width = 4;
        break;
    case 2: /* itype3_debug */
        s->iaddress_lsb = 0;
        p->o.full_address = true;
        p->o.resync_max = 1;
        break;
    case 3: /* itype4_debug */
        s->itype_width = 4;
        s->iaddress_lsb = 0;
        s->call_counter_size = 9;
        p->o.full_address = true;
        p->o.resync_max = 1;
        break;
    case 4: /* every extension: branch prediction, jump target cache, implicit return */
        s->iaddress_lsb = 1;
        s->bpred_size = 5;
        s->cache_size = 4;
        s->f0s_width = 1;
        s->return_stack_size = 4;
        s->call_counter_size = 3;
        s->notime = 0;
        s->time_width = 16;
        s->ecause_width = 6;
        p->o.branch_prediction = true;
        p->o.jump_target_cache = true;
        p->o.implicit_return = true;
        p->o.implicit_except = true;
        break;
    case 5: /* no context, wide time, sijump */
        s->nocontext = 1;
        s->notime = 0;
        s->time_width = 64;
        s->sijump = 1;
        p->o.sijump = true;
        break;
    case 6:
        p->spec = TK_TE_SPEC_0_29;
        break;
    case 7:
        p->spec = TK_TE_SPEC_0_26;
        s->itype_width = 4;
        break;
    case 8: /* RV32 */
        s->iaddress_width = 32;
        s->context_width = 9;
        s->privilege_width = 3;
        p->o.use_rv32_isa = true;
        break;
    }
}

/* A parameter set chosen by the input: the fixed ones for selectors below 0x80, otherwise
 * widths read from the input and accepted only if tk_te_params_validate agrees (so the
 * targets explore layouts nobody wrote down). Returns false for an invalid combination. */
static inline bool tk_fuzz_params_pick(tk_fuzz_in *in, tk_te_params *p)
{
    uint8_t sel = tk_fuzz_u8(in);
    tk_fuzz_params_fixed(sel, p);
    if (sel < 0x80)
        return true;
    tk_te_static *s = &p->s;
    uint8_t a = tk_fuzz_u8(in), b = tk_fuzz_u8(in), c = tk_fuzz_u8(in), d = tk_fuzz_u8(in);
    s->iaddress_width = 16 + (a & 63) % 49;
    s->iaddress_lsb = (a >> 6) & 1;
    s->context_width = b & 63;
    s->nocontext = (b >> 6) & 1;
    s->notime = (b >> 7) & 1;
    s->time_width = 1 + (c & 63);
    s->ecause_width = 1 + (c >> 6) * 5;
    s->privilege_width = 1 + (d & 3);
    s->itype_width = (d & 4) ? 4 : 3;
    s->bpred_size = (d & 8) ? 3 : 0;
    s->cache_size = (d & 16) ? 5 : 0;
    s->f0s_width = (d & 32) ? 1 : 0;
    s->return_stack_size = (d & 64) ? 6 : 0;
    s->call_counter_size = (d & 128) ? 5 : 0;
    uint8_t o = tk_fuzz_u8(in);
    p->o.full_address = o & 1;
    p->o.implicit_except = o & 2;
    p->o.implicit_return = o & 4;
    p->o.branch_prediction = o & 8;
    p->o.jump_target_cache = o & 16;
    p->spec = (o >> 5) % 3;
    tk_diag diag;
    tk_diag_clear(&diag);
    return tk_te_params_validate(p, &diag) == TK_OK;
}

/* An anonymous in-memory file holding data, and a path that opens it. Returns the fd
 * (close it when done) or -1. */
static inline int tk_fuzz_memfile(const uint8_t *data, size_t n, char *path, size_t cap)
{
    int fd = memfd_create("tk_fuzz", 0);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, data + done, n - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

/* The program the decoder targets decode against (dhrystone from the shared test data, with
 * spike's reset code), for LLVMFuzzerInitialize; NULL after printing why. */
static inline tk_image *tk_fuzz_dhrystone_image(const char *who)
{
    tk_image *img = NULL;
    tk_diag diag;
    tk_diag_clear(&diag);
    if (tk_image_open_elf(TK_TESTDATA "/riscv-ref/dhrystone.riscv", &img, &diag) != TK_OK) {
        fprintf(stderr, "%s: %s\n", who, diag.message);
        return NULL;
    }
    (void)tk_te_add_spike_reset_code(img, false);
    return img;
}

#endif
