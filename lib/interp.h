/* interp.h — the reference interpreter: evaluates a Kernel of lib/ir.h.
 *
 * The oracle of every numerical test (doc/design.md).  Floats are computed in
 * float64, integers and bools in int64 (wrapped to the value's dtype after
 * each operation), and values are rounded only where they are stored: at
 * outputs, and at explicit casts to f32/f16/bf16 (round to nearest even).
 * Semantics are doc/language.md §6-§10 exactly: Python // and %, exact integer
 * **, saturating float->int casts, NaN-propagating max/min, first-index
 * argmax, identities over empty axes.
 *
 * Buffers are dense row-major in their storage format (doc/abi.md §2, §4): uint8
 * bool, int32, int64, uint16 bit patterns for f16/bf16, float, double.  A
 * rank-0 input is a pointer to one element.  The interpreter allocates its
 * own scratch with malloc and frees it before returning; it never prints. */
#ifndef TECC_INTERP_H
#define TECC_INTERP_H

#include <stdint.h>
#include "ir.h"

/* The values of doc/abi.md §3 (tecc_status), for code that has no generated
 * header at hand. */
enum {
  INTERP_SUCCESS = 0,
  INTERP_INVALID_VALUE = 1,   /* negative size, size product overflows */
  INTERP_EMPTY_REDUCTION = 3, /* argmax/argmin over an empty axis */
  INTERP_OUT_OF_MEMORY = 4    /* malloc failed */
};

/* Evaluates kernel `k` with its run-time sizes (k->nsizevars of them, in
 * signature order: the parameters', then the derived sizes', which it
 * computes again from the parameters: ir_derive_sizes()).  inputs[i] / outputs[j] point to the buffers of
 * k->inputs[i] / k->outputs[j].  When outputs_f64 is non-NULL, each non-NULL
 * outputs_f64[j] receives output j before its final rounding (as doubles;
 * integers converted).  On any status but INTERP_SUCCESS nothing has been
 * written.  Returns an INTERP_* status. */
int interp_kernel(const Kernel *k, const int64_t *sizes,
                  const void *const *inputs, void *const *outputs,
                  double *const *outputs_f64);

