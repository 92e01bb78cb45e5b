/* lower.c — the IR (ir.h) of a checked program (typed.h): explicit
 * broadcasts and conversions, f32 compute for 16-bit floats, var as two
 * passes of mean, value names, -D values substituted into the finished
 * kernel.  Sema has checked everything: lowering reports no user errors,
 * and IR that fails ir_verify() is a compiler bug.
 *
 * Nodes are lowered in the order of TypedKernel.nodes, each into the same
 * IR values, in the same order, as every run, so that value numbers and
 * CSE representatives are stable. */
#include "lower.h"

#include "gather.h"

typedef struct Lower {
  Arena *a;
  const Module *m; /* the kernels lowered so far */
  Kernel *k;
  const TypedKernel *tk;
  Value **values;      /* by node order: the IR of each node lowered */
  SrcRange loc;        /* loc given to new IR values */
  SrcRange output_loc; /* where the last output value lowered is */
} Lower;

static DType compute_dtype(DType t) { return dtype_compute(t); }

/* ---- small builders ------------------------------------------------------ */

static Value *mk(Lower *l, IrOp op, DType t, const Shape *sh) {
  Value *v = ir_new_value(l->a, l->k, op, t, sh);
  v->loc = l->loc;
  return v;
}

static Value *mk1(Lower *l, IrOp op, DType t, Value *a) {
  Value *v = mk(l, op, t, &a->shape);
  v->args[0] = a;
  v->nargs = 1;
  return v;
}

static Value *mk2(Lower *l, IrOp op, DType t, Value *a, Value *b) {
  Value *v = mk1(l, op, t, a);
  v->args[1] = b;
  v->nargs = 2;
  return v;
}

static Value *konst(Lower *l, DType t, Scalar k) {
  Shape scalar = {0};
  Value *v = mk(l, IR_CONST, t, &scalar);
  v->ival = k.i;
  v->fval = k.f;
  return v;
}

/* v converted to the compute or storage dtype `to`. */
static Value *conv(Lower *l, Value *v, DType to) {
  if (v->dtype == to)
    return v;
  return mk1(l, IR_CAST, to, v);
}

static Value *bcast(Lower *l, Value *v, const Shape *sh) { return ir_broadcast(l->a, l->k, v, sh, l->loc); }

static Value *unary_ir(Lower *l, UnaryOp op, DType t, Value *a) {
  Value *v = mk1(l, IR_UNARY, t, a);
  v->uop = op;
  return v;
}

static Value *binary_ir(Lower *l, BinaryOp op, DType t, Value *a, Value *b) {
  Value *v = mk2(l, IR_BINARY, t, a, b);
  v->bop = op;
  return v;
}

/* ---- operands ------------------------------------------------------------ */

/* A constant, spread to its shape. */
static Value *const_ir(Lower *l, const TypedNode *n) {
  return bcast(l, konst(l, compute_dtype(n->dtype), n->value), &n->shape);
}

/* The IR of a node lowered before, or of a constant made where it is
 * used. */
static Value *value_of(Lower *l, const TypedNode *n) {
  if (n->order < 0) {
    if (n->op != TN_CONST)
      internal_error("lower: a %d node outside the node order", (int)n->op);
    return const_ir(l, n);
  }
  if (n->order >= l->tk->nnodes || !l->values[n->order])
    internal_error("lower: node %d is used before it is lowered", n->order);
  return l->values[n->order];
}

/* An operand in compute dtype ct, broadcast to sh. */
static Value *operand(Lower *l, const TypedNode *n, DType ct, const Shape *sh) {
  return bcast(l, conv(l, value_of(l, n), ct), sh);
}

/* ---- nodes --------------------------------------------------------------- */

static Value *input_ir(Lower *l, const TypedNode *n) {
  Value *v = mk(l, IR_INPUT, n->dtype, &n->shape);
  v->index = n->input;
  v->name = l->tk->inputs[n->input].name;
  return v;
}

static Value *unary_node_ir(Lower *l, const TypedNode *n) {
  Value *x = conv(l, value_of(l, n->args[0]), compute_dtype(n->arg_dtype));
  return unary_ir(l, n->uop, compute_dtype(n->dtype), x);
}

static Value *binary_node_ir(Lower *l, const TypedNode *n) {
  DType ct = compute_dtype(n->arg_dtype);
  Value *x = operand(l, n->args[0], ct, &n->shape);
  Value *y = operand(l, n->args[1], ct, &n->shape);
  Value *v = binary_ir(l, n->bop, compute_dtype(n->dtype), x, y);
  v->clamp_bound = n->clamp_bound;
  return v;
}

