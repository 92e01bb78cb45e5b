/* emit_expr.c — the emitters' writer (Out: lines, blocks, indentation)
 * and CUDA spelling shared by emit_cu.c, emit_stitch.c and emit_header.c:
 * compute and storage C types, literals, conversions, loads and stores of
 * 16-bit storage types, the C expression of each elementwise operation,
 * and the identifiers generated code must not use as they are (emit.h). */
#include "emit.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the writer ------------------------------------------------------------- */

Out *new_out(Arena *a) {
  Out *o = ARENA_NEW(a, Out);
  o->b = ARENA_NEW(a, Buf);
  buf_init(o->b, a);
  return o;
}

static void put_indent(Out *o) {
  for (int i = 0; i < o->indent; i++)
    buf_puts(o->b, "  ");
}

static void put_line(Out *o, const char *fmt, va_list ap, const char *end) {
  put_indent(o);
  buf_vprintf(o->b, fmt, ap);
  buf_puts(o->b, end);
}

void emit(Out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_line(o, fmt, ap, "\n");
  va_end(ap);
}

void emit_blank(Out *o) {
  buf_puts(o->b, "\n");
}

void open_block(Out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_line(o, fmt, ap, " {\n");
  va_end(ap);
  o->indent++;
}

void open_scope(Out *o) {
  emit(o, "{");
  o->indent++;
}

void close_block(Out *o, const char *tail) {
  o->indent--;
  if (o->indent < 0)
    internal_error("emitter indentation below 0");
  emit(o, "}%s", tail);
}

void else_block(Out *o) {
  close_block(o, " else {");
  o->indent++;
}

void else_if_block(Out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *cond = arena_vprintf(o->b->arena, fmt, ap);
  va_end(ap);
  close_block(o, arena_printf(o->b->arena, " else if (%s) {", cond));
  o->indent++;
}

void emit_text(Out *o, const char *text) {
  while (*text) {
    size_t len = strcspn(text, "\n");
    if (len)
      put_indent(o);
    buf_putn(o->b, text, len + (text[len] == '\n'));
    text += len + (text[len] == '\n');
  }
}

void emit_fragment(Out *o, const Out *frag) {
  if (frag->indent != 0)
    internal_error("emitter fragment left %d block(s) open", frag->indent);
  emit_text(o, buf_cstr(frag->b));
}

const char *out_finish(Out *o, const char *what) {
  if (o->indent != 0)
    internal_error("emitter indentation is %d at the end of the %s", o->indent, what);
  return buf_cstr(o->b);
}

/* ---- types ------------------------------------------------------------------ */

DType cu_compute_dtype(DType t) { return dtype_compute(t); }

const char *cu_by_index_bits(Arena *a, int items32, int items64) {
  return items32 != items64 ? arena_printf(a, "sizeof(IndexT) == 4 ? %d : %d", items32, items64)
                            : arena_printf(a, "%d", items32);
}

const char *cu_compute_ctype(DType t) {
  switch (cu_compute_dtype(t)) {
  case DT_BOOL: return "bool";
  case DT_I32: return "int32_t";
  case DT_I64: return "int64_t";
  case DT_F32: return "float";
  case DT_F64: return "double";
  default: unreachable();
  }
}

const char *cu_storage_ctype(DType t) {
  return dtype_is_16bit(t) ? "uint16_t" : dtype_is_f8(t) ? "uint8_t" : abi_ctype(t);
}

const char *abi_ctype(DType t) {
  static const char *const names[] = {
#define X(e, name, ctype, size, comp) ctype,
      TECC_DTYPES(X)
#undef X
  };
  return names[t];
}

int cu_is_float(DType t) { return dtype_is_float(t); }

/* Comparisons convert both sides to the higher of the two ranks. */
static int dt_rank(DType t) {
  switch (cu_compute_dtype(t)) {
  case DT_BOOL: return 0;
  case DT_I32: return 1;
  case DT_I64: return 2;
  case DT_F32: return 3;
  default: return 4;
  }
}

const char *cu_convert(Arena *a, const char *expr, DType from, DType to) {
  DType f = cu_compute_dtype(from), t = cu_compute_dtype(to);
  if (f == t)
    return expr;
  if (t == DT_BOOL)
    return arena_printf(a, "(%s != 0)", expr);
  if ((t == DT_I32 || t == DT_I64) && cu_is_float(f))
    return arena_printf(a, "tecc::float_to_int<%s>(%s)", cu_compute_ctype(t), expr);
  return arena_printf(a, "(%s)(%s)", cu_compute_ctype(t), expr);
}

