/* sema.h — the checker: sema_check() and the internals shared by sema.c
 * (program structure: imports, names, kernels, fns) and sema_expr.c
 * (typing each expression).
 *
 * Sema finishes before lowering starts: it reports every diagnostic and
 * produces the checked, typed program of typed.h; lower.c then builds the
 * IR from that alone.  Every expression is type-checked after fn
 * arguments are substituted (fns are inlined at each call).  Shapes are
 * symbolic while checking (a size variable bound by -D stays a variable,
 * so it never stretches); lowering substitutes -D values into the
 * finished kernel.
 *
 * Weak literals (doc/language.md §8.2) are compile-time constants: an expression
 * made only of literals and pi/inf/nan is folded in i64/f64 (fold.c) and
 * stays weak until it meets a typed operand, which gives it its dtype.
 * A size variable used as a value is weak too, but known only at run time
 * (TVal.rt): arithmetic of weak values with one of them is a node in
 * i64/f64 that stays weak, and meeting a typed operand casts it.  A
 * weak value that reaches an output, a reduction or where() with only weak
 * branches becomes i32 (integer) or f32 (float).  A weak float meeting a
 * 16-bit operand stays an f32 constant (it is computed in f32 anyway).
 * An integer literal next to bool gives i32 (m == 1 compares in i32).  A
 * weak value assigned to a declared output takes the declared dtype.
 *
 * tecc's choices where the language leaves a point open (doc/language.md):
 * - arithmetic, maximum/minimum/atan2/pow, abs/sign/relu and rounding on
 *   bool are errors (cast first); math functions on bool compute in f32;
 * - max/min of bool are any/all; sum and prod of bool count in i64; argmax
 *   of bool compares 0/1;
 * - a name bound to a literal is not an axis (only literals, and fn
 *   parameters bound to literals, are);
 * - the prelude's variadic `axes` parameter (lib/prelude.te) is a list of
 *   axis values that only a reduction accepts;
 * - a kernel may not be named like a C library function (exp, sqrt, ...):
 *   its entry point has C linkage. */
#ifndef TECC_SEMA_H
#define TECC_SEMA_H

#include "compile.h"
#include "fold.h"
#include "typed.h"

/* Checks the program whose main file is `main` (its imports, the prelude,
 * every rule of language.md).  NULL when errors were reported in
 * c->diags. */
TypedProgram *sema_check(Compilation *c, AstFile *main);

/* A string-keyed hash table (open addressing) in the arena. */
typedef struct StrMap {
  const char **keys;
  void **vals;
  int cap, len;
} StrMap;

void *strmap_get(const StrMap *m, const char *key);
void strmap_put(Arena *a, StrMap *m, const char *key, void *val);

typedef enum TKind {
  TV_TENSOR,     /* dtype, node */
  TV_WEAK_INT,   /* k.i, or run time: rt */
  TV_WEAK_FLOAT, /* k.f, or run time: rt */
  TV_AXES        /* the variadic `axes` parameter of a prelude fn: axes[] */
} TKind;

/* A typed value during checking. */
typedef struct TVal {
  TKind kind;
  DType dtype; /* TV_TENSOR: the .te dtype (== node->dtype) */
  TypedNode *node; /* TV_TENSOR: its typed node (shape: node->shape) */
  Scalar k;    /* weak constants */
  TypedNode *rt; /* a weak value known at run time (a size variable's,
                    language.md §8.5): its node, rank 0, i64 (integer)
                    or f64 (float); k unused */
  const SizeExpr *size; /* a run-time weak integer that is a size
                                  expression of literals and size variables
                                  (`D // 2`): its canonical form */
  int literal; /* an integer literal (maybe negated): usable as an axis */
  SrcRange loc;
  struct TVal **axes; /* TV_AXES */
  int naxes;
} TVal;

typedef struct FnDef {
  const char *name;
  const Stmt *stmt;
  int order;     /* may call only fns of smaller order */
  int variadic;  /* prelude: the last parameter `axes` takes 0+ axes */
  int prelude;
} FnDef;

typedef struct Frame {
  const FnDef *fn;
  SrcRange call; /* the call, in the caller */
} Frame;

enum { SEMA_MAX_DEPTH = 256 };