static Value *select_ir(Lower *l, const TypedNode *n) {
  DType ct = compute_dtype(n->dtype);
  Value *c = bcast(l, value_of(l, n->args[0]), &n->shape);
  Value *a = operand(l, n->args[1], ct, &n->shape);
  Value *b = operand(l, n->args[2], ct, &n->shape);
  Value *v = mk(l, IR_SELECT, ct, &n->shape);
  v->args[0] = c;
  v->args[1] = a;
  v->args[2] = b;
  v->nargs = 3;
  return v;
}

static Value *reduce_ir(Lower *l, ReduceOp op, DType ct, Value *x,
                        uint32_t mask) {
  Shape sh = x->shape;
  for (int i = 0; i < sh.rank; i++)
    if (mask & (1u << i))
      sh.d[i] = (Dim){-1, 1};
  Value *v = mk(l, IR_REDUCE, ct, &sh);
  v->args[0] = x;
  v->nargs = 1;
  v->rop = op;
  v->axes = mask;
  return v;
}

static Value *reduce_or_identity(Lower *l, ReduceOp op, DType ct, Value *x,
                                 uint32_t mask) {
  if (mask == 0)
    return x; /* rank 0: the reduction of one element */
  return reduce_ir(l, op, ct, x, mask);
}

/* Population variance: mean((x - mean(x))**2), two passes.  The inner
 * mean is detached: its exact gradient is zero (the deviations sum to
 * zero), so var's gradient is 2 (x - mean(x)) / count, as torch.var's. */
static Value *variance(Lower *l, Value *x, uint32_t mask) {
  Value *m = reduce_or_identity(l, RED_MEAN, x->dtype, x, mask);
  m = unary_ir(l, UN_DETACH, m->dtype, m);
  Value *d = binary_ir(l, BIN_SUB, x->dtype, x, bcast(l, m, &x->shape));
  Value *sq = binary_ir(l, BIN_MUL, x->dtype, d, d);
  return reduce_or_identity(l, RED_MEAN, x->dtype, sq, mask);
}

static Value *reduce_node_ir(Lower *l, const TypedNode *n) {
  Value *x = conv(l, value_of(l, n->args[0]), compute_dtype(n->arg_dtype));
  if (n->rop == RED_VAR)
    return variance(l, x, n->axes);
  if ((n->rop == RED_ARGMAX || n->rop == RED_ARGMIN) && !n->axes)
    internal_error("lower: argmax of a rank-0 value reached lowering");
  return reduce_or_identity(l, n->rop, compute_dtype(n->dtype), x, n->axes);
}

/* A size variable's value: its number is the typed kernel's until
 * bind_defines() renumbers it (or, bound by -D, makes it a constant). */
static Value *size_ir(Lower *l, const TypedNode *n) {
  Value *v = mk(l, IR_SIZE, DT_I64, &n->shape);
  v->index = n->input;
  return v;
}

static Value *index_ir(Lower *l, const TypedNode *n) {
  Value *v = mk(l, IR_INDEX, DT_I64, &n->shape);
  v->axes = n->axes;
  return v;
}

/* ---- take ------------------------------------------------------------ */

/* The size of x along the axis, as an i64 value. */
static Value *dim_value(Lower *l, Dim d) {
  Scalar k = {d.size, 0};
  if (d.var < 0)
    return konst(l, DT_I64, k);
  Shape scalar = {0};
  Value *v = mk(l, IR_SIZE, DT_I64, &scalar);
  v->index = d.var;
  return v;
}

/* NaN for floats, 0 for integers, false: what an index outside the axis
 * gives. */
static Value *outside_value(Lower *l, DType t, const Shape *sh) {
  Scalar k = {0, dtype_is_float(t) ? 0.0 / 0.0 : 0.0};
  return bcast(l, konst(l, t, k), sh);
}

/* take(x, i, axis): x's expression gathered (gather.h).  Outside the axis
 * the value is NaN, 0 or false, except where the index is known in range
 * (a slice's, a concat's part: step >= 1). */
