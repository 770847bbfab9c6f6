/* SPDX-License-Identifier: BSD-2-Clause */
/* Timer interrupts from the CLINT (QEMU virt / SiFive layout): a periodic mtimecmp tick
 * interrupts a compute loop, then the hart sleeps in WFI until the next ticks. */
#include "htif.h"

#define CLINT 0x2000000ul
#define MTIMECMP (*(volatile uint64_t *)(CLINT + 0x4000))
#define MTIME (*(volatile uint64_t *)(CLINT + 0xbff8))
#define PERIOD 37 /* mtime ticks */

extern void trap_entry(void);
static volatile unsigned long ticks;

unsigned long handle_trap(unsigned long cause, unsigned long epc, unsigned long tval)
{
    (void)tval;
    if (cause == ((1ul << 63) | 7)) {
        ticks++;
        MTIMECMP = MTIME + PERIOD;
        return epc;
    }
    htif_exit(0x100 + (int)cause);
}

int main(void)
{
    unsigned long work = 0, seen;
    write_csr(mtvec, (unsigned long)trap_entry);
    MTIMECMP = MTIME + PERIOD;
    set_csr(mie, 1ul << 7);
    set_csr(mstatus, 1ul << 3);
    while (ticks < 20)
        work = work * 31 + ticks;
    seen = ticks;
    while (ticks < seen + 5)
        __asm__ volatile("wfi");
    clear_csr(mstatus, 1ul << 3);
    out_str("ticks ");
    out_dec((long)ticks);
    out_str(work ? " (work done)\n" : "\n");
    return 0;
}
