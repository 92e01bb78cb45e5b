/* pipeline.h — the compiler's passes, in order (pipeline.c). */
#ifndef TECC_PIPELINE_H
#define TECC_PIPELINE_H

#include "compile.h"

/* Parse `main`, check, lower, optimize, fuse, schedule, and emit what
 * c->opts.emit asks for into c->output (and c->header, c->explanation).
 * Returns 1 on success, 0 when errors were reported in c->diags. */
int compile_pipeline(Compilation *c, SourceFile *main);

/* The front half only, without optimization: the IR the reference
 * interpreter runs (tests/conform), so that the oracle does not share the
 * optimizer with the code under test.  NULL when there were errors. */
Module *compile_unoptimized_ir(Compilation *c, SourceFile *main);

#endif
