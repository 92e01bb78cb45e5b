/* sema_slice.c — sizes that are expressions, slices and concat
 * (doc/language.md §9.8, §9.9).
 *
 * A dimension is a literal or a size variable; a size expression that is
 * neither (`D // 2`) becomes a derived size: a size variable with a
 * definition, interned by its canonical form (sizeexpr.h), so two shapes
 * compare as before, by variable number.  A slice or a concat is typed as
 * takes (TN_TAKE with a step): lowering gathers them into the loads like
 * any take, and their positions are proved in range. */
#include "sema.h"

#include <string.h>

/* ---- sizes ------------------------------------------------------------------ */

const SizeExpr *sema_dim_size(Sema *s, Dim d) {
  if (d.var < 0)
    return se_const(s->a, d.size);
  const SizeExpr *def = d.var < s->size_defs.len ? s->size_defs.items[d.var] : NULL;
  return def ? def : se_var(s->a, d.var);
}

/* Whether x and y agree where every size variable is the same small
 * number, or a mix of them: a cheap filter before the prover, which most
 * pairs fail. */
static int agree_at_samples(Sema *s, const SizeExpr *x, const SizeExpr *y) {
  static const int64_t samples[] = {0, 1, 2, 3, 7, 64, 1000};
  int n = s->sizevar_names.len;
  int64_t *at = arena_alloc(s->a, sizeof(int64_t) * ((size_t)n + 1));
  for (size_t k = 0; k < sizeof samples / sizeof samples[0]; k++) {
    for (int i = 0; i < n; i++)
      at[i] = samples[(k + (size_t)i) % (sizeof samples / sizeof samples[0])];
    if (se_eval(x, at) != se_eval(y, at))
      return 0;
  }
  return 1;
}

/* Whether x == y is proved (x <= y and y <= x). */
static int proved_equal(Sema *s, const SizeExpr *x, const SizeExpr *y) {
  if (!agree_at_samples(s, x, y))
    return 0;
  const SizeExpr *d = se_sub(s->a, x, y);
  return se_nonneg(s->a, d) && se_nonneg(s->a, se_scale(s->a, d, -1));
}

/* A size that is proved equal to one the kernel has is that one: shapes
 * compare by number.  `D - max(0, D - 3)` is `min(3, D)`. */
Dim sema_size_dim(Sema *s, const SizeExpr *e) {
  int64_t c;
  if (se_is_const(e, &c))
    return (Dim){-1, c};
  int v = se_as_var(e);
  if (v >= 0)
    return (Dim){v, 0};
  for (int i = 0; i < s->sizevar_names.len; i++)
    if (se_cmp(sema_dim_size(s, (Dim){i, 0}), e) == 0)
      return (Dim){i, 0};
  for (int i = 0; i < s->sizevar_names.len; i++)
    if (proved_equal(s, sema_dim_size(s, (Dim){i, 0}), e))
      return (Dim){i, 0};
  int i = s->sizevar_names.len;
  vec_push(s->a, &s->sizevar_names, (void *)se_te(s->a, e, (const char *const *)s->sizevar_names.items));
  while (s->size_defs.len < i)
    vec_push(s->a, &s->size_defs, NULL);
  vec_push(s->a, &s->size_defs, (void *)e);
  return (Dim){i, 0};
}

const SizeExpr *sema_tval_size(Sema *s, const TVal *t) {
  if (!t || t->kind != TV_WEAK_INT)
    return NULL;
  return t->rt ? t->size : se_const(s->a, t->k.i);
}

static const Shape scalar_shape;

/* The run-time value of a size expression: an i64 scalar node. */
static TypedNode *size_node(Sema *s, const SizeExpr *e) {
  int64_t c;
  if (se_is_const(e, &c)) {
    TypedNode *n = sema_new_node(s, TN_CONST, DT_I64, &scalar_shape);
    n->value.i = c;
    return n;
  }
  TypedNode *n = sema_new_node(s, TN_SIZE, DT_I64, &scalar_shape);
  n->input = sema_size_dim(s, e).var;
  return n;
}

/* ---- output types -------------------------------------------------------- */

/* An output dimension written as an expression: + - * and // by a
 * positive literal, over literals and the inputs' size variables. */
