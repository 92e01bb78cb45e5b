/* ops.h — the one list of dtypes, builtins and IR operations.
 *
 * Each X-macro list is expanded where a table is needed (names, arity,
 * C spelling, properties), so adding an op is one line here plus its
 * semantics in the interpreter and the emitter. */
#ifndef TECC_OPS_H
#define TECC_OPS_H

/* DTYPE(enum, te name, C type in generated code, bytes) */
#define TECC_DTYPES(X)                 \
  X(BOOL, "bool", "uint8_t", 1)        \
  X(I32, "i32", "int32_t", 4)          \
  X(I64, "i64", "int64_t", 8)          \
  X(F16, "f16", "tecc_f16", 2)         \
  X(BF16, "bf16", "tecc_bf16", 2)      \
  X(F32, "f32", "float", 4)            \
  X(F64, "f64", "double", 8)

typedef enum DType {
#define X(e, name, ctype, size) DT_##e,
  TECC_DTYPES(X)
#undef X
  DT_COUNT
} DType;

/* Elementwise unary builtins: UNARY(enum, name, kind)
 * kind: F = float math (ints compute in f32/f64), K = keeps integer dtypes,
 *       P = predicate (gives bool), R = rounding (identity on integers) */
#define TECC_UNARY_BUILTINS(X) \
  X(ABS, "abs", K)             \
  X(EXP, "exp", F)             \
  X(EXP2, "exp2", F)           \
  X(EXPM1, "expm1", F)         \
  X(LOG, "log", F)             \
  X(LOG2, "log2", F)           \
  X(LOG10, "log10", F)         \
  X(LOG1P, "log1p", F)         \
  X(SQRT, "sqrt", F)           \
  X(RSQRT, "rsqrt", F)         \
  X(SIN, "sin", F)             \
  X(COS, "cos", F)             \
  X(TAN, "tan", F)             \
  X(ASIN, "asin", F)           \
  X(ACOS, "acos", F)           \
  X(ATAN, "atan", F)           \
  X(SINH, "sinh", F)           \
  X(COSH, "cosh", F)           \
  X(TANH, "tanh", F)           \
  X(ERF, "erf", F)             \
  X(SIGMOID, "sigmoid", F)     \
  X(RELU, "relu", K)           \
  X(GELU, "gelu", F)           \
  X(GELU_TANH, "gelu_tanh", F) \
  X(SILU, "silu", F)           \
  X(SOFTPLUS, "softplus", F)   \
  X(FLOOR, "floor", R)         \
  X(CEIL, "ceil", R)           \
  X(ROUND, "round", R)         \
  X(TRUNC, "trunc", R)         \
  X(SIGN, "sign", K)           \
  X(ISNAN, "isnan", P)         \
  X(ISINF, "isinf", P)         \
  X(ISFINITE, "isfinite", P)

/* Binary operators and builtins: BINARY(enum, spelling, kind)
 * kind: A = arithmetic, C = comparison (gives bool), L = logical (bool) */
#define TECC_BINARY_OPS(X)      \
  X(ADD, "+", A)                \
  X(SUB, "-", A)                \
  X(MUL, "*", A)                \
  X(DIV, "/", A)                \
  X(FLOORDIV, "//", A)          \
  X(MOD, "%", A)                \
  X(POW, "**", A)               \
  X(MAXIMUM, "maximum", A)      \
  X(MINIMUM, "minimum", A)      \
  X(ATAN2, "atan2", A)          \
  X(EQ, "==", C)                \
  X(NE, "!=", C)                \
  X(LT, "<", C)                 \
  X(LE, "<=", C)                \
  X(GT, ">", C)                 \
  X(GE, ">=", C)                \
  X(AND, "and", L)              \
  X(OR, "or", L)

/* Reductions: REDUCE(enum, name) */
#define TECC_REDUCTIONS(X) \
  X(SUM, "sum")            \
  X(PROD, "prod")          \
  X(MAX, "max")            \
  X(MIN, "min")            \
  X(MEAN, "mean")          \
  X(VAR, "var")            \
  X(ANY, "any")            \
  X(ALL, "all")            \
  X(ARGMAX, "argmax")      \
  X(ARGMIN, "argmin")

typedef enum UnaryOp {
#define X(e, name, kind) UN_##e,
  TECC_UNARY_BUILTINS(X)
#undef X
  UN_NEG,    /* unary - */
  UN_NOT,    /* not */
  UN_DETACH, /* detach(x): x, through which no gradient flows; only in the
                IR between lowering and the grad pass, which removes it */
  UN_COUNT
} UnaryOp;

typedef enum BinaryOp {
#define X(e, name, kind) BIN_##e,
  TECC_BINARY_OPS(X)
#undef X
  BIN_COUNT
} BinaryOp;

typedef enum ReduceOp {
#define X(e, name) RED_##e,
  TECC_REDUCTIONS(X)
#undef X
  RED_COUNT
} ReduceOp;

/* Tables (ops.c). */
const char *dtype_name(DType t);  /* "f32" */
const char *dtype_ctype(DType t); /* "float" */
int dtype_size(DType t);
int dtype_is_float(DType t);
int dtype_is_int(DType t); /* i32, i64 (not bool) */
int dtype_is_16bit(DType t);
int dtype_from_name(const char *name, DType *out); /* 1 when found */
const char *unary_name(UnaryOp op);
const char *binary_name(BinaryOp op);
const char *reduce_name(ReduceOp op);

#endif
