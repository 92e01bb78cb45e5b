/* sizeexpr.c — size expressions in canonical form (see sizeexpr.h). */
#include "sizeexpr.h"

#include <ctype.h>
#include <string.h>

#include "diag.h"

/* ---- order --------------------------------------------------------------- */

static int cmp64(int64_t x, int64_t y) { return x < y ? -1 : x > y; }

static int atom_cmp(const SizeAtom *x, const SizeAtom *y) {
  if (x->kind != y->kind)
    return x->kind < y->kind ? -1 : 1;
  int r = x->kind == SA_VAR ? cmp64(x->var, y->var) : cmp64(x->d, y->d);
  if (r || x->kind == SA_VAR)
    return r;
  r = se_cmp(x->a, y->a);
  return r ? r : x->b ? se_cmp(x->b, y->b) : 0;
}

int se_cmp(const SizeExpr *x, const SizeExpr *y) {
  if (x->n != y->n)
    return x->n < y->n ? -1 : 1;
  for (int i = 0; i < x->n; i++) {
    int r = atom_cmp(x->t[i].atom, y->t[i].atom);
    if (r)
      return r;
    if (x->t[i].coef != y->t[i].coef)
      return cmp64(x->t[i].coef, y->t[i].coef);
  }
  return cmp64(x->c, y->c);
}

/* ---- building ------------------------------------------------------------ */

/* int64 arithmetic that sets *ov instead of overflowing. */
static int64_t add_ck(int64_t x, int64_t y, int *ov) {
  int64_t r;
  *ov |= __builtin_add_overflow(x, y, &r);
  return r;
}

static int64_t mul_ck(int64_t x, int64_t y, int *ov) {
  int64_t r;
  *ov |= __builtin_mul_overflow(x, y, &r);
  return r;
}

/* e, just built here, marked as overflowed where `ov`. */
static const SizeExpr *flagged(const SizeExpr *e, int ov) {
  ((SizeExpr *)e)->overflow |= ov;
  return e;
}

const SizeExpr *se_const(Arena *a, int64_t c) {
  SizeExpr *e = ARENA_NEW(a, SizeExpr);
  e->c = c;
  return e;
}

/* The form k*atom (+ 0). */
static const SizeExpr *of_atom(Arena *a, const SizeAtom *atom, int64_t k) {
  SizeExpr *e = ARENA_NEW(a, SizeExpr);
  SizeTerm *t = ARENA_NEW(a, SizeTerm);
  t->atom = atom;
  t->coef = k;
  e->n = 1;
  e->t = t;
  return e;
}

static const SizeExpr *new_atom(Arena *a, SizeAtomKind kind, int var, const SizeExpr *x,
                                const SizeExpr *y, int64_t d) {
  SizeAtom *at = ARENA_NEW(a, SizeAtom);
  at->kind = kind;
  at->var = var;
  at->a = x;
  at->b = y;
  at->d = d;
  return flagged(of_atom(a, at, 1), (x && x->overflow) || (y && y->overflow));
}

const SizeExpr *se_var(Arena *a, int var) {
  if (var < 0)
    internal_error("sizeexpr: variable %d", var);
  return new_atom(a, SA_VAR, var, NULL, NULL, 0);
}

/* kx*x + ky*y, merged in atom order. */
static const SizeExpr *combine(Arena *a, const SizeExpr *x, int64_t kx, const SizeExpr *y, int64_t ky) {
  SizeExpr *e = ARENA_NEW(a, SizeExpr);
  SizeTerm *t = ARENA_ARRAY(a, SizeTerm, x->n + y->n + 1);
  int i = 0, j = 0, ov = x->overflow || y->overflow;
  while (i < x->n || j < y->n) {
    int r = i == x->n ? 1 : j == y->n ? -1 : atom_cmp(x->t[i].atom, y->t[j].atom);
    SizeTerm s = r < 0 ? x->t[i] : y->t[j];
    s.coef = add_ck(r <= 0 ? mul_ck(kx, x->t[i].coef, &ov) : 0, r >= 0 ? mul_ck(ky, y->t[j].coef, &ov) : 0, &ov);
    i += r <= 0;
    j += r >= 0;
    if (s.coef)
      t[e->n++] = s;
  }
  e->t = t;
  e->c = add_ck(mul_ck(kx, x->c, &ov), mul_ck(ky, y->c, &ov), &ov);
  e->overflow = ov;
  return e;
}

const SizeExpr *se_add(Arena *a, const SizeExpr *x, const SizeExpr *y) { return combine(a, x, 1, y, 1); }
const SizeExpr *se_sub(Arena *a, const SizeExpr *x, const SizeExpr *y) { return combine(a, x, 1, y, -1); }
const SizeExpr *se_scale(Arena *a, const SizeExpr *x, int64_t k) { return combine(a, x, k, x, 0); }

