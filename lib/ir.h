/* ir.h — the tensor IR (doc/design.md, pipeline step 3).
 *
 * Per kernel, a DAG of SSA values in topological order.  Every value has a
 * dtype and a shape; shapes of elementwise operands are equal (lowering
 * inserts explicit IR_BROADCAST).  16-bit floats appear only as inputs,
 * as the result of an explicit cast, and at output stores: everything on
 * them is computed in f32 (doc/language.md §8.4), so lowering casts them to f32
 * first.  All values live in the compilation's arena.
 *
 * Operand and result dtypes (lower.c guarantees them; H2):
 * - IR_CONST: rank 0 (BROADCAST gives it a shape).  Never 16-bit: a literal
 *   meeting f16/bf16 is an f32 constant (16-bit is computed in f32).
 * - IR_CAST: any dtype to any dtype.  Float to integer truncates toward
 *   zero and saturates (NaN gives 0); to bool is x != 0; to f32/f16/bf16
 *   rounds to nearest even.  CAST to f16/bf16 is an explicit rounding
 *   (a .te cast or an output store); CAST from them widens to f32.
 * - IR_UNARY: the argument has the result's dtype, except isnan, isinf,
 *   isfinite (float argument, bool result).  Math functions (kind F in
 *   ops.h) and rounding ones (kind R) only on f32/f64; abs, sign, relu and
 *   neg also on i32/i64; not only on bool.
 * - IR_BINARY: both arguments have one dtype (never bool for arithmetic,
 *   never 16-bit); the result has it too, except comparisons (bool) and
 *   and/or (bool operands and result).  div and atan2 only on floats (sema
 *   converts integers first).  On integers: add/sub/mul wrap, floordiv and
 *   mod follow Python (divisor 0 gives 0), pow is exact (negative exponent:
 *   0 unless the base is 1 or -1).  maximum/minimum propagate NaN.
 * - IR_SELECT: args[0] is bool; args[1], args[2] and the result share a
 *   dtype.  All three have the result's shape.
 * - IR_REDUCE: keepdims (reduced axes become literal 1); axes != 0.
 *   sum/prod/max/min: argument dtype == result dtype (i32, i64, f32, f64;
 *   16-bit inputs are cast to f32 first, bool sums are cast to i64, max/min
 *   of bool become any/all).  mean: f32 or f64.  any/all: bool.
 *   argmax/argmin: result i64; argument i32/i64/f32/f64 (bool cast to i32);
 *   `axes` is one axis, or every axis of a rank >= 2 argument, meaning the
 *   flat row-major index over the whole tensor.
 * - IR_SIZE: rank 0, i64, the run-time value of size variable `index`
 *   (a variable bound by -D is a constant instead).
 * - IR_INDEX: i64; `axes` has one bit, the axis whose position each
 *   element is; the shape is literal 1 on every other axis.  It reads no
 *   memory (language.md §9.6).
 * - IR_TAKE: a gathered load of kernel input `index` (numpy's
 *   take_along_axis, on k >= 1 axes at once): the element at the result's
 *   position, except along each axis in `axes`, where it is that axis's
 *   index (i64, the result's shape).  Axis j (ascending order) reads its
 *   index in args[j]; an affine axis (a slice's, a concat's part:
 *   steps[j] >= 1) has index start + steps[j] * position, its start an
 *   i64 scalar in args[k + the number of affine axes before it].  One
 *   axis: args[0] the index, args[1] the start.  Read them through
 *   ir_take_*() below.
 *   The input's shape, right-aligned, is the result's or 1 on each other
 *   axis; along each of the axes it is not literal 1.  An index outside
 *   [0, size) on any of the axes gives NaN (floats), 0 (integers) or
 *   false, reading nothing.
 *   Its dtype is the input's compute dtype (f32 for 16-bit inputs).
 *   Lowering makes take() of an expression an expression of takes of
 *   inputs (language.md §9.7); a take or slice of a take along another
 *   axis is one take on both.
 * - Outputs: KernelOutput.value has the output's dtype; its shape equals
 *   KernelOutput.shape up to literal-1 axes (same element order).
 * - Inputs: IR_INPUT has its KernelInput's dtype and, up to literal-1 axes,
 *   its shape (a gradient's cotangent takes the shape of the value its
 *   forward output stores); rank 0 exactly when the input's is.
 * - Value.name: the first .te name the value was assigned to; Value.loc:
 *   the .te expression (for code inlined from a fn: the call site). */
#ifndef TECC_IR_H
#define TECC_IR_H

#include <stdint.h>
#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "ops.h"
#include "sizeexpr.h"

/* A dimension: a literal size (var < 0) or the kernel's size variable
 * number `var` (an index into Kernel.sizevars). */
typedef struct Dim {
  int var;
  int64_t size;
} Dim;

/* Operands of a value: an IR_TAKE has an index per axis and a start per
 * affine axis. */
enum { TECC_IR_MAX_ARGS = 2 * TECC_MAX_RANK };