static Value *take_node_ir(Lower *l, const TypedNode *n) {
  Value *x = value_of(l, n->args[0]);
  Value *along = conv(l, value_of(l, n->args[1]), DT_I64);
  Value *i = bcast(l, along, &n->shape);
  Gather g = gather_new(l->a, l->k, i, __builtin_ctz(n->axes), &n->shape);
  g.loc = l->loc;
  if (n->step) { /* its index is a function of the position only */
    g.along = along;
    g.start = value_of(l, n->args[2]);
    g.step = n->step;
  }
  Value *r = gather_value(&g, x);
  if (!r)
    internal_error("lower: a take through %%%d, which sema refuses", x->id);
  if (n->step || (r->op == IR_TAKE && x->op == IR_INPUT))
    return r; /* in range, or the load gives the outside value itself */
  r = conv(l, r, compute_dtype(r->dtype)); /* a 16-bit value (a cast to it, an input): its f32 */
  Value *zero = bcast(l, konst(l, DT_I64, (Scalar){0, 0}), &n->shape);
  Value *size = bcast(l, dim_value(l, n->args[0]->shape.d[g.axis]), &n->shape);
  Value *above = binary_ir(l, BIN_GE, DT_BOOL, i, zero);
  Value *inside = binary_ir(l, BIN_AND, DT_BOOL, above, binary_ir(l, BIN_LT, DT_BOOL, i, size));
  Value *outside = outside_value(l, r->dtype, &n->shape);
  Value *v = mk(l, IR_SELECT, r->dtype, &n->shape);
  v->args[0] = inside;
  v->args[1] = r;
  v->args[2] = outside;
  v->nargs = 3;
  return v;
}

static Value *node_ir(Lower *l, const TypedNode *n) {
  l->loc = n->loc;
  switch (n->op) {
  case TN_INPUT: return input_ir(l, n);
  case TN_CONST: return const_ir(l, n);
  case TN_CAST: return conv(l, value_of(l, n->args[0]), n->dtype);
  case TN_UNARY: return unary_node_ir(l, n);
  case TN_BINARY: return binary_node_ir(l, n);
  case TN_SELECT: return select_ir(l, n);
  case TN_REDUCE: return reduce_node_ir(l, n);
  case TN_SIZE: return size_ir(l, n);
  case TN_INDEX: return index_ir(l, n);
  case TN_TAKE: return take_node_ir(l, n);
  }
  internal_error("lower: unknown typed node %d", (int)n->op);
}

/* ---- the kernel ---------------------------------------------------------- */

/* A value takes the first name assigned to it. */
static void name_values(Lower *l) {
  for (int i = 0; i < l->tk->nbindings; i++) {
    const TypedBinding *b = &l->tk->bindings[i];
    Value *v = value_of(l, b->node);
    if (!v->name)
      v->name = b->name;
  }
}

/* The inputs are declared before the nodes are lowered (gathers read
 * their shapes, gather.c), their values bound after. */
static void declare_inputs(Lower *l) {
  Kernel *k = l->k;
  k->ninputs = l->tk->ninputs;
  k->inputs = ARENA_ARRAY(l->a, KernelInput, k->ninputs + 1);
  for (int i = 0; i < k->ninputs; i++) {
    const TypedInput *in = &l->tk->inputs[i];
    k->inputs[i] = (KernelInput){in->name, in->dtype, in->shape, NULL};
  }
}

static void lower_inputs(Lower *l) {
  for (int i = 0; i < l->k->ninputs; i++)
    l->k->inputs[i].value = value_of(l, l->tk->inputs[i].node);
}

/* The value an output stores: a literal's constant is made here, located
 * where sema was (or, when sema had no expression since the last output,
 * where that output's value is). */
static Value *output_value(Lower *l, const TypedNode *n) {
  if (n->order < 0)
    l->loc = n->loc_of_last_output ? l->output_loc : n->loc;
  return value_of(l, n);
}

/* Each output stores its value converted to the output's dtype, located
 * where the value is. */
static void lower_outputs(Lower *l) {
  Kernel *k = l->k;
  k->noutputs = l->tk->noutputs;
  k->outputs = ARENA_ARRAY(l->a, KernelOutput, k->noutputs + 1);
  for (int i = 0; i < k->noutputs; i++) {
    const TypedOutput *o = &l->tk->outputs[i];
    Value *v = output_value(l, o->value);
    l->loc = l->output_loc = v->loc;
    k->outputs[i] = (KernelOutput){o->name, o->dtype, o->shape,
                                   conv(l, v, o->dtype)};
  }
}

/* ---- -D bindings ------------------------------------------------------- */

static void substitute_shape(Shape *sh, const int *newvar,
                             const int64_t *value) {
  for (int i = 0; i < sh->rank; i++) {
    int v = sh->d[i].var;
    if (v < 0)
      continue;
    sh->d[i].var = newvar[v];
    if (newvar[v] < 0)
      sh->d[i].size = value[v];
  }
}

/* The IR number of a derived size's canonical form e (over the IR's
 * parameters), appended when new; or a literal's -1 with *value. */
