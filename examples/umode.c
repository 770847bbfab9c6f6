/* SPDX-License-Identifier: BSD-2-Clause */
/* Privilege changes: machine mode opens PMP, delegates user ecalls to supervisor mode and
 * drops to S (mret); S drops to U (sret); user code computes and makes ecalls that S
 * handles; a final user ecall makes S call M (ecall from S), which resumes machine mode. */
#include "htif.h"

extern void m_trap(void);
extern void s_trap(void);
extern void s_entry(void);
extern void u_entry(void);
static volatile long user_result;

__asm__(".text\n"
        ".align 2\n"
        /* supervisor start: enter user mode at u_entry */
        "s_entry:\n"
        "  la t0, u_entry\n"
        "  csrw sepc, t0\n"
        "  li t0, 0x100\n" /* sstatus.SPP = U */
        "  csrc sstatus, t0\n"
        "  sret\n"
        /* user code: sum 1..a0 with ecall 1 per step of 10, then ecall 2 to leave */
        "u_entry:\n"
        "  li a0, 0\n"
        "  li a1, 1\n"
        "  li a2, 41\n"
        "1:add a0, a0, a1\n"
        "  addi a1, a1, 1\n"
        "  andi t0, a1, 7\n"
        "  bnez t0, 2f\n"
        "  li a7, 1\n"
        "  ecall\n"
        "2:bne a1, a2, 1b\n"
        "  li a7, 2\n"
        "  ecall\n"
        "3:j 3b\n"
        /* supervisor trap: count ecall 1 and return; forward ecall 2 to machine mode */
        ".align 2\n"
        "s_trap:\n"
        "  csrr t0, scause\n"
        "  li t1, 8\n"
        "  bne t0, t1, 5f\n"
        "  li t1, 2\n"
        "  beq a7, t1, 4f\n"
        "  addi s1, s1, 1\n"
        "  csrr t0, sepc\n"
        "  addi t0, t0, 4\n"
        "  csrw sepc, t0\n"
        "  sret\n"
        "4:ecall\n"
        "5:j 5b\n"
        /* machine trap: from S with a7 == 2: resume main in machine mode */
        ".align 2\n"
        "m_trap:\n"
        "  csrr t0, mcause\n"
        "  li t1, 9\n"
        "  bne t0, t1, 6f\n"
        "  la t0, user_result\n"
        "  sd a0, 0(t0)\n"
        "  li t0, 0x1800\n" /* mstatus.MPP = M */
        "  csrs mstatus, t0\n"
        "  csrw mepc, ra\n"
        "  mret\n"
        "6:j 6b\n");

__attribute__((noinline)) static void run_lower(void)
{
    /* ra holds the return address: m_trap resumes there */
    __asm__ volatile("la t0, m_trap\n"
                     "csrw mtvec, t0\n"
                     "la t0, s_trap\n"
                     "csrw stvec, t0\n"
                     "li t0, 0x100\n" /* ecall from U goes to S */
                     "csrw medeleg, t0\n"
                     "li t0, -1\n"
                     "csrw pmpaddr0, t0\n"
                     "li t0, 0x1f\n" /* NAPOT, RWX: the whole address space */
                     "csrw pmpcfg0, t0\n"
                     "li t0, 0x1800\n"
                     "csrc mstatus, t0\n"
                     "li t0, 0x800\n" /* MPP = S */
                     "csrs mstatus, t0\n"
                     "la t0, s_entry\n"
                     "csrw mepc, t0\n"
                     "li s1, 0\n"
                     "la ra, 1f\n"
                     "mret\n"
                     "1:\n"
                     "la t0, s1_count\n"
                     "sd s1, 0(t0)\n" ::
                         : "t0", "t1", "a0", "a1", "a2", "a7", "s1", "ra", "memory");
}

long s1_count;

int main(void)
{
    run_lower();
    out_str("user sum ");
    out_dec(user_result);
    out_str(", supervisor ecalls ");
    out_dec(s1_count);
    out_char('\n');
    return (user_result == 820 && s1_count == 5) ? 0 : 1;
}
