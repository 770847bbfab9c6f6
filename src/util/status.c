/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tracekit/status.h"

const char *tk_strerror(tk_status status)
{
    switch (status) {
    case TK_OK:
        return "success";
    case TK_END:
        return "end of stream";
    case TK_ERR_NOMEM:
        return "out of memory";
    case TK_ERR_INVALID:
        return "invalid argument";
    case TK_ERR_IO:
        return "input/output error";
    case TK_ERR_FORMAT:
        return "malformed input";
    case TK_ERR_TRUNCATED:
        return "input truncated";
    case TK_ERR_BAD_PACKET:
        return "malformed packet";
    case TK_ERR_UNSUPPORTED:
        return "unsupported";
    case TK_ERR_NO_CODE:
        return "no code at address";
    case TK_ERR_BAD_INSN:
        return "undecodable instruction";
    case TK_ERR_NOT_RISCV:
        return "not a RISC-V ELF";
    case TK_ERR_NO_SYNC:
        return "no synchronisation yet";
    case TK_ERR_MISMATCH:
        return "trace does not match the program";
    case TK_ERR_OVERFLOW:
        return "value or limit overflow";
    case TK_ERR_CONFIG:
        return "bad configuration";
    case TK_ERR_STATE:
        return "invalid state";
    case TK_ERR_TRAP:
        return "unsupported by the hart model";
    }
    return "unknown status";
}

void tk_diag_clear(tk_diag *diag)
{
    if (!diag)
        return;
    diag->size = sizeof(*diag);
    diag->status = TK_OK;
    diag->byte_offset = UINT64_MAX;
    diag->packet_index = UINT64_MAX;
    diag->line = UINT64_MAX;
    diag->address = UINT64_MAX;
    diag->message[0] = '\0';
}

tk_status tk_diag_set(tk_diag *diag, tk_status status, const char *fmt, ...)
{
    if (!diag)
        return status;
    diag->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diag->message, sizeof(diag->message), fmt, ap);
    va_end(ap);
    return status;
}
