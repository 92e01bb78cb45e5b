/* interp-test.c — the reference interpreter on small hand-computed cases
 * (TAP).  Each case builds a tiny kernel of lib/ir.h by hand, so the test
 * depends on nothing but the IR contract and the interpreter. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"

static int test_no;
static int failures;

static void ok(int cond, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%sok %d - ", cond ? "" : "not ", ++test_no);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  if (!cond)
    failures++;
}

static size_t dtype_size_of(DType t) {
  static const size_t sizes[] = {
#define X(e, name, ctype, size, comp) size,
      TECC_DTYPES(X)
#undef X
  };
  return sizes[t];
}

static const char *reduce_name_of(ReduceOp op) {
  static const char *names[] = {
#define X(e, name, d) name,
      TECC_REDUCTIONS(X)
#undef X
  };
  return names[op];
}

static int is_int_type(DType t) { return t == DT_I32 || t == DT_I64; }

/* ---- a tiny IR builder ---------------------------------------------------- */

static Arena *arena;
static Kernel *kern;

static Shape shape_of(int rank, const int64_t *dims) {
  Shape s = {rank, {{0, 0}}};
  for (int a = 0; a < rank; a++) {
    s.d[a].var = dims[a] < 0 ? (int)(-dims[a] - 1) : -1; /* -1 -> var 0 */
    s.d[a].size = dims[a] < 0 ? 0 : dims[a];
  }
  return s;
}

/* Dims: a literal >= 0, or -(v+1) for size variable v. */
#define SHAPE(...) shape_of(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__})
static const Shape scalar = {0, {{0, 0}}};

static void begin(int nsizevars) {
  kern = ARENA_NEW(arena, Kernel);
  kern->name = "t";
  kern->nsizevars = nsizevars;
  kern->sizevars = ARENA_ARRAY(arena, SizeVar, nsizevars + 1);
  kern->inputs = ARENA_ARRAY(arena, KernelInput, 8);
  kern->outputs = ARENA_ARRAY(arena, KernelOutput, 8);
}

static Value *node(IrOp op, DType t, Shape s, Value *a, Value *b, Value *c) {
  Value *v = ARENA_NEW(arena, Value);
  v->id = kern->values.len;
  v->op = op;
  v->dtype = t;
  v->shape = s;
  Value *args[3] = {a, b, c};
  for (int i = 0; i < 3 && args[i]; i++)
    v->args[v->nargs++] = args[i];
  vec_push(arena, &kern->values, v);
  return v;
}

static Value *input(DType t, Shape s) {
  Value *v = node(IR_INPUT, t, s, NULL, NULL, NULL);
  v->index = kern->ninputs;
  kern->inputs[kern->ninputs++] = (KernelInput){"x", t, s, v};
  return v;
}

static void output(Value *v, DType t) {
  kern->outputs[kern->noutputs++] = (KernelOutput){"y", t, v->shape, v};
}

static Value *fconst(DType t, double x) {
  Value *v = node(IR_CONST, t, scalar, NULL, NULL, NULL);
  v->fval = x;
  return v;
}

static Value *unary(UnaryOp op, DType t, Value *x) {
  Value *v = node(IR_UNARY, t, x->shape, x, NULL, NULL);
  v->uop = op;
  return v;
}

static Value *binary(BinaryOp op, DType t, Value *a, Value *b) {
  Value *v = node(IR_BINARY, t, a->shape, a, b, NULL);
  v->bop = op;
  return v;
}

static Value *reduce(ReduceOp op, DType t, Value *x, uint32_t axes) {
  Shape s = x->shape;
  for (int a = 0; a < s.rank; a++)
    if (axes & (1u << a))
      s.d[a] = (Dim){-1, 1};
  Value *v = node(IR_REDUCE, t, s, x, NULL, NULL);
  v->rop = op;
  v->axes = axes;
  return v;
}

static int run(const int64_t *sizes, const void *in0, const void *in1,
               void *out0) {
  const void *ins[2] = {in0, in1};
  void *outs[1] = {out0};
  return interp_kernel(kern, sizes, ins, outs, NULL);
}

static int run_mag(const int64_t *sizes, const void *in0, const void *in1,
                   void *out0, double *mag0) {
  const void *ins[2] = {in0, in1};
  void *outs[1] = {out0};
  double *mags[1] = {mag0};
  return interp_kernel_mag(kern, sizes, ins, outs, NULL, mags);
}

static Value *bcast(Value *x, Shape s) {
  return node(IR_BROADCAST, x->dtype, s, x, NULL, NULL);
}

/* ---- cases ------------------------------------------------------------------ */

/* y = a OP b elementwise over n values of dtype t (int32 or int64 storage). */
static void check_int_binary(BinaryOp op, DType t, int n, const void *a,
                             const void *b, const void *want, const char *what) {
  begin(0);
  Value *x = input(t, SHAPE(n));
  Value *y = input(t, SHAPE(n));
  output(binary(op, t, x, y), t);
  char got[64 * 8];
  int st = run(NULL, a, b, got);
  ok(st == 0 && memcmp(got, want, (size_t)n * dtype_size_of(t)) == 0, "%s", what);
}

static void test_int_division(void) {
  int32_t a[] = {7, -7, 7, -7, 7, INT32_MIN, 5, 0};
  int32_t b[] = {2, 2, -2, -2, 0, -1, 1, 3};
  int32_t fd[] = {3, -4, -4, 3, 0, INT32_MIN, 5, 0};
  int32_t md[] = {1, 1, -1, -1, 0, 0, 0, 0};
  check_int_binary(BIN_FLOORDIV, DT_I32, 8, a, b, fd, "i32 // is Python floor division; by zero gives 0; MIN // -1 wraps");
  check_int_binary(BIN_MOD, DT_I32, 8, a, b, md, "i32 % takes the divisor's sign; by zero gives 0");
  int64_t a64[] = {INT64_MIN, -9, 9};
  int64_t b64[] = {-1, 4, -4};
  int64_t m64[] = {0, 3, -3};
  int64_t f64[] = {INT64_MIN, -3, -3};
  check_int_binary(BIN_MOD, DT_I64, 3, a64, b64, m64, "i64 % with MIN % -1 and mixed signs");
  check_int_binary(BIN_FLOORDIV, DT_I64, 3, a64, b64, f64, "i64 // with MIN // -1 and mixed signs");
}

static void test_int_pow(void) {
  int64_t base[] = {2, 2, -1, -1, 1, 0, 3, -2, 0};
  int64_t ex[] = {10, -1, -3, -4, -5, 0, 40, 3, -2};
  int64_t want[] = {1024, 0, -1, 1, 1, 1, (int64_t)12157665459056928801ull, -8, 0};
  check_int_binary(BIN_POW, DT_I64, 9, base, ex, want, "i64 ** is exact, wraps, negative exponents give 0 unless base is +-1");
  int32_t b32[] = {2, 3};
  int32_t e32[] = {31, 21};
  int32_t w32[] = {INT32_MIN, (int32_t)(uint32_t)10460353203ull};
  check_int_binary(BIN_POW, DT_I32, 2, b32, e32, w32, "i32 ** wraps at 32 bits");
  int32_t x[] = {INT32_MAX, INT32_MIN};
  int32_t one[] = {1, 1};
  int32_t wrapped[] = {INT32_MIN, INT32_MAX};
  check_int_binary(BIN_ADD, DT_I32, 2, x, one, (int32_t[]){INT32_MIN, INT32_MIN + 1}, "i32 + wraps");
  check_int_binary(BIN_SUB, DT_I32, 1, x + 1, one, wrapped + 1, "i32 - wraps");
}

