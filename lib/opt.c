/* opt.c — IR optimization: constant folding, exact algebraic identities,
 * strength reduction, CSE by hash-consing, dead-value removal (one forward
 * pass, then a backward liveness pass).
 *
 * Each value is visited in topological order; its arguments are first
 * replaced by their representatives (aux), then it is simplified (folded,
 * reduced to an argument, or rewritten into cheaper operations) and finally
 * hash-consed against the values seen before.  Identities are only those
 * exact in IEEE arithmetic: x*1, x/1, x-0, x+(-0.0), x**1, cast to the same
 * dtype, a cast back after an exact widening (f16 -> f32 -> f16), -(-x),
 * not not x, x and true, x or false, select on a constant,
 * maximum/minimum(x, x).  Never x+0 (wrong for -0.0), x*0 or x-x (wrong for
 * inf and NaN).
 *
 * Strength reduction, c a rank-0 literal (possibly broadcast).  "Exact"
 * means bit for bit the correctly rounded result of the operation replaced,
 * for every input: +-0, +-inf, NaN, subnormals, overflow.
 *   x ** 0   -> 1            exact: pow(x, +-0) is 1 for every x, NaN too
 *                            (C99 F.9.4.4; CUDA's powf and pow say so)
 *   x ** 2   -> x*x          exact: one rounding of the exact square
 *   x ** -1  -> 1/x          exact: one rounding of the exact quotient
 *   x ** 0.5 -> where(x == -inf, inf, abs(sqrt(x)))
 *                            exact: sqrt is correctly rounded and equals
 *                            pow(x, 0.5) except at -0 (sqrt -0, pow +0: the
 *                            abs) and -inf (sqrt NaN, pow +inf: the select)
 *   x / c    -> x * (1/c)    exact when c is +-2^k and 1/c a normal number
 *                            of the dtype: both round the same real number
 *   x ** 3   -> (x*x)*x      NOT bit-exact: two roundings, relative error
 *                            under 2u (u = 2^-24 in f32, 2^-53 in f64), so
 *                            at most 2 ulp from the correctly rounded power
 *   x ** 4   -> (x*x)*(x*x)  NOT bit-exact: under 3u, at most 3 ulp
 * Zeros, infinities and NaN come out as pow gives them in all of these.
 * x ** 3 and x ** 4 are accepted because the pow they replace is not
 * correctly rounded either (CUDA lists a few ulp for powf and pow), and the
 * contract (abi.md §6: rtol 1e-5 for f32, 1e-12 for f64, against an f64
 * evaluation of the program as written) is thousands of ulp wide; only an
 * exact power within 3 ulp of the largest finite number may round to inf.
 * On integers (wrapping, doc/language.md §12) x ** 0, 2, 3, 4 become 1 and
 * products, equal to exact pow modulo 2^32 or 2^64.  Not rewritten: other
 * exponents (x ** 2.5; x ** -0.5, as rsqrt is not correctly rounded),
 * division by a non-power of two (x / 3.0: 1/3 is inexact).  16-bit values
 * never reach a binary op (ir.h: computed in f32), so the rules hold for
 * their f32 arithmetic.  Products made here are rounded like any other
 * (tecc::mul is never contracted), except where a fused row sums them:
 * there a product accumulates with one fma (emit_stitch.c), as one the
 * user wrote does: one rounding fewer. */
#include "opt.h"
#include "fold.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* ---- constants ----------------------------------------------------------- */


static Scalar scalar_of(const Value *c) {
  Scalar k = {c->ival, c->fval};
  return k;
}


typedef struct Table {
  Value **slots;
  int cap; /* a power of two, at least twice len */
  int len;
} Table;

typedef struct Opt {
  Arena *a;
  Kernel *k;
  Table t;
  PtrVec out; /* the new value list */
} Opt;

static Value *intern(Opt *o, Value *v);

static Value *new_value(IrOp op, DType t, const Shape *sh, const Value *like,
                        Opt *o) {
  Value *v = ARENA_NEW(o->a, Value);
  v->op = op;
  v->dtype = t;
  v->shape = *sh;
  v->loc = like->loc;
  v->name = like->name;
  return v;
}

static Value *make_const(Opt *o, DType t, Scalar k, const Value *like) {
  Shape scalar = {0};
  Value *c = new_value(IR_CONST, t, &scalar, like, o);
  c->name = NULL;
  c->ival = k.i;
  c->fval = k.f;
  return intern(o, c);
}

static Value *broadcast_to(Opt *o, Value *c, const Value *like) {
  if (shape_equal(&c->shape, &like->shape))
    return c;
  Value *b = new_value(IR_BROADCAST, c->dtype, &like->shape, like, o);
  b->args[0] = c;
  b->nargs = 1;
  return intern(o, b);
}

