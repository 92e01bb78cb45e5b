/* compile.h — one compilation: options, sources, diagnostics, outputs,
 * debugging dumps (compile.c).  Every pass gets the Compilation; the
 * passes themselves are declared in their own headers and listed, in
 * order, in pipeline.c. */
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
} Compilation;

/* Starts a compilation in `a`; copies the option strings into the arena. */
void compilation_init(Compilation *c, Arena *a, const tecc_options *opts,
                      const char *main_dir);

/* Appends the IR after `pass` to c->debug_dump when opts.dump_after names
 * the pass (or is "all"); cheap when it does not. */
void compilation_dump_after(Compilation *c, const char *pass, const Module *m);
/* The same with a text of the pass's own (fusion groups, schedules). */
void compilation_dump_text(Compilation *c, const char *pass, const char *text);
/* opts.dump_after names `pass` (or is "all"). */
int compilation_wants_dump(const Compilation *c, const char *pass);

/* Adds a source whose text is already in memory. */
SourceFile *compilation_add_source(Compilation *c, const char *name,
                                   const char *path, const char *text,
                                   size_t len);
/* Reads a file into a new SourceFile; NULL when it cannot be read.  A path
 * read before returns the same SourceFile. */
SourceFile *compilation_load(Compilation *c, const char *path, const char *name);


/* The embedded prelude (softmax, log_softmax, logsumexp in .te). */
extern const char tecc_prelude_te[];

#endif
