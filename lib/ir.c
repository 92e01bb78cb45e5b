/* ir.c — IR builders, shape helpers and the --emit=ir text dump. */
#include "ir.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Value *ir_new_value(Arena *a, Kernel *k, IrOp op, DType t, const Shape *s) {
  Value *v = ARENA_NEW(a, Value);
  v->id = k->values.len;
  v->op = op;
  v->dtype = t;
  if (s)
    v->shape = *s;
  vec_push(a, &k->values, v);
  return v;
}

int dim_literal_one(Dim d) { return d.var < 0 && d.size == 1; }

int dim_equal(Dim a, Dim b) {
  if (a.var >= 0 || b.var >= 0)
    return a.var == b.var;
  return a.size == b.size;
}

int shape_equal(const Shape *a, const Shape *b) {
  if (a->rank != b->rank)
    return 0;
  for (int i = 0; i < a->rank; i++)
    if (!dim_equal(a->d[i], b->d[i]))
      return 0;
  return 1;
}

Value *ir_const_of(Value *v) {
  while (v->op == IR_BROADCAST)
    v = v->args[0];
  return v->op == IR_CONST ? v : NULL;
}

int ir_is_const(const Value *v, double x) {
  const Value *c = ir_const_of((Value *)v);
  if (!c)
    return 0;
  if (dtype_is_float(c->dtype))
    return c->fval == x && signbit(c->fval) == signbit(x);
  return (double)c->ival == x;
}

Value *ir_stored_value(Value *v) {
  if (v->op == IR_CAST && dtype_is_float(v->dtype) && dtype_is_storage(v->dtype) &&
      v->args[0]->dtype == DT_F32)
    return v->args[0];
  return v;
}

/* A use that never shows its operand's NaN sign: an arithmetic result,
 * whose NaN's sign IEEE 754 leaves open; a comparison; a class test. */
static int hides_nan_sign(const Value *u) {
  if (u->op == IR_BINARY)
    return u->bop == BIN_ADD || u->bop == BIN_SUB || u->bop == BIN_MUL || u->bop == BIN_DIV || u->bop == BIN_EQ ||
           u->bop == BIN_NE || u->bop == BIN_LT || u->bop == BIN_LE || u->bop == BIN_GT || u->bop == BIN_GE;
  if (u->op == IR_UNARY)
    return u->uop == UN_ISNAN || u->uop == UN_ISINF || u->uop == UN_ISFINITE;
  if (u->op == IR_REDUCE)
    return u->rop == RED_SUM || u->rop == RED_MEAN || u->rop == RED_PROD;
  return 0;
}

int ir_nan_sign_unseen(const Kernel *k, const Value *v) {
  for (int i = 0; i < k->noutputs; i++)
    if (k->outputs[i].value == v)
      return 0;
  for (int i = v->id + 1; i < k->values.len; i++) {
    const Value *u = k->values.items[i];
    for (int j = 0; j < u->nargs; j++) {
      if (u->args[j] != v)
        continue;
      int passes = u->op == IR_BROADCAST || (u->op == IR_CAST && (u->dtype == DT_F32 || u->dtype == DT_F64));
      if (passes ? !ir_nan_sign_unseen(k, u) : !hides_nan_sign(u))
        return 0;
    }
  }
  return 1;
}

int64_t shape_literal_numel(const Shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->d[i].var >= 0)
      return -1;
    n *= s->d[i].size;
  }
  return n;
}

static void put_dim(Buf *b, const Kernel *k, Dim d) {
  if (d.var < 0)
    buf_printf(b, "%lld", (long long)d.size);
  else if (k && d.var < k->nsizevars)
    buf_puts(b, k->sizevars[d.var].name);
  else
    buf_printf(b, "$%d", d.var);
}

static void put_shape(Buf *b, const Kernel *k, const Shape *s) {
  buf_puts(b, "[");
  for (int i = 0; i < s->rank; i++) {
    if (i)
      buf_puts(b, ", ");
    put_dim(b, k, s->d[i]);
  }
  buf_puts(b, "]");
}

const char *shape_str(Arena *a, const Kernel *k, const Shape *s) {
  Buf b;
  buf_init(&b, a);
  put_shape(&b, k, s);
  return buf_cstr(&b);
}

