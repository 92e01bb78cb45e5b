/* fuse.h — fusion: partition each kernel into groups, one launch each
 * (doc/design.md, pipeline step 5; the groups are described in groups.h).
 *
 *   -O0: every computed value is stored and is its own group.
 *   -O1, -O2: only reductions are stored.  A reduction group recomputes its
 *        elementwise producers (kInput); the elementwise outputs of one
 *        shape form one multi-output loop group (kLoop).  Groups then
 *        depend on each other only through stored reductions, so no cycle
 *        can form, and launch order is the order of the roots' ids.
 *
 * Everything lives in the compilation's arena. */
#ifndef TECC_FUSE_H
#define TECC_FUSE_H

#include "compile.h"
#include "groups.h"

FusionPlan *fuse_module(Compilation *c, Module *m, int opt_level);

/* Output `out` may be exactly input `in`'s buffer (doc/abi.md §4), given that
 * they have the same dtype and layout. */
int fuse_in_place_ok(const KernelPlan *kp, int out, int in);

#endif
