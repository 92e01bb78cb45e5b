/* compile.h — one compilation and the pipeline's passes (compile.c lists
 * the pipeline, in order, in one function). */
#ifndef TECC_COMPILE_H
#define TECC_COMPILE_H

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "ir.h"
#include "tecc.h"

typedef struct Compilation {
  Arena *arena;
  DiagList diags;
  tecc_options opts;
  const char *main_dir; /* directory of the main file ("." for stdin) */
  PtrVec files;         /* SourceFile*: the main file first, then imports */
} Compilation;

/* Adds a source whose text is already in memory. */
SourceFile *compilation_add_source(Compilation *c, const char *name,
                                   const char *path, const char *text,
                                   size_t len);
/* Reads a file into a new SourceFile; NULL when it cannot be read.  A path
 * read before returns the same SourceFile. */
SourceFile *compilation_load(Compilation *c, const char *path, const char *name);

/* sema.c, lower.c: imports, names, fn inlining, shapes, dtypes, every rule
 * of language.md; then lowering to IR.  NULL when there were errors. */
Module *sema_and_lower(Compilation *c, AstFile *main);

/* opt.c: constant folding, CSE, exact algebraic identities, dead values. */
void optimize_module(Compilation *c, Module *m);

/* The embedded prelude (softmax, log_softmax, logsumexp in .te). */
extern const char tecc_prelude_te[];

#endif