Value *ir_broadcast(Arena *a, Kernel *k, Value *v, const Shape *sh, SrcRange loc) {
  if (shape_equal(&v->shape, sh))
    return v;
  Value *b = ir_new_value(a, k, IR_BROADCAST, v->dtype, sh);
  b->loc = loc;
  b->args[0] = v;
  b->nargs = 1;
  return b;
}

int ir_nparams(const Kernel *k) {
  int n = 0;
  while (n < k->nsizevars && !k->sizevars[n].def)
    n++;
  return n;
}

void ir_derive_sizes(const Kernel *k, int64_t *sizes) {
  for (int i = ir_nparams(k); i < k->nsizevars; i++)
    sizes[i] = se_eval(k->sizevars[i].def, sizes);
}

const char *ir_value_label(Arena *a, const Value *v) {
  return v->name ? arena_printf(a, "%%%d (%s)", v->id, v->name) : arena_printf(a, "%%%d", v->id);
}

void ir_count_uses(Kernel *k) {
  for (int i = 0; i < k->values.len; i++)
    ((Value *)k->values.items[i])->nuses = 0;
  for (int i = 0; i < k->values.len; i++) {
    Value *v = k->values.items[i];
    for (int j = 0; j < v->nargs; j++)
      v->args[j]->nuses++;
  }
  for (int i = 0; i < k->noutputs; i++)
    k->outputs[i].value->nuses++;
}

Value *ir_forwarded(Value *v) {
  while (v->aux)
    v = v->aux;
  return v;
}

Kernel *ir_clone_kernel(Arena *a, const Kernel *k) {
  Kernel *c = ARENA_NEW(a, Kernel);
  *c = *k;
  c->values = (PtrVec){0};
  Value **copy = ARENA_ARRAY(a, Value *, k->values.len + 1);
  for (int i = 0; i < k->values.len; i++) {
    const Value *v = k->values.items[i];
    Value *n = ARENA_NEW(a, Value);
    *n = *v;
    for (int j = 0; j < n->nargs; j++)
      n->args[j] = copy[v->args[j]->id];
    n->aux = NULL;
    copy[i] = n;
    vec_push(a, &c->values, n);
  }
  c->inputs = ARENA_ARRAY(a, KernelInput, k->ninputs + 1);
  for (int i = 0; i < k->ninputs; i++) {
    c->inputs[i] = k->inputs[i];
    c->inputs[i].value = k->inputs[i].value ? copy[k->inputs[i].value->id] : NULL;
  }
  c->outputs = ARENA_ARRAY(a, KernelOutput, k->noutputs + 1);
  for (int i = 0; i < k->noutputs; i++) {
    c->outputs[i] = k->outputs[i];
    c->outputs[i].value = copy[k->outputs[i].value->id];
  }
  c->unsplit = NULL;
  return c;
}

void ir_renumber(Kernel *k) {
  for (int i = 0; i < k->values.len; i++)
    ((Value *)k->values.items[i])->id = i;
}

/* ---- takes ----------------------------------------------------------------- */

int ir_take_naxes(const Value *v) { return __builtin_popcount(v->axes); }

int ir_take_axis(const Value *v, int j) {
  uint32_t rest = v->axes;
  for (int n = 0; n < j; n++)
    rest &= rest - 1;
  if (!rest)
    internal_error("ir: take %%%d has no axis %d", v->id, j);
  return __builtin_ctz(rest);
}

int ir_take_slot(const Value *v, int axis) {
  if (axis < 0 || !((v->axes >> axis) & 1u))
    return -1;
  return __builtin_popcount(v->axes & ((1u << axis) - 1u));
}

Value *ir_take_index(const Value *v, int j) { return v->args[j]; }

int64_t ir_take_step(const Value *v, int j) { return v->steps[j]; }

Value *ir_take_start(const Value *v, int j) {
  if (!v->steps[j])
    return NULL;
  int at = ir_take_naxes(v);
  for (int i = 0; i < j; i++)
    at += v->steps[i] != 0;
  return v->args[at];
}

TakeAxis ir_take_get(const Value *v, int j) {
  return (TakeAxis){ir_take_axis(v, j), ir_take_index(v, j), ir_take_start(v, j), ir_take_step(v, j)};
}