int se_is_const(const SizeExpr *x, int64_t *c) {
  if (x->n)
    return 0;
  if (c)
    *c = x->c;
  return 1;
}

int se_as_var(const SizeExpr *x) {
  if (x->n != 1 || x->c || x->t[0].coef != 1 || x->t[0].atom->kind != SA_VAR)
    return -1;
  return x->t[0].atom->var;
}

/* The term i alone, coefficient 1. */
static const SizeExpr *term_atom(Arena *a, const SizeExpr *x, int i) { return of_atom(a, x->t[i].atom, 1); }

/* Products distribute over the terms; a product of two atoms is an atom. */
const SizeExpr *se_mul(Arena *a, const SizeExpr *x, const SizeExpr *y) {
  int64_t k;
  if (se_is_const(x, &k))
    return se_scale(a, y, k);
  if (se_is_const(y, &k))
    return se_scale(a, x, k);
  const SizeExpr *r = se_add(a, se_scale(a, y, x->c), se_scale(a, se_sub(a, x, se_const(a, x->c)), y->c));
  for (int i = 0; i < x->n; i++)
    for (int j = 0; j < y->n; j++) {
      const SizeExpr *p = term_atom(a, x, i), *q = term_atom(a, y, j);
      if (se_cmp(p, q) > 0) {
        const SizeExpr *s = p;
        p = q;
        q = s;
      }
      const SizeExpr *m = new_atom(a, SA_MUL, 0, p, q, 0);
      int ov = 0;
      const SizeExpr *km = se_scale(a, m, mul_ck(x->t[i].coef, y->t[j].coef, &ov));
      r = se_add(a, r, flagged(km, ov));
    }
  return r;
}

static int64_t floordiv64(int64_t x, int64_t d) {
  int64_t q = x / d;
  return q - (x % d != 0 && ((x < 0) != (d < 0)));
}

/* The multiples of d come out of the division: (2*N + D + 5) // 2 is
 * N + 2 + (D + 1) // 2. */
const SizeExpr *se_floordiv(Arena *a, const SizeExpr *x, int64_t d) {
  if (d < 1)
    internal_error("sizeexpr: division by %lld", (long long)d);
  if (d == 1)
    return x;
  int64_t rem = x->c % d;
  if (rem < 0)
    rem += d;
  const SizeExpr *whole = flagged(se_const(a, floordiv64(x->c, d)), x->overflow), *rest = se_const(a, rem);
  for (int i = 0; i < x->n; i++) {
    const SizeExpr *t = term_atom(a, x, i);
    if (x->t[i].coef % d == 0)
      whole = se_add(a, whole, se_scale(a, t, x->t[i].coef / d));
    else
      rest = se_add(a, rest, se_scale(a, t, x->t[i].coef));
  }
  if (!rest->n)
    return whole; /* rest is its constant, in [0, d) */
  return se_add(a, whole, new_atom(a, SA_DIV, 0, rest, NULL, d));
}

static const SizeExpr *min_max(Arena *a, SizeAtomKind kind, const SizeExpr *x, const SizeExpr *y) {
  int x_smaller = se_nonneg(a, se_sub(a, y, x)), y_smaller = se_nonneg(a, se_sub(a, x, y));
  if (x_smaller || y_smaller)
    return (kind == SA_MIN) == x_smaller ? x : y;
  if (se_cmp(x, y) > 0) {
    const SizeExpr *s = x;
    x = y;
    y = s;
  }
  return new_atom(a, kind, 0, x, y, 0);
}

const SizeExpr *se_binary(Arena *a, BinaryOp op, const SizeExpr *x, const SizeExpr *y) {
  int64_t d;
  switch (op) {
  case BIN_ADD: return se_add(a, x, y);
  case BIN_SUB: return se_sub(a, x, y);
  case BIN_MUL: return se_mul(a, x, y);
  case BIN_FLOORDIV: return se_is_const(y, &d) && d >= 1 ? se_floordiv(a, x, d) : NULL;
  default: return NULL;
  }
}

const SizeExpr *se_min(Arena *a, const SizeExpr *x, const SizeExpr *y) { return min_max(a, SA_MIN, x, y); }
const SizeExpr *se_max(Arena *a, const SizeExpr *x, const SizeExpr *y) { return min_max(a, SA_MAX, x, y); }

/* ---- proving x >= 0 ------------------------------------------------------- */

static int prove(Arena *a, const SizeExpr *x, int depth);

static int atom_nonneg(Arena *a, const SizeAtom *t, int depth) {
  switch (t->kind) {
  case SA_VAR: return 1;
  case SA_DIV: return prove(a, t->a, depth);
  case SA_MUL:
  case SA_MIN: return prove(a, t->a, depth) && prove(a, t->b, depth);
  case SA_MAX: return prove(a, t->a, depth) || prove(a, t->b, depth);
  }
  return 0;
}

