/* grad.c — reverse-mode differentiation on the IR (grad.h; language.md
 * §13).
 *
 * The gradient kernel of k with respect to inputs W takes k's inputs and
 * a cotangent dy per float output y of k, and writes for each I in W the
 * vector-Jacobian product dI = sum over y of J_y(I)^T dy.  It is built
 * from k's lowered IR:
 *   1. every value of k is recomputed in the gradient kernel from its
 *      inputs (no saved tensors; opt.c drops what the gradients do not
 *      read);
 *   2. each cotangent seeds the adjoint of the value its output stores;
 *   3. in reverse topological order, each value's adjoint (the sum of
 *      what its uses pushed) goes to its operands by the value's rule
 *      (grad_rules.c), only to operands that an input of W reaches;
 *   4. each gradient is stored, rounded once to its input's dtype: zeros
 *      where no cotangent reaches the input.
 * After every gradient kernel is built, the detach() marks go, from every
 * kernel, and so do the kernels that imported files defined. */
#include "grad.h"

#include <string.h>

DType grad_dtype(DType t) { return t == DT_F64 ? DT_F64 : DT_F32; }

/* ---- shapes ------------------------------------------------------------- */

int grad_stretches_to(const Shape *from, const Shape *to) {
  if (from->rank > to->rank)
    return 0;
  for (int i = 0; i < from->rank; i++) {
    Dim f = from->d[i], t = to->d[to->rank - from->rank + i];
    if (!dim_literal_one(f) && !dim_equal(f, t))
      return 0;
  }
  return 1;
}

/* `longer` is `shorter` with literal-1 axes in front (or equal). */
static int ones_then(const Shape *longer, const Shape *shorter) {
  int extra = longer->rank - shorter->rank;
  if (extra < 0)
    return 0;
  for (int i = 0; i < longer->rank; i++)
    if (i < extra ? !dim_literal_one(longer->d[i])
                  : !dim_equal(longer->d[i], shorter->d[i - extra]))
      return 0;
  return 1;
}

/* ---- builders ----------------------------------------------------------- */

static Value *make(Grad *g, IrOp op, DType t, const Shape *sh) {
  Value *v = ir_new_value(g->a, g->k, op, t, sh);
  v->loc = g->loc;
  return v;
}

Value *grad_index(Grad *g, const Shape *sh, int axis) {
  Shape s = *sh;
  for (int i = 0; i < s.rank; i++)
    if (i != axis)
      s.d[i] = (Dim){-1, 1};
  Value *v = make(g, IR_INDEX, DT_I64, &s);
  v->axes = 1u << axis;
  return v;
}

Value *grad_dim(Grad *g, Dim d) {
  if (d.var < 0)
    return grad_const(g, DT_I64, (double)d.size);
  Shape scalar = {0};
  Value *v = make(g, IR_SIZE, DT_I64, &scalar);
  v->index = d.var;
  return v;
}

Value *grad_const(Grad *g, DType t, double x) {
  Shape scalar = {0};
  Value *v = make(g, IR_CONST, t, &scalar);
  if (dtype_is_float(t))
    v->fval = x;
  else
    v->ival = (int64_t)x;
  return v;
}

Value *grad_fit(Grad *g, Value *x, const Shape *sh) {
  if (shape_equal(&x->shape, sh))
    return x;
  if (!grad_stretches_to(&x->shape, sh))
    internal_error("grad: cannot broadcast %%%d to rank %d", x->id, sh->rank);
  Value *v = make(g, IR_BROADCAST, x->dtype, sh);
  v->args[0] = x;
  v->nargs = 1;
  return v;
}

/* The shape of the largest of n values, to which the others stretch. */
static const Shape *common_shape(Value *const *xs, int n) {
  const Shape *sh = &xs[0]->shape;
  for (int i = 1; i < n; i++)
    if (grad_stretches_to(sh, &xs[i]->shape))
      sh = &xs[i]->shape;
  for (int i = 0; i < n; i++)
    if (!grad_stretches_to(&xs[i]->shape, sh))
      internal_error("grad: %%%d does not broadcast with the other operands",
                     xs[i]->id);
  return sh;
}

static Value *with_args(Grad *g, IrOp op, DType t, Value **xs, int n) {
  const Shape *sh = common_shape(xs, n);
  Value *fitted[3];
  for (int i = 0; i < n; i++)
    fitted[i] = grad_fit(g, xs[i], sh);
  Value *v = make(g, op, t, sh);
  for (int i = 0; i < n; i++)
    v->args[i] = fitted[i];
  v->nargs = n;
  return v;
}

Value *grad_unary(Grad *g, UnaryOp op, Value *x) {
  Value *v = with_args(g, IR_UNARY, x->dtype, &x, 1);
  v->uop = op;
  return v;
}