/* A constant of a storage dtype is never made (ir.h): casts to f16, bf16,
 * f8 and 8-bit integers stay. */
static int foldable(const Value *v) {
  if (v->op != IR_UNARY && v->op != IR_BINARY && v->op != IR_CAST &&
      v->op != IR_SELECT)
    return 0;
  if (dtype_is_storage(v->dtype))
    return 0;
  for (int i = 0; i < v->nargs; i++)
    if (!ir_const_of(v->args[i]))
      return 0;
  return 1;
}

static Scalar fold_value(const Value *v) {
  Value *a = ir_const_of(v->args[0]);
  switch (v->op) {
  case IR_UNARY:
    return fold_unary(v->uop, a->dtype, v->dtype, scalar_of(a));
  case IR_CAST:
    return fold_cast(a->dtype, scalar_of(a), v->dtype);
  case IR_SELECT:
    return scalar_of(ir_const_of(v->args[a->ival ? 1 : 2]));
  default:
    return fold_binary(v->bop, a->dtype, scalar_of(a),
                       scalar_of(ir_const_of(v->args[1])));
  }
}

/* ---- identities ---------------------------------------------------------- */

static Value *binary_identity(Value *v) {
  Value *x = v->args[0], *y = v->args[1];
  int fl = dtype_is_float(v->dtype);
  switch (v->bop) {
  case BIN_MUL:
    if (ir_is_const(y, 1))
      return x;
    return ir_is_const(x, 1) ? y : NULL;
  case BIN_DIV:
  case BIN_POW:
    return ir_is_const(y, 1) ? x : NULL;
  case BIN_FLOORDIV:
    return !fl && ir_is_const(y, 1) ? x : NULL;
  case BIN_SUB:
    return ir_is_const(y, 0) ? x : NULL;
  case BIN_ADD:
    if (ir_is_const(y, fl ? -0.0 : 0))
      return x;
    return ir_is_const(x, fl ? -0.0 : 0) ? y : NULL;
  case BIN_MAXIMUM:
  case BIN_MINIMUM:
    return x == y ? x : NULL;
  case BIN_AND:
    if (ir_is_const(y, 1))
      return x;
    return ir_is_const(x, 1) ? y : NULL;
  case BIN_OR:
    if (ir_is_const(y, 0))
      return x;
    return ir_is_const(x, 0) ? y : NULL;
  default:
    return NULL;
  }
}

/* Every value of `from` survives a round trip through `mid`. */
static int exact_widening(DType from, DType mid) {
  switch (from) {
  case DT_BOOL: return 1;
  case DT_I8:
  case DT_U8: return mid == DT_I32 || mid == DT_I64 || mid == DT_F32 || mid == DT_F64;
  case DT_I32: return mid == DT_I64 || mid == DT_F64;
  case DT_F8E4M3:
  case DT_F8E5M2: return dtype_is_16bit(mid) || mid == DT_F32 || mid == DT_F64;
  case DT_F16:
  case DT_BF16: return mid == DT_F32 || mid == DT_F64;
  case DT_F32: return mid == DT_F64;
  default: return 0;
  }
}

/* cast(cast(x, wider), dtype of x) is x. */
static Value *cast_round_trip(Value *v) {
  Value *mid = v->args[0];
  if (mid->op != IR_CAST || mid->args[0]->dtype != v->dtype)
    return NULL;
  return exact_widening(v->dtype, mid->dtype) ? mid->args[0] : NULL;
}

/* A value equal to v (same dtype and shape), or NULL. */
static Value *identity(Value *v) {
  switch (v->op) {
  case IR_CAST:
    if (v->args[0]->dtype == v->dtype)
      return v->args[0];
    return cast_round_trip(v);
  case IR_BROADCAST:
    return shape_equal(&v->args[0]->shape, &v->shape) ? v->args[0] : NULL;
  case IR_UNARY:
    if ((v->uop == UN_NEG || v->uop == UN_NOT) && v->args[0]->op == IR_UNARY &&
        v->args[0]->uop == v->uop)
      return v->args[0]->args[0];
    return NULL;
  case IR_SELECT:
    if (ir_const_of(v->args[0]))
      return v->args[ir_const_of(v->args[0])->ival ? 1 : 2];
    return v->args[1] == v->args[2] ? v->args[1] : NULL;
  case IR_BINARY:
    return binary_identity(v);
  default:
    return NULL;
  }
}

/* ---- strength reduction (the header says which rewrites are exact) ------ */

