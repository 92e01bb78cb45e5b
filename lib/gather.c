/* gather.c — an IR expression gathered along one axis (see gather.h). */
#include "gather.h"

static DType compute_dtype(DType t) { return dtype_compute(t); }

Gather gather_new(Arena *a, Kernel *k, Value *i, int axis, const Shape *shape) {
  Gather g = {0};
  g.a = a;
  g.k = k;
  g.i = i;
  g.axis = axis;
  g.shape = *shape;
  g.memo = ARENA_ARRAY(a, Value *, (size_t)k->values.len + 1);
  return g;
}

static Value *make(Gather *g, IrOp op, DType t, const Shape *sh) {
  Value *v = ir_new_value(g->a, g->k, op, t, sh);
  v->loc = g->loc;
  return v;
}

static Value *spread_to(Gather *g, Value *v, const Shape *sh) { return ir_broadcast(g->a, g->k, v, sh, g->loc); }

static Value *spread(Gather *g, Value *v) { return spread_to(g, v, &g->shape); }

/* x op y, i64, of x's shape. */
static Value *scalar_op(Gather *g, BinaryOp op, Value *x, Value *y) {
  Value *v = make(g, IR_BINARY, DT_I64, &x->shape);
  v->bop = op;
  v->args[0] = x;
  v->args[1] = y;
  v->nargs = 2;
  return v;
}

static Value *scalar_const(Gather *g, int64_t c) {
  Shape scalar = {0};
  Value *v = make(g, IR_CONST, DT_I64, &scalar);
  v->ival = c;
  return v;
}

/* An input read where the axis is i: the load widens a 16-bit value. */
static Value *take_input(Gather *g, int input, DType t, Value *i, Value *start, int64_t step) {
  Value *r = make(g, IR_TAKE, compute_dtype(t), &g->shape);
  r->index = input;
  TakeAxis ax = {g->axis, i, start, start ? step : 0};
  ir_take_set(r, &ax, 1);
  return r;
}

/* The gather's own axis composed with a take's index along it (t.index,
 * already gathered): two affine maps compose into one (s1 + c1 * (s0 +
 * c0 * k)), else a general index. */
static TakeAxis compose(Gather *g, TakeAxis t) {
  if (!t.step || !g->start)
    return (TakeAxis){g->axis, t.index, NULL, 0};
  Value *start = g->start;
  if (t.step != 1)
    start = scalar_op(g, BIN_MUL, start, scalar_const(g, t.step));
  start = scalar_op(g, BIN_ADD, t.start, start);
  return (TakeAxis){g->axis, t.index, start, t.step * g->step};
}

/* Whether input v's declared shape lines up with its value's, right to
 * right (a take indexes the declared one): not a gradient's cotangent of
 * an output declared without the value's axes of 1 (`-> (y: f32[M])` for
 * an [M, 1] value), which holds the same elements in another shape. */
static int input_aligned(const Gather *g, const Value *v) {
  const Shape *s = &g->k->inputs[v->index].shape;
  const int off = v->shape.rank - s->rank;
  if (off < 0)
    return 0;
  for (int j = 0; j < s->rank; j++) {
    Dim d = s->d[j];
    if (!(d.var < 0 && d.size == 1) && !dim_equal(d, v->shape.d[j + off]))
      return 0;
  }
  return 1;
}

/* Whether input `input` of a take of this rank is 1 along the axis. */
static int input_one_along(const Gather *g, int input, int rank, int axis) {
  const Shape *s = &g->k->inputs[input].shape;
  int j = axis - (rank - s->rank);
  return j < 0 || (s->d[j].var < 0 && s->d[j].size == 1);
}

/* A take at positions i along the axis: each of its indices gathered
 * (result[e] = v[e with axis := i[e]]); along its own axis the index
 * composes with i, along another axis the take gains it, unless the
 * input is 1 along it (the take varies there through its indices only). */
static Value *take_of_take(Gather *g, Value *v, int axis) {
  TakeAxis ax[TECC_MAX_RANK + 1];
  int n = ir_take_naxes(v), own = 0;
  for (int j = 0; j < n; j++) {
    ax[j] = ir_take_get(v, j);
    ax[j].axis += g->shape.rank - v->shape.rank;
    if (!(ax[j].index = gather_value(g, ax[j].index)))
      return NULL;
    if (ax[j].axis == g->axis) {
      ax[j] = compose(g, ax[j]);
      own = 1;
    }
  }
  if (!own && !input_one_along(g, v->index, v->shape.rank, axis))
    ax[n++] = (TakeAxis){g->axis, g->i, g->start, g->start ? g->step : 0};
  Value *r = make(g, IR_TAKE, v->dtype, &g->shape);
  r->index = v->index;
  ir_take_set(r, ax, n);
  return r;
}

/* An elementwise value: the same operation of its operands gathered. */
static Value *elementwise(Gather *g, Value *v) {
  Value *args[TECC_IR_MAX_ARGS];
  for (int j = 0; j < v->nargs; j++)
    if (!(args[j] = gather_value(g, v->args[j])))
      return NULL;
  Value *r = make(g, v->op, v->dtype, &g->shape);
  int id = r->id;
  *r = *v;
  r->id = id;
  r->loc = g->loc;
  r->shape = g->shape;
  r->name = NULL;
  r->aux = NULL;
  for (int j = 0; j < v->nargs; j++)
    r->args[j] = args[j];
  return r;
}

/* A reduction over other axes, gathered where the index depends on the
 * position only: the same reduction of its operand gathered. */
static Value *reduce_of(Gather *g, Value *v, int axis) {
  if (!g->along || ((v->axes >> axis) & 1u))
    return NULL;
  Value *a = v->args[0];
  Shape as = a->shape, rs = v->shape;
  as.d[axis] = rs.d[axis] = g->shape.d[g->axis];
  Gather sub = gather_new(g->a, g->k, spread_to(g, g->along, &as), axis, &as);
  sub.loc = g->loc;
  sub.along = g->along;
  sub.start = g->start;
  sub.step = g->step;
  Value *ga = gather_value(&sub, a);
  if (!ga)
    return NULL;
  Value *r = make(g, IR_REDUCE, v->dtype, &rs);
  r->rop = v->rop;
  r->axes = v->axes;
  r->args[0] = ga;
  r->nargs = 1;
  return spread(g, r);
}

static int one_along(const Value *v, int axis) {
  return axis < 0 || (v->shape.d[axis].var < 0 && v->shape.d[axis].size == 1);
}

Value *gather_value(Gather *g, Value *v) {
  int axis = g->axis - (g->shape.rank - v->shape.rank);
  if (one_along(v, axis))
    return spread(g, v);
  if (g->memo[v->id])
    return g->memo[v->id];
  Value *r = NULL;
  switch (v->op) {
  case IR_INPUT: r = input_aligned(g, v) ? take_input(g, v->index, v->dtype, g->i, g->start, g->step) : NULL; break;
  case IR_INDEX: r = g->i; break; /* the position along the axis is the index */
  case IR_BROADCAST: r = gather_value(g, v->args[0]); break;
  case IR_TAKE: r = take_of_take(g, v, axis); break;
  case IR_CAST:
    r = gather_value(g, v->args[0]);
    if (r && r->dtype != v->dtype) /* else a 16-bit input's widening: the take did it */
      r = elementwise(g, v);
    break;
  case IR_UNARY:
  case IR_BINARY:
  case IR_SELECT: r = elementwise(g, v); break;
  case IR_REDUCE: r = reduce_of(g, v, axis); break;
  default: r = NULL; break;
  }
  return g->memo[v->id] = r;
}