const char *cu_load_conv(Arena *a, DType t, const char *mem) {
  switch (t) {
  case DT_F16: return arena_printf(a, "tecc::f16_to_f32(%s)", mem);
  case DT_BF16: return arena_printf(a, "tecc::bf16_to_f32(%s)", mem);
  case DT_F8E4M3: return arena_printf(a, "tecc::f8e4m3_to_f32(%s)", mem);
  case DT_F8E5M2: return arena_printf(a, "tecc::f8e5m2_to_f32(%s)", mem);
  case DT_I8:
  case DT_U8: return arena_printf(a, "(int32_t)%s", mem);
  case DT_BOOL: return arena_printf(a, "(%s != 0)", mem);
  default: return mem;
  }
}

const char *cu_load_decode(Arena *a, DType t, int nan_sign_unseen, const char *mem) {
  if (dtype_is_f8(t) && nan_sign_unseen)
    return arena_printf(a, "tecc::%s_to_f32_arith(%s)", dtype_name(t), mem);
  return cu_load_conv(a, t, mem);
}

const char *cu_load_conv_of(Arena *a, const Kernel *k, const Value *v, const char *mem) {
  return cu_load_decode(a, v->dtype, dtype_is_f8(v->dtype) && ir_nan_sign_unseen(k, v), mem);
}

const char *cu_store_conv(Arena *a, DType t, const char *expr) {
  switch (t) {
  case DT_F16: return arena_printf(a, "tecc::f32_to_f16(%s)", expr);
  case DT_BF16: return arena_printf(a, "tecc::f32_to_bf16(%s)", expr);
  case DT_F8E4M3: return arena_printf(a, "tecc::f32_to_f8e4m3(%s)", expr);
  case DT_F8E5M2: return arena_printf(a, "tecc::f32_to_f8e5m2(%s)", expr);
  case DT_I8: return arena_printf(a, "(int8_t)(%s)", expr);
  case DT_U8: return arena_printf(a, "(uint8_t)(%s)", expr);
  case DT_BOOL: return arena_printf(a, "(uint8_t)(%s)", expr);
  default: return expr;
  }
}

/* Stores of type t that convert a pack at a time, where a value at a
 * time costs more: 8-bit floats, two a cvt and one test a word for the
 * rare values PyTorch converts otherwise (tecc::f32_to_f8e4m3_pack). */
int cu_converts_packs(DType t) {
  return dtype_is_f8(t);
}

/* That conversion: `floats` is an array of VEC f32 values, `pack` the
 * tecc::Pack it fills. */
const char *cu_pack_conv(Arena *a, DType t, const char *floats, const char *pack) {
  if (!cu_converts_packs(t))
    internal_error("cu_pack_conv: %s is converted a value at a time", dtype_name(t));
  return arena_printf(a, "tecc::f32_to_%s_pack<VEC>(%s, %s.v)", dtype_name(t), floats, pack);
}

/* One division a result where a reduction kernel ends: the same product
 * as a fused row's mean, whose reciprocal its host code passes in
 * (emit_stitch.c, mean_of()). */
const char *cu_mean_of(Arena *a, const char *acc, const char *type) {
  return arena_printf(a, "tecc::mul(%s, (%s)1 / (%s)t_red)", acc, type, type);
}

/* ---- literals ------------------------------------------------------------------ */

const char *cu_float_literal(Arena *a, double x, int is_f32) {
  if (isnan(x))
    return is_f32 ? "tecc::nan_f32()" : "tecc::nan_f64()";
  if (isinf(x))
    return x > 0 ? (is_f32 ? "tecc::inf_f32()" : "tecc::inf_f64()")
                 : (is_f32 ? "(-tecc::inf_f32())" : "(-tecc::inf_f64())");
  char tmp[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, x);
    double back = strtod(tmp, NULL);
    if (is_f32 ? (float)back == (float)x : back == x)
      break;
  }
  const char *dot = strpbrk(tmp, ".eni") ? "" : ".0";
  const char *text = arena_printf(a, "%s%s%s", tmp, dot, is_f32 ? "f" : "");
  return x < 0 || (x == 0 && signbit(x)) ? arena_printf(a, "(%s)", text) : text;
}

