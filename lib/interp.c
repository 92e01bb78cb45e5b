/* interp.c — the reference interpreter (interp.h).
 *
 * Every reachable IR value is materialized as a dense array: doubles for
 * float dtypes, int64 for bool and integers (wrapped to the dtype after
 * each operation).  A value's array is freed after its last use.  The
 * element semantics follow doc/language.md §6-§10; each rule sits in one small
 * function below.
 *
 * Exactness (interp.h, "Steps") is kept per element, not per IR value: a
 * step function of a computed argument is exact wherever the argument is
 * not within its tolerance of a step (round(x / s) is then the very integer
 * a GPU computes, and i8() of it must still be compared), and ambiguous
 * only at the few elements that are; a per-value flag would have to call
 * every element of round(x / s) inexact and waive the whole of i8() of it.
 * Tensor.x holds the flag: for a float, "a correct evaluation computes
 * exactly this value"; for an integer or bool, "certain" (not exact:
 * uncertain, no bound). */
#include "interp.h"

#include "fold.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Tensor {
  int rank;
  int64_t dims[TECC_MAX_RANK];
  int64_t n;
  double *f;  /* float dtypes */
  int64_t *i; /* bool and integer dtypes */
  double *m;  /* float dtypes, when magnitudes are wanted: each value's
                 magnitude bound (interp.h) */
  unsigned char *x; /* every dtype, when magnitudes are wanted: 1 where the
                       element is exact (below), 0 where it is not */
} Tensor;

typedef struct Interp {
  const Kernel *k;
  const int64_t *sizes;
  Tensor *vals;   /* by value id */
  char *live;     /* reachable from an output */
  int *last_use;  /* id of the last reader (INT_MAX for outputs) */
  int status;
  int want_mag;   /* compute Tensor.m beside every float value */
} Interp;

/* ---- dtypes and storage ------------------------------------------------ */

static int is_float(DType t) { return dtype_is_float(t); }

static int64_t wrap(DType t, int64_t v) { return fold_wrap(t, v); }

/* Rounds x to a binary format with p significant bits whose smallest normal
 * exponent is emin and largest finite value is maxval (ties to even). */
static double round_format(double x, int p, int emin, double maxval) {
  if (!isfinite(x) || x == 0)
    return x;
  int e;
  frexp(x, &e);
  int lead = e - 1 < emin ? emin : e - 1;
  double quantum = ldexp(1.0, lead - (p - 1));
  double r = nearbyint(x / quantum) * quantum;
  if (fabs(r) > maxval)
    return copysign(INFINITY, x);
  return r;
}

double interp_round_f16(double x) { return round_format(x, 11, -14, 65504.0); }

double interp_round_bf16(double x) {
  return round_format(x, 8, -126, ldexp(255.0, 120));
}

static double round_to(DType t, double x) {
  switch (t) {
  case DT_F16: return interp_round_f16(x);
  case DT_BF16: return interp_round_bf16(x);
  case DT_F8E4M3:
  case DT_F8E5M2: return fold_round(t, x);
  case DT_F32: return (double)(float)x;
  default: return x;
  }
}

/* Encodes an already-rounded value of a format with `mbits` stored mantissa
 * bits, `ebits` exponent bits and the sign above them.  A 16-bit NaN is the
 * canonical quiet one; an 8-bit NaN keeps its sign, as PyTorch's casts do
 * (e4m3's NaN is the all-ones code: float8_e4m3fn has no infinity). */
static uint16_t encode16(double r, int mbits, int ebits) {
  int bias = (1 << (ebits - 1)) - 1;
  uint16_t sign = signbit(r) ? (uint16_t)(1u << (mbits + ebits)) : 0;
  uint16_t expmask = (uint16_t)(((1u << ebits) - 1) << mbits);
  if (isnan(r) && mbits + ebits == 7)
    return sign | expmask | (uint16_t)((1u << mbits) - 1);
  if (isnan(r))
    return (uint16_t)(expmask | (1u << (mbits - 1)));
  if (isinf(r))
    return sign | expmask;
  if (r == 0)
    return sign;
  int e;
  double m = frexp(fabs(r), &e); /* r = m * 2^e, m in [0.5, 1) */
  int biased = e - 1 + bias;
  if (biased <= 0) /* subnormal: r / 2^(1 - bias - mbits) */
    return sign | (uint16_t)ldexp(fabs(r), bias - 1 + mbits);
  uint16_t mant = (uint16_t)(ldexp(m, mbits + 1) - ldexp(1.0, mbits));
  return sign | (uint16_t)((unsigned)biased << mbits) | mant;
}

/* finite_only: e4m3fn, whose all-ones exponent holds numbers but for the
 * NaN code. */
static double decode16(uint16_t bits, int mbits, int ebits, int finite_only) {
  int bias = (1 << (ebits - 1)) - 1;
  int e = (bits >> mbits) & ((1 << ebits) - 1);
  int mant = bits & ((1 << mbits) - 1);
  double sign = (bits >> (mbits + ebits)) & 1 ? -1.0 : 1.0;
  if (finite_only && e == (1 << ebits) - 1 && mant == (1 << mbits) - 1)
    return NAN;
  if (!finite_only && e == (1 << ebits) - 1)
    return mant ? NAN : sign * INFINITY;
  if (e == 0)
    return sign * ldexp((double)mant, 1 - bias - mbits);
  return sign * ldexp((double)(mant | (1 << mbits)), e - bias - mbits);
}

uint16_t interp_f16_bits(double x) { return encode16(interp_round_f16(x), 10, 5); }
uint16_t interp_bf16_bits(double x) { return encode16(interp_round_bf16(x), 7, 8); }
double interp_f16_value(uint16_t bits) { return decode16(bits, 10, 5, 0); }
double interp_bf16_value(uint16_t bits) { return decode16(bits, 7, 8, 0); }
uint8_t interp_f8_bits(DType t, double x) {
  return t == DT_F8E4M3 ? (uint8_t)encode16(fold_round(t, x), 3, 4)
                        : (uint8_t)encode16(fold_round(t, x), 2, 5);
}
double interp_f8_value(DType t, uint8_t bits) {
  return t == DT_F8E4M3 ? decode16(bits, 3, 4, 1) : decode16(bits, 2, 5, 0);
}

/* Float to integer: truncate toward zero, saturate, NaN -> 0. */
static int64_t float_to_int(DType t, double x) {
  if (t == DT_BOOL)
    return x != 0;
  return fold_cast(DT_F64, (Scalar){.f = x}, t).i;
}

static int64_t load_int(DType t, const void *buf, int64_t i) {
  switch (t) {
  case DT_BOOL: return ((const uint8_t *)buf)[i] != 0;
  case DT_I8: return ((const int8_t *)buf)[i];
  case DT_U8: return ((const uint8_t *)buf)[i];
  case DT_I32: return ((const int32_t *)buf)[i];
  case DT_I64: return ((const int64_t *)buf)[i];
  default: return float_to_int(DT_I64, interp_load(t, buf, i));
  }
}

double interp_load(DType t, const void *buf, int64_t i) {
  switch (t) {
  case DT_F16: return interp_f16_value(((const uint16_t *)buf)[i]);
  case DT_BF16: return interp_bf16_value(((const uint16_t *)buf)[i]);
  case DT_F8E4M3:
  case DT_F8E5M2: return interp_f8_value(t, ((const uint8_t *)buf)[i]);
  case DT_F32: return ((const float *)buf)[i];
  case DT_F64: return ((const double *)buf)[i];
  default: return (double)load_int(t, buf, i);
  }
}

static void store_int(DType t, void *buf, int64_t i, int64_t v) {
  switch (t) {
  case DT_BOOL: ((uint8_t *)buf)[i] = v != 0; break;
  case DT_I8: ((int8_t *)buf)[i] = (int8_t)wrap(DT_I8, v); break;
  case DT_U8: ((uint8_t *)buf)[i] = (uint8_t)wrap(DT_U8, v); break;
  case DT_I32: ((int32_t *)buf)[i] = (int32_t)wrap(DT_I32, v); break;
  case DT_I64: ((int64_t *)buf)[i] = v; break;
  default: interp_store(t, buf, i, (double)v); break;
  }
}

