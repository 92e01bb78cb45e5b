/* grad_rules.c — the rule of each IR operation: how the adjoint dv of a
 * value v = op(a, b, ...) goes to its operands (grad.h).
 *
 * Each rule is PyTorch autograd's for the equivalent torch function
 * (language.md §13.3), written as torch's derivatives.yaml and
 * FunctionsManual compute it, also where the function is not
 * differentiable:
 *   abs       dv * sign(a): 0 at 0
 *   relu      where(y <= 0, 0, dv) (threshold_backward): 0 at 0
 *   maximum   to the larger, dv / 2 to each at a tie; minimum alike
 *   clamp     to x where lo <= x <= hi, else to the bound it is clamped
 *             to (lowering marks clamp's maximum and minimum)
 *   max, min  dv split evenly among the elements equal to the result
 *             (torch.amax: (dv / count(a == y)) * (a == y))
 *   prod      the product of the other elements, exact with zeros:
 *             y / a without a zero in the row, the product of the
 *             others at the only zero of a row, 0 with two zeros
 *   sqrt, rsqrt, log at 0: +-inf, as torch's formulas give
 *   pow       0 to a where b == 0; 0 to b where a == 0 and b >= 0
 * and no gradient through comparisons, floor ceil round trunc sign,
 * isnan isinf isfinite, //, argmax, argmin, any, all, integer values,
 * casts to integers, and detach().  Casts between floats pass the adjoint
 * on (the rounding is not differentiated); softplus (computed without a
 * threshold, doc/language.md §9.1) has sigmoid(a) as its derivative.
 * The rules of the builtins are named in the derivative column of ops.h's
 * lists, so that a builtin added there without its rule does not compile. */
#include "grad.h"

#include "gather.h"

#include <math.h>

/* ---- shorthands --------------------------------------------------------- */

static Value *arg(Grad *g, const Value *v, int i) {
  return grad_re(g, v->args[i]);
}

static Value *result(Grad *g, const Value *v) { return grad_re(g, v); }

/* A constant of x's dtype. */
static Value *k(Grad *g, const Value *x, double c) {
  return grad_const(g, x->dtype, c);
}

static Value *add(Grad *g, Value *a, Value *b) {
  return grad_binary(g, BIN_ADD, a, b);
}
static Value *sub(Grad *g, Value *a, Value *b) {
  return grad_binary(g, BIN_SUB, a, b);
}
static Value *mul(Grad *g, Value *a, Value *b) {
  return grad_binary(g, BIN_MUL, a, b);
}
static Value *divide(Grad *g, Value *a, Value *b) {
  return grad_binary(g, BIN_DIV, a, b);
}
static Value *cmp(Grad *g, BinaryOp op, Value *a, Value *b) {
  return grad_binary(g, op, a, b);
}
static Value *fn(Grad *g, UnaryOp op, Value *x) { return grad_unary(g, op, x); }
static Value *neg(Grad *g, Value *x) { return grad_unary(g, UN_NEG, x); }
static Value *mulk(Grad *g, Value *a, double c) { return mul(g, a, k(g, a, c)); }
static Value *addk(Grad *g, Value *a, double c) { return add(g, a, k(g, a, c)); }
static Value *square(Grad *g, Value *a) { return mul(g, a, a); }
/* where(c, x, 0) and where(c, 0, x) */
static Value *only(Grad *g, Value *c, Value *x) {
  return grad_select(g, c, x, k(g, x, 0));
}
static Value *except(Grad *g, Value *c, Value *x) {
  return grad_select(g, c, k(g, x, 0), x);
}

/* dv times the derivative d, to operand 0. */
static void chain(Grad *g, const Value *v, Value *dv, Value *d) {
  grad_push(g, v, 0, mul(g, dv, d));
}

/* x, with the reduced (keepdims) axes of v stretched back to v's
 * operand's: an adjoint of v to its operand's shape. */
static Value *expand(Grad *g, const Value *v, Value *x) {
  const Shape *a = &v->args[0]->shape;
  Shape sh = x->shape;
  for (int i = 0; i < a->rank; i++)
    sh.d[sh.rank - a->rank + i] = a->d[i];
  return grad_fit(g, x, &sh);
}