void ir_take_set(Value *v, const TakeAxis *ax, int n) {
  TakeAxis s[TECC_MAX_RANK];
  v->axes = 0;
  for (int i = 0; i < n; i++) {
    if (ax[i].axis < 0 || ax[i].axis >= TECC_MAX_RANK || ((v->axes >> ax[i].axis) & 1u) || !ax[i].step != !ax[i].start)
      internal_error("ir: take %%%d: axis %d twice, out of range or half affine", v->id, ax[i].axis);
    v->axes |= 1u << ax[i].axis;
  }
  for (int i = 0; i < n; i++) /* ascending by axis */
    s[__builtin_popcount(v->axes & ((1u << ax[i].axis) - 1u))] = ax[i];
  int nargs = n;
  for (int j = 0; j < TECC_MAX_RANK; j++)
    v->steps[j] = j < n ? s[j].step : 0;
  for (int j = 0; j < n; j++) {
    v->args[j] = s[j].index;
    if (s[j].start)
      v->args[nargs++] = s[j].start;
  }
  v->nargs = nargs;
}

/* ---- dump ---------------------------------------------------------------- */

static const char *const ir_op_names[] = {
#define X(e, name) name,
    TECC_IR_OPS(X)
#undef X
};

static const char *const binary_mnemonics[] = {
#define X(e, spelling, kind, d) #e,
    TECC_BINARY_OPS(X)
#undef X
};

static void put_lower(Buf *b, const char *s) {
  for (; *s; s++) {
    char c = (char)tolower((unsigned char)*s);
    buf_putn(b, &c, 1);
  }
}

/* Shortest decimal that reads back as the same double (or float). */
static void put_float(Buf *b, double x, DType t) {
  if (isnan(x)) {
    buf_puts(b, "nan");
    return;
  }
  if (isinf(x)) {
    buf_puts(b, x < 0 ? "-inf" : "inf");
    return;
  }
  char tmp[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, x);
    double back = strtod(tmp, NULL);
    if (t == DT_F64 ? back == x : (float)back == (float)x)
      break;
  }
  buf_puts(b, tmp);
  if (!strpbrk(tmp, ".eEn"))
    buf_puts(b, ".0");
}

static void put_const(Buf *b, const Value *v) {
  if (v->dtype == DT_BOOL)
    buf_puts(b, v->ival ? "true" : "false");
  else if (dtype_is_float(v->dtype))
    put_float(b, v->fval, v->dtype);
  else
    buf_printf(b, "%lld", (long long)v->ival);
}

static void put_axes(Buf *b, uint32_t axes) {
  buf_puts(b, " axes={");
  int first = 1;
  for (int i = 0; i < TECC_MAX_RANK; i++) {
    if (!(axes & (1u << i)))
      continue;
    buf_printf(b, first ? "%d" : ", %d", i);
    first = 0;
  }
  buf_puts(b, "}");
}

/* Written into the dump itself: a string of its own per value would
 * take a 256-byte buffer each from the arena. */
static void put_type(Buf *b, const Kernel *k, DType t, const Shape *s) {
  buf_puts(b, dtype_name(t));
  put_shape(b, k, s);
}

static void put_opname(Buf *b, const Value *v) {
  switch (v->op) {
  case IR_UNARY:
    if (v->uop == UN_NEG)
      buf_puts(b, "neg");
    else if (v->uop == UN_NOT)
      buf_puts(b, "not");
    else
      buf_puts(b, unary_name(v->uop));
    break;
  case IR_BINARY:
    put_lower(b, binary_mnemonics[v->bop]);
    break;
  case IR_REDUCE:
    buf_printf(b, "reduce.%s", reduce_name(v->rop));
    break;
  default:
    buf_puts(b, ir_op_names[v->op]);
  }
}

/* A take's steps: " step 2" for one affine axis, " steps 1,0" for more
 * axes with an affine one. */
static void put_steps(Buf *b, const Value *v) {
  int n = ir_take_naxes(v), any = 0;
  for (int j = 0; j < n; j++)
    any |= ir_take_step(v, j) != 0;
  if (!any)
    return;
  buf_puts(b, n == 1 ? " step " : " steps ");
  for (int j = 0; j < n; j++)
    buf_printf(b, j ? ",%lld" : "%lld", (long long)ir_take_step(v, j));
}

