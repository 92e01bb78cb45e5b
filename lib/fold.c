/* fold.c — scalar constant evaluation (see fold.h). */
#include "fold.h"

#include <math.h>

/* Round x to a binary float with `mant` explicit mantissa bits, minimum
 * normal exponent `emin` and largest finite value `max` (round to nearest
 * even, overflow to infinity). */
static double round_binary(double x, int mant, int emin, double max) {
  if (isnan(x) || isinf(x) || x == 0)
    return x;
  int e;
  frexp(x, &e); /* |x| = m * 2^e, 0.5 <= m < 1 */
  e -= 1;       /* 2^e <= |x| < 2^(e+1) */
  if (e < emin)
    e = emin;
  double ulp = ldexp(1.0, e - mant);
  double r = rint(x / ulp) * ulp;
  if (fabs(r) > max)
    return copysign(INFINITY, x);
  return r;
}

/* To an 8-bit float as PyTorch does it: the value goes through f32 first
 * (round to nearest), then to the nearest 8-bit value, ties even.  A value
 * beyond the largest finite one is NaN in e4m3 (float8_e4m3fn has no
 * infinity: values above 464, halfway to the next step, round to the
 * NaN code) and infinity in e5m2. */
static double round_f8(double x, int mant, int emin, double max, int has_inf) {
  double r = round_binary((double)(float)x, mant, emin, max);
  if (isinf(r) && !has_inf)
    return copysign(NAN, x);
  return r;
}

double fold_round(DType t, double x) {
  switch (t) {
  case DT_F8E4M3:
    return round_f8(x, 3, -6, 448.0, 0);
  case DT_F8E5M2:
    return round_f8(x, 2, -14, 57344.0, 1);
  case DT_F32:
    return (double)(float)x;
  case DT_F16:
    return round_binary(x, 10, -14, 65504.0);
  case DT_BF16:
    return round_binary(x, 7, -126, ldexp(255.0 / 128.0, 127));
  default:
    return x;
  }
}

int64_t fold_wrap(DType t, int64_t x) {
  if (t == DT_BOOL)
    return x != 0;
  if (t == DT_I8)
    return (int64_t)(int8_t)(uint8_t)(uint64_t)x;
  if (t == DT_U8)
    return (int64_t)(uint8_t)(uint64_t)x;
  if (t == DT_I32)
    return (int64_t)(int32_t)(uint32_t)(uint64_t)x;
  return x;
}

double scalar_as_double(DType t, Scalar s) {
  return dtype_is_float(t) ? s.f : (double)s.i;
}

void fold_int_range(DType t, int64_t *lo, int64_t *hi) {
  switch (t) {
  case DT_BOOL: *lo = 0, *hi = 1; break;
  case DT_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
  case DT_U8: *lo = 0, *hi = UINT8_MAX; break;
  case DT_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
  default: *lo = INT64_MIN, *hi = INT64_MAX; break;
  }
}

static int64_t saturate(DType to, double x) {
  if (isnan(x))
    return 0;
  int64_t lo, hi;
  fold_int_range(to, &lo, &hi);
  if (x <= (double)lo)
    return lo;
  if (x >= (double)hi) /* i64: 2^63 */
    return hi;
  return (int64_t)x; /* truncates toward zero */
}

Scalar fold_cast(DType from, Scalar s, DType to) {
  Scalar r = {0, 0};
  if (dtype_is_float(to)) {
    r.f = fold_round(to, scalar_as_double(from, s));
  } else if (to == DT_BOOL) {
    r.i = dtype_is_float(from) ? s.f != 0 : s.i != 0;
  } else if (dtype_is_float(from)) {
    r.i = saturate(to, s.f);
  } else {
    r.i = fold_wrap(to, s.i);
  }
  return r;
}

/* ---- unary ----------------------------------------------------------------- */

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static double softplus(double x) {
  return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}

static double gelu_tanh(double x) {
  const double k = 0.7978845608028654; /* sqrt(2/pi) */
  return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

static double fsign(double x) {
  if (isnan(x) || x == 0)
    return x;
  return x > 0 ? 1.0 : -1.0;
}

static double frelu(double x) { return isnan(x) || x > 0 ? x : 0.0; }

static double float_unary(UnaryOp op, double x) {
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
  case UN_RSQRT: return 1.0 / sqrt(x);
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
  case UN_NORMCDF: return 0.5 * erfc(-x / sqrt(2.0));
  case UN_SIGMOID: return sigmoid(x);
  case UN_RELU: return frelu(x);
  case UN_GELU: return 0.5 * x * (1.0 + erf(x * 0.7071067811865476));
  case UN_GELU_TANH: return gelu_tanh(x);
  case UN_SILU: return x * sigmoid(x);
  case UN_SOFTPLUS: return softplus(x);
  case UN_FLOOR: return floor(x);
  case UN_CEIL: return ceil(x);
  case UN_ROUND: return nearbyint(x); /* default mode: half to even */
  case UN_TRUNC: return trunc(x);
  case UN_SIGN: return fsign(x);
  case UN_NEG: return -x;
  default: return NAN;
  }
}