static int intern_size(Lower *l, const SizeExpr *e, int64_t *value) {
  Kernel *k = l->k;
  if (se_is_const(e, value))
    return -1;
  int v = se_as_var(e);
  if (v >= 0)
    return v;
  for (int i = 0; i < k->nsizevars; i++)
    if (k->sizevars[i].def && se_cmp(k->sizevars[i].def, e) == 0)
      return i;
  const char **names = ARENA_ARRAY(l->a, const char *, k->nsizevars + 1);
  for (int i = 0; i < k->nsizevars; i++)
    names[i] = k->sizevars[i].name;
  k->sizevars[k->nsizevars].name = se_te(l->a, e, names);
  k->sizevars[k->nsizevars].def = e;
  return k->nsizevars++;
}

/* Size variables bound by -D become literals; the others are numbered
 * again, in order, the parameters first; a derived size takes the -D
 * values into its definition, and may become a literal or a parameter. */
static void bind_defines(Lower *l) {
  Kernel *k = l->k;
  int n = l->tk->nsizevars;
  int *newvar = ARENA_ARRAY(l->a, int, n + 1);
  int64_t *value = ARENA_ARRAY(l->a, int64_t, n + 1);
  const SizeExpr **sub = ARENA_ARRAY(l->a, const SizeExpr *, n + 1);
  k->sizevars = ARENA_ARRAY(l->a, SizeVar, n + 1);
  for (int i = 0; i < n; i++) {
    const TypedSizeVar *sv = &l->tk->sizevars[i];
    if (sv->def)
      continue;
    value[i] = sv->value;
    newvar[i] = sv->bound ? -1 : k->nsizevars;
    sub[i] = sv->bound ? se_const(l->a, sv->value) : se_var(l->a, k->nsizevars);
    if (!sv->bound)
      k->sizevars[k->nsizevars++].name = sv->name;
  }
  for (int i = 0; i < n; i++)
    if (l->tk->sizevars[i].def)
      newvar[i] = intern_size(l, se_subst(l->a, l->tk->sizevars[i].def, sub), &value[i]);
  for (int i = 0; i < k->values.len; i++) {
    Value *v = k->values.items[i];
    substitute_shape(&v->shape, newvar, value);
    if (v->op == IR_SIZE && newvar[v->index] < 0) {
      v->op = IR_CONST;
      v->ival = value[v->index];
    } else if (v->op == IR_SIZE)
      v->index = newvar[v->index];
  }
  for (int i = 0; i < k->ninputs; i++)
    substitute_shape(&k->inputs[i].shape, newvar, value);
  for (int i = 0; i < k->noutputs; i++)
    substitute_shape(&k->outputs[i].shape, newvar, value);
}

/* A gradient kernel: what grad.c differentiates, an earlier kernel. */
static Kernel *gradient_request(Lower *l, const TypedKernel *tk) {
  Kernel *k = ARENA_NEW(l->a, Kernel);
  k->name = tk->name;
  k->loc = tk->loc;
  k->te_signature = tk->te_signature;
  k->imported = tk->imported;
  GradRequest *r = ARENA_NEW(l->a, GradRequest);
  if (tk->grad->of >= l->m->nkernels)
    internal_error("lower: %s differentiates a later kernel", tk->name);
  r->of = l->m->kernels[tk->grad->of];
  r->wrt = tk->grad->wrt;
  r->nwrt = tk->grad->nwrt;
  k->grad = r;
  k->grad_of = r->of->name;
  return k;
}

static Kernel *lower_kernel(Lower *l, const TypedKernel *tk) {
  if (tk->grad)
    return gradient_request(l, tk);
  l->tk = tk;
  l->k = ARENA_NEW(l->a, Kernel);
  l->k->name = tk->name;
  l->k->loc = tk->loc;
  l->k->imported = tk->imported;
  l->values = ARENA_ARRAY(l->a, Value *, tk->nnodes + 1);
  declare_inputs(l);
  for (int i = 0; i < tk->nnodes; i++)
    l->values[i] = node_ir(l, tk->nodes[i]);
  name_values(l);
  lower_inputs(l);
  lower_outputs(l);
  if (l->k->noutputs) {
    l->k->te_signature = tk->te_signature;
    bind_defines(l);
  }
  ir_verify_after(l->a, l->k, "lowering");
  return l->k;
}

Module *lower_program(Compilation *c, const TypedProgram *p) {
  Lower l = {0};
  l.a = c->arena;
  Module *m = ARENA_NEW(l.a, Module);
  m->kernels = ARENA_ARRAY(l.a, Kernel *, p->nkernels + 1);
  l.m = m;
  for (int i = 0; i < p->nkernels; i++)
    m->kernels[m->nkernels++] = lower_kernel(&l, p->kernels[i]);
  return m;
}
