/* fold.h — evaluation of one scalar operation at compile time, with the
 * dtype semantics of doc/language.md §6, §8, §9.4 (integer wrap, Python // and %, exact
 * integer **, saturating casts, rounding to f32/f16/bf16).  Used by sema for
 * weak literals (computed as i64/f64) and by opt.c for constant folding. */
#ifndef TECC_FOLD_H
#define TECC_FOLD_H

#include <stdint.h>
#include "ops.h"

/* A scalar of some dtype: `i` for bool and integers, `f` for floats. */
typedef struct Scalar {
  int64_t i;
  double f;
} Scalar;

double fold_round(DType t, double x);     /* to the nearest value of t */
int64_t fold_wrap(DType t, int64_t x);    /* wrap to i8, u8, i32, or bool x != 0 */
void fold_int_range(DType t, int64_t *lo, int64_t *hi); /* bool and integer dtypes */
double scalar_as_double(DType t, Scalar s);
Scalar fold_cast(DType from, Scalar s, DType to);

/* Unary op on operand dtype t giving dtype rt (bool for predicates). */
Scalar fold_unary(UnaryOp op, DType t, DType rt, Scalar a);
/* Binary op on operands of dtype t (comparisons and logic give bool). */
Scalar fold_binary(BinaryOp op, DType t, Scalar a, Scalar b);

/* Integer power with language.md semantics (wraps to t). */
int64_t fold_ipow(DType t, int64_t base, int64_t exp);

#endif
