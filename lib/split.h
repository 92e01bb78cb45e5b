/* split.h — reductions over axes that are not one run (a batch-norm's
 * axes 0 and 2) split into a row reduction over the inner run and a
 * reduction of its result over the rest; a variance by the law of total
 * variance (split.c; doc/design.md, pipeline step 4b).  At -O1 and -O2,
 * between the optimizer and fusion. */
#ifndef TECC_SPLIT_H
#define TECC_SPLIT_H

#include "compile.h"

void split_reductions(Compilation *c, Module *m);

#endif
