/* SPDX-License-Identifier: BSD-2-Clause */
/* F and D extensions on the host FPU: IEEE 754 results with the instruction's rounding mode
 * (fenv), accrued exception flags, NaN-boxing of single values and the RISC-V canonical NaN
 * (unprivileged spec, "F" chapter: 11.2 fcsr, 11.3 NaN generation, 12.2 NaN boxing). */
#include <fenv.h>
#include <math.h>
#include <string.h>

#include "hart_internal.h"

#define CNAN_S 0x7fc00000u
#define CNAN_D 0x7ff8000000000000ull
#define BOX 0xffffffff00000000ull
#define MS_FS (3ull << 13)

enum { FF_NX = 1, FF_UF = 2, FF_OF = 4, FF_DZ = 8, FF_NV = 16 };

static float f_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static uint32_t b_of_f(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}
static double d_of(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return d;
}
static uint64_t b_of_d(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

/* A single-precision operand must be NaN-boxed; otherwise it reads as the canonical NaN. */
static uint32_t get_s(const hart *h, unsigned r)
{
    return (h->f[r] & BOX) == BOX ? (uint32_t)h->f[r] : CNAN_S;
}

static bool snan_s(uint32_t b)
{
    return (b & 0x7fc00000u) == 0x7f800000u && (b & 0x003fffffu);
}
static bool snan_d(uint64_t b)
{
    return (b & 0x7ff8000000000000ull) == 0x7ff0000000000000ull && (b & 0x0007ffffffffffffull);
}

static int host_mode(unsigned rm)
{
    switch (rm) {
    case 1:
        return FE_TOWARDZERO;
    case 2:
        return FE_DOWNWARD;
    case 3:
        return FE_UPWARD;
    default:
        return FE_TONEAREST;
    }
}

static uint32_t host_flags(void)
{
    int e = fetestexcept(FE_ALL_EXCEPT);
    uint32_t f = 0;
    if (e & FE_INEXACT)
        f |= FF_NX;
    if (e & FE_UNDERFLOW)
        f |= FF_UF;
    if (e & FE_OVERFLOW)
        f |= FF_OF;
    if (e & FE_DIVBYZERO)
        f |= FF_DZ;
    if (e & FE_INVALID)
        f |= FF_NV;
    return f;
}

static unsigned class_bits(bool neg, bool inf, bool zero, bool sub, bool nan, bool snan)
{
    if (nan)
        return snan ? 1u << 8 : 1u << 9;
    if (inf)
        return neg ? 1u << 0 : 1u << 7;
    if (zero)
        return neg ? 1u << 3 : 1u << 4;
    if (sub)
        return neg ? 1u << 2 : 1u << 5;
    return neg ? 1u << 1 : 1u << 6;
}

/* Round x to an integer in rounding mode rm (RMM included), without touching fenv. */
static double round_rm(double x, unsigned rm)
{
    switch (rm) {
    case 1:
        return trunc(x);
    case 2:
        return floor(x);
    case 3:
        return ceil(x);
    case 4:
        return round(x);
    default:
        return nearbyint(x); /* the host default is round-to-nearest-even */
    }
}

/* fcvt to integer: saturate and raise NV out of range or on NaN (spec table 11.4). */
static uint64_t cvt_to_int(double x, unsigned fop, unsigned rm, uint32_t *fl)
{
    double r;
    if (isnan(x)) {
        *fl |= FF_NV;
        switch (fop) {
        case F_CVT_W:
            return (uint64_t)(int64_t)INT32_MAX;
        case F_CVT_WU:
            return UINT64_MAX; /* 0xffffffff sign-extended */
        case F_CVT_L:
            return (uint64_t)INT64_MAX;
        default:
            return UINT64_MAX;
        }
    }
    r = round_rm(x, rm);
    switch (fop) {
    case F_CVT_W:
        if (r < -2147483648.0 || r > 2147483647.0) {
            *fl |= FF_NV;
            return r < 0 ? (uint64_t)(int64_t)INT32_MIN : (uint64_t)(int64_t)INT32_MAX;
        }
        if (r != x)
            *fl |= FF_NX;
        return (uint64_t)(int64_t)(int32_t)r;
    case F_CVT_WU:
        if (r < 0.0 || r > 4294967295.0) {
            *fl |= FF_NV;
            return r < 0 ? 0 : UINT64_MAX;
        }
        if (r != x)
            *fl |= FF_NX;
        return (uint64_t)(int64_t)(int32_t)(uint32_t)r;
    case F_CVT_L:
        if (r < -9223372036854775808.0 || r >= 9223372036854775808.0) {
            *fl |= FF_NV;
            return r < 0 ? (uint64_t)INT64_MIN : (uint64_t)INT64_MAX;
        }
        if (r != x)
            *fl |= FF_NX;
        return (uint64_t)(int64_t)r;
    default:
        if (r < 0.0 || r >= 18446744073709551616.0) {
            *fl |= FF_NV;
            return r < 0 ? 0 : UINT64_MAX;
        }
        if (r != x)
            *fl |= FF_NX;
        return (uint64_t)r;
    }
}

/* Single precision: everything through double is exact for the sign-magnitude operations;
 * arithmetic uses float so that rounding happens once. */
static int exec_s(hart *h, const hinsn *d, unsigned rm, uint32_t *fl)
{
    uint32_t ab = get_s(h, d->rs1), bb = get_s(h, d->rs2), cb = get_s(h, d->rs3);
    volatile float a = f_of(ab), b = f_of(bb), c = f_of(cb);
    volatile float r = 0;
    uint32_t rb;
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
        r = sqrtf(a);
        break;
    case F_MADD:
    case F_MSUB:
    case F_NMSUB:
    case F_NMADD: {
        float x = d->fop >= F_NMSUB ? -a : a;
        float z = (d->fop == F_MSUB || d->fop == F_NMADD) ? -c : c;
        if ((isinf(a) && b == 0) || (a == 0 && isinf(b)))
            *fl |= FF_NV; /* even with a quiet NaN addend */
        r = fmaf(x, b, z);
        break;
    }
    case F_CVT_SD: { /* fcvt.s.d */
        volatile double src = d_of(h->f[d->rs1]);
        r = (float)src;
        break;
    }
    default:
        is_arith = false;
        break;
    }
    if (is_arith) {
        rb = b_of_f(r);
        if (isnan(r))
            rb = CNAN_S;
        h->f[d->rd] = BOX | rb;
        return 0;
    }
    switch (d->fop) {
    case F_SGNJ:
        rb = (ab & 0x7fffffffu) | (bb & 0x80000000u);
        break;
    case F_SGNJN:
        rb = (ab & 0x7fffffffu) | (~bb & 0x80000000u);
        break;
    case F_SGNJX:
        rb = ab ^ (bb & 0x80000000u);
        break;
    case F_MIN:
    case F_MAX: {
        bool an = isnan(a), bn = isnan(b);
        if (snan_s(ab) || snan_s(bb))
            *fl |= FF_NV;
        if (an && bn)
            rb = CNAN_S;
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
        r = (float)(int32_t)h->x[d->rs1];
        rb = b_of_f(r);
        break;
    case F_CVT_FROM_WU:
        r = (float)(uint32_t)h->x[d->rs1];
        rb = b_of_f(r);
        break;
    case F_CVT_FROM_L:
        r = (float)(int64_t)h->x[d->rs1];
        rb = b_of_f(r);
        break;
    case F_CVT_FROM_LU:
        r = (float)(uint64_t)h->x[d->rs1];
        rb = b_of_f(r);
        break;
    case F_MV_F:
        rb = (uint32_t)h->x[d->rs1];
        break;
    case F_CVT_W:
    case F_CVT_WU:
    case F_CVT_L:
    case F_CVT_LU:
        h->x[d->rd] = cvt_to_int((double)a, d->fop, rm, fl);
        return 0;
    case F_MV_X:
        h->x[d->rd] = (uint64_t)(int64_t)(int32_t)(uint32_t)h->f[d->rs1];
        return 0;
    case F_CLASS: {
        unsigned e = (ab >> 23) & 0xffu;
        h->x[d->rd] =
            class_bits(ab >> 31, e == 0xff && !(ab & 0x7fffffu), !(ab & 0x7fffffffu),
                       e == 0 && (ab & 0x7fffffu), e == 0xff && (ab & 0x7fffffu), snan_s(ab));
        return 0;
    }
    case F_EQ:
    case F_LT:
    case F_LE: {
        bool nan = isnan(a) || isnan(b);
        if (d->fop == F_EQ ? (snan_s(ab) || snan_s(bb)) : nan)
            *fl |= FF_NV;
        h->x[d->rd] = nan ? 0 : d->fop == F_EQ ? a == b : d->fop == F_LT ? a < b : a <= b;
        return 0;
    }
    default:
        return 2 + 1;
    }
    h->f[d->rd] = BOX | rb;
    return 0;
}

static int exec_d(hart *h, const hinsn *d, unsigned rm, uint32_t *fl)
{
    uint64_t ab = h->f[d->rs1], bb = h->f[d->rs2], cb = h->f[d->rs3];
    volatile double a = d_of(ab), b = d_of(bb), c = d_of(cb);
    volatile double r = 0;
    uint64_t rb;
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
        r = sqrt(a);
        break;
    case F_MADD:
    case F_MSUB:
    case F_NMSUB:
    case F_NMADD: {
        double x = d->fop >= F_NMSUB ? -a : a;
        double z = (d->fop == F_MSUB || d->fop == F_NMADD) ? -c : c;
        if ((isinf(a) && b == 0) || (a == 0 && isinf(b)))
            *fl |= FF_NV;
        r = fma(x, b, z);
        break;
    }
    case F_CVT_SD: { /* fcvt.d.s */
        volatile float src = f_of(get_s(h, d->rs1));
        r = (double)src;
        break;
    }
    default:
        is_arith = false;
        break;
    }
    if (is_arith) {
        rb = b_of_d(r);
        if (isnan(r))
            rb = CNAN_D;
        h->f[d->rd] = rb;
        return 0;
    }
    switch (d->fop) {
    case F_SGNJ:
        rb = (ab & ~(1ull << 63)) | (bb & (1ull << 63));
        break;
    case F_SGNJN:
        rb = (ab & ~(1ull << 63)) | (~bb & (1ull << 63));
        break;
    case F_SGNJX:
        rb = ab ^ (bb & (1ull << 63));
        break;
    case F_MIN:
    case F_MAX: {
        bool an = isnan(a), bn = isnan(b);
        if (snan_d(ab) || snan_d(bb))
            *fl |= FF_NV;
        if (an && bn)
            rb = CNAN_D;
        else if (an)
            rb = bb;
        else if (bn)
            rb = ab;
        else if (a == b)
            rb = d->fop == F_MIN ? (ab | bb) : (ab & bb);
        else
            rb = ((a < b) == (d->fop == F_MIN)) ? ab : bb;
        break;
    }
    case F_CVT_FROM_W:
        r = (double)(int32_t)h->x[d->rs1];
        rb = b_of_d(r);
        break;
    case F_CVT_FROM_WU:
        r = (double)(uint32_t)h->x[d->rs1];
        rb = b_of_d(r);
        break;
    case F_CVT_FROM_L:
        r = (double)(int64_t)h->x[d->rs1];
        rb = b_of_d(r);
        break;
    case F_CVT_FROM_LU:
        r = (double)(uint64_t)h->x[d->rs1];
        rb = b_of_d(r);
        break;
    case F_MV_F:
        rb = h->x[d->rs1];
        break;
    case F_CVT_W:
    case F_CVT_WU:
    case F_CVT_L:
    case F_CVT_LU:
        h->x[d->rd] = cvt_to_int(a, d->fop, rm, fl);
        return 0;
    case F_MV_X:
        h->x[d->rd] = ab;
        return 0;
    case F_CLASS: {
        unsigned e = (unsigned)(ab >> 52) & 0x7ffu;
        uint64_t m = ab & 0x000fffffffffffffull;
        h->x[d->rd] = class_bits(ab >> 63, e == 0x7ff && !m, !(ab << 1), e == 0 && m,
                                 e == 0x7ff && m, snan_d(ab));
        return 0;
    }
    case F_EQ:
    case F_LT:
    case F_LE: {
        bool nan = isnan(a) || isnan(b);
        if (d->fop == F_EQ ? (snan_d(ab) || snan_d(bb)) : nan)
            *fl |= FF_NV;
        h->x[d->rd] = nan ? 0 : d->fop == F_EQ ? a == b : d->fop == F_LT ? a < b : a <= b;
        return 0;
    }
    default:
        return 2 + 1;
    }
    h->f[d->rd] = rb;
    return 0;
}

