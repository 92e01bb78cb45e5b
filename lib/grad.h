/* grad.h — reverse-mode differentiation (grad.c; doc/design.md, pipeline
 * step 3b): the IR of each `kernel g = grad(k, ...)`, built from k's IR
 * between lowering and optimization, so that from then on a gradient
 * kernel is an ordinary kernel. */
#ifndef TECC_GRAD_H
#define TECC_GRAD_H

#include "compile.h"

/* Builds every gradient kernel of `m`, then removes the detach() marks
 * from every kernel.  Reports no user errors (sema has checked every grad
 * statement): a broken invariant is a compiler bug. */
void grad_module(Compilation *c, Module *m);

#endif