static const char *int_literal(Arena *a, int64_t x, DType t) {
  if (t == DT_I64) {
    if (x == INT64_MIN)
      return "INT64_MIN";
    return x < 0 ? arena_printf(a, "(INT64_C(%lld))", (long long)x)
                 : arena_printf(a, "INT64_C(%lld)", (long long)x);
  }
  if (x == INT32_MIN)
    return "INT32_MIN";
  return x < 0 ? arena_printf(a, "(%lld)", (long long)x) : arena_printf(a, "%lld", (long long)x);
}

const char *cu_const_literal(Arena *a, const Value *v) {
  switch (v->dtype) {
  case DT_BOOL: return v->ival ? "true" : "false";
  case DT_I32: return int_literal(a, (int32_t)v->ival, DT_I32);
  case DT_I64: return int_literal(a, v->ival, DT_I64);
  case DT_F64: return cu_float_literal(a, v->fval, 0);
  default: return cu_float_literal(a, v->fval, 1);
  }
}

/* ---- elementwise operations ---------------------------------------------------- */

static const char *unary_kind(UnaryOp op) {
  static const char *const kinds[] = {
#define X(e, name, kind, d) #kind,
      TECC_UNARY_BUILTINS(X)
#undef X
  };
  if (op == UN_NEG)
    return "N";
  if (op == UN_NOT)
    return "!";
  if (op == UN_NORMCDF)
    return "F";
  return kinds[op];
}

static const char *unary_expr(Arena *a, Value *v, const char *a0, DType at) {
  const char *kind = unary_kind(v->uop);
  DType vt = cu_compute_dtype(v->dtype);
  switch (kind[0]) {
  case 'N': return arena_printf(a, "tecc::neg(%s)", cu_convert(a, a0, at, vt));
  case '!': return arena_printf(a, "!%s", cu_convert(a, a0, at, DT_BOOL));
  case 'P': return arena_printf(a, "tecc::%s(%s)", unary_name(v->uop), a0);
  case 'R':
    if (!cu_is_float(vt))
      return cu_convert(a, a0, at, vt);
    break;
  default:
    break;
  }
  return arena_printf(a, "tecc::%s(%s)", unary_name(v->uop), cu_convert(a, a0, at, vt));
}

static const char *arith_expr(Arena *ar, BinaryOp op, DType vt, const char *a, const char *b) {
  int is_int = !cu_is_float(vt);
  switch (op) {
  /* tecc::add/sub/mul wrap for integers and never contract into an FMA for
   * floats (runtime/tecc_runtime.cuh), so every variant rounds alike. */
  case BIN_ADD: return arena_printf(ar, "tecc::add(%s, %s)", a, b);
  case BIN_SUB: return arena_printf(ar, "tecc::sub(%s, %s)", a, b);
  case BIN_MUL: return arena_printf(ar, "tecc::mul(%s, %s)", a, b);
  case BIN_DIV:
    if (is_int)
      return arena_printf(ar, "tecc::floordiv(%s, %s)", a, b);
    return arena_printf(ar, "%s / %s", a, b);
  case BIN_FLOORDIV: return arena_printf(ar, "tecc::floordiv(%s, %s)", a, b);
  case BIN_MOD: return arena_printf(ar, "tecc::mod(%s, %s)", a, b);
  case BIN_POW: return arena_printf(ar, "tecc::pow(%s, %s)", a, b);
  case BIN_MAXIMUM: return arena_printf(ar, "tecc::maximum(%s, %s)", a, b);
  case BIN_MINIMUM: return arena_printf(ar, "tecc::minimum(%s, %s)", a, b);
  case BIN_ATAN2: return arena_printf(ar, "tecc::atan2(%s, %s)", a, b);
  default: unreachable();
  }
}

/* A reduction's result, or one scaled by a constant (a quantization's
 * scale max(|x|) / 448): the same along the axes reduced, computed once a
 * row there.  Not other arithmetic of it: the reciprocal of a norm's
 * sqrt(sum(x * x)) spilled 8 bytes in tests/programs/multi_kernel.te's
 * warp instances (ptxas, sm_90), and the norms' gradients are not timed
 * with it.  `depth` bounds the walk. */
static int reduction_scalar(const Value *s, int depth) {
  while (s->op == IR_BROADCAST)
    s = s->args[0];
  if (s->op == IR_REDUCE)
    return 1;
  if (depth == 0 || s->op != IR_BINARY || (s->bop != BIN_MUL && s->bop != BIN_DIV))
    return 0;
  const Value *k = s->args[1];
  while (k->op == IR_BROADCAST)
    k = k->args[0];
  return k->op == IR_CONST && reduction_scalar(s->args[0], depth - 1);
}

