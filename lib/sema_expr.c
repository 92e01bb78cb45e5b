/* sema_expr.c — typing of each expression (broadcasting, promotion,
 * builtin rules of doc/language.md §6–§10, weak literals: see sema.h).  Each
 * typed expression becomes a TypedNode (typed.h) appended to the kernel's
 * node list; clamp is typed as minimum(maximum()), and constant
 * expressions are folded here.  lower.c builds the IR from the nodes. */
#include "sema.h"

#include <math.h>
#include <string.h>

/* ---- small builders ------------------------------------------------------ */

static TVal *tv_new(Sema *s, TKind kind, SrcRange loc) {
  TVal *t = ARENA_NEW(s->a, TVal);
  t->kind = kind;
  t->loc = loc;
  return t;
}

static TVal *tv_tensor(Sema *s, TypedNode *n, SrcRange loc) {
  TVal *t = tv_new(s, TV_TENSOR, loc);
  t->dtype = n->dtype;
  t->node = n;
  return t;
}

static int is_weak(const TVal *t) {
  return t->kind == TV_WEAK_INT || t->kind == TV_WEAK_FLOAT;
}

static DType compute_dtype(DType t) { return dtype_compute(t); }

static const Shape scalar_shape;

/* A node lowered where it is used (order -1), not in the node list. */
static TypedNode *node_at_use(Sema *s, TypedOp op, DType t, const Shape *sh) {
  TypedNode *n = ARENA_NEW(s->a, TypedNode);
  n->op = op;
  n->dtype = t;
  n->arg_dtype = t;
  n->shape = *sh;
  n->order = -1;
  n->loc = s->cur_loc;
  n->loc_of_last_output = s->cur_loc_is_last_output;
  return n;
}

/* A node lowered in the order it is made. */
static TypedNode *new_node(Sema *s, TypedOp op, DType t, const Shape *sh) {
  TypedNode *n = node_at_use(s, op, t, sh);
  n->order = s->nodes.len;
  vec_push(s->a, &s->nodes, n);
  return n;
}

static TypedNode *new_node1(Sema *s, TypedOp op, DType t, TypedNode *a) {
  TypedNode *n = new_node(s, op, t, &a->shape);
  n->args[0] = a;
  n->nargs = 1;
  return n;
}

/* A constant of .te dtype t; k is in the dtype it is computed in. */
static TypedNode *const_node(Sema *s, DType t, Scalar k, const Shape *sh) {
  TypedNode *n = new_node(s, TN_CONST, t, sh);
  n->value = k;
  return n;
}

TypedNode *sema_input_node(Sema *s, int index, DType t, const Shape *sh) {
  TypedNode *n = new_node(s, TN_INPUT, t, sh);
  n->input = index;
  return n;
}

/* ---- type strings -------------------------------------------------------- */

static void put_dim(Sema *s, Buf *b, Dim d) {
  if (d.var < 0)
    buf_printf(b, "%lld", (long long)d.size);
  else
    buf_puts(b, s->sizevar_names.items[d.var]);
}

const char *type_str(Sema *s, DType t, const Shape *sh) {
  Buf b;
  buf_init(&b, s->a);
  buf_puts(&b, dtype_name(t));
  if (sh->rank > 0) {
    buf_puts(&b, "[");
    for (int i = 0; i < sh->rank; i++) {
      if (i)
        buf_puts(&b, ", ");
      put_dim(s, &b, sh->d[i]);
    }
    buf_puts(&b, "]");
  }
  return buf_cstr(&b);
}

const char *tval_type_str(Sema *s, const TVal *t) {
  switch (t->kind) {
  case TV_WEAK_INT:
    return t->rt ? "a size (an integer known at run time)" : t->literal ? "an integer literal" : "an integer constant";
  case TV_WEAK_FLOAT: return "a float literal";
  case TV_AXES: return "a list of axes";
  default: return type_str(s, t->dtype, &t->node->shape);
  }
}

static const char *dim_str(Sema *s, Dim d) {
  Buf b;
  buf_init(&b, s->a);
  put_dim(s, &b, d);
  return buf_cstr(&b);
}

/* ---- weak constants ------------------------------------------------------ */

TVal *sema_weak_int(Sema *s, int64_t v, SrcRange loc, int literal) {
  TVal *t = tv_new(s, TV_WEAK_INT, loc);
  t->k.i = v;
  t->literal = literal;
  return t;
}

TVal *sema_weak_float(Sema *s, double v, SrcRange loc) {
  TVal *t = tv_new(s, TV_WEAK_FLOAT, loc);
  t->k.f = v;
  return t;
}

static TVal *strong_const(Sema *s, DType t, Scalar k, SrcRange loc) {
  return tv_tensor(s, const_node(s, t, k, &scalar_shape), loc);
}

TVal *sema_bool(Sema *s, int v, SrcRange loc) {
  Scalar k = {v != 0, 0};
  return strong_const(s, DT_BOOL, k, loc);
}

static DType weak_dtype(const TVal *t) {
  return t->kind == TV_WEAK_INT ? DT_I64 : DT_F64;
}

/* ---- weak values known at run time ------------------------------------- */

static TVal *weak_rt(Sema *s, TKind kind, TypedNode *n, SrcRange loc) {
  TVal *t = tv_new(s, kind, loc);
  t->rt = n;
  return t;
}

TVal *sema_size_value(Sema *s, int var, SrcRange loc) {
  TypedNode *n = new_node(s, TN_SIZE, DT_I64, &scalar_shape);
  n->input = var;
  TVal *t = weak_rt(s, TV_WEAK_INT, n, loc);
  t->size = sema_dim_size(s, (Dim){var, 0});
  return t;
}