void interp_store(DType t, void *buf, int64_t i, double x) {
  switch (t) {
  case DT_F16: ((uint16_t *)buf)[i] = interp_f16_bits(x); break;
  case DT_BF16: ((uint16_t *)buf)[i] = interp_bf16_bits(x); break;
  case DT_F8E4M3:
  case DT_F8E5M2: ((uint8_t *)buf)[i] = interp_f8_bits(t, x); break;
  case DT_F32: ((float *)buf)[i] = (float)x; break;
  case DT_F64: ((double *)buf)[i] = x; break;
  default: store_int(t, buf, i, float_to_int(t, x)); break;
  }
}

/* ---- shapes ------------------------------------------------------------- */

int64_t interp_dim(const Dim *d, const int64_t *sizes) {
  return d->var < 0 ? d->size : sizes[d->var];
}

int64_t interp_numel(const Shape *s, const int64_t *sizes) {
  int64_t n = 1;
  int zero = 0;
  for (int a = 0; a < s->rank; a++) {
    int64_t d = interp_dim(&s->d[a], sizes);
    if (d < 0)
      return -1;
    if (d == 0)
      zero = 1;
    else if (n > INT64_MAX / d)
      n = -1;
    else if (n >= 0)
      n *= d;
  }
  return zero ? 0 : n;
}

/* ---- element operations ------------------------------------------------- */

static double sigmoid(double x) {
  if (x >= 0)
    return 1 / (1 + exp(-x));
  double e = exp(x);
  return e / (1 + e);
}

static double softplus(double x) {
  return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static double sign_f(double x) {
  if (isnan(x))
    return x;
  return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
}

static double unary_float(UnaryOp op, double x) {
  switch (op) {
  case UN_ABS: return fabs(x);
  case UN_EXP: return exp(x);
  case UN_EXP2: return exp2(x);
  case UN_EXPM1: return expm1(x);
  case UN_LOG: return log(x);
  case UN_LOG2: return log2(x);
  case UN_LOG10: return log10(x);
  case UN_LOG1P: return log1p(x);
  case UN_SQRT: return sqrt(x);
  case UN_RSQRT: return 1 / sqrt(x);
  case UN_SIN: return sin(x);
  case UN_COS: return cos(x);
  case UN_TAN: return tan(x);
  case UN_ASIN: return asin(x);
  case UN_ACOS: return acos(x);
  case UN_ATAN: return atan(x);
  case UN_SINH: return sinh(x);
  case UN_COSH: return cosh(x);
  case UN_TANH: return tanh(x);
  case UN_ERF: return erf(x);
  case UN_SIGMOID: return sigmoid(x);
  case UN_RELU: return isnan(x) ? x : x > 0 ? x : 0.0;
  case UN_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
  case UN_NORMCDF: return 0.5 * erfc(-x / sqrt(2.0));
  case UN_GELU_TANH:
    return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  case UN_SILU: return x * sigmoid(x);
  case UN_SOFTPLUS: return softplus(x);
  case UN_FLOOR: return floor(x);
  case UN_CEIL: return ceil(x);
  case UN_ROUND: return nearbyint(x); /* default mode: half to even */
  case UN_TRUNC: return trunc(x);
  case UN_SIGN: return sign_f(x);
  case UN_NEG: return -x;
  default: internal_error("interp: unary %d on a float", (int)op);
  }
}

static int64_t unary_int(UnaryOp op, DType t, int64_t x) {
  switch (op) {
  case UN_ABS: return wrap(t, x < 0 ? (int64_t)(0 - (uint64_t)x) : x);
  case UN_RELU: return x > 0 ? x : 0;
  case UN_SIGN: return x > 0 ? 1 : x < 0 ? -1 : 0;
  case UN_NEG: return wrap(t, (int64_t)(0 - (uint64_t)x));
  case UN_NOT: return !x;
  case UN_FLOOR: case UN_CEIL: case UN_ROUND: case UN_TRUNC: return x;
  default: internal_error("interp: unary %d on an integer", (int)op);
  }
}

static int64_t predicate(UnaryOp op, double x) {
  switch (op) {
  case UN_ISNAN: return isnan(x);
  case UN_ISINF: return isinf(x);
  case UN_ISFINITE: return isfinite(x);
  default: internal_error("interp: predicate %d", (int)op);
  }
}

/* Python's float divmod (CPython float_divmod); by zero as numpy: a/b and
 * NaN. */
static void float_divmod(double a, double b, double *q, double *r) {
  if (b == 0) {
    *q = a / b;
    *r = fmod(a, b);
    return;
  }
  double mod = fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = copysign(0.0, b);
  }
  double fl;
  if (div != 0) {
    fl = floor(div);
    if (div - fl > 0.5)
      fl += 1.0;
  } else {
    fl = copysign(0.0, a / b);
  }
  *q = fl;
  *r = mod;
}

static double binary_float(BinaryOp op, double a, double b) {
  double q, r;
  switch (op) {
  case BIN_ADD: return a + b;
  case BIN_SUB: return a - b;
  case BIN_MUL: return a * b;
  case BIN_DIV: return a / b;
  case BIN_FLOORDIV: float_divmod(a, b, &q, &r); return q;
  case BIN_MOD: float_divmod(a, b, &q, &r); return r;
  case BIN_POW: return pow(a, b);
  case BIN_MAXIMUM: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
  case BIN_MINIMUM: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
  case BIN_ATAN2: return atan2(a, b);
  default: internal_error("interp: binary %d on floats", (int)op);
  }
}

static int64_t int_floordiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0)))
    q--;
  return q;
}

static int64_t int_mod(int64_t a, int64_t b) {
  if (b == 0 || b == -1)
    return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

/* Exact integer power, wrapping; a negative exponent gives 0 unless the
 * base is 1 or -1. */
static int64_t int_pow(int64_t base, int64_t e) {
  if (e < 0)
    return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t r = 1, b = (uint64_t)base;
  for (; e; e >>= 1) {
    if (e & 1)
      r *= b;
    b *= b;
  }
  return (int64_t)r;
}

static int64_t binary_int(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
  case BIN_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
  case BIN_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
  case BIN_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
  case BIN_FLOORDIV: return int_floordiv(a, b);
  case BIN_MOD: return int_mod(a, b);
  case BIN_POW: return int_pow(a, b);
  case BIN_MAXIMUM: return a > b ? a : b;
  case BIN_MINIMUM: return a < b ? a : b;
  case BIN_AND: return a && b;
  case BIN_OR: return a || b;
  default: internal_error("interp: binary %d on integers", (int)op);
  }
}

static int compare_float(BinaryOp op, double a, double b) {
  switch (op) {
  case BIN_EQ: return a == b;
  case BIN_NE: return a != b;
  case BIN_LT: return a < b;
  case BIN_LE: return a <= b;
  case BIN_GT: return a > b;
  case BIN_GE: return a >= b;
  default: internal_error("interp: comparison %d", (int)op);
  }
}

static int compare_int(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
  case BIN_EQ: return a == b;
  case BIN_NE: return a != b;
  case BIN_LT: return a < b;
  case BIN_LE: return a <= b;
  case BIN_GT: return a > b;
  case BIN_GE: return a >= b;
  default: internal_error("interp: comparison %d", (int)op);
  }
}

static int is_comparison(BinaryOp op) {
  return op == BIN_EQ || op == BIN_NE || op == BIN_LT || op == BIN_LE ||
         op == BIN_GT || op == BIN_GE;
}

/* ---- magnitude bounds (interp.h) ---------------------------------------- */

/* A product of magnitudes where an exact zero wins over infinity: a value
 * whose bound is 0 is exact, and so is its product with anything finite. */
static double mmul(double x, double y) { return x == 0 || y == 0 ? 0 : x * y; }

/* The last step of every rule: a NaN bound (inf * 0 and the like at a
 * singularity) or a non-finite value gives inf (no bound), and the bound is
 * never below the value's own magnitude. */
static double mag_finish(double f, double m) {
  if (isnan(m) || !isfinite(f))
    return INFINITY;
  return m > fabs(f) ? m : fabs(f);
}

/* A bound past the largest finite value of the arithmetic that computes a
 * value (f64 for f64, f32 for f32 and the 16-bit types, language.md) means
 * that a correct evaluation may overflow where the float64 reference does
 * not: an f32 sum of terms near 1e38 is inf, and whatever follows from it
 * (rsqrt(inf) = 0) has nothing to do with the reference.  No bound, then:
 * inf, as at a singularity. */
static double range_finish(DType arith, double m) {
  double top = arith == DT_F64 ? DBL_MAX : FLT_MAX;
  return m > top ? INFINITY : m;
}