/* ---- no gradient, and the unary operations ------------------------------ */

static void d_none(Grad *g, const Value *v, Value *dv) {
  (void)g;
  (void)v;
  (void)dv;
}

static void d_neg(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, neg(g, dv));
}

static void d_abs(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, fn(g, UN_SIGN, arg(g, v, 0)));
}

static void d_exp(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, result(g, v));
}

static void d_exp2(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, mulk(g, mul(g, dv, result(g, v)), M_LN2));
}

static void d_expm1(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, addk(g, result(g, v), 1));
}

static void d_log(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, divide(g, dv, arg(g, v, 0)));
}

static void d_log2(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, divide(g, dv, mulk(g, arg(g, v, 0), M_LN2)));
}

static void d_log10(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, divide(g, dv, mulk(g, arg(g, v, 0), M_LN10)));
}

static void d_log1p(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, divide(g, dv, addk(g, arg(g, v, 0), 1)));
}

static void d_sqrt(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, divide(g, dv, mulk(g, result(g, v), 2)));
}

/* -0.5 * dv * y**3 */
static void d_rsqrt(Grad *g, const Value *v, Value *dv) {
  Value *y = result(g, v);
  grad_push(g, v, 0, mul(g, mulk(g, dv, -0.5), mul(g, square(g, y), y)));
}

static void d_sin(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, fn(g, UN_COS, arg(g, v, 0)));
}

static void d_cos(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, neg(g, fn(g, UN_SIN, arg(g, v, 0))));
}

static void d_tan(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, addk(g, square(g, result(g, v)), 1));
}

/* 1 / sqrt(1 - a*a), as rsqrt */
static Value *inverse_cosine_of(Grad *g, Value *a) {
  return fn(g, UN_RSQRT, sub(g, k(g, a, 1), square(g, a)));
}

static void d_asin(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, inverse_cosine_of(g, arg(g, v, 0)));
}

static void d_acos(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, neg(g, inverse_cosine_of(g, arg(g, v, 0))));
}

static void d_atan(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, divide(g, dv, addk(g, square(g, arg(g, v, 0)), 1)));
}

static void d_sinh(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, fn(g, UN_COSH, arg(g, v, 0)));
}

static void d_cosh(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, fn(g, UN_SINH, arg(g, v, 0)));
}

static void d_tanh(Grad *g, const Value *v, Value *dv) {
  Value *y = result(g, v);
  chain(g, v, dv, sub(g, k(g, y, 1), square(g, y)));
}

/* 2 / sqrt(pi) * exp(-a*a) */
static void d_erf(Grad *g, const Value *v, Value *dv) {
  Value *a = arg(g, v, 0);
  Value *e = fn(g, UN_EXP, neg(g, square(g, a)));
  grad_push(g, v, 0, mul(g, mulk(g, e, M_2_SQRTPI), dv));
}

/* dv * (1 - y) * y */
static void d_sigmoid(Grad *g, const Value *v, Value *dv) {
  Value *y = result(g, v);
  grad_push(g, v, 0, mul(g, mul(g, dv, sub(g, k(g, y, 1), y)), y));
}

static void d_relu(Grad *g, const Value *v, Value *dv) {
  Value *y = result(g, v);
  grad_push(g, v, 0, except(g, cmp(g, BIN_LE, y, k(g, y, 0)), dv));
}

/* 0.5 * (1 + erf(a / sqrt(2))): gelu(a) = a * cdf(a).  An operation of
 * its own (UN_NORMCDF), which the runtime computes in f32 as it does gelu,
 * through erfc without a branch (runtime/tecc_runtime.cuh): written as
 * 1 + erf, CUDA's erff (two branches) held bias_gelu bf16's backward to
 * 1.59x the time of its bytes (bench/NOTES.md, issue 48). */
static Value *gelu_cdf(Grad *g, Value *a) {
  return fn(g, UN_NORMCDF, a);
}

/* exp(-a^2 / 2) / sqrt(2 pi) */
static Value *normal_pdf(Grad *g, Value *a) {
  return mulk(g, fn(g, UN_EXP, mulk(g, square(g, a), -0.5)), M_2_SQRTPI * M_SQRT1_2 * 0.5);
}