/* The size expression of a OP b, both sizes (language.md §9.8), else
 * NULL: sums, differences, products, and floor division by a positive
 * constant, whose constants stay within int64 (the value itself is i64
 * arithmetic, which wraps). */
static const SizeExpr *size_of_binary(Sema *s, BinaryOp op, const TVal *a, const TVal *b) {
  const SizeExpr *x = sema_tval_size(s, a), *y = sema_tval_size(s, b);
  const SizeExpr *r = x && y ? se_binary(s->a, op, x, y) : NULL;
  return r && !r->overflow ? r : NULL;
}

/* A run-time weak value's node as dtype `to` (a cast where it differs). */
static TypedNode *rt_as(Sema *s, const TVal *t, DType to) {
  return t->rt->dtype == to ? t->rt : new_node1(s, TN_CAST, to, t->rt);
}

/* Any weak value's node as dtype `to`, computed in i64/f64 (`to`). */
static TypedNode *weak_node(Sema *s, const TVal *t, DType to) {
  if (t->rt)
    return rt_as(s, t, to);
  return const_node(s, to, fold_cast(weak_dtype(t), t->k, to), &scalar_shape);
}


/* Weak w given dtype `to`, in the dtype it is computed in. */
static Scalar weak_value(const TVal *w, DType to) {
  return fold_cast(weak_dtype(w), w->k, compute_dtype(to));
}

/* Weak w cast to `to` (rounded to it when 16-bit), computed in f32 then. */
static Scalar weak_cast_value(const TVal *w, DType to) {
  Scalar k = fold_cast(weak_dtype(w), w->k, to);
  return fold_cast(to, k, compute_dtype(to));
}

/* An integer literal must fit the integer dtype it takes (PyTorch refuses
 * int8 + 300 too). */
static int check_weak_fits(Sema *s, const TVal *w, DType to) {
  int64_t lo, hi;
  if (w->kind != TV_WEAK_INT || w->rt || !dtype_is_int(to) || to == DT_I64)
    return 1;
  fold_int_range(to, &lo, &hi);
  if (w->k.i < lo || w->k.i > hi) {
    sema_error(s, w->loc, "integer constant %lld does not fit in %s",
               (long long)w->k.i, dtype_name(to));
    return 0;
  }
  return 1;
}

/* A weak value as a constant of dtype `to`; a storage `to` (8- and 16-bit
 * floats, 8-bit integers) rounds or wraps it, as a cast does. */
static TypedNode *weak_const(Sema *s, const TVal *t, DType to, int at_use) {
  if (t->rt)
    return rt_as(s, t, to);
  TypedNode *n = at_use ? node_at_use(s, TN_CONST, to, &scalar_shape)
                        : new_node(s, TN_CONST, to, &scalar_shape);
  n->value = dtype_is_storage(to) ? weak_cast_value(t, to) : weak_value(t, to);
  return n;
}

static TVal *weak_as(Sema *s, TVal *t, DType to, int at_use) {
  if (!t || !is_weak(t))
    return t;
  if (!check_weak_fits(s, t, to))
    return NULL;
  return tv_tensor(s, weak_const(s, t, to, at_use), t->loc);
}

static DType weak_default(const TVal *t) {
  return t->kind == TV_WEAK_INT ? DT_I32 : DT_F32;
}

/* Makes a value concrete: weak -> i32/f32 constant, rank 0. */
static TVal *strong(Sema *s, TVal *t) {
  if (!t || !is_weak(t))
    return t;
  return weak_as(s, t, weak_default(t), 0);
}

TVal *sema_output_value(Sema *s, TVal *t, const DType *declared) {
  if (!t || !is_weak(t))
    return t;
  return weak_as(s, t, declared ? *declared : weak_default(t), 1);
}

/* An operand converted to compute dtype ct: a weak one becomes a constant
 * of ct made where it is used. */
static TypedNode *operand(Sema *s, const TVal *t, DType ct) {
  if (!is_weak(t))
    return t->node;
  if (t->rt)
    return rt_as(s, t, ct);
  TypedNode *n = node_at_use(s, TN_CONST, ct, &scalar_shape);
  n->value = weak_value(t, ct);
  return n;
}

/* ---- promotion and broadcasting ------------------------------------------ */

static int dtype_rank(DType t) {
  static const int rank[DT_COUNT] = {
      [DT_BOOL] = 0,   [DT_I8] = 1,     [DT_U8] = 1,  [DT_I32] = 2,  [DT_I64] = 3,
      [DT_F8E4M3] = 4, [DT_F8E5M2] = 4, [DT_F16] = 4, [DT_BF16] = 4, [DT_F32] = 5,
      [DT_F64] = 6};
  return rank[t];
}

/* Two storage types of one rank (i8 and u8, f16 and bf16, an f8 and
 * another) meet in the type both are computed in. */
static DType promote_strong(DType x, DType y) {
  if (x == y)
    return x;
  if (dtype_rank(x) == dtype_rank(y))
    return dtype_compute(x);
  return dtype_rank(x) > dtype_rank(y) ? x : y;
}

/* The dtype a weak value takes next to strong dtype t. */
static DType weak_meets(const TVal *w, DType t) {
  if (w->kind == TV_WEAK_FLOAT)
    return dtype_is_float(t) ? t : DT_F32;
  return t == DT_BOOL ? DT_I32 : t;
}

/* Promotion of two values, at least one strong. */
static DType promote(const TVal *a, const TVal *b) {
  if (is_weak(a))
    return weak_meets(a, b->dtype);
  if (is_weak(b))
    return weak_meets(b, a->dtype);
  return promote_strong(a->dtype, b->dtype);
}

static const Shape *tv_shape(const TVal *t) {
  return t->kind == TV_TENSOR ? &t->node->shape : &scalar_shape;
}

static int is_one(Dim d) { return d.var < 0 && d.size == 1; }