/* A new value `like` v (dtype, shape, location), interned.  Only the value
 * that replaces v keeps its .te name. */
static Value *derived(Opt *o, IrOp op, DType t, const Value *v, int final) {
  Value *d = new_value(op, t, &v->shape, v, o);
  if (!final)
    d->name = NULL;
  return d;
}

static Value *binary_like(Opt *o, BinaryOp bop, Value *a, Value *b,
                          const Value *v, int final) {
  DType t = bop == BIN_EQ ? DT_BOOL : v->dtype;
  Value *d = derived(o, IR_BINARY, t, v, final);
  d->bop = bop;
  d->args[0] = a;
  d->args[1] = b;
  d->nargs = 2;
  return intern(o, d);
}

static Value *unary_like(Opt *o, UnaryOp uop, Value *a, const Value *v,
                         int final) {
  Value *d = derived(o, IR_UNARY, v->dtype, v, final);
  d->uop = uop;
  d->args[0] = a;
  d->nargs = 1;
  return intern(o, d);
}

/* The constant k of v's dtype, broadcast to v's shape.  The field the
 * dtype does not use stays 0, as fold.c leaves it, so that equal constants
 * hash-cons. */
static Value *const_like(Opt *o, double k, const Value *v, int final) {
  Scalar s = {0, 0};
  if (dtype_is_float(v->dtype))
    s.f = k;
  else
    s.i = (int64_t)k;
  Value *c = make_const(o, v->dtype, s, v);
  if (shape_equal(&c->shape, &v->shape))
    return c;
  Value *b = derived(o, IR_BROADCAST, v->dtype, v, final);
  b->args[0] = c;
  b->nargs = 1;
  return intern(o, b);
}

/* The exponent when y is a constant with an integer value in [-1, 4]. */
static int small_exponent(const Value *y, int *n) {
  const Value *c = ir_const_of((Value *)y);
  if (!c)
    return 0;
  double e = dtype_is_float(c->dtype) ? c->fval : (double)c->ival;
  if (e != floor(e) || e < -1 || e > 4)
    return 0;
  *n = (int)e;
  return 1;
}

/* x ** n as products: x*x is made once and shared (x ** 4 squares it). */
static Value *power_as_products(Opt *o, Value *v, int n) {
  Value *x = v->args[0];
  if (n == 0)
    return const_like(o, 1, v, 1);
  if (n == -1)
    return dtype_is_float(v->dtype)
               ? binary_like(o, BIN_DIV, const_like(o, 1, v, 0), x, v, 1)
               : NULL;
  if (n == 2)
    return binary_like(o, BIN_MUL, x, x, v, 1);
  Value *square = binary_like(o, BIN_MUL, x, x, v, 0);
  return binary_like(o, BIN_MUL, square, n == 3 ? x : square, v, 1);
}

/* x ** 0.5 as where(x == -inf, inf, abs(sqrt(x))): abs makes sqrt(-0)
 * +0 and leaves every other result of sqrt (>= +0 or NaN) as it is. */
static Value *square_root(Opt *o, Value *v) {
  Value *x = v->args[0];
  Value *root = unary_like(o, UN_SQRT, x, v, 0);
  Value *fixed = unary_like(o, UN_ABS, root, v, 0);
  Value *minus_inf =
      binary_like(o, BIN_EQ, x, const_like(o, -INFINITY, v, 0), v, 0);
  Value *s = derived(o, IR_SELECT, v->dtype, v, 1);
  s->args[0] = minus_inf;
  s->args[1] = const_like(o, INFINITY, v, 0);
  s->args[2] = fixed;
  s->nargs = 3;
  return intern(o, s);
}

static Value *power(Opt *o, Value *v) {
  int n;
  if (small_exponent(v->args[1], &n))
    return power_as_products(o, v, n);
  if (dtype_is_float(v->dtype) && ir_is_const(v->args[1], 0.5))
    return square_root(o, v);
  return NULL;
}

/* r is a normal number of dtype t (f32 or f64). */
static int normal_in(DType t, double r) {
  double a = fabs(r);
  if (t == DT_F32)
    return a >= FLT_MIN && a <= FLT_MAX;
  return a >= DBL_MIN && a <= DBL_MAX;
}

/* x / (+-2^k) as x * (+-2^-k) when 2^-k is a normal number of the dtype. */
static Value *division_by_power_of_two(Opt *o, Value *v) {
  const Value *c = ir_const_of(v->args[1]);
  if (!c || !dtype_is_float(v->dtype) || !isfinite(c->fval) || c->fval == 0)
    return NULL;
  int e;
  if (fabs(frexp(c->fval, &e)) != 0.5)
    return NULL;
  double r = 1.0 / c->fval; /* exact, or inf and refused below */
  if (!normal_in(v->dtype, r))
    return NULL;
  return binary_like(o, BIN_MUL, v->args[0], const_like(o, r, v, 0), v, 1);
}