/* x without term i, plus k*y. */
static const SizeExpr *swap_term(Arena *a, const SizeExpr *x, int i, const SizeExpr *y, int64_t k) {
  return se_add(a, se_sub(a, x, se_scale(a, term_atom(a, x, i), x->t[i].coef)), se_scale(a, y, k));
}

/* Term i replaced by a bound that keeps x >= 0 sufficient: d*q lies in
 * (a - d, a], min and max are one of their operands.  For a quotient, x
 * is an integer, so d*x + d - 1 >= 0 is enough (d*x is a multiple of d
 * above -d): what proves (D + 1) // 2 >= min(D, (D + 1) // 2), which
 * d*x >= 0 alone does not. */
static int prove_by_bound(Arena *a, const SizeExpr *x, int i, int depth) {
  const SizeAtom *t = x->t[i].atom;
  int64_t k = x->t[i].coef;
  if (t->kind == SA_DIV) {
    const SizeExpr *scaled = se_add(a, se_scale(a, x, t->d), se_const(a, t->d - 1));
    const SizeExpr *bound = k < 0 ? t->a : se_sub(a, t->a, se_const(a, t->d - 1));
    return prove(a, swap_term(a, scaled, i, bound, k), depth);
  }
  if (t->kind != SA_MIN && t->kind != SA_MAX)
    return 0;
  int either = (t->kind == SA_MIN) == (k < 0); /* a lower bound by either */
  int pa = prove(a, swap_term(a, x, i, t->a, k), depth);
  if (pa && either)
    return 1;
  if (!pa && !either)
    return 0;
  return prove(a, swap_term(a, x, i, t->b, k), depth);
}

static int prove(Arena *a, const SizeExpr *x, int depth) {
  if (x->overflow)
    return 0;
  int plain = x->c >= 0;
  for (int i = 0; i < x->n && plain; i++)
    plain = x->t[i].coef > 0 && atom_nonneg(a, x->t[i].atom, depth);
  if (plain)
    return 1;
  if (depth == 0)
    return 0;
  for (int i = 0; i < x->n; i++)
    if (prove_by_bound(a, x, i, depth - 1))
      return 1;
  return 0;
}

int se_nonneg(Arena *a, const SizeExpr *x) { return prove(a, x, 4); }

/* ---- substitution and evaluation ------------------------------------------ */

static const SizeExpr *atom_subst(Arena *a, const SizeAtom *t, const SizeExpr *const *sub) {
  switch (t->kind) {
  case SA_VAR: return sub[t->var];
  case SA_DIV: return se_floordiv(a, se_subst(a, t->a, sub), t->d);
  case SA_MUL: return se_mul(a, se_subst(a, t->a, sub), se_subst(a, t->b, sub));
  case SA_MIN: return se_min(a, se_subst(a, t->a, sub), se_subst(a, t->b, sub));
  case SA_MAX: return se_max(a, se_subst(a, t->a, sub), se_subst(a, t->b, sub));
  }
  internal_error("sizeexpr: atom kind %d", (int)t->kind);
}

const SizeExpr *se_subst(Arena *a, const SizeExpr *x, const SizeExpr *const *sub) {
  const SizeExpr *r = se_const(a, x->c);
  for (int i = 0; i < x->n; i++)
    r = se_add(a, r, se_scale(a, atom_subst(a, x->t[i].atom, sub), x->t[i].coef));
  return r;
}

static int64_t atom_eval(const SizeAtom *t, const int64_t *v) {
  switch (t->kind) {
  case SA_VAR: return v[t->var];
  case SA_DIV: return floordiv64(se_eval(t->a, v), t->d);
  case SA_MUL: return (int64_t)((uint64_t)se_eval(t->a, v) * (uint64_t)se_eval(t->b, v));
  case SA_MIN: {
    int64_t x = se_eval(t->a, v), y = se_eval(t->b, v);
    return x < y ? x : y;
  }
  case SA_MAX: {
    int64_t x = se_eval(t->a, v), y = se_eval(t->b, v);
    return x > y ? x : y;
  }
  }
  internal_error("sizeexpr: atom kind %d", (int)t->kind);
}

/* Wrapping where the value leaves int64 (sema rejects sizes whose
 * constants do; run-time sizes that large fail the entry point's
 * count checks). */
int64_t se_eval(const SizeExpr *x, const int64_t *values) {
  uint64_t r = (uint64_t)x->c;
  for (int i = 0; i < x->n; i++)
    r += (uint64_t)x->t[i].coef * (uint64_t)atom_eval(x->t[i].atom, values);
  return (int64_t)r;
}