/* d is a size proved at most 1 (min(1, D), a slice of one along an axis
 * that may be empty) but not the literal 1. */
static int at_most_one(Sema *s, Dim d) {
  return !is_one(d) && d.var >= 0 && se_nonneg(s->a, se_sub(s->a, se_const(s->a, 1), sema_dim_size(s, d)));
}

/* numpy broadcasting; a size variable never stretches. */
static int broadcast_shapes(Sema *s, const Shape *x, const Shape *y,
                            DType xt, DType yt, Shape *out, SrcRange loc) {
  int rank = x->rank > y->rank ? x->rank : y->rank;
  out->rank = rank;
  for (int i = 0; i < rank; i++) {
    int xi = x->rank - 1 - i, yi = y->rank - 1 - i, oi = rank - 1 - i;
    if (xi < 0 || (yi >= 0 && is_one(x->d[xi]))) {
      out->d[oi] = y->d[yi];
    } else if (yi < 0 || is_one(y->d[yi]) || dim_equal(x->d[xi], y->d[yi])) {
      out->d[oi] = x->d[xi];
    } else {
      sema_error(s, loc, "cannot broadcast %s with %s: axis %d is %s vs %s%s",
                 type_str(s, xt, x), type_str(s, yt, y), oi,
                 dim_str(s, x->d[xi]), dim_str(s, y->d[yi]),
                 at_most_one(s, x->d[xi]) || at_most_one(s, y->d[yi])
                     ? " (a size of at most 1, as a slice a:a+1 of an axis that may be empty has, does not "
                       "stretch: sum over that axis gives the literal 1)"
                     : "");
      return 0;
    }
  }
  return 1;
}

static int broadcast2(Sema *s, const TVal *a, const TVal *b, Shape *out,
                      SrcRange loc) {
  return broadcast_shapes(s, tv_shape(a), tv_shape(b), a->dtype, b->dtype, out,
                          loc);
}

/* ---- operators ------------------------------------------------------------- */

typedef enum OpKind { KIND_A, KIND_C, KIND_L } OpKind;

static OpKind binary_kind(BinaryOp op) {
  static const OpKind kinds[BIN_COUNT] = {
#define X(e, spelling, kind, d) [BIN_##e] = KIND_##kind,
      TECC_BINARY_OPS(X)
#undef X
  };
  return kinds[op];
}

static const char *op_spelling(BinaryOp op) {
  return op == BIN_POW ? "**" : binary_name(op);
}

static int is_bool(const TVal *t) {
  return t->kind == TV_TENSOR && t->dtype == DT_BOOL;
}

static int negative_literal(const TVal *t) {
  return t->kind == TV_WEAK_INT && t->literal && t->k.i < 0;
}

static TypedNode *binary_node(Sema *s, BinaryOp op, DType rt, DType t,
                              TypedNode *x, TypedNode *y, const Shape *sh);

/* Both weak: fold at compile time in i64/f64 (a run-time one: a node). */
static TVal *fold_weak_binary(Sema *s, BinaryOp op, TVal *a, TVal *b,
                              SrcRange loc) {
  int ints = a->kind == TV_WEAK_INT && b->kind == TV_WEAK_INT;
  if (op == BIN_DIV || op == BIN_ATAN2)
    ints = 0;
  DType t = ints ? DT_I64 : DT_F64;
  if (a->rt || b->rt) { /* a node, in i64/f64, that stays weak */
    int cmp = binary_kind(op) == KIND_C;
    TypedNode *x = weak_node(s, a, t), *y = weak_node(s, b, t);
    TypedNode *n = binary_node(s, op, cmp ? DT_BOOL : t, t, x, y, &scalar_shape);
    if (cmp)
      return tv_tensor(s, n, loc);
    TVal *r = weak_rt(s, ints ? TV_WEAK_INT : TV_WEAK_FLOAT, n, loc);
    if (ints)
      r->size = size_of_binary(s, op, a, b);
    return r;
  }
  Scalar x = fold_cast(weak_dtype(a), a->k, t);
  Scalar y = fold_cast(weak_dtype(b), b->k, t);
  Scalar r = fold_binary(op, t, x, y);
  if (binary_kind(op) == KIND_C)
    return strong_const(s, DT_BOOL, r, loc);
  return ints ? sema_weak_int(s, r.i, loc, 0) : sema_weak_float(s, r.f, loc);
}

static int check_logical(Sema *s, BinaryOp op, TVal *a, TVal *b,
                         SrcRange loc) {
  if (is_bool(a) && is_bool(b))
    return 1;
  sema_error(s, loc, "'%s' needs bool operands, got %s and %s",
             binary_name(op), tval_type_str(s, a), tval_type_str(s, b));
  return 0;
}

static int check_arith(Sema *s, BinaryOp op, TVal *a, TVal *b,
                       SrcRange op_loc) {
  if (is_bool(a) || is_bool(b)) {
    sema_error(s, op_loc, "'%s' on a bool operand; cast it first",
               op_spelling(op));
    return 0;
  }
  if (op == BIN_POW && negative_literal(b) &&
      (a->kind == TV_WEAK_INT || (a->kind == TV_TENSOR && !dtype_is_float(a->dtype)))) {
    sema_error(s, b->loc,
               "negative exponent %lld in integer '**'; use a float base",
               (long long)b->k.i);
    return 0;
  }
  return 1;
}

/* The dtype an operation computes in: true division and atan2 of integers
 * go to f32 (i32) or f64 (i64). */
static DType arith_dtype(BinaryOp op, DType t) {
  if ((op == BIN_DIV || op == BIN_ATAN2) && !dtype_is_float(t))
    return t == DT_I64 ? DT_F64 : DT_F32;
  return t;
}

