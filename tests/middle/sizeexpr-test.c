/* sizeexpr-test.c — canonical forms and the prover of size expressions
 * (lib/sizeexpr.c, language.md §9.8).  Each expectation is numpy's length
 * of a slice or an identity of integer arithmetic, checked by hand; the
 * prover's claims are also checked by evaluating both sides over a grid of
 * sizes (0 included), so a wrong "proved" cannot pass. */
#include <string.h>

#include "sizeexpr.h"
#include "tap.h"

static Arena *a;
static const char *const names[] = {"N", "D", "M"};

static const SizeExpr *v(int i) { return se_var(a, i); }
static const SizeExpr *k(int64_t c) { return se_const(a, c); }

static void is_text(const SizeExpr *e, const char *want, const char *what) {
  const char *got = se_te(a, e, names);
  if (!ok(strcmp(got, want) == 0, "%s: %s", what, want))
    diag("got '%s'", got);
}

/* x >= 0 at every N, D, M in [0, 40): what a proof must imply. */
static int holds(const SizeExpr *x) {
  for (int64_t n = 0; n < 40; n++)
    for (int64_t d = 0; d < 40; d++)
      for (int64_t m = 0; m < 40; m += 13) {
        int64_t s[] = {n, d, m};
        if (se_eval(x, s) < 0)
          return 0;
      }
  return 1;
}

static void proves(const SizeExpr *x, int want, const char *what) {
  int got = se_nonneg(a, x);
  ok(got == want && (!got || holds(x)), "%s %s", what, want ? "is proved >= 0" : "is not proved");
}

static void canonical(void) {
  const SizeExpr *D = v(1), *half = se_floordiv(a, D, 2);
  is_text(half, "D // 2", "D // 2");
  is_text(se_add(a, half, se_sub(a, D, half)), "D", "D // 2 + (D - D // 2)");
  is_text(se_sub(a, D, half), "D - D // 2", "the upper half");
  is_text(se_scale(a, half, -1), "-(D // 2)", "a negated quotient keeps its parentheses");
  is_text(se_floordiv(a, se_add(a, se_scale(a, v(0), 2), se_add(a, D, k(5))), 2), "N + (D + 1) // 2 + 2",
          "(2N + D + 5) // 2: the multiples of 2 come out");
  is_text(se_floordiv(a, se_scale(a, D, 4), 2), "2 * D", "(4D) // 2");
  is_text(se_mul(a, se_add(a, v(0), k(1)), D), "D + N * D", "(N + 1) * D distributes");
  ok(se_cmp(se_mul(a, v(0), D), se_mul(a, D, v(0))) == 0, "N * D is D * N");
  is_text(se_min(a, k(3), se_add(a, D, k(3))), "3", "min(3, D + 3) is 3");
  is_text(se_min(a, D, k(3)), "min(3, D)", "min(D, 3) stays, its operands in order");
  is_text(se_max(a, se_sub(a, D, k(2)), k(0)), "max(0, D - 2)", "max(D - 2, 0) stays");
  int64_t c = 0;
  ok(se_is_const(se_floordiv(a, k(-7), 2), &c) && c == -4, "-7 // 2 is -4 (Python's floor)");
  ok(se_as_var(se_sub(a, se_add(a, D, v(0)), v(0))) == 1, "D + N - N is the variable D");
}

static void prover(void) {
  const SizeExpr *D = v(1), *half = se_floordiv(a, D, 2);
  proves(se_sub(a, D, half), 1, "D - D // 2");
  proves(se_sub(a, half, D), 0, "D // 2 - D");
  proves(se_sub(a, D, k(1)), 0, "D - 1 (D may be 0)");
  proves(se_sub(a, se_add(a, se_scale(a, half, 2), k(1)), D), 1, "2 * (D // 2) + 1 - D");
  proves(se_sub(a, D, se_scale(a, half, 2)), 1, "D - 2 * (D // 2)");
  proves(se_sub(a, se_min(a, k(3), D), k(3)), 0, "min(3, D) - 3");
  proves(se_sub(a, k(3), se_min(a, k(3), D)), 1, "3 - min(3, D)");
  proves(se_sub(a, D, se_min(a, k(3), D)), 1, "D - min(3, D)");
  proves(se_sub(a, se_max(a, k(0), se_sub(a, D, k(3))), se_sub(a, D, k(3))), 1, "max(0, D - 3) - (D - 3)");
  /* x[:, -3:] has D - max(0, D - 3), which is min(3, D): both ways */
  const SizeExpr *tail = se_sub(a, D, se_max(a, k(0), se_sub(a, D, k(3)))), *three = se_min(a, k(3), D);
  proves(se_sub(a, tail, three), 1, "D - max(0, D - 3) - min(3, D)");
  proves(se_sub(a, three, tail), 1, "min(3, D) - (D - max(0, D - 3))");
  /* x[:, ::2] and x[:, :(D + 1) // 2] have the same length: the quotient's
   * bound needs the integrality of x (d*x + d - 1 >= 0) */
  const SizeExpr *up = se_floordiv(a, se_add(a, D, k(1)), 2), *cut = se_min(a, D, up);
  proves(se_sub(a, up, cut), 1, "(D + 1) // 2 - min(D, (D + 1) // 2)");
  proves(se_sub(a, cut, up), 1, "min(D, (D + 1) // 2) - (D + 1) // 2");
  proves(se_sub(a, se_floordiv(a, D, 3), se_floordiv(a, se_add(a, D, k(1)), 3)), 0, "D // 3 - (D + 1) // 3");
}

