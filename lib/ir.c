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

static int dim_equal(Dim a, Dim b) {
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

const char *shape_str(Arena *a, const Kernel *k, const Shape *s) {
  Buf b;
  buf_init(&b, a);
  buf_puts(&b, "[");
  for (int i = 0; i < s->rank; i++) {
    if (i)
      buf_puts(&b, ", ");
    put_dim(&b, k, s->d[i]);
  }
  buf_puts(&b, "]");
  return buf_cstr(&b);
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

void ir_renumber(Kernel *k) {
  for (int i = 0; i < k->values.len; i++)
    ((Value *)k->values.items[i])->id = i;
}

/* ---- dump ---------------------------------------------------------------- */

static const char *const ir_op_names[] = {
#define X(e, name) name,
    TECC_IR_OPS(X)
#undef X
};

static const char *const binary_mnemonics[] = {
#define X(e, spelling, kind) #e,
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

static void put_type(Buf *b, Arena *a, const Kernel *k, DType t,
                     const Shape *s) {
  buf_printf(b, "%s%s", dtype_name(t), shape_str(a, k, s));
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

static void dump_value(Buf *b, Arena *a, const Kernel *k, const Value *v) {
  buf_printf(b, "  %%%d = ", v->id);
  put_opname(b, v);
  if (v->op == IR_INPUT)
    buf_printf(b, " %s", k->inputs[v->index].name);
  else if (v->op == IR_CONST) {
    buf_puts(b, " ");
    put_const(b, v);
  }
  for (int i = 0; i < v->nargs; i++)
    buf_printf(b, i ? ", %%%d" : " %%%d", v->args[i]->id);
  if (v->op == IR_REDUCE)
    put_axes(b, v->axes);
  buf_puts(b, " : ");
  put_type(b, a, k, v->dtype, &v->shape);
  if (v->name && v->op != IR_INPUT)
    buf_printf(b, "  # %s", v->name);
  buf_puts(b, "\n");
}

static void dump_header(Buf *b, Arena *a, const Kernel *k) {
  buf_printf(b, "kernel %s(", k->name);
  for (int i = 0; i < k->ninputs; i++) {
    buf_printf(b, "%s%s: ", i ? ", " : "", k->inputs[i].name);
    put_type(b, a, k, k->inputs[i].dtype, &k->inputs[i].shape);
  }
  buf_puts(b, ") -> (");
  for (int i = 0; i < k->noutputs; i++) {
    buf_printf(b, "%s%s: ", i ? ", " : "", k->outputs[i].name);
    put_type(b, a, k, k->outputs[i].dtype, &k->outputs[i].shape);
  }
  buf_puts(b, ")\n");
  if (k->nsizevars) {
    buf_puts(b, "  sizes");
    for (int i = 0; i < k->nsizevars; i++)
      buf_printf(b, "%s %s", i ? "," : "", k->sizevars[i].name);
    buf_puts(b, "\n");
  }
}

static void dump_kernel(Buf *b, Arena *a, const Kernel *k) {
  dump_header(b, a, k);
  for (int i = 0; i < k->values.len; i++)
    dump_value(b, a, k, k->values.items[i]);
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
    dump_kernel(&b, a, m->kernels[i]);
  }
  return buf_cstr(&b);
}