static TypedNode *binary_node(Sema *s, BinaryOp op, DType rt, DType t,
                              TypedNode *x, TypedNode *y, const Shape *sh) {
  TypedNode *n = new_node(s, TN_BINARY, rt, sh);
  n->arg_dtype = t;
  n->bop = op;
  n->args[0] = x;
  n->args[1] = y;
  n->nargs = 2;
  return n;
}

TVal *sema_binary(Sema *s, BinaryOp op, TVal *a, TVal *b, SrcRange op_loc,
                  SrcRange loc) {
  if (!a || !b)
    return NULL;
  OpKind kind = binary_kind(op);
  if (kind == KIND_L && !check_logical(s, op, a, b, loc))
    return NULL;
  if (kind == KIND_A && !check_arith(s, op, a, b, op_loc))
    return NULL;
  if (is_weak(a) && is_weak(b))
    return fold_weak_binary(s, op, a, b, loc);
  DType t = promote(a, b);
  if (kind == KIND_A)
    t = arith_dtype(op, t);
  if (!check_weak_fits(s, a, t) || !check_weak_fits(s, b, t))
    return NULL;
  Shape sh;
  if (!broadcast2(s, a, b, &sh, loc))
    return NULL;
  DType ct = compute_dtype(t);
  TypedNode *x = operand(s, a, ct), *y = operand(s, b, ct);
  DType rt = kind == KIND_A ? t : DT_BOOL;
  return tv_tensor(s, binary_node(s, op, rt, t, x, y, &sh), loc);
}

/* ---- unary ------------------------------------------------------------------ */

typedef enum UnaryKind { UK_F, UK_K, UK_P, UK_R } UnaryKind;

static UnaryKind unary_kind(UnaryOp op) {
  static const UnaryKind kinds[UN_COUNT] = {
#define X(e, name, kind, d) [UN_##e] = UK_##kind,
      TECC_UNARY_BUILTINS(X)
#undef X
      [UN_NEG] = UK_K,
      [UN_NOT] = UK_K,
      [UN_DETACH] = UK_K,
      [UN_NORMCDF] = UK_F,
  };
  return kinds[op];
}

static const char *unary_spelling(UnaryOp op) {
  return op == UN_NEG ? "-" : unary_name(op);
}

static TVal *rt_weak_unary(Sema *s, UnaryOp op, TVal *a, SrcRange loc);

static TVal *fold_weak_unary(Sema *s, UnaryOp op, TVal *a, SrcRange loc) {
  UnaryKind kind = unary_kind(op);
  if (a->rt)
    return rt_weak_unary(s, op, a, loc);
  if (kind == UK_P) {
    Scalar r = fold_unary(op, weak_dtype(a), DT_BOOL, a->k);
    return strong_const(s, DT_BOOL, r, loc);
  }
  if (a->kind == TV_WEAK_INT && kind != UK_F) {
    Scalar r = fold_unary(op, DT_I64, DT_I64, a->k);
    return sema_weak_int(s, r.i, loc, op == UN_NEG && a->literal);
  }
  Scalar x = fold_cast(weak_dtype(a), a->k, DT_F64);
  return sema_weak_float(s, fold_unary(op, DT_F64, DT_F64, x).f, loc);
}

/* isnan/isinf/isfinite of an integer or bool: a constant. */
static TVal *int_predicate(Sema *s, UnaryOp op, TVal *a, SrcRange loc);
static TypedNode *unary_node(Sema *s, UnaryOp op, DType rt, DType t,
                             TypedNode *a);

/* A unary operation of a run-time weak value: a node in i64/f64 that
 * stays weak (a predicate: bool). */
static TVal *rt_weak_unary(Sema *s, UnaryOp op, TVal *a, SrcRange loc) {
  UnaryKind kind = unary_kind(op);
  int ints = a->kind == TV_WEAK_INT;
  if (kind == UK_P && ints)
    return int_predicate(s, op, tv_tensor(s, a->rt, loc), loc);
  if (kind == UK_R && ints) {
    TVal *r = weak_rt(s, TV_WEAK_INT, a->rt, loc);
    r->size = a->size;
    return r;
  }
  DType t = ints && kind != UK_F ? DT_I64 : DT_F64;
  TypedNode *n = unary_node(s, op, kind == UK_P ? DT_BOOL : t, t, rt_as(s, a, t));
  if (kind == UK_P)
    return tv_tensor(s, n, loc);
  TVal *r = weak_rt(s, t == DT_I64 ? TV_WEAK_INT : TV_WEAK_FLOAT, n, loc);
  if (op == UN_NEG && t == DT_I64 && a->size)
    r->size = se_scale(s->a, a->size, -1);
  return r;
}

/* isnan/isinf/isfinite of an integer or bool: a constant. */
static TVal *int_predicate(Sema *s, UnaryOp op, TVal *a, SrcRange loc) {
  Scalar r = {op == UN_ISFINITE, 0};
  return tv_tensor(s, const_node(s, DT_BOOL, r, &a->node->shape), loc);
}

static TypedNode *unary_node(Sema *s, UnaryOp op, DType rt, DType t,
                             TypedNode *a) {
  TypedNode *n = new_node1(s, TN_UNARY, rt, a);
  n->arg_dtype = t;
  n->uop = op;
  return n;
}

static TVal *unary_strong(Sema *s, UnaryOp op, TVal *a, SrcRange loc) {
  UnaryKind kind = unary_kind(op);
  DType t = a->dtype;
  if (kind == UK_P && !dtype_is_float(t))
    return int_predicate(s, op, a, loc);
  if (kind == UK_R && !dtype_is_float(t))
    return tv_tensor(s, a->node, loc); /* identity on integers */
  if (kind == UK_F && !dtype_is_float(t))
    t = t == DT_I64 ? DT_F64 : DT_F32;
  DType rt = kind == UK_P ? DT_BOOL : t;
  return tv_tensor(s, unary_node(s, op, rt, t, a->node), loc);
}