/* ---- printing ------------------------------------------------------------- */

typedef struct Printer {
  Arena *a;
  Buf *b;
  const char *const *names;
  int c; /* C rather than .te */
} Printer;

static void put_expr(Printer *p, const SizeExpr *x);

static int is_sum(const SizeExpr *x) { return x->n + (x->c != 0) > 1 || (x->n == 1 && x->t[0].coef != 1); }

static void put_operand(Printer *p, const SizeExpr *x) {
  if (is_sum(x) || (x->n == 0 && x->c < 0)) {
    buf_puts(p->b, "(");
    put_expr(p, x);
    buf_puts(p->b, ")");
  } else {
    put_expr(p, x);
  }
}

static void put_atom(Printer *p, const SizeAtom *t, int scaled) {
  switch (t->kind) {
  case SA_VAR: buf_puts(p->b, p->names[t->var]); return;
  case SA_DIV:
    if (p->c && !se_nonneg(p->a, t->a)) {
      buf_puts(p->b, "tecc::size_floordiv(");
      put_expr(p, t->a);
      buf_printf(p->b, ", %lld)", (long long)t->d);
      return;
    }
    buf_puts(p->b, scaled ? "(" : "");
    put_operand(p, t->a);
    buf_printf(p->b, " %s %lld%s", p->c ? "/" : "//", (long long)t->d, scaled ? ")" : "");
    return;
  case SA_MUL:
    put_operand(p, t->a);
    buf_puts(p->b, " * ");
    put_operand(p, t->b);
    return;
  case SA_MIN:
  case SA_MAX:
    buf_printf(p->b, "%s%s(", p->c ? "tecc::size_" : "", t->kind == SA_MIN ? "min" : "max");
    put_expr(p, t->a);
    buf_puts(p->b, ", ");
    put_expr(p, t->b);
    buf_puts(p->b, ")");
    return;
  }
}

static void put_expr(Printer *p, const SizeExpr *x) {
  for (int i = 0; i < x->n; i++) {
    int64_t k = x->t[i].coef;
    uint64_t m = k < 0 ? 0 - (uint64_t)k : (uint64_t)k;
    buf_puts(p->b, i == 0 ? (k < 0 ? "-" : "") : (k < 0 ? " - " : " + "));
    if (m != 1)
      buf_printf(p->b, "%llu * ", (unsigned long long)m);
    put_atom(p, x->t[i].atom, m != 1 || (i == 0 && k < 0)); /* -(D // 2), not -D // 2 */
  }
  if (x->n == 0)
    buf_printf(p->b, "%lld", (long long)x->c);
  else if (x->c)
    buf_printf(p->b, " %c %llu", x->c < 0 ? '-' : '+',
               (unsigned long long)(x->c < 0 ? 0 - (uint64_t)x->c : (uint64_t)x->c));
}

static const char *print(Arena *a, const SizeExpr *x, const char *const *names, int c) {
  Buf b;
  buf_init(&b, a);
  Printer p = {a, &b, names, c};
  put_expr(&p, x);
  return buf_cstr(&b);
}

const char *se_te(Arena *a, const SizeExpr *x, const char *const *names) { return print(a, x, names, 0); }

const char *se_c(Arena *a, const SizeExpr *x, const char *const *names) { return print(a, x, names, 1); }

/* Appends the characters of `s` to identifier b, leaving out underscores
 * that would lead it or follow another (reserved in C++). */
static void ident_puts(Buf *b, const char *s) {
  for (; *s; s++)
    if (*s != '_' || (b->len > 0 && b->data[b->len - 1] != '_'))
      buf_putn(b, s, 1);
}

const char *se_ident(Arena *a, const SizeExpr *x, const char *const *names) {
  static const struct {
    const char *text, *word;
  } words[] = {{" // ", "_div_"}, {" - ", "_minus_"}, {" + ", "_plus_"}, {" * ", "_times_"},
               {", ", "_"},       {"(", "_"},         {")", ""},         {"-", "neg_"}};
  const char *s = se_te(a, x, names);
  Buf b;
  buf_init(&b, a);
  while (*s) {
    size_t w = 0;
    while (w < sizeof words / sizeof words[0] && strncmp(s, words[w].text, strlen(words[w].text)) != 0)
      w++;
    char one[2] = {*s, 0};
    ident_puts(&b, w < sizeof words / sizeof words[0] ? words[w].word : one);
    s += w < sizeof words / sizeof words[0] ? strlen(words[w].text) : 1;
  }
  if (b.len > 0 && b.data[b.len - 1] == '_')
    b.len--;
  const char *id = buf_cstr(&b);
  return isalpha((unsigned char)id[0]) ? id : arena_printf(a, "size_%s", id); /* `2 * D + 2` */
}