static void dump_value(Buf *b, const Kernel *k, const Value *v) {
  buf_printf(b, "  %%%d = ", v->id);
  put_opname(b, v);
  if (v->op == IR_INPUT || v->op == IR_TAKE)
    buf_printf(b, " %s", k->inputs[v->index].name);
  else if (v->op == IR_CONST) {
    buf_puts(b, " ");
    put_const(b, v);
  }
  for (int i = 0; i < v->nargs; i++)
    buf_printf(b, i ? ", %%%d" : " %%%d", v->args[i]->id);
  if (v->op == IR_SIZE)
    buf_printf(b, " %s", k->sizevars[v->index].name);
  if (v->op == IR_REDUCE || v->op == IR_INDEX || v->op == IR_TAKE)
    put_axes(b, v->axes);
  if (v->op == IR_TAKE)
    put_steps(b, v);
  buf_puts(b, " : ");
  put_type(b, k, v->dtype, &v->shape);
  if (v->name && v->op != IR_INPUT)
    buf_printf(b, "  # %s", v->name);
  buf_puts(b, "\n");
}

static void dump_header(Buf *b, const Kernel *k) {
  buf_printf(b, "kernel %s(", k->name);
  for (int i = 0; i < k->ninputs; i++) {
    buf_printf(b, "%s%s: ", i ? ", " : "", k->inputs[i].name);
    put_type(b, k, k->inputs[i].dtype, &k->inputs[i].shape);
  }
  buf_puts(b, ") -> (");
  for (int i = 0; i < k->noutputs; i++) {
    buf_printf(b, "%s%s: ", i ? ", " : "", k->outputs[i].name);
    put_type(b, k, k->outputs[i].dtype, &k->outputs[i].shape);
  }
  buf_puts(b, ")\n");
  if (k->nsizevars) {
    buf_puts(b, "  sizes");
    for (int i = 0; i < k->nsizevars; i++)
      buf_printf(b, "%s %s%s", i ? "," : "", k->sizevars[i].def ? "derived " : "", k->sizevars[i].name);
    buf_puts(b, "\n");
  }
  if (k->grad_of)
    buf_printf(b, "  gradient of %s\n", k->grad_of);
}

static void dump_kernel(Buf *b, const Kernel *k) {
  dump_header(b, k);
  for (int i = 0; i < k->values.len; i++)
    dump_value(b, k, k->values.items[i]);
  for (int i = 0; i < k->noutputs; i++)
    buf_printf(b, "  output %s = %%%d\n", k->outputs[i].name,
               k->outputs[i].value->id);
}

const char *ir_dump(Arena *a, const Module *m) {
  Buf b;
  buf_init(&b, a);
  for (int i = 0; i < m->nkernels; i++) {
    if (i)
      buf_puts(&b, "\n");
    dump_kernel(&b, m->kernels[i]);
  }
  return buf_cstr(&b);
}

/* ---- verifier ----------------------------------------------------------- */

static const int ir_arity[IR_COUNT] = {
    [IR_INPUT] = 0, [IR_CONST] = 0,     [IR_CAST] = 1,     [IR_UNARY] = 1,
    [IR_BINARY] = 2, [IR_SELECT] = 3,   [IR_BROADCAST] = 1, [IR_REDUCE] = 1,
    [IR_SIZE] = 0,  [IR_INDEX] = 0,     [IR_TAKE] = 1,
};

static int compute_dtype_ok(DType t) { return !dtype_is_storage(t); }

static const char *check_unary(const Value *v) {
  const Value *a = v->args[0];
  if (v->uop == UN_ISNAN || v->uop == UN_ISINF || v->uop == UN_ISFINITE)
    return v->dtype == DT_BOOL && dtype_is_float(a->dtype) &&
                   compute_dtype_ok(a->dtype)
               ? NULL
               : "predicate dtypes";
  if (v->uop == UN_NOT)
    return v->dtype == DT_BOOL && a->dtype == DT_BOOL ? NULL : "not on non-bool";
  if (a->dtype != v->dtype || v->dtype == DT_BOOL || !compute_dtype_ok(v->dtype))
    return "unary dtypes";
  return NULL;
}

