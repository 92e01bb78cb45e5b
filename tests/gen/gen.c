/* gen.c — the random .te program generator of the differential tests.
 *
 *   gen [--seed S] [--kernels K] [--implicit] [--max-elements N]
 *
 * Writes one valid .te file to stdout: K kernels (default 1) over random
 * shapes (size variables, literal dims, broadcasting through literal 1s and
 * missing leading axes), every dtype, every builtin and operator, reductions
 * over random axis sets (keepdims), softmax/norm-like chains (reduce ->
 * broadcast -> elementwise -> reduce), fns (one with an axis parameter),
 * explicit kernels with declared output types and several outputs, and
 * gradient kernels (`kernel kI_grad = grad(kI[, inputs])`) of some of them.
 * Some kernels use positions and sizes (language.md §8.5, §9.6): a few
 * percent of their leaves are `index(X, a)` (masks, `% k`, fractions
 * `index(X, a) / D`) or a size variable's value (`x / D` where x has an
 * axis D, `D % k`); whether a kernel or leaf does is drawn from a random
 * stream of its own, so that a kernel which draws none comes out as before.
 * A few percent of kernels gather (language.md §9.7): `take(x, i, axis)` of
 * an input, an elementwise expression or a softmax-like one reduced along
 * the same axis, with an index input `tK_J` (a `# conform: range` line of
 * its own, in and out of the axis) or positions; one pick along the axis,
 * or, in a kernel with no gradient, several.  A float take's NaN (an index
 * outside the axis) is an output no statement reads, or is guarded to 0
 * (where in range, or where isnan); which kernels and statements gather is
 * drawn from a third stream.  A few percent of kernels slice (language.md
 * §9.8, §9.9): rotations `concat(x[.., k:], x[.., :k], a)` that later
 * statements read, and slices with random bounds and steps as outputs,
 * a third of them sliced again along another axis; drawn from a fourth
 * and a fifth stream.
 * The 8-bit storage types (lib/ops.h: computed in f32 and i32, as §8.4's
 * 16-bit floats) come in a tenth or so of the
 * dtype choices, drawn from a stream of their own: inputs i8, u8, f8e4m3,
 * f8e5m2 (tecc-conform's default ranges: u8 in [0, 10], f8 rounded within
 * [-2, 2]), casts to them of exact values (an f8 only of a value that stays
 * finite, e4m3 being NaN past 464), and declared outputs of them; f8
 * values computed beyond an f8's range are stored as f32 outputs.  An
 * 8-bit integer that meets a literal it cannot hold (u8 + (-1)) is
 * widened to i32 first.
 * The same seed gives the same file.  --implicit (with one kernel) writes
 * the implicit-kernel form.
 *
 * The programs are differential tests: the GPU computes f32 where the
 * reference interpreter computes f64, so every program is built to be
 * well conditioned, with no meaningless mismatch:
 *   - each value carries an interval; domains are guarded (log(abs(v) + 1),
 *     rsqrt(v + eps) with eps >= 0.1, exp of clamped values, asin of
 *     0.9 * tanh(v), denominators bounded away from 0) and magnitudes are
 *     squashed before they could overflow or underflow f32;
 *   - discontinuous operations (comparisons, floor/ceil/round/trunc/sign,
 *     //, %, casts to integers or to 8- and 16-bit floats, argmax/argmin)
 *     only see EXACT values: inputs and what is computed from them without
 *     rounding, so the GPU and the reference see the same bits (an f8 cast
 *     rounds through f32 on both sides; an 8-bit integer cast truncates
 *     and saturates a float, wraps an integer); an f8 output of an inexact
 *     value may be one f8 ulp off, which tecc-conform's f8 tolerance is;
 *   - f32 sums and means only add values of one sign (or in f64);
 *   - integer ** uses small bases and exponents;
 *   - a gradient's kinks (abs, relu, maximum, clamp, max at a tie) are
 *     where the forward's are: only exact values meet them at a kink
 *     (inexact ones would have to fall within ulps of it), and its
 *     derivatives are bounded because the domains are.
 * Each file starts with `# conform:` directives for tests/conform. */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXRANK = 4, MAXPOOL = 64, MAXIN = 5, MAXSV = 4 };

/* The 8-bit storage types come last: T_I32 .. T_F64 stay a range. */
typedef enum {
  T_BOOL, T_I32, T_I64, T_F16, T_BF16, T_F32, T_F64,
  T_I8, T_U8, T_F8E4M3, T_F8E5M2, T_N
} Dt;
static const char *const dt_name[T_N] = {"bool", "i32", "i64", "f16", "bf16", "f32",
                                         "f64", "i8", "u8", "f8e4m3", "f8e5m2"};

static int is_f8(Dt t) { return t == T_F8E4M3 || t == T_F8E5M2; }
static int is_int8(Dt t) { return t == T_I8 || t == T_U8; }
static int is_float(Dt t) { return (t >= T_F16 && t <= T_F64) || is_f8(t); }
static int is_int(Dt t) { return t == T_I32 || t == T_I64 || is_int8(t); }
/* A storage type: computed in f32 (8- and 16-bit floats) or i32 (8-bit
 * integers), rounded or wrapped only where stored. */
static int is_lowp_storage(Dt t) { return t == T_F16 || t == T_BF16 || is_f8(t); }

/* Promotion ranks (language.md §8.1): bool < {i8, u8} < i32 < i64 <
 * {f8e4m3, f8e5m2, f16, bf16} < f32 < f64. */
static int dt_rank(Dt t) {
  static const int rank[T_N] = {[T_BOOL] = 0,   [T_I8] = 1,     [T_U8] = 1,  [T_I32] = 2,
                                [T_I64] = 3,    [T_F8E4M3] = 4, [T_F8E5M2] = 4, [T_F16] = 4,
                                [T_BF16] = 4,   [T_F32] = 5,    [T_F64] = 6};
  return rank[t];
}

/* The largest magnitude a cast to (or a store of) the f8 type t keeps
 * finite with some room: e4m3 has no infinity and is NaN beyond 464, e5m2
 * overflows to inf beyond 61440. */
static double f8_max(Dt t) { return t == T_F8E4M3 ? 440 : 57000; }

/* x rounded to the nearest value of the f8 type t (ties even; no
 * overflow: callers keep |x| <= f8_max).  Monotone, so it maps bounds to
 * bounds. */
static double round_f8(Dt t, double x) {
  int mbits = t == T_F8E4M3 ? 3 : 2, emin = t == T_F8E4M3 ? -6 : -14;
  if (x == 0 || !isfinite(x))
    return x;
  int e = (int)floor(log2(fabs(x)));
  if (e < emin)
    e = emin;
  double q = ldexp(1, e - mbits);
  return nearbyint(x / q) * q;
}

/* ---- random numbers (splitmix64) ------------------------------------------ */

static uint64_t rng;

static uint64_t next_u64(void) {
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int rnd(int n) { return n <= 1 ? 0 : (int)(next_u64() % (uint64_t)n); }
static int chance(int percent) { return rnd(100) < percent; }

static int stream_rnd(uint64_t *stream, int n);

/* Whether a choice takes an 8-bit type (an input's dtype, a cast, a
 * declared output) is drawn from a stream of its own: a kernel that draws
 * none comes out as before they existed. */
static uint64_t rng_8bit;

static int eight(int percent) { return stream_rnd(&rng_8bit, 100) < percent; }
static Dt eight_pick(const Dt *among, int n) { return among[stream_rnd(&rng_8bit, n)]; }
static const Dt f8_types[] = {T_F8E4M3, T_F8E5M2}, int8_types[] = {T_I8, T_U8};

/* ---- strings ---------------------------------------------------------------- */

/* Every string fmt() made, freed together when the program is written. */
static char **strings;
static size_t nstrings, strings_cap;

static void free_strings(void) {
  for (size_t i = 0; i < nstrings; i++)
    free(strings[i]);
  free(strings);
  strings = NULL;
  nstrings = strings_cap = 0;
}

static char *fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  char *s = NULL;
  if (vasprintf(&s, f, ap) < 0)
    abort();
  va_end(ap);
  if (nstrings == strings_cap) {
    strings_cap = strings_cap ? 2 * strings_cap : 1024;
    strings = realloc(strings, strings_cap * sizeof *strings);
    if (!strings)
      abort();
  }
  strings[nstrings++] = s;
  return s;
}

/* ---- values ------------------------------------------------------------------ */

/* A shape is the trailing `rank` axes of the kernel's full shape F; bit a of
 * `full` (a counts from F's last axis) says the axis has F's size, else it
 * is a literal 1. */
typedef struct Shape {
  int rank;
  unsigned full;
} Shape;

typedef struct Val {
  const char *text; /* te source, parenthesized when composite */
  Dt dt;
  Shape sh;
  double lo, hi; /* bounds of the value (NaN and inf from empty axes aside) */
  int exact;     /* the GPU and the reference compute the same bits */
  int weak;      /* a literal */
  int pure;      /* elementwise of inputs: no reduction or take inside */
  int noread;    /* never an operand (a NaN take, a foreign shape): an output */
} Val;

typedef struct Kernel {
  int rank;                 /* of F */
  const char *dim[MAXRANK]; /* F's dims, outermost first */
  int nsv;
  const char *sv[MAXSV];
  Val pool[MAXPOOL];
  int npool;
  int read[MAXPOOL];
  int ninputs;
  int nstmts;
  char *body;
  int vcount;
  int pos; /* percent of leaves that are positions or sizes (0: none) */
  int index;         /* k<index> */
  int explicit_form;
  const char *params; /* the declared inputs (take() appends its indices) */
  const char *ranges; /* `# conform: range` lines of the index inputs */
  int take;           /* the kernel gathers with take() */
  int take_at;        /* the statement that is surely a take */
  int multi;          /* it may take several indices along an axis */
  int nograd;         /* it did with a float take: no gradient kernel */
  int ntake;          /* index inputs declared */
} Kernel;

static Kernel *K;      /* the kernel being generated */
static int with_fns;   /* the file defines f_sq, f_mix, f_center */
static int no_reduce;  /* building a value take() gathers from: values made
                        * now are pure, leaves are pure, no reductions */

static const char *dim_text(int axis_from_end) {
  return K->dim[K->rank - 1 - axis_from_end];
}

static const char *shape_text(Shape s, int drop_ones) {
  char *t = fmt("[");
  int first = 1;
  for (int a = s.rank - 1; a >= 0; a--) {
    int is_full = (s.full >> a) & 1;
    if (!is_full && drop_ones)
      continue;
    t = fmt("%s%s%s", t, first ? "" : ", ", is_full ? dim_text(a) : "1");
    first = 0;
  }
  return fmt("%s]", t);
}

static Shape bcast(Shape a, Shape b) {
  Shape s = {a.rank > b.rank ? a.rank : b.rank, a.full | b.full};
  return s;
}

static double dmin(double a, double b) { return a < b ? a : b; }
static double dmax(double a, double b) { return a > b ? a : b; }
static double mag(const Val *v) { return dmax(fabs(v->lo), fabs(v->hi)); }

static Val mk(const char *text, Dt dt, Shape sh, double lo, double hi, int exact) {
  Val v = {text, dt, sh, lo, hi, exact, 0, no_reduce, 0};
  return v;
}

/* ---- dtype rules (language.md §8) ---------------------------------------------- */