typedef struct Sema {
  Compilation *c;
  Arena *a;
  DiagList *d;
  StrMap fns;    /* name -> FnDef*: prelude, imported and main-file fns */
  StrMap later_fns; /* name -> Stmt*: every fn of the main file */
  StrMap tensor_names; /* every tensor name of the main file */
  StrMap builtins; /* name -> BuiltinInfo* (sema_expr.c): reserved names */
  int order;     /* running definition order */
  int import_failed; /* an import was missing or had syntax errors */
  StrMap broken;     /* names defined by statements that did not parse */
  int broken_unnamed; /* a statement whose name is unknown did not parse */
  PtrVec unused;     /* Diag-less warnings held back (struct Unused, sema.c):
                        given only when the program has no errors */
  /* the program's kernels */
  PtrVec kernels;    /* TypedKernel*, in program order */
  StrMap kernel_names; /* name -> SrcRange*: every kernel so far, any file */
  StrMap kernel_defs;  /* name -> KernelDef* (sema.c): kernels grad can name */
  StrMap later_kernels; /* name -> Stmt*: every kernel of the file checked */
  StrMap used_defines; /* size variable names, for the -D warning */
  int importing;     /* checking an imported file's kernels */
  /* the kernel being checked */
  TypedKernel *k;
  PtrVec nodes;    /* TypedNode*: its nodes, in the order they were made */
  struct KernelBuild *kb;
  StrMap sizevars; /* name -> (void *)(index + 1) */
  PtrVec sizevar_names; /* by number; a derived size's is its .te text */
  PtrVec size_defs; /* const SizeExpr* by number: NULL for a size variable
                       of the inputs, else the derived size's definition
                       (language.md §9.8) */
  StrMap *scope;   /* kernel names -> Binding* */
  /* inside an inlined fn */
  const FnDef *fn;
  TVal **params;
  Frame frames[SEMA_MAX_DEPTH];
  int depth;
  int expansion_failed; /* an error was reported in this expansion */
  SrcRange cur_loc; /* loc given to new typed nodes */
  int cur_loc_is_last_output; /* cur_loc is stale: an output was made
                                 since (see TypedNode.loc_of_last_output) */
} Sema;

/* Errors: inside an expansion, reported at the outermost call with notes
 * `in expansion of 'f'` pointing into each function. */
Diag *sema_error(Sema *s, SrcRange r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *type_str(Sema *s, DType t, const Shape *sh); /* "f32[N, D]" */
const char *tval_type_str(Sema *s, const TVal *t);

/* sema_expr.c: typing of each kind of expression; the typed nodes are
 * added to s->nodes.  NULL after an error (already reported). */
TVal *sema_weak_int(Sema *s, int64_t v, SrcRange loc, int literal);
TVal *sema_weak_float(Sema *s, double v, SrcRange loc);
TVal *sema_bool(Sema *s, int v, SrcRange loc);
/* Size variable number `var` as a value: a weak integer known at run time. */
TVal *sema_size_value(Sema *s, int var, SrcRange loc);
TVal *sema_unary(Sema *s, UnaryOp op, TVal *a, SrcRange op_loc, SrcRange loc);
TVal *sema_binary(Sema *s, BinaryOp op, TVal *a, TVal *b, SrcRange op_loc,
                  SrcRange loc);
TVal *sema_builtin_call(Sema *s, const Expr *call, TVal **args, int nargs);
/* The builtin names in s->builtins, once per compilation. */
void sema_builtins_init(Sema *s);
/* 1 when `name` is a builtin function (not a prelude fn); its arity. */
int builtin_arity(Sema *s, const char *name, int *min_args, int *max_args);
/* A builtin function, prelude fn or constant: not to be defined again. */
int is_builtin_name(Sema *s, const char *name);

/* sema_expr.c's builders, for sema_slice.c. */
TypedNode *sema_new_node(Sema *s, TypedOp op, DType t, const Shape *sh);
TVal *sema_tensor(Sema *s, TypedNode *n, SrcRange loc);
int sema_axis(Sema *s, const char *what, const TVal *x, const TVal *t); /* -1: error */
DType sema_promote(DType x, DType y);
const char *sema_dim_str(Sema *s, Dim d);
TypedNode *sema_binary_node(Sema *s, BinaryOp op, DType rt, TypedNode *x, TypedNode *y, const Shape *sh);
TypedNode *sema_cast_node(Sema *s, TypedNode *x, DType t);
/* Whether x can be gathered along `axis` by `what` (take, slice, concat);
 * else reports why (a gather along another axis; for take, a reduction
 * that varies along the axis). */
int sema_gathers_through(Sema *s, const TVal *x, int axis, const char *what);

/* sema_slice.c: size expressions, slices and concat (language.md §9.8,
 * §9.9). */
/* A dimension as a size expression, and back (a derived size is interned
 * as a size variable with a definition). */
const SizeExpr *sema_dim_size(Sema *s, Dim d);
Dim sema_size_dim(Sema *s, const SizeExpr *e);
/* The size expression of a weak integer (a literal, or a run-time one
 * made of sizes), else NULL. */
const SizeExpr *sema_tval_size(Sema *s, const TVal *t);
/* x[...]: parts holds lo, hi, step of each entry (NULL where absent). */
TVal *sema_slice(Sema *s, const Expr *e, TVal *x, TVal **parts);
TVal *sema_concat(Sema *s, const Expr *call, TVal **args, int nargs);
/* An output type's dimension written as an expression (`D // 2`). */
int sema_output_dim(Sema *s, const AstDim *d, Dim *out);

/* The value of an output: a weak value becomes a constant of the declared
 * dtype (`declared` non-NULL), else i32/f32, made where the output is
 * lowered.  NULL on error. */
TVal *sema_output_value(Sema *s, TVal *t, const DType *declared);
/* The node of kernel input number `index`. */
TypedNode *sema_input_node(Sema *s, int index, DType t, const Shape *sh);

#endif