typedef struct Shape {
  int rank;
  Dim d[TECC_MAX_RANK];
} Shape;

#define TECC_IR_OPS(X)                                                      \
  X(INPUT, "input")         /* index: the kernel input it reads */          \
  X(CONST, "const")         /* rank 0; ival (bool/ints) or fval (floats) */ \
  X(CAST, "cast")           /* args[0] converted to dtype (language casts) */ \
  X(UNARY, "unary")         /* uop, args[0] */                              \
  X(BINARY, "binary")       /* bop, args[0..1], equal shapes */             \
  X(SELECT, "select")       /* args[0] (bool) ? args[1] : args[2] */        \
  X(BROADCAST, "broadcast") /* args[0] (rank <= shape.rank, right-aligned, \
                               each dim equal or literal 1) to shape */     \
  X(REDUCE, "reduce")       /* rop over `axes` of args[0], keepdims; never \
                               RED_VAR (lowered to two passes of mean) */ \
  X(SIZE, "size")           /* index: the size variable whose run-time     \
                               value it is; rank 0, i64 */                  \
  X(INDEX, "index")         /* the position along the one axis in `axes`:  \
                               i64, literal 1 on every other axis */        \
  X(TAKE, "take")           /* input `index` read where each axis in      \
                               `axes` is its index (i64, this shape);     \
                               an affine one (a slice, a concat's part)   \
                               is start + step * position (above) */

typedef enum IrOp {
#define X(e, name) IR_##e,
  TECC_IR_OPS(X)
#undef X
  IR_COUNT
} IrOp;

typedef struct Value {
  int id;          /* dense, topological: args have smaller ids */
  IrOp op;
  DType dtype;
  Shape shape;
  struct Value *args[TECC_IR_MAX_ARGS]; /* 3, or an IR_TAKE's (above) */
  int nargs;
  UnaryOp uop;     /* IR_UNARY */
  BinaryOp bop;    /* IR_BINARY */
  ReduceOp rop;    /* IR_REDUCE */
  int clamp_bound; /* IR_BINARY maximum (minimum) that clamp(x, lo, hi) is
                      made of: at a tie the gradient goes to args[0], the
                      value clamped, not half to each (grad.c; opt.c's CSE
                      ignores it, it runs after grad) */
  uint32_t axes;   /* IR_REDUCE: bit i set when axis i is reduced;
                      IR_INDEX: the one bit of its axis; IR_TAKE: its
                      axes */
  int index;       /* IR_INPUT, IR_TAKE: the input's position; IR_SIZE:
                      the size variable's number */
  int64_t ival;    /* IR_CONST of bool/i32/i64 */
  int64_t steps[TECC_MAX_RANK]; /* IR_TAKE: by axis j (ascending), its
                      step when affine, else 0 (above) */
  double fval;     /* IR_CONST of floats */
  const char *name; /* the .te name it was assigned to, or NULL */
  SrcRange loc;    /* the .te expression it came from */
  int nuses;       /* set by ir_count_uses() */
  void *aux;       /* scratch for the pass running now */
} Value;

typedef struct SizeVar {
  const char *name; /* a derived size's: its .te text (`D // 2`) */
  const SizeExpr *def; /* a derived size: its canonical form over the
                          parameters (the host computes it, language.md
                          §9.8); NULL for a parameter */
} SizeVar;

typedef struct KernelInput {
  const char *name;
  DType dtype;
  Shape shape;
  Value *value; /* its IR_INPUT */
} KernelInput;

typedef struct KernelOutput {
  const char *name;
  DType dtype;
  Shape shape;  /* as declared (or the value's, when undeclared); the value's
                   shape equals it up to literal-1 axes (same layout) */
  Value *value; /* dtype == the output's dtype */
} KernelOutput;

/* What a gradient kernel differentiates (language.md §13): lowering
 * records it and grad.c builds the kernel from it. */
typedef struct GradRequest {
  const struct Kernel *of; /* the kernel differentiated, lowered */
  const int *wrt;          /* its inputs differentiated, by index */
  int nwrt;
} GradRequest;

/* An argmax or argmin as the program wrote it: its operand's shape and
 * the axes it reduces.  An empty one is TECC_ERROR_EMPTY_REDUCTION even
 * where the optimizer drops it (an argmax whose only use is `** 0`). */
typedef struct ArgReduction {
  Shape shape;
  uint32_t axes;
} ArgReduction;