TVal *sema_unary(Sema *s, UnaryOp op, TVal *a, SrcRange op_loc, SrcRange loc) {
  if (!a)
    return NULL;
  if (op == UN_NOT) {
    if (!is_bool(a)) {
      sema_error(s, loc, "'not' needs a bool operand, got %s",
                 tval_type_str(s, a));
      return NULL;
    }
    return tv_tensor(s, unary_node(s, UN_NOT, DT_BOOL, DT_BOOL, a->node), loc);
  }
  if (is_bool(a) && unary_kind(op) != UK_F && unary_kind(op) != UK_P) {
    sema_error(s, op_loc, "'%s' on a bool operand; cast it first",
               unary_spelling(op));
    return NULL;
  }
  if (is_weak(a))
    return fold_weak_unary(s, op, a, loc);
  return unary_strong(s, op, a, loc);
}

/* ---- casts ------------------------------------------------------------------ */

static TVal *sema_cast(Sema *s, DType to, TVal *a, SrcRange loc) {
  if (is_weak(a) && a->rt)
    return tv_tensor(s, rt_as(s, a, to), loc);
  if (is_weak(a))
    return tv_tensor(s, const_node(s, to, weak_cast_value(a, to), &scalar_shape),
                     loc);
  return tv_tensor(s, new_node1(s, TN_CAST, to, a->node), loc);
}

/* detach(x): x, with no gradient (language.md §13.4).  Only a float
 * tensor can carry one: a weak constant, an integer or a bool is returned
 * as it is. */
static TVal *sema_detach(Sema *s, TVal *a, SrcRange loc) {
  if (is_weak(a) || !dtype_is_float(a->dtype)) {
    TVal *t = tv_new(s, a->kind, loc);
    *t = *a;
    t->loc = loc;
    t->literal = 0;
    return t;
  }
  return tv_tensor(s, unary_node(s, UN_DETACH, a->dtype, a->dtype, a->node),
                   loc);
}

/* ---- where and clamp ----------------------------------------------------- */

static TVal *sema_where(Sema *s, const Expr *call, TVal **args) {
  TVal *c = args[0], *a = args[1], *b = args[2];
  if (!is_bool(c)) {
    sema_error(s, c->loc, "condition of 'where' must be bool, got %s",
               tval_type_str(s, c));
    return NULL;
  }
  DType t;
  if (is_weak(a) && is_weak(b))
    t = a->kind == TV_WEAK_FLOAT || b->kind == TV_WEAK_FLOAT ? DT_F32 : DT_I32;
  else
    t = promote(a, b);
  if (!check_weak_fits(s, a, t) || !check_weak_fits(s, b, t))
    return NULL;
  Shape ab, sh;
  if (!broadcast2(s, a, b, &ab, call->loc) ||
      !broadcast_shapes(s, tv_shape(c), &ab, DT_BOOL, t, &sh, call->loc))
    return NULL;
  DType ct = compute_dtype(t);
  TypedNode *an = operand(s, a, ct), *bn = operand(s, b, ct);
  TypedNode *n = new_node(s, TN_SELECT, t, &sh);
  n->args[0] = c->node;
  n->args[1] = an;
  n->args[2] = bn;
  n->nargs = 3;
  return tv_tensor(s, n, call->loc);
}

/* The maximum or minimum node just made for clamp(), if one was (two weak
 * operands fold to a weak value). */
static void mark_clamp_bound(TVal *t) {
  if (t && t->kind == TV_TENSOR && t->node->op == TN_BINARY)
    t->node->clamp_bound = 1;
}

static TVal *sema_clamp(Sema *s, const Expr *call, TVal **args) {
  for (int i = 0; i < 3; i++)
    if (is_bool(args[i])) {
      sema_error(s, call->name_loc, "'clamp' on a bool operand; cast it first");
      return NULL;
    }
  TVal *lo = sema_binary(s, BIN_MAXIMUM, args[0], args[1], call->name_loc,
                         call->loc);
  mark_clamp_bound(lo);
  TVal *hi = sema_binary(s, BIN_MINIMUM, lo, args[2], call->name_loc, call->loc);
  mark_clamp_bound(hi);
  return hi;
}

/* ---- reductions ------------------------------------------------------------ */

typedef struct AxisList {
  TVal *items[64];
  int n;
} AxisList;

static int collect_axes(Sema *s, TVal **args, int nargs, AxisList *out) {
  out->n = 0;
  for (int i = 1; i < nargs; i++) {
    TVal *t = args[i];
    int n = t->kind == TV_AXES ? t->naxes : 1;
    for (int j = 0; j < n; j++) {
      if (out->n == 64) {
        sema_error(s, t->loc, "too many axes");
        return 0;
      }
      out->items[out->n++] = t->kind == TV_AXES ? t->axes[j] : t;
    }
  }
  return 1;
}

/* An axis argument of `what` on x: a literal, counted from the end when
 * negative; -1 after an error. */
static int literal_axis(Sema *s, const char *what, const TVal *x, const TVal *t) {
  int rank = x->node->shape.rank;
  if (t->kind != TV_WEAK_INT || !t->literal) {
    sema_error(s, t->loc, "axis of '%s' must be an integer literal", what);
    return -1;
  }
  int64_t ax = t->k.i < 0 ? t->k.i + rank : t->k.i;
  if (ax < 0 || ax >= rank) {
    sema_error(s, t->loc, "axis %lld is out of range for %s",
               (long long)t->k.i, tval_type_str(s, x));
    return -1;
  }
  return (int)ax;
}