static Dt promote(const Val *a, const Val *b) {
  if (a->weak && !b->weak) {
    if (is_float(a->dt) && !is_float(b->dt))
      return T_F32;
    return b->dt;
  }
  if (b->weak && !a->weak)
    return promote(b, a);
  Dt x = a->dt, y = b->dt;
  if (x == y)
    return x;
  if (dt_rank(x) == dt_rank(y)) /* i8 + u8: i32; f16 + bf16, f8 + f16: f32 */
    return is_float(x) ? T_F32 : T_I32;
  return dt_rank(x) > dt_rank(y) ? x : y;
}

/* The dtype of float math on a value of dtype t. */
static Dt math_dt(Dt t) {
  if (is_float(t))
    return t;
  return t == T_I64 ? T_F64 : T_F32;
}

/* ---- literals --------------------------------------------------------------------- */

static Val lit_float(double x) {
  Val v = mk(x < 0 ? fmt("(%g)", x) : fmt("%g", x), T_F32, (Shape){0, 0}, x, x, 1);
  if (!strchr(v.text, '.') && !strchr(v.text, 'e'))
    v.text = x < 0 ? fmt("(%g.0)", x) : fmt("%g.0", x);
  v.weak = 1;
  return v;
}

static Val lit_int(long x) {
  Val v = mk(x < 0 ? fmt("(%ld)", x) : fmt("%ld", x), T_I32, (Shape){0, 0}, (double)x,
             (double)x, 1);
  v.weak = 1;
  return v;
}

/* ---- the 8-bit types ----------------------------------------------------------------- */

static void int8_range(Dt t, double *lo, double *hi) {
  *lo = t == T_I8 ? -128 : 0;
  *hi = t == T_I8 ? 127 : 255;
}

/* An 8-bit integer operand that meets an integer literal it cannot hold
 * (sema refuses `u8 + (-1)` and `i8 * 200`, language.md §8.2) is widened
 * to i32 first.  A value of an 8-bit dtype is computed in i32, so the
 * widening only names its dtype. */
static void fit_literals(Val *a, Val *b) {
  for (int k = 0; k < 2; k++) {
    const Val *l = k ? b : a;
    Val *o = k ? a : b;
    double lo, hi;
    if (!l->weak || o->weak || is_float(l->dt) || !is_int8(o->dt))
      continue;
    int8_range(o->dt, &lo, &hi);
    if (l->lo < lo || l->hi > hi)
      *o = mk(fmt("i32(%s)", o->text), T_I32, o->sh, o->lo, o->hi, o->exact);
  }
}

/* Whether an exact value a may be cast to the 8-bit type t: to an f8, a
 * number that stays finite and, from an integer, converts to f32 exactly
 * (casts to f8 go through f32 on both sides); to i8 or u8, any number
 * (from a float it truncates and saturates, from an integer it wraps). */
static int cast8_ok(const Val *a, Dt t) {
  if (!a->exact || a->dt == T_BOOL || a->weak)
    return 0;
  return !is_f8(t) || mag(a) <= f8_max(t);
}

/* t(a), an exact value a cast to the 8-bit type t (cast8_ok): exact too,
 * for both sides round (to nearest even) or truncate the same bits. */
static Val cast8(Val a, Dt t) {
  double lo = a.lo, hi = a.hi, rl, rh;
  if (is_f8(t)) {
    lo = round_f8(t, lo), hi = round_f8(t, hi);
  } else {
    int8_range(t, &rl, &rh);
    if (is_float(a.dt)) /* truncates and saturates */
      lo = dmax(rl, dmin(rh, trunc(lo))), hi = dmax(rl, dmin(rh, trunc(hi)));
    else if (lo < rl || hi > rh) /* wraps */
      lo = rl, hi = rh;
  }
  return mk(fmt("%s(%s)", dt_name[t], a.text), t, a.sh, lo, hi, 1);
}

/* ---- the pool of named values ------------------------------------------------------- */

/* Whether a pool value may be an operand now. */
static int pickable(const Val *v) { return !v->noread && (!no_reduce || v->pure); }

static int pick_pool(int (*ok)(const Val *)) {
  int idx[MAXPOOL], n = 0;
  for (int i = 0; i < K->npool; i++)
    if (pickable(&K->pool[i]) && ok(&K->pool[i]))
      idx[n++] = i;
  if (n == 0)
    return -1;
  for (int j = 0; j < n; j++) /* inputs not read yet first */
    if (idx[j] < K->ninputs && !K->read[idx[j]] && chance(60))
      return idx[j];
  /* favour recent values: longer chains */
  return chance(50) ? idx[n - 1 - rnd(n < 3 ? n : 3)] : idx[rnd(n)];
}

static int ok_float(const Val *v) { return is_float(v->dt); }
static int ok_int(const Val *v) { return is_int(v->dt); }
static int ok_bool(const Val *v) { return v->dt == T_BOOL; }
static int ok_exact_num(const Val *v) {
  return v->exact && v->dt != T_BOOL && mag(v) < 1e6;
}

static Val assign(Val v);

/* The value itself when it is a name or short, else a new statement
 * binding it (so that guards which repeat their operand stay small). */
static Val named(Val v) {
  if (strlen(v.text) <= 24 || v.weak)
    return v;
  return assign(v);
}

/* ---- guards and squashing ------------------------------------------------------------- */

static Val un(const char *op, Val a, Dt dt, double lo, double hi) {
  return mk(fmt("%s(%s)", op, a.text), dt, a.sh, lo, hi, 0);
}

/* A value of the same sign structure within [-lim, lim]. */
static Val squash(Val a, double lim) {
  if (mag(&a) <= lim && !isnan(a.lo))
    return a;
  a = named(a);
  Dt d = math_dt(a.dt);
  switch (rnd(5)) {
  case 0:
    return mk(fmt("clamp(%s, %g, %g)", a.text, -lim, lim), a.dt, a.sh, dmax(a.lo, -lim),
              dmin(a.hi, lim), a.exact);
  case 1:
    return mk(fmt("(%g * tanh(%s))", lim, a.text), d, a.sh, -lim, lim, 0);
  case 2:
    return mk(fmt("(%g * atan(%s))", lim / 1.6, a.text), d, a.sh, -lim, lim, 0);
  case 3:
    return mk(fmt("(%g * erf(%s))", lim, a.text), d, a.sh, -lim, lim, 0);
  default:
    return mk(fmt("(%s / (abs(%s) + %g))", a.text, a.text, 1 / lim), d, a.sh, -lim, lim, 0);
  }
}

/* A float value at least `floor` > 0. */
static Val positive(Val a, double floor) {
  if (a.lo >= floor)
    return a;
  Val s = named(squash(a, 8));
  Dt d = math_dt(s.dt);
  switch (rnd(4)) {
  case 0:
    return mk(fmt("(abs(%s) + %g)", s.text, floor), d, s.sh, floor, mag(&s) + floor, 0);
  case 1:
    return mk(fmt("(%s * %s + %g)", s.text, s.text, floor), d, s.sh, floor,
              mag(&s) * mag(&s) + floor, 0);
  case 2:
    return mk(fmt("(exp(%s) + %g)", squash(s, 3).text, floor), d, s.sh, floor,
              exp(3) + floor, 0);
  default:
    return mk(fmt("(sigmoid(%s) + %g)", s.text, floor), d, s.sh, floor, 1 + floor, 0);
  }
}

/* The value as a float (math on integers computes in f32/f64 anyway; bool
 * needs a cast). */
static Val as_float(Val a) {
  if (is_float(a.dt) && a.exact && !a.weak && mag(&a) < 6e4 && chance(25)) {
    Dt h = chance(50) ? T_F16 : T_BF16; /* rounds the same exact value */
    if (eight(30)) { /* or an 8-bit float */
      Dt f = eight_pick(f8_types, 2);
      if (cast8_ok(&a, f))
        return cast8(a, f);
    }
    return mk(fmt("%s(%s)", dt_name[h], a.text), h, a.sh, a.lo, a.hi, 1);
  }
  if (is_float(a.dt))
    return a;
  if (a.dt == T_BOOL || mag(&a) > (1 << 20))
    return mk(fmt("f32(%s)", a.dt == T_BOOL ? a.text
                                            : fmt(is_int8(a.dt) ? "(i32(%s) %% 1000)" : "(%s %% 1000)", a.text)),
              T_F32, a.sh, a.dt == T_BOOL ? 0 : -1000, a.dt == T_BOOL ? 1 : 1000, a.exact);
  if (a.exact && eight(8)) { /* an exact integer as an 8-bit float */
    Dt f = eight_pick(f8_types, 2);
    if (cast8_ok(&a, f))
      return cast8(a, f);
  }
  Dt d = rnd(3) == 0 ? (chance(50) ? T_F64 : T_F32) : math_dt(a.dt);
  return mk(fmt("%s(%s)", dt_name[d], a.text), d, a.sh, a.lo, a.hi, a.exact);
}

/* ---- expressions -------------------------------------------------------------------- */

static Val gen_float(int depth);
static Val gen_int(int depth);
static Val gen_bool(int depth);
static Val gen_exact(int depth);
static Val exact_op(Val a, Val b, int k);
static Val exact_leaf(void);
static int pos_leaf(void);
static int pos_float(Val *out);
static int pos_int(Val *out);
static int pos_bool(Val *out);
static Shape reduce_shape(Shape s, unsigned reduced);

static Val float_leaf(void) {
  Val p;
  if (pos_leaf() && pos_float(&p))
    return p;
  int i = pick_pool(ok_float);
  if (i >= 0 && chance(85))
    return K->pool[i];
  i = pick_pool(ok_exact_num);
  if (i >= 0)
    return as_float(K->pool[i]);
  if (chance(50))
    return lit_float((double)(rnd(9) - 4) / 2 + 0.25);
  return as_float(gen_int(0));
}

static const struct {
  const char *name;
  int need; /* 0 any, 1 |v|<=3, 2 v>=0.25, 3 |v|<=8, 4 |v|<=0.9, 5 |v|<=1.2, 6 v>=0 */
} float_unary[] = {
    {"abs", 0},  {"exp", 1},   {"exp2", 1},      {"expm1", 1},    {"log", 2},     {"log2", 2},
    {"log10", 2}, {"log1p", 6}, {"sqrt", 2},      {"rsqrt", 2},    {"sin", 3},     {"cos", 3},
    {"tan", 5},  {"asin", 4},  {"acos", 4},      {"atan", 0},     {"sinh", 1},    {"cosh", 1},
    {"tanh", 0}, {"erf", 0},   {"sigmoid", 3},   {"relu", 0},     {"gelu", 3},    {"gelu_tanh", 3},
    {"silu", 3}, {"softplus", 3},
};