/* cdf(a) + a * pdf(a) */
static void d_gelu(Grad *g, const Value *v, Value *dv) {
  Value *a = arg(g, v, 0);
  chain(g, v, dv, add(g, gelu_cdf(g, a), mul(g, a, normal_pdf(g, a))));
}

/* a gradient's gradient (grad of a gradient kernel): pdf(a) */
static void d_normcdf(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, normal_pdf(g, arg(g, v, 0)));
}

static const double gelu_tanh_kappa = 0.044715, gelu_tanh_beta = M_SQRT2 * M_2_SQRTPI * 0.5; /* sqrt(2 / pi) */

/* tanh(beta * (a + kappa * a^3)): gelu_tanh(a) = 0.5 * a * (1 + t) */
static Value *gelu_tanh_t(Grad *g, Value *a) {
  return fn(g, UN_TANH, mulk(g, add(g, a, mulk(g, mul(g, square(g, a), a), gelu_tanh_kappa)), gelu_tanh_beta));
}

/* torch's GeluBackward with approximate='tanh' */
static void d_gelu_tanh(Grad *g, const Value *v, Value *dv) {
  Value *a = arg(g, v, 0);
  Value *t = gelu_tanh_t(g, a);
  Value *left = mulk(g, a, 0.5);
  Value *dleft = mulk(g, addk(g, t, 1), 0.5);
  Value *dinner = mulk(g, addk(g, mulk(g, square(g, a), 3 * gelu_tanh_kappa), 1), gelu_tanh_beta);
  Value *dright = mul(g, mul(g, left, sub(g, k(g, t, 1), square(g, t))), dinner);
  chain(g, v, dv, add(g, dleft, dright));
}

/* dv * s * (1 + a * (1 - s)), s = sigmoid(a) */
static void d_silu(Grad *g, const Value *v, Value *dv) {
  Value *a = arg(g, v, 0);
  Value *s = fn(g, UN_SIGMOID, a);
  Value *d = addk(g, mul(g, a, sub(g, k(g, s, 1), s)), 1);
  grad_push(g, v, 0, mul(g, mul(g, dv, s), d));
}

Value *grad_recompute_composite(Grad *g, const Value *v) {
  if (v->op != IR_UNARY)
    return NULL;
  Value *a = arg(g, v, 0);
  switch (v->uop) {
  case UN_GELU: return mul(g, a, gelu_cdf(g, a));
  case UN_GELU_TANH: return mul(g, mulk(g, a, 0.5), addk(g, gelu_tanh_t(g, a), 1));
  case UN_SILU: return mul(g, a, fn(g, UN_SIGMOID, a));
  default: return NULL;
  }
}

static void d_softplus(Grad *g, const Value *v, Value *dv) {
  chain(g, v, dv, fn(g, UN_SIGMOID, arg(g, v, 0)));
}

/* ---- binary operations -------------------------------------------------- */

static void d_add(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, dv);
  grad_push(g, v, 1, dv);
}

static void d_sub(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, dv);
  if (grad_wants(g, v, 1))
    grad_push(g, v, 1, neg(g, dv));
}

static void d_mul(Grad *g, const Value *v, Value *dv) {
  if (grad_wants(g, v, 0))
    grad_push(g, v, 0, mul(g, dv, arg(g, v, 1)));
  if (grad_wants(g, v, 1))
    grad_push(g, v, 1, mul(g, dv, arg(g, v, 0)));
}

/* dv / b, and -dv * ((a / b) / b) */
static void d_div(Grad *g, const Value *v, Value *dv) {
  Value *b = arg(g, v, 1);
  if (grad_wants(g, v, 0))
    grad_push(g, v, 0, divide(g, dv, b));
  if (grad_wants(g, v, 1))
    grad_push(g, v, 1, mul(g, neg(g, dv), divide(g, result(g, v), b)));
}

/* a % b = a - (a // b) * b, the quotient a step function */
static void d_mod(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, dv);
  if (grad_wants(g, v, 1)) {
    Value *q = grad_binary(g, BIN_FLOORDIV, arg(g, v, 0), arg(g, v, 1));
    grad_push(g, v, 1, mul(g, neg(g, dv), q));
  }
}

