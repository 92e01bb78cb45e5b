/* emit.h — what the back end's emitters share (emit_expr.c,
 * emit_common.c): the writer, CUDA spelling, entry-point names, kernel
 * parameters.  The pipeline calls the emitters through emit_cu.h,
 * emit_header.h and emit_dumps.h.
 *
 * Layering, with no cycle: emit_expr.c calls no other emitter file;
 * emit_common.c and emit_header.c call emit_expr.c; emit_stitch.c calls
 * those three; emit_cu.c calls all four (emit_stitch.h).  Every returned
 * string lives in the arena passed. */
#ifndef TECC_EMIT_H
#define TECC_EMIT_H

#include "compile.h"
#include "groups.h"
#include "nameset.h"

/* ---- emit_expr.c: the writer ----------------------------------------------
 * Every line of generated code goes through emit() and its kin, which
 * indent it by two spaces per open block.  A piece written before the
 * place it goes is known (a loop body, a pass) is its own Out, opened at
 * indentation 0, and goes in with emit_fragment() at the indentation of
 * that place. */

typedef struct Out {
  Buf *b;
  int indent; /* open blocks */
} Out;

/* A new empty Out at indentation 0. */
Out *new_out(Arena *a);
/* One line. */
__attribute__((format(printf, 2, 3))) void emit(Out *o, const char *fmt, ...);
/* An empty line (never indented). */
void emit_blank(Out *o);
/* "<line> {", then one level deeper. */
__attribute__((format(printf, 2, 3))) void open_block(Out *o, const char *fmt, ...);
/* "{" alone (a scope), then one level deeper. */
void open_scope(Out *o);
/* One level back, then "}<tail>". */
void close_block(Out *o, const char *tail);
/* "} else {": closes a block and opens its else branch. */
void else_block(Out *o);
/* "} else if (<cond>) {". */
__attribute__((format(printf, 2, 3))) void else_if_block(Out *o, const char *fmt, ...);
/* Text of whole lines, each non-empty one indented at `o`'s level (the
 * embedded runtime, at 0, goes in as it is). */
void emit_text(Out *o, const char *text);
/* A fragment's lines at `o`'s level; the fragment's blocks must be closed. */
void emit_fragment(Out *o, const Out *frag);
/* The text of a whole file; `what` names it when a block is left open. */
const char *out_finish(Out *o, const char *what);

/* ---- emit_expr.c: CUDA spelling ------------------------------------------ */

/* The type expressions are computed in: 16-bit floats compute in f32. */
DType cu_compute_dtype(DType t);
const char *cu_compute_ctype(DType t);
/* A template argument of items32 in the instances of 32-bit indices
 * (IndexT) and items64 in those of 64-bit ones: "sizeof(IndexT) == 4 ?
 * 8 : 4", or the one number. */
const char *cu_by_index_bits(Arena *a, int items32, int items64);
/* The type a value has in memory inside kernels. */
const char *cu_storage_ctype(DType t);
/* The C type of an ABI parameter element (abi.md §2): "tecc_bf16". */
const char *abi_ctype(DType t);
int cu_is_float(DType t);
/* `expr` (computed as `from`) converted to the compute type of `to`. */
const char *cu_convert(Arena *a, const char *expr, DType from, DType to);
/* A load from / a store to memory of storage type `t`. */
const char *cu_load_conv(Arena *a, DType t, const char *mem);
/* ... of v, a value of kernel k read from memory: an 8-bit float whose
 * NaN sign nothing shows decodes without it (ir_nan_sign_unseen). */
const char *cu_load_conv_of(Arena *a, const Kernel *k, const Value *v, const char *mem);
/* ... of type t, whose ir_nan_sign_unseen() the caller has (an emitter
 * that decodes one value many times asks it once). */
const char *cu_load_decode(Arena *a, DType t, int nan_sign_unseen, const char *mem);
const char *cu_store_conv(Arena *a, DType t, const char *expr);
/* Whether stores of type t convert a pack at a time (8-bit floats), and
 * that conversion of the array `floats` of VEC f32 values into the
 * tecc::Pack `pack`. */
int cu_converts_packs(DType t);
const char *cu_pack_conv(Arena *a, DType t, const char *floats, const char *pack);
/* The shortest literal that reads back as `x` (f32 or f64). */
const char *cu_float_literal(Arena *a, double x, int is_f32);
const char *cu_const_literal(Arena *a, const Value *v);
/* A mean from its sum `acc` (compute type `type`, float or double) over
 * the kernel's `t_red` elements: the sum times the reciprocal of the
 * count, rounded once, as PyTorch's mean computes it. */
const char *cu_mean_of(Arena *a, const char *acc, const char *type);
/* A gathered load (IR_TAKE) of `mem` (an element of input `in`), read
 * only where `inside`; else NaN, 0 or false (ir.h). */
const char *cu_gather(Arena *a, DType in, const char *inside, const char *mem);
/* Where take v reads: every axis's index (idx, by axis) inside [0, size). */
const char *cu_take_inside(Arena *a, const Value *v, const char *const *idx, const char *const *size);
/* The C expression of one elementwise operation (CAST, UNARY, BINARY,
 * SELECT) of argument expressions `args` (in their compute types). */
