/* SPDX-License-Identifier: BSD-2-Clause */
/* A machine-mode trap handler: ecall, ebreak, illegal instructions (a compressed and a
 * 32-bit one and a write to a read-only CSR) are each handled and skipped. */
#include "htif.h"

extern void trap_entry(void);
static unsigned long counts[16];

unsigned long handle_trap(unsigned long cause, unsigned long epc, unsigned long tval)
{
    unsigned short lo = *(volatile unsigned short *)epc;
    (void)tval;
    if (cause < 16)
        counts[cause]++;
    return epc + ((lo & 3) == 3 ? 4 : 2);
}

int main(void)
{
    write_csr(mtvec, (unsigned long)trap_entry);
    for (int i = 0; i < 3; i++)
        __asm__ volatile("li a7, 42\n ecall" ::: "a7", "memory");
    __asm__ volatile("ebreak" ::: "memory");
    __asm__ volatile(".2byte 0x0000" ::: "memory");     /* c.unimp */
    __asm__ volatile("unimp" ::: "memory");             /* csrrw x0, cycle, x0 */
    __asm__ volatile("csrw mimpid, zero" ::: "memory"); /* write to a read-only CSR */
    out_str("ecall ");
    out_dec((long)counts[11]);
    out_str(" ebreak ");
    out_dec((long)counts[3]);
    out_str(" illegal ");
    out_dec((long)counts[2]);
    out_char('\n');
    return (counts[11] == 3 && counts[3] == 1 && counts[2] == 3) ? 0 : 1;
}