/* f(v) bounds for a monotone-ish function over [lo, hi]: sampled. */
static void bounds_of(const char *name, double lo, double hi, double *olo, double *ohi) {
  double mn = INFINITY, mx = -INFINITY;
  for (int i = 0; i <= 64; i++) {
    double x = lo + (hi - lo) * i / 64.0, y;
    if (!strcmp(name, "abs")) y = fabs(x);
    else if (!strcmp(name, "exp")) y = exp(x);
    else if (!strcmp(name, "exp2")) y = exp2(x);
    else if (!strcmp(name, "expm1")) y = expm1(x);
    else if (!strcmp(name, "log")) y = log(x);
    else if (!strcmp(name, "log2")) y = log2(x);
    else if (!strcmp(name, "log10")) y = log10(x);
    else if (!strcmp(name, "log1p")) y = log1p(x);
    else if (!strcmp(name, "sqrt")) y = sqrt(x);
    else if (!strcmp(name, "rsqrt")) y = 1 / sqrt(x);
    else if (!strcmp(name, "sin") || !strcmp(name, "cos")) y = 0, mn = -1, mx = 1;
    else if (!strcmp(name, "tan")) y = tan(x);
    else if (!strcmp(name, "asin")) y = asin(x);
    else if (!strcmp(name, "acos")) y = acos(x);
    else if (!strcmp(name, "atan")) y = atan(x);
    else if (!strcmp(name, "sinh")) y = sinh(x);
    else if (!strcmp(name, "cosh")) y = cosh(x);
    else if (!strcmp(name, "tanh")) y = tanh(x);
    else if (!strcmp(name, "erf")) y = erf(x);
    else if (!strcmp(name, "sigmoid")) y = 1 / (1 + exp(-x));
    else if (!strcmp(name, "relu")) y = x > 0 ? x : 0;
    else if (!strcmp(name, "softplus")) y = log1p(exp(x));
    else y = x; /* gelu, silu: within [min(x,0)-0.2, max(x,0)] */
    mn = dmin(mn, y), mx = dmax(mx, y);
  }
  if (!strcmp(name, "gelu") || !strcmp(name, "gelu_tanh") || !strcmp(name, "silu"))
    mn = dmin(mn, 0) - 0.3, mx = dmax(mx, 0);
  *olo = mn, *ohi = mx;
}

static Val float_unary_op(Val a) {
  int k = rnd((int)(sizeof float_unary / sizeof float_unary[0]));
  const char *op = float_unary[k].name;
  Dt d = math_dt(a.dt);
  switch (float_unary[k].need) {
  case 1: a = squash(a, 3); break;
  case 2: a = positive(a, 0.25); break;
  case 3: a = squash(a, 8); break;
  case 4:
    if (mag(&a) > 0.9)
      a = mk(fmt("(0.9 * tanh(%s))", a.text), d, a.sh, -0.9, 0.9, 0);
    break;
  case 5: a = squash(a, 1.2); break;
  case 6:
    if (a.lo < 0)
      a = mk(fmt("abs(%s)", squash(a, 8).text), d, a.sh, 0, 8, 0);
    break;
  default: break;
  }
  double lo, hi;
  bounds_of(op, a.lo, a.hi, &lo, &hi);
  Val r = un(op, a, math_dt(a.dt), lo, hi);
  if (!strcmp(op, "abs") || !strcmp(op, "relu")) {
    r.exact = a.exact;
    r.dt = a.dt;
  }
  return r;
}

/* An f64 operation on a float value computed (not exactly) in f32 would
 * give an f64 output only f32-accurate, which the f64 tolerance rejects:
 * such a pair computes in f32 (the f64 side is cast down). */
static int lowp_float(const Val *v) { return is_float(v->dt) && v->dt != T_F64 && !v->exact; }

static Val to_f32(Val a) {
  return mk(fmt("f32(%s)", a.text), T_F32, a.sh, a.lo, a.hi, a.exact);
}

static void harmonize(Val *a, Val *b) {
  if (a->dt == T_F64 && lowp_float(b))
    *a = to_f32(*a);
  else if (b->dt == T_F64 && lowp_float(a))
    *b = to_f32(*b);
}

/* ---- positions and sizes as values (language.md §8.5, §9.6) ----------------------- */

/* Whether a kernel, and which of its leaves, use positions and sizes is
 * drawn from a stream of its own (a kernel that draws none consumes `rng`
 * as it did before they existed). */
static uint64_t rng_pos;

/* rnd(n) drawn from the stream `*stream` instead of rng. */
static int stream_rnd(uint64_t *stream, int n) {
  uint64_t keep = rng;
  rng = *stream;
  int r = rnd(n);
  *stream = rng;
  rng = keep;
  return r;
}

static int pos_rnd(int n) { return stream_rnd(&rng_pos, n); }

/* A rank-0 kernel has neither positions nor size variables. */
static int pos_leaf(void) { return K->pos > 0 && K->rank > 0 && pos_rnd(100) < K->pos; }

/* The largest size a binding gives a size variable (tecc-conform's profiles
 * go to 4250663); a literal dim is its value. */
static double axis_size_bound(int axis_from_end) {
  const char *d = dim_text(axis_from_end);
  return isdigit((unsigned char)d[0]) ? atof(d) : 5e6;
}

/* The size variable of x's axis a (from the end) when x is full along it
 * and the dim is not a literal, else NULL. */
static const char *size_var_of(Shape s, int a) {
  if (!((s.full >> a) & 1))
    return NULL;
  const char *d = dim_text(a);
  return isdigit((unsigned char)d[0]) ? NULL : d;
}

/* A pool value of rank >= 1 (any dtype: index() only uses its shape), or
 * -1. */
static int pick_ranked(void) {
  int idx[MAXPOOL], n = 0;
  for (int i = 0; i < K->npool; i++)
    if (K->pool[i].sh.rank > 0 && pickable(&K->pool[i]))
      idx[n++] = i;
  return n ? idx[rnd(n)] : -1;
}

/* An axis of s (from the end), mostly a full one. */
static int pick_axis(Shape s) {
  if (s.full && chance(90)) {
    int a;
    do
      a = rnd(s.rank);
    while (!((s.full >> a) & 1));
    return a;
  }
  return rnd(s.rank);
}

/* index(x, a): i64, x's rank, full only along a (when x is); its values
 * are the positions 0 .. size - 1 (all 0 along a literal 1). */
static Val index_of(const Val *x, int a) {
  Shape s = {x->sh.rank, x->sh.full & (1u << a)};
  int ax = chance(50) ? -(a + 1) : x->sh.rank - 1 - a;
  return mk(fmt("index(%s, %d)", x->text, ax), T_I64, s, 0,
            s.full ? axis_size_bound(a) - 1 : 0, 1);
}

static const char *pick_size(void) { return K->nsv ? K->sv[rnd(K->nsv)] : NULL; }

/* A small weak integer from a size variable's value. */
static Val size_small(const char *sz) {
  int k = 2 + rnd(6);
  Val v;
  switch (rnd(3)) {
  case 0: v = mk(fmt("(%s %% %d)", sz, k), T_I32, (Shape){0, 0}, 0, k - 1, 1); break;
  case 1: v = mk(fmt("((%s + 1) %% %d)", sz, k), T_I32, (Shape){0, 0}, 0, k - 1, 1); break;
  default: v = mk(fmt("minimum(%s, %d)", sz, k), T_I32, (Shape){0, 0}, 0, k, 1); break;
  }
  v.weak = 1;
  return v;
}

/* A small exact integer: a position modulo k (i64), or a size's small
 * weak value.  0 when the kernel has neither. */
static int pos_int(Val *out) {
  int i = pick_ranked();
  if (i >= 0 && (!K->nsv || chance(65))) {
    const Val *x = &K->pool[i];
    Val ix = index_of(x, pick_axis(x->sh));
    int k = 2 + rnd(8);
    if (ix.hi < k)
      *out = ix;
    else
      *out = mk(fmt("(%s %% %d)", ix.text, k), T_I64, ix.sh, 0, k - 1, 1);
    return 1;
  }
  if (!K->nsv)
    return 0;
  *out = size_small(pick_size());
  return 1;
}

/* A float leaf within [-8, 8] from positions and sizes:
 *   - a small exact integer as f32/f64;
 *   - a position fraction, index(X, a) / D in [0, 1) (D, X's size along a,
 *     is 0 only where X is empty), or (index % 100) * 0.01;
 *   - a float value divided by a size: x / D only where x has the axis D
 *     (empty when D is 0), else x / (D + 1), or times D % k; 8- and 16-bit
 *     x in f32 first (a size over 65504 is inf in f16, over 464 NaN in
 *     f8e4m3).
 * Sizes and positions carry no gradient, so grad kernels only see 1 / D
 * as a factor.  0 when the kernel has none. */
static int pos_float(Val *out) {
  int r = rnd(10);
  if (r < 4) { /* position fractions */
    int i = pick_ranked();
    if (i >= 0 && K->pool[i].sh.full) {
      const Val *x = &K->pool[i];
      int a;
      do
        a = rnd(x->sh.rank);
      while (!((x->sh.full >> a) & 1));
      Val ix = index_of(x, a);
      switch (rnd(4)) {
      case 0:
        *out = mk(fmt("(%s / %s)", ix.text, dim_text(a)), T_F64, ix.sh, 0, 1, 0);
        return 1;
      case 1:
        *out = mk(fmt("(f32(%s) / %s)", ix.text, dim_text(a)), T_F32, ix.sh, 0, 1, 0);
        return 1;
      case 2:
        *out = mk(fmt("(f32(%s %% 100) * 0.01)", ix.text), T_F32, ix.sh, 0, 0.99, 0);
        return 1;
      default: /* exact: a position times a power of two, kept small */
        *out = mk(fmt("(f32(%s %% 16) * 0.5)", ix.text), T_F32, ix.sh, 0, 7.5, 1);
        return 1;
      }
    }
  } else if (r < 7 && K->nsv) { /* a float value scaled by a size */
    int i = pick_pool(ok_float);
    if (i >= 0) {
      Val x = squash(K->pool[i], 8);
      if (is_lowp_storage(x.dt)) /* a size is inf or NaN in them */
        x = to_f32(x);
      const char *own[MAXRANK];
      int nown = 0;
      for (int a = 0; a < x.sh.rank; a++)
        if (size_var_of(x.sh, a))
          own[nown++] = size_var_of(x.sh, a);
      double lo = dmin(x.lo, 0), hi = dmax(x.hi, 0);
      if (nown && chance(70)) {
        const char *sz = own[rnd(nown)];
        *out = mk(chance(50) ? fmt("(%s / %s)", x.text, sz) : fmt("(%s * (1.0 / %s))", x.text, sz),
                  x.dt, x.sh, lo, hi, 0);
        return 1;
      }
      const char *sz = pick_size();
      switch (rnd(3)) {
      case 0: *out = mk(fmt("(%s / (%s + 1))", x.text, sz), x.dt, x.sh, lo, hi, 0); return 1;
      case 1:
        *out = mk(fmt("(%s * (1.0 / (%s + 1)))", x.text, sz), x.dt, x.sh, lo, hi, 0);
        return 1;
      default: {
        /* a small integer factor, x within 8 / k; not exact (x * 7 rounds) */
        Val k = size_small(sz);
        x = squash(x, 8 / k.hi);
        *out = mk(fmt("(%s * %s)", x.text, k.text), x.dt, x.sh, dmin(x.lo * k.hi, 0),
                  dmax(x.hi * k.hi, 0), 0);
        return 1;
      }
      }
    }
  }
  Val e;
  if (!pos_int(&e))
    return 0;
  Dt d = chance(70) ? T_F32 : T_F64;
  *out = mk(fmt("%s(%s)", dt_name[d], e.text), d, e.sh, e.lo, e.hi, 1);
  return 1;
}

/* A mask from positions: causal (index(X, a) > index(X, b)), periodic
 * (index % k == j), a position against a size (index(X, a) < D // 2), or
 * against X's argmax or argmin along the axis, mostly == or != (a one-hot
 * of a value of the row, as cross-entropy's label: the stitch kernels
 * test it once a pack, tecc::by_pack). */