static void test_float_divmod(void) {
  begin(0);
  Value *x = input(DT_F64, SHAPE(4));
  Value *y = input(DT_F64, SHAPE(4));
  output(binary(BIN_FLOORDIV, DT_F64, x, y), DT_F64);
  double a[] = {7.5, -7.5, 7.5, 1.0};
  double b[] = {-2, 2, 2, 0.1};
  double got[4];
  run(NULL, a, b, got);
  ok(got[0] == -4 && got[1] == -4 && got[2] == 3 && got[3] == 9, "f64 // floors as Python (1.0 // 0.1 == 9)");
  begin(0);
  x = input(DT_F64, SHAPE(4));
  y = input(DT_F64, SHAPE(4));
  output(binary(BIN_MOD, DT_F64, x, y), DT_F64);
  run(NULL, a, b, got);
  ok(got[0] == -0.5 && got[1] == 0.5 && got[2] == 1.5 && fabs(got[3] - 0.09999999999999995) < 1e-17,
     "f64 %% has the divisor's sign");
}

static void test_casts(void) {
  begin(0);
  Value *x = input(DT_F32, SHAPE(7));
  Value *c = node(IR_CAST, DT_I32, x->shape, x, NULL, NULL);
  output(c, DT_I32);
  float a[] = {3.7f, -3.7f, 1e10f, -1e10f, NAN, INFINITY, -INFINITY};
  int32_t got[7];
  run(NULL, a, NULL, got);
  ok(got[0] == 3 && got[1] == -3 && got[2] == INT32_MAX && got[3] == INT32_MIN &&
         got[4] == 0 && got[5] == INT32_MAX && got[6] == INT32_MIN,
     "f32 -> i32 truncates, saturates, NaN gives 0");
  begin(0);
  x = input(DT_F64, SHAPE(3));
  output(node(IR_CAST, DT_BOOL, x->shape, x, NULL, NULL), DT_BOOL);
  uint8_t gb[3];
  run(NULL, (double[]){0.0, -0.0 + 0.25, NAN}, NULL, gb);
  ok(gb[0] == 0 && gb[1] == 1 && gb[2] == 1, "to bool is x != 0 (NaN is true)");
  begin(0);
  x = input(DT_I64, SHAPE(2));
  output(node(IR_CAST, DT_I32, x->shape, x, NULL, NULL), DT_I32);
  run(NULL, (int64_t[]){4294967297LL, -1}, NULL, got);
  ok(got[0] == 1 && got[1] == -1, "i64 -> i32 wraps");
}

static void test_16bit(void) {
  ok(interp_f16_bits(1.0) == 0x3C00 && interp_f16_bits(-2.0) == 0xC000, "f16 encodes 1 and -2");
  ok(interp_round_f16(1 + ldexp(1, -11)) == 1.0, "f16 ties to even (down)");
  ok(interp_round_f16(1 + 3 * ldexp(1, -11)) == 1 + ldexp(1, -9), "f16 ties to even (up)");
  ok(interp_f16_bits(65520.0) == 0x7C00 && interp_f16_bits(65519.0) == 0x7BFF, "f16 overflow rounds to inf at 65520");
  ok(interp_f16_bits(ldexp(1, -24)) == 0x0001 && interp_f16_bits(ldexp(1, -26)) == 0, "f16 subnormals");
  ok(interp_f16_value(0x3555) == 0.333251953125, "f16 decodes");
  ok(interp_bf16_bits(1.0) == 0x3F80 && interp_bf16_bits(1 + ldexp(1, -8)) == 0x3F80 &&
         interp_bf16_bits(1 + 3 * ldexp(1, -8)) == 0x3F82,
     "bf16 rounds to nearest even");
  ok(interp_bf16_value(0xC0490FDB >> 16) == -3.140625, "bf16 decodes");
  ok((interp_f16_bits(NAN) & 0x7C00) == 0x7C00 && (interp_f16_bits(NAN) & 0x3FF), "f16 NaN stays NaN");
  /* A CAST to f16 rounds; the f32 sum after it does not. */
  begin(0);
  Value *x = input(DT_F64, SHAPE(1));
  Value *h = node(IR_CAST, DT_F16, x->shape, x, NULL, NULL);
  Value *f = node(IR_CAST, DT_F32, x->shape, h, NULL, NULL);
  output(binary(BIN_ADD, DT_F32, f, node(IR_BROADCAST, DT_F32, x->shape, fconst(DT_F32, 0.25), NULL, NULL)), DT_F32);
  float got;
  run(NULL, (double[]){1.0 / 3}, NULL, &got);
  ok(got == (float)(0.333251953125 + 0.25), "cast to f16 rounds before the f32 add");
}

/* The 8-bit floats as PyTorch's float8_e4m3fn and float8_e5m2. */
static void test_8bit_floats(void) {
  const DType e4 = DT_F8E4M3, e5 = DT_F8E5M2;
  ok(interp_f8_bits(e4, 1.0) == 0x38 && interp_f8_bits(e4, -2.0) == 0xC0, "e4m3 encodes 1 and -2");
  ok(interp_f8_bits(e4, 448.0) == 0x7E && interp_f8_bits(e4, 464.0) == 0x7E, "e4m3: 448 is the largest; 464 ties down to it");
  ok(interp_f8_bits(e4, 464.5) == 0x7F && interp_f8_bits(e4, -480.0) == 0xFF && interp_f8_bits(e4, INFINITY) == 0x7F,
     "e4m3: beyond 464 and infinity are NaN, with the sign");
  ok(interp_f8_bits(e4, -NAN) == 0xFF && interp_f8_bits(e4, NAN) == 0x7F, "e4m3: NaN keeps its sign");
  ok(interp_f8_bits(e4, ldexp(1, -9)) == 0x01 && interp_f8_bits(e4, ldexp(1, -10)) == 0x00 &&
         interp_f8_bits(e4, 3 * ldexp(1, -10)) == 0x02,
     "e4m3 subnormals, ties to even");
  ok(interp_f8_bits(e4, 1 + ldexp(1, -4)) == 0x38 && interp_f8_bits(e4, 1 + 3 * ldexp(1, -4)) == 0x3A,
     "e4m3 rounds to nearest even");
  ok(isnan(interp_f8_value(e4, 0x7F)) && isnan(interp_f8_value(e4, 0xFF)) && interp_f8_value(e4, 0x7E) == 448.0 &&
         interp_f8_value(e4, 0x80) == 0 && signbit(interp_f8_value(e4, 0x80)),
     "e4m3 decodes NaN, 448 and -0");
  ok(interp_f8_bits(e5, 57344.0) == 0x7B && interp_f8_bits(e5, 61439.0) == 0x7B && interp_f8_bits(e5, 61440.0) == 0x7C &&
         interp_f8_bits(e5, -INFINITY) == 0xFC,
     "e5m2 overflows to infinity at 61440");
  ok(interp_f8_bits(e5, -NAN) == 0xFF && interp_f8_bits(e5, ldexp(1, -16)) == 0x01, "e5m2: signed NaN, subnormals");
  ok(isinf(interp_f8_value(e5, 0x7C)) && isnan(interp_f8_value(e5, 0x7D)) && interp_f8_value(e5, 0x3C) == 1.0,
     "e5m2 decodes inf, NaN and 1");
  /* The double goes through f32 first, as PyTorch's cast does: a value
   * just above a tie in double that f32 rounds onto the tie. */
  ok(interp_f8_bits(e4, 1 + ldexp(1, -4) + ldexp(1, -40)) == 0x38, "e4m3 from f64 rounds through f32");
  for (int b = 0; b < 256; b++) {
    double v = interp_f8_value(e4, (uint8_t)b);
    if (!isnan(v) && interp_f8_bits(e4, v) != b)
      ok(0, "e4m3 %#x round trip", b);
    v = interp_f8_value(e5, (uint8_t)b);
    if (!isnan(v) && interp_f8_bits(e5, v) != b)
      ok(0, "e5m2 %#x round trip", b);
  }
  ok(1, "every finite 8-bit float code round-trips");
}