Value *grad_binary(Grad *g, BinaryOp op, Value *a, Value *b) {
  if (a->dtype != b->dtype)
    internal_error("grad: %s of %s and %s", binary_name(op),
                   dtype_name(a->dtype), dtype_name(b->dtype));
  int to_bool = (op >= BIN_EQ && op <= BIN_GE) || op == BIN_AND || op == BIN_OR;
  Value *xs[2] = {a, b};
  Value *v = with_args(g, IR_BINARY, to_bool ? DT_BOOL : a->dtype, xs, 2);
  v->bop = op;
  return v;
}

Value *grad_select(Grad *g, Value *c, Value *a, Value *b) {
  Value *xs[3] = {c, a, b};
  return with_args(g, IR_SELECT, a->dtype, xs, 3);
}

Value *grad_cast(Grad *g, Value *x, DType t) {
  if (x->dtype == t)
    return x;
  return with_args(g, IR_CAST, t, &x, 1);
}

Shape grad_reduced_shape(const Shape *s, uint32_t axes) {
  Shape sh = *s;
  for (int i = 0; i < sh.rank; i++)
    if (axes & (1u << i))
      sh.d[i] = (Dim){-1, 1};
  return sh;
}

Value *grad_reduce(Grad *g, ReduceOp op, Value *x, uint32_t axes) {
  Shape sh = grad_reduced_shape(&x->shape, axes);
  Value *v = make(g, IR_REDUCE, x->dtype, &sh);
  v->args[0] = x;
  v->nargs = 1;
  v->rop = op;
  v->axes = axes;
  return v;
}

/* ---- adjoints ----------------------------------------------------------- */

Value *grad_re(Grad *g, const Value *v) {
  Value *r = g->re[v->id];
  if (!r)
    internal_error("grad: %%%d of %s is not recomputed", v->id, g->f->name);
  return r;
}

int grad_wants(const Grad *g, const Value *v, int i) {
  return g->reach[v->args[i]->id];
}

/* Adds d to the adjoint of f's value x. */
static void add_adjoint(Grad *g, const Value *x, Value *d) {
  if (d->dtype != grad_dtype(x->dtype) || !ones_then(&d->shape, &x->shape))
    internal_error("grad: the adjoint %%%d does not fit %%%d of %s", d->id,
                   x->id, g->f->name);
  Value *old = g->adj[x->id];
  g->adj[x->id] = old ? grad_binary(g, BIN_ADD, old, d) : d;
}

void grad_push(Grad *g, const Value *v, int i, Value *d) {
  if (d && grad_wants(g, v, i))
    add_adjoint(g, v->args[i], d);
}

void grad_push_input(Grad *g, int input, Value *d) {
  const Value *x = g->f->inputs[input].value;
  if (g->reach[x->id])
    add_adjoint(g, x, d);
}

/* ---- the gradient kernel ------------------------------------------------ */

static int differentiated(const GradRequest *r, int input) {
  for (int i = 0; i < r->nwrt; i++)
    if (r->wrt[i] == input)
      return 1;
  return 0;
}

/* Which values an input differentiated reaches through float values. */
static void mark_reach(Grad *g, const GradRequest *r) {
  for (int i = 0; i < g->f->values.len; i++) {
    const Value *v = g->f->values.items[i];
    int reached = (v->op == IR_INPUT || v->op == IR_TAKE) && differentiated(r, v->index);
    for (int j = 0; j < v->nargs; j++)
      reached |= g->reach[v->args[j]->id];
    g->reach[i] = reached && dtype_is_float(v->dtype);
  }
}

static Value *add_input(Grad *g, const char *name, DType t, const Shape *sh,
                        const Shape *value_shape) {
  Kernel *k = g->k;
  Value *v = make(g, IR_INPUT, t, value_shape);
  v->index = k->ninputs;
  v->name = name;
  k->inputs[k->ninputs++] = (KernelInput){name, t, *sh, v};
  return v;
}

/* k's inputs, read again. */
static void forward_inputs(Grad *g) {
  for (int i = 0; i < g->f->ninputs; i++) {
    const KernelInput *in = &g->f->inputs[i];
    g->re[in->value->id] =
        add_input(g, in->name, in->dtype, &in->shape, &in->value->shape);
  }
}

/* The cotangent of output o seeds the adjoint of the value o stores.  The
 * output's shape equals that value's up to literal-1 axes: where a
 * broadcast cannot take the one to the other, the input is read with the
 * value's shape (the same layout, ir.h). */