static int pos_bool(Val *out) {
  static const char *const cmp[] = {"==", "!=", "<", "<=", ">", ">="};
  int i = pick_ranked();
  if (i < 0)
    return 0;
  const Val *x = &K->pool[i];
  const char *op = cmp[rnd(6)];
  int a = pick_axis(x->sh);
  Val ix = index_of(x, a);
  switch (rnd(4)) {
  case 0:
    if (x->sh.rank >= 2) {
      int b;
      do
        b = pick_axis(x->sh);
      while (b == a && chance(95));
      if (b == a)
        b = (a + 1) % x->sh.rank;
      Val iy = index_of(x, b);
      *out = mk(fmt("(%s %s %s)", ix.text, op, iy.text), T_BOOL, bcast(ix.sh, iy.sh), 0, 1, 1);
      return 1;
    }
    break;
  case 1: {
    const char *sz = size_var_of(x->sh, a);
    if (!sz)
      sz = pick_size();
    if (!sz)
      break;
    const char *rhs = rnd(3) == 0 ? fmt("(%s - 1)", sz) : chance(50) ? fmt("(%s // 2)", sz)
                                                                      : size_small(sz).text;
    *out = mk(fmt("(%s %s %s)", ix.text, op, rhs), T_BOOL, ix.sh, 0, 1, 1);
    return 1;
  }
  case 2:
    if (((x->sh.full >> a) & 1) && x->exact && !x->weak && !no_reduce && x->dt != T_BOOL) {
      Val am = mk(fmt("%s(%s, %d)", chance(50) ? "argmax" : "argmin", x->text, -(a + 1)), T_I64,
                  reduce_shape(x->sh, 1u << a), 0, axis_size_bound(a) - 1, 1);
      const char *eq = chance(70) ? (chance(70) ? "==" : "!=") : op;
      *out = mk(fmt("(%s %s %s)", ix.text, eq, am.text), T_BOOL, bcast(ix.sh, am.sh), 0, 1, 1);
      return 1;
    }
    break;
  default:
    break;
  }
  int k = 2 + rnd(6);
  *out = mk(fmt("((%s %% %d) %s %d)", ix.text, k, op, rnd(k)), T_BOOL, ix.sh, 0, 1, 1);
  return 1;
}

static Val float_binary(int depth) {
  Val a = float_leaf(), b;
  if (depth > 0 && chance(60))
    a = gen_float(depth - 1);
  b = depth > 0 && chance(40) ? gen_float(depth - 1) : float_leaf();
  a = squash(a, 8);
  b = squash(b, 8);
  harmonize(&a, &b);
  Shape s = bcast(a.sh, b.sh);
  Dt d = promote(&a, &b);
  switch (rnd(9)) {
  case 0:
    return mk(fmt("(%s + %s)", a.text, b.text), d, s, a.lo + b.lo, a.hi + b.hi, 0);
  case 1:
    return mk(fmt("(%s - %s)", a.text, b.text), d, s, a.lo - b.hi, a.hi - b.lo, 0);
  case 2: {
    double m = mag(&a) * mag(&b);
    return mk(fmt("(%s * %s)", a.text, b.text), d, s, -m, m, 0);
  }
  case 3: {
    Val p = positive(b, 0.5);
    harmonize(&a, &p);
    double m = mag(&a) / 0.5;
    Dt dd = promote(&a, &p);
    if (!is_float(dd))
      dd = math_dt(dd);
    return mk(fmt("(%s / %s)", a.text, p.text), dd, bcast(a.sh, p.sh), -m, m, 0);
  }
  case 4:
    return mk(fmt("maximum(%s, %s)", a.text, b.text), d, s, dmax(a.lo, b.lo), dmax(a.hi, b.hi),
              a.exact && b.exact);
  case 5:
    return mk(fmt("minimum(%s, %s)", a.text, b.text), d, s, dmin(a.lo, b.lo), dmin(a.hi, b.hi),
              a.exact && b.exact);
  case 6: { /* pow with a positive base */
    Val p = positive(squash(a, 3), 0.5), e = squash(b, 2);
    harmonize(&p, &e);
    double hi = pow(mag(&p) > 1 ? mag(&p) : 2, 2);
    const char *t = chance(50) ? fmt("(%s ** %s)", p.text, e.text)
                               : fmt("pow(%s, %s)", p.text, e.text);
    return mk(t, math_dt(promote(&p, &e)), bcast(p.sh, e.sh), 0, hi, 0);
  }
  case 7: { /* small literal exponent */
    int e = rnd(4) + 1;
    Val s3 = squash(a, 3);
    double m = pow(mag(&s3), e);
    return mk(fmt("(%s ** %d)", s3.text, e), math_dt(s3.dt), s3.sh, e % 2 ? -m : 0, m, 0);
  }
  default: { /* atan2 away from the branch cut */
    Val x = positive(b, 0.5);
    harmonize(&a, &x);
    return mk(fmt("atan2(%s, %s)", a.text, x.text), math_dt(promote(&a, &x)), bcast(a.sh, x.sh),
              -1.58, 1.58, 0);
  }
  }
}

/* Reduction axes of a value of rank r: "" (all) or ", a, b" (random order,
 * negative or positive). */
static const char *axes_text(int r, unsigned *reduced) {
  if (r == 0 || chance(15)) {
    *reduced = (1u << r) - 1;
    return "";
  }
  unsigned set = 0;
  while (!set)
    set = (unsigned)rnd(1 << r);
  *reduced = set;
  const char *t = "";
  for (int a = 0; a < r; a++)
    if ((set >> a) & 1) {
      int pos = r - 1 - a; /* from the front */
      t = chance(50) ? fmt("%s, %d", t, -(a + 1)) : fmt("%s, %d", t, pos);
    }
  return t;
}

/* Elements a reduction over `reduced` may add: literal dims count exactly,
 * size variables up to 1e6. */
static double reduced_count(Shape s, unsigned reduced) {
  double n = 1;
  for (int a = 0; a < s.rank; a++)
    if (((reduced >> a) & 1) && ((s.full >> a) & 1)) {
      const char *d = dim_text(a);
      n *= (d[0] >= '0' && d[0] <= '9') ? atof(d) : 1e6;
    }
  return n;
}

static Shape reduce_shape(Shape s, unsigned reduced) {
  s.full &= ~reduced;
  return s;
}

static Val float_reduce(int depth) {
  Val a = depth > 0 ? gen_float(depth - 1) : float_leaf();
  if (a.sh.rank == 0)
    return float_unary_op(a);
  unsigned red;
  const char *ax = axes_text(a.sh.rank, &red);
  Shape s = reduce_shape(a.sh, red);
  double n = reduced_count(a.sh, red);
  switch (rnd(6)) {
  case 0:
  case 1: { /* sum of one sign, or in f64 */
    if (a.lo < 0 && a.hi > 0 && chance(25) && (a.exact || a.dt == T_F64))
      return mk(fmt("sum(f64(%s)%s)", a.text, ax), T_F64, s, -mag(&a) * n, mag(&a) * n, 0);
    if (a.lo < 0)
      a = positive(a, chance(50) ? 0 : 0.5);
    return mk(fmt("sum(%s%s)", a.text, ax), a.dt, s, 0, a.hi * n, 0);
  }
  case 2:
    a = squash(a, 2);
    if (a.lo < 0 && chance(50))
      a = positive(a, 0.1);
    return mk(fmt("mean(%s%s)", a.text, ax), math_dt(a.dt), s, a.lo, a.hi, 0);
  case 3:
    a = squash(a, 4);
    return mk(fmt("var(%s%s)", a.text, ax), math_dt(a.dt), s, 0, mag(&a) * mag(&a), 0);
  case 4: { /* product of values near 1: its rounding errors add up
             * (K eps when the factors are equal), so only over literal
             * dims; over size variables, a product of signs is exact */
    if (n <= 512) {
      const char *base = fmt("(1 + 0.001 * tanh(%s))", a.text);
      return mk(fmt("prod(%s%s)", base, ax), math_dt(a.dt), s, 0, 3, 0);
    }
    Val e = exact_leaf();
    Shape sh = bcast(e.sh, a.sh);
    unsigned red2;
    const char *ax2 = axes_text(sh.rank, &red2);
    return mk(fmt("prod(where(%s > 0, 1.0, -1.0) * where(isnan(%s), -1.0, 1.0)%s)", e.text,
                  a.text, ax2), T_F32, reduce_shape(sh, red2), -1, 1, 1);
  }
  default: {
    const char *op = chance(50) ? "max" : "min";
    return mk(fmt("%s(%s%s)", op, a.text, ax), a.dt, s, a.lo, a.hi, a.exact);
  }
  }
}

static Val float_where(int depth) {
  Val c = gen_bool(depth > 0 ? depth - 1 : 0);
  Val a = squash(depth > 0 ? gen_float(depth - 1) : float_leaf(), 8);
  Val b = squash(float_leaf(), 8);
  harmonize(&a, &b);
  Dt d = promote(&a, &b);
  return mk(fmt("where(%s, %s, %s)", c.text, a.text, b.text), d,
            bcast(c.sh, bcast(a.sh, b.sh)), dmin(a.lo, b.lo), dmax(a.hi, b.hi),
            a.exact && b.exact);
}

static Val float_fn(int depth) {
  Val a = squash(depth > 0 ? gen_float(depth - 1) : float_leaf(), 2);
  Val b = squash(float_leaf(), 2);
  harmonize(&a, &b);
  switch (rnd(3)) {
  case 0:
    return mk(fmt("f_sq(%s)", a.text), math_dt(a.dt), a.sh, 0, 4, 0);
  case 1:
    return mk(fmt("f_mix(%s, %s)", a.text, b.text), math_dt(promote(&a, &b)), bcast(a.sh, b.sh),
              -2, 6, 0);
  default:
    if (a.sh.rank == 0 || no_reduce) /* f_center reduces */
      return mk(fmt("f_sq(%s)", a.text), math_dt(a.dt), a.sh, 0, 4, 0);
    return mk(fmt("f_center(%s, %d)", a.text, chance(50) ? -1 : a.sh.rank - 1), a.dt, a.sh, -4,
              4, 0);
  }
}

static Val gen_float(int depth) {
  if (depth <= 0)
    return float_leaf();
  int r = rnd(100);
  if (r < 30)
    return float_unary_op(gen_float(depth - 1));
  if (r < 62)
    return float_binary(depth - 1);
  if (r < 75)
    return no_reduce ? float_binary(depth - 1) : float_reduce(depth - 1);
  if (r < 83)
    return float_where(depth - 1);
  if (r < 90 && with_fns)
    return float_fn(depth - 1);
  if (r < 95) { /* exact float operations */
    Val e = gen_exact(depth - 1);
    return as_float(e);
  }
  Val a = squash(gen_float(depth - 1), 8);
  double lo = rnd(3) - 2.5, hi = lo + 1 + rnd(4);
  return mk(fmt("clamp(%s, %g, %g)", a.text, lo, hi), a.dt, a.sh, dmax(a.lo, lo), dmin(a.hi, hi),
            a.exact);
}