static const SizeExpr *written_size(Sema *s, const Expr *e) {
  const SizeExpr *x, *y;
  switch (e->kind) {
  case EXPR_INT: return se_const(s->a, e->ival);
  case EXPR_NAME: {
    int v = (int)(intptr_t)strmap_get(&s->sizevars, e->name) - 1;
    if (v < 0)
      sema_error(s, e->loc, "size variable '%s' appears only in output types", e->name);
    return v < 0 ? NULL : sema_dim_size(s, (Dim){v, 0});
  }
  case EXPR_CALL:
    if (e->nargs != 2 || (strcmp(e->name, "min") != 0 && strcmp(e->name, "max") != 0))
      break;
    x = written_size(s, e->args[0]);
    y = written_size(s, e->args[1]);
    if (!x || !y)
      return NULL;
    return e->name[1] == 'i' ? se_min(s->a, x, y) : se_max(s->a, x, y);
  case EXPR_UNARY:
    if (e->uop != UN_NEG)
      break;
    x = written_size(s, e->args[0]);
    return x ? se_scale(s->a, x, -1) : NULL;
  case EXPR_BINARY:
    if (e->bop != BIN_ADD && e->bop != BIN_SUB && e->bop != BIN_MUL && e->bop != BIN_FLOORDIV)
      break;
    x = written_size(s, e->args[0]);
    y = written_size(s, e->args[1]);
    if (!x || !y)
      return NULL;
    x = se_binary(s->a, e->bop, x, y);
    if (!x) /* only // refuses its operands */
      sema_error(s, e->args[1]->loc, "a size is divided only by a positive literal");
    return x;
  default: break;
  }
  sema_error(s, e->loc, "a size is an integer expression of literals and size variables with "
             "+ - * //, min and max");
  return NULL;
}

int sema_output_dim(Sema *s, const AstDim *d, Dim *out) {
  const SizeExpr *e = written_size(s, d->expr);
  if (!e)
    return 0;
  if (e->overflow) {
    sema_error(s, d->loc, "size expression overflows: its constants leave the 64-bit integers");
    return 0;
  }
  if (!se_nonneg(s->a, e)) {
    sema_error(s, d->loc, "size %s may be negative", se_te(s->a, e, (const char *const *)s->sizevar_names.items));
    return 0;
  }
  *out = sema_size_dim(s, e);
  return 1;
}

/* ---- slices --------------------------------------------------------------- */

/* A bound, clamped to [0, S]: a negative literal (TVal.literal: maybe
 * negated, or a fn's parameter bound to one) counts from the end. */
static const SizeExpr *slice_bound(Sema *s, const TVal *t, const SizeExpr *S, const SizeExpr *dflt) {
  Arena *a = s->a;
  if (!t)
    return dflt;
  const SizeExpr *v = sema_tval_size(s, t);
  if (!v && t->kind == TV_WEAK_INT && t->rt) {
    sema_error(s, t->loc, "a slice bound is a size expression, and this one is not: size expressions take + - * "
               "and // by a positive literal, and their constants stay within the 64-bit integers");
    return NULL;
  }
  if (!v) {
    sema_error(s, t->loc, "a slice bound is an integer expression of literals and size variables, got %s",
               tval_type_str(s, t));
    return NULL;
  }
  if (!t->rt && t->literal && t->k.i < 0) /* a literal: x[1-3:] clamps, as x[N-3:] would */
    v = se_add(a, S, v);
  return se_max(a, se_const(a, 0), se_min(a, v, S));
}

/* The largest step.  A slice's length is (hi - lo + step - 1) // step,
 * in the stub's 64-bit integers too (the size expressions fold
 * (hi - lo - 1) // step + 1 into that form), so a step near 2^63 would
 * overflow it on any axis of 2 or more; at 2^32 only an axis of more
 * than 2^63 - 2^32 elements would, which no tensor in memory has. */
#define SLICE_STEP_MAX ((int64_t)1 << 32)

static int slice_step(Sema *s, const TVal *t, int64_t *step) {
  *step = 1;
  if (!t)
    return 1;
  if (t->kind != TV_WEAK_INT || t->rt) {
    sema_error(s, t->loc, "a slice step is a positive integer literal, got %s",
               t->rt ? "a size known at run time" : tval_type_str(s, t));
    return 0;
  }
  if (t->k.i <= 0) {
    sema_error(s, t->loc, t->k.i ? "negative slice steps are not supported" : "slice step cannot be zero");
    return 0;
  }
  if (t->k.i > SLICE_STEP_MAX) {
    sema_error(s, t->loc, "a slice step is at most 2^32 (4294967296), got %lld", (long long)t->k.i);
    return 0;
  }
  *step = t->k.i;
  return 1;
}

