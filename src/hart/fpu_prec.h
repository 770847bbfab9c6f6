/* SPDX-License-Identifier: BSD-2-Clause */
/* Body of one F/D instruction for one precision, included by fpu.c once per precision with
 * the FP_* parameters defined (they are undefined again at the end). Returns 0, or 3 for an
 * illegal instruction (2 + 1, as tk__fp_exec reports it). */
static int FP_NAME(hart *h, const hinsn *d, unsigned rm, uint32_t *fl)
{
    const FP_U sign = (FP_U)1 << (FP_EXP + FP_MANT);
    FP_U ab = FP_READ(d->rs1), bb = FP_READ(d->rs2), cb = FP_READ(d->rs3);
    /* volatile: the host must round each operation in the mode fenv was set to */
    volatile FP_T a = FP_OF(ab), b = FP_OF(bb), c = FP_OF(cb);
    volatile FP_T r = 0;
    FP_U rb;
    bool is_arith = true;
    switch (d->fop) {
    case F_ADD:
        r = a + b;
        break;
    case F_SUB:
        r = a - b;
        break;
    case F_MUL:
        r = a * b;
        break;
    case F_DIV:
        r = a / b;
        break;
    case F_SQRT:
        r = FP_SQRT(a);
        break;
    case F_MADD:
    case F_MSUB:
    case F_NMSUB:
    case F_NMADD: {
        FP_T x = d->fop >= F_NMSUB ? -a : a;
        FP_T z = (d->fop == F_MSUB || d->fop == F_NMADD) ? -c : c;
        if ((isinf(a) && b == 0) || (a == 0 && isinf(b)))
            *fl |= FF_NV; /* even with a quiet NaN addend */
        r = FP_FMA(x, b, z);
        break;
    }
    case F_CVT_SD: { /* fcvt.s.d or fcvt.d.s: from the other precision */
        r = (FP_T)FP_CVT_OTHER;
        break;
    }
    default:
        is_arith = false;
        break;
    }
    if (is_arith) {
        rb = FP_BITS_OF(r);
        if (isnan(r))
            rb = FP_CNAN;
        h->f[d->rd] = FP_BOX | rb;
        return 0;
    }
    switch (d->fop) {
    case F_SGNJ:
        rb = (ab & ~sign) | (bb & sign);
        break;
    case F_SGNJN:
        rb = (ab & ~sign) | (~bb & sign);
        break;
    case F_SGNJX:
        rb = ab ^ (bb & sign);
        break;
    case F_MIN:
    case F_MAX: {
        bool an = isnan(a), bn = isnan(b);
        if (FP_SNAN(ab) || FP_SNAN(bb))
            *fl |= FF_NV;
        if (an && bn)
            rb = FP_CNAN;
        else if (an)
            rb = bb;
        else if (bn)
            rb = ab;
        else if (a == b)
            rb = d->fop == F_MIN ? (ab | bb) : (ab & bb); /* -0 < +0 */
        else
            rb = ((a < b) == (d->fop == F_MIN)) ? ab : bb;
        break;
    }
    case F_CVT_FROM_W:
        r = (FP_T)(int32_t)h->x[d->rs1];
        rb = FP_BITS_OF(r);
        break;
    case F_CVT_FROM_WU:
        r = (FP_T)(uint32_t)h->x[d->rs1];
        rb = FP_BITS_OF(r);
        break;
    case F_CVT_FROM_L:
        r = (FP_T)(int64_t)h->x[d->rs1];
        rb = FP_BITS_OF(r);
        break;
    case F_CVT_FROM_LU:
        r = (FP_T)(uint64_t)h->x[d->rs1];
        rb = FP_BITS_OF(r);
        break;
    case F_MV_F:
        rb = (FP_U)h->x[d->rs1];
        break;
    case F_CVT_W:
    case F_CVT_WU:
    case F_CVT_L:
    case F_CVT_LU:
        h->x[d->rd] = cvt_to_int((double)a, d->fop, rm, fl);
        return 0;
    case F_MV_X:
        h->x[d->rd] = FP_MV_X;
        return 0;
    case F_CLASS: {
        const unsigned e = (unsigned)(ab >> FP_MANT) & ((1u << FP_EXP) - 1);
        const unsigned emax = (1u << FP_EXP) - 1;
        const FP_U m = ab & (((FP_U)1 << FP_MANT) - 1);
        h->x[d->rd] = class_bits((ab & sign) != 0, e == emax && !m, !(ab & ~sign), e == 0 && m,
                                 e == emax && m, FP_SNAN(ab));
        return 0;
    }
    case F_EQ:
    case F_LT:
    case F_LE: {
        bool nan = isnan(a) || isnan(b);
        if (d->fop == F_EQ ? (FP_SNAN(ab) || FP_SNAN(bb)) : nan)
            *fl |= FF_NV;
        h->x[d->rd] = nan ? 0 : d->fop == F_EQ ? a == b : d->fop == F_LT ? a < b : a <= b;
        return 0;
    }
    default:
        return 2 + 1;
    }
    h->f[d->rd] = FP_BOX | rb;
    return 0;
}

#undef FP_NAME
#undef FP_T
#undef FP_U
#undef FP_EXP
#undef FP_MANT
#undef FP_CNAN
#undef FP_BOX
#undef FP_READ
#undef FP_OF
#undef FP_BITS_OF
#undef FP_SNAN
#undef FP_SQRT
#undef FP_FMA
#undef FP_CVT_OTHER
#undef FP_MV_X