/* b * a**(b - 1), 0 where b == 0; and y * log(a), 0 where a == 0, b >= 0.
 * a ** 0.5's a**-0.5 is 1 / sqrt(a): torch takes pow(a, -0.5) as
 * rsqrt(a), -inf at -0 where pow gives +inf (tests/python/grad_torch.sh). */
static void d_pow(Grad *g, const Value *v, Value *dv) {
  Value *a = arg(g, v, 0), *b = arg(g, v, 1), *zero = k(g, a, 0);
  if (grad_wants(g, v, 0)) {
    Value *p = ir_is_const(b, 0.5) ? divide(g, k(g, a, 1), fn(g, UN_SQRT, a))
                                  : grad_binary(g, BIN_POW, a, addk(g, b, -1));
    Value *d = mul(g, dv, mul(g, b, p));
    grad_push(g, v, 0, except(g, cmp(g, BIN_EQ, b, zero), d));
  }
  if (grad_wants(g, v, 1)) {
    Value *flat = grad_binary(g, BIN_AND, cmp(g, BIN_EQ, a, zero),
                              cmp(g, BIN_GE, b, zero));
    Value *d = mul(g, result(g, v), fn(g, UN_LOG, a));
    grad_push(g, v, 1, mul(g, dv, except(g, flat, d)));
  }
}

/* maximum (larger = BIN_GT) and minimum (BIN_LT): dv to the one chosen,
 * half to each at a tie; clamp's bounds give a tie to the value clamped,
 * operand 0 (torch.clamp: lo <= x <= hi passes x's gradient). */
static void extremum(Grad *g, const Value *v, Value *dv, BinaryOp larger) {
  BinaryOp smaller = larger == BIN_GT ? BIN_LT : BIN_GT;
  Value *a = arg(g, v, 0), *b = arg(g, v, 1);
  if (v->clamp_bound) {
    BinaryOp kept = larger == BIN_GT ? BIN_GE : BIN_LE;
    grad_push(g, v, 0, only(g, cmp(g, kept, a, b), dv));
    if (grad_wants(g, v, 1))
      grad_push(g, v, 1, only(g, cmp(g, smaller, a, b), dv));
    return;
  }
  Value *shared = grad_select(g, cmp(g, BIN_EQ, a, b), mulk(g, dv, 0.5), dv);
  if (grad_wants(g, v, 0))
    grad_push(g, v, 0, except(g, cmp(g, smaller, a, b), shared));
  if (grad_wants(g, v, 1))
    grad_push(g, v, 1, except(g, cmp(g, larger, a, b), shared));
}

static void d_maximum(Grad *g, const Value *v, Value *dv) {
  extremum(g, v, dv, BIN_GT);
}

static void d_minimum(Grad *g, const Value *v, Value *dv) {
  extremum(g, v, dv, BIN_LT);
}

/* dv * b / (a*a + b*b), dv * -a / (a*a + b*b) */
/* b / (a² + b²) and -a / (a² + b²); 0 at a = b = 0, as torch */
static void d_atan2(Grad *g, const Value *v, Value *dv) {
  Value *a = arg(g, v, 0), *b = arg(g, v, 1);
  Value *norm = add(g, square(g, a), square(g, b));
  Value *recip = except(g, cmp(g, BIN_EQ, norm, k(g, a, 0)), divide(g, k(g, a, 1), norm));
  if (grad_wants(g, v, 0))
    grad_push(g, v, 0, mul(g, mul(g, dv, b), recip));
  if (grad_wants(g, v, 1))
    grad_push(g, v, 1, mul(g, mul(g, dv, neg(g, a)), recip));
}

/* ---- reductions --------------------------------------------------------- */

static void d_sum(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, expand(g, v, dv));
}

/* The number of elements v reduces, in dtype t (v's shape). */
static Value *count(Grad *g, const Value *v, DType t) {
  const Shape *a = &v->args[0]->shape;
  double n = 1;
  int literal = 1;
  for (int i = 0; i < a->rank; i++)
    if (v->axes & (1u << i)) {
      literal &= a->d[i].var < 0;
      n *= (double)a->d[i].size;
    }
  if (literal)
    return grad_const(g, t, n);
  Value *ones = grad_fit(g, grad_const(g, DT_I64, 1), a);
  return grad_cast(g, grad_reduce(g, RED_SUM, ones, v->axes), t);
}

