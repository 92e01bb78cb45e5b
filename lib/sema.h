/* sema.h — internals shared by sema.c (program structure: imports, names,
 * kernels, fns) and lower.c (typing each expression and building its IR).
 *
 * Sema and lowering are one walk: every expression is type-checked and
 * lowered at once, after fn arguments are substituted (fns are inlined at
 * each call).  Shapes are symbolic while checking (a size variable bound by
 * -D stays a variable, so it never stretches); sema.c substitutes -D values
 * into the finished kernel.
 *
 * Weak literals (language.md §5) are compile-time constants: an expression
 * made only of literals and pi/inf/nan is folded in i64/f64 (fold.c) and
 * stays weak until it meets a typed operand, which gives it its dtype.  A
 * weak value that reaches an output, a reduction or where() with only weak
 * branches becomes i32 (integer) or f32 (float).  A weak float meeting a
 * 16-bit operand stays an f32 constant (it is computed in f32 anyway).
 * An integer literal next to bool gives i32 (m == 1 compares in i32).  A
 * weak value assigned to a declared output takes the declared dtype.
 *
 * Choices where language.md is silent (also in doc/language.md):
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

/* A string-keyed hash table (open addressing) in the arena. */
typedef struct StrMap {
  const char **keys;
  void **vals;
  int cap, len;
} StrMap;

void *strmap_get(const StrMap *m, const char *key);
void strmap_put(Arena *a, StrMap *m, const char *key, void *val);

typedef enum TKind {
  TV_TENSOR,     /* dtype, v */
  TV_WEAK_INT,   /* k.i */
  TV_WEAK_FLOAT, /* k.f */
  TV_AXES        /* the variadic `axes` parameter of a prelude fn: axes[] */
} TKind;

/* A typed value during checking. */
typedef struct TVal {
  TKind kind;
  DType dtype; /* TV_TENSOR: the .te dtype (16-bit kept as such) */
  Value *v;    /* TV_TENSOR: its IR; dtype f32 when computing on 16-bit,
                  or the 16-bit dtype itself for inputs and casts */
  Scalar k;    /* weak constants */
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
  int order;     /* running definition order */
  int import_failed; /* an import was missing or had syntax errors */
  /* the kernel being checked */
  Kernel *k;
  struct KernelBuild *kb;
  StrMap sizevars; /* name -> (void *)(index + 1) */
  PtrVec sizevar_names;
  StrMap *scope;   /* kernel names -> Binding* */
  /* inside an inlined fn */
  const FnDef *fn;
  TVal **params;
  Frame frames[SEMA_MAX_DEPTH];
  int depth;
  int expansion_failed; /* an error was reported in this expansion */
  SrcRange cur_loc; /* loc given to new IR values */
} Sema;

/* Errors: inside an expansion, reported at the outermost call with notes
 * `in expansion of 'f'` pointing into each function. */
Diag *sema_error(Sema *s, SrcRange r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *type_str(Sema *s, DType t, const Shape *sh); /* "f32[N, D]" */
const char *tval_type_str(Sema *s, const TVal *t);

/* lower.c: typing and IR for each kind of expression.  NULL after an error
 * (already reported). */
TVal *lower_name_binding(Sema *s, TVal *t); /* marks use; identity */
TVal *lower_weak_int(Sema *s, int64_t v, SrcRange loc, int literal);
TVal *lower_weak_float(Sema *s, double v, SrcRange loc);
TVal *lower_bool(Sema *s, int v, SrcRange loc);
TVal *lower_unary(Sema *s, UnaryOp op, TVal *a, SrcRange op_loc, SrcRange loc);
TVal *lower_binary(Sema *s, BinaryOp op, TVal *a, TVal *b, SrcRange op_loc,
                   SrcRange loc);
TVal *lower_call(Sema *s, const Expr *call, TVal **args, int nargs);
int lower_is_builtin_call(const char *name, int *min_args, int *max_args);
int is_builtin_name(const char *name);

/* Makes a value concrete: weak -> i32/f32 constant, rank 0.  NULL on error. */
TVal *lower_strong(Sema *s, TVal *t);
/* A weak value as a constant of dtype `to` (a declared output type). */
TVal *lower_weak_as(Sema *s, TVal *t, DType to);
/* The IR of a strong value converted to .te dtype `to` (16-bit: the value
 * rounded to it, for output stores). */
Value *lower_to_storage(Sema *s, TVal *t, DType to);
Value *lower_input(Sema *s, int index, DType t, const Shape *sh);

#endif