static int64_t int_unary(UnaryOp op, DType t, int64_t x) {
  switch (op) {
  case UN_ABS: return fold_wrap(t, x < 0 ? (int64_t)(0 - (uint64_t)x) : x);
  case UN_RELU: return x > 0 ? x : 0;
  case UN_SIGN: return (x > 0) - (x < 0);
  case UN_NEG: return fold_wrap(t, (int64_t)(0 - (uint64_t)x));
  case UN_NOT: return !x;
  default: return x; /* rounding ops are the identity on integers */
  }
}

static int64_t predicate(UnaryOp op, DType t, Scalar a) {
  double x = scalar_as_double(t, a);
  switch (op) {
  case UN_ISNAN: return isnan(x) != 0;
  case UN_ISINF: return isinf(x) != 0;
  default: return isfinite(x) != 0;
  }
}

Scalar fold_unary(UnaryOp op, DType t, DType rt, Scalar a) {
  Scalar r = {0, 0};
  if (op == UN_ISNAN || op == UN_ISINF || op == UN_ISFINITE)
    r.i = predicate(op, t, a);
  else if (dtype_is_float(rt))
    r.f = fold_round(rt, float_unary(op, scalar_as_double(t, a)));
  else
    r.i = int_unary(op, rt, a.i);
  return r;
}

/* ---- binary ------------------------------------------------------------- */

int64_t fold_ipow(DType t, int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1)
      return 1;
    if (base == -1)
      return (exp & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, b = (uint64_t)base;
  for (uint64_t e = (uint64_t)exp; e; e >>= 1) {
    if (e & 1)
      result *= b;
    b *= b;
  }
  return fold_wrap(t, (int64_t)result);
}

static int64_t int_floordiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    q--;
  return q;
}

static int64_t int_mod(int64_t a, int64_t b) {
  if (b == 0 || b == -1)
    return 0;
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0)))
    m += b;
  return m;
}

/* Python's float // and %, with IEEE results for a zero divisor. */
static double float_mod(double a, double b) {
  if (b == 0)
    return NAN;
  double m = fmod(a, b);
  if (m != 0) {
    if ((b < 0) != (m < 0))
      m += b;
  } else {
    m = copysign(0.0, b);
  }
  return m;
}

static double float_floordiv(double a, double b) {
  if (b == 0)
    return a / b;
  double m = fmod(a, b);
  double div = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0)))
    div -= 1.0;
  if (div == 0)
    return copysign(0.0, a / b);
  double fl = floor(div);
  if (div - fl > 0.5)
    fl += 1.0;
  return fl;
}

static double fmax_nan(double a, double b) {
  if (isnan(a) || isnan(b))
    return NAN;
  return a > b ? a : b;
}

static double fmin_nan(double a, double b) {
  if (isnan(a) || isnan(b))
    return NAN;
  return a < b ? a : b;
}

static double float_binary(BinaryOp op, double a, double b) {
  switch (op) {
  case BIN_ADD: return a + b;
  case BIN_SUB: return a - b;
  case BIN_MUL: return a * b;
  case BIN_DIV: return a / b;
  case BIN_FLOORDIV: return float_floordiv(a, b);
  case BIN_MOD: return float_mod(a, b);
  case BIN_POW: return pow(a, b);
  case BIN_MAXIMUM: return fmax_nan(a, b);
  case BIN_MINIMUM: return fmin_nan(a, b);
  case BIN_ATAN2: return atan2(a, b);
  default: return NAN;
  }
}

static int64_t int_binary(BinaryOp op, DType t, int64_t a, int64_t b) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (op) {
  case BIN_ADD: return fold_wrap(t, (int64_t)(ua + ub));
  case BIN_SUB: return fold_wrap(t, (int64_t)(ua - ub));
  case BIN_MUL: return fold_wrap(t, (int64_t)(ua * ub));
  case BIN_FLOORDIV: return fold_wrap(t, int_floordiv(a, b));
  case BIN_MOD: return int_mod(a, b);
  case BIN_POW: return fold_ipow(t, a, b);
  case BIN_MAXIMUM: return a > b ? a : b;
  case BIN_MINIMUM: return a < b ? a : b;
  default: return 0;
  }
}

static int64_t compare(BinaryOp op, DType t, Scalar a, Scalar b) {
  if (dtype_is_float(t)) {
    double x = a.f, y = b.f;
    switch (op) {
    case BIN_EQ: return x == y;
    case BIN_NE: return x != y;
    case BIN_LT: return x < y;
    case BIN_LE: return x <= y;
    case BIN_GT: return x > y;
    default: return x >= y;
    }
  }
  int64_t x = a.i, y = b.i;
  switch (op) {
  case BIN_EQ: return x == y;
  case BIN_NE: return x != y;
  case BIN_LT: return x < y;
  case BIN_LE: return x <= y;
  case BIN_GT: return x > y;
  default: return x >= y;
  }
}

Scalar fold_binary(BinaryOp op, DType t, Scalar a, Scalar b) {
  Scalar r = {0, 0};
  if (op >= BIN_EQ && op <= BIN_GE)
    r.i = compare(op, t, a, b);
  else if (op == BIN_AND)
    r.i = a.i && b.i;
  else if (op == BIN_OR)
    r.i = a.i || b.i;
  else if (dtype_is_float(t))
    r.f = fold_round(t, float_binary(op, a.f, b.f));
  else
    r.i = int_binary(op, t, a.i, b.i);
  return r;
}
