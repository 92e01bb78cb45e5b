/* lower.h — lowering: the IR (ir.h) of a checked program (typed.h). */
#ifndef TECC_LOWER_H
#define TECC_LOWER_H

#include "compile.h"
#include "typed.h"

/* Builds the IR module of `p`, which sema_check() produced.  Reports no
 * user errors: a broken invariant is a compiler bug (internal_error). */
Module *lower_program(Compilation *c, const TypedProgram *p);

#endif
