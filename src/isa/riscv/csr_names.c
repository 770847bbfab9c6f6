/* SPDX-License-Identifier: BSD-2-Clause */
/* CSR names for the disassembler. The set follows what GNU objdump 2.40 prints by default
 * (privileged spec 1.11 plus debug/trigger CSRs), so listings compare with objdump's. */
#include "riscv_internal.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct csr_name {
    uint16_t num;
    const char *name;
} csr_name;

/* Sorted by number (binary search). */
static const csr_name csrs[] = {
    {0x000, "ustatus"},    {0x001, "fflags"},      {0x002, "frm"},        {0x003, "fcsr"},
    {0x004, "uie"},        {0x005, "utvec"},       {0x040, "uscratch"},   {0x041, "uepc"},
    {0x042, "ucause"},     {0x043, "utval"},       {0x044, "uip"},        {0x100, "sstatus"},
    {0x102, "sedeleg"},    {0x103, "sideleg"},     {0x104, "sie"},        {0x105, "stvec"},
    {0x106, "scounteren"}, {0x140, "sscratch"},    {0x141, "sepc"},       {0x142, "scause"},
    {0x143, "stval"},      {0x144, "sip"},         {0x180, "satp"},       {0x200, "vsstatus"},
    {0x204, "vsie"},       {0x205, "vstvec"},      {0x240, "vsscratch"},  {0x241, "vsepc"},
    {0x242, "vscause"},    {0x243, "vstval"},      {0x244, "vsip"},       {0x280, "vsatp"},
    {0x300, "mstatus"},    {0x301, "misa"},        {0x302, "medeleg"},    {0x303, "mideleg"},
    {0x304, "mie"},        {0x305, "mtvec"},       {0x306, "mcounteren"}, {0x320, "mcountinhibit"},
    {0x340, "mscratch"},   {0x341, "mepc"},        {0x342, "mcause"},     {0x343, "mtval"},
    {0x344, "mip"},        {0x5a8, "scontext"},    {0x600, "hstatus"},    {0x602, "hedeleg"},
    {0x603, "hideleg"},    {0x604, "hie"},         {0x605, "htimedelta"}, {0x606, "hcounteren"},
    {0x607, "hgeie"},      {0x615, "htimedeltah"}, {0x643, "htval"},      {0x644, "hip"},
    {0x645, "hvip"},       {0x64a, "htinst"},      {0x680, "hgatp"},      {0x7a0, "tselect"},
    {0x7a1, "tdata1"},     {0x7a2, "tdata2"},      {0x7a3, "tdata3"},     {0x7a4, "tinfo"},
    {0x7a5, "tcontrol"},   {0x7a8, "mcontext"},    {0x7aa, "mscontext"},  {0x7b0, "dcsr"},
    {0x7b1, "dpc"},        {0x7b2, "dscratch0"},   {0x7b3, "dscratch1"},  {0xb00, "mcycle"},
    {0xb02, "minstret"},   {0xb80, "mcycleh"},     {0xb82, "minstreth"},  {0xc00, "cycle"},
    {0xc01, "time"},       {0xc02, "instret"},     {0xc80, "cycleh"},     {0xc81, "timeh"},
    {0xc82, "instreth"},   {0xe12, "hgeip"},       {0xf11, "mvendorid"},  {0xf12, "marchid"},
    {0xf13, "mimpid"},     {0xf14, "mhartid"},
};

static int cmp(const void *k, const void *e)
{
    unsigned a = *(const unsigned *)k, b = ((const csr_name *)e)->num;
    return a < b ? -1 : a > b;
}

int tk_rv_csr_name(unsigned csr, char *buf, size_t cap)
{
    const csr_name *c = bsearch(&csr, csrs, sizeof(csrs) / sizeof(csrs[0]), sizeof(csrs[0]), cmp);

    if (c)
        return snprintf(buf, cap, "%s", c->name);
    /* Numbered families. */
    if (csr >= 0x3a0 && csr <= 0x3a3)
        return snprintf(buf, cap, "pmpcfg%u", csr - 0x3a0);
    if (csr >= 0x3b0 && csr <= 0x3bf)
        return snprintf(buf, cap, "pmpaddr%u", csr - 0x3b0);
    if (csr >= 0x323 && csr <= 0x33f)
        return snprintf(buf, cap, "mhpmevent%u", csr - 0x320);
    if (csr >= 0xb03 && csr <= 0xb1f)
        return snprintf(buf, cap, "mhpmcounter%u", csr - 0xb00);
    if (csr >= 0xb83 && csr <= 0xb9f)
        return snprintf(buf, cap, "mhpmcounter%uh", csr - 0xb80);
    if (csr >= 0xc03 && csr <= 0xc1f)
        return snprintf(buf, cap, "hpmcounter%u", csr - 0xc00);
    if (csr >= 0xc83 && csr <= 0xc9f)
        return snprintf(buf, cap, "hpmcounter%uh", csr - 0xc80);
    return snprintf(buf, cap, "0x%x", csr);
}