/* Operations whose result depends on the rounding mode. */
static bool rounds(unsigned fop)
{
    switch (fop) {
    case F_ADD:
    case F_SUB:
    case F_MUL:
    case F_DIV:
    case F_SQRT:
    case F_MADD:
    case F_MSUB:
    case F_NMSUB:
    case F_NMADD:
    case F_CVT_SD:
    case F_CVT_FROM_W:
    case F_CVT_FROM_WU:
    case F_CVT_FROM_L:
    case F_CVT_FROM_LU:
    case F_CVT_W:
    case F_CVT_WU:
    case F_CVT_L:
    case F_CVT_LU:
        return true;
    default:
        return false;
    }
}

int tk__fp_exec(hart *h, const hinsn *d)
{
    unsigned rm = d->rm == 7 ? h->frm : d->rm;
    uint32_t fl = 0;
    int mode = FE_TONEAREST;
    int rc;
    bool to_int = d->fop >= F_CVT_W && d->fop <= F_CVT_LU;
    bool writes_x = to_int || d->fop == F_MV_X || d->fop == F_CLASS || d->fop == F_EQ ||
                    d->fop == F_LT || d->fop == F_LE;
    if ((h->mstatus & MS_FS) == 0)
        return 2 + 1;
    if (rounds(d->fop)) {
        if (rm > 4)
            return 2 + 1; /* reserved rounding mode: illegal instruction */
        if (rm == 4 && !to_int)
            return -1; /* RMM for arithmetic has no host equivalent: stop */
        mode = host_mode(rm);
    }
    if (mode != FE_TONEAREST)
        fesetround(mode);
    feclearexcept(FE_ALL_EXCEPT);
    rc = d->fmt ? exec_d(h, d, rm, &fl) : exec_s(h, d, rm, &fl);
    if (!to_int)
        fl |= host_flags();
    else
        fl |= host_flags() & FF_NV; /* the conversion computes NX itself */
    if (mode != FE_TONEAREST)
        fesetround(FE_TONEAREST);
    if (rc)
        return rc;
    h->fflags |= fl;
    if (writes_x) {
        if (h->xlen == 32)
            h->x[d->rd] = (uint64_t)(int64_t)(int32_t)h->x[d->rd];
        h->x[0] = 0;
    }
    h->mstatus |= MS_FS; /* Dirty */
    return 0;
}
