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

/* One instruction of either precision: fpu_prec.h is the body, written once for a type
 * and included twice. Single-precision operands are NaN-boxed in f[] (get_s); arithmetic
 * uses the operand type itself so that rounding happens once. */
#define FP_NAME exec_s
#define FP_T float
#define FP_U uint32_t
#define FP_EXP 8
#define FP_MANT 23
#define FP_CNAN CNAN_S
#define FP_BOX BOX
#define FP_READ(r) get_s(h, r)
#define FP_OF f_of
#define FP_BITS_OF b_of_f
#define FP_SNAN snan_s
#define FP_SQRT sqrtf
#define FP_FMA fmaf
/* fcvt.s.d reads a double; fmv.x.w takes f[rs1]'s low bits, boxed or not, sign-extended */
#define FP_CVT_OTHER d_of(h->f[d->rs1])
#define FP_MV_X (uint64_t)(int64_t)(int32_t)(uint32_t)h->f[d->rs1]
#include "fpu_prec.h"

#define FP_NAME exec_d
#define FP_T double
#define FP_U uint64_t
#define FP_EXP 11
#define FP_MANT 52
#define FP_CNAN CNAN_D
#define FP_BOX 0
#define FP_READ(r) h->f[r]
#define FP_OF d_of
#define FP_BITS_OF b_of_d
#define FP_SNAN snan_d
#define FP_SQRT sqrt
#define FP_FMA fma
#define FP_CVT_OTHER f_of(get_s(h, d->rs1))
#define FP_MV_X h->f[d->rs1]
#include "fpu_prec.h"

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