/* The gather of x along ax at start + step * position, len positions. */
static TVal *gather_affine(Sema *s, const TVal *x, int ax, const SizeExpr *start, int64_t step,
                           const SizeExpr *len, SrcRange loc) {
  Shape sh = x->node->shape, ones = sh;
  sh.d[ax] = sema_size_dim(s, len);
  for (int i = 0; i < ones.rank; i++)
    ones.d[i] = i == ax ? sh.d[ax] : (Dim){-1, 1};
  TypedNode *at = sema_new_node(s, TN_INDEX, DT_I64, &ones);
  at->axes = 1u << ax;
  TypedNode *first = size_node(s, start);
  if (step != 1) {
    TypedNode *k = sema_new_node(s, TN_CONST, DT_I64, &scalar_shape);
    k->value.i = step;
    at = sema_binary_node(s, BIN_MUL, DT_I64, at, k, &ones);
  }
  if (first->op != TN_CONST || first->value.i)
    at = sema_binary_node(s, BIN_ADD, DT_I64, at, first, &ones);
  TypedNode *n = sema_new_node(s, TN_TAKE, x->dtype, &sh);
  n->args[0] = x->node;
  n->args[1] = at;
  n->args[2] = first;
  n->nargs = 3;
  n->axes = 1u << ax;
  n->step = step;
  return sema_tensor(s, n, loc);
}

/* The axis each entry of x[...] applies to; -1 for the ellipsis. */
static int slice_axes(Sema *s, const Expr *e, const TVal *x, int *axis) {
  int rank = x->node->shape.rank, ell = -1;
  for (int i = 0; i < e->nslices; i++) {
    if (e->slices[i].kind != SLICE_ELLIPSIS)
      continue;
    if (ell >= 0) {
      sema_error(s, e->slices[i].loc, "a subscript has at most one '...'");
      return 0;
    }
    ell = i;
  }
  int n = e->nslices - (ell >= 0);
  if (n > rank) {
    sema_error(s, e->loc, "%d slices for %s, of rank %d", n, tval_type_str(s, x), rank);
    return 0;
  }
  for (int i = 0; i < e->nslices; i++)
    axis[i] = i == ell ? -1 : ell >= 0 && i > ell ? rank - (e->nslices - i) : i;
  return 1;
}

static TVal *slice_axis(Sema *s, const Expr *e, TVal *x, int ax, TVal **parts) {
  Arena *a = s->a;
  int64_t step;
  if (!slice_step(s, parts[2], &step))
    return NULL;
  const SizeExpr *S = sema_dim_size(s, x->node->shape.d[ax]), *zero = se_const(a, 0);
  const SizeExpr *lo = slice_bound(s, parts[0], S, zero), *hi = slice_bound(s, parts[1], S, S);
  if (!lo || !hi)
    return NULL;
  const SizeExpr *len = se_max(a, zero, se_floordiv(a, se_add(a, se_sub(a, hi, lo), se_const(a, step - 1)), step));
  if (step == 1 && se_cmp(lo, zero) == 0 && se_cmp(len, S) == 0)
    return x; /* the whole axis */
  if (!sema_gathers_through(s, x, ax, "slice"))
    return NULL;
  return gather_affine(s, x, ax, lo, step, len, e->loc);
}

TVal *sema_slice(Sema *s, const Expr *e, TVal *x, TVal **parts) {
  if (x->kind != TV_TENSOR || x->node->shape.rank == 0) {
    sema_error(s, e->loc, "only a tensor of rank 1 or more can be sliced, got %s", tval_type_str(s, x));
    return NULL;
  }
  int axis[TECC_MAX_RANK + 1];
  if (e->nslices > TECC_MAX_RANK + 1) {
    sema_error(s, e->loc, "%d slices for %s, of rank %d", e->nslices, tval_type_str(s, x),
               x->node->shape.rank);
    return NULL;
  }
  if (!slice_axes(s, e, x, axis))
    return NULL;
  for (int i = 0; i < e->nslices; i++)
    if (e->slices[i].kind == SLICE_INDEX) {
      sema_error(s, e->slices[i].loc, "an integer index would drop axis %d; write a slice of length one, "
                 "as in 'x[..., i:i+1]'", axis[i]);
      return NULL;
    }
  TVal *r = x;
  for (int i = 0; i < e->nslices && r; i++)
    if (axis[i] >= 0)
      r = slice_axis(s, e, r, axis[i], parts + 3 * i);
  return r == x ? sema_tensor(s, x->node, e->loc) : r; /* x[:] is x */
}