/* The reduced axes as a bit mask; 0 with *ok = 0 after an error. */
static uint32_t axes_mask(Sema *s, ReduceOp op, const TVal *x,
                          const AxisList *al, int *ok) {
  int rank = x->node->shape.rank;
  uint32_t mask = 0;
  *ok = 0;
  for (int i = 0; i < al->n; i++) {
    const TVal *t = al->items[i];
    int ax = literal_axis(s, reduce_name(op), x, t);
    if (ax < 0)
      return 0;
    if (mask & (1u << ax)) {
      if (ax == t->k.i)
        sema_error(s, t->loc, "repeated axis %lld", (long long)ax);
      else
        sema_error(s, t->loc, "axis %lld repeats axis %lld",
                   (long long)t->k.i, (long long)ax);
      return 0;
    }
    if ((op == RED_ARGMAX || op == RED_ARGMIN) && i > 0) {
      sema_error(s, t->loc, "'%s' takes at most one axis", reduce_name(op));
      return 0;
    }
    mask |= 1u << ax;
  }
  *ok = 1;
  return al->n ? mask : (uint32_t)((1u << rank) - 1);
}

/* A reduction of x (converted to arg_dtype first) over `mask`, keepdims. */
static TypedNode *reduce_node(Sema *s, ReduceOp op, DType t, DType arg_dtype,
                              TypedNode *x, uint32_t mask) {
  TypedNode *n = new_node1(s, TN_REDUCE, t, x);
  for (int i = 0; i < n->shape.rank; i++)
    if (mask & (1u << i))
      n->shape.d[i] = (Dim){-1, 1};
  n->arg_dtype = arg_dtype;
  n->rop = op;
  n->axes = mask;
  return n;
}

/* argmax/argmin: the index (i64); of a rank-0 value, 0.  Bool compares
 * as i32 0/1. */
static TVal *reduce_arg(Sema *s, ReduceOp op, TVal *x, uint32_t mask,
                        SrcRange loc) {
  if (mask == 0) {
    Scalar zero = {0, 0};
    return strong_const(s, DT_I64, zero, loc);
  }
  DType arg = x->dtype == DT_BOOL ? DT_I32 : x->dtype;
  return tv_tensor(s, reduce_node(s, op, DT_I64, arg, x->node, mask), loc);
}

/* The .te dtype of the result of `op` on dtype t (argmax aside). */
static DType reduce_dtype(ReduceOp op, DType t) {
  switch (op) {
  case RED_SUM:
  case RED_PROD: /* 8-bit integers widen, as numpy's and PyTorch's do */
    return t == DT_BOOL ? DT_I64 : dtype_is_int(t) ? dtype_compute(t) : t;
  case RED_MEAN:
  case RED_VAR:
    if (dtype_is_float(t))
      return t;
    return t == DT_I64 ? DT_F64 : DT_F32;
  default:
    return t;
  }
}

static TVal *reduce_typed(Sema *s, ReduceOp op, TVal *x, uint32_t mask,
                          SrcRange loc) {
  if (op == RED_ARGMAX || op == RED_ARGMIN)
    return reduce_arg(s, op, x, mask, loc);
  if (x->dtype == DT_BOOL && (op == RED_MAX || op == RED_MIN))
    op = op == RED_MAX ? RED_ANY : RED_ALL;
  DType t = reduce_dtype(op, x->dtype);
  return tv_tensor(s, reduce_node(s, op, t, t, x->node, mask), loc);
}

static const char *source_text(Sema *s, SrcRange r) {
  return arena_strndup(s->a, r.file->text + r.begin, r.end - r.begin);
}

/* max(x, z) with a tensor or a float for z: numpy's max is a reduction
 * too, but the slip is common enough to name the elementwise builtin. */
static int elementwise_meant(Sema *s, ReduceOp op, const Expr *call, TVal **args,
                             int nargs) {
  if ((op != RED_MAX && op != RED_MIN) || nargs != 2 || call->nargs != 2 ||
      (args[1]->kind != TV_TENSOR && args[1]->kind != TV_WEAK_FLOAT))
    return 0;
  const char *which = op == RED_MAX ? "maximum" : "minimum";
  sema_error(s, args[1]->loc, "axis of '%s' must be an integer literal; for the "
             "elementwise %s of two tensors, write %s(%s, %s)", reduce_name(op),
             which, which, source_text(s, call->args[0]->loc),
             source_text(s, call->args[1]->loc));
  return 1;
}

static TVal *sema_reduce(Sema *s, ReduceOp op, const Expr *call, TVal **args,
                          int nargs) {
  if (elementwise_meant(s, op, call, args, nargs))
    return NULL;
  TVal *x = strong(s, args[0]);
  if (!x)
    return NULL;
  if ((op == RED_ANY || op == RED_ALL) && x->dtype != DT_BOOL) {
    sema_error(s, x->loc, "'%s' needs a bool operand, got %s",
               reduce_name(op), tval_type_str(s, x));
    return NULL;
  }
  AxisList al;
  int ok;
  if (!collect_axes(s, args, nargs, &al))
    return NULL;
  uint32_t mask = axes_mask(s, op, x, &al, &ok);
  if (!ok)
    return NULL;
  return reduce_typed(s, op, x, mask, call->loc);
}

/* ---- positions ------------------------------------------------------------ */

/* index(x, axis): the position along `axis` of x's shape, an i64 tensor
 * that is 1 on every other axis (language.md §9.6).  x's values are
 * never read, so x may have any dtype. */