/* Cheaper operations giving v (exactly or within the header's bounds), or
 * NULL. */
static Value *strength_reduce(Opt *o, Value *v) {
  if (v->op != IR_BINARY)
    return NULL;
  if (v->bop == BIN_POW)
    return power(o, v);
  if (v->bop == BIN_DIV)
    return division_by_power_of_two(o, v);
  return NULL;
}

/* ---- hash-consing ------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t x) {
  /* splitmix64 of the combination: pointers have zero low bits */
  uint64_t z = h * 31 + x + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t value_hash(const Value *v) {
  uint64_t h = mix(v->op, v->dtype);
  h = mix(h, (uint64_t)v->shape.rank);
  for (int i = 0; i < v->shape.rank; i++)
    h = mix(mix(h, (uint64_t)v->shape.d[i].var), (uint64_t)v->shape.d[i].size);
  for (int i = 0; i < v->nargs; i++)
    h = mix(h, (uint64_t)(uintptr_t)v->args[i]);
  uint64_t fbits;
  memcpy(&fbits, &v->fval, sizeof fbits);
  h = mix(mix(h, (uint64_t)v->uop * 31 + v->bop), (uint64_t)v->rop);
  h = mix(mix(h, v->axes), (uint64_t)v->index);
  return mix(mix(h, (uint64_t)v->ival), fbits);
}

static int same_value(const Value *a, const Value *b) {
  if (a->op != b->op || a->dtype != b->dtype || a->nargs != b->nargs ||
      !shape_equal(&a->shape, &b->shape))
    return 0;
  for (int i = 0; i < a->nargs; i++)
    if (a->args[i] != b->args[i])
      return 0;
  return a->uop == b->uop && a->bop == b->bop && a->rop == b->rop &&
         a->axes == b->axes && a->index == b->index && a->ival == b->ival &&
         memcmp(&a->fval, &b->fval, sizeof a->fval) == 0 && memcmp(a->steps, b->steps, sizeof a->steps) == 0;
}

/* The slot of v's equal in t, else the empty slot where v goes. */
static Value **table_slot(const Table *t, const Value *v) {
  uint32_t mask = (uint32_t)t->cap - 1;
  for (uint32_t i = (uint32_t)value_hash(v) & mask;; i = (i + 1) & mask)
    if (!t->slots[i] || same_value(t->slots[i], v))
      return &t->slots[i];
}

static void table_init(Arena *a, Table *t, int cap) {
  t->cap = cap;
  t->len = 0;
  t->slots = ARENA_ARRAY(a, Value *, cap);
}

/* Twice the slots.  The values in it are not changed once in (their
 * hashes hold), and none is equal to another, so each finds its place. */
static void table_grow(Arena *a, Table *t) {
  Table bigger;
  table_init(a, &bigger, t->cap * 2);
  for (int i = 0; i < t->cap; i++)
    if (t->slots[i]) {
      *table_slot(&bigger, t->slots[i]) = t->slots[i];
      bigger.len++;
    }
  *t = bigger;
}

static Value *hashcons(Arena *a, Table *t, Value *v) {
  if (v->op == IR_INPUT)
    return v;
  Value **slot = table_slot(t, v);
  if (*slot)
    return *slot;
  *slot = v;
  if (++t->len * 2 > t->cap)
    table_grow(a, t);
  return v;
}

/* The existing value equal to v, or v itself, now in the output list. */
static Value *intern(Opt *o, Value *v) {
  Value *canon = hashcons(o->a, &o->t, v);
  if (canon == v)
    vec_push(o->a, &o->out, v);
  return canon;
}

/* ---- the pass --------------------------------------------------------------- */

/* Normalizes the IR_UNARY/BINARY fields that do not matter, so equal
 * values hash equally. */
static void clear_unused_fields(Value *v) {
  if (v->op != IR_UNARY)
    v->uop = 0;
  if (v->op != IR_BINARY)
    v->bop = 0;
  if (v->op != IR_REDUCE)
    v->rop = 0;
  if (v->op != IR_REDUCE && v->op != IR_INDEX && v->op != IR_TAKE)
    v->axes = 0;
  if (v->op != IR_INPUT && v->op != IR_SIZE && v->op != IR_TAKE)
    v->index = 0;
  if (v->op != IR_CONST) {
    v->ival = 0;
    v->fval = 0;
  }
  v->aux = NULL;
}