/* Exact values: integers, and floats computed without rounding. */
static Val exact_leaf(void) {
  Val p;
  if (pos_leaf() && pos_int(&p))
    return p;
  int i = pick_pool(ok_exact_num);
  if (i >= 0 && chance(85))
    return K->pool[i];
  return chance(50) ? lit_int(rnd(7) - 3) : lit_float((rnd(8) - 4) / 2.0);
}

static Val gen_exact(int depth) {
  Val a = depth > 0 && chance(60) ? gen_exact(depth - 1) : exact_leaf();
  if (mag(&a) > 1e4)
    a = mk(fmt("(%s %% %d)", a.text, 7 + rnd(20)), a.dt, a.sh, -30, 30, a.exact);
  if (depth <= 0)
    return a;
  Val b = exact_leaf();
  fit_literals(&a, &b);
  int k = rnd(12);
  Val r = exact_op(a, b, k);
  /* literal-only arithmetic stays weak (language.md §8.2): an integer
   * literal must fit the 8-bit type it meets */
  static const int unary[12] = {1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 1};
  if (unary[k])
    r.weak = a.weak;
  return r;
}

/* Exact operation k of gen_exact on a (and b). */
static Val exact_op(Val a, Val b, int k) {
  Dt dfl = is_float(a.dt) ? a.dt : T_F32;
  switch (k) {
  case 0: return mk(fmt("(-%s)", a.text), a.dt, a.sh, -a.hi, -a.lo, 1);
  case 1: return mk(fmt("abs(%s)", a.text), a.dt, a.sh, 0, mag(&a), 1);
  case 2:
  case 3: {
    static const char *const r[] = {"floor", "ceil", "round", "trunc"};
    Val h = a;
    if (is_int(a.dt) && mag(&a) < 1e4) /* halves: round() ties to even */
      h = mk(fmt("(%s / 2)", a.text), math_dt(a.dt), a.sh, a.lo / 2, a.hi / 2, 1);
    return mk(fmt("%s(%s)", r[rnd(4)], h.text), h.dt, h.sh, h.lo - 1, h.hi + 1, 1);
  }
  case 4: return mk(fmt("sign(%s)", a.text), a.dt, a.sh, -1, 1, 1);
  case 5: {
    Val r = mk(fmt("maximum(%s, %s)", a.text, b.text), promote(&a, &b), bcast(a.sh, b.sh),
               dmax(a.lo, b.lo), dmax(a.hi, b.hi), 1);
    r.weak = a.weak && b.weak;
    return r;
  }
  case 6: { /* floor division and modulo by an exact non-zero float, or ints */
    Val d = is_float(a.dt) || is_float(b.dt) ? lit_float(chance(50) ? 0.75 : 1.5) : b;
    if (d.lo == 0 && d.hi == 0)
      d = lit_int(3);
    const char *op = chance(50) ? "//" : "%";
    double m = mag(&a) / (is_float(d.dt) ? 0.75 : 1) + mag(&d) + 1;
    Val r = mk(fmt("(%s %s %s)", a.text, op, d.text), promote(&a, &d), bcast(a.sh, d.sh), -m, m, 1);
    r.weak = a.weak && d.weak;
    return r;
  }
  case 7: { /* times a power of two */
    int e = rnd(5) - 2;
    return mk(fmt("(%s * %g)", a.text, ldexp(1, e)), is_float(a.dt) || e >= 0 ? a.dt : T_F32, a.sh,
              dmin(a.lo * ldexp(1, e), a.hi * ldexp(1, e)), dmax(a.lo * ldexp(1, e), a.hi * ldexp(1, e)), 1);
  }
  case 8:
    if (a.sh.rank > 0 && !no_reduce) {
      unsigned red;
      const char *ax = axes_text(a.sh.rank, &red);
      return mk(fmt("%s(%s%s)", chance(50) ? "max" : "min", a.text, ax), a.dt,
                reduce_shape(a.sh, red), a.lo, a.hi, 1);
    }
    return a;
  case 9: { /* a cast; to a 16-bit float only from floats */
    if (eight(25)) { /* to an 8-bit type, f8 only while finite */
      Dt to = eight(50) ? eight_pick(f8_types, 2) : eight_pick(int8_types, 2);
      if (!cast8_ok(&a, to))
        to = eight_pick(int8_types, 2);
      if (cast8_ok(&a, to))
        return cast8(a, to);
    }
    Dt to = (Dt)(T_I32 + rnd(6));
    if ((to == T_F16 || to == T_BF16) && !is_float(a.dt))
      to = T_F32;
    double lo = a.lo, hi = a.hi;
    if (is_int(to) && is_float(a.dt))
      lo = trunc(lo), hi = trunc(hi);
    return mk(fmt("%s(%s)", dt_name[to], a.text), to, a.sh, lo, hi, 1);
  }
  case 10: {
    Val c = gen_bool(0);
    return mk(fmt("where(%s, %s, %s)", c.text, a.text, b.text), promote(&a, &b),
              bcast(c.sh, bcast(a.sh, b.sh)), dmin(a.lo, b.lo), dmax(a.hi, b.hi), 1);
  }
  default: {
    (void)dfl;
    double lo = -2, hi = 2;
    if (is_int(a.dt)) /* u8 takes no negative literal */
      return mk(fmt("clamp(%s, %d, %d)", a.text, a.dt == T_U8 ? 0 : -2, 3), a.dt, a.sh,
                a.dt == T_U8 ? 0 : -2, 3, 1);
    return mk(fmt("clamp(%s, %g, %g)", a.text, lo, hi - 0.5), a.dt, a.sh, lo, hi - 0.5, 1);
  }
  }
}

/* An operation on a literal alone is a literal (weak) too. */
static Val keep_weak(Val r, const Val *a) {
  r.weak = a->weak;
  return r;
}

static Val int_leaf(void) {
  Val p;
  if (pos_leaf() && pos_int(&p))
    return p;
  int i = pick_pool(ok_int);
  if (i >= 0 && chance(80))
    return K->pool[i];
  i = pick_pool(ok_exact_num);
  if (i >= 0 && is_float(K->pool[i].dt) && mag(&K->pool[i]) < 1e6) {
    Val f = K->pool[i];
    Dt to = chance(50) ? T_I32 : T_I64;
    if (eight(15)) { /* truncates and saturates */
      Val f4 = mk(fmt("(%s * 4)", f.text), f.dt, f.sh, f.lo * 4, f.hi * 4, 1);
      Val c = cast8(f4, eight_pick(int8_types, 2));
      c.text = fmt("%s%s", dt_name[c.dt], f4.text);
      return c;
    }
    return mk(fmt("%s(%s * 4)", dt_name[to], f.text), to, f.sh, trunc(f.lo * 4), trunc(f.hi * 4), 1);
  }
  i = pick_pool(ok_bool);
  if (i >= 0)
    return mk(fmt("i32(%s)", K->pool[i].text), T_I32, K->pool[i].sh, 0, 1, 1);
  return lit_int(rnd(11) - 5);
}

static Val gen_int(int depth) {
  Val a = depth > 0 && chance(60) ? gen_int(depth - 1) : int_leaf();
  if (depth <= 0)
    return a;
  Val b = int_leaf();
  if (a.weak && b.weak) /* literal-only arithmetic says little */
    return a;
  fit_literals(&a, &b);
  Shape s = bcast(a.sh, b.sh);
  Dt d = promote(&a, &b);
  double ma = mag(&a), mb = mag(&b);
  switch (rnd(12)) {
  case 0: return mk(fmt("(%s + %s)", a.text, b.text), d, s, -(ma + mb), ma + mb, 1);
  case 1: return mk(fmt("(%s - %s)", a.text, b.text), d, s, -(ma + mb), ma + mb, 1);
  case 2: return mk(fmt("(%s * %s)", a.text, b.text), d, s, -ma * mb, ma * mb, 1);
  case 3: return mk(fmt("(%s // %s)", a.text, b.text), d, s, -ma - 1, ma + 1, 1);
  case 4: return mk(fmt("(%s %% %s)", a.text, b.text), d, s, -mb, mb, 1);
  case 5: { /* exact integer power, small base, exponent in [-1, 4] */
    Val base = mag(&a) <= 16 ? a : mk(fmt("(%s %% 7)", a.text), a.dt, a.sh, -6, 6, 1);
    Val e = mk(fmt("((%s %% 6) - 1)", b.text), b.dt, b.sh, -1, 4, 1);
    if (chance(30))
      e = lit_int(rnd(4));
    if (b.weak) /* ((0 % 6) - 1) is a weak -1 */
      e.weak = 1;
    base.weak = a.weak;
    fit_literals(&base, &e);
    double m = pow(mag(&base) > 1 ? mag(&base) : 1, 4);
    Val r = mk(fmt("(%s ** %s)", base.text, e.text), promote(&base, &e), bcast(base.sh, e.sh), -m,
               m, 1);
    r.weak = base.weak && e.weak;
    return r;
  }
  case 6: return keep_weak(mk(fmt("abs(%s)", a.text), a.dt, a.sh, 0, ma, 1), &a);
  case 7: return keep_weak(mk(fmt("sign(%s)", a.text), a.dt, a.sh, -1, 1, 1), &a);
  case 8: return keep_weak(mk(fmt("relu(%s)", a.text), a.dt, a.sh, 0, ma, 1), &a);
  case 9:
    return mk(fmt("%s(%s, %s)", chance(50) ? "maximum" : "minimum", a.text, b.text), d, s, -dmax(ma, mb),
              dmax(ma, mb), 1);
  case 10:
    if (a.sh.rank > 0 && !a.weak && !no_reduce) {
      unsigned red;
      const char *ax = axes_text(a.sh.rank, &red);
      static const char *const ops[] = {"sum", "prod", "max", "min"};
      int k = rnd(4);
      double n = reduced_count(a.sh, red);
      double m = k == 0 ? ma * n : k == 1 ? 1e18 : ma;
      Dt rd = k < 2 && is_int8(a.dt) ? T_I32 : a.dt; /* 8-bit sums and products: i32 */
      return mk(fmt("%s(%s%s)", ops[k], a.text, ax), rd, reduce_shape(a.sh, red), -m, m, 1);
    }
    return a;
  default:
    if (a.sh.rank > 0 && !a.weak && ma < 1e6 && !no_reduce) {
      const char *op = chance(50) ? "argmax" : "argmin";
      if (chance(30))
        return mk(fmt("%s(%s)", op, a.text), T_I64, (Shape){a.sh.rank, 0}, 0, 1e12, 1);
      int ax = rnd(a.sh.rank);
      return mk(fmt("%s(%s, %d)", op, a.text, chance(50) ? -(ax + 1) : a.sh.rank - 1 - ax),
                T_I64, reduce_shape(a.sh, 1u << ax), 0, 1e6, 1);
    }
    return a;
  }
}

static Val bool_leaf(void) {
  Val p;
  if (pos_leaf() && pos_bool(&p))
    return p;
  int i = pick_pool(ok_bool);
  if (i >= 0 && chance(70))
    return K->pool[i];
  Val a = gen_exact(0), b = exact_leaf();
  fit_literals(&a, &b);
  if (a.weak && b.weak)
    return chance(50) ? mk("true", T_BOOL, (Shape){0, 0}, 0, 1, 1) : mk("false", T_BOOL, (Shape){0, 0}, 0, 1, 1);
  static const char *const cmp[] = {"==", "!=", "<", "<=", ">", ">="};
  return mk(fmt("(%s %s %s)", a.text, cmp[rnd(6)], b.text), T_BOOL, bcast(a.sh, b.sh), 0, 1, 1);
}