/* ---- concat ----------------------------------------------------------------- */

/* The axis: a last argument that is an integer literal, else 0; a last
 * argument of a number that is not one is a wrong axis. */
static int concat_parts(Sema *s, const Expr *call, TVal **args, int nargs, int *ax) {
  int n = nargs;
  if (n > 1 && (args[n - 1]->kind == TV_WEAK_INT || args[n - 1]->kind == TV_WEAK_FLOAT)) {
    const TVal *axis = args[--n];
    if (!axis->literal) {
      sema_error(s, axis->loc, "axis of 'concat' must be an integer literal, got %s", tval_type_str(s, axis));
      return 0;
    }
  }
  for (int i = 0; i < n; i++)
    if (args[i]->kind != TV_TENSOR || args[i]->node->shape.rank == 0) {
      sema_error(s, args[i]->loc, "'concat' joins tensors of rank 1 or more, got %s",
                 tval_type_str(s, args[i]));
      return 0;
    }
  if (n == 0) {
    sema_error(s, call->loc, "'concat' needs a tensor");
    return 0;
  }
  *ax = 0;
  if (n < nargs && (*ax = sema_axis(s, "concat", args[0], args[n])) < 0)
    return 0;
  return n;
}

/* Every part has the first's rank and its sizes off the axis. */
static int concat_shapes(Sema *s, TVal **args, int n, int ax) {
  const Shape *f = &args[0]->node->shape;
  for (int i = 1; i < n; i++) {
    const Shape *p = &args[i]->node->shape;
    if (p->rank != f->rank) {
      sema_error(s, args[i]->loc, "'concat' of %s and %s: the ranks differ", tval_type_str(s, args[0]),
                 tval_type_str(s, args[i]));
      return 0;
    }
    for (int d = 0; d < f->rank; d++)
      if (d != ax && !dim_equal(f->d[d], p->d[d])) {
        sema_error(s, args[i]->loc, "'concat' along axis %d of %s and %s: axis %d is %s vs %s", ax,
                   tval_type_str(s, args[0]), tval_type_str(s, args[i]), d, sema_dim_str(s, f->d[d]),
                   sema_dim_str(s, p->d[d]));
        return 0;
      }
  }
  return 1;
}

/* concat(a, b, ..., axis): where(pos < |a|, a[pos], where(pos < |a| + |b|,
 * b[pos - |a|], ...)), each part a take along the axis. */
TVal *sema_concat(Sema *s, const Expr *call, TVal **args, int nargs) {
  int ax, n = concat_parts(s, call, args, nargs, &ax);
  if (!n || !concat_shapes(s, args, n, ax))
    return NULL;
  if (n == 1)
    return sema_tensor(s, args[0]->node, call->loc);
  DType t = args[0]->dtype;
  const SizeExpr *total = se_const(s->a, 0);
  for (int i = 0; i < n; i++) {
    t = sema_promote(t, args[i]->dtype);
    total = se_add(s->a, total, sema_dim_size(s, args[i]->node->shape.d[ax]));
  }
  for (int i = 0; i < n; i++)
    if (!sema_gathers_through(s, args[i], ax, "concat"))
      return NULL;
  Shape sh = args[0]->node->shape, ones = sh;
  sh.d[ax] = sema_size_dim(s, total);
  for (int i = 0; i < ones.rank; i++)
    ones.d[i] = i == ax ? sh.d[ax] : (Dim){-1, 1};
  TypedNode *pos = sema_new_node(s, TN_INDEX, DT_I64, &ones);
  pos->axes = 1u << ax;
  TypedNode *r = NULL;
  const SizeExpr *end = total;
  for (int i = n - 1; i >= 0; i--) {
    const SizeExpr *begin = se_sub(s->a, end, sema_dim_size(s, args[i]->node->shape.d[ax]));
    TVal *part = gather_affine(s, args[i], ax, se_scale(s->a, begin, -1), 1, total, call->loc);
    TypedNode *v = sema_cast_node(s, part->node, t);
    if (r) {
      TypedNode *inside = sema_binary_node(s, BIN_LT, DT_BOOL, pos, size_node(s, end), &ones);
      TypedNode *w = sema_new_node(s, TN_SELECT, t, &sh);
      w->arg_dtype = t;
      w->args[0] = inside;
      w->args[1] = v;
      w->args[2] = r;
      w->nargs = 3;
      v = w;
    }
    r = v;
    end = begin;
  }
  return sema_tensor(s, r, call->loc);
}