/* |f'(x)| of a smooth unary f, with f = f(x) already computed. */
static double unary_slope(UnaryOp op, double x, double f) {
  const double two_over_sqrt_pi = 1.1283791670955126;
  const double inv_sqrt_2pi = 0.3989422804014327;
  switch (op) {
  case UN_EXP: return fabs(f);
  case UN_EXP2: return fabs(f) * M_LN2;
  case UN_EXPM1: return exp(x);
  case UN_LOG: return 1 / fabs(x);
  case UN_LOG2: return 1 / (fabs(x) * M_LN2);
  case UN_LOG10: return 1 / (fabs(x) * M_LN10);
  case UN_LOG1P: return 1 / fabs(1 + x);
  case UN_SQRT: return 0.5 / fabs(f);
  case UN_RSQRT: return 0.5 * fabs(f) / fabs(x);
  case UN_SIN: return fabs(cos(x));
  case UN_COS: return fabs(sin(x));
  case UN_TAN: return 1 + f * f;
  case UN_ASIN: case UN_ACOS: return 1 / sqrt(1 - x * x);
  case UN_ATAN: return 1 / (1 + x * x);
  case UN_SINH: return cosh(x);
  case UN_COSH: return fabs(sinh(x));
  case UN_TANH: return 1 - f * f;
  case UN_ERF: return two_over_sqrt_pi * exp(-x * x);
  case UN_SIGMOID: return f * (1 - f);
  case UN_NORMCDF: return inv_sqrt_2pi * exp(-0.5 * x * x);
  case UN_GELU:
    return fabs(0.5 * (1 + erf(x / sqrt(2.0))) + x * inv_sqrt_2pi * exp(-0.5 * x * x));
  case UN_GELU_TANH: {
    double c = sqrt(2 / M_PI), t = tanh(c * (x + 0.044715 * x * x * x));
    return fabs(0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x));
  }
  case UN_SILU: {
    double s = sigmoid(x);
    return fabs(s * (1 + x * (1 - s)));
  }
  case UN_SOFTPLUS: return sigmoid(x);
  default: internal_error("interp: no slope for unary %d", (int)op);
  }
}

/* The bound of f = op(x) from x and its bound mx. */
static double unary_mag(UnaryOp op, double x, double mx, double f) {
  switch (op) {
  case UN_ABS: case UN_NEG: case UN_RELU:
    return mx; /* exact */
  case UN_FLOOR: case UN_CEIL: case UN_ROUND: case UN_TRUNC:
    return mx; /* exact, but for the steps; mag_finish adds |f| */
  case UN_SIGN:
    return fabs(f);
  default:
    return fabs(f) + mmul(unary_slope(op, x, f), mx);
  }
}

/* The bound of f = a op b from the operands and their bounds. */
static double binary_mag(BinaryOp op, double a, double ma, double b, double mb,
                         double f) {
  double q, r;
  switch (op) {
  case BIN_ADD: case BIN_SUB: return ma + mb;
  case BIN_MUL: return mmul(ma, mb);
  case BIN_DIV: return (ma + mmul(fabs(f), mb)) / fabs(b);
  case BIN_FLOORDIV: return (ma + mmul(fabs(a / b), mb)) / fabs(b);
  case BIN_MOD: float_divmod(a, b, &q, &r); return ma + mmul(fabs(q), mb);
  case BIN_POW:
    return fabs(f) + mmul(fabs(b) * pow(fabs(a), b - 1), ma) +
           mmul(mmul(fabs(f), fabs(log(fabs(a)))), mb);
  case BIN_MAXIMUM: case BIN_MINIMUM: return ma > mb ? ma : mb;
  case BIN_ATAN2: {
    double num = mmul(fabs(b), ma) + mmul(fabs(a), mb);
    return fabs(f) + (num == 0 ? 0 : num / (a * a + b * b));
  }
  default: internal_error("interp: no bound for binary %d", (int)op);
  }
}

/* The factor of a sum of K terms: the depth of a pairwise tree, log2(K),
 * and 1 for one or two terms. */
static double sum_factor(int64_t count) { return count > 2 ? log2((double)count) : 1; }

/* ---- steps (interp.h) ---------------------------------------------------- */

typedef struct Tolerance {
  double atol, rtol;
} Tolerance;

/* abi.md §6's tolerance of the arithmetic that computes a value of dtype
 * t: f64's for f64, f32's for the rest (16- and 8-bit floats compute in
 * f32). */
static Tolerance arith_tolerance(DType t) {
  return t == DT_F64 ? (Tolerance){1e-12, 1e-12} : (Tolerance){1e-6, 1e-5};
}

/* How far a correct evaluation's value of a may lie from the reference's
 * a, its bound m: the tolerance of its arithmetic (arith_tolerance).  0
 * for an exact value, inf where there is no bound (an uncertain integer's
 * bound is inf: get_m). */
static double slack(DType t, double a, double m, int exact) {
  if (exact)
    return 0;
  if (isnan(a) || isnan(m) || isinf(m))
    return INFINITY;
  Tolerance tol = arith_tolerance(t);
  return tol.atol + tol.rtol * (fabs(a) + m);
}

/* a lies within s of the step at `step` (always, without a bound). */
static int within(double a, double step, double s) {
  return isinf(s) || fabs(a - step) <= s;
}

/* The steps of floor, ceil, round, trunc and sign: a correct evaluation of
 * an argument within s of one may land on either side.  An argument
 * without a bound may be anything, on any side of any step (trunc of one
 * that is 0 here too). */
static int unary_step_near(UnaryOp op, double a, double s) {
  if (isinf(s))
    return 1;
  switch (op) {
  case UN_FLOOR: case UN_CEIL: return within(a, nearbyint(a), s);
  case UN_TRUNC: return nearbyint(a) != 0 && within(a, nearbyint(a), s);
  case UN_ROUND: return within(a, floor(a) + 0.5, s);
  case UN_SIGN: return within(a, 0, s);
  default: return 0;
  }
}

static int is_step(UnaryOp op) {
  return op == UN_FLOOR || op == UN_CEIL || op == UN_ROUND || op == UN_TRUNC || op == UN_SIGN;
}

/* Float to dtype t (truncation toward zero): the steps are the nonzero
 * integers in t's range (saturation is continuous); to bool: 0. */
static int cast_step_near(DType t, double a, double s) {
  if (isinf(s) || t == DT_BOOL)
    return within(a, 0, s);
  double k = nearbyint(a);
  double lo = t == DT_I8 ? -128 : t == DT_U8 ? 0 : t == DT_I32 ? INT32_MIN : -0x1p63;
  double hi = t == DT_I8 ? 127 : t == DT_U8 ? 255 : t == DT_I32 ? INT32_MAX : 0x1p63;
  return k != 0 && k >= lo && k <= hi && within(a, k, s);
}

/* a // b and a % b jump where a / b passes an integer: a within sa + |k|
 * sb of k * b.  A non-finite quotient of a computed operand has no bound
 * (a sign, a zero divisor's side). */
static int divmod_step_near(double a, double sa, double b, double sb) {
  double q = a / b;
  if (!isfinite(q))
    return sa != 0 || sb != 0;
  double k = nearbyint(q);
  return isinf(sa) || isinf(sb) || fabs(a - k * b) <= sa + fabs(k) * sb;
}

/* a op b for a comparison op: either result, where a correct evaluation of
 * each may move it by its slack (an exact pair compares as it is). */
static int compare_near(double a, double sa, double b, double sb) {
  if (sa == 0 && sb == 0)
    return 0;
  return isinf(sa) || isinf(sb) || fabs(a - b) <= sa + sb;
}

/* ---- tensors ------------------------------------------------------------ */

static double get_f(const Tensor *t, int64_t i) {
  return t->f ? t->f[i] : (double)t->i[i];
}

static int64_t get_i(const Tensor *t, int64_t i) {
  return t->i ? t->i[i] : float_to_int(DT_I64, t->f[i]);
}

/* Element i is exact (for an integer or bool: certain); 1 when exactness
 * is not tracked. */
static int get_x(const Tensor *t, int64_t i) { return t->x ? t->x[i] : 1; }

/* The magnitude bound of element i; an integer or bool is exact, its own
 * magnitude, or without a bound (inf) where it is uncertain. */
static double get_m(const Tensor *t, int64_t i) {
  if (t->m)
    return t->m[i];
  return get_x(t, i) ? fabs(get_f(t, i)) : INFINITY;
}