/* cast(cast(constant, f16), f32): the constant rounded through f16 (or
 * another storage dtype). */
static Value *fold_through_16bit(Opt *o, Value *v) {
  if (v->op != IR_CAST || dtype_is_storage(v->dtype))
    return NULL;
  Value *mid = v->args[0];
  if (mid->op != IR_CAST || !dtype_is_storage(mid->dtype))
    return NULL;
  Value *c = ir_const_of(mid->args[0]);
  if (!c)
    return NULL;
  Scalar k = fold_cast(c->dtype, scalar_of(c), mid->dtype);
  k = fold_cast(mid->dtype, k, v->dtype);
  return broadcast_to(o, make_const(o, v->dtype, k, v), v);
}

static Value *simplify(Opt *o, Value *v) {
  if (foldable(v)) {
    Value *c = make_const(o, v->dtype, fold_value(v), v);
    return broadcast_to(o, c, v);
  }
  Value *through = fold_through_16bit(o, v);
  if (through)
    return through;
  Value *same = identity(v);
  if (same)
    return same;
  Value *cheaper = strength_reduce(o, v);
  return cheaper ? cheaper : v;
}

static void forward(Opt *o, Kernel *k) {
  for (int i = 0; i < k->values.len; i++) {
    Value *v = k->values.items[i];
    for (int j = 0; j < v->nargs; j++)
      v->args[j] = ir_forwarded(v->args[j]);
    Value *s = simplify(o, v);
    Value *canon = s == v ? intern(o, v) : ir_forwarded(s);
    if (canon != v)
      v->aux = canon;
  }
}

static void mark_live(Kernel *k, PtrVec *vals, char *live) {
  for (int i = 0; i < k->noutputs; i++)
    live[k->outputs[i].value->id] = 1;
  for (int i = 0; i < k->ninputs; i++)
    if (k->inputs[i].value)
      live[k->inputs[i].value->id] = 1;
  for (int i = vals->len - 1; i >= 0; i--) {
    Value *v = vals->items[i];
    if (live[i])
      for (int j = 0; j < v->nargs; j++)
        live[v->args[j]->id] = 1;
  }
}

static void remove_dead(Opt *o, Kernel *k) {
  for (int i = 0; i < o->out.len; i++)
    ((Value *)o->out.items[i])->id = i;
  char *live = arena_alloc(o->a, (size_t)o->out.len + 1);
  mark_live(k, &o->out, live);
  PtrVec kept = {0};
  for (int i = 0; i < o->out.len; i++)
    if (live[i])
      vec_push(o->a, &kept, o->out.items[i]);
  k->values = kept;
}

/* Every argmax and argmin that an output reads, as written
 * (Kernel.arg_reductions): the entry checks their emptiness whether or
 * not the optimizer keeps their values.  Not one no output reads (a
 * gradient kernel recomputes its forward's argmax, and drops it), which
 * the reference interpreter does not evaluate either. */
static void record_arg_reductions(Arena *a, Kernel *k) {
  char *live = arena_alloc(a, (size_t)k->values.len + 1); /* reachable from an output, as the interpreter evaluates */
  mark_live(k, &k->values, live);
  for (int i = 0; i < k->values.len; i++) {
    const Value *v = k->values.items[i];
    if (!live[i] || v->op != IR_REDUCE || (v->rop != RED_ARGMAX && v->rop != RED_ARGMIN))
      continue;
    ArgReduction *r = ARENA_NEW(a, ArgReduction);
    r->shape = v->args[0]->shape;
    r->axes = v->axes;
    vec_push(a, &k->arg_reductions, r);
  }
}

static void optimize_kernel(Arena *a, Kernel *k) {
  Opt o = {a, k, {0}, {0}};
  record_arg_reductions(a, k);
  int cap = 16;
  while (cap < 2 * (k->values.len + 1))
    cap *= 2;
  table_init(a, &o.t, cap);
  for (int i = 0; i < k->values.len; i++)
    clear_unused_fields(k->values.items[i]);
  forward(&o, k);
  for (int i = 0; i < k->noutputs; i++)
    k->outputs[i].value = ir_forwarded(k->outputs[i].value);
  remove_dead(&o, k);
  ir_renumber(k);
  for (int i = 0; i < k->values.len; i++)
    ((Value *)k->values.items[i])->aux = NULL;
}

void optimize_module(Compilation *c, Module *m) {
  for (int i = 0; i < m->nkernels; i++) {
    optimize_kernel(c->arena, m->kernels[i]);
    ir_verify_after(c->arena, m->kernels[i], "optimization");
  }
}
