/* SPDX-License-Identifier: BSD-2-Clause */
/* Reading `riscv64-unknown-elf-objdump -d -M no-aliases` output in tests: one parsed line
 * per instruction. Used by the decoder, disassembler and image tests as the reference. */
#ifndef TK_TEST_OBJDUMP_UTIL_H
#define TK_TEST_OBJDUMP_UTIL_H

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TK_OBJDUMP "riscv64-unknown-elf-objdump"

typedef struct od_line {
    uint64_t addr;
    uint32_t raw;
    unsigned len; /* bytes */
    char mnem[32];
    char ops[160];    /* operands without objdump's " <sym>" and " # comment" tails */
    char comment[64]; /* text after " # " (e.g. a computed address), or "" */
} od_line;

static inline bool od_available(void)
{
    return system(TK_OBJDUMP " --version >/dev/null 2>&1") == 0;
}

/* Open the disassembly of an ELF; *xlen is set from objdump's "file format" line once it has
 * been read (od_next fills it on the first call). */
static inline FILE *od_open(const char *elf)
{
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), TK_OBJDUMP " -d -M no-aliases '%s' 2>/dev/null", elf);
    return popen(cmd, "r");
}

/* Next instruction line; returns false at the end. */
static inline bool od_next(FILE *f, od_line *l, unsigned *xlen)
{
    char buf[512];

    while (fgets(buf, sizeof(buf), f)) {
        char *p = buf, *end, *tab;
        size_t n;

        if (strstr(buf, "file format elf32"))
            *xlen = 32;
        else if (strstr(buf, "file format elf64"))
            *xlen = 64;
        while (*p == ' ')
            p++;
        l->addr = strtoull(p, &end, 16);
        if (end == p || end[0] != ':' || end[1] != '\t')
            continue;
        p = end + 2;
        l->raw = (uint32_t)strtoul(p, &end, 16);
        l->len = (unsigned)(end - p) / 2;
        p = strchr(end, '\t');
        if (!p)
            continue;
        p++;
        buf[strcspn(buf, "\n")] = '\0';
        tab = strchr(p, '\t');
        n = tab ? (size_t)(tab - p) : strlen(p);
        if (n >= sizeof(l->mnem))
            n = sizeof(l->mnem) - 1;
        memcpy(l->mnem, p, n);
        l->mnem[n] = '\0';
        l->ops[0] = l->comment[0] = '\0';
        if (tab) {
            char *c = strstr(tab + 1, " # ");
            if (c) {
                snprintf(l->comment, sizeof(l->comment), "%s", c + 3);
                *c = '\0';
            }
            c = strstr(tab + 1, " <");
            if (c)
                *c = '\0';
            snprintf(l->ops, sizeof(l->ops), "%s", tab + 1);
        }
        return true;
    }
    return false;
}

#endif