static Val gen_bool(int depth) {
  Val a = depth > 0 && chance(50) ? gen_bool(depth - 1) : bool_leaf();
  if (depth <= 0)
    return a;
  Val b = bool_leaf();
  Shape s = bcast(a.sh, b.sh);
  switch (rnd(7)) {
  case 0: return mk(fmt("(%s and %s)", a.text, b.text), T_BOOL, s, 0, 1, 1);
  case 1: return mk(fmt("(%s or %s)", a.text, b.text), T_BOOL, s, 0, 1, 1);
  case 2: return mk(fmt("(not %s)", a.text), T_BOOL, a.sh, 0, 1, 1);
  case 3: {
    Val f = float_leaf();
    static const char *const p[] = {"isnan", "isinf", "isfinite"};
    return mk(fmt("%s(%s)", p[rnd(3)], f.text), T_BOOL, f.sh, 0, 1, 1);
  }
  case 4:
    if (a.sh.rank > 0 && !no_reduce) {
      unsigned red;
      const char *ax = axes_text(a.sh.rank, &red);
      return mk(fmt("%s(%s%s)", chance(50) ? "any" : "all", a.text, ax), T_BOOL,
                reduce_shape(a.sh, red), 0, 1, 1);
    }
    return a;
  case 5: {
    Val e = gen_exact(0);
    return mk(fmt("bool(%s)", e.text), T_BOOL, e.sh, 0, 1, 1);
  }
  default:
    return mk(fmt("(%s == %s)", a.text, b.text), T_BOOL, s, 0, 1, 1);
  }
}

/* ---- statements ---------------------------------------------------------------------- */

static const char *new_name(void) { return fmt("v%d", K->vcount++); }

/* Marks every pool value whose name occurs in `text` as read. */
static void mark_reads(const char *text) {
  for (const char *p = text; *p;) {
    if (!isalpha((unsigned char)*p) && *p != '_') {
      p++;
      continue;
    }
    const char *start = p;
    while (isalnum((unsigned char)*p) || *p == '_')
      p++;
    size_t len = (size_t)(p - start);
    for (int i = 0; i < K->npool; i++)
      if (strlen(K->pool[i].text) == len && !strncmp(K->pool[i].text, start, len))
        K->read[i] = 1;
  }
}

static Val assign(Val v) {
  mark_reads(v.text);
  const char *name = new_name();
  K->body = fmt("%s    %s = %s\n", K->body, name, v.text);
  K->nstmts++;
  Val n = v;
  n.text = name;
  n.weak = v.weak; /* `v = 2` stays weak (language.md §8.2) */
  if (K->npool < MAXPOOL) {
    K->read[K->npool] = 0;
    K->pool[K->npool++] = n;
  }
  return n;
}

static Val small_float_source(void) {
  Val v = squash(gen_float(rnd(2)), 4);
  if (v.sh.rank == 0 && K->rank > 0) /* a row to normalize */
    v = float_leaf();
  return v;
}

/* A value that varies along every axis: x - mean(x) of a value constant
 * along the reduced axes is 0 in the reference but a few ulps of the mean
 * on the GPU, which atol does not cover.  The first input has the full
 * shape and random elements. */
static Val varying_source(void) {
  Val v = squash(gen_float(rnd(2)), 2);
  Val x = as_float(K->pool[0]);
  harmonize(&x, &v);
  return mk(fmt("(%s + %s)", x.text, v.text), promote(&x, &v), bcast(x.sh, v.sh), x.lo + v.lo,
            x.hi + v.hi, 0);
}

/* softmax / log-softmax written out: reduce -> broadcast -> elementwise ->
 * reduce. */
static void stmt_softmax(void) {
  Val x = assign(small_float_source());
  if (x.sh.rank == 0)
    return;
  unsigned red;
  const char *ax = axes_text(x.sh.rank, &red);
  Shape rs = reduce_shape(x.sh, red);
  Val m = assign(mk(fmt("max(%s%s)", x.text, ax), x.dt, rs, x.lo, x.hi, 0));
  Dt d = math_dt(x.dt);
  Val e = assign(mk(fmt("exp(%s - %s)", x.text, m.text), d, x.sh, 0, 1, 0));
  Val s = assign(mk(fmt("sum(%s%s)", e.text, ax), d, rs, 0, 1e6, 0));
  if (chance(50))
    assign(mk(fmt("%s / %s", e.text, s.text), d, x.sh, 0, 1, 0));
  else
    assign(mk(fmt("%s - %s - log(%s)", x.text, m.text, s.text), d, x.sh, -30, 0, 0));
}

/* layernorm / rmsnorm written out, eps large enough to keep it well
 * conditioned. */
static void stmt_norm(void) {
  Val x = assign(varying_source());
  if (x.sh.rank == 0)
    return;
  unsigned red;
  const char *ax = axes_text(x.sh.rank, &red);
  Shape rs = reduce_shape(x.sh, red);
  Dt d = math_dt(x.dt);
  double eps = chance(50) ? 0.5 : 1;
  if (chance(40)) {
    Val ms = assign(mk(fmt("mean(%s * %s%s)", x.text, x.text, ax), d, rs, 0, 16, 0));
    assign(mk(fmt("%s * rsqrt(%s + %g)", x.text, ms.text, eps), d, x.sh, -6, 6, 0));
    return;
  }
  Val mu = assign(mk(fmt("mean(%s%s)", x.text, ax), d, rs, -4, 4, 0));
  Val c = assign(mk(fmt("%s - %s", x.text, mu.text), d, x.sh, -8, 8, 0));
  Val var = chance(50) ? assign(mk(fmt("mean(%s * %s%s)", c.text, c.text, ax), d, rs, 0, 64, 0))
                       : assign(mk(fmt("var(%s%s)", x.text, ax), d, rs, 0, 64, 0));
  Val y = assign(mk(fmt("%s * rsqrt(%s + %g)", c.text, var.text, eps), d, x.sh, -12, 12, 0));
  if (chance(50)) {
    Val w = squash(float_leaf(), 2);
    harmonize(&y, &w);
    assign(mk(fmt("%s * %s + 0.5", y.text, w.text), promote(&y, &w), bcast(y.sh, w.sh), -25, 25, 0));
  }
}

static void stmt_builtin_composite(void) {
  Val x = assign(small_float_source());
  if (x.sh.rank == 0)
    return;
  int ax = rnd(x.sh.rank);
  const char *axs = fmt("%d", chance(50) ? -(ax + 1) : x.sh.rank - 1 - ax);
  Dt d = math_dt(x.dt);
  switch (rnd(3)) {
  case 0: assign(mk(fmt("softmax(%s, %s)", x.text, axs), d, x.sh, 0, 1, 0)); break;
  case 1: assign(mk(fmt("log_softmax(%s, %s)", x.text, axs), d, x.sh, -30, 0, 0)); break;
  default: {
    unsigned red;
    const char *more = axes_text(x.sh.rank, &red);
    assign(mk(fmt("logsumexp(%s%s)", x.text, more), d, reduce_shape(x.sh, red), -5, 20, 0));
  }
  }
}

static void stmt_random(void) {
  switch (rnd(10)) {
  case 0:
  case 1: assign(gen_int(1 + rnd(3))); break;
  case 2: assign(gen_bool(1 + rnd(2))); break;
  case 3: assign(gen_exact(1 + rnd(3))); break;
  default: assign(gen_float(1 + rnd(4))); break;
  }
}

static void gen_statement(void) {
  int r = rnd(100);
  if (r < 14)
    stmt_softmax();
  else if (r < 26)
    stmt_norm();
  else if (r < 34)
    stmt_builtin_composite();
  else
    stmt_random();
}

/* ---- gathers: take (language.md §9.7) ------------------------------------------------ */

/* Whether a kernel, and which of its statements, gather is drawn from a
 * stream of its own too (a kernel that draws none comes out as before). */
static uint64_t rng_take;

static int take_rnd(int n) { return stream_rnd(&rng_take, n); }

/* Index inputs a file and a kernel may declare: each has a `# conform:
 * range` line, and tecc-conform keeps 32 directives a program. */
enum { MAX_TAKE_FILE = 20, MAX_TAKE_KERNEL = 3 };
static int take_inputs;

static int ok_ranked(const Val *v) { return v->sh.rank > 0 && !v->weak; }
static int ok_ranked_float(const Val *v) { return ok_ranked(v) && is_float(v->dt); }

/* A value take() may gather from: rank >= 1 and pure (elementwise of the
 * inputs, no reduction or take inside, which sema would refuse when it
 * varies along the axis: "take before reducing").  An input or a pure
 * value, or an elementwise expression of them; a float within `lim` when
 * `want_float`. */
static Val gather_source(int want_float, double lim) {
  no_reduce = 1;
  Val x;
  x.text = NULL;
  int r = rnd(100);
  if (r < 40) {
    int i = pick_pool(want_float ? ok_ranked_float : ok_ranked);
    if (i >= 0)
      x = K->pool[i];
  } else if (r < 80 || want_float) {
    x = squash(gen_float(1 + rnd(2)), 8);
  } else if (r < 88) {
    x = gen_exact(1 + rnd(2));
  } else if (r < 95) {
    x = gen_int(1 + rnd(2));
  } else {
    x = gen_bool(1 + rnd(2));
  }
  if (!x.text || x.sh.rank == 0 || x.weak) {
    int i = pick_pool(want_float ? ok_ranked_float : ok_ranked);
    x = i >= 0 ? K->pool[i] : want_float ? as_float(K->pool[0]) : K->pool[0];
  }
  if (want_float)
    x = squash(x, lim);
  no_reduce = 0;
  return x;
}

/* x's size along its axis a (from the end): F's dim, or 1. */
static const char *size_text(Shape s, int a) { return (s.full >> a) & 1 ? dim_text(a) : "1"; }

/* The `# conform: range` of an index into an axis of size sz: both in
 * and out of [0, size) for small and large sizes. */
static const char *index_range(const char *sz) {
  if (isdigit((unsigned char)sz[0]))
    return fmt("%d %d", -1 - rnd(2), atoi(sz) + rnd(3));
  static const int hi[] = {12, 40, 40, 300, 1100};
  return fmt("%d %d", -1 - rnd(3), hi[rnd(5)]);
}

/* An exact integer index of t's dtype and shape. */
static const char *index_expr(const char *t, const char *sz) {
  switch (rnd(12)) {
  case 0: return fmt("(%s - 1)", t);
  case 1: return fmt("abs(%s)", t);
  case 2: return fmt("(%s // 2)", t);
  case 3: return fmt("minimum(%s, %s - 1)", t, sz);
  case 4: return fmt("%s(%s)", chance(50) ? "i64" : "i32", t);
  default: return t;
  }
}

/* Whether idx is in [0, sz) (or not, negated). */
static const char *in_range(const char *idx, const char *sz, int negated) {
  if (!strcmp(sz, "1"))
    return fmt(negated ? "(%s != 0)" : "(%s == 0)", idx);
  return negated ? fmt("((%s < 0) or (%s >= %s))", idx, idx, sz)
                 : fmt("((%s >= 0) and (%s < %s))", idx, idx, sz);
}

