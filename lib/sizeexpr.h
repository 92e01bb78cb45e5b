/* sizeexpr.h — size expressions and their canonical form
 * (doc/language.md §9.8).
 *
 * A slice's size (`D // 2`, `D - D // 2`) is an integer expression of
 * literals and size variables.  Two sizes are the same when their
 * canonical forms are: a constant plus a sum of integer multiples of
 * atoms, the atoms being size variables and the parts that are not
 * linear (`E // c`, a product of two such forms, `min`, `max`), sorted
 * and with no zero coefficient.  So `D // 2 + (D - D // 2)` is `D`.
 *
 * Expressions are values: every operation returns a new canonical form
 * in the arena and never changes its operands.  Size variables are
 * numbered by the caller (sema's numbering, then lowering's) and are
 * never negative: every size is >= 0, which the prover uses. */
#ifndef TECC_SIZEEXPR_H
#define TECC_SIZEEXPR_H

#include <stdint.h>
#include "arena.h"
#include "ops.h"

typedef enum SizeAtomKind {
  SA_VAR, /* size variable `var` */
  SA_DIV, /* a // d (d >= 2, a not provably a multiple of d) */
  SA_MUL, /* a * b (neither constant; a sorts before b) */
  SA_MIN, /* min(a, b) (neither provably smaller; a sorts before b) */
  SA_MAX  /* max(a, b) (likewise) */
} SizeAtomKind;

struct SizeExpr;

typedef struct SizeAtom {
  SizeAtomKind kind;
  int var;
  const struct SizeExpr *a, *b;
  int64_t d;
} SizeAtom;

typedef struct SizeTerm {
  const SizeAtom *atom;
  int64_t coef; /* never 0 */
} SizeTerm;

typedef struct SizeExpr {
  int64_t c; /* the constant */
  int n;     /* terms, sorted by se_atom_cmp */
  const SizeTerm *t;
  int overflow; /* some constant or coefficient that built it left int64
                   (sema reports it; the form is then meaningless) */
} SizeExpr;

const SizeExpr *se_const(Arena *a, int64_t c);
const SizeExpr *se_var(Arena *a, int var);
const SizeExpr *se_add(Arena *a, const SizeExpr *x, const SizeExpr *y);
const SizeExpr *se_sub(Arena *a, const SizeExpr *x, const SizeExpr *y);
const SizeExpr *se_scale(Arena *a, const SizeExpr *x, int64_t k);
const SizeExpr *se_mul(Arena *a, const SizeExpr *x, const SizeExpr *y);
/* x // d, flooring as Python does; d >= 1. */
const SizeExpr *se_floordiv(Arena *a, const SizeExpr *x, int64_t d);
const SizeExpr *se_min(Arena *a, const SizeExpr *x, const SizeExpr *y);
const SizeExpr *se_max(Arena *a, const SizeExpr *x, const SizeExpr *y);

/* x OP y for the operators a size may use (language.md §9.8): + - *, and
 * // by a positive constant; NULL for any other (or another divisor). */
const SizeExpr *se_binary(Arena *a, BinaryOp op, const SizeExpr *x, const SizeExpr *y);

/* A total order; 0 exactly when the canonical forms are the same. */
int se_cmp(const SizeExpr *x, const SizeExpr *y);
/* 1 when x >= 0 is proved for every value of the size variables (>= 0),
 * 0 when it is not (it may still hold). */
int se_nonneg(Arena *a, const SizeExpr *x);
int se_is_const(const SizeExpr *x, int64_t *c);
/* The variable x is, with coefficient 1 and nothing else; else -1. */
int se_as_var(const SizeExpr *x);

/* The expression with every variable v replaced by sub[v] (then brought
 * to canonical form again). */
const SizeExpr *se_subst(Arena *a, const SizeExpr *x, const SizeExpr *const *sub);
/* Its value, the variables' values given by number. */
int64_t se_eval(const SizeExpr *x, const int64_t *values);

/* As .te text (`D - D // 2`, `min(D, 8)`), variables named by names[]. */
const char *se_te(Arena *a, const SizeExpr *x, const char *const *names);
/* As C (int64_t arithmetic; `//` of what may be negative as
 * tecc::size_floordiv(), min and max as tecc::size_min() and
 * tecc::size_max(): the runtime's host functions). */
const char *se_c(Arena *a, const SizeExpr *x, const char *const *names);
/* A C identifier naming it (`D_div_2`), made of the names and words,
 * starting with a letter (`size_2_times_D`), no underscores doubled. */
const char *se_ident(Arena *a, const SizeExpr *x, const char *const *names);

#endif
