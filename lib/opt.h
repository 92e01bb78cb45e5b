/* opt.h — the optimizer (opt.c; doc/design.md, pipeline step 4): constant
 * folding, CSE, algebraic identities exact in IEEE arithmetic, strength
 * reduction of ** and / by literals (opt.c says which rewrites are
 * bit-exact), dead-value removal.  It runs at every -O level (-O0 only
 * turns fusion off). */
#ifndef TECC_OPT_H
#define TECC_OPT_H

#include "compile.h"

void optimize_module(Compilation *c, Module *m);

#endif