static void cotangent(Grad *g, const KernelOutput *o) {
  const Value *y = o->value;
  const char *name = arena_printf(g->a, "d%s", o->name);
  const Shape *read_as = &y->shape;
  if (ones_then(&o->shape, &y->shape) || ones_then(&y->shape, &o->shape))
    read_as = &o->shape;
  Value *dy = add_input(g, name, o->dtype, &o->shape, read_as);
  if (g->reach[y->id])
    add_adjoint(g, y, grad_fit(g, grad_cast(g, dy, grad_dtype(y->dtype)),
                               ones_then(read_as, &y->shape) ? read_as
                                                             : &y->shape));
}

static void recompute(Grad *g) {
  for (int i = 0; i < g->f->values.len; i++) {
    const Value *fv = g->f->values.items[i];
    if (fv->op == IR_INPUT)
      continue;
    Value *x = grad_recompute_composite(g, fv);
    if (x) {
      x->name = fv->name;
      g->re[i] = x;
      continue;
    }
    Value *v = make(g, fv->op, fv->dtype, &fv->shape);
    int id = v->id;
    *v = *fv;
    v->id = id;
    v->aux = NULL;
    for (int j = 0; j < v->nargs; j++)
      v->args[j] = grad_re(g, fv->args[j]);
    g->re[i] = v;
  }
}

static void sweep(Grad *g) {
  for (int i = g->f->values.len - 1; i >= 0; i--) {
    const Value *v = g->f->values.items[i];
    if (g->adj[i] && v->op != IR_INPUT) {
      g->loc = v->loc;
      grad_rule(g, v, g->adj[i]);
    }
  }
}

/* dI: the adjoint of input I rounded to I's dtype, or zeros. */
static void store_gradient(Grad *g, const KernelInput *in) {
  Kernel *k = g->k;
  g->loc = in->value->loc;
  Value *d = g->adj[in->value->id];
  if (!d)
    d = grad_fit(g, grad_const(g, grad_dtype(in->dtype), 0.0),
                 &in->value->shape);
  d = grad_cast(g, d, in->dtype);
  const char *name = arena_printf(g->a, "d%s", in->name);
  if (!d->name)
    d->name = name;
  k->outputs[k->noutputs++] = (KernelOutput){name, in->dtype, in->shape, d};
}

static void build_gradient(Arena *a, DiagList *diags, Kernel *k) {
  const GradRequest *r = k->grad;
  const Kernel *f = r->of;
  int n = f->values.len + 1;
  Grad g = {a, f, k, ARENA_ARRAY(a, Value *, n), ARENA_ARRAY(a, Value *, n),
            arena_alloc(a, (size_t)n), f->loc, diags, 0};
  k->sizevars = f->sizevars;
  k->nsizevars = f->nsizevars;
  k->inputs = ARENA_ARRAY(a, KernelInput, f->ninputs + f->noutputs + 1);
  k->outputs = ARENA_ARRAY(a, KernelOutput, r->nwrt + 1);
  mark_reach(&g, r);
  forward_inputs(&g);
  recompute(&g);
  for (int i = 0; i < f->noutputs; i++)
    if (dtype_is_float(f->outputs[i].dtype))
      cotangent(&g, &f->outputs[i]);
  sweep(&g);
  for (int i = 0; i < r->nwrt; i++)
    store_gradient(&g, &f->inputs[r->wrt[i]]);
  k->grad = NULL;
}

/* ---- detach() ----------------------------------------------------------- */

static int is_detach(const Value *v) {
  return v->op == IR_UNARY && v->uop == UN_DETACH;
}

static Value *skip_detach(Value *v) {
  while (is_detach(v)) {
    if (v->name && !v->args[0]->name)
      v->args[0]->name = v->name;
    v = v->args[0];
  }
  return v;
}

/* A detach() mark only stops the gradient: once every gradient is built,
 * its uses read its argument and it goes. */
static void strip_detach(Arena *a, Kernel *k) {
  PtrVec kept = {0};
  for (int i = 0; i < k->values.len; i++) {
    Value *v = k->values.items[i];
    for (int j = 0; j < v->nargs; j++)
      v->args[j] = skip_detach(v->args[j]);
    if (!is_detach(v))
      vec_push(a, &kept, v);
  }
  for (int i = 0; i < k->noutputs; i++)
    k->outputs[i].value = skip_detach(k->outputs[i].value);
  k->values = kept;
  ir_renumber(k);
}

void grad_module(Compilation *c, Module *m) {
  for (int i = 0; i < m->nkernels; i++)
    if (m->kernels[i]->grad)
      build_gradient(c->arena, &c->diags, m->kernels[i]);
  int n = 0;
  for (int i = 0; i < m->nkernels; i++) {
    Kernel *k = m->kernels[i];
    strip_detach(c->arena, k);
    ir_verify_after(c->arena, k, "grad");
    if (!k->imported)
      m->kernels[n++] = k;
  }
  m->nkernels = n;
}