/* interp_kernel, and when outputs_mag is non-NULL, each non-NULL
 * outputs_mag[j] receives the magnitude bound `mag` of output j's elements
 * (doc/abi.md §6, "Outputs that cancel"): the scale of the rounding
 * error a correct float evaluation may carry, so that
 *   |out - ref| <= atol + rtol * (|ref| + mag).
 * Integer and bool outputs get 0 where the element is certain (compared
 * exactly) and INFINITY where it is uncertain (Steps, below).  Without
 * outputs_mag nothing extra is computed.
 *
 * mag is computed in float64 beside every float value, from its operands'
 * (an integer or bool operand, exact, counts with its own |value|).  It is
 * the first-order forward error bound of the arithmetic: if every operand
 * is off by at most e * mag(operand), the result is off by about e * mag.
 * The rules (a, b operands, f the result, m() their bounds):
 *   input, constant          |f|
 *   cast, broadcast, neg,    m(a): copies (select: the chosen operand's;
 *   abs, relu, select        a cast that rounds is covered by rtol * |ref|)
 *   a + b, a - b             m(a) + m(b)
 *   a * b                    m(a) * m(b)
 *   a / b                    (m(a) + |f| * m(b)) / |b|
 *   a // b                   as a / b
 *   a % b                    m(a) + |a // b| * m(b)
 *   a ** b                   |f| + |b * a^(b-1)| * m(a) + |f * log|a|| * m(b)
 *   maximum, minimum         max(m(a), m(b))
 *   atan2(a, b)              |f| + (|b| m(a) + |a| m(b)) / (a^2 + b^2)
 *   smooth unary f(a)        |f| + |f'(a)| * m(a) (exp, log, sqrt, rsqrt,
 *                            trig, hyperbolic, erf, sigmoid, gelu, silu,
 *                            softplus, ...; the derivative in closed form)
 *   floor, ceil, round,      m(a): exact between steps (inf near one:
 *   trunc                    Steps, below)
 *   sign                     |f| (inf near 0: Steps)
 *   sum of K terms           L(K) * sum of m(t), L(K) = log2(K) (the depth
 *                            of a pairwise tree), 1 when K <= 2
 *   mean                     L(K) * sum of m(t) / K
 *   prod                     L(K) * product of m(t); inf where the
 *                            product of max(1, m(t)), the bound of its
 *                            partial products, passes the range
 *   max, min                 the largest m(t)
 *   var (mean((x-mean)^2))   the composition: L(K) * sum (m(x)+m(mean))^2 / K
 * Every bound is at least |f|; a product of bounds where one is 0 (an
 * exact zero) is 0; a NaN bound (0 * inf at a singularity) gives inf, no
 * bound, and so does a non-finite value (abi.md compares those exactly).
 * A computed value whose bound passes the largest finite number of its
 * arithmetic (FLT_MAX for f32, f16 and bf16, which compute in f32; for a
 * sum, mean, var or prod the bound of its partial results, before the
 * mean's division; for prod the product of max(1, m(t))) gets inf too: a
 * correct f32 evaluation may overflow there (an f32 sum of squares near
 * 1e38) where the float64 reference does not, so the reference says
 * nothing about the result.
 * An RED_VAR (which lowering never emits) gets the bound of the two means
 * lowering spells it with.
 *
 * Steps.  Every element is also exact or not: exact when a correct
 * evaluation computes the very same value.  Exact are inputs, constants,
 * sizes and positions; neg, abs, relu, maximum, minimum, selects,
 * broadcasts and takes of exact values; casts of exact values (a cast
 * rounds to nearest, ties to even: one value in every evaluation); add,
 * sub, mul, and division by a power of two of exact values whose true result
 * the arithmetic's dtype holds as a normal number; max and min, and sums,
 * means of a power-of-two count and products of exact terms where no
 * partial result rounds in any order (a sum of multiples of 2^e below
 * 2^(24 + e) in f32; a product of powers of two and one other term);
 * certain integers and bools; and the step functions' results below,
 * unless ambiguous.
 * A step function of an argument a that is not exact, within
 *   d = atol + rtol * (|a| + m(a))
 * (abi.md §6's tolerance of a's arithmetic: f64's for f64, f32's for the
 * rest) of a discontinuity is ambiguous: a correct evaluation may land on
 * either side.  A float result then gets inf, an integer or bool one is
 * uncertain.  The discontinuities: round at half-integers; floor, ceil at
 * integers; trunc, and casts of floats to integers, at nonzero integers
 * (in the dtype's range: saturation is continuous); casts to bool and sign
 * at 0; a // b and a % b where a is k * b, within d(a) + |k| d(b); a
 * comparison a op b where |a - b| <= d(a) + d(b) (d of an exact operand 0;
 * an exact pair is never ambiguous), but a value compared with its own max
 * or min (a == max(a), the gradient of max) only in a row where another
 * term lies within the slacks of the extreme, and there only at the terms
 * that do; argmax, argmin where another term is within d of the best.  An
 * a without a bound (inf) is always near.
 * What follows from an uncertain value is uncertain too: an integer or bool
 * operation, reduction or take with an uncertain operand or index is; a
 * float computed from one (a cast, a take) gets inf, as does a select whose
 * condition is uncertain and whose branches differ by more than their
 * slacks (closer, it keeps a bound that holds either branch); isnan,
 * isinf, isfinite of a computed value without a bound are uncertain. */
int interp_kernel_mag(const Kernel *k, const int64_t *sizes,
                      const void *const *inputs, void *const *outputs,
                      double *const *outputs_f64, double *const *outputs_mag);

/* The size of a dim with the given run-time sizes. */
int64_t interp_dim(const Dim *d, const int64_t *sizes);
/* Element count of a shape; -1 when a size is negative or it overflows. */
int64_t interp_numel(const Shape *s, const int64_t *sizes);

/* The largest number of elements any single output element of output j
 * accumulates through nested reductions (1 when there is none): the K of
 * abi.md §6's log2(K) tolerance growth. */
double interp_reduction_extent(const Kernel *k, int j, const int64_t *sizes);

/* Storage conversions. */
double interp_round_f16(double x);  /* to the nearest f16 value, ties even */
double interp_round_bf16(double x); /* to the nearest bf16 value, ties even */
uint16_t interp_f16_bits(double x); /* rounds, then encodes */
uint16_t interp_bf16_bits(double x);
double interp_f16_value(uint16_t bits);
double interp_bf16_value(uint16_t bits);
/* f8e4m3 and f8e5m2 (PyTorch's float8_e4m3fn and float8_e5m2): rounded
 * through f32 as PyTorch's casts are (fold_round), NaN keeps its sign. */
uint8_t interp_f8_bits(DType t, double x);
double interp_f8_value(DType t, uint8_t bits);

/* Element i of a buffer of dtype t, as a double (integers converted). */
double interp_load(DType t, const void *buf, int64_t i);
/* Stores x (rounded/converted to t; floats to integers saturate, NaN -> 0)
 * as element i of a buffer of dtype t. */
void interp_store(DType t, void *buf, int64_t i, double x);

#endif