const char *cu_op_expr(Arena *a, Value *v, const char *const *args);

/* v is an f32 quotient x / s whose divisor is a reduction's result
 * (through broadcasts: softmax's sum).  Every kernel computes it as
 * x * (1 / s), the stitch kernels with one reciprocal per row: a value
 * recomputed in another group must round alike (the gradient of a max
 * compares it with the max of the same value; issue 46). */
int cu_by_reciprocal(const Value *v);

/* v is an f32 or f64 a*b + c, a*b - c or c - a*b whose product is used
 * nowhere else and stored by no group: every kernel that computes v
 * computes it as one fma(a, b, c).  Returns the product's operand (0 or
 * 1), or -1.  It asks only the IR (nuses: ir_count_uses()) and which
 * values the kernel stores, never the group or the variant, so that a
 * value recomputed in another group rounds alike (a loop once added
 * what a stitch kernel fused: x - mean(x) over one element was not 0 and
 * the gradient of an abs at 0 took a sign; issue 46). */
int cu_fused_product(const KernelPlan *kp, const Value *v);
/* fma(a, b, c) for v, the product's operand `which` (cu_fused_product());
 * a and b the product's operands, c v's other one. */
const char *cu_fma_expr(Arena *ar, const Value *v, int which, const char *a, const char *b, const char *c);
/* 1 when `name` must not be used as is in generated code. */
int name_is_reserved(const char *name);

/* ---- emit_header.c: entry points ------------------------------------------ */

/* The C names of an entry point's parameters: the .te names, except that a
 * name that could clash with C, C++, CUDA or the generated code's own names
 * gets a `u_` prefix (and `_` suffixes until unique). */
typedef struct EntryNames {
  const char **inputs;  /* by input */
  const char **outputs; /* by output */
  const char **sizes;   /* by size variable */
} EntryNames;

EntryNames *entry_names(Arena *a, const Kernel *k);

/* ---- emit_common.c: what both kernel emitters build alike ----------------- */

/* "const float *__restrict__ x", and the list of a PtrVec of KParam*;
 * without __restrict__ when an output `may_alias` an input (in place). */
const char *param_decl(Arena *a, const Kernel *k, const KParam *p, int may_alias);
const char *param_decls(Arena *a, const Kernel *k, const PtrVec *params, int may_alias);
/* ... for a lag kernel and its items (emit_cu.c): the workspace's slots,
 * which other blocks of the launch write, without __restrict__ (no
 * ld.global.nc of them), the rest with. */
const char *param_decls_lag(Arena *a, const Kernel *k, const PtrVec *params);
/* "t_ws3": workspace slot 3 in the host code. */
const char *slot_name(Arena *a, int slot);
/* The host pointer a value read from memory lives at. */
const char *home_pointer(Arena *a, const KernelPlan *kp, const EntryNames *n, const Value *v);
/* What the launch passes for a parameter, and for a PtrVec of KParam*. */
const char *launch_arg(Arena *a, const KernelPlan *kp, const EntryNames *n, const KParam *p);
const char *launch_args(Arena *a, const KernelPlan *kp, const EntryNames *n, const PtrVec *params);
/* The host's "t_err = cudaGetLastError(); if (...) return ...". */
void emit_launch_check(Out *o);

/* One named temporary per (value, index map) within a scope. */
typedef struct Memo {
  int id;
  int map[TECC_MAX_RANK];
  const char *name;
} Memo;

Memo *memo_find(const PtrVec *memo, const Value *v, const int *map);
Memo *memo_add(Arena *a, PtrVec *memo, const Value *v, const int *map, const char *name);
/* What a value's temporary is named after: its .te name ("rstd"); an
 * input's element, or a value named like a parameter, "x_val"; an
 * anonymous value its SSA id ("v7"). */
const char *value_temp_name(Arena *a, const Kernel *k, const Value *v);
/* A fresh kernel identifier near `want` (`u_` prefixed when reserved). */
const char *fresh_name(Arena *a, NameSet *taken, const char *want);
/* Marks the entry point's parameter names taken. */
void take_entry_names(NameSet *taken, const Kernel *k, const EntryNames *n);
void identity_map(int *map, int rank);
/* With reduced `axes` trailing (row) or leading (column) in `domain`: a
 * linear index of an element from t_o and t_r; else NULL. */
const char *reduce_linear_index(const Shape *domain, uint32_t axes);
/* The axes of `s` in `mask` that are not literal 1s, in order, into
 * `axes`; returns how many. */
int shape_axes(const Shape *s, uint32_t mask, int *axes);
/* "N*1024": the dims of `s` in `mask` as --emit=plan spells them. */
const char *plan_dims(Arena *a, const Kernel *k, const Shape *s, uint32_t mask);
/* "n" or "INT64_C(1024)": a dim as an int64_t host expression. */
const char *host_dim(Arena *a, const EntryNames *n, Dim d);

/* runtime/tecc_rows.cuh, embedded (rows_embed.c, built). */
extern const char tecc_rows_cuh[];

#endif