static void evaluation(void) {
  int64_t s[] = {5, 7, 0};
  const SizeExpr *D = v(1);
  const SizeExpr *len = se_max(a, k(0), se_floordiv(a, se_add(a, se_sub(a, D, se_min(a, k(1), D)), k(1)), 2));
  ok(se_eval(len, s) == 3, "x[1::2] of 7 elements has 3");
  s[1] = 0;
  ok(se_eval(len, s) == 0, "x[1::2] of 0 elements has 0");
  const SizeExpr *sub[] = {k(4), se_floordiv(a, v(0), 3), k(0)};
  is_text(se_subst(a, se_floordiv(a, se_add(a, D, v(0)), 2), sub), "N // 3 // 2 + 2",
          "substitution brings the form back to canonical: (N // 3 + 4) // 2");
  is_text(se_subst(a, se_sub(a, D, se_floordiv(a, D, 2)), (const SizeExpr *[]){k(0), k(9), k(0)}), "5",
          "D - D // 2 at D = 9 is 5");
  const char *c = se_c(a, se_floordiv(a, se_sub(a, D, k(3)), 2), names);
  ok(strcmp(c, "(D + 1) / 2 - 2") == 0, "C of (D - 3) // 2 divides what is >= 0: %s", c);
  c = se_c(a, se_floordiv(a, se_sub(a, D, se_scale(a, v(0), 3)), 2), names);
  ok(strcmp(c, "tecc::size_floordiv(-3 * N + D, 2)") == 0, "C of (D - 3 * N) // 2 floors: %s", c);
  c = se_c(a, se_floordiv(a, D, 2), names);
  ok(strcmp(c, "D / 2") == 0, "C of D // 2 divides: %s", c);
  c = se_ident(a, se_sub(a, D, se_floordiv(a, D, 2)), names);
  ok(strcmp(c, "D_minus_D_div_2") == 0, "identifier of D - D // 2: %s", c);
  c = se_ident(a, se_add(a, se_scale(a, D, 2), k(2)), names);
  ok(strcmp(c, "size_2_times_D_plus_2") == 0, "identifier of 2 * D + 2 starts with a letter: %s", c);
  c = se_ident(a, se_floordiv(a, se_add(a, D, k(1)), 2), names);
  ok(strcmp(c, "D_plus_1_div_2") == 0, "identifier of (D + 1) // 2: no leading or doubled underscore: %s", c);
}

/* Constants that leave int64 mark the form (sema reports it), with no
 * undefined arithmetic on the way (the sanitizer build runs this). */
static void overflow(void) {
  const SizeExpr *D = v(1), *big = se_scale(a, D, INT64_MAX);
  ok(!big->overflow, "D * INT64_MAX fits");
  ok(se_scale(a, big, 2)->overflow, "D * INT64_MAX * 2 overflows");
  ok(se_add(a, k(INT64_MAX), k(1))->overflow, "INT64_MAX + 1 overflows");
  ok(se_mul(a, se_add(a, D, v(0)), se_scale(a, D, INT64_MAX))->overflow == 0, "(D + N) * (INT64_MAX * D) fits");
  ok(se_mul(a, se_scale(a, v(0), 2), se_scale(a, D, INT64_MAX))->overflow, "(2 * N) * (INT64_MAX * D) overflows");
  ok(se_add(a, se_floordiv(a, se_scale(a, big, 2), 3), D)->overflow, "an overflow stays through // and +");
  ok(!se_nonneg(a, se_add(a, se_scale(a, big, 2), k(1))), "the prover proves nothing of an overflowed form");
  ok(se_is_const(se_floordiv(a, k(INT64_MIN), 3), &(int64_t){0}), "INT64_MIN // 3 is computed without overflow");
  is_text(se_scale(a, D, INT64_MIN), "-9223372036854775808 * D", "INT64_MIN * D prints");
}

int main(void) {
  a = arena_new();
  canonical();
  prover();
  evaluation();
  overflow();
  arena_free(a);
  return done_testing();
}