static void d_mean(Grad *g, const Value *v, Value *dv) {
  grad_push(g, v, 0, expand(g, v, divide(g, dv, count(g, v, dv->dtype))));
}

/* The product of the others: y / a in a row without zeros, the product
 * of the nonzero elements at a row's only zero, else 0. */
static void d_prod(Grad *g, const Value *v, Value *dv) {
  Value *a = arg(g, v, 0);
  Value *is_zero = cmp(g, BIN_EQ, a, k(g, a, 0));
  Value *zeros = grad_reduce(g, RED_SUM, grad_cast(g, is_zero, DT_I64), v->axes);
  Value *ones_at_zeros = grad_select(g, is_zero, k(g, a, 1), a);
  Value *nonzero = grad_reduce(g, RED_PROD, ones_at_zeros, v->axes);
  Value *none = cmp(g, BIN_EQ, zeros, k(g, zeros, 0));
  Value *one = cmp(g, BIN_EQ, zeros, k(g, zeros, 1));
  Value *others = grad_select(g, is_zero, only(g, one, nonzero),
                              only(g, none, divide(g, nonzero, a)));
  grad_push(g, v, 0, mul(g, expand(g, v, dv), others));
}

/* (dv / count(a == y)) * (a == y): shared by the elements at the max */
static void d_extreme(Grad *g, const Value *v, Value *dv) {
  Value *a = arg(g, v, 0);
  Value *at = grad_cast(g, cmp(g, BIN_EQ, a, result(g, v)), a->dtype);
  Value *n = grad_reduce(g, RED_SUM, at, v->axes);
  grad_push(g, v, 0, mul(g, expand(g, v, divide(g, dv, n)), at));
}

static void d_max(Grad *g, const Value *v, Value *dv) { d_extreme(g, v, dv); }
static void d_min(Grad *g, const Value *v, Value *dv) { d_extreme(g, v, dv); }

/* ---- casts, broadcasts, where ------------------------------------------- */

static void d_cast(Grad *g, const Value *v, Value *dv) {
  DType from = v->args[0]->dtype;
  if (dtype_is_float(from))
    grad_push(g, v, 0, grad_cast(g, dv, grad_dtype(from)));
}

/* The sum of dv over `axes`, with what is constant along them taken out
 * of it: sum(-a) is -sum(a), bit for bit, and sum(a * s), s broadcast
 * from the sum's own shape (a row's rstd in a norm's gradient), is
 * sum(a) * s, within a rounding (the product is rounded once, not once an
 * element).  A layernorm's gradient then sums dy * w in the row's first
 * level, not after its rstd: two levels of reductions, not three, as
 * torch's own layernorm backward computes it. */
static Value *sum_over(Grad *g, Value *dv, uint32_t axes) {
  if (dv->op == IR_UNARY && dv->uop == UN_NEG)
    return neg(g, sum_over(g, dv->args[0], axes));
  if (dv->op == IR_BINARY && dv->bop == BIN_MUL && dtype_is_float(dv->dtype)) {
    Shape sh = grad_reduced_shape(&dv->shape, axes);
    for (int k = 0; k < 2; k++) {
      const Value *b = dv->args[k];
      if (b->op == IR_BROADCAST && grad_stretches_to(&b->args[0]->shape, &sh))
        return mul(g, sum_over(g, dv->args[1 - k], axes), b->args[0]);
    }
  }
  return grad_reduce(g, RED_SUM, dv, axes);
}

/* The sum over the axes the broadcast stretched (those it added in front
 * stay as 1s). */
static void d_broadcast(Grad *g, const Value *v, Value *dv) {
  const Shape *a = &v->args[0]->shape, *d = &dv->shape;
  uint32_t axes = 0;
  for (int i = 0; i < d->rank; i++) {
    int j = i - (d->rank - a->rank);
    int one = d->d[i].var < 0 && d->d[i].size == 1;
    int from_one = j < 0 || (a->d[j].var < 0 && a->d[j].size == 1);
    if (!one && from_one)
      axes |= 1u << i;
  }
  grad_push(g, v, 0, axes ? sum_over(g, dv, axes) : dv);
}