static TVal *sema_index(Sema *s, const Expr *call, TVal **args) {
  TVal *x = args[0];
  if (x->kind != TV_TENSOR || x->node->shape.rank == 0) {
    sema_error(s, x->loc, "'index' needs a tensor of rank 1 or more, got %s",
               tval_type_str(s, x));
    return NULL;
  }
  int ax = literal_axis(s, "index", x, args[1]);
  if (ax < 0)
    return NULL;
  Shape sh = x->node->shape;
  for (int i = 0; i < sh.rank; i++)
    if (i != ax)
      sh.d[i] = (Dim){-1, 1};
  TypedNode *n = new_node(s, TN_INDEX, DT_I64, &sh);
  n->axes = 1u << ax;
  return tv_tensor(s, n, call->loc);
}

/* The node under n that x cannot be gathered through along `axis` (n's
 * axes): a reduction whose value varies along it, unless the gather is
 * `affine` (a slice's or a concat's, which gathers the reduction's
 * operand), else NULL.  A take or slice along another axis gathers its
 * indices, and those of what it takes, the same way (language.md §9.7).
 * `seen` marks the nodes (by order) already walked: the expression is a
 * DAG. */
static const TypedNode *varying_reduction(const TypedNode *n, int axis, int affine, char *seen) {
  if (axis < 0 || (n->shape.d[axis].var < 0 && n->shape.d[axis].size == 1) || n->order < 0 || seen[n->order])
    return NULL; /* broadcast along the axis: every index reads the same */
  seen[n->order] = 1;
  if (n->op == TN_REDUCE && !affine)
    return n;
  for (int i = 0; i < n->nargs; i++) {
    const TypedNode *a = n->args[i];
    const TypedNode *r = varying_reduction(a, axis - (n->shape.rank - a->shape.rank), affine, seen);
    if (r)
      return r;
  }
  return NULL;
}

int sema_gathers_through(Sema *s, const TVal *x, int axis, const char *what) {
  char *seen = arena_alloc(s->a, (size_t)s->nodes.len + 1);
  const TypedNode *r = varying_reduction(x->node, axis, strcmp(what, "take") != 0, seen);
  if (!r)
    return 1;
  Diag *d = sema_error(s, x->loc, "'%s' along axis %d cannot gather through a reduction that varies along it; "
                       "%s before reducing", what, axis, what);
  diag_note(s->d, d, r->loc, "this reduction");
  return 0;
}

/* The shapes of x and i with `axis` set to literal 1. */
static Shape without_axis(const Shape *s, int axis) {
  Shape r = *s;
  r.d[axis] = (Dim){-1, 1};
  return r;
}

/* take(x, i, axis): numpy's take_along_axis with broadcasting
 * (language.md §9.7).  x may be any expression that does not reduce along
 * other axes while varying along `axis`; lowering gathers its inputs. */
static TVal *sema_take(Sema *s, const Expr *call, TVal **args) {
  TVal *x = args[0], *i = args[1];
  if (x->kind != TV_TENSOR || x->node->shape.rank == 0) {
    sema_error(s, x->loc, "'take' needs a tensor of rank 1 or more, got %s", tval_type_str(s, x));
    return NULL;
  }
  if (i->kind != TV_TENSOR || (i->dtype != DT_I32 && i->dtype != DT_I64)) {
    sema_error(s, i->loc, "index of 'take' must be an i32 or i64 tensor, got %s", tval_type_str(s, i));
    return NULL;
  }
  const Shape *xs = &x->node->shape, *is = &i->node->shape;
  if (is->rank != xs->rank) {
    sema_error(s, i->loc, "index of 'take' must have the rank of %s, got %s", tval_type_str(s, x),
               tval_type_str(s, i));
    return NULL;
  }
  int ax = literal_axis(s, "take", x, args[2]);
  if (ax < 0)
    return NULL;
  for (int d = 0; d < xs->rank; d++)
    if (d != ax && !is_one(xs->d[d]) && !is_one(is->d[d]) && !dim_equal(xs->d[d], is->d[d])) {
      sema_error(s, call->loc, "'take' along axis %d: %s and its index %s must broadcast on the other "
                 "axes, but axis %d is %s vs %s", ax, tval_type_str(s, x), tval_type_str(s, i), d,
                 dim_str(s, xs->d[d]), dim_str(s, is->d[d]));
      return NULL;
    }
  Shape xa = without_axis(xs, ax), ia = without_axis(is, ax), sh;
  if (!broadcast_shapes(s, &xa, &ia, x->dtype, i->dtype, &sh, call->loc))
    return NULL;
  sh.d[ax] = is->d[ax];
  if (!sema_gathers_through(s, x, ax, "take"))
    return NULL;
  TypedNode *n = new_node(s, TN_TAKE, x->dtype, &sh);
  n->args[0] = x->node;
  n->args[1] = i->node;
  n->nargs = 2;
  n->axes = 1u << ax;
  return tv_tensor(s, n, call->loc);
}

/* ---- for sema_slice.c ------------------------------------------------------ */

TypedNode *sema_new_node(Sema *s, TypedOp op, DType t, const Shape *sh) { return new_node(s, op, t, sh); }
TVal *sema_tensor(Sema *s, TypedNode *n, SrcRange loc) { return tv_tensor(s, n, loc); }
int sema_axis(Sema *s, const char *what, const TVal *x, const TVal *t) { return literal_axis(s, what, x, t); }
DType sema_promote(DType x, DType y) { return promote_strong(x, y); }
const char *sema_dim_str(Sema *s, Dim d) { return dim_str(s, d); }
TypedNode *sema_binary_node(Sema *s, BinaryOp op, DType rt, TypedNode *x, TypedNode *y, const Shape *sh) {
  return binary_node(s, op, rt, x->dtype, x, y, sh);
}
TypedNode *sema_cast_node(Sema *s, TypedNode *x, DType t) {
  return x->dtype == t ? x : new_node1(s, TN_CAST, t, x);
}

/* ---- builtin calls -------------------------------------------------------- */