/* A gather: take(x, i, axis) of an input, an elementwise expression or a
 * softmax-like expression reduced along the same axis, with i an index
 * input (a `# conform: range` line of its own) or computed from positions.
 *   - one pick along the axis (i of size 1 there), or, only in a kernel
 *     that gets no gradient when x is a float, F's size there or a literal
 *     count (a shape outside the kernel's: an output, and reduced along the
 *     axis), or positions: a flip, a shift;
 *   - an index outside the axis gives NaN (floats), 0 or false: a float
 *     take is an output no statement reads, or is guarded to 0 where the
 *     index is out (`where(in range, take, 0.0)`, or where isnan), so that
 *     NaN meets no comparison or kink; integer and bool takes are exact. */
static void stmt_take(void) {
  if (K->rank == 0 || K->ntake >= MAX_TAKE_KERNEL || take_inputs >= MAX_TAKE_FILE) {
    gen_statement();
    return;
  }
  int soft = chance(25);
  Val x = soft ? gather_source(1, 4) : gather_source(0, 0);
  int r = x.sh.rank, a = pick_axis(x.sh), xfloat = is_float(x.dt);
  no_reduce = 1;
  x = named(x);
  no_reduce = 0;
  unsigned abit = 1u << a;
  const char *axt = fmt("%d", chance(50) ? -(a + 1) : r - 1 - a);
  const char *sz = size_text(x.sh, a);
  /* 0: one pick; 1: F's size along a; 2: a literal count; 3: positions */
  int kind = 0;
  if ((K->multi || !xfloat) && chance(45))
    kind = 1 + rnd(3);
  if (kind == 3 && !(x.sh.full & abit))
    kind = 1;
  Shape ish = {r, 0};
  const char *idx;
  if (kind == 3) {
    const char *ix = fmt("index(%s, %s)", x.text, axt);
    ish.full = abit;
    switch (rnd(4)) {
    case 0: idx = fmt("((%s - 1) - %s)", sz, ix); break;
    case 1: idx = fmt("(%s + 1)", ix); break;
    case 2: idx = fmt("(%s // 2)", ix); break;
    default: idx = fmt("(%s - %d)", ix, 1 + rnd(2)); break;
    }
  } else {
    const char *t = fmt("t%d_%d", K->index, K->ntake++);
    take_inputs++;
    for (int b = 0; b < r; b++)
      if (b != a && ((x.sh.full >> b) & 1) && chance(75))
        ish.full |= 1u << b;
    const char *along = "1";
    if (kind == 1) {
      ish.full |= abit;
      along = dim_text(a);
    } else if (kind == 2) {
      static const char *const lits[] = {"2", "3", "5"};
      along = lits[rnd(3)];
    }
    const char *ty = fmt("%s[", chance(50) ? "i64" : "i32");
    for (int b = r - 1; b >= 0; b--)
      ty = fmt("%s%s%s", ty, b == r - 1 ? "" : ", ",
               b == a ? along : (ish.full >> b) & 1 ? dim_text(b) : "1");
    ty = fmt("%s]", ty);
    K->params = K->explicit_form ? fmt("%s, %s: %s", K->params, t, ty)
                                 : fmt("%s%s: %s\n", K->params, t, ty);
    K->ranges = fmt("%s# conform: range %s %s\n", K->ranges, t, index_range(sz));
    idx = chance(60) ? t : index_expr(t, sz);
  }
  Shape res = {r, (x.sh.full & ~abit) | ish.full};
  int foreign = kind == 2;
  const char *tk = NULL;
  Val w;
  if (soft) {
    Dt d = math_dt(x.dt);
    switch (rnd(5)) {
    case 0: tk = fmt("softmax(%s, %s)", x.text, axt); w = mk("", d, res, 0, 1, 0); break;
    case 1: tk = fmt("log_softmax(%s, %s)", x.text, axt); w = mk("", d, res, -30, 0, 0); break;
    case 2:
      tk = fmt("(%s - logsumexp(%s, %s))", x.text, x.text, axt);
      w = mk("", d, res, -30, 0, 0);
      break;
    case 3:
      tk = fmt("(%s - max(%s, %s) - log(sum(exp(%s - max(%s, %s)), %s)))", x.text, x.text, axt,
               x.text, x.text, axt, axt);
      w = mk("", d, res, -30, 0, 0);
      break;
    default: /* cross-entropy: the take inside */
      w = mk(fmt("(logsumexp(%s, %s) - take(%s, %s, %s))", x.text, axt, x.text, idx, axt), d, res,
             -1, 30, 0);
      break;
    }
    if (tk)
      w.text = fmt("take(%s, %s, %s)", tk, idx, axt);
  } else {
    double lo = x.dt == T_BOOL ? 0 : xfloat ? x.lo : dmin(x.lo, 0);
    double hi = x.dt == T_BOOL ? 1 : xfloat ? x.hi : dmax(x.hi, 0);
    w = mk(fmt("take(%s, %s, %s)", x.text, idx, axt), x.dt, res, lo, hi, x.exact);
  }
  if (!xfloat) {
    if (!foreign) {
      assign(w);
      return;
    }
    w.noread = 1;
    assign(w);
    if (chance(50)) /* back to the kernel's shapes: reduced along the axis */
      assign(mk(fmt("%s(%s, %s)", chance(50) ? "max" : "min", w.text, axt), w.dt,
                (Shape){r, res.full & ~abit}, w.lo, w.hi, 1));
    return;
  }
  if (kind)
    K->nograd = 1; /* the gradient would be a scatter-add */
  if ((!foreign && chance(40)) || (foreign && chance(50))) {
    w.noread = 1; /* NaN where the index is out: an output only */
    assign(w);
    return;
  }
  /* guarded: 0 where the index is out */
  double g = chance(80) ? 0 : 0.5;
  const char *gt = g == 0 ? "0.0" : "0.5";
  Val gv = w;
  gv.lo = dmin(w.lo, g);
  gv.hi = dmax(w.hi, g);
  gv.noread = foreign;
  switch (rnd(4)) {
  case 0: {
    Val u = w;
    u.noread = 1;
    u = assign(u);
    gv.text = fmt("where(isnan(%s), %s, %s)", u.text, gt, u.text);
    break;
  }
  case 1: gv.text = fmt("where(%s, %s, %s)", in_range(idx, sz, 1), gt, w.text); break;
  default: gv.text = fmt("where(%s, %s, %s)", in_range(idx, sz, 0), w.text, gt); break;
  }
  gv = assign(gv);
  if (foreign) /* back to the kernel's shapes: reduced along the axis */
    assign(mk(fmt("%s(%s, %s)", chance(50) ? "max" : "min", gv.text, axt), gv.dt,
              (Shape){r, res.full & ~abit}, gv.lo, gv.hi, gv.exact));
}

/* ---- slices and concat (language.md §9.8, §9.9) ----------------------------------------- */

/* Whether a kernel, and which of its statements, slice is drawn from a
 * stream of its own (a kernel that draws none comes out as before). */
static uint64_t rng_slice;

static int slice_rnd(int n) { return stream_rnd(&rng_slice, n); }

/* x[..., S, :, ...]: slice S on x's axis a (from the end), written with
 * `...` or with a `:` for each axis before it. */
static const char *sliced(const Val *x, int a, const char *s) {
  const char *t;
  if (chance(50)) {
    t = fmt("%s[...", x->text);
    t = fmt("%s, %s", t, s);
    for (int b = 0; b < a; b++)
      t = fmt("%s, :", t);
  } else {
    t = fmt("%s[", x->text);
    for (int b = x->sh.rank - 1; b > a; b--)
      t = fmt("%s:, ", t);
    t = fmt("%s%s", t, s);
  }
  return fmt("%s]", t);
}

/* A bound of a slice of an axis of size sz: a literal (negative ones count
 * from the end), or an expression of sz when it is a size variable. */
static const char *slice_bound(const char *sz) {
  int var = !isdigit((unsigned char)sz[0]);
  switch (rnd(var ? 6 : 3)) {
  case 0: return fmt("%d", rnd(4));
  case 1: return fmt("-%d", 1 + rnd(3));
  case 2: return fmt("%d", 5 + rnd(40));
  case 3: return fmt("%s // 2", sz);
  case 4: return fmt("%s - %d", sz, 1 + rnd(2));
  default: return fmt("2 * (%s // 3)", sz);
  }
}

/* Whether a random slice slices a second axis too is drawn from a stream
 * of its own (a kernel that draws none comes out as before). */
static uint64_t rng_slice2;

/* Another full axis of x than a to slice too (language.md §9.8: gathers
 * along two axes of one value), or -1: a third of the slices. */
static int second_slice_axis(const Val *x, int a) {
  unsigned others = x->sh.full & ~(1u << a);
  if (!others || stream_rnd(&rng_slice2, 3) != 0)
    return -1;
  int b;
  do
    b = stream_rnd(&rng_slice2, x->sh.rank);
  while (!((others >> b) & 1));
  return b;
}

/* A slice or a concat of an input or an elementwise value x (pure: no take
 * along another axis inside) along one of its full axes a:
 *   - a rotation, concat(x[.., k:], x[.., :k], a) with k a literal or
 *     D // 2, one part maybe negated: x's shape again, a value later
 *     statements read (its gradient gathers the cotangent back);
 *   - a slice with random bounds and step, maybe sliced again along a
 *     second axis: a shape of its own, an output only, or reduced along
 *     the axes sliced back to the kernel's shapes. */
static void stmt_slice(void) {
  Val x = gather_source(0, 0);
  if (K->rank == 0 || !x.sh.full) {
    gen_statement();
    return;
  }
  int a;
  do
    a = rnd(x.sh.rank);
  while (!((x.sh.full >> a) & 1));
  no_reduce = 1;
  x = named(x);
  no_reduce = 0;
  const char *sz = dim_text(a), *axt = fmt("%d", chance(50) ? -(a + 1) : x.sh.rank - 1 - a);
  if (chance(55)) {
    const char *k = isdigit((unsigned char)sz[0]) || chance(40) ? fmt("%d", 1 + rnd(2)) : fmt("%s // 2", sz);
    const char *hi = sliced(&x, a, fmt("%s:", k)), *lo = sliced(&x, a, fmt(":%s", k));
    int neg = x.dt != T_BOOL && chance(50);
    Val w = mk(fmt("concat(%s%s, %s, %s)", neg ? "-" : "", hi, lo, axt), x.dt, x.sh,
               neg ? dmin(x.lo, -x.hi) : x.lo, neg ? dmax(x.hi, -x.lo) : x.hi, x.exact);
    assign(w);
    return;
  }
  const char *lo = chance(70) ? slice_bound(sz) : "", *hi = chance(70) ? slice_bound(sz) : "";
  const char *s = chance(30) ? fmt("%s:%s:%d", lo, hi, 2 + rnd(2)) : fmt("%s:%s", lo, hi);
  Val w = mk(sliced(&x, a, s), x.dt, x.sh, x.lo, x.hi, x.exact);
  int b = second_slice_axis(&x, a);
  const char *bxt = "";
  if (b >= 0) { /* a slice of the slice along another axis: one load of both */
    const char *blo = chance(70) ? slice_bound(dim_text(b)) : "", *bhi = chance(70) ? slice_bound(dim_text(b)) : "";
    w.text = sliced(&w, b, chance(30) ? fmt("%s:%s:%d", blo, bhi, 2 + rnd(2)) : fmt("%s:%s", blo, bhi));
    bxt = fmt(", %d", chance(50) ? -(b + 1) : x.sh.rank - 1 - b);
  }
  w.noread = 1;
  assign(w);
  if (x.dt != T_BOOL && chance(50)) /* back to the kernel's shapes */
    assign(mk(fmt("%s(%s, %s%s)", chance(50) ? "max" : "min", w.text, axt, bxt), x.dt,
              (Shape){x.sh.rank, x.sh.full & ~(1u << a) & ~(b >= 0 ? 1u << b : 0u)}, x.lo, x.hi, x.exact));
}