/* The slack (above) of element i of operand `arg`, of value v. */
static double get_slack(const Value *v, int arg, const Tensor *t, int64_t i) {
  return slack(v->args[arg]->dtype, get_f(t, i), get_m(t, i), get_x(t, i));
}

static int tensor_alloc(Interp *in, Tensor *t, const Value *v) {
  t->rank = v->shape.rank;
  for (int a = 0; a < t->rank; a++)
    t->dims[a] = interp_dim(&v->shape.d[a], in->sizes);
  t->n = interp_numel(&v->shape, in->sizes);
  if (t->n < 0) {
    in->status = INTERP_INVALID_VALUE;
    return 0;
  }
  size_t n = t->n ? (size_t)t->n : 1;
  if (is_float(v->dtype))
    t->f = malloc(n * sizeof(double));
  else
    t->i = malloc(n * sizeof(int64_t));
  if (is_float(v->dtype) && in->want_mag)
    t->m = malloc(n * sizeof(double));
  if (in->want_mag && (t->x = malloc(n)) != NULL)
    memset(t->x, 1, n); /* inputs, constants, sizes, positions: exact */
  if ((!t->f && !t->i) || (in->want_mag && ((is_float(v->dtype) && !t->m) || !t->x))) {
    in->status = INTERP_OUT_OF_MEMORY;
    return 0;
  }
  return 1;
}

static void tensor_free(Tensor *t) {
  free(t->f);
  free(t->i);
  free(t->m);
  free(t->x);
  t->f = NULL;
  t->i = NULL;
  t->m = NULL;
  t->x = NULL;
}

/* Walks a multi-index over `dims` in row-major order, keeping up to two
 * linear offsets with per-axis strides. */
typedef struct Walk {
  int rank;
  const int64_t *dims;
  int64_t idx[TECC_MAX_RANK];
  int64_t stride[2][TECC_MAX_RANK];
  int64_t off[2];
} Walk;

static void walk_init(Walk *w, int rank, const int64_t *dims) {
  memset(w, 0, sizeof *w);
  w->rank = rank;
  w->dims = dims;
}

static void walk_step(Walk *w) {
  for (int a = w->rank - 1; a >= 0; a--) {
    w->idx[a]++;
    w->off[0] += w->stride[0][a];
    w->off[1] += w->stride[1][a];
    if (w->idx[a] < w->dims[a])
      return;
    w->off[0] -= w->stride[0][a] * w->dims[a];
    w->off[1] -= w->stride[1][a] * w->dims[a];
    w->idx[a] = 0;
  }
}

/* ---- value evaluation --------------------------------------------------- */

static void eval_input(Interp *in, const Value *v, Tensor *t,
                       const void *const *inputs) {
  const void *buf = inputs[v->index];
  for (int64_t i = 0; i < t->n; i++) {
    if (t->f)
      t->f[i] = interp_load(v->dtype, buf, i);
    else
      t->i[i] = load_int(v->dtype, buf, i);
    if (t->m)
      t->m[i] = mag_finish(t->f[i], fabs(t->f[i]));
  }
}

static void eval_const(const Value *v, Tensor *t) {
  if (t->f)
    t->f[0] = round_to(v->dtype, is_float(v->dtype) ? v->fval : (double)v->ival);
  else
    t->i[0] = wrap(v->dtype, v->ival);
  if (t->m)
    t->m[0] = mag_finish(t->f[0], fabs(t->f[0]));
}

/* A size variable's run-time value; a position along an axis (the
 * tensor is that axis's extent long: element i is i). */
static void eval_size(Interp *in, const Value *v, Tensor *t) {
  t->i[0] = in->sizes[v->index];
}

static void eval_index(Tensor *t) {
  for (int64_t i = 0; i < t->n; i++)
    t->i[i] = i;
}

/* The loaded element is exact where every index is certain; an uncertain
 * index may read another element: uncertain, no bound. */
static void take_exactness(Tensor *t, int64_t e, const Tensor *const *idx, int rank) {
  int certain = 1;
  for (int a = 0; a < rank; a++)
    certain &= !idx[a] || get_x(idx[a], e);
  t->x[e] = (unsigned char)certain;
  if (t->m)
    t->m[e] = certain ? mag_finish(t->f[e], fabs(t->f[e])) : INFINITY;
}

/* A gathered load (ir.h, IR_TAKE): each element reads input v->index at
 * its own position, except along the take's axes, where it reads at their
 * indices; an index outside its axis gives NaN, 0 or false. */
static void eval_take(Interp *in, const Value *v, Tensor *t, const void *const *inputs) {
  const KernelInput *src = &in->k->inputs[v->index];
  const int off = v->shape.rank - src->shape.rank;
  const Tensor *idx[TECC_MAX_RANK] = {0};
  int64_t sdim[TECC_MAX_RANK], pos[TECC_MAX_RANK] = {0};
  for (int a = 0; a < v->shape.rank; a++) {
    sdim[a] = a < off ? 1 : interp_dim(&src->shape.d[a - off], in->sizes);
    int j = ir_take_slot(v, a);
    idx[a] = j < 0 ? NULL : &in->vals[ir_take_index(v, j)->id];
  }
  for (int64_t e = 0; e < t->n; e++) {
    int64_t at = 0;
    int inside = 1;
    for (int a = 0; a < v->shape.rank; a++) {
      int64_t i = idx[a] ? idx[a]->i[e] : pos[a];
      inside &= !idx[a] || (i >= 0 && i < sdim[a]);
      at = at * sdim[a] + (sdim[a] == 1 || !inside ? 0 : i);
    }
    if (t->f)
      t->f[e] = inside ? interp_load(src->dtype, inputs[v->index], at) : NAN;
    else
      t->i[e] = inside ? load_int(src->dtype, inputs[v->index], at) : 0;
    if (t->x)
      take_exactness(t, e, idx, v->shape.rank);
    for (int a = v->shape.rank - 1; a >= 0 && ++pos[a] == t->dims[a]; a--)
      pos[a] = 0;
  }
}

/* A cast of an exact value is exact: a cast to a float rounds to nearest,
 * ties to even (the 8-bit ones through f32, as the interpreter does: doc/
 * language.md), one value for every correct evaluation, so i32(bf16(x) *
 * 4) of an input x stays compared.  Float to integer or bool is a step
 * (cast_step_near) unless the argument is exact. */
static int cast_exact(const Value *v, const Tensor *t, const Tensor *x, int64_t i) {
  if (t->f || !x->f || get_x(x, i))
    return get_x(x, i);
  return !cast_step_near(v->dtype, x->f[i], get_slack(v, 0, x, i));
}

static void eval_cast(const Value *v, Tensor *t, const Tensor *x) {
  for (int64_t i = 0; i < t->n; i++) {
    if (t->f)
      t->f[i] = round_to(v->dtype, get_f(x, i));
    else if (x->f)
      t->i[i] = float_to_int(v->dtype, x->f[i]);
    else
      t->i[i] = wrap(v->dtype, x->i[i]);
    if (t->m)
      t->m[i] = mag_finish(t->f[i], get_m(x, i));
    if (t->x)
      t->x[i] = (unsigned char)cast_exact(v, t, x, i);
  }
}

/* What an element is (interp.h, "Steps"): exact; not (a float with its
 * bound, an uncertain integer or bool); or a float step's result that may
 * be either side, which has no bound. */
typedef enum { INEXACT, EXACT, AMBIGUOUS } Exactness;

/* Element i's flag, and no bound where it is AMBIGUOUS. */
static void set_exactness(Tensor *t, int64_t i, Exactness e) {
  t->x[i] = e == EXACT;
  if (e == AMBIGUOUS && t->m)
    t->m[i] = INFINITY;
}

/* Element i of t = op(x): exact for abs, neg, relu and the integer ops of
 * an exact x; a step of an exact x, or of one off its steps (ambiguous
 * near one); a predicate of an exact x or of one with a bound (then
 * finite: only a value without one may be NaN or inf on one side and not
 * on the other). */
static Exactness unary_exactness(const Value *v, const Tensor *t, const Tensor *x, int64_t i) {
  UnaryOp op = v->uop;
  if (get_x(x, i))
    return !t->f || op == UN_ABS || op == UN_NEG || op == UN_RELU || is_step(op) ? EXACT : INEXACT;
  if (!t->f) /* a predicate (integer ops: uncertain x) */
    return x->f && !isinf(get_m(x, i)) ? EXACT : INEXACT;
  if (!is_step(op))
    return INEXACT;
  return unary_step_near(op, x->f[i], get_slack(v, 0, x, i)) ? AMBIGUOUS : EXACT;
}