int cu_by_reciprocal(const Value *v) {
  if (v->op != IR_BINARY || v->bop != BIN_DIV || strcmp(cu_compute_ctype(v->dtype), "float") != 0 ||
      v->args[0]->dtype != v->dtype || v->args[1]->dtype != v->dtype)
    return 0;
  return reduction_scalar(v->args[1], 4);
}

static int fusable_product(const KernelPlan *kp, const Value *p, const Value *v) {
  return p->op == IR_BINARY && p->bop == BIN_MUL && p->nuses == 1 && p->dtype == v->dtype &&
         p->args[0]->dtype == p->dtype && p->args[1]->dtype == p->dtype && !kp->stored[p->id];
}

int cu_fused_product(const KernelPlan *kp, const Value *v) {
  if (v->op != IR_BINARY || (v->bop != BIN_ADD && v->bop != BIN_SUB) || !dtype_is_float(v->dtype) ||
      v->args[0]->dtype != v->dtype || v->args[1]->dtype != v->dtype)
    return -1;
  return fusable_product(kp, v->args[0], v) ? 0 : fusable_product(kp, v->args[1], v) ? 1 : -1;
}

const char *cu_fma_expr(Arena *ar, const Value *v, int which, const char *a, const char *b, const char *c) {
  if (v->bop == BIN_SUB && which == 0)
    c = arena_printf(ar, "-(%s)", c);
  else if (v->bop == BIN_SUB)
    a = arena_printf(ar, "-(%s)", a);
  return arena_printf(ar, "tecc::fma(%s, %s, %s)", a, b, c);
}

static const char *binary_expr(Arena *a, Value *v, const char *a0, DType t0, const char *a1, DType t1) {
  if (cu_by_reciprocal(v))
    return arena_printf(a, "tecc::mul(%s, 1.0f / %s)", a0, a1);
  switch (v->bop) {
  case BIN_AND:
  case BIN_OR:
    return arena_printf(a, "%s %s %s", cu_convert(a, a0, t0, DT_BOOL),
                        v->bop == BIN_AND ? "&&" : "||", cu_convert(a, a1, t1, DT_BOOL));
  case BIN_EQ: case BIN_NE: case BIN_LT: case BIN_LE: case BIN_GT: case BIN_GE: {
    DType common = dt_rank(t0) >= dt_rank(t1) ? t0 : t1;
    return arena_printf(a, "%s %s %s", cu_convert(a, a0, t0, common), binary_name(v->bop),
                        cu_convert(a, a1, t1, common));
  }
  default: {
    DType vt = cu_compute_dtype(v->dtype);
    return arith_expr(a, v->bop, vt, cu_convert(a, a0, t0, vt), cu_convert(a, a1, t1, vt));
  }
  }
}

/* A cast to an 8-bit integer, held in i32: a float saturates (language.md
 * section 5), an integer wraps. */
static const char *narrow_int_expr(Arena *a, DType t, const char *x, DType from) {
  const char *ct = abi_ctype(t);
  if (cu_is_float(from))
    return arena_printf(a, "(int32_t)tecc::float_to_int<%s>(%s)", ct, x);
  return arena_printf(a, "(int32_t)(%s)(%s)", ct, x);
}

static const char *cast_expr(Arena *a, Value *v, const char *a0, DType at) {
  if (dtype_is_16bit(v->dtype) && cu_compute_dtype(at) == DT_F64)
    return arena_printf(a, "tecc::round_%s(tecc::f64_to_f32_odd(%s))", dtype_name(v->dtype), a0);
  if (v->dtype == DT_F16)
    return arena_printf(a, "tecc::round_f16(%s)", cu_convert(a, a0, at, DT_F32));
  if (v->dtype == DT_BF16)
    return arena_printf(a, "tecc::round_bf16(%s)", cu_convert(a, a0, at, DT_F32));
  if (dtype_is_f8(v->dtype)) /* from f64 too through f32, as PyTorch's cast */
    return arena_printf(a, "tecc::round_%s(%s)", dtype_name(v->dtype), cu_convert(a, a0, at, DT_F32));
  if (v->dtype == DT_I8 || v->dtype == DT_U8)
    return narrow_int_expr(a, v->dtype, a0, at);
  return cu_convert(a, a0, at, v->dtype);
}

const char *cu_take_inside(Arena *a, const Value *v, const char *const *idx, const char *const *size) {
  const char *inside = NULL;
  for (int j = 0; j < ir_take_naxes(v); j++) {
    const int axis = ir_take_axis(v, j);
    const char *c = arena_printf(a, "%s >= 0 && %s < %s", idx[axis], idx[axis], size[axis]);
    inside = inside ? arena_printf(a, "%s && %s", inside, c) : c;
  }
  return inside;
}

