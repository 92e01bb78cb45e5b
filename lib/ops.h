/* ops.h — the one list of dtypes, builtins and IR operations.
 *
 * Each X-macro list is expanded where a table is needed (names, arity,
 * C spelling, properties, derivative), so adding an op is one line here
 * plus its semantics in the interpreter and the emitter and its
 * derivative in grad_rules.c. */
#ifndef TECC_OPS_H
#define TECC_OPS_H

/* DTYPE(enum, te name, C type in generated code, bytes, computed in)
 * A storage type (8- and 16-bit floats, 8-bit integers) is computed in a
 * wider one (language.md section 5): its values are converted when loaded
 * and rounded or wrapped when stored. */
#define TECC_DTYPES(X)                          \
  X(BOOL, "bool", "uint8_t", 1, BOOL)           \
  X(I8, "i8", "int8_t", 1, I32)                 \
  X(U8, "u8", "uint8_t", 1, I32)                \
  X(I32, "i32", "int32_t", 4, I32)              \
  X(I64, "i64", "int64_t", 8, I64)              \
  X(F8E4M3, "f8e4m3", "tecc_f8e4m3", 1, F32)    \
  X(F8E5M2, "f8e5m2", "tecc_f8e5m2", 1, F32)    \
  X(F16, "f16", "tecc_f16", 2, F32)             \
  X(BF16, "bf16", "tecc_bf16", 2, F32)          \
  X(F32, "f32", "float", 4, F32)                \
  X(F64, "f64", "double", 8, F64)

typedef enum DType {
#define X(e, name, ctype, size, comp) DT_##e,
  TECC_DTYPES(X)
#undef X
  DT_COUNT
} DType;

/* Elementwise unary builtins: UNARY(enum, name, kind, derivative)
 * kind: F = float math (ints compute in f32/f64), K = keeps integer dtypes,
 *       P = predicate (gives bool), R = rounding (identity on integers)
 * derivative: its rule in grad_rules.c (d_none: no gradient,
 * language.md §13.3) */
#define TECC_UNARY_BUILTINS(X)              \
  X(ABS, "abs", K, d_abs)                   \
  X(EXP, "exp", F, d_exp)                   \
  X(EXP2, "exp2", F, d_exp2)                \
  X(EXPM1, "expm1", F, d_expm1)             \
  X(LOG, "log", F, d_log)                   \
  X(LOG2, "log2", F, d_log2)                \
  X(LOG10, "log10", F, d_log10)             \
  X(LOG1P, "log1p", F, d_log1p)             \
  X(SQRT, "sqrt", F, d_sqrt)                \
  X(RSQRT, "rsqrt", F, d_rsqrt)             \
  X(SIN, "sin", F, d_sin)                   \
  X(COS, "cos", F, d_cos)                   \
  X(TAN, "tan", F, d_tan)                   \
  X(ASIN, "asin", F, d_asin)                \
  X(ACOS, "acos", F, d_acos)                \
  X(ATAN, "atan", F, d_atan)                \
  X(SINH, "sinh", F, d_sinh)                \
  X(COSH, "cosh", F, d_cosh)                \
  X(TANH, "tanh", F, d_tanh)                \
  X(ERF, "erf", F, d_erf)                   \
  X(SIGMOID, "sigmoid", F, d_sigmoid)       \
  X(RELU, "relu", K, d_relu)                \
  X(GELU, "gelu", F, d_gelu)                \
  X(GELU_TANH, "gelu_tanh", F, d_gelu_tanh) \
  X(SILU, "silu", F, d_silu)                \
  X(SOFTPLUS, "softplus", F, d_softplus)    \
  X(FLOOR, "floor", R, d_none)              \
  X(CEIL, "ceil", R, d_none)                \
  X(ROUND, "round", R, d_none)              \
  X(TRUNC, "trunc", R, d_none)              \
  X(SIGN, "sign", K, d_none)                \
  X(ISNAN, "isnan", P, d_none)              \
  X(ISINF, "isinf", P, d_none)              \
  X(ISFINITE, "isfinite", P, d_none)