static const char *check_binary(const Value *v) {
  const Value *a = v->args[0], *b = v->args[1];
  if (a->dtype != b->dtype || !compute_dtype_ok(a->dtype))
    return "binary operand dtypes differ or are 16-bit";
  if (v->bop >= BIN_EQ && v->bop <= BIN_GE)
    return v->dtype == DT_BOOL ? NULL : "comparison not bool";
  if (v->bop == BIN_AND || v->bop == BIN_OR)
    return v->dtype == DT_BOOL && a->dtype == DT_BOOL ? NULL : "logic not bool";
  if (v->dtype != a->dtype || v->dtype == DT_BOOL)
    return "arithmetic dtypes";
  if ((v->bop == BIN_DIV || v->bop == BIN_ATAN2) && !dtype_is_float(v->dtype))
    return "division of integers";
  return NULL;
}

static const char *check_broadcast(const Value *v) {
  const Shape *from = &v->args[0]->shape, *to = &v->shape;
  if (from->rank > to->rank || v->dtype != v->args[0]->dtype)
    return "broadcast rank or dtype";
  for (int i = 0; i < from->rank; i++) {
    Dim f = from->d[i], t = to->d[to->rank - from->rank + i];
    int one = f.var < 0 && f.size == 1;
    if (!one && !dim_equal(f, t))
      return "broadcast dims";
  }
  return NULL;
}

static const char *check_reduce_dtype(const Value *v) {
  DType a = v->args[0]->dtype;
  switch (v->rop) {
  case RED_ARGMAX:
  case RED_ARGMIN:
    return v->dtype == DT_I64 && a != DT_BOOL && compute_dtype_ok(a)
               ? NULL
               : "argmax dtypes";
  case RED_ANY:
  case RED_ALL:
    return v->dtype == DT_BOOL && a == DT_BOOL ? NULL : "any/all dtypes";
  case RED_MEAN:
    return v->dtype == a && dtype_is_float(a) && compute_dtype_ok(a)
               ? NULL
               : "mean dtypes";
  case RED_VAR:
    return "var reaches the IR";
  default:
    return v->dtype == a && a != DT_BOOL && compute_dtype_ok(a)
               ? NULL
               : "reduction dtypes";
  }
}

static const char *check_reduce(const Value *v) {
  const Shape *in = &v->args[0]->shape;
  if (!v->axes || (v->axes >> in->rank) || in->rank != v->shape.rank)
    return "reduction axes";
  for (int i = 0; i < in->rank; i++) {
    int reduced = (v->axes >> i) & 1;
    Dim want = reduced ? (Dim){-1, 1} : in->d[i];
    if (!dim_equal(want, v->shape.d[i]))
      return "reduction shape (keepdims)";
  }
  return check_reduce_dtype(v);
}

static const char *check_index(const Value *v) {
  uint32_t axes = v->axes;
  if (v->dtype != DT_I64 || axes == 0 || (axes & (axes - 1)) != 0)
    return "index axis or dtype";
  for (int i = 0; i < v->shape.rank; i++)
    if (!((axes >> i) & 1u) && (v->shape.d[i].var >= 0 || v->shape.d[i].size != 1))
      return "index shape";
  return (axes >> v->shape.rank) == 0 ? NULL : "index axis";
}

static const char *check_take_operands(const Value *v) {
  int n = ir_take_naxes(v), nargs = n;
  for (int j = 0; j < TECC_MAX_RANK; j++) {
    if (j >= n ? v->steps[j] != 0 : v->steps[j] < 0)
      return "take steps";
    nargs += j < n && v->steps[j] > 0;
  }
  if (v->nargs != nargs)
    return "take start and step";
  for (int j = 0; j < n; j++) {
    const Value *i = ir_take_index(v, j), *s = ir_take_start(v, j);
    if (i->dtype != DT_I64 || !shape_equal(&i->shape, &v->shape))
      return "take index";
    if (s && (s->dtype != DT_I64 || s->shape.rank != 0))
      return "take start and step";
  }
  return NULL;
}

