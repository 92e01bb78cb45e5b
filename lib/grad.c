/* grad.c — reverse-mode differentiation on the IR (grad.h). */
#include "grad.h"

/* ---- detach() ------------------------------------------------------------ */

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
  for (int i = 0; i < m->nkernels; i++) {
    strip_detach(c->arena, m->kernels[i]);
    const char *why = ir_verify(c->arena, m->kernels[i]);
    if (why)
      internal_error("grad made invalid IR: %s", why);
  }
}
