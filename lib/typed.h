/* typed.h — the checked program: what sema (sema.c, sema_expr.c) hands to
 * lowering (lower.c).
 *
 * Every rule of language.md has been checked, fns are inlined, names are
 * resolved and weak literals have their dtype.  Per kernel: its inputs,
 * size variables (with their -D values), the names assigned (which name
 * the IR values), its outputs, and the typed nodes of every expression.
 * Nodes form a DAG (a name used twice is one node); they live in the
 * compilation's arena.
 *
 * Dtypes are .te dtypes: a node of dtype f16/bf16 other than an input or
 * a cast is computed in f32 (doc/language.md §8.4); lower.c inserts that and
 * every other conversion and broadcast.  Shapes are symbolic: a size
 * variable bound by -D is still a variable (Dim.var indexes
 * TypedKernel.sizevars); lowering substitutes the values into the finished
 * kernel.
 *
 * Nodes are listed in TypedKernel.nodes in the order lowering must build
 * them (the order sema checked them in), so that the IR comes out the same
 * on every run.  A constant with order -1 is not in that list: it is built
 * where it is used (a weak literal operand of a binary operator or where(),
 * or the value of an output that is a literal). */
#ifndef TECC_TYPED_H
#define TECC_TYPED_H

#include "fold.h"
#include "ir.h"

typedef enum TypedOp {
  TN_INPUT,  /* input: the kernel input it reads */
  TN_CONST,  /* value; shape: rank 0, or the shape a constant spreads to */
  TN_CAST,   /* args[0] converted to dtype (a .te cast; may be 16-bit) */
  TN_UNARY,  /* uop on args[0] taken as arg_dtype */
  TN_BINARY, /* bop on args[0..1] taken as arg_dtype, broadcast to shape */
  TN_SELECT, /* args[0] (bool) ? args[1] : args[2], broadcast to shape */
  TN_REDUCE, /* rop over `axes` of args[0] taken as arg_dtype; keepdims.
                axes == 0: args[0] has rank 0 (var of it still computes) */
  TN_SIZE,   /* i64, rank 0: the run-time value of size variable `input`
                (an index into TypedKernel.sizevars) */
  TN_INDEX,  /* i64: the position along the axis in `axes` (one bit); the
                shape is literal 1 on every other axis */
  TN_TAKE    /* args[0] (x) gathered along the axis in `axes` at args[1]
                (i32/i64, x's rank); dtype: x's.  A slice's or a concat's
                (step >= 1): args[1] is args[2] + step * position, args[2]
                an i64 scalar, and the index is in range wherever the
                value is used (no NaN outside) */
} TypedOp;

typedef struct TypedNode {
  TypedOp op;
  DType dtype;     /* the .te dtype of the result */
  DType arg_dtype; /* UNARY, BINARY, REDUCE: the dtype its operands are
                      converted to first (argmax/argmin of bool: i32) */
  Shape shape;
  struct TypedNode *args[3];
  int nargs;
  UnaryOp uop;     /* TN_UNARY */
  BinaryOp bop;    /* TN_BINARY */
  ReduceOp rop;    /* TN_REDUCE: never max/min of bool (any/all instead) */
  int clamp_bound; /* TN_BINARY maximum/minimum made by clamp(): see
                      Value.clamp_bound */
  uint32_t axes;   /* TN_REDUCE: bit i set when axis i is reduced;
                      TN_INDEX: the bit of its axis */
  int input;       /* TN_INPUT: its index in TypedKernel.inputs; TN_SIZE:
                      the size variable's */
  int64_t step;    /* TN_TAKE of a slice or a concat: its step, else 0 */
  Scalar value;    /* TN_CONST, in the dtype it is computed in (f32 for
                      16-bit floats, already rounded to them) */
  int order;       /* its index in TypedKernel.nodes, or -1 (see above) */
  SrcRange loc;    /* the .te expression (code inlined from a fn: the
                      outermost call) */
  int loc_of_last_output; /* a literal output's constant made when sema had
                             no expression at hand: it is located where
                             the last output value lowered is */
} TypedNode;

typedef struct TypedInput {
  const char *name;
  DType dtype;
  Shape shape;
  SrcRange loc;
  TypedNode *node; /* its TN_INPUT */
} TypedInput;

typedef struct TypedSizeVar {
  const char *name; /* a derived size's: its .te text (`D // 2`) */
  int bound;     /* given by -D name=value */
  int64_t value;
  const SizeExpr *def; /* a derived size (a slice's, a concat's, an
                                 output type's): its canonical form over
                                 the other variables; NULL for an input's */
} TypedSizeVar;

/* A name assigned in the kernel and the node it names, in program order:
 * the IR value of the node takes the first name given to it. */
typedef struct TypedBinding {
  const char *name;
  TypedNode *node;
} TypedBinding;

typedef struct TypedOutput {
  const char *name;
  DType dtype;      /* as declared (or the value's) */
  Shape shape;      /* as declared (or the value's); equal to the value's
                       shape up to literal-1 axes */
  TypedNode *value; /* its dtype may differ from the output's: lowering
                       converts for the store */
} TypedOutput;

/* A gradient kernel (language.md §13): the kernel it differentiates and
 * with respect to which of that kernel's inputs.  Its TypedKernel has the
 * signature (the inputs, cotangents last, and the gradients as outputs,
 * with no value); grad.c builds its IR from the lowered forward's. */
typedef struct TypedGrad {
  int of;    /* the kernel differentiated: its index in TypedProgram.kernels */
  int *wrt;  /* the inputs differentiated, by index: in the order the
                statement names them, or every float input in order */
  int nwrt;
} TypedGrad;

typedef struct TypedKernel {
  const char *name;
  SrcRange loc;
  const char *te_signature; /* "kernel ln(x: bf16[N, D]) -> (y: ...)" */
  TypedInput *inputs;
  int ninputs;
  TypedSizeVar *sizevars; /* every size variable, in order of appearance */
  int nsizevars;
  TypedBinding *bindings;
  int nbindings;
  TypedOutput *outputs;
  int noutputs;
  TypedNode **nodes; /* in the order lowering builds them */
  int nnodes;
  const TypedGrad *grad; /* a gradient kernel: no nodes, no bindings and
                            outputs without values */
  int imported;      /* defined in an imported file: lowered for grad to
                        read, not compiled */
} TypedKernel;

typedef struct TypedProgram {
  TypedKernel **kernels; /* in order: imported files' first, then the main
                            file's; a gradient's after what it differentiates */
  int nkernels;
} TypedProgram;

/* Its text, a line per node (TECC_DUMP=sema). */
const char *typed_dump(Arena *a, const TypedProgram *p);

#endif