typedef struct Kernel {
  const char *name;
  SrcRange loc;
  KernelInput *inputs;
  int ninputs;
  KernelOutput *outputs;
  int noutputs;
  SizeVar *sizevars; /* the run-time size parameters, in signature order,
                        then the derived sizes (def != NULL); variables
                        bound by -D are already literals */
  int nsizevars;
  PtrVec values;     /* Value*, topological; values.items[i]->id == i */
  const char *te_signature; /* e.g. "kernel ln(x: bf16[N, D]) -> (y: bf16[N, D])" */
  const char *grad_of; /* a gradient kernel: the kernel it is the gradient of */
  const GradRequest *grad; /* from lowering to the grad pass, which builds
                              the kernel: no values, inputs or outputs yet */
  int imported;        /* from an imported file: lowered for grad only,
                          and gone after the grad pass */
  PtrVec arg_reductions; /* ArgReduction*: every argmax and argmin an output
                            reads, recorded by the optimizer before it
                            rewrites the values */
  struct Kernel *unsplit; /* split.c: a copy of the kernel before its
                            reductions were split, which fusion may plan
                            for the rows that fit on chip (fuse.c,
                            plan_unsplit()); NULL where nothing was split */
} Kernel;

typedef struct Module {
  Kernel **kernels;
  int nkernels;
} Module;

/* ir.c: builders keep ids dense and topological. */
Value *ir_new_value(Arena *a, Kernel *k, IrOp op, DType t, const Shape *s);
/* v broadcast to sh (v itself when it has that shape), located at loc. */
Value *ir_broadcast(Arena *a, Kernel *k, Value *v, const Shape *sh, SrcRange loc);
int dim_equal(Dim a, Dim b); /* the same literal or the same variable */
int dim_literal_one(Dim d);   /* the literal 1 */
int shape_equal(const Shape *a, const Shape *b);
int64_t shape_literal_numel(const Shape *s); /* -1 if any dim is symbolic */
/* The rank-0 constant v is, through broadcasts, else NULL; and whether
 * it is the number x (a float: with x's sign, so -0 is not 0). */
Value *ir_const_of(Value *v);
int ir_is_const(const Value *v, double x);
/* What an output v is stored from: a rounding cast of an f32 value to a
 * storage float (f16, bf16, f8) stores the f32 value, since the emitters'
 * store conversion rounds the same way once. */
Value *ir_stored_value(Value *v);
/* Does no use of v show a NaN's sign (v is no output, and every use is
 * arithmetic whose NaN result's sign IEEE 754 leaves open: + - * /, sum,
 * mean, prod; a comparison or class test; or a broadcast or widening to
 * f32 or f64 of v whose uses are so)?  Then an 8-bit float's decode may
 * leave a NaN's sign out (emit_expr.c, cu_load_conv_of). */
int ir_nan_sign_unseen(const Kernel *k, const Value *v);
const char *shape_str(Arena *a, const Kernel *k, const Shape *s); /* "[N, 4]" */
const char *ir_value_label(Arena *a, const Value *v); /* "%6 (s)", or "%6" without a name */
void ir_count_uses(Kernel *k);
/* The size parameters (the first of k->sizevars; the derived ones follow). */
int ir_nparams(const Kernel *k);
/* sizes[] of every size variable from the parameters' (the first
 * ir_nparams(k) entries): the derived sizes' values. */
void ir_derive_sizes(const Kernel *k, int64_t *sizes);
void ir_renumber(Kernel *k); /* after passes drop or reorder values */
/* v, or what replaces it: a pass rewriting the values points a replaced
 * one's aux at its replacement (opt.c, split.c); NULL aux: itself. */
Value *ir_forwarded(Value *v);
/* A copy of k whose values are copies of k's (the same ids, operands and
 * outputs among the copies): a pass may rewrite one and keep the other. */
Kernel *ir_clone_kernel(Arena *a, const Kernel *k);

/* Checks the invariants above (topological ids, operand dtypes and
 * shapes, keepdims, outputs); NULL when they hold, else what is wrong.
 * lower_program() and optimize_module() call it: a violation is a
 * compiler bug (internal_error). */
const char *ir_verify(Arena *a, const Kernel *k);
/* ir_verify() after `pass` made k: internal_error() naming the pass where
 * an invariant fails. */
void ir_verify_after(Arena *a, const Kernel *k, const char *pass);

/* An IR_TAKE's axes (ir.h, IR_TAKE), all read here. */
typedef struct TakeAxis {
  int axis;      /* in the result's axes */
  Value *index;  /* i64, the result's shape */
  Value *start;  /* an affine axis's (i64 scalar), else NULL */
  int64_t step;  /* >= 1 with start, else 0 */
} TakeAxis;

int ir_take_naxes(const Value *v);
int ir_take_axis(const Value *v, int j);      /* the j-th, ascending */
int ir_take_slot(const Value *v, int axis);   /* j of axis, or -1 */
Value *ir_take_index(const Value *v, int j);
Value *ir_take_start(const Value *v, int j);  /* NULL: not affine */
int64_t ir_take_step(const Value *v, int j);  /* 0: not affine */
TakeAxis ir_take_get(const Value *v, int j);
/* Sets v's axes, args, nargs and steps from n axes in any order (each
 * axis once). */
void ir_take_set(Value *v, const TakeAxis *ax, int n);

/* --emit=ir and golden tests. */
const char *ir_dump(Arena *a, const Module *m);

#endif
