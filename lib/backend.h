/* backend.h — the back end's entry points for the pipeline (compile.c):
 * fusion, tile selection, and the emitters of the .cu, the .h and the
 * fused / plan / dot / json dumps.  Every returned string lives in the
 * compilation's arena.  None of them reports user errors: the IR they get
 * has passed sema; a broken invariant is an internal_error. */
#ifndef TECC_BACKEND_H
#define TECC_BACKEND_H

#include "compile.h"
#include "fuse.h"

/* Partition every kernel into groups (one launch each); opt_level 0 puts
 * each operation in its own group, 1 and 2 fuse (fuse.h). */
FusionPlan *fuse_module(Compilation *c, Module *m, int opt_level);

/* The self-contained .cu (abi.md §1): runtime, kernels, host entry points.
 * It includes header_file_name(c). */
const char *emit_cu(Compilation *c, Module *m, FusionPlan *p);

/* The C header (abi.md §1, §2, §4). */
const char *emit_header(Compilation *c, Module *m);

/* --emit=fused, plan, dot, json. */
const char *emit_fused(Compilation *c, Module *m, FusionPlan *p);
const char *emit_plan(Compilation *c, Module *m, FusionPlan *p);
const char *emit_dot(Compilation *c, Module *m, FusionPlan *p);
const char *emit_json(Compilation *c, Module *m, FusionPlan *p);

/* All of the above as compile.c needs it: fills c->output, c->header and
 * c->explanation for c->opts.emit (TECC_EMIT_CU, HEADER, FUSED, PLAN, DOT,
 * JSON).  Returns 1; 0 only for an emit kind it does not handle. */
int backend_generate(Compilation *c, Module *m);

/* The embedded runtime/tecc_runtime.cuh (runtime_embed.c, built). */
extern const char tecc_runtime_cuh[];

#endif
