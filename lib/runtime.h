/* runtime.h — the runtime a generated file carries (runtime.c): of the
 * embedded runtime/tecc_runtime.cuh and runtime/tecc_rows.cuh, only the
 * pieces the generated code names (tecc::NAME) and the pieces those need.
 *
 * A runtime file is a prologue, pieces that each start with a line
 * `/ * @piece NAME... [@needs NAME...] * /`, then `/ * @end * /` and an
 * epilogue.  A file none of whose pieces is used is left out whole. */
#ifndef TECC_RUNTIME_H
#define TECC_RUNTIME_H

#include "arena.h"

/* The runtime text `code` needs, in the files' own order, without the
 * marker lines. */
const char *runtime_for(Arena *a, const char *code);

/* The embedded files (runtime_embed.c, rows_embed.c; built). */
extern const char tecc_runtime_cuh[];
extern const char tecc_rows_cuh[];

#endif