/* The cotangent of a take as it is gathered back to x's positions, one
 * affine axis at a time (shape: the take's, with those axes x's), the
 * general axes' indices gathered alike, and where that is in range. */
typedef struct TakeBack {
  Value *d;                     /* the cotangent gathered so far */
  Value *index[TECC_MAX_RANK];  /* the general axes' indices, by slot j */
  Value *ok;                    /* the positions some element read, or NULL */
  Shape shape;                  /* d's and the indices' */
  int shift;                    /* the take's axis a is axis a + shift of d: the
                                   1s a broadcast's gradient keeps in front */
} TakeBack;

static Value *and_fit(Grad *g, Value *a, Value *b, const Shape *full) {
  return a ? grad_binary(g, BIN_AND, grad_fit(g, a, full), grad_fit(g, b, full)) : b;
}

/* A slice's or a concat's axis (index start + step * k, k < n): position
 * p of x gets dy gathered at k = (p - start) / step where that is a whole
 * number in [0, n), else 0 (language.md §9.8). */
static int d_affine(Grad *g, const Value *v, TakeBack *b, const Shape *full, int j) {
  const TakeAxis t = ir_take_get(v, j);
  const int axis = t.axis + b->shift;
  Value *d = grad_binary(g, BIN_SUB, grad_index(g, full, axis), grad_re(g, t.start));
  Value *k = t.step == 1 ? d : grad_binary(g, BIN_FLOORDIV, d, grad_const(g, DT_I64, (double)t.step));
  Value *ok = grad_binary(g, BIN_AND, grad_binary(g, BIN_GE, d, grad_const(g, DT_I64, 0.0)),
                          grad_binary(g, BIN_LT, k, grad_dim(g, v->shape.d[t.axis])));
  if (t.step != 1) {
    Value *r = grad_binary(g, BIN_MOD, d, grad_const(g, DT_I64, (double)t.step));
    ok = grad_binary(g, BIN_AND, ok, grad_binary(g, BIN_EQ, r, grad_const(g, DT_I64, 0.0)));
  }
  Shape to = b->shape;
  to.d[axis] = full->d[axis];
  Gather at = gather_new(g->a, g->k, grad_fit(g, k, &to), axis, &to);
  at.loc = g->loc;
  at.along = k;
  Value *dk = gather_value(&at, grad_fit(g, b->d, &b->shape));
  for (int i = 0; dk && i < ir_take_naxes(v); i++)
    if (b->index[i] && !(b->index[i] = gather_value(&at, b->index[i])))
      dk = NULL;
  if (!dk) {
    if (!g->failed)
      diag_error(g->diags, v->loc, "the gradient of this slice or concat would gather its cotangent "
                 "through a take along another axis, or from an output declared without the value's "
                 "axes of size 1; this is not supported");
    g->failed = 1;
    return 0;
  }
  b->d = dk;
  b->shape = to;
  b->ok = and_fit(g, b->ok, ok, full);
  return 1;
}

/* A general axis with one index (sema refuses more: a scatter-add):
 * where(index(x, axis) == i, dy, 0), i gathered back to x's positions
 * along the affine axes. */
static void d_general(Grad *g, const Value *v, TakeBack *b, const Shape *full, int j) {
  Value *pos = grad_fit(g, grad_index(g, full, ir_take_axis(v, j) + b->shift), full);
  Value *at = grad_binary(g, BIN_EQ, pos, grad_fit(g, b->index[j], full));
  b->ok = and_fit(g, b->ok, at, full);
}

/* A take with more than one index along its axis: its gradient is a
 * scatter-add.  Sema refuses such takes in the kernels it checks
 * (differentiable_gathers() in lib/sema.c); the one left is a gradient's
 * own gather of a slice's or concat's cotangent (d_affine), met when a
 * gradient kernel is differentiated again. */
static void scattering_take(Grad *g) {
  if (!g->f->grad_of)
    internal_error("grad: a take of %s with more than one index reached the grad pass", g->f->name);
  if (!g->failed)
    diag_error(g->diags, g->loc, "cannot differentiate '%s', the gradient of '%s', again: it gathers a "
               "slice's or concat's cotangent at several positions, and the gradient of that gather is a "
               "scatter-add, which is not supported", g->f->name, g->f->grad_of);
  g->failed = 1;
}

