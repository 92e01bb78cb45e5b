/* typed.c — the text of a typed program (TECC_DUMP=sema). */
#include "typed.h"

static void put_shape(Buf *b, const TypedKernel *k, const Shape *s) {
  buf_puts(b, "[");
  for (int i = 0; i < s->rank; i++) {
    if (i)
      buf_puts(b, ", ");
    if (s->d[i].var >= 0)
      buf_puts(b, k->sizevars[s->d[i].var].name);
    else
      buf_printf(b, "%lld", (long long)s->d[i].size);
  }
  buf_puts(b, "]");
}

static void put_scalar(Buf *b, DType t, Scalar v) {
  if (dtype_is_float(t))
    buf_printf(b, "%.17g", v.f);
  else
    buf_printf(b, "%lld", (long long)v.i);
}

/* An operand: %order, or a constant made where it is used. */
static void put_arg(Buf *b, const TypedNode *n) {
  if (n->order >= 0)
    buf_printf(b, " %%%d", n->order);
  else if (n->op == TN_CONST) {
    buf_puts(b, " ");
    put_scalar(b, n->dtype, n->value);
  }
  else
    buf_puts(b, " ?");
}

static const char *op_text(const TypedNode *n) {
  switch (n->op) {
  case TN_INPUT: return "input";
  case TN_CONST: return "const";
  case TN_CAST: return "cast";
  case TN_UNARY: return unary_name(n->uop);
  case TN_BINARY: return binary_name(n->bop);
  case TN_SELECT: return "where";
  case TN_REDUCE: return reduce_name(n->rop);
  case TN_SIZE: return "size";
  case TN_INDEX: return "index";
  case TN_TAKE: return "take";
  }
  return "?";
}

static void put_node(Buf *b, const TypedKernel *k, const TypedNode *n) {
  buf_printf(b, "  %%%d: %s", n->order, dtype_name(n->dtype));
  put_shape(b, k, &n->shape);
  buf_printf(b, " = %s", op_text(n));
  if (n->op == TN_INPUT)
    buf_printf(b, " %s", k->inputs[n->input].name);
  if (n->op == TN_CONST) {
    buf_puts(b, " ");
    put_scalar(b, n->dtype, n->value);
  }
  for (int i = 0; i < n->nargs; i++)
    put_arg(b, n->args[i]);
  if (n->op == TN_SIZE)
    buf_printf(b, " %s", k->sizevars[n->input].name);
  if (n->op == TN_REDUCE || n->op == TN_INDEX || n->op == TN_TAKE)
    buf_printf(b, " axes 0x%x", n->axes);
  if (n->op == TN_TAKE && n->step)
    buf_printf(b, " step %lld", (long long)n->step);
  buf_puts(b, "\n");
}

const char *typed_dump(Arena *a, const TypedProgram *p) {
  Buf b;
  buf_init(&b, a);
  for (int i = 0; i < p->nkernels; i++) {
    const TypedKernel *k = p->kernels[i];
    buf_printf(&b, "%s\n", k->te_signature);
    if (k->grad) {
      buf_printf(&b, "  gradient of %s\n", p->kernels[k->grad->of]->name);
      continue;
    }
    for (int j = 0; j < k->nnodes; j++)
      put_node(&b, k, k->nodes[j]);
    for (int j = 0; j < k->noutputs; j++)
      buf_printf(&b, "  %s = %%%d\n", k->outputs[j].name, k->outputs[j].value->order);
  }
  return buf_cstr(&b);
}
