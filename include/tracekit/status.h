/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit status codes and diagnostics shared by every layer. */
#ifndef TRACEKIT_STATUS_H
#define TRACEKIT_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every public function returns a tk_status: TK_OK (0) or a negative error.
 * Positive values are never errors; a few iterators return TK_END. */
typedef enum tk_status {
    TK_OK = 0,
    TK_END = 1, /* end of stream: not an error */

    TK_ERR_NOMEM = -1,       /* allocation failed */
    TK_ERR_INVALID = -2,     /* invalid argument from the caller */
    TK_ERR_IO = -3,          /* file could not be opened/read/written */
    TK_ERR_FORMAT = -4,      /* input does not follow its format (CSV, INI, ELF...) */
    TK_ERR_TRUNCATED = -5,   /* input ended in the middle of a record or packet */
    TK_ERR_BAD_PACKET = -6,  /* packet is malformed (bad format, length, field) */
    TK_ERR_UNSUPPORTED = -7, /* valid input that this build does not handle */
    TK_ERR_NO_CODE = -8,     /* no code in the program image at an address */
    TK_ERR_BAD_INSN = -9,    /* bytes at an address do not decode as an instruction */
    TK_ERR_NOT_RISCV = -10,  /* ELF is not a RISC-V executable */
    TK_ERR_NO_SYNC = -11,    /* decoder has not seen a synchronising packet yet */
    TK_ERR_MISMATCH = -12,   /* trace does not fit the program (wrong binary?) */
    TK_ERR_OVERFLOW = -13,   /* a value does not fit its field or a limit was exceeded */
    TK_ERR_CONFIG = -14,     /* parameters/options are inconsistent or unreadable */
    TK_ERR_STATE = -15,      /* call not valid in the object's current state */
    TK_ERR_TRAP = -16,       /* simulated program stopped on an unsupported case */
} tk_status;

/* A short, static, human-readable name for a status. Never NULL. */
const char *tk_strerror(tk_status status);

/* Where a diagnostic applies. Fields that do not apply are UINT64_MAX. */
typedef struct tk_diag {
    size_t size;           /* sizeof(tk_diag), for forward compatibility */
    tk_status status;      /* what went wrong */
    uint64_t byte_offset;  /* byte offset in the input stream */
    uint64_t packet_index; /* index of the packet (0-based) */
    uint64_t line;         /* line number in a text input (1-based) */
    uint64_t address;      /* program address involved */
    char message[256];     /* one line, no trailing newline */
} tk_diag;

/* Reset a diagnostic to "nothing known". */
void tk_diag_clear(tk_diag *diag);

/* Fill a diagnostic with a status and printf-style message; returns status so callers can
 * write `return tk_diag_set(d, TK_ERR_FORMAT, "...")`. diag may be NULL. */
tk_status tk_diag_set(tk_diag *diag, tk_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
