/* emit.h — what the back end's emitters share (not part of the pipeline's
 * interface: that is backend.h). */
#ifndef TECC_EMIT_H
#define TECC_EMIT_H

#include "compile.h"
#include "fuse.h"

/* The C names of an entry point's parameters: the .te names, except that a
 * name that could clash with C, C++, CUDA or the generated code's own names
 * gets a `u_` prefix (and `_` suffixes until unique). */
typedef struct EntryNames {
  const char **inputs;  /* by input */
  const char **outputs; /* by output */
  const char **sizes;   /* by size variable */
} EntryNames;

EntryNames *entry_names(Arena *a, const Kernel *k);
/* 1 when `name` must not be used as is in generated code. */
int name_is_reserved(const char *name);
/* Appends "tecc_status NAME(<params>, cudaStream_t stream)". */
void put_entry_signature(Buf *b, const Kernel *k, const EntryNames *n);
/* The C type of an ABI parameter element (abi.md §2): "tecc_bf16". */
const char *abi_ctype(DType t);
/* The header file name the .cu includes. */
const char *header_file_name(Compilation *c);

#endif
