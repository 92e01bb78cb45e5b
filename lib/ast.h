/* ast.h — the syntax tree the parser builds (grammar/parser.y).
 *
 * Every node lives in the compilation's arena.  Names are arena strings.
 * Each node records its source range for diagnostics. */
#ifndef TECC_AST_H
#define TECC_AST_H

#include <stdint.h>
#include "arena.h"
#include "diag.h"
#include "ops.h"

enum { TECC_MAX_RANK = 8, TECC_MAX_NAME = 255 };

struct Expr;

/* One dimension as written: a literal, a size variable or (output types
 * only, language.md §9.8) a size expression such as `D // 2`. */
typedef struct AstDim {
  const char *var; /* size variable name, or NULL for a literal */
  int64_t value;   /* the literal when var == NULL and expr == NULL */
  const struct Expr *expr; /* any other expression */
  SrcRange loc;
} AstDim;

/* DTYPE, DTYPE[] or DTYPE[d0, ...]. */
typedef struct AstType {
  DType dtype;
  int rank;
  AstDim dims[TECC_MAX_RANK];
  SrcRange loc;
  int bad; /* the parser reported an error in it (an unknown dtype, rank
              over 8): sema takes the tensor as already in error */
} AstType;

typedef enum ExprKind {
  EXPR_INT,    /* ival: an integer literal */
  EXPR_FLOAT,  /* fval: a float literal; text: its spelling */
  EXPR_BOOL,   /* ival: 0 or 1 (true/false) */
  EXPR_NAME,   /* name: a tensor, parameter, constant (pi inf nan) */
  EXPR_UNARY,  /* uop (UN_NEG, UN_NOT; unary + is dropped), args[0] */
  EXPR_BINARY, /* bop (an operator of TECC_BINARY_OPS), args[0..1] */
  EXPR_CALL,   /* name(args...): builtin, cast, or fn; name_loc: the name */
  EXPR_SLICE   /* args[0][slices...] (language.md §9.8) */
} ExprKind;

typedef enum SliceKind {
  SLICE_RANGE,    /* lo:hi or lo:hi:step, each part optional (NULL) */
  SLICE_ELLIPSIS, /* ... */
  SLICE_INDEX     /* a single expression in lo: refused by sema */
} SliceKind;

/* One entry between the brackets of x[...]. */
typedef struct AstSlice {
  SliceKind kind;
  struct Expr *lo, *hi, *step;
  SrcRange loc;
  int depth; /* of its deepest part (the parser's nesting limit) */
} AstSlice;

typedef struct Expr {
  ExprKind kind;
  SrcRange loc; /* the whole expression */
  int64_t ival;
  double fval;
  const char *text;
  const char *name;
  SrcRange name_loc;
  UnaryOp uop;
  BinaryOp bop;
  SrcRange op_loc; /* the operator token (unary, binary) */
  struct Expr **args;
  int nargs;
  AstSlice *slices; /* EXPR_SLICE */
  int nslices;
} Expr;

typedef struct Param {
  const char *name;
  SrcRange loc;
  AstType *type; /* NULL for fn parameters and untyped outputs */
} Param;

typedef enum StmtKind {
  STMT_IMPORT, /* path, path_loc, loc */
  STMT_FN,     /* name, params (types NULL), body */
  STMT_KERNEL, /* name, params (inputs), outs, body (STMT_ASSIGN list) */
  STMT_GRAD,   /* kernel NAME = grad(OF, WRT...): name, of, params (the
                  inputs named, types NULL; none: every float input) */
  STMT_DECL,   /* name, type: an implicit kernel's input */
  STMT_ASSIGN  /* name, value */
} StmtKind;

typedef struct Stmt {
  StmtKind kind;
  SrcRange loc;      /* the whole statement */
  const char *name;  /* fn, kernel, declared or assigned name */
  SrcRange name_loc;
  const char *of;    /* grad: the kernel differentiated */
  SrcRange of_loc;
  const char *path;  /* import */
  SrcRange path_loc; /* import: the quoted file name, quotes included */
  AstType *type;     /* decl */
  Expr *value;       /* assign, fn body */
  Param *params;     /* fn, kernel */
  int nparams;
  Param *outs;       /* kernel */
  int nouts;
  struct Stmt **body; /* kernel: its assignments */
  int nbody;
} Stmt;

/* The statements that did not parse are dropped; what they would have
 * defined is kept here, so that sema checks the rest of the file without
 * reporting their uses (language.md §11: recovery without cascades). */
typedef struct AstFile {
  const SourceFile *source;
  Stmt **stmts;
  int nstmts;
  const char **broken;  /* names defined by broken statements: tensors,
                           kernels, fns (any kernel's scope) */
  int nbroken;
  int broken_unnamed;   /* a broken statement whose name is unknown */
  int broken_import;    /* a broken import */
} AstFile;

/* An expression the parser replaced after an error in it (too deeply
 * nested): a name no program can spell, which sema takes as in error. */
#define AST_ERROR_NAME "<error>"

/* --emit=ast: a readable indented dump. */
const char *ast_dump(Arena *a, const AstFile *f);

#endif