/* ---- kernels -------------------------------------------------------------------------- */

static const char *const sv_names[] = {"N", "D", "B", "H", "S", "M", "C", "L"};

static Dt random_input_dt(void) {
  static const Dt eights[] = {T_I8, T_U8, T_F8E4M3, T_F8E5M2};
  if (eight(12))
    return eight_pick(eights, 4);
  static const Dt table[] = {T_F32, T_F32, T_F32, T_F32, T_F16, T_BF16, T_F64,
                             T_F64, T_I32, T_I64, T_BOOL, T_F32};
  return table[rnd((int)(sizeof table / sizeof table[0]))];
}

static void make_full_shape(void) {
  static const int rank_table[] = {0, 1, 1, 2, 2, 2, 2, 3, 3, 4};
  K->rank = rank_table[rnd(10)];
  int first = rnd(8);
  for (int i = 0; i < K->rank; i++) {
    if (chance(12) && i > 0) {
      static const char *const lits[] = {"2", "3", "4", "5", "8"};
      K->dim[i] = lits[rnd(5)];
      continue;
    }
    K->dim[i] = sv_names[(first + K->nsv) % 8];
    K->sv[K->nsv++] = K->dim[i];
  }
}

/* Declares the inputs; every axis of F is full in some input. */
static const char *make_inputs(int explicit_form) {
  int n = 1 + rnd(MAXIN - 1);
  unsigned covered = 0;
  const char *params = "";
  for (int i = 0; i < n; i++) {
    Shape s = {K->rank, (1u << K->rank) - 1};
    if (i > 0) {
      s.rank = rnd(K->rank + 1);
      s.full = 0;
      for (int a = 0; a < s.rank; a++)
        if (chance(75))
          s.full |= 1u << a;
      if (s.rank > 0 && chance(40))
        s.rank -= 0; /* keep literal 1s where the bits are 0 */
    }
    if (i == n - 1)
      s.full |= ((1u << K->rank) - 1) & ~covered, s.rank = s.full ? K->rank : s.rank;
    covered |= s.full;
    Dt dt = random_input_dt();
    /* tecc-conform's default ranges; u8 in [0, 10], f8 rounded within
     * [-2, 2] */
    double lo = dt == T_BOOL || dt == T_U8 ? 0 : is_float(dt) ? -2 : -5;
    double hi = dt == T_BOOL ? 1 : dt == T_U8 ? 10 : is_float(dt) ? 2 : 5;
    const char *name = fmt("x%d", i);
    Val v = mk(name, dt, s, lo, hi, 1);
    v.pure = 1;
    K->read[K->npool] = 0;
    K->pool[K->npool++] = v;
    const char *ty = s.rank == 0 && chance(50) ? dt_name[dt] : fmt("%s%s", dt_name[dt], shape_text(s, 0));
    if (explicit_form)
      params = fmt("%s%s%s: %s", params, i ? ", " : "", name, ty);
    else
      params = fmt("%s%s: %s\n", params, name, ty);
  }
  K->ninputs = n;
  return params;
}

/* A declared output type: the value's dtype or a conversion that keeps the
 * comparison meaningful (*dt), and its shape with some literal 1s dropped. */
static const char *declared_type(const Val *v, Dt *dt) {
  Dt to = v->dt;
  if (is_float(v->dt) && chance(40)) {
    static const Dt f[] = {T_F16, T_BF16, T_F32, T_F64};
    to = f[rnd(4)];
    if (eight(15)) /* rounds to nearest even; one f8 ulp apart at most */
      to = eight_pick(f8_types, 2);
  } else if (is_int(v->dt) && chance(30) && mag(v) < (1 << 20)) {
    to = chance(50) ? T_I64 : T_F64;
    if (eight(15) && !v->weak) /* wraps (a literal must fit) */
      to = eight_pick(int8_types, 2);
  } else if (v->dt == T_BOOL && chance(30)) {
    to = T_I32;
    if (eight(15))
      to = eight_pick(int8_types, 2);
  } else if (v->exact && is_float(v->dt) && mag(v) < 1e6 && chance(20)) {
    to = T_I32;
    if (eight(15)) /* truncates and saturates */
      to = eight_pick(int8_types, 2);
  }
  if ((to == T_F16 || to == T_BF16) && mag(v) > 6e4)
    to = T_F32;
  if (is_f8(to) && mag(v) > f8_max(to))
    to = T_F32;
  *dt = to;
  return fmt("%s%s", dt_name[to], shape_text(v->sh, chance(50)));
}

/* A declared output of another kind (bool, integer, float) than its value
 * needs the cast written (doc/language.md §4.1): a statement of its own,
 * whose name is the output's.  Otherwise the value's own name. */
static const char *converted(const Val *v, Dt to) {
  if (is_float(to) == is_float(v->dt) && (to == T_BOOL) == (v->dt == T_BOOL))
    return v->text;
  const char *name = new_name();
  K->body = fmt("%s    %s = %s(%s)\n", K->body, name, dt_name[to], v->text);
  K->nstmts++;
  return name;
}

/* `kernel kI_grad = grad(kI)` (every float input), or with some of the
 * float inputs named, when kI has a float input and a float output. */
static void gen_grad(FILE *out, int index, int float_outputs) {
  const char *named = "";
  int floats = 0;
  for (int i = 0; i < K->ninputs; i++)
    floats += is_float(K->pool[i].dt);
  if (!floats || !float_outputs || !chance(35) || K->nograd)
    return;
  if (chance(40))
    for (int i = 0; i < K->ninputs; i++)
      if (is_float(K->pool[i].dt) && (chance(60) || !*named))
        named = fmt("%s, %s", named, K->pool[i].text);
  fprintf(out, "kernel k%d_grad = grad(k%d%s)\n", index, index, named);
}

static void gen_kernel(FILE *out, int index, int explicit_form) {
  Kernel k;
  memset(&k, 0, sizeof k);
  k.body = fmt("");
  K = &k;
  k.index = index;
  k.explicit_form = explicit_form;
  k.ranges = "";
  static const int pos_percent[] = {0, 0, 0, 0, 0, 4, 8, 8, 12, 12};
  k.pos = pos_percent[pos_rnd(10)];
  make_full_shape();
  k.params = make_inputs(explicit_form);
  int nst = 2 + rnd(5);
  if (take_rnd(100) < 6) {
    k.take = 1;
    k.take_at = take_rnd(nst);
    k.multi = take_rnd(100) < 40;
  }
  int slices = slice_rnd(100) < 6, slice_at = slice_rnd(nst);
  for (int i = 0; i < nst && k.npool < MAXPOOL - 8; i++)
    if (k.take && (i == k.take_at || take_rnd(100) < 15))
      stmt_take();
    else if (slices && (i == slice_at || slice_rnd(100) < 15))
      stmt_slice();
    else
      gen_statement();
  /* inputs never read: read them (an unused input is only a warning) */
  for (int i = 0; i < k.ninputs; i++)
    if (!k.read[i]) {
      Val x = k.pool[i];
      k.read[i] = 1;
      if (x.dt == T_BOOL)
        assign(mk(fmt("where(%s, 1.5, -0.5)", x.text), T_F32, x.sh, -0.5, 1.5, 1));
      else
        assign(mk(fmt("%s * 2", x.text), x.dt, x.sh, x.lo * 2, x.hi * 2, x.exact));
    }
  /* outputs: the values no statement reads */
  const char *outs = "";
  int nout = 0, float_outputs = 0;
  for (int i = k.ninputs; i < k.npool; i++) {
    if (k.read[i])
      continue;
    const Val *v = &k.pool[i];
    Dt dt = v->dt;
    if (explicit_form && !v->noread && chance(50)) {
      const char *ty = declared_type(v, &dt), *name = converted(v, dt);
      outs = fmt("%s%s%s: %s", outs, nout ? ", " : "", name, ty);
    } else if (is_f8(dt) && !(mag(v) <= f8_max(dt))) {
      /* an f8 value computed (in f32) beyond the f8 range: NaN or inf
       * where stored, and where the GPU's f32 and the reference's f64
       * straddle the overflow threshold, one is finite: stored as f32 */
      const char *name = new_name();
      K->body = fmt("%s    %s = f32(%s)\n", K->body, name, v->text);
      K->nstmts++;
      dt = T_F32;
      outs = fmt("%s%s%s", outs, nout ? ", " : "", name);
    } else
      outs = fmt("%s%s%s", outs, nout ? ", " : "", v->text);
    float_outputs += is_float(dt);
    nout++;
  }
  if (explicit_form) {
    fprintf(out, "\n%skernel k%d(%s) -> (%s) {\n%s}\n", k.ranges, index, k.params, outs, k.body);
    gen_grad(out, index, float_outputs);
  } else {
    fprintf(out, "%s%s%s", k.ranges, k.params, k.body);
  }
}

static const char fn_defs[] =
    "fn f_sq(a) = a * a\n"
    "fn f_mix(a, b) = a * sigmoid(b) + f_sq(b) * 0.5\n"
    "fn f_center(a, ax) = a - max(a, ax)\n";

int main(int argc, char **argv) {
  uint64_t seed = 1;
  int kernels = 1, implicit = 0;
  long max_elements = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--kernels") && i + 1 < argc)
      kernels = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--max-elements") && i + 1 < argc)
      max_elements = atol(argv[++i]);
    else if (!strcmp(argv[i], "--implicit"))
      implicit = 1;
    else {
      fprintf(stderr, "usage: gen [--seed S] [--kernels K] [--implicit] [--max-elements N]\n");
      return 2;
    }
  }
  if (kernels < 1)
    kernels = 1;
  rng = seed * 0x2545F4914F6CDD1Dull + 0x1234567;
  rng_pos = (seed + 0x5851F42D4C957F2Dull) * 0xD1342543DE82EF95ull;
  rng_take = (seed + 0x2F8B2C1E6A3D5B7Full) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  rng_slice = (seed + 0x6C8E9CF570932BD5ull) * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
  rng_slice2 = (seed + 0x3C6EF372FE94F82Bull) * 0x94D049BB133111EBull + 0xA54FF53A5F1D36F1ull;
  rng_8bit = (seed + 0x1D8E4E27C47D124Full) * 0xD6E8FEB86659FD93ull + 0x8CB92BA72F3D8DD7ull;
  printf("# generated by tests/gen/gen --seed %llu --kernels %d%s\n", (unsigned long long)seed,
         kernels, implicit ? " --implicit" : "");
  if (max_elements > 0)
    printf("# conform: max-elements %ld\n", max_elements);
  if (chance(10))
    printf("# conform: specials *\n");
  with_fns = !implicit || chance(50);
  if (with_fns)
    fputs(fn_defs, stdout);
  int explicit_form = !(implicit && kernels == 1);
  for (int i = 0; i < kernels; i++)
    gen_kernel(stdout, i, explicit_form);
  free_strings();
  return 0;
}
