/* emit.h — what the back end's emitters share (not part of the pipeline's
 * interface: that is backend.h). */
#ifndef TECC_EMIT_H
#define TECC_EMIT_H

#include "compile.h"
#include "fuse.h"
#include "nameset.h"

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

/* emit_cu.c, for emit_stitch.c (H9): the C expression of one elementwise
 * operation (CAST, UNARY, BINARY, SELECT) of argument expressions `args`
 * (computed in their compute types), constants, loads/stores of storage
 * types, and the compute/storage C types. */
const char *cu_op_expr(Arena *a, Value *v, const char *const *args);
const char *cu_const_literal(Arena *a, const Value *v);
const char *cu_load_conv(Arena *a, DType t, const char *mem);
const char *cu_store_conv(Arena *a, DType t, const char *expr);
const char *cu_compute_ctype(DType t);
const char *cu_storage_ctype(DType t);
const char *cu_convert(Arena *a, const char *expr, DType from, DType to);

/* runtime/tecc_rows.cuh, embedded (rows_embed.c, built). */
extern const char tecc_rows_cuh[];

#endif