/* i8 and u8: a float saturates, an integer wraps, as i32 does. */
static void test_8bit_ints(void) {
  begin(0);
  Value *x = input(DT_F32, SHAPE(6));
  output(node(IR_CAST, DT_I8, x->shape, x, NULL, NULL), DT_I8);
  int8_t got[6];
  run(NULL, (float[]){300, -300, 1.9f, -1.9f, NAN, -128.5f}, NULL, got);
  ok(got[0] == 127 && got[1] == -128 && got[2] == 1 && got[3] == -1 && got[4] == 0 && got[5] == -128,
     "f32 -> i8 truncates and saturates, NaN 0");
  begin(0);
  x = input(DT_I32, SHAPE(3));
  output(node(IR_CAST, DT_U8, x->shape, x, NULL, NULL), DT_U8);
  uint8_t u[3];
  run(NULL, (int32_t[]){256 + 7, -1, 255}, NULL, u);
  ok(u[0] == 7 && u[1] == 255 && u[2] == 255, "i32 -> u8 wraps");
}

static void test_nan_rules(void) {
  begin(0);
  Value *x = input(DT_F32, SHAPE(3));
  Value *y = input(DT_F32, SHAPE(3));
  output(binary(BIN_MAXIMUM, DT_F32, x, y), DT_F32);
  float got[3];
  run(NULL, (float[]){NAN, 1, 2}, (float[]){1, NAN, 3}, got);
  ok(isnan(got[0]) && isnan(got[1]) && got[2] == 3, "maximum propagates NaN from either side");
  begin(0);
  x = input(DT_F32, SHAPE(2, 3));
  output(reduce(RED_MIN, DT_F32, x, 2), DT_F32);
  run(NULL, (float[]){1, NAN, 0, -1, 5, 2}, NULL, got);
  ok(isnan(got[0]) && got[1] == -1, "min reduction propagates NaN");
}

static void test_argmax(void) {
  begin(0);
  Value *x = input(DT_F32, SHAPE(3, 4));
  output(reduce(RED_ARGMAX, DT_I64, x, 2), DT_I64);
  float a[] = {1, 5, 5, 2, NAN, 3, NAN, 9, 0, -1, 0, -2};
  int64_t got[3];
  run(NULL, a, NULL, got);
  ok(got[0] == 1 && got[1] == 0 && got[2] == 0, "argmax: first index on ties, first NaN wins");
  begin(0);
  x = input(DT_F32, SHAPE(3, 4));
  output(reduce(RED_ARGMIN, DT_I64, x, 1), DT_I64);
  int64_t col[4];
  run(NULL, a, NULL, col);
  ok(col[0] == 1 && col[1] == 2 && col[2] == 1 && col[3] == 2, "argmin over the outer axis");
  begin(0);
  x = input(DT_I32, SHAPE(2, 3));
  output(reduce(RED_ARGMAX, DT_I64, x, 3), DT_I64);
  run(NULL, (int32_t[]){1, 7, 3, 7, 0, 2}, NULL, got);
  ok(got[0] == 1, "argmax over all axes is a flat row-major index");
  begin(1);
  x = input(DT_F32, SHAPE(3, -1));
  output(reduce(RED_ARGMAX, DT_I64, x, 2), DT_I64);
  int st = run((int64_t[]){0}, a, NULL, got);
  ok(st == INTERP_EMPTY_REDUCTION, "argmax over an empty axis is EMPTY_REDUCTION");
}