static void eval_unary(const Value *v, Tensor *t, const Tensor *x) {
  UnaryOp op = v->uop;
  int pred = op == UN_ISNAN || op == UN_ISINF || op == UN_ISFINITE;
  for (int64_t i = 0; i < t->n; i++) {
    if (pred)
      t->i[i] = x->f ? predicate(op, x->f[i]) : op == UN_ISFINITE;
    else if (t->f)
      t->f[i] = unary_float(op, get_f(x, i));
    else
      t->i[i] = wrap(v->dtype, unary_int(op, v->dtype, x->i[i]));
    if (t->m)
      t->m[i] = range_finish(v->dtype, mag_finish(t->f[i], unary_mag(op, get_f(x, i),
                                                                      get_m(x, i), t->f[i])));
    if (t->x)
      set_exactness(t, i, unary_exactness(v, t, x, i));
  }
}

/* The rounding error of s = a + b, computed in f64 (Knuth's TwoSum). */
static double two_sum_error(double a, double b, double s) {
  double bb = s - a;
  return (a - (s - bb)) + (b - bb);
}

/* An add, sub or mul of exact operands whose true result the arithmetic
 * dtype t holds as a normal number (or 0), or a division of one by a power
 * of two whose true quotient it holds: nothing rounds, so every correct
 * evaluation (an FMA that fuses the product, x / 2^k as x * 2^-k, a GPU
 * that flushes subnormals) computes this very value.  x * 8 and
 * floor(x * 8) / 2 stay exact, and round() of them keeps its ties checked.
 * A division by anything else is not: a GPU may multiply by the rounded
 * reciprocal. */
static int arith_exact(BinaryOp op, DType t, double a, double b, double f) {
  if (!isfinite(a) || !isfinite(b))
    return 1; /* IEEE's own results: inf - inf is NaN everywhere */
  double tiny = t == DT_F64 ? DBL_MIN : FLT_MIN;
  if (!isfinite(f) || round_to(t, f) != f || (f != 0 && fabs(f) < tiny))
    return 0;
  int e;
  switch (op) {
  case BIN_ADD: return two_sum_error(a, b, f) == 0;
  case BIN_SUB: return two_sum_error(a, -b, f) == 0;
  case BIN_MUL: return fma(a, b, -f) == 0;
  case BIN_DIV: return fabs(frexp(b, &e)) == 0.5 && fma(f, b, -a) == 0;
  default: return 0;
  }
}

/* Element i of t = a op b: exact for an integer op or maximum/minimum of
 * exact operands; arithmetic of exact operands that does not round
 * (arith_exact); a comparison of an exact pair, or of a pair further apart
 * than their slacks; a float // of an exact pair or off its steps.  A // or
 * % of a computed operand near a step is ambiguous.  The rest round: not
 * exact (a % of an exact pair too: m + b may round). */
static Exactness binary_exactness(const Value *v, const Tensor *t, const Tensor *a, const Tensor *b,
                                  int64_t i) {
  BinaryOp op = v->bop;
  int both = get_x(a, i) && get_x(b, i), exact;
  if (is_comparison(op))
    exact = both || !compare_near(get_f(a, i), get_slack(v, 0, a, i), get_f(b, i), get_slack(v, 1, b, i));
  else if (!t->f || op == BIN_MAXIMUM || op == BIN_MINIMUM)
    exact = both;
  else if (op == BIN_ADD || op == BIN_SUB || op == BIN_MUL || op == BIN_DIV)
    exact = both && arith_exact(op, v->dtype, a->f[i], b->f[i], t->f[i]);
  else if (op != BIN_FLOORDIV && op != BIN_MOD)
    exact = 0;
  else if (!both && divmod_step_near(a->f[i], get_slack(v, 0, a, i), b->f[i], get_slack(v, 1, b, i)))
    return AMBIGUOUS;
  else
    exact = op == BIN_FLOORDIV;
  return exact ? EXACT : INEXACT;
}

static void eval_binary(const Value *v, Tensor *t, const Tensor *a,
                        const Tensor *b) {
  BinaryOp op = v->bop;
  int cmp = is_comparison(op);
  int fargs = a->f || b->f;
  for (int64_t i = 0; i < t->n; i++) {
    if (cmp && fargs)
      t->i[i] = compare_float(op, get_f(a, i), get_f(b, i));
    else if (cmp)
      t->i[i] = compare_int(op, a->i[i], b->i[i]);
    else if (t->f)
      t->f[i] = binary_float(op, get_f(a, i), get_f(b, i));
    else
      t->i[i] = wrap(v->dtype, binary_int(op, get_i(a, i), get_i(b, i)));
    if (t->m)
      t->m[i] = range_finish(v->dtype, mag_finish(t->f[i], binary_mag(op, get_f(a, i), get_m(a, i),
                                                                       get_f(b, i), get_m(b, i),
                                                                       t->f[i])));
    if (t->x)
      set_exactness(t, i, binary_exactness(v, t, a, b, i));
  }
}

/* Where the condition is uncertain, either branch may be taken.  Equal
 * branches give their common value (the larger bound, exact if both
 * are).  Float branches within their slacks of each other (a select that
 * is continuous where it switches, as pow's gradient's where(b == 0, 0,
 * ...) at b near 0) give the reference's branch, with a bound that holds
 * either: the difference is at most 2 atol + rtol (|a| + m(a) + |b| +
 * m(b)), inside atol + rtol (|ref| + 2 (m(a) + m(b)) + |a| + |b| + atol /
 * rtol).  Branches further apart: uncertain, without a bound.  A row
 * summed over such a select would otherwise lose its bound for one
 * switching element. */
static void select_uncertain(const Value *v, Tensor *t, const Tensor *a, const Tensor *b, int64_t i) {
  int same = t->f ? a->f[i] == b->f[i] : a->i[i] == b->i[i];
  t->x[i] = (unsigned char)(same && get_x(a, i) && get_x(b, i));
  if (!t->m)
    return;
  double ma = get_m(a, i), mb = get_m(b, i);
  if (same) {
    t->m[i] = ma > mb ? ma : mb;
    return;
  }
  double fa = get_f(a, i), fb = get_f(b, i);
  double sa = slack(v->dtype, fa, ma, get_x(a, i)), sb = slack(v->dtype, fb, mb, get_x(b, i));
  Tolerance tol = arith_tolerance(v->dtype);
  t->m[i] = isfinite(sa + sb) && fabs(fa - fb) <= sa + sb
                ? 2 * (ma + mb) + fabs(fa) + fabs(fb) + tol.atol / tol.rtol
                : INFINITY;
}

static void eval_select(const Value *v, Tensor *t, const Tensor *c, const Tensor *a,
                        const Tensor *b) {
  for (int64_t i = 0; i < t->n; i++) {
    const Tensor *s = c->i[i] ? a : b;
    if (t->f)
      t->f[i] = get_f(s, i);
    else
      t->i[i] = s->i[i];
    if (t->m)
      t->m[i] = get_m(s, i);
    if (t->x)
      t->x[i] = (unsigned char)get_x(s, i);
    if (t->x && !get_x(c, i))
      select_uncertain(v, t, a, b, i);
  }
}

static void eval_broadcast(Tensor *t, const Tensor *x) {
  Walk w;
  walk_init(&w, t->rank, t->dims);
  int64_t stride = 1;
  for (int a = x->rank - 1; a >= 0; a--) {
    int ta = a + t->rank - x->rank;
    w.stride[0][ta] = x->dims[a] == 1 ? 0 : stride;
    stride *= x->dims[a];
  }
  for (int64_t i = 0; i < t->n; i++, walk_step(&w)) {
    if (t->f)
      t->f[i] = get_f(x, w.off[0]);
    else
      t->i[i] = x->i[w.off[0]];
    if (t->m)
      t->m[i] = get_m(x, w.off[0]);
    if (t->x)
      t->x[i] = (unsigned char)get_x(x, w.off[0]);
  }
}

/* ---- reductions ----------------------------------------------------------- */

/* What decides whether a float sum or product of exact terms is exact in
 * every order a kernel may take (exact_terms_ok): for a sum, the sum of
 * the terms' magnitudes and the least exponent of their lowest bits; for a
 * product, the sums of log2|t| above and below 1 and the count of terms
 * that are not powers of two. */