/* Binary operators and builtins: BINARY(enum, spelling, kind, derivative)
 * kind: A = arithmetic, C = comparison (gives bool), L = logical (bool)
 * derivative: as for the unary builtins */
#define TECC_BINARY_OPS(X)            \
  X(ADD, "+", A, d_add)               \
  X(SUB, "-", A, d_sub)               \
  X(MUL, "*", A, d_mul)               \
  X(DIV, "/", A, d_div)               \
  X(FLOORDIV, "//", A, d_none)        \
  X(MOD, "%", A, d_mod)               \
  X(POW, "**", A, d_pow)              \
  X(MAXIMUM, "maximum", A, d_maximum) \
  X(MINIMUM, "minimum", A, d_minimum) \
  X(ATAN2, "atan2", A, d_atan2)       \
  X(EQ, "==", C, d_none)              \
  X(NE, "!=", C, d_none)              \
  X(LT, "<", C, d_none)               \
  X(LE, "<=", C, d_none)              \
  X(GT, ">", C, d_none)               \
  X(GE, ">=", C, d_none)              \
  X(AND, "and", L, d_none)            \
  X(OR, "or", L, d_none)

/* Reductions: REDUCE(enum, name, derivative), the derivative as for the
 * unary builtins (var never reaches the IR: lowering spells it with mean) */
#define TECC_REDUCTIONS(X)    \
  X(SUM, "sum", d_sum)        \
  X(PROD, "prod", d_prod)     \
  X(MAX, "max", d_max)        \
  X(MIN, "min", d_min)        \
  X(MEAN, "mean", d_mean)     \
  X(VAR, "var", d_none)       \
  X(ANY, "any", d_none)       \
  X(ALL, "all", d_none)       \
  X(ARGMAX, "argmax", d_none) \
  X(ARGMIN, "argmin", d_none)

typedef enum UnaryOp {
#define X(e, name, kind, d) UN_##e,
  TECC_UNARY_BUILTINS(X)
#undef X
  UN_NEG,    /* unary - */
  UN_NOT,    /* not */
  UN_DETACH, /* detach(x): x, through which no gradient flows; only in the
                IR between lowering and the grad pass, which removes it */
  UN_NORMCDF, /* (1 + erf(x / sqrt(2))) / 2: gelu's cdf, which only the grad
                 pass writes (gelu's gradient and a recomputed gelu) */
  UN_COUNT
} UnaryOp;

typedef enum BinaryOp {
#define X(e, name, kind, d) BIN_##e,
  TECC_BINARY_OPS(X)
#undef X
  BIN_COUNT
} BinaryOp;

typedef enum ReduceOp {
#define X(e, name, d) RED_##e,
  TECC_REDUCTIONS(X)
#undef X
  RED_COUNT
} ReduceOp;

/* Tables (ops.c). */
const char *dtype_name(DType t);  /* "f32" */
const char *dtype_ctype(DType t); /* "float" */
int dtype_size(DType t);
int dtype_is_float(DType t);
int dtype_is_int(DType t); /* i8, u8, i32, i64 (not bool) */
int dtype_is_16bit(DType t); /* f16, bf16 */
int dtype_is_f8(DType t);    /* f8e4m3, f8e5m2 */
/* A storage type is computed in dtype_compute(t) (f8/f16/bf16 in f32, i8
 * and u8 in i32); every other dtype in itself. */
DType dtype_compute(DType t);
int dtype_is_storage(DType t); /* dtype_compute(t) != t */
int dtype_from_name(const char *name, DType *out); /* 1 when found */
const char *unary_name(UnaryOp op);
const char *binary_name(BinaryOp op);
const char *reduce_name(ReduceOp op);

#endif