static void test_empty(void) {
  static const struct {
    ReduceOp op;
    DType t;
    double want;
  } cases[] = {
      {RED_SUM, DT_F32, 0},          {RED_PROD, DT_F32, 1},
      {RED_MAX, DT_F32, -INFINITY},  {RED_MIN, DT_F64, INFINITY},
      {RED_MEAN, DT_F32, NAN},       {RED_VAR, DT_F64, NAN},
      {RED_MAX, DT_I32, INT32_MIN},  {RED_MIN, DT_I32, INT32_MAX},
      {RED_ANY, DT_BOOL, 0},         {RED_ALL, DT_BOOL, 1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    begin(1);
    Value *x = input(cases[c].t, SHAPE(2, -1));
    output(reduce(cases[c].op, cases[c].t, x, 2), cases[c].t);
    char buf[16];
    int st = run((int64_t[]){0}, "", NULL, buf);
    double g0 = interp_load(cases[c].t, buf, 0), g1 = interp_load(cases[c].t, buf, 1);
    int same = isnan(cases[c].want) ? isnan(g0) && isnan(g1) : g0 == cases[c].want && g1 == cases[c].want;
    ok(st == 0 && same, "%s over an empty axis (%s) gives %g", reduce_name_of(cases[c].op),
       cases[c].t == DT_BOOL ? "bool" : is_int_type(cases[c].t) ? "int" : "float", cases[c].want);
  }
}

static void test_round_and_math(void) {
  begin(0);
  Value *x = input(DT_F64, SHAPE(6));
  output(unary(UN_ROUND, DT_F64, x), DT_F64);
  double got[6];
  run(NULL, (double[]){0.5, 1.5, 2.5, -0.5, -1.5, 2.4999}, NULL, got);
  ok(got[0] == 0 && got[1] == 2 && got[2] == 2 && got[3] == 0 && signbit(got[3]) &&
         got[4] == -2 && got[5] == 2,
     "round is half to even");
  begin(0);
  x = input(DT_F64, SHAPE(3));
  output(unary(UN_GELU, DT_F64, x), DT_F64);
  run(NULL, (double[]){1, -1, 0}, NULL, got);
  ok(fabs(got[0] - 0.8413447460685429) < 1e-15 && fabs(got[1] + 0.15865525393145707) < 1e-15 && got[2] == 0,
     "gelu is the exact erf form");
  begin(0);
  x = input(DT_F64, SHAPE(3));
  output(unary(UN_SOFTPLUS, DT_F64, x), DT_F64);
  run(NULL, (double[]){800, -800, 0}, NULL, got);
  ok(got[0] == 800 && got[1] == 0 && fabs(got[2] - log(2)) < 1e-16, "softplus is stable at both ends");
  begin(0);
  x = input(DT_I32, SHAPE(3));
  output(unary(UN_ABS, DT_I32, x), DT_I32);
  int32_t gi[3];
  run(NULL, (int32_t[]){-5, INT32_MIN, 3}, NULL, gi);
  ok(gi[0] == 5 && gi[1] == INT32_MIN && gi[2] == 3, "abs keeps i32 (and wraps at MIN)");
  begin(0);
  x = input(DT_F32, SHAPE(4));
  output(unary(UN_ISFINITE, DT_BOOL, x), DT_BOOL);
  uint8_t gb[4];
  run(NULL, (float[]){1, INFINITY, NAN, -0.0f}, NULL, gb);
  ok(gb[0] == 1 && gb[1] == 0 && gb[2] == 0 && gb[3] == 1, "isfinite");
}

static void test_reductions(void) {
  begin(0);
  Value *x = input(DT_F64, SHAPE(2, 3, 2));
  output(reduce(RED_SUM, DT_F64, x, 2), DT_F64);
  double a[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  double got[4];
  run(NULL, a, NULL, got);
  ok(got[0] == 9 && got[1] == 12 && got[2] == 27 && got[3] == 30, "sum over the middle axis keeps [2, 1, 2]");
  begin(0);
  x = input(DT_F64, SHAPE(2, 3, 2));
  output(reduce(RED_MEAN, DT_F64, x, 5), DT_F64);
  run(NULL, a, NULL, got);
  ok(got[0] == 4.5 && got[1] == 6.5 && got[2] == 8.5, "mean over axes 0 and 2");
  begin(0);
  x = input(DT_F64, SHAPE(4));
  output(reduce(RED_VAR, DT_F64, x, 1), DT_F64);
  run(NULL, a, NULL, got);
  ok(got[0] == 1.25, "var is the population variance");
  begin(0);
  x = input(DT_BOOL, SHAPE(5));
  output(reduce(RED_SUM, DT_I64, x, 1), DT_I64);
  int64_t cnt;
  run(NULL, (uint8_t[]){1, 0, 1, 1, 0}, NULL, &cnt);
  ok(cnt == 3, "sum of bool is an i64 count");
  begin(0);
  x = input(DT_I32, SHAPE(2));
  output(reduce(RED_SUM, DT_I32, x, 1), DT_I32);
  int32_t s32;
  run(NULL, (int32_t[]){INT32_MAX, 2}, NULL, &s32);
  ok(s32 == INT32_MIN + 1, "i32 sum wraps");
}

static void test_broadcast_and_sizes(void) {
  begin(1);
  Value *x = input(DT_F32, SHAPE(-1, 3));
  Value *b = input(DT_F32, SHAPE(3));
  Value *bb = node(IR_BROADCAST, DT_F32, x->shape, b, NULL, NULL);
  output(binary(BIN_MUL, DT_F32, x, bb), DT_F32);
  float got[6];
  float xs[6] = {1, 2, 3, 4, 5, 6};
  run((int64_t[]){2}, xs, (float[]){10, 100, 1000}, got);
  ok(got[0] == 10 && got[2] == 3000 && got[3] == 40 && got[5] == 6000, "broadcast of a row over [N, 3]");
  begin(1);
  x = input(DT_F32, SHAPE(-1, 1));
  Value *y = input(DT_F32, SHAPE(-1, 2));
  output(binary(BIN_SUB, DT_F32, node(IR_BROADCAST, DT_F32, y->shape, x, NULL, NULL), y), DT_F32);
  run((int64_t[]){2}, (float[]){1, 2}, xs, got);
  ok(got[0] == 0 && got[1] == -1 && got[2] == -1 && got[3] == -2, "broadcast of a column [N, 1]");
  float poison = 42;
  int st = run((int64_t[]){-3}, xs, xs, &poison);
  ok(st == INTERP_INVALID_VALUE && poison == 42, "a negative size is INVALID_VALUE and writes nothing");
}

/* abi.md §6's magnitude bounds (interp.h), computed by hand. */
static int near(double got, double want) { return fabs(got - want) <= 1e-12 * fabs(want); }

static void test_mag_sums(void) {
  double y[4], m[4];
  begin(0);
  Value *x = input(DT_F64, SHAPE(4));
  output(reduce(RED_SUM, DT_F64, x, 1), DT_F64);
  double xs[4] = {1, -1, 2, -2.5};
  int st = run_mag(NULL, xs, NULL, y, m);
  ok(st == 0 && y[0] == -0.5 && near(m[0], 2 * 6.5), "mag of a cancelling sum of 4: log2(4) * sum |x| = 13");
  begin(0);
  x = input(DT_F64, SHAPE(4));
  Value *mu = reduce(RED_MEAN, DT_F64, x, 1);
  output(binary(BIN_SUB, DT_F64, x, bcast(mu, x->shape)), DT_F64);
  double x2[4] = {1, 2, 3, 6};
  st = run_mag(NULL, x2, NULL, y, m);
  /* m(mean) = log2(4) * 12 / 4 = 6 */
  ok(st == 0 && y[0] == -2 && y[3] == 3 && near(m[0], 7) && near(m[1], 8) && near(m[2], 9) &&
         near(m[3], 12),
     "mag of x - mean(x): |x| + log2(K) * sum |x| / K");
  begin(0);
  x = input(DT_F64, SHAPE(4));
  output(reduce(RED_VAR, DT_F64, x, 1), DT_F64);
  st = run_mag(NULL, x2, NULL, y, m);
  ok(st == 0 && y[0] == 3.5 && near(m[0], 2 * (49 + 64 + 81 + 144) / 4.0),
     "mag of var: log2(K) * sum (|x| + m(mean))^2 / K = 169");
  begin(0); /* lowering's spelling of var gives the same bound */
  x = input(DT_F64, SHAPE(4));
  mu = reduce(RED_MEAN, DT_F64, x, 1);
  Value *d = binary(BIN_SUB, DT_F64, x, bcast(mu, x->shape));
  output(reduce(RED_MEAN, DT_F64, binary(BIN_MUL, DT_F64, d, d), 1), DT_F64);
  st = run_mag(NULL, x2, NULL, y, m);
  ok(st == 0 && y[0] == 3.5 && near(m[0], 169), "mag of mean((x - mean(x))^2) is var's");
  begin(0);
  x = input(DT_F64, SHAPE(2, 3));
  output(reduce(RED_PROD, DT_F64, x, 2), DT_F64);
  st = run_mag(NULL, (double[]){2, -0.5, 3, 1, 1, 1}, NULL, y, m);
  ok(st == 0 && y[0] == -3 && near(m[0], log2(3) * 3) && near(m[1], log2(3)),
     "mag of prod: log2(K) * prod |x|");
  begin(0);
  x = input(DT_F64, SHAPE(2, 2));
  Value *dd = binary(BIN_SUB, DT_F64, x, bcast(fconst(DT_F64, 1), x->shape));
  output(reduce(RED_MAX, DT_F64, dd, 2), DT_F64);
  st = run_mag(NULL, (double[]){1.5, -3, 0.5, 0.25}, NULL, y, m);
  ok(st == 0 && y[0] == 0.5 && near(m[0], 4) && y[1] == -0.5 && near(m[1], 1.5),
     "mag of max: the largest of the terms' bounds");
  begin(0);
  x = input(DT_F64, SHAPE(2, 1));
  output(reduce(RED_SUM, DT_F64, x, 2), DT_F64);
  st = run_mag(NULL, (double[]){3, -1}, NULL, y, m);
  ok(st == 0 && y[1] == -1 && near(m[0], 3) && near(m[1], 1), "mag of a sum of one term is the term's (factor 1, not log2(1))");
}

/* Past f32's range a correct f32 evaluation may overflow where the float64
 * reference does not: no bound (inf), for the value and what follows. */
static void test_mag_range(void) {
  float y[4];
  double m[4], yd[4];
  begin(0);
  Value *x = input(DT_F32, SHAPE(4));
  output(reduce(RED_MEAN, DT_F32, binary(BIN_MUL, DT_F32, x, x), 1), DT_F32);
  float big[4] = {1e19f, -1e19f, 1e19f, 1e19f};
  int st = run_mag(NULL, big, NULL, y, m);
  ok(st == 0 && isfinite(y[0]) && isinf(m[0]),
     "an f32 mean of four squares near 1e38 is finite, but its f32 sum may overflow: no bound");
  float small[4] = {1e18f, -1e18f, 1e18f, 1e18f};
  st = run_mag(NULL, small, NULL, y, m);
  ok(st == 0 && isfinite(m[0]), "the same mean of squares near 1e36 keeps its bound");
  begin(0);
  x = input(DT_F32, SHAPE(2));
  output(binary(BIN_DIV, DT_F32, binary(BIN_MUL, DT_F32, x, x), x), DT_F32);
  st = run_mag(NULL, (float[]){1e20f, 2}, NULL, y, m);
  ok(st == 0 && y[0] == 1e20f && isinf(m[0]) && y[1] == 2 && isfinite(m[1]),
     "f32 (x * x) / x at x = 1e20: the product leaves f32's range, no bound");
  begin(0);
  Value *xd = input(DT_F64, SHAPE(2));
  output(binary(BIN_DIV, DT_F64, binary(BIN_MUL, DT_F64, xd, xd), xd), DT_F64);
  st = run_mag(NULL, (double[]){1e20, 2}, NULL, yd, m);
  ok(st == 0 && isfinite(m[0]), "in f64 arithmetic the same product keeps its bound");
  /* a product's partial products: factors under 1 (or an exact 0) do not
   * keep the product of the others in range */
  begin(0);
  x = input(DT_F32, SHAPE(2, 4));
  output(reduce(RED_PROD, DT_F32, x, 2), DT_F32);
  float zero_big[8] = {1e30f, 1e30f, 0, 2, 1e30f, 1e-30f, 1e-30f, 1e30f};
  st = run_mag(NULL, zero_big, NULL, y, m);
  ok(st == 0 && y[0] == 0 && isinf(m[0]) && isinf(m[1]),
     "f32 prod of 1e30 * 1e30 * 0 * 2: a partial product may be inf (inf * 0), no bound, "
     "though the product of the bounds is 0 (an exact zero)");
  float in_range[8] = {0.5f, 4, 0.25f, 8, 1e19f, 1e19f, 1e-19f, 1};
  st = run_mag(NULL, in_range, NULL, y, m);
  ok(st == 0 && y[0] == 4 && near(m[0], 2 * 4) && isfinite(m[1]),
     "f32 prods whose factors over 1 multiply to at most 1e38 keep their bound");
  begin(0);
  xd = input(DT_F64, SHAPE(1, 4));
  output(reduce(RED_PROD, DT_F64, xd, 2), DT_F64);
  st = run_mag(NULL, (double[]){1e30, 1e30, 0, 2}, NULL, yd, m);
  ok(st == 0 && yd[0] == 0 && m[0] == 0, "in f64 arithmetic the same product with a zero is exact");
}

/* 300007 factors in [0.25, 2] (fuzz/corpus/programs_empty_identities.te at
 * D=300007): the product of the bounds underflows to 0 in double, yet an
 * f32 partial product of the factors over 1 passes FLT_MAX and meets one
 * that underflowed: inf * 0 = NaN on the GPU, correctly.  No bound. */
static void test_mag_long_prod(void) {
  enum { K = 300007 };
  float *xs = malloc(K * sizeof(float));
  if (!xs) {
    ok(0, "allocating %d factors", K);
    return;
  }
  for (int i = 0; i < K; i++)
    xs[i] = i % 2 ? 0.25f : 2.0f; /* 2^(1 - 2) a pair: the product is 2^-150002 */
  float y[1];
  double m[1];
  begin(0);
  Value *x = input(DT_F32, SHAPE(1, K));
  output(reduce(RED_PROD, DT_F32, x, 2), DT_F32);
  int st = run_mag(NULL, xs, NULL, y, m);
  ok(st == 0 && y[0] == 0 && isinf(m[0]),
     "f32 prod of 300007 factors in [0.25, 2] underflows to 0, but its partial products may "
     "overflow: no bound");
  free(xs);
}

static void test_mag_elementwise(void) {
  double y[4], m[4];
  begin(0);
  Value *a = input(DT_F64, SHAPE(2));
  Value *b = input(DT_F64, SHAPE(2));
  Value *s = binary(BIN_ADD, DT_F64, a, bcast(fconst(DT_F64, -0.999), a->shape));
  output(binary(BIN_MUL, DT_F64, s, b), DT_F64);
  int st = run_mag(NULL, (double[]){1, -3}, (double[]){4, 0.5}, y, m);
  ok(st == 0 && near(m[0], 1.999 * 4) && near(m[1], 3.999 * 0.5), "mag of (a - 0.999) * b: (|a| + 0.999) * |b|");
  begin(0);
  a = input(DT_F64, SHAPE(2));
  b = input(DT_F64, SHAPE(2));
  Value *num = binary(BIN_ADD, DT_F64, a, bcast(fconst(DT_F64, -0.5), a->shape));
  Value *den = binary(BIN_SUB, DT_F64, b, bcast(fconst(DT_F64, 1), b->shape));
  output(binary(BIN_DIV, DT_F64, num, den), DT_F64);
  /* (1 - 0.5) / (3 - 1) = 0.25: m = (1.5 + 0.25 * 4) / 2 */
  st = run_mag(NULL, (double[]){1, 1}, (double[]){3, 1}, y, m);
  ok(st == 0 && y[0] == 0.25 && near(m[0], 1.25) && isinf(y[1]) && isinf(m[1]),
     "mag of a division: (m(a) + |a/b| m(b)) / |b|; by zero: no bound");
  begin(0);
  a = input(DT_F64, SHAPE(2));
  b = input(DT_F64, SHAPE(2));
  output(unary(UN_EXP, DT_F64, binary(BIN_SUB, DT_F64, a, b)), DT_F64);
  st = run_mag(NULL, (double[]){1, 0.5}, (double[]){1, 0}, y, m);
  ok(st == 0 && y[0] == 1 && near(m[0], 1 + 1 * 2) && near(m[1], exp(0.5) * 1.5),
     "mag of exp(a - b): |exp| + |exp| * m(a - b)");
  begin(0);
  a = input(DT_F64, SHAPE(3));
  Value *z = binary(BIN_SUB, DT_F64, a, a);
  output(unary(UN_SQRT, DT_F64, binary(BIN_ADD, DT_F64, z, a)), DT_F64);
  st = run_mag(NULL, (double[]){4, 0, 1}, NULL, y, m);
  ok(st == 0 && y[0] == 2 && near(m[0], 2 + 12 / 4.0) && y[1] == 0 && m[1] == 0 && near(m[2], 1 + 3 / 2.0),
     "mag of sqrt: |f| + m(a) / (2 sqrt(a)); an exact zero stays exact");
  begin(0);
  a = input(DT_F64, SHAPE(2));
  output(unary(UN_SQRT, DT_F64, binary(BIN_SUB, DT_F64, a, a)), DT_F64);
  st = run_mag(NULL, (double[]){4, NAN}, NULL, y, m);
  ok(st == 0 && y[0] == 0 && isinf(m[0]) && isnan(y[1]) && isinf(m[1]),
     "sqrt of a cancelled zero and NaN have no bound (inf)");
  begin(0);
  a = input(DT_F64, SHAPE(2));
  b = input(DT_F64, SHAPE(2));
  Value *c = binary(BIN_GT, DT_BOOL, a, b);
  Value *sel = node(IR_SELECT, DT_F64, a->shape, c, binary(BIN_SUB, DT_F64, a, b), unary(UN_NEG, DT_F64, b));
  output(binary(BIN_MAXIMUM, DT_F64, sel, unary(UN_ABS, DT_F64, a)), DT_F64);
  st = run_mag(NULL, (double[]){3, -1}, (double[]){2, 2}, y, m);
  ok(st == 0 && y[0] == 3 && near(m[0], 5) && y[1] == 1 && near(m[1], 2),
     "select, neg, abs pass bounds through; maximum takes the larger");
  begin(0);
  Value *i = input(DT_I32, SHAPE(2));
  Value *f = node(IR_CAST, DT_F32, i->shape, i, NULL, NULL);
  output(binary(BIN_ADD, DT_F32, f, bcast(fconst(DT_F32, 0.5), i->shape)), DT_F32);
  float yf[2];
  st = run_mag(NULL, (int32_t[]){-3, 7}, NULL, yf, m);
  ok(st == 0 && yf[0] == -2.5f && near(m[0], 3.5) && near(m[1], 7.5), "an integer cast to float counts with |x|");
  begin(0);
  i = input(DT_I32, SHAPE(2));
  output(binary(BIN_ADD, DT_I32, i, i), DT_I32);
  int32_t yi[2];
  m[0] = m[1] = -1;
  st = run_mag(NULL, (int32_t[]){-3, 7}, NULL, yi, m);
  ok(st == 0 && yi[1] == 14 && m[0] == 0 && m[1] == 0, "integer outputs get bound 0 (exact)");
  begin(0);
  a = input(DT_F64, SHAPE(2));
  output(binary(BIN_SUB, DT_F64, a, bcast(fconst(DT_F64, 1), a->shape)), DT_F64);
  const void *ins[1] = {(double[]){1, 3}};
  void *outs[1] = {y};
  double *mags[1] = {NULL};
  st = interp_kernel_mag(kern, NULL, ins, outs, NULL, mags);
  ok(st == 0 && y[0] == 0 && y[1] == 2, "no bound asked for: interp_kernel_mag is interp_kernel");
}

/* ---- steps (interp.h, "Steps") ---------------------------------------------- */

static Value *cast(DType t, Value *x) { return node(IR_CAST, t, x->shape, x, NULL, NULL); }

/* x / 3: a computed f64 value (a division that rounds in general), exact
 * here for x = 7.5 (2.5, a tie of round) and x = 9 (3, a step of i32()). */
static Value *third(Value *x) {
  return binary(BIN_DIV, DT_F64, x, bcast(fconst(DT_F64, 3), x->shape));
}

/* A computed argument within its tolerance of a step: either side is a
 * correct evaluation, so the result has no bound; off the steps it is
 * exact and compared as before. */
static void test_steps_computed(void) {
  double y[3], m[3];
  int32_t q[3];
  begin(0);
  Value *x = input(DT_F64, SHAPE(3));
  output(unary(UN_ROUND, DT_F64, third(x)), DT_F64);
  int st = run_mag(NULL, (double[]){7.5, 6.3, 7.5 + 3e-13}, NULL, y, m);
  ok(st == 0 && y[0] == 2 && isinf(m[0]) && y[1] == 2 && isfinite(m[1]) && isinf(m[2]),
     "round of a computed 2.5 (and of 2.5 + 1e-13, within f64's tolerance): no bound; 2.1 keeps its bound");
  begin(0);
  x = input(DT_F64, SHAPE(3));
  output(cast(DT_I32, unary(UN_ROUND, DT_F64, third(x))), DT_I32);
  st = run_mag(NULL, (double[]){7.5, 6.3, 8.4}, NULL, q, m);
  ok(st == 0 && q[0] == 2 && isinf(m[0]) && q[1] == 2 && m[1] == 0 && q[2] == 3 && m[2] == 0,
     "i32(round(x / 3)): uncertain (inf) at the tie, certain (0) off it, where round is exact");
  st = run_mag(NULL, (double[]){1.5, -1.5, 0.3}, NULL, q, m);
  ok(st == 0 && q[0] == 0 && isinf(m[0]) && q[1] == 0 && isinf(m[1]) && q[2] == 0 && m[2] == 0,
     "i32(round(x / 3)) at the ties +-0.5: round may give 0 or +-1, so the 0 is uncertain too");
  begin(0);
  x = input(DT_F64, SHAPE(3));
  output(cast(DT_I32, third(x)), DT_I32);
  st = run_mag(NULL, (double[]){9, 0.0000001, 10}, NULL, q, m);
  ok(st == 0 && q[0] == 3 && isinf(m[0]) && q[1] == 0 && m[1] == 0 && q[2] == 3 && m[2] == 0,
     "i32() of a computed 3 is uncertain; of one near 0 (no step) or at 3.33 certain");
  begin(0);
  Value *a = input(DT_F32, SHAPE(3));
  Value *b = input(DT_F32, SHAPE(3));
  Value *a3 = binary(BIN_DIV, DT_F32, a, bcast(fconst(DT_F32, 3), a->shape));
  output(binary(BIN_LT, DT_BOOL, a3, b), DT_BOOL);
  uint8_t lt[3];
  st = run_mag(NULL, (float[]){3, 3, 3}, (float[]){1, 1.000001f, 2}, lt, m);
  ok(st == 0 && lt[0] == 0 && isinf(m[0]) && lt[1] == 1 && isinf(m[1]) && lt[2] == 1 && m[2] == 0,
     "f32 x / 3 < y: uncertain within the two slacks (1e-6 + 1e-5 * 2), certain beyond");
  begin(0);
  a = input(DT_F64, SHAPE(2));
  output(binary(BIN_FLOORDIV, DT_F64, third(a), bcast(fconst(DT_F64, 0.5), a->shape)), DT_F64);
  st = run_mag(NULL, (double[]){7.5, 7.2}, NULL, y, m);
  ok(st == 0 && y[0] == 5 && isinf(m[0]) && y[1] == 4 && isfinite(m[1]),
     "a computed 2.5 // 0.5 sits on a step: no bound; 2.4 // 0.5 keeps its bound");
  begin(0);
  x = input(DT_F64, SHAPE(2));
  output(unary(UN_SIGN, DT_F64, binary(BIN_SUB, DT_F64, third(x), bcast(fconst(DT_F64, 1), x->shape))),
         DT_F64);
  st = run_mag(NULL, (double[]){3, 6}, NULL, y, m);
  ok(st == 0 && y[0] == 0 && isinf(m[0]) && y[1] == 1 && m[1] == 1, "sign of a computed 0: no bound");
}

/* Exact arguments (inputs, and arithmetic that does not round) are what a
 * GPU computes too: their steps are compared (round's ties to even). */
static void test_steps_exact(void) {
  double m[3];
  int32_t q[3];
  begin(0);
  Value *x = input(DT_F32, SHAPE(3));
  output(cast(DT_I32, unary(UN_ROUND, DT_F32, x)), DT_I32);
  int st = run_mag(NULL, (float[]){2.5f, -0.5f, 3.5f}, NULL, q, m);
  ok(st == 0 && q[0] == 2 && q[1] == 0 && q[2] == 4 && m[0] == 0 && m[1] == 0 && m[2] == 0,
     "i32(round(x)) of inputs at ties: certain, ties to even");
  begin(0);
  x = input(DT_F32, SHAPE(2));
  output(cast(DT_I32, x), DT_I32);
  st = run_mag(NULL, (float[]){3.0f, -1.0f}, NULL, q, m);
  ok(st == 0 && q[0] == 3 && q[1] == -1 && m[0] == 0 && m[1] == 0, "i32(x) of an input 3.0: certain");
  begin(0);
  Value *a = input(DT_F64, SHAPE(2));
  Value *b = input(DT_F64, SHAPE(2));
  output(binary(BIN_LT, DT_BOOL, a, b), DT_BOOL);
  uint8_t lt[2];
  st = run_mag(NULL, (double[]){1.5, 2}, (double[]){1.5, 2 + 1e-15}, lt, m);
  ok(st == 0 && lt[0] == 0 && lt[1] == 1 && m[0] == 0 && m[1] == 0, "x < y of inputs, equal or 1e-15 apart: certain");
  begin(0);
  x = input(DT_F32, SHAPE(3));
  Value *x8 = binary(BIN_MUL, DT_F32, x, bcast(fconst(DT_F32, 8), x->shape));
  Value *h = binary(BIN_DIV, DT_F32, unary(UN_FLOOR, DT_F32, x8), bcast(fconst(DT_F32, 2), x->shape));
  output(cast(DT_I32, unary(UN_ROUND, DT_F32, h)), DT_I32);
  st = run_mag(NULL, (float[]){0.625f, 0.375f, 0.1f}, NULL, q, m);
  ok(st == 0 && q[0] == 2 && q[1] == 2 && q[2] == 0 && m[0] == 0 && m[1] == 0 && m[2] == 0,
     "round(floor(x * 8) / 2): products and halves that do not round stay exact, ties checked");
  begin(0);
  x = input(DT_BF16, SHAPE(2));
  output(cast(DT_I32, unary(UN_ROUND, DT_F32, cast(DT_F32, x))), DT_I32);
  uint16_t xb[2] = {interp_bf16_bits(2.5), interp_bf16_bits(-1.5)};
  st = run_mag(NULL, xb, NULL, q, m);
  ok(st == 0 && q[0] == 2 && q[1] == -2 && m[0] == 0 && m[1] == 0, "round(f32(x)) of bf16 inputs at ties: a widening cast stays exact");
}

/* Uncertainty propagates: integer ops, casts back to float, selects,
 * reductions and argmax. */
static void test_steps_propagate(void) {
  double y[3], m[3];
  int32_t q[3];
  begin(0);
  Value *x = input(DT_F64, SHAPE(3));
  Value *r = cast(DT_I32, unary(UN_ROUND, DT_F64, third(x)));
  output(binary(BIN_MUL, DT_I32, binary(BIN_ADD, DT_I32, r, r), r), DT_I32);
  int st = run_mag(NULL, (double[]){7.5, 6.3, 4.5}, NULL, q, m);
  ok(st == 0 && q[0] == 8 && isinf(m[0]) && q[1] == 8 && m[1] == 0 && isinf(m[2]),
     "(r + r) * r of an uncertain r is uncertain");
  begin(0);
  x = input(DT_F64, SHAPE(3));
  r = cast(DT_I32, unary(UN_ROUND, DT_F64, third(x)));
  output(binary(BIN_MUL, DT_F64, cast(DT_F64, r), bcast(fconst(DT_F64, 0.5), x->shape)), DT_F64);
  st = run_mag(NULL, (double[]){7.5, 6.3, 4.5}, NULL, y, m);
  ok(st == 0 && y[0] == 1 && isinf(m[0]) && y[1] == 1 && m[1] == 1 && isinf(m[2]),
     "f64(r) * 0.5 of an uncertain r has no bound; of a certain one, its own");
  begin(0);
  x = input(DT_F64, SHAPE(3));
  r = cast(DT_I32, unary(UN_ROUND, DT_F64, third(x)));
  output(reduce(RED_SUM, DT_I32, r, 1), DT_I32);
  st = run_mag(NULL, (double[]){7.5, 6.3, 8.4}, NULL, q, m);
  ok(st == 0 && q[0] == 7 && isinf(m[0]), "an integer sum with an uncertain term is uncertain");
  st = run_mag(NULL, (double[]){7.2, 6.3, 8.4}, NULL, q, m);
  ok(st == 0 && q[0] == 7 && m[0] == 0, "... and certain when every term is");
  begin(0);
  Value *a = input(DT_F64, SHAPE(3));
  Value *b = input(DT_F64, SHAPE(3));
  Value *c = binary(BIN_LT, DT_BOOL, third(a), b);
  output(node(IR_SELECT, DT_F64, a->shape, c, a, b), DT_F64);
  st = run_mag(NULL, (double[]){3, 0, 1}, (double[]){1, 0, 1}, y, m);
  ok(st == 0 && y[0] == 1 && isinf(m[0]) && y[1] == 0 && m[1] == 0 && y[2] == 1 && m[2] == 1,
     "where(a / 3 < b, a, b): no bound where the condition is uncertain and the branches differ");
  begin(0);
  x = input(DT_F64, SHAPE(2, 3));
  output(reduce(RED_ARGMAX, DT_I64, third(x), 2), DT_I64);
  int64_t arg[2];
  st = run_mag(NULL, (double[]){3, 1, 3, 3, 1, 2}, NULL, arg, m);
  ok(st == 0 && arg[0] == 0 && isinf(m[0]) && arg[1] == 0 && m[1] == 0,
     "argmax of computed values: uncertain at a near-tie, certain when the best stands out");
  begin(0);
  x = input(DT_F64, SHAPE(1, 3));
  output(reduce(RED_ARGMAX, DT_I64, x, 2), DT_I64);
  st = run_mag(NULL, (double[]){1, 3, 3}, NULL, arg, m);
  ok(st == 0 && arg[0] == 1 && m[0] == 0, "argmax of exact inputs at a tie: certain, the first index");
}

/* What keeps steps compared where the rule of two computed operands would
 * waive them: sums and products whose partial results cannot round, a
 * value compared with its own max, selects that are continuous where they
 * switch, casts of exact values. */
static void test_steps_kept(void) {
  double y[6], m[6];
  int32_t q[6];
  begin(0);
  Value *a = input(DT_F64, SHAPE(2, 3));
  Value *b = input(DT_F64, SHAPE(2, 3));
  Value *sgn = node(IR_SELECT, DT_F32, a->shape, binary(BIN_LT, DT_BOOL, a, b),
                    bcast(fconst(DT_F32, 1), a->shape), bcast(fconst(DT_F32, -1), a->shape));
  Value *p4 = binary(BIN_MUL, DT_F32, reduce(RED_PROD, DT_F32, sgn, 2), bcast(fconst(DT_F32, 4), SHAPE(2, 1)));
  output(cast(DT_I32, p4), DT_I32);
  int st = run_mag(NULL, (double[]){1, 5, 1, 5, 5, 1}, (double[]){2, 2, 2, 2, 2, 2}, q, m);
  ok(st == 0 && q[0] == -4 && q[1] == 4 && m[0] == 0 && m[1] == 0,
     "i32(prod(where(a < b, 1, -1)) * 4): the product of exact +-1 is exact, its step compared");
  begin(0);
  a = input(DT_F64, SHAPE(2, 3));
  b = input(DT_F64, SHAPE(2, 3));
  sgn = node(IR_SELECT, DT_F32, a->shape, binary(BIN_LT, DT_BOOL, a, b), bcast(fconst(DT_F32, 1.5), a->shape),
             bcast(fconst(DT_F32, 1), a->shape));
  output(cast(DT_I32, reduce(RED_SUM, DT_F32, sgn, 2)), DT_I32);
  st = run_mag(NULL, (double[]){1, 5, 1, 5, 5, 1}, (double[]){2, 2, 2, 2, 2, 2}, q, m);
  ok(st == 0 && q[0] == 4 && q[1] == 3 && m[0] == 0 && m[1] == 0,
     "i32(sum(where(a < b, 1.5, 1))) at 4 and 3.5: an exact sum of multiples of 2^-1, its step compared");
  begin(0);
  a = input(DT_F64, SHAPE(3));
  output(cast(DT_I32, reduce(RED_SUM, DT_F64, third(a), 1)), DT_I32);
  st = run_mag(NULL, (double[]){3, 3, 3}, NULL, q, m);
  ok(st == 0 && q[0] == 3 && isinf(m[0]), "i32(sum(x / 3)) at 3: computed terms, a step: uncertain");
  begin(0);
  Value *x = input(DT_F64, SHAPE(2, 3));
  Value *t = third(x);
  output(binary(BIN_EQ, DT_BOOL, t, bcast(reduce(RED_MAX, DT_F64, t, 2), x->shape)), DT_BOOL);
  uint8_t eq[6];
  st = run_mag(NULL, (double[]){9, 3, 6, 9, 9 + 1e-12, 3}, NULL, eq, m);
  ok(st == 0 && eq[0] == 1 && eq[1] == 0 && m[0] == 0 && m[1] == 0 && m[2] == 0 && isinf(m[3]) &&
         isinf(m[4]) && eq[5] == 0 && m[5] == 0,
     "x / 3 == max(x / 3): certain where the max stands out; at a near-tie the two near it are uncertain");
  begin(0);
  a = input(DT_F64, SHAPE(2));
  b = input(DT_F64, SHAPE(2));
  Value *c = binary(BIN_LT, DT_BOOL, third(a), b);
  Value *d = binary(BIN_SUB, DT_F64, third(a), b);
  output(node(IR_SELECT, DT_F64, a->shape, c, d, bcast(fconst(DT_F64, 0), a->shape)), DT_F64);
  st = run_mag(NULL, (double[]){3 + 3e-14, 3}, (double[]){1, 2}, y, m);
  ok(st == 0 && isfinite(m[0]) && y[1] == -1 && m[1] > 0 && isfinite(m[1]),
     "where(a / 3 < b, a / 3 - b, 0) at the switch: the branches agree within their slacks, bounded");
  begin(0);
  x = input(DT_F32, SHAPE(2));
  Value *x4 = binary(BIN_MUL, DT_F32, cast(DT_F32, cast(DT_BF16, x)), bcast(fconst(DT_F32, 4), x->shape));
  output(cast(DT_I32, x4), DT_I32);
  st = run_mag(NULL, (float[]){0.7501f, -1.2502f}, NULL, q, m);
  ok(st == 0 && q[0] == 3 && q[1] == -5 && m[0] == 0 && m[1] == 0,
     "i32(bf16(x) * 4) of inputs that round onto 0.75, -1.25: a cast of an exact value is exact, compared");
}

/* A take on two axes (ir.h, IR_TAKE): y[a, b] = x[i[a, b], j[a, b]],
 * in range only where both indices are; an affine axis beside a general
 * one (take(x[..., 1:], i, 0)).  Expectations as numpy computes them:
 * x[i, j] with NaN (0 for integers) where i or j is outside. */
static void test_take_two_axes(void) {
  const int64_t xd[2] = {3, 4}, yd[2] = {2, 3};
  double x[12];
  int32_t xi[12];
  for (int e = 0; e < 12; e++) {
    x[e] = 10.0 * (e / 4) + e % 4;
    xi[e] = 10 * (e / 4) + e % 4;
  }
  const int64_t i[6] = {0, 2, -1, 1, 3, 2}, j[6] = {3, 0, 1, 4, 2, -1};
  for (int isint = 0; isint < 2; isint++) {
    begin(0);
    DType t = isint ? DT_I32 : DT_F64;
    input(t, shape_of(2, xd));
    Value *vi = input(DT_I64, shape_of(2, yd)), *vj = input(DT_I64, shape_of(2, yd));
    Value *y = node(IR_TAKE, t, shape_of(2, yd), NULL, NULL, NULL);
    TakeAxis ax[2] = {{1, vj, NULL, 0}, {0, vi, NULL, 0}}; /* any order */
    ir_take_set(y, ax, 2);
    output(y, t);
    double yf[6];
    int32_t yi[6];
    const void *ins[3] = {isint ? (const void *)xi : (const void *)x, i, j};
    void *outs[1] = {isint ? (void *)yi : (void *)yf};
    int st = interp_kernel(kern, NULL, ins, outs, NULL), good = st == 0 && y->nargs == 2 && y->args[0] == vi;
    for (int e = 0; e < 6; e++) {
      int inside = i[e] >= 0 && i[e] < 3 && j[e] >= 0 && j[e] < 4;
      double want = inside ? 10.0 * (double)i[e] + (double)j[e] : NAN;
      good &= isint ? yi[e] == (inside ? (int32_t)want : 0) : (inside ? yf[e] == want : isnan(yf[e]));
    }
    ok(good, "take on two axes (%s): x[i, j], NaN or 0 where either index is outside", isint ? "i32" : "f64");
  }
  /* take(x[..., 1:], i, 0): axis 1 affine (start 1, step 1), axis 0 general */
  begin(0);
  input(DT_F64, shape_of(2, xd));
  const int64_t yd2[2] = {2, 3}, pd[2] = {1, 3};
  Value *vi = input(DT_I64, shape_of(2, yd2));
  Value *pos = node(IR_INDEX, DT_I64, shape_of(2, pd), NULL, NULL, NULL);
  pos->axes = 2u;
  Value *one = node(IR_CONST, DT_I64, scalar, NULL, NULL, NULL);
  one->ival = 1;
  Value *k = bcast(binary(BIN_ADD, DT_I64, pos, bcast(one, shape_of(2, pd))), shape_of(2, yd2));
  Value *y = node(IR_TAKE, DT_F64, shape_of(2, yd2), NULL, NULL, NULL);
  TakeAxis ax[2] = {{0, vi, NULL, 0}, {1, k, one, 1}};
  ir_take_set(y, ax, 2);
  output(y, DT_F64);
  const int64_t ti[6] = {2, 2, 2, -1, 0, 5};
  double yf[6];
  const void *ins[2] = {x, ti};
  void *outs[1] = {yf};
  int st = interp_kernel(kern, NULL, ins, outs, NULL);
  const double want[6] = {21, 22, 23, NAN, 2, NAN};
  int good = st == 0 && ir_take_start(y, 1) == one && ir_take_step(y, 1) == 1 && !ir_take_start(y, 0) &&
             ir_verify(arena, kern) == NULL;
  for (int e = 0; e < 6; e++)
    good &= isnan(want[e]) ? isnan(yf[e]) : yf[e] == want[e];
  ok(good, "take(x[..., 1:], i, 0): one load on both axes, NaN where the row is outside");
}

int main(void) {
  arena = arena_new();
  test_int_division();
  test_int_pow();
  test_float_divmod();
  test_casts();
  test_16bit();
  test_8bit_floats();
  test_8bit_ints();
  test_nan_rules();
  test_argmax();
  test_empty();
  test_round_and_math();
  test_reductions();
  test_broadcast_and_sizes();
  test_mag_sums();
  test_mag_elementwise();
  test_mag_range();
  test_mag_long_prod();
  test_take_two_axes();
  test_steps_computed();
  test_steps_exact();
  test_steps_propagate();
  test_steps_kept();
  arena_free(arena);
  printf("1..%d\n", test_no);
  return failures != 0;
}
