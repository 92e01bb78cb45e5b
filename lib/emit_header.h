/* emit_header.h — the generated C header (emit_header.c; doc/abi.md
 * §1-§3), and the signatures and file names the .cu shares with it. */
#ifndef TECC_EMIT_HEADER_H
#define TECC_EMIT_HEADER_H

#include "compile.h"
#include "emit.h"

const char *emit_header(Compilation *c, Module *m);
/* Appends "T x, " for each input, output and size variable. */
void put_entry_params(Buf *b, const Kernel *k, const EntryNames *n);
/* "tecc_status NAME(<params>, cudaStream_t stream)". */
const char *entry_signature(Arena *a, const Kernel *k, const EntryNames *n);
/* The header file name the .cu includes. */
const char *header_file_name(Compilation *c);
/* How the generated files name source file `f` ("<stdin>" for none): its
 * base name, so that the output does not depend on the path it was given
 * by (build systems pass absolute ones). */
const char *source_name(const SourceFile *f);

#endif
