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
  /* What the pipeline produced (arena strings; NULL when not produced). */
  const char *output;      /* .cu text, or the dump asked for */
  const char *header;      /* .h text (TECC_EMIT_CU, TECC_EMIT_HEADER) */
  const char *explanation; /* --explain text */
  Buf debug_dump;          /* opts.dump_after: the IR after each pass named */
  Module *module;          /* the IR after optimization, once it exists */
  int stop_at_ir;          /* compile_to_ir(): skip code generation */
} Compilation;

/* Starts a compilation in `a`; copies the option strings into the arena. */
void compilation_init(Compilation *c, Arena *a, const tecc_options *opts,
                      const char *main_dir);

/* The pipeline (compile.c): parse `main`, check, lower, optimize, generate
 * code or the dump of c->opts.emit into c->output/c->header.  Returns 1 on
 * success, 0 when errors were reported in c->diags. */
int compile_pipeline(Compilation *c, SourceFile *main);

/* The front half of the pipeline (parse, sema, optimize), for tools that
 * want the IR (the interpreter, the conformance runner, the fuzzer).
 * NULL when there were errors. */
Module *compile_to_ir(Compilation *c, SourceFile *main);

/* Appends the IR after `pass` to c->debug_dump when opts.dump_after names
 * the pass (or is "all"); cheap when it does not. */
void compilation_dump_after(Compilation *c, const char *pass, const Module *m);

/* Adds a source whose text is already in memory. */
SourceFile *compilation_add_source(Compilation *c, const char *name,
                                   const char *path, const char *text,
                                   size_t len);
/* Reads a file into a new SourceFile; NULL when it cannot be read.  A path
 * read before returns the same SourceFile. */
SourceFile *compilation_load(Compilation *c, const char *path, const char *name);

/* opt.c: constant folding, CSE, exact algebraic identities, dead values. */
void optimize_module(Compilation *c, Module *m);

/* The embedded prelude (softmax, log_softmax, logsumexp in .te). */
extern const char tecc_prelude_te[];

#endif
