/* emit_dumps.h — --emit=fused, dot and json (emit_dumps.c): the fusion
 * groups as text, as a Graphviz graph, as JSON.  (--emit=plan is the
 * schedule pass's own dump, schedule.h.)  Strings in the arena. */
#ifndef TECC_EMIT_DUMPS_H
#define TECC_EMIT_DUMPS_H

#include "compile.h"
#include "groups.h"

const char *emit_fused(Compilation *c, Module *m, FusionPlan *p);
const char *emit_dot(Compilation *c, Module *m, FusionPlan *p);
const char *emit_json(Compilation *c, Module *m, FusionPlan *p);

#endif