static const char *check_take(const Kernel *k, const Value *v) {
  if (v->index < 0 || v->index >= k->ninputs || !v->axes || (v->axes >> v->shape.rank))
    return "take input or axis";
  const KernelInput *in = &k->inputs[v->index];
  const char *why = check_take_operands(v);
  if (why)
    return why;
  if (v->dtype != dtype_compute(in->dtype) || in->shape.rank > v->shape.rank)
    return "take index or dtype";
  int off = v->shape.rank - in->shape.rank;
  for (int j = 0; j < v->shape.rank; j++)
    if (j < off && ((v->axes >> j) & 1u))
      return "take source shape";
  for (int j = 0; j < in->shape.rank; j++) {
    Dim d = in->shape.d[j];
    int along = (v->axes >> (j + off)) & 1u;
    int one = d.var < 0 && d.size == 1;
    if (along ? one : !one && !dim_equal(d, v->shape.d[j + off]))
      return "take source shape";
  }
  return NULL;
}

static int same_shape_as_args(const Value *v) {
  for (int i = 0; i < v->nargs; i++)
    if (!shape_equal(&v->args[i]->shape, &v->shape))
      return 0;
  return 1;
}

static int equal_up_to_ones(const Shape *a, const Shape *b);

static const char *check_input(const Value *v, const KernelInput *in) {
  if (v->dtype != in->dtype || !equal_up_to_ones(&v->shape, &in->shape) ||
      (v->shape.rank == 0) != (in->shape.rank == 0))
    return "input dtype or shape";
  return NULL;
}

static const char *check_value(const Kernel *k, const Value *v, int i) {
  if (v->id != i || (v->nargs != ir_arity[v->op] && v->op != IR_TAKE))
    return "id or arity";
  for (int j = 0; j < v->nargs; j++)
    if (!v->args[j] || v->args[j]->id >= i)
      return "not topological";
  switch (v->op) {
  case IR_INPUT:
    return v->index < k->ninputs && k->inputs[v->index].value == v
               ? check_input(v, &k->inputs[v->index])
               : "input index";
  case IR_CONST:
    return v->shape.rank == 0 && compute_dtype_ok(v->dtype) ? NULL : "const";
  case IR_CAST:
    return same_shape_as_args(v) ? NULL : "cast shape";
  case IR_UNARY:
    return same_shape_as_args(v) ? check_unary(v) : "unary shape";
  case IR_BINARY:
    return same_shape_as_args(v) ? check_binary(v) : "binary shape";
  case IR_SELECT:
    if (!same_shape_as_args(v) || v->args[0]->dtype != DT_BOOL ||
        v->args[1]->dtype != v->dtype || v->args[2]->dtype != v->dtype ||
        !compute_dtype_ok(v->dtype))
      return "select";
    return NULL;
  case IR_BROADCAST:
    return check_broadcast(v);
  case IR_REDUCE:
    return check_reduce(v);
  case IR_SIZE:
    return v->shape.rank == 0 && v->dtype == DT_I64 && v->index >= 0 && v->index < k->nsizevars
               ? NULL
               : "size";
  case IR_INDEX:
    return check_index(v);
  case IR_TAKE:
    return check_take(k, v);
  default:
    return "unknown op";
  }
}

/* Shapes equal after removing literal-1 axes. */
static int equal_up_to_ones(const Shape *a, const Shape *b) {
  int i = 0, j = 0;
  for (;;) {
    while (i < a->rank && a->d[i].var < 0 && a->d[i].size == 1)
      i++;
    while (j < b->rank && b->d[j].var < 0 && b->d[j].size == 1)
      j++;
    if (i == a->rank || j == b->rank)
      return i == a->rank && j == b->rank;
    if (!dim_equal(a->d[i++], b->d[j++]))
      return 0;
  }
}

void ir_verify_after(Arena *a, const Kernel *k, const char *pass) {
  const char *why = ir_verify(a, k);
  if (why)
    internal_error("%s made invalid IR: %s", pass, why);
}

const char *ir_verify(Arena *a, const Kernel *k) {
  for (int i = 0; i < k->values.len; i++) {
    const Value *v = k->values.items[i];
    const char *why = check_value(k, v, i);
    if (why)
      return arena_printf(a, "kernel %s: %%%d: %s", k->name, i, why);
  }
  for (int i = 0; i < k->noutputs; i++) {
    const KernelOutput *o = &k->outputs[i];
    if (!o->value || o->value->dtype != o->dtype ||
        !equal_up_to_ones(&o->value->shape, &o->shape))
      return arena_printf(a, "kernel %s: output %s", k->name, o->name);
  }
  return NULL;
}