typedef struct ExactTerms {
  double above, below;
  int64_t low_or_odd;
} ExactTerms;

/* Per output element: the accumulator, and for arg-reductions the best
 * index; count is the number of reduced elements per output element. */
typedef struct Reduce {
  ReduceOp op;
  DType in_type, out_type;
  int64_t count;
  long double *acc; /* float accumulators: long double sharpens the oracle */
  int64_t *iacc;
  int64_t *arg;
  double *macc;     /* float results, when magnitudes are wanted: the sum
                       (product, max) of the terms' bounds */
  double *mtop;     /* prod, with macc: the product of max(1, bound) of the
                       terms, a bound of every partial product */
  unsigned char *xacc; /* when magnitudes are wanted, for integer reductions,
                          max, min, argmax, argmin, and float sums, means and
                          products (with xf): the result is exact */
  double *bslack;   /* argmax/argmin, with xacc: the best term's slack */
  ExactTerms *xf;   /* float sum, mean, prod, with xacc (exact_terms_ok) */
} Reduce;

static double float_identity(ReduceOp op) {
  switch (op) {
  case RED_PROD: return 1;
  case RED_MAX: return -INFINITY;
  case RED_MIN: return INFINITY;
  default: return 0;
  }
}

static int64_t int_identity(ReduceOp op, DType t) {
  int64_t lo = t == DT_BOOL ? 0 : t == DT_I32 ? INT32_MIN : INT64_MIN;
  int64_t hi = t == DT_BOOL ? 1 : t == DT_I32 ? INT32_MAX : INT64_MAX;
  switch (op) {
  case RED_PROD: case RED_ALL: return 1;
  case RED_MAX: return lo;
  case RED_MIN: return hi;
  default: return 0;
  }
}

/* The bound accumulator of a float reduction: terms' bounds are summed
 * (sum, mean; var: the bound of (x - mean)^2), multiplied (prod) or their
 * largest kept (max, min).  mx is x's bound, mmean the mean's (var). */
static void acc_mag(Reduce *r, int64_t o, double mx, double mmean) {
  double *m = &r->macc[o];
  switch (r->op) {
  case RED_SUM: case RED_MEAN: *m += mx; break;
  case RED_VAR: *m += (mx + mmean) * (mx + mmean); break;
  case RED_PROD:
    *m = mmul(*m, mx);
    r->mtop[o] *= mx > 1 ? mx : 1;
    break;
  default: *m = mx > *m ? mx : *m; break; /* max, min */
  }
}

static void acc_float(Reduce *r, int64_t o, double x, long double mean) {
  long double *a = &r->acc[o];
  switch (r->op) {
  case RED_SUM: case RED_MEAN: *a += x; break;
  case RED_VAR: *a += (x - mean) * (x - mean); break;
  case RED_PROD: *a *= x; break;
  case RED_MAX: *a = isnan(*a) || isnan(x) ? NAN : x > *a ? (long double)x : *a; break;
  case RED_MIN: *a = isnan(*a) || isnan(x) ? NAN : x < *a ? (long double)x : *a; break;
  default: internal_error("interp: float reduction %d", (int)r->op);
  }
}

static void acc_int(Reduce *r, int64_t o, int64_t x) {
  int64_t *a = &r->iacc[o];
  switch (r->op) {
  case RED_SUM: *a = (int64_t)((uint64_t)*a + (uint64_t)x); break;
  case RED_PROD: *a = (int64_t)((uint64_t)*a * (uint64_t)x); break;
  case RED_MAX: *a = x > *a ? x : *a; break;
  case RED_MIN: *a = x < *a ? x : *a; break;
  case RED_ANY: *a = *a || x; break;
  case RED_ALL: *a = *a && x; break;
  default: internal_error("interp: integer reduction %d", (int)r->op);
  }
}

/* argmax/argmin: the first best index; a NaN wins and the first NaN
 * stays.  Returns whether x is the new best. */
static int acc_arg(Reduce *r, int64_t o, double x, int64_t pos) {
  long double *best = &r->acc[o];
  int first = r->arg[o] < 0;
  int better;
  if (first)
    better = 1;
  else if (isnan(*best))
    better = 0;
  else if (isnan(x))
    better = 1;
  else
    better = r->op == RED_ARGMAX ? x > *best : x < *best;
  if (better) {
    *best = x;
    r->arg[o] = pos;
  }
  return better;
}

/* acc_arg of term i of x, keeping the best's slack (arg_near_ties). */
static void acc_arg_term(Reduce *r, int64_t o, const Tensor *x, int64_t i, int64_t pos) {
  if (acc_arg(r, o, get_f(x, i), pos) && r->bslack)
    r->bslack[o] = slack(r->in_type, get_f(x, i), get_m(x, i), get_x(x, i));
}

static void reduce_walk_init(Walk *w, const Tensor *x, uint32_t axes) {
  walk_init(w, x->rank, x->dims);
  int64_t ostride = 1, rstride = 1;
  for (int a = x->rank - 1; a >= 0; a--) {
    if (axes & (1u << a)) {
      w->stride[1][a] = rstride;
      rstride *= x->dims[a];
    } else {
      w->stride[0][a] = ostride;
      ostride *= x->dims[a];
    }
  }
}

/* The exponent of x's lowest set bit (x a nonzero finite double: x is an
 * odd multiple of 2^e). */
static int lowest_bit(double x) {
  int e;
  double m = frexp(fabs(x), &e); /* 0.5 <= m < 1 */
  uint64_t bits = (uint64_t)ldexp(m, 53);
  int zeros = 0;
  while (!(bits & 1)) {
    bits >>= 1;
    zeros++;
  }
  return e - 53 + zeros;
}

/* Term t of an exact float sum or product (Reduce.xf). */
static void exact_term(const Reduce *r, int64_t o, double t) {
  ExactTerms *x = &r->xf[o];
  if (!isfinite(t)) {
    r->xacc[o] = 0;
    return;
  }
  if (t == 0)
    return;
  if (r->op == RED_PROD) {
    double l = log2(fabs(t));
    if (l > 0)
      x->above += l;
    else
      x->below += l;
    x->low_or_odd += fabs(frexp(t, &(int){0})) != 0.5;
  } else {
    x->above += fabs(t);
    int e = lowest_bit(t);
    if (x->low_or_odd > e)
      x->low_or_odd = e;
  }
}

/* A float sum (mean, product) of exact terms is exact, the same value in
 * every order of evaluation, when no partial result rounds: a sum whose
 * terms are multiples of 2^e with magnitudes summing below 2^(p + e) (p
 * the significand's bits: 24 for the f32 arithmetic of f32, f16, bf16 and
 * f8, 53 for f64), as where(c, 1.0, -1.0) summed; a mean of one whose
 * count is a power of two (its reciprocal is exact); a product of powers
 * of two and at most one other term whose partial products stay normal.
 * prod(where(c, 1.0, -1.0)) is then exact, and i32() of 4 times it is
 * compared, not waived as a step. */
static int exact_terms_ok(const Reduce *r, int64_t o) {
  const ExactTerms *x = &r->xf[o];
  int f64 = r->in_type == DT_F64, p = f64 ? 53 : 24;
  if (r->op == RED_PROD)
    return x->low_or_odd <= 1 && x->above < (f64 ? 1023 : 127) && x->below > (f64 ? -1022 : -126);
  if (r->op == RED_MEAN && (r->count & (r->count - 1)) != 0)
    return 0;
  return x->above == 0 || x->above < ldexp(1, p + (int)x->low_or_odd);
}

/* One pass over x; `means` (for RED_VAR) holds each output's mean and
 * `means_m` their bounds. */
static void reduce_pass(Reduce *r, const Tensor *x, uint32_t axes,
                        const long double *means, const double *means_m) {
  Walk w;
  reduce_walk_init(&w, x, axes);
  int arg = r->op == RED_ARGMAX || r->op == RED_ARGMIN;
  for (int64_t i = 0; i < x->n; i++, walk_step(&w)) {
    int64_t o = w.off[0];
    if (arg)
      acc_arg_term(r, o, x, i, w.off[1]);
    else if (r->iacc)
      acc_int(r, o, x->i[i]);
    else
      acc_float(r, o, get_f(x, i), means ? means[o] : 0);
    if (r->macc)
      acc_mag(r, o, get_m(x, i), means_m ? means_m[o] : 0);
    if (r->xacc && !arg)
      r->xacc[o] &= (unsigned char)get_x(x, i);
    if (r->xf)
      exact_term(r, o, get_f(x, i));
  }
}