/* take along its axes (language.md §9.7, §9.8): dx is dy back at the
 * positions each element read, 0 elsewhere, summed over the axes x is
 * broadcast along: the affine axes' maps inverted one after another
 * (d_affine), then the general axes' picks (d_general). */
static void d_take(Grad *g, const Value *v, Value *dv) {
  const KernelInput *x = &g->f->inputs[v->index];
  const int n = ir_take_naxes(v), shift = dv->shape.rank - v->shape.rank;
  TakeBack b = {dv, {0}, NULL, dv->shape, shift};
  if (shift < 0)
    internal_error("grad: the cotangent of a take has a lower rank than the take");
  for (int i = 0; i < v->shape.rank; i++) /* the take's shape, with dv's 1s in front */
    b.shape.d[i + shift] = v->shape.d[i];
  Shape full = b.shape;
  const int off = full.rank - x->shape.rank;
  for (int j = 0; j < n; j++) {
    const int axis = ir_take_axis(v, j) + shift;
    if (!ir_take_step(v, j) && (full.d[axis].var >= 0 || full.d[axis].size != 1)) {
      scattering_take(g);
      return;
    }
    full.d[axis] = x->shape.d[axis - off];
    if (!ir_take_step(v, j))
      b.index[j] = grad_re(g, ir_take_index(v, j));
  }
  for (int j = 0; j < n; j++)
    if (ir_take_step(v, j) && !d_affine(g, v, &b, &full, j))
      return;
  for (int j = 0; j < n; j++)
    if (!ir_take_step(v, j))
      d_general(g, v, &b, &full, j);
  Value *d = grad_select(g, grad_fit(g, b.ok, &full), grad_fit(g, b.d, &full), grad_const(g, dv->dtype, 0.0));
  uint32_t axes = 0;
  for (int i = 0; i < full.rank; i++) {
    int j = i - off;
    int from_one = j < 0 || (x->shape.d[j].var < 0 && x->shape.d[j].size == 1);
    if (from_one && !(full.d[i].var < 0 && full.d[i].size == 1))
      axes |= 1u << i;
  }
  grad_push_input(g, v->index, axes ? sum_over(g, d, axes) : d);
}

static void d_select(Grad *g, const Value *v, Value *dv) {
  Value *c = arg(g, v, 0);
  if (grad_wants(g, v, 1))
    grad_push(g, v, 1, only(g, c, dv));
  if (grad_wants(g, v, 2))
    grad_push(g, v, 2, except(g, c, dv));
}

/* ---- the tables --------------------------------------------------------- */

typedef void Rule(Grad *g, const Value *v, Value *dv);

static Rule *const unary_rules[UN_COUNT] = {
#define X(e, name, kind, d) [UN_##e] = d,
    TECC_UNARY_BUILTINS(X)
#undef X
    [UN_NEG] = d_neg,
    [UN_NOT] = d_none,
    [UN_DETACH] = d_none,
    [UN_NORMCDF] = d_normcdf,
};

static Rule *const binary_rules[BIN_COUNT] = {
#define X(e, spelling, kind, d) [BIN_##e] = d,
    TECC_BINARY_OPS(X)
#undef X
};

static Rule *const reduce_rules[RED_COUNT] = {
#define X(e, name, d) [RED_##e] = d,
    TECC_REDUCTIONS(X)
#undef X
};

void grad_rule(Grad *g, const Value *v, Value *dv) {
  switch (v->op) {
  case IR_INPUT:
  case IR_CONST:
  case IR_SIZE:
  case IR_INDEX: return; /* integers of no input: no gradient */
  case IR_TAKE: d_take(g, v, dv); return;
  case IR_CAST: d_cast(g, v, dv); return;
  case IR_BROADCAST: d_broadcast(g, v, dv); return;
  case IR_SELECT: d_select(g, v, dv); return;
  case IR_UNARY: unary_rules[v->uop](g, v, dv); return;
  case IR_BINARY: binary_rules[v->bop](g, v, dv); return;
  case IR_REDUCE: reduce_rules[v->rop](g, v, dv); return;
  default: internal_error("grad: no rule for IR op %d", (int)v->op);
  }
}