const char *cu_gather(Arena *a, DType in, const char *inside, const char *mem) {
  DType t = cu_compute_dtype(in);
  const char *outside = dtype_is_float(t) ? cu_float_literal(a, 0.0 / 0.0, t == DT_F32)
                        : arena_printf(a, "(%s)0", cu_compute_ctype(t));
  return arena_printf(a, "(%s ? %s : %s)", inside, cu_load_conv(a, in, mem), outside);
}

const char *cu_op_expr(Arena *ar, Value *v, const char *const *a) {
  DType t[3] = {0};
  for (int i = 0; i < v->nargs; i++)
    t[i] = v->args[i]->dtype;
  switch (v->op) {
  case IR_CAST: return cast_expr(ar, v, a[0], t[0]);
  case IR_UNARY: return unary_expr(ar, v, a[0], t[0]);
  case IR_BINARY: return binary_expr(ar, v, a[0], t[0], a[1], t[1]);
  case IR_SELECT:
    return arena_printf(ar, "%s ? %s : %s", cu_convert(ar, a[0], t[0], DT_BOOL),
                        cu_convert(ar, a[1], t[1], v->dtype), cu_convert(ar, a[2], t[2], v->dtype));
  default: internal_error("value %d (op %d) cannot be computed inline", v->id, (int)v->op);
  }
}

/* ---- reserved identifiers ------------------------------------------------------ */

/* C, C++ and CUDA keywords, the macros GNU compilers predefine, and the
 * identifiers generated code uses unqualified (types among them: the
 * fixed-width integers, not every name that ends in _t).  A .te name that
 * is one of these, or has a prefix the generated code or C reserves
 * (name_is_reserved), is renamed u_NAME in the entry point and the
 * kernels (doc/abi.md §2); any other name is kept as written. */
static const char *const reserved_words[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool",
    "break", "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class",
    "co_await", "co_return", "co_yield", "compl", "complex", "concept", "const",
    "consteval", "constexpr", "constinit", "const_cast", "continue", "decltype",
    "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit",
    "export", "extern", "false", "float", "for", "friend", "goto", "if", "imaginary",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not",
    "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
    "register", "reinterpret_cast", "requires", "restrict", "return", "short",
    "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch",
    "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
    "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq", "main", "std", "dim3", "IndexT",
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "stream", "NULL",
    "INT32_MIN", "INT32_MAX", "INT64_MIN", "INT64_MAX", "UINT32_MAX", "UINT64_MAX",
    "INT32_C", "INT64_C", "UINT32_C", "UINT64_C", "uint8_t", "int8_t", "errno",
    "assert", "offsetof", "min", "max", "abs", "exp", "log", "pow", "sqrt",
    "printf", "malloc", "free", "memcpy", "memset", "size_t", "linux", "unix",
    "int16_t", "int32_t", "int64_t", "uint16_t", "uint32_t", "uint64_t",
    "intptr_t", "uintptr_t", "intmax_t", "uintmax_t", "ptrdiff_t", "ssize_t",
    "max_align_t", "float_t", "double_t", "half", "half2", "nv_bfloat16",
    "nv_bfloat162",
};

/* CUDA's vector types: int2, uint4, float4, double2, ... */
static int is_vector_type(const char *name) {
  static const char *const bases[] = {"char", "uchar", "short", "ushort", "int", "uint",
                                      "long", "ulong", "longlong", "ulonglong", "float",
                                      "double"};
  size_t n = strlen(name);
  if (n < 2 || name[n - 1] < '1' || name[n - 1] > '4')
    return 0;
  for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
    if (strlen(bases[i]) == n - 1 && strncmp(name, bases[i], n - 1) == 0)
      return 1;
  return 0;
}

static int has_prefix(const char *s, const char *p) {
  return strncmp(s, p, strlen(p)) == 0;
}

int name_is_reserved(const char *name) {
  if (has_prefix(name, "tecc") || has_prefix(name, "t_") || has_prefix(name, "cuda") ||
      has_prefix(name, "__") || strstr(name, "__") ||
      (name[0] == '_' && isupper((unsigned char)name[1])) || is_vector_type(name))
    return 1;
  for (size_t i = 0; i < sizeof reserved_words / sizeof reserved_words[0]; i++)
    if (strcmp(name, reserved_words[i]) == 0)
      return 1;
  return 0;
}