/* argmax/argmin after reduce_pass: where another term lies within the
 * slacks of the two of the best (either may be the larger in a correct
 * evaluation), the index is uncertain.  An exact pair is a tie only when
 * equal, and the first index wins it. */
static void arg_near_ties(Reduce *r, const Tensor *x, uint32_t axes) {
  Walk w;
  reduce_walk_init(&w, x, axes);
  for (int64_t i = 0; i < x->n; i++, walk_step(&w)) {
    int64_t o = w.off[0];
    if (w.off[1] != r->arg[o] &&
        compare_near(get_f(x, i), slack(r->in_type, get_f(x, i), get_m(x, i), get_x(x, i)),
                     (double)r->acc[o], r->bslack[o]))
      r->xacc[o] = 0;
  }
}

/* The bound of a finished float reduction from its accumulated bounds:
 * the sum factor for sum and prod, and divided by the count for mean and
 * var (an empty mean is NaN: no bound).  The accumulated bound of a sum is
 * also the bound of every partial sum: past the arithmetic's range, the
 * accumulator itself may overflow before a mean divides it back
 * (range_finish).  A product's partial products are bounded by mtop
 * instead, since factors under 1 make the product of the bounds smaller
 * than some of them (300007 factors in [0.25, 2]: the product of the
 * bounds underflows to 0 while an f32 partial product may pass FLT_MAX and
 * meet another that underflowed, inf * 0). */
static double reduce_mag(const Reduce *r, int64_t o) {
  double m = r->macc[o];
  if (r->op != RED_MAX && r->op != RED_MIN &&
      range_finish(r->out_type, r->op == RED_PROD ? r->mtop[o] : m) == INFINITY)
    return INFINITY;
  switch (r->op) {
  case RED_SUM: case RED_PROD: return sum_factor(r->count) * m;
  case RED_MEAN: case RED_VAR:
    return r->count ? sum_factor(r->count) * m / (double)r->count : INFINITY;
  default: return m; /* max, min */
  }
}

static int64_t reduced_count(const Tensor *x, uint32_t axes) {
  int64_t c = 1;
  for (int a = 0; a < x->rank; a++)
    if (axes & (1u << a))
      c *= x->dims[a];
  return c;
}

static void reduce_finish(Reduce *r, Tensor *t) {
  for (int64_t o = 0; o < t->n; o++) {
    if (r->arg)
      t->i[o] = r->arg[o];
    else if (r->iacc)
      t->i[o] = wrap(r->out_type, r->iacc[o]);
    else if (r->op == RED_MEAN || r->op == RED_VAR)
      t->f[o] = r->count ? (double)(r->acc[o] / r->count) : NAN;
    else
      t->f[o] = (double)r->acc[o];
    if (t->m && r->macc)
      t->m[o] = mag_finish(t->f[o], reduce_mag(r, o));
    if (t->x)
      t->x[o] = r->xacc ? r->xacc[o] && (!r->xf || exact_terms_ok(r, o)) : 0;
  }
}

/* The exactness accumulators (Reduce.xacc, bslack, xf) when t tracks it:
 * integer reductions, max and min are exact when every term is; argmax
 * and argmin unless near a tie; float sums, means and products when every
 * term is and no partial result rounds (exact_terms_ok).  The rest (var)
 * round.  Returns 0 when out of memory. */
static int reduce_alloc_exact(Reduce *r, const Tensor *t, size_t n) {
  int arg = r->op == RED_ARGMAX || r->op == RED_ARGMIN;
  int terms = !r->iacc && (r->op == RED_SUM || r->op == RED_MEAN || r->op == RED_PROD);
  if (!t->x || !(arg || terms || r->iacc || r->op == RED_MAX || r->op == RED_MIN))
    return 1;
  r->xacc = malloc(n);
  if (arg)
    r->bslack = malloc(n * sizeof(double));
  if (terms)
    r->xf = malloc(n * sizeof(ExactTerms));
  if (!r->xacc || (arg && !r->bslack) || (terms && !r->xf))
    return 0;
  memset(r->xacc, 1, n);
  for (size_t o = 0; terms && o < n; o++)
    r->xf[o] = (ExactTerms){0, 0, r->op == RED_PROD ? 0 : INT64_MAX};
  return 1;
}

static void reduce_free(Reduce *r) {
  free(r->acc), free(r->iacc), free(r->arg), free(r->macc), free(r->mtop);
  free(r->xacc), free(r->bslack), free(r->xf);
}

