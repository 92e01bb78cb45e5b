/* ops.c — name/property tables generated from the X-macro lists of ops.h. */
#include "ops.h"

#include <string.h>

typedef struct DTypeInfo {
  const char *name, *ctype;
  int size;
  DType compute;
} DTypeInfo;

static const DTypeInfo dtype_table[DT_COUNT] = {
#define X(e, name, ctype, size, comp) [DT_##e] = {name, ctype, size, DT_##comp},
    TECC_DTYPES(X)
#undef X
};

static const char *const unary_names[UN_COUNT] = {
#define X(e, name, kind, d) [UN_##e] = name,
    TECC_UNARY_BUILTINS(X)
#undef X
    [UN_NEG] = "-",
    [UN_NOT] = "not",
    [UN_DETACH] = "detach",
    [UN_NORMCDF] = "normcdf",
};

static const char *const binary_names[BIN_COUNT] = {
#define X(e, name, kind, d) [BIN_##e] = name,
    TECC_BINARY_OPS(X)
#undef X
};

static const char *const reduce_names[RED_COUNT] = {
#define X(e, name, d) [RED_##e] = name,
    TECC_REDUCTIONS(X)
#undef X
};

static int valid_dtype(DType t) { return (unsigned)t < DT_COUNT; }

const char *dtype_name(DType t) { return valid_dtype(t) ? dtype_table[t].name : "?"; }
const char *dtype_ctype(DType t) { return valid_dtype(t) ? dtype_table[t].ctype : "?"; }
int dtype_size(DType t) { return valid_dtype(t) ? dtype_table[t].size : 0; }

int dtype_is_float(DType t) {
  return dtype_is_f8(t) || t == DT_F16 || t == DT_BF16 || t == DT_F32 || t == DT_F64;
}

int dtype_is_int(DType t) { return t == DT_I8 || t == DT_U8 || t == DT_I32 || t == DT_I64; }
int dtype_is_16bit(DType t) { return t == DT_F16 || t == DT_BF16; }
int dtype_is_f8(DType t) { return t == DT_F8E4M3 || t == DT_F8E5M2; }
DType dtype_compute(DType t) { return valid_dtype(t) ? dtype_table[t].compute : t; }
int dtype_is_storage(DType t) { return dtype_compute(t) != t; }

int dtype_from_name(const char *name, DType *out) {
  for (int i = 0; i < DT_COUNT; i++)
    if (strcmp(dtype_table[i].name, name) == 0) {
      *out = (DType)i;
      return 1;
    }
  return 0;
}

const char *unary_name(UnaryOp op) {
  return (unsigned)op < UN_COUNT ? unary_names[op] : "?";
}

const char *binary_name(BinaryOp op) {
  return (unsigned)op < BIN_COUNT ? binary_names[op] : "?";
}

const char *reduce_name(ReduceOp op) {
  return (unsigned)op < RED_COUNT ? reduce_names[op] : "?";
}