typedef enum Builtin {
  BI_NONE,
  BI_CAST,
  BI_UNARY,
  BI_REDUCE,
  BI_BINARY,
  BI_WHERE,
  BI_CLAMP,
  BI_DETACH,
  BI_INDEX,
  BI_TAKE,
  BI_CONCAT
} Builtin;

typedef struct BuiltinInfo {
  Builtin kind;
  DType dtype;
  UnaryOp uop;
  BinaryOp bop;
  ReduceOp rop;
} BuiltinInfo;

static void put_builtin(Sema *s, const char *name, BuiltinInfo bi) {
  BuiltinInfo *p = ARENA_NEW(s->a, BuiltinInfo);
  *p = bi;
  strmap_put(s->a, &s->builtins, name, p);
}

/* Put in the reverse order of precedence, so that a name in two tables
 * takes the first: a dtype, a unary builtin, a reduction, where, clamp,
 * then the binary ones.  The other reserved names (prelude fns and
 * constants) are BI_NONE. */
void sema_builtins_init(Sema *s) {
  static const char *const others[] = {"softmax", "log_softmax", "logsumexp",
                                       "pi",      "inf",         "nan"};
  static const struct {
    const char *name;
    BinaryOp op;
  } binaries[] = {{"maximum", BIN_MAXIMUM}, {"minimum", BIN_MINIMUM},
                  {"pow", BIN_POW},         {"atan2", BIN_ATAN2}};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    put_builtin(s, others[i], (BuiltinInfo){.kind = BI_NONE});
  for (size_t i = 0; i < sizeof binaries / sizeof binaries[0]; i++)
    put_builtin(s, binaries[i].name,
                (BuiltinInfo){.kind = BI_BINARY, .bop = binaries[i].op});
  put_builtin(s, "clamp", (BuiltinInfo){.kind = BI_CLAMP});
  put_builtin(s, "detach", (BuiltinInfo){.kind = BI_DETACH});
  put_builtin(s, "index", (BuiltinInfo){.kind = BI_INDEX});
  put_builtin(s, "take", (BuiltinInfo){.kind = BI_TAKE});
  put_builtin(s, "concat", (BuiltinInfo){.kind = BI_CONCAT});
  put_builtin(s, "where", (BuiltinInfo){.kind = BI_WHERE});
  for (int op = RED_COUNT - 1; op >= 0; op--)
    put_builtin(s, reduce_name((ReduceOp)op),
                (BuiltinInfo){.kind = BI_REDUCE, .rop = (ReduceOp)op});
  for (int op = UN_NEG - 1; op >= 0; op--)
    put_builtin(s, unary_name((UnaryOp)op),
                (BuiltinInfo){.kind = BI_UNARY, .uop = (UnaryOp)op});
  for (int t = DT_COUNT - 1; t >= 0; t--)
    put_builtin(s, dtype_name((DType)t),
                (BuiltinInfo){.kind = BI_CAST, .dtype = (DType)t});
}

/* One hash lookup: every call and every name defined asks, some of them
 * twice. */
static BuiltinInfo builtin_lookup(Sema *s, const char *name) {
  const BuiltinInfo *bi = strmap_get(&s->builtins, name);
  return bi ? *bi : (BuiltinInfo){.kind = BI_NONE};
}

int builtin_arity(Sema *s, const char *name, int *min_args, int *max_args) {
  BuiltinInfo bi = builtin_lookup(s, name);
  static const int arity[][2] = {[BI_NONE] = {0, 0},  [BI_CAST] = {1, 1},
                                 [BI_UNARY] = {1, 1}, [BI_REDUCE] = {1, -1},
                                 [BI_BINARY] = {2, 2}, [BI_WHERE] = {3, 3},
                                 [BI_CLAMP] = {3, 3}, [BI_DETACH] = {1, 1},
                                 [BI_INDEX] = {2, 2}, [BI_TAKE] = {3, 3},
                                 [BI_CONCAT] = {1, -1}};
  *min_args = arity[bi.kind][0];
  *max_args = arity[bi.kind][1];
  return bi.kind != BI_NONE;
}

int is_builtin_name(Sema *s, const char *name) {
  return strmap_get(&s->builtins, name) != NULL;
}

/* Only the axis arguments of a reduction may be a list of axes. */
static int check_no_axes_list(Sema *s, TVal **args, int n) {
  for (int i = 0; i < n; i++)
    if (args[i]->kind == TV_AXES) {
      sema_error(s, args[i]->loc, "a list of axes can only be passed to a reduction");
      return 0;
    }
  return 1;
}

TVal *sema_builtin_call(Sema *s, const Expr *call, TVal **args, int nargs) {
  for (int i = 0; i < nargs; i++)
    if (!args[i])
      return NULL;
  BuiltinInfo bi = builtin_lookup(s, call->name);
  if (!check_no_axes_list(s, args, bi.kind == BI_REDUCE ? 1 : nargs))
    return NULL;
  switch (bi.kind) {
  case BI_CAST:
    return sema_cast(s, bi.dtype, args[0], call->loc);
  case BI_UNARY:
    return sema_unary(s, bi.uop, args[0], call->name_loc, call->loc);
  case BI_REDUCE:
    return sema_reduce(s, bi.rop, call, args, nargs);
  case BI_BINARY:
    return sema_binary(s, bi.bop, args[0], args[1], call->name_loc, call->loc);
  case BI_WHERE:
    return sema_where(s, call, args);
  case BI_CLAMP:
    return sema_clamp(s, call, args);
  case BI_DETACH:
    return sema_detach(s, args[0], call->loc);
  case BI_INDEX:
    return sema_index(s, call, args);
  case BI_TAKE:
    return sema_take(s, call, args);
  case BI_CONCAT:
    return sema_concat(s, call, args, nargs);
  default:
    internal_error("sema_builtin_call: '%s' is not a builtin", call->name);
  }
}