static int eval_reduce(Interp *in, const Value *v, Tensor *t, const Tensor *x) {
  Reduce r = {v->rop, v->args[0]->dtype, v->dtype, reduced_count(x, v->axes),
              NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  int arg = r.op == RED_ARGMAX || r.op == RED_ARGMIN;
  if (arg && r.count == 0)
    return in->status = INTERP_EMPTY_REDUCTION, 0;
  size_t n = t->n ? (size_t)t->n : 1;
  int int_acc = !arg && !x->f && !t->f;
  if (int_acc)
    r.iacc = malloc(n * sizeof(int64_t));
  else
    r.acc = malloc(n * sizeof(long double));
  if (arg)
    r.arg = malloc(n * sizeof(int64_t));
  if (t->m)
    r.macc = malloc(n * sizeof(double));
  int want_top = r.macc && r.op == RED_PROD;
  if (want_top)
    r.mtop = malloc(n * sizeof(double));
  if ((!r.iacc && !r.acc) || (arg && !r.arg) || (t->m && !r.macc) || (want_top && !r.mtop) ||
      !reduce_alloc_exact(&r, t, n)) {
    reduce_free(&r);
    return in->status = INTERP_OUT_OF_MEMORY, 0;
  }
  for (int64_t o = 0; o < t->n; o++) {
    if (r.iacc)
      r.iacc[o] = int_identity(r.op, x->f ? DT_I64 : r.in_type);
    else
      r.acc[o] = float_identity(r.op);
    if (arg)
      r.arg[o] = -1;
    if (r.macc)
      r.macc[o] = r.op == RED_PROD ? 1 : 0;
    if (r.mtop)
      r.mtop[o] = 1;
  }
  if (r.op == RED_VAR) {
    /* mean((x - mean(x))^2), as lowering spells it (lower.c) */
    r.op = RED_MEAN;
    reduce_pass(&r, x, v->axes, NULL, NULL);
    for (int64_t o = 0; o < t->n; o++) {
      r.acc[o] = r.count ? r.acc[o] / r.count : NAN;
      if (r.macc)
        r.macc[o] = reduce_mag(&r, o);
    }
    long double *means = r.acc;
    double *means_m = r.macc;
    r.acc = calloc(n, sizeof(long double));
    r.macc = means_m ? calloc(n, sizeof(double)) : NULL;
    if (!r.acc || (means_m && !r.macc)) {
      free(means), free(means_m);
      reduce_free(&r);
      return in->status = INTERP_OUT_OF_MEMORY, 0;
    }
    r.op = RED_VAR;
    reduce_pass(&r, x, v->axes, means, means_m);
    free(means), free(means_m);
  } else {
    reduce_pass(&r, x, v->axes, NULL, NULL);
  }
  if (arg && r.xacc)
    arg_near_ties(&r, x, v->axes);
  reduce_finish(&r, t);
  reduce_free(&r);
  return 1;
}

/* ---- the kernel ----------------------------------------------------------- */

static void mark_live(Interp *in) {
  const Kernel *k = in->k;
  for (int j = 0; j < k->noutputs; j++) {
    in->live[k->outputs[j].value->id] = 1;
    in->last_use[k->outputs[j].value->id] = INT_MAX;
  }
  for (int id = k->values.len - 1; id >= 0; id--) {
    const Value *v = k->values.items[id];
    if (!in->live[id])
      continue;
    for (int a = 0; a < v->nargs; a++) {
      int aid = v->args[a]->id;
      in->live[aid] = 1;
      if (in->last_use[aid] < id)
        in->last_use[aid] = id;
    }
  }
}

/* The max or min that b is, or broadcasts, where it reduces a itself
 * (a == max(a), as the gradient of max compares: grad_rules.c's
 * d_extreme), else NULL. */
static const Value *extreme_of(const Value *b, const Value *a) {
  const Value *r = b->op == IR_BROADCAST ? b->args[0] : b; /* none where the shapes agree */
  return r->op == IR_REDUCE && (r->rop == RED_MAX || r->rop == RED_MIN) && r->args[0] == a ? r : NULL;
}

/* t = a op m where m broadcasts a's own max (min) over r's axes.  m is one
 * of a's values in every evaluation, so the comparisons follow from which
 * term is the extreme: certain in a row where no other term lies within
 * the slacks of the best (arg_near_ties's rule), and, in a row with such
 * terms, for the terms off the best by more than the slacks.  The rule of
 * any other pair (compare_near) would call every term at the max
 * uncertain, and with it every gradient through a max.  Returns 0 when
 * out of memory. */
static int extreme_exactness(Interp *in, const Value *v, Tensor *t, const Tensor *a, const Tensor *m,
                             const Value *r, int ai_arg) {
  unsigned char *near = calloc(t->n ? (size_t)t->n : 1, 1); /* a row's terms near its extreme, to 2 */
  if (!near)
    return in->status = INTERP_OUT_OF_MEMORY, 0;
  for (int pass = 0; pass < 2; pass++) {
    Walk w;
    reduce_walk_init(&w, a, r->axes);
    for (int64_t i = 0; i < t->n; i++, walk_step(&w)) {
      int64_t o = w.off[0];
      double ai = get_f(a, i), mi = get_f(m, i);
      int close = ai == mi || compare_near(ai, get_slack(v, ai_arg, a, i), mi, get_slack(v, !ai_arg, m, i));
      if (pass == 0 && close && near[o] < 2)
        near[o]++;
      if (pass == 1 && !(get_x(a, i) && get_x(m, i)))
        t->x[i] = (unsigned char)(near[o] == 1 || !close);
    }
  }
  free(near);
  return 1;
}

static int eval_value(Interp *in, const Value *v, const void *const *inputs) {
  Tensor *t = &in->vals[v->id];
  if (!tensor_alloc(in, t, v))
    return 0;
  const Tensor *a0 = v->nargs > 0 ? &in->vals[v->args[0]->id] : NULL;
  const Tensor *a1 = v->nargs > 1 ? &in->vals[v->args[1]->id] : NULL;
  const Tensor *a2 = v->nargs > 2 ? &in->vals[v->args[2]->id] : NULL;
  switch (v->op) {
  case IR_INPUT: eval_input(in, v, t, inputs); return 1;
  case IR_CONST: eval_const(v, t); return 1;
  case IR_CAST: eval_cast(v, t, a0); return 1;
  case IR_UNARY: eval_unary(v, t, a0); return 1;
  case IR_BINARY: {
    eval_binary(v, t, a0, a1);
    const Value *r = NULL;
    if (!t->x || !is_comparison(v->bop) || !a0->f)
      return 1;
    if ((r = extreme_of(v->args[1], v->args[0])) != NULL)
      return extreme_exactness(in, v, t, a0, a1, r, 0);
    if ((r = extreme_of(v->args[0], v->args[1])) != NULL)
      return extreme_exactness(in, v, t, a1, a0, r, 1);
    return 1;
  }
  case IR_SELECT: eval_select(v, t, a0, a1, a2); return 1;
  case IR_BROADCAST: eval_broadcast(t, a0); return 1;
  case IR_REDUCE: return eval_reduce(in, v, t, a0);
  case IR_SIZE: eval_size(in, v, t); return 1;
  case IR_INDEX: eval_index(t); return 1;
  case IR_TAKE: eval_take(in, v, t, inputs); return 1;
  default: internal_error("interp: IR op %d", (int)v->op);
  }
}

static void free_dead_args(Interp *in, const Value *v) {
  for (int a = 0; a < v->nargs; a++) {
    int aid = v->args[a]->id;
    if (in->last_use[aid] == v->id)
      tensor_free(&in->vals[aid]);
  }
}

static int check_sizes(const Kernel *k, const int64_t *sizes) {
  for (int s = 0; s < ir_nparams(k); s++)
    if (sizes[s] < 0)
      return 0;
  for (int i = 0; i < k->ninputs; i++)
    if (interp_numel(&k->inputs[i].shape, sizes) < 0)
      return 0;
  return 1;
}

static void store_outputs(Interp *in, void *const *outputs,
                          double *const *outputs_f64, double *const *outputs_mag) {
  const Kernel *k = in->k;
  for (int j = 0; j < k->noutputs; j++) {
    const Tensor *t = &in->vals[k->outputs[j].value->id];
    DType dt = k->outputs[j].dtype;
    for (int64_t i = 0; i < t->n; i++) {
      if (outputs_f64 && outputs_f64[j])
        outputs_f64[j][i] = get_f(t, i);
      if (outputs_mag && outputs_mag[j])
        outputs_mag[j][i] = t->m ? t->m[i] : get_x(t, i) ? 0 : INFINITY;
      if (t->f)
        interp_store(dt, outputs[j], i, t->f[i]);
      else
        store_int(dt, outputs[j], i, t->i[i]);
    }
  }
}

static int run_kernel(const Kernel *k, const int64_t *sizes, const void *const *inputs,
                      void *const *outputs, double *const *outputs_f64, double *const *outputs_mag);

int interp_kernel(const Kernel *k, const int64_t *sizes,
                  const void *const *inputs, void *const *outputs,
                  double *const *outputs_f64) {
  return interp_kernel_mag(k, sizes, inputs, outputs, outputs_f64, NULL);
}

int interp_kernel_mag(const Kernel *k, const int64_t *sizes,
                      const void *const *inputs, void *const *outputs,
                      double *const *outputs_f64, double *const *outputs_mag) {
  int64_t *all = malloc(sizeof(int64_t) * ((size_t)k->nsizevars + 1));
  if (!all)
    return INTERP_OUT_OF_MEMORY;
  if (ir_nparams(k)) /* a kernel without sizes may pass NULL */
    memcpy(all, sizes, sizeof(int64_t) * (size_t)ir_nparams(k));
  ir_derive_sizes(k, all);
  int st = check_sizes(k, all) ? run_kernel(k, all, inputs, outputs, outputs_f64, outputs_mag)
                               : INTERP_INVALID_VALUE;
  free(all);
  return st;
}

static int run_kernel(const Kernel *k, const int64_t *sizes, const void *const *inputs,
                      void *const *outputs, double *const *outputs_f64, double *const *outputs_mag) {
  int nv = k->values.len;
  int want_mag = 0;
  for (int j = 0; outputs_mag && j < k->noutputs; j++)
    want_mag |= outputs_mag[j] != NULL;
  Interp in = {k, sizes, calloc((size_t)nv + 1, sizeof(Tensor)),
               calloc((size_t)nv + 1, 1), calloc((size_t)nv + 1, sizeof(int)),
               INTERP_SUCCESS, want_mag};
  if (!in.vals || !in.live || !in.last_use) {
    in.status = INTERP_OUT_OF_MEMORY;
  } else {
    for (int id = 0; id < nv; id++)
      in.last_use[id] = -1;
    mark_live(&in);
    for (int id = 0; id < nv && in.status == INTERP_SUCCESS; id++) {
      const Value *v = k->values.items[id];
      if (in.live[id] && eval_value(&in, v, inputs))
        free_dead_args(&in, v);
    }
    if (in.status == INTERP_SUCCESS)
      store_outputs(&in, outputs, outputs_f64, outputs_mag);
  }
  for (int id = 0; in.vals && id < nv; id++)
    tensor_free(&in.vals[id]);
  free(in.vals), free(in.live), free(in.last_use);
  return in.status;
}

/* ---- tolerance support ---------------------------------------------------- */

double interp_reduction_extent(const Kernel *k, int j, const int64_t *sizes) {
  int nv = k->values.len;
  double *ext = malloc(((size_t)nv + 1) * sizeof(double));
  if (!ext)
    return 1;
  for (int id = 0; id < nv; id++) {
    const Value *v = k->values.items[id];
    double e = 1;
    for (int a = 0; a < v->nargs; a++)
      if (ext[v->args[a]->id] > e)
        e = ext[v->args[a]->id];
    if (v->op == IR_REDUCE) {
      const Shape *s = &v->args[0]->shape;
      for (int a = 0; a < s->rank; a++)
        if (v->axes & (1u << a))
          e *= (double)interp_dim(&s->d[a], sizes);
    }
    ext[id] = e;
  }
  double r = ext[k->outputs[j].value->id];
  free(ext);
  return r < 1 ? 1 : r;
}
