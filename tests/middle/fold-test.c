/* fold-test.c — compile-time scalar semantics (lib/fold.c): rounding to
 * f32/f16/bf16, integer wrap, Python // and %, exact integer **, saturating
 * casts.  Expected values are worked out by hand from IEEE 754 and
 * language.md §6, §8 and §9.4. */
#include <math.h>

#include "fold.h"
#include "tap.h"

static int is_double(double got, double want, const char *what) {
  int same = (isnan(got) && isnan(want)) ||
             (got == want && signbit(got) == signbit(want));
  if (!ok(same, "%s", what))
    diag("got %.17g, expected %.17g", got, want);
  return same;
}

static void rounding(void) {
  is_double(fold_round(DT_F16, 65504.0), 65504.0, "f16 max");
  is_double(fold_round(DT_F16, 65519.0), 65504.0, "f16 65519 rounds down");
  is_double(fold_round(DT_F16, 65520.0), INFINITY, "f16 65520 overflows");
  is_double(fold_round(DT_F16, -1e6), -INFINITY, "f16 -1e6 overflows");
  is_double(fold_round(DT_F16, 0.1), 0.0999755859375, "f16 0.1");
  is_double(fold_round(DT_F16, ldexp(1, -24)), ldexp(1, -24), "f16 min subnormal");
  is_double(fold_round(DT_F16, ldexp(1, -25)), 0.0, "f16 half the min subnormal: tie to 0");
  is_double(fold_round(DT_F16, ldexp(3, -26)), ldexp(1, -24), "f16 0.75 min subnormal rounds up");
  is_double(fold_round(DT_F16, 1.0 + ldexp(1, -11)), 1.0, "f16 tie to even (down)");
  is_double(fold_round(DT_F16, 1.0 + ldexp(3, -11)), 1.0 + ldexp(1, -9), "f16 tie to even (up)");
  is_double(fold_round(DT_F16, -0.0), -0.0, "f16 keeps -0");
  is_double(fold_round(DT_BF16, 1.00390625), 1.0, "bf16 tie to even (down)");
  is_double(fold_round(DT_BF16, 1.01171875), 1.015625, "bf16 tie to even (up)");
  is_double(fold_round(DT_BF16, 3.0e38), ldexp(226, 120), "bf16 3e38");
  is_double(fold_round(DT_BF16, 3.5e38), INFINITY, "bf16 overflow");
  is_double(fold_round(DT_F32, 0.1), (double)0.1f, "f32 0.1");
  is_double(fold_round(DT_F32, NAN), NAN, "f32 NaN");
}

static void integers(void) {
  Scalar a = {7, 0}, b = {-2, 0}, z = {0, 0}, m = {-7, 0}, t = {3, 0};
  is_int(fold_binary(BIN_FLOORDIV, DT_I32, a, b).i, -4, "7 // -2");
  is_int(fold_binary(BIN_MOD, DT_I32, a, b).i, -1, "7 %% -2");
  is_int(fold_binary(BIN_MOD, DT_I32, m, t).i, 2, "-7 %% 3");
  is_int(fold_binary(BIN_FLOORDIV, DT_I32, m, t).i, -3, "-7 // 3");
  is_int(fold_binary(BIN_FLOORDIV, DT_I32, a, z).i, 0, "7 // 0");
  is_int(fold_binary(BIN_MOD, DT_I64, a, z).i, 0, "7 %% 0");
  Scalar imin = {INT32_MIN, 0}, neg1 = {-1, 0};
  is_int(fold_binary(BIN_FLOORDIV, DT_I32, imin, neg1).i, INT32_MIN, "i32 min // -1 wraps");
  Scalar imax = {INT32_MAX, 0}, one = {1, 0};
  is_int(fold_binary(BIN_ADD, DT_I32, imax, one).i, INT32_MIN, "i32 max + 1 wraps");
  is_int(fold_binary(BIN_MUL, DT_I64, (Scalar){INT64_MAX, 0}, (Scalar){2, 0}).i, -2, "i64 wrap");
  is_int(fold_ipow(DT_I32, 3, 4), 81, "3 ** 4");
  is_int(fold_ipow(DT_I32, 2, 31), INT32_MIN, "2 ** 31 wraps in i32");
  is_int(fold_ipow(DT_I32, 2, -1), 0, "2 ** -1");
  is_int(fold_ipow(DT_I32, -1, -3), -1, "-1 ** -3");
  is_int(fold_ipow(DT_I32, 1, -5), 1, "1 ** -5");
  is_int(fold_ipow(DT_I64, 0, 0), 1, "0 ** 0");
  is_int(fold_unary(UN_ABS, DT_I32, DT_I32, imin).i, INT32_MIN, "abs(i32 min) wraps");
  is_int(fold_unary(UN_SIGN, DT_I64, DT_I64, m).i, -1, "sign(-7)");
}

