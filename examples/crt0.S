/* SPDX-License-Identifier: BSD-2-Clause */
/* Start-up code of the tracekit examples: machine mode, one hart, HTIF for I/O. Runs on the
 * tracekit hart model and on QEMU (-M virt or -M none, ELF loaded by the generic loader). */
    .section .text.init, "ax"
    .globl _start
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, __stack_top
    /* other harts park: the examples are single-threaded */
    csrr    t0, mhartid
    bnez    t0, park
    /* FPU on (mstatus.FS = Initial), default rounding */
    li      t0, (1 << 13)
    csrs    mstatus, t0
    csrw    fcsr, zero
    la      t0, tk_default_trap
    csrw    mtvec, t0
    /* clear .bss */
    la      t0, __bss_start
    la      t1, __bss_end
1:  bgeu    t0, t1, 2f
    sd      zero, 0(t0)
    addi    t0, t0, 8
    j       1b
2:  li      a0, 0
    li      a1, 0
    call    main
    call    htif_exit
park:
    wfi
    j       park

    /* An unexpected trap ends the program with code 0x7f00 | mcause. */
    .align  2
tk_default_trap:
    csrr    a0, mcause
    li      t0, 0x7f00
    or      a0, a0, t0
    call    htif_exit
