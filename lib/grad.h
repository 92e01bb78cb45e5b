/* grad.h — reverse-mode differentiation (grad.c, grad_rules.c;
 * doc/design.md, pipeline step 3b): the IR of each `kernel g = grad(k, ...)`
 * (language.md §13), built from k's IR between lowering and optimization,
 * so that from then on a gradient kernel is an ordinary kernel: optimized,
 * fused, scheduled, emitted and interpreted like any other.
 *
 * The rest of this header is the module's inside: grad.c builds the
 * kernels and sweeps the adjoints, grad_rules.c has the rule of each
 * operation (the derivative column of ops.h's X-macro lists). */
#ifndef TECC_GRAD_H
#define TECC_GRAD_H

#include "compile.h"

/* Builds every gradient kernel of `m` (in order, so that a gradient of a
 * gradient finds its forward built), removes the detach() marks from
 * every kernel and the imported kernels from the module.  Sema has
 * checked every grad statement; the one user error left is a slice's
 * cotangent that cannot be gathered (a take along another axis in it),
 * reported at the slice.  A broken invariant is a compiler bug. */
void grad_module(Compilation *c, Module *m);

/* ---- inside the module ----------------------------------------------------
 *
 * Adjoints are in the compute dtype of their value (grad_dtype: f64 for
 * f64, else f32).  An adjoint's shape is its value's, possibly with
 * literal-1 axes in front (the sum over the axes a broadcast added keeps
 * them as 1, and the IR has no reshape); the builders below broadcast
 * whichever operand has the shape the other stretches to, so a rule may
 * combine an adjoint with the forward values of its operands directly. */

typedef struct Grad {
  Arena *a;
  const Kernel *f; /* the kernel differentiated */
  Kernel *k;       /* the gradient kernel, being built */
  Value **re;      /* by f's value id: its recomputation in k */
  Value **adj;     /* by f's value id: its adjoint so far; NULL: zero */
  char *reach;     /* by f's value id: an input differentiated reaches it
                      through float values */
  SrcRange loc;    /* given to the values made now */
  DiagList *diags; /* for the error above */
  int failed;      /* reported it */
} Grad;

DType grad_dtype(DType t); /* the dtype of a float value's adjoint */

/* The recomputation in k of f's value v. */
Value *grad_re(Grad *g, const Value *v);
/* Builders in k.  Operands of one dtype; the one whose shape stretches to
 * the other's is broadcast (a rank-0 constant, or an adjoint's extra
 * literal-1 axes in front).  Comparisons and and/or give bool. */
Value *grad_const(Grad *g, DType t, double x); /* rank 0 */
Value *grad_fit(Grad *g, Value *x, const Shape *sh); /* broadcast to sh */
Value *grad_unary(Grad *g, UnaryOp op, Value *x);
Value *grad_binary(Grad *g, BinaryOp op, Value *a, Value *b);
Value *grad_select(Grad *g, Value *c, Value *a, Value *b);
Value *grad_cast(Grad *g, Value *x, DType t);
Value *grad_reduce(Grad *g, ReduceOp op, Value *x, uint32_t axes);
/* `s` with literal 1s at `axes`: the shape grad_reduce() gives. */
Shape grad_reduced_shape(const Shape *s, uint32_t axes);
/* An IR broadcast may take `from` to `to`: right-aligned, each dim equal
 * or a literal 1. */
int grad_stretches_to(const Shape *from, const Shape *to);

/* A dimension's size as an i64 scalar (a constant, or IR_SIZE). */
Value *grad_dim(Grad *g, Dim d);
/* The positions along `axis` of shape sh (IR_INDEX: 1 on the other axes). */
Value *grad_index(Grad *g, const Shape *sh, int axis);
/* Adds d to the adjoint of f's input number `input` when it is
 * differentiated (a take reads it without an operand). */
void grad_push_input(Grad *g, int input, Value *d);

/* Whether operand i of f's value v needs its adjoint. */
int grad_wants(const Grad *g, const Value *v, int i);
/* Adds d (NULL: nothing) to the adjoint of operand i of f's value v; d has
 * grad_dtype of the operand and its shape, maybe with 1s in front. */
void grad_push(Grad *g, const Value *v, int i, Value *d);

/* grad_rules.c: pushes the adjoint dv of f's value v to its operands. */
void grad_rule(Grad *g, const Value *v, Value *dv);
/* grad_rules.c: f's value v recomputed in the gradient kernel as the
 * operations its rule builds too (gelu, gelu_tanh, silu), or NULL: the
 * optimizer's CSE then computes their shared part (the tanh, the erf, the
 * sigmoid) once an element where the gradient uses the value itself. */
Value *grad_recompute_composite(Grad *g, const Value *v);

#endif