static void floats(void) {
  Scalar a = {0, 7.5}, b = {0, -2.0}, z = {0, 0.0};
  is_double(fold_binary(BIN_FLOORDIV, DT_F64, a, b).f, -4.0, "7.5 // -2.0");
  is_double(fold_binary(BIN_MOD, DT_F64, a, b).f, -0.5, "7.5 %% -2.0");
  is_double(fold_binary(BIN_MOD, DT_F64, (Scalar){0, -0.0}, (Scalar){0, 3.0}).f, 0.0, "-0.0 %% 3.0 is +0");
  is_double(fold_binary(BIN_FLOORDIV, DT_F64, a, z).f, INFINITY, "7.5 // 0.0");
  is_double(fold_binary(BIN_MAXIMUM, DT_F32, a, (Scalar){0, NAN}).f, NAN, "maximum propagates NaN");
  is_double(fold_unary(UN_ROUND, DT_F64, DT_F64, (Scalar){0, 2.5}).f, 2.0, "round half to even");
  is_double(fold_unary(UN_ROUND, DT_F64, DT_F64, (Scalar){0, -3.5}).f, -4.0, "round -3.5");
  is_double(fold_unary(UN_RELU, DT_F32, DT_F32, (Scalar){0, NAN}).f, NAN, "relu(NaN)");
  is_double(fold_unary(UN_SIGN, DT_F32, DT_F32, (Scalar){0, -0.0}).f, -0.0, "sign(-0.0)");
  is_int(fold_unary(UN_ISFINITE, DT_F32, DT_BOOL, (Scalar){0, INFINITY}).i, 0, "isfinite(inf)");
}

static void casts(void) {
  is_int(fold_cast(DT_F64, (Scalar){0, 3e10}, DT_I32).i, INT32_MAX, "f64 3e10 -> i32 saturates");
  is_int(fold_cast(DT_F64, (Scalar){0, -3e10}, DT_I32).i, INT32_MIN, "f64 -3e10 -> i32 saturates");
  is_int(fold_cast(DT_F64, (Scalar){0, 1e300}, DT_I64).i, INT64_MAX, "f64 1e300 -> i64 saturates");
  is_int(fold_cast(DT_F32, (Scalar){0, NAN}, DT_I64).i, 0, "NaN -> i64 is 0");
  is_int(fold_cast(DT_F32, (Scalar){0, -2.9}, DT_I32).i, -2, "-2.9 -> i32 truncates");
  is_int(fold_cast(DT_F32, (Scalar){0, NAN}, DT_BOOL).i, 1, "NaN -> bool is true");
  is_int(fold_cast(DT_I64, (Scalar){4294967297LL, 0}, DT_I32).i, 1, "i64 -> i32 wraps");
  is_int(fold_cast(DT_I32, (Scalar){-3, 0}, DT_BOOL).i, 1, "-3 -> bool");
  is_int(fold_cast(DT_F32, (Scalar){0, 200.5}, DT_I8).i, 127, "200.5 -> i8 saturates");
  is_int(fold_cast(DT_F32, (Scalar){0, -0.9}, DT_U8).i, 0, "-0.9 -> u8 truncates to 0");
  is_int(fold_cast(DT_F32, (Scalar){0, -7}, DT_U8).i, 0, "-7.0 -> u8 saturates");
  is_int(fold_cast(DT_I32, (Scalar){-1, 0}, DT_U8).i, 255, "-1 -> u8 wraps");
  is_int(fold_cast(DT_I64, (Scalar){384, 0}, DT_I8).i, -128, "384 -> i8 wraps");
  is_double(fold_round(DT_F8E4M3, 470.0), NAN, "e4m3 470 rounds past 448: NaN");
  is_double(fold_round(DT_F8E4M3, -464.0), -448.0, "e4m3 -464 ties down to -448");
  is_double(fold_round(DT_F8E5M2, 61440.0), INFINITY, "e5m2 61440 overflows");
  is_double(fold_round(DT_F8E5M2, 0.3), 0.3125, "e5m2 0.3");
  is_double(fold_cast(DT_I64, (Scalar){16777217, 0}, DT_F32).f, 16777216.0, "i64 -> f32 rounds");
}

int main(void) {
  plan(17 + 17 + 10 + 9 + 9);
  rounding();
  integers();
  floats();
  casts();
  return exit_status();
}
