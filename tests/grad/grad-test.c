/* grad-test.c — the gradient kernels against the forward kernels they
 * differentiate, on the reference interpreter in float64 (TAP; no GPU).
 *
 * Each case is a small program: a forward kernel f and its gradient
 * kernel g = grad(f, ...), compiled through the library (the IR the
 * interpreter runs, and that IR optimized).  On random inputs and
 * cotangents dy, the gradient g writes for input x is compared, element by
 * element, with the central finite difference of the forward's loss
 * L(x) = sum over f's float outputs y of sum(dy * y), evaluated by the
 * interpreter in float64 before the outputs' rounding.  The inputs are
 * drawn away from the points where the function is not differentiable;
 * the rules at those points (ties of max, relu and abs at 0, clamp at its
 * bounds, prod with zeros, ...) are checked separately against the values
 * PyTorch's autograd gives.  16-bit kernels, which cannot be perturbed by
 * a small step, are compared with an f32 twin.  The last test points
 * check that every builtin, operator and reduction of ops.h appears in
 * some forward kernel checked by finite differences. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "opt.h"
#include "pipeline.h"
#include "tap.h"

enum { MAX_TENSORS = 16, MAX_SIZES = 16 };

/* ---- random numbers ------------------------------------------------------- */

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static double uniform(void) {
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0;
}

/* ---- compiling ------------------------------------------------------------------ */

typedef struct Program {
  Arena *arena;
  Module *m;
} Program;

static int compile(Program *p, const char *name, const char *src, int optimize) {
  p->arena = arena_new();
  tecc_options o;
  tecc_options_init(&o);
  o.no_warnings = 1;
  Compilation c;
  compilation_init(&c, p->arena, &o, ".");
  SourceFile *f = compilation_add_source(&c, name, NULL, src, strlen(src));
  p->m = compile_unoptimized_ir(&c, f);
  if (!p->m) {
    diag("%s does not compile:\n%s", name, diag_format_all(&c.diags, 1));
    return 0;
  }
  if (optimize)
    optimize_module(&c, p->m);
  return 1;
}

static const Kernel *kernel_named(const Program *p, const char *name) {
  for (int i = 0; i < p->m->nkernels; i++)
    if (!strcmp(p->m->kernels[i]->name, name))
      return p->m->kernels[i];
  return NULL;
}

/* ---- tensors -------------------------------------------------------------------- */

/* A kernel's sizes from "N=3 D=4" (every size parameter must be there;
 * the derived sizes follow from them). */
static int bind_sizes(const Kernel *k, const char *spec, int64_t *sizes) {
  if (k->nsizevars > MAX_SIZES) {
    diag("%s has more than %d sizes", k->name, MAX_SIZES);
    return 0;
  }
  for (int i = 0; i < ir_nparams(k); i++) {
    const char *name = k->sizevars[i].name;
    const char *at = spec;
    size_t n = strlen(name);
    sizes[i] = -1;
    while ((at = strstr(at, name)) != NULL) {
      if ((at == spec || at[-1] == ' ') && at[n] == '=') {
        sizes[i] = atoll(at + n + 1);
        break;
      }
      at += n;
    }
    if (sizes[i] < 0) {
      diag("no size given for %s", name);
      return 0;
    }
  }
  ir_derive_sizes(k, sizes);
  return 1;
}

typedef struct Tensor {
  DType t;
  int64_t n;
  void *buf;
} Tensor;

static Tensor tensor(DType t, const Shape *sh, const int64_t *sizes) {
  Tensor x = {t, interp_numel(sh, sizes), NULL};
  x.buf = calloc((size_t)(x.n ? x.n : 1), 8);
  return x;
}

static double get(const Tensor *x, int64_t i) { return interp_load(x->t, x->buf, i); }
static void set(Tensor *x, int64_t i, double v) { interp_store(x->t, x->buf, i, v); }

/* A value in [lo, hi]; f32 and 16-bit values on a grid of 1/256, so that
 * a finite-difference step of 1/4096 stays exact in f32. */
static double draw(DType t, double lo, double hi) {
  double v = lo + (hi - lo) * uniform();
  if (t == DT_BOOL)
    return uniform() < 0.5;
  if (!dtype_is_float(t))
    return floor(v);
  return t == DT_F64 ? v : round(v * 256) / 256;
}

/* ---- one case ------------------------------------------------------------------- */

typedef struct Range {
  const char *name; /* an input, or NULL for the default */
  double lo, hi;
} Range;

typedef struct Case {
  const char *name;
  const char *src;
  const char *sizes;  /* "N=3 D=4" */
  const char *fwd;    /* default "f" */
  const char *grad;   /* default "g" */
  Range ranges[4];    /* by input name; the first with name NULL: default */
  double tol;         /* relative; default 1e-6 (f64), 1e-4 (f32) */
  double step;        /* of the differences on f64 inputs; default 1e-6 */
} Case;

typedef struct Run {
  const Case *c;
  const Kernel *f, *g;
  int64_t sizes[MAX_SIZES];
  Tensor in[MAX_TENSORS];  /* g's inputs: f's, then the cotangents */
  Tensor out[MAX_TENSORS]; /* g's outputs */
  double *grad[MAX_TENSORS]; /* g's outputs before their rounding */
} Run;

static Range range_of(const Case *c, const char *input) {
  Range r = {NULL, -2, 2};
  for (int i = 0; i < 4 && (c->ranges[i].lo || c->ranges[i].hi); i++)
    if (!c->ranges[i].name || !strcmp(c->ranges[i].name, input))
      if (c->ranges[i].name || !r.name)
        r = c->ranges[i];
  return r;
}

static void fill_inputs(Run *r) {
  for (int i = 0; i < r->g->ninputs; i++) {
    const KernelInput *in = &r->g->inputs[i];
    r->in[i] = tensor(in->dtype, &in->shape, r->sizes);
    Range rg = i < r->f->ninputs ? range_of(r->c, in->name) : (Range){NULL, -1, 1};
    for (int64_t j = 0; j < r->in[i].n; j++)
      set(&r->in[i], j, draw(in->dtype, rg.lo, rg.hi));
  }
}

static void free_run(Run *r) {
  for (int i = 0; i < MAX_TENSORS; i++) {
    free(r->in[i].buf);
    free(r->out[i].buf);
    free(r->grad[i]);
  }
}

static int run_gradient(Run *r) {
  const void *ins[MAX_TENSORS];
  void *outs[MAX_TENSORS];
  for (int i = 0; i < r->g->ninputs; i++)
    ins[i] = r->in[i].buf;
  for (int j = 0; j < r->g->noutputs; j++) {
    const KernelOutput *o = &r->g->outputs[j];
    r->out[j] = tensor(o->dtype, &o->shape, r->sizes);
    r->grad[j] = calloc((size_t)(r->out[j].n ? r->out[j].n : 1), sizeof(double));
    outs[j] = r->out[j].buf;
  }
  return interp_kernel(r->g, r->sizes, ins, outs, r->grad) == INTERP_SUCCESS;
}

/* The forward's loss: sum over float outputs of dy . y, in float64. */
static double loss(const Run *r) {
  const Kernel *f = r->f;
  const void *ins[MAX_TENSORS];
  void *outs[MAX_TENSORS];
  double *exact[MAX_TENSORS];
  Tensor y[MAX_TENSORS];
  for (int i = 0; i < f->ninputs; i++)
    ins[i] = r->in[i].buf;
  for (int j = 0; j < f->noutputs; j++) {
    y[j] = tensor(f->outputs[j].dtype, &f->outputs[j].shape, r->sizes);
    exact[j] = calloc((size_t)(y[j].n ? y[j].n : 1), sizeof(double));
    outs[j] = y[j].buf;
  }
  if (interp_kernel(f, r->sizes, ins, outs, exact) != INTERP_SUCCESS)
    return NAN;
  double total = 0;
  for (int j = 0, c = f->ninputs; j < f->noutputs; j++) {
    if (dtype_is_float(f->outputs[j].dtype)) {
      for (int64_t e = 0; e < y[j].n; e++)
        total += get(&r->in[c], e) * exact[j][e];
      c++;
    }
    free(y[j].buf);
    free(exact[j]);
  }
  return total;
}

static int input_index(const Kernel *k, const char *name) {
  for (int i = 0; i < k->ninputs; i++)
    if (!strcmp(k->inputs[i].name, name))
      return i;
  return -1;
}

/* dL/dx[e] by central differences. */
static double difference(Run *r, int x, int64_t e) {
  Tensor *t = &r->in[x];
  double v = get(t, e);
  double step = r->c->step ? r->c->step : 1e-6;
  double h = t->t == DT_F64 ? step * (fabs(v) > 1 ? fabs(v) : 1) : 1.0 / 4096;
  set(t, e, v + h);
  double up = loss(r);
  set(t, e, v - h);
  double down = loss(r);
  set(t, e, v);
  return (up - down) / (2 * h);
}

static int close_to(double got, double want, double tol) {
  if (isnan(got) || isnan(want))
    return isnan(got) && isnan(want);
  return fabs(got - want) <= tol * (1 + fabs(want));
}

/* Every gradient g writes against finite differences; one test point per
 * gradient. */
static void check_differences(Run *r, const char *what) {
  for (int j = 0; j < r->g->noutputs; j++) {
    const char *dname = r->g->outputs[j].name;
    int x = input_index(r->f, dname + 1);
    double tol = r->c->tol ? r->c->tol : r->in[x].t == DT_F64 ? 1e-6 : 1e-4;
    int64_t bad = -1;
    double fd = 0;
    for (int64_t e = 0; x >= 0 && e < r->in[x].n && bad < 0; e++) {
      fd = difference(r, x, e);
      if (!close_to(r->grad[j][e], fd, tol))
        bad = e;
    }
    if (!ok(x >= 0 && bad < 0, "%s: %s %s matches finite differences",
            r->c->name, what, dname))
      diag("element %lld: gradient %.17g, finite difference %.17g",
           (long long)bad, bad >= 0 ? r->grad[j][bad] : 0.0, fd);
  }
}

/* The kernels, their sizes and random inputs. */
static int prepare(Run *r, const Case *c, const Program *p) {
  memset(r, 0, sizeof *r);
  r->c = c;
  r->f = kernel_named(p, c->fwd ? c->fwd : "f");
  r->g = kernel_named(p, c->grad ? c->grad : "g");
  if (!r->f || !r->g || !r->g->grad_of || strcmp(r->g->grad_of, r->f->name)) {
    diag("%s: no kernels f and g = grad(f)", c->name);
    return 0;
  }
  if (!bind_sizes(r->f, c->sizes ? c->sizes : "", r->sizes))
    return 0;
  fill_inputs(r);
  return 1;
}

static int setup(Run *r, const Case *c, const Program *p) {
  return prepare(r, c, p) && run_gradient(r);
}

/* Ops seen in the forward kernels checked by finite differences. */
static char seen_unary[UN_COUNT], seen_binary[BIN_COUNT], seen_reduce[RED_COUNT], seen_take;

static void note_ops(const Kernel *f) {
  for (int i = 0; i < f->values.len; i++) {
    const Value *v = f->values.items[i];
    if (v->op == IR_UNARY)
      seen_unary[v->uop] = 1;
    else if (v->op == IR_BINARY)
      seen_binary[v->bop] = 1;
    else if (v->op == IR_REDUCE)
      seen_reduce[v->rop] = 1;
    else if (v->op == IR_TAKE)
      seen_take = 1;
  }
}

static void check_case(const Case *c) {
  for (int optimize = 0; optimize < 2; optimize++) {
    const char *what = optimize ? "optimized" : "unoptimized";
    Program p;
    Run r;
    rng = 0x2545F4914F6CDD1Dull; /* the same inputs for both */
    int ready = compile(&p, c->name, c->src, optimize) && setup(&r, c, &p);
    if (!ok(ready, "%s: %s IR compiles and runs", c->name, what)) {
      arena_free(p.arena);
      continue;
    }
    if (!optimize)
      note_ops(r.f);
    check_differences(&r, what);
    free_run(&r);
    arena_free(p.arena);
  }
}

/* ---- the cases: every builtin, reduction, composite, cast, broadcast -------- */

#define F64_UNARY(op, lo, hi)                                          \
  {"unary " op, "kernel f(x: f64[N, D]) -> y { y = " op "(x) * 1.5 }\n" \
                "kernel g = grad(f)\n",                                \
   "N=2 D=3", NULL, NULL, {{NULL, lo, hi}}, 0, 0}

#define F64_EXPR(label, expr, lo, hi)                                        \
  {label, "kernel f(a: f64[N, D], b: f64[N, D]) -> y { y = " expr " }\n"     \
          "kernel g = grad(f)\n",                                            \
   "N=2 D=3", NULL, NULL, {{NULL, lo, hi}}, 0, 0}

static const Case cases[] = {
    /* unary builtins, in their domains */
    F64_UNARY("abs", 0.25, 2), F64_UNARY("abs", -2, -0.25),
    F64_UNARY("exp", -2, 2), F64_UNARY("exp2", -2, 2), F64_UNARY("expm1", -2, 2),
    F64_UNARY("log", 0.2, 3), F64_UNARY("log2", 0.2, 3), F64_UNARY("log10", 0.2, 3),
    F64_UNARY("log1p", -0.5, 3), F64_UNARY("sqrt", 0.2, 3), F64_UNARY("rsqrt", 0.2, 3),
    F64_UNARY("sin", -3, 3), F64_UNARY("cos", -3, 3), F64_UNARY("tan", -1.2, 1.2),
    F64_UNARY("asin", -0.9, 0.9), F64_UNARY("acos", -0.9, 0.9), F64_UNARY("atan", -3, 3),
    F64_UNARY("sinh", -2, 2), F64_UNARY("cosh", -2, 2), F64_UNARY("tanh", -2, 2),
    F64_UNARY("erf", -2, 2), F64_UNARY("sigmoid", -4, 4), F64_UNARY("relu", 0.1, 2),
    F64_UNARY("relu", -2, -0.1), F64_UNARY("gelu", -3, 3), F64_UNARY("gelu_tanh", -3, 3),
    F64_UNARY("silu", -4, 4), F64_UNARY("softplus", -5, 5), F64_UNARY("softplus", 18, 30),
    F64_UNARY("floor", -3, 3), F64_UNARY("ceil", -3, 3), F64_UNARY("round", -3, 3),
    F64_UNARY("trunc", -3, 3), F64_UNARY("sign", -3, 3), F64_UNARY("-", -3, 3),
    {"predicates", "kernel f(x: f64[N]) -> y {\n"
                   "  y = where(isnan(x) or isinf(x) or not isfinite(x), 0.0, x * 2)\n}\n"
                   "kernel g = grad(f)\n", "N=5", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    /* binary operators and builtins */
    F64_EXPR("a + b", "a + b", -2, 2), F64_EXPR("a - b", "a - b", -2, 2),
    F64_EXPR("a * b", "a * b", -2, 2), F64_EXPR("a / b", "a / b", 0.5, 2),
    F64_EXPR("a // b", "(a // b) * a + b", 0.3, 3), F64_EXPR("a % b", "a % b", 0.3, 3),
    F64_EXPR("a % -b", "a % -b", 0.3, 3), F64_EXPR("a ** b", "a ** b", 0.5, 2),
    F64_EXPR("pow(a, b) of negative exponents", "pow(a, -b)", 0.5, 2),
    F64_EXPR("a ** 3", "a ** 3 + b ** 2 + b ** 0.5", 0.5, 2),
    F64_EXPR("maximum", "maximum(a, b) * a", -2, 2),
    F64_EXPR("minimum", "minimum(a, b) * a", -2, 2),
    F64_EXPR("atan2", "atan2(a, b)", -2, 2),
    F64_EXPR("comparisons", "where(a < b and a <= b or a == b or a != b and a > b or a >= b, a, b * 2)", -2, 2),
    F64_EXPR("where", "where(a > 0, a * b, b - a)", -2, 2),
    F64_EXPR("clamp", "clamp(a, -0.5, b)", -2, 2),
    {"clamp bounds", "kernel f(x: f64[N], lo: f64[N], hi: f64[N]) -> y { y = clamp(x, lo, hi) * x }\n"
                     "kernel g = grad(f)\n", "N=8", NULL, NULL,
     {{NULL, -2, 2}, {"lo", -1, -0.25}, {"hi", 0.25, 1}}, 0, 0},
    /* reductions over each set of axes */
    {"sum", "kernel f(x: f64[B, N, D]) -> (a, b, c, d) {\n"
            "  a = sum(x, -1) * 2\n  b = sum(x, 1)\n  c = sum(x, 0, 2)\n  d = sum(x)\n}\n"
            "kernel g = grad(f)\n", "B=2 N=3 D=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"mean", "kernel f(x: f64[B, N, D]) -> (a, b, c) {\n"
             "  a = mean(x, -1) * mean(x, 0)\n  b = mean(x, 1)\n  c = mean(x)\n}\n"
             "kernel g = grad(f)\n", "B=2 N=3 D=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"var", "kernel f(x: f64[B, N, D]) -> (a, b, c) {\n"
            "  a = var(x, -1)\n  b = var(x, 0, 1) * x\n  c = var(x)\n}\n"
            "kernel g = grad(f)\n", "B=2 N=3 D=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"prod", "kernel f(x: f64[B, N, D]) -> (a, b) {\n"
             "  a = prod(x, -1)\n  b = prod(x, 0, 1)\n}\n"
             "kernel g = grad(f)\n", "B=2 N=3 D=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"max and min", "kernel f(x: f64[B, N, D]) -> (a, b, c) {\n"
                    "  a = max(x, -1)\n  b = min(x, 0, 2) * x\n  c = max(x) - min(x)\n}\n"
                    "kernel g = grad(f)\n", "B=2 N=3 D=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"argmax argmin any all", "kernel f(x: f64[N, D]) -> y {\n"
                              "  i = f64(argmax(x, -1) + argmin(x, 0) + argmax(x))\n"
                              "  y = where(any(x > 1, -1) and all(x < 3), x * i, -x)\n}\n"
                              "kernel g = grad(f)\n", "N=3 D=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    /* positions and gathers (language.md §9.6, §9.7): labels inside the
       rows (an index outside would give NaN) */
    {"positions and sizes", "kernel f(x: f64[N, D]) -> y {\n"
                            "  y = where(index(x, -1) > index(x, -2), x * 2, x * index(x, 1) * (D // 2) / N)\n}\n"
                            "kernel g = grad(f)\n", "N=3 D=5", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"take", "kernel f(x: f64[N, D], t: i64[N, 1], w: f64[D]) -> (a, b) {\n"
             "  a = take(x * w, t, -1) * 2\n  b = logsumexp(x, -1) - take(log_softmax(x, -1), t, -1)\n}\n"
             "kernel g = grad(f)\n", "N=3 D=5", NULL, NULL, {{NULL, -2, 2}, {"t", 0, 4.99}}, 0, 0},
    {"take along a middle axis", "kernel f(x: f64[B, N, D], t: i32[B, 1, D]) -> y {\n"
                                 "  y = take(x, t, 1) * take(x * x, t, 1)\n}\n"
                                 "kernel g = grad(f)\n", "B=2 N=4 D=3", NULL, NULL, {{NULL, -2, 2}, {"t", 0, 3.99}}, 0, 0},
    /* slices and concat (language.md §9.8, §9.9): the gradient gathers
       the cotangent back, 0 where nothing was read */
    {"slices", "kernel f(x: f64[N, D]) -> (a, b, c) {\n"
               "  a = x[:, :D // 2] * x[:, D // 2:2 * (D // 2)]\n  b = exp(x[1:]) + x[1:, :][:N - 1]\n"
               "  c = sum(x[:, -2:] * x[:, D - 2:], -1) + sum(x[:, ::2], -1)\n}\n"
               "kernel g = grad(f)\n", "N=3 D=5", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    /* gathers along two axes of one value: each affine axis inverted in
       turn, a take's one pick compared after (language.md §9.7, §9.8) */
    {"slices on two axes", "kernel f(x: f64[N, D]) -> (a, b, c, d) {\n"
                           "  a = x[1:, 1:] * x[:-1, :-1]\n  b = exp(x[::2, 1::2])\n  c = sum(x[1:, :][:, 2:] * 3, -1)\n"
                           "  d = x[1:, :][:, 2:][:1]\n}\n"
                           "kernel g = grad(f)\n", "N=4 D=5", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"slices of four axes", "kernel f(x: f64[B, C, H, W]) -> (y, z) {\n"
                            "  y = x[:, :, 1:-1, 1:-1] * 2 - x[:, :, :-2, 2:]\n  z = x[1:, :, 2:, ::2]\n}\n"
                            "kernel g = grad(f)\n", "B=2 C=2 H=4 W=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"take of a slice", "kernel f(x: f64[N, D], t: i64[1, 1], u: i32[N, 1], v: i32[1, 1]) -> (a, b, c) {\n"
                        "  a = take(x[..., 1:], t, 0) * 2\n  b = take(x * x, u, 1)[1:, :]\n"
                        "  c = take(take(x, t, 0), v, 1) + take(exp(x)[::2, 1:], t, 0)[:, :1]\n}\n"
                        "kernel g = grad(f)\n", "N=4 D=5", NULL, NULL, {{NULL, -2, 2}, {"t", 0, 1.99}, {"u", 0, 4.99}, {"v", 0, 4.99}}, 0, 0},
    /* a slice or take broadcast to a higher rank: its cotangent keeps the
       broadcast's 1s in front (an internal error before) */
    {"slices broadcast", "kernel f(x: f64[H], y: f64[B, 1], z: f64[N, H], w: f64[B, 1, 1], i: i64[1]) -> (a, b, c) {\n"
                         "  a = y + x[1:3]\n  b = y + sum(x[1:], 0)\n  c = z[:, 1:2] * w + take(x, i, 0)\n}\n"
                         "kernel g = grad(f)\n", "B=2 H=4 N=3", NULL, NULL, {{NULL, -2, 2}, {"i", 0, 3.99}}, 0, 0},
    {"concat of two-axis slices", "kernel f(x: f64[N, D]) -> (a, b) {\n"
                                  "  a = concat(x[1:, :1], x[:-1, 1:], 1)\n"
                                  "  b = softmax(concat(x[1:, 1:], x[:1, :-1] * 2, 0), -1)\n}\n"
                                  "kernel g = grad(f)\n", "N=3 D=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"rotary embedding", "kernel f(q: f64[S, H, D], c: f64[S, 1, D], s: f64[S, 1, D]) -> y {\n"
                         "  y = q * c + concat(-q[..., D // 2:], q[..., :D // 2], -1) * s\n}\n"
                         "kernel g = grad(f)\n", "S=2 H=2 D=6", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"concat and reductions", "kernel f(x: f64[N, D], y: f64[M, D]) -> (a, b) {\n"
                              "  z = concat(x, y * 2, x[:1], 0)\n  a = softmax(z, -1)\n"
                              "  b = (z - max(z, 0))[1:N + 1]\n}\n"
                              "kernel g = grad(f)\n", "N=3 M=2 D=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    /* composites and the examples' norms */
    {"softmax", "kernel f(x: f64[N, D]) -> (a, b) {\n"
                "  a = softmax(x, -1)\n  b = softmax(x * 3, 0)\n}\n"
                "kernel g = grad(f)\n", "N=3 D=5", NULL, NULL, {{NULL, -3, 3}}, 0, 0},
    {"log_softmax", "kernel f(x: f64[B, N, D]) -> (a, b) {\n"
                    "  a = log_softmax(x, -1)\n  b = log_softmax(x, 1)\n}\n"
                    "kernel g = grad(f)\n", "B=2 N=3 D=4", NULL, NULL, {{NULL, -3, 3}}, 0, 0},
    {"logsumexp", "kernel f(x: f64[B, N, D]) -> (a, b, c) {\n"
                  "  a = logsumexp(x, -1)\n  b = logsumexp(x, 0, 2)\n  c = logsumexp(x)\n}\n"
                  "kernel g = grad(f)\n", "B=2 N=3 D=4", NULL, NULL, {{NULL, -3, 3}}, 0, 0},
    {"rmsnorm", "fn rms(x, eps) = x * rsqrt(mean(x * x, -1) + eps)\n"
                "kernel f(x: f64[M, N], w: f64[N]) -> y { y = rms(x, 1e-6) * w }\n"
                "kernel g = grad(f)\n", "M=3 N=5", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"layernorm", "kernel f(x: f64[M, N], w: f64[N], b: f64[N])\n"
                  "    -> (y: f64[M, N], mu: f64[M], rstd: f64[M]) {\n"
                  "  mu = mean(x, -1)\n  rstd = rsqrt(var(x, -1) + 1e-5)\n"
                  "  y = (x - mu) * rstd * w + b\n}\n"
                  "kernel g = grad(f)\n", "M=3 N=5", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"layernorm by hand", "kernel f(x: f64[M, N], w: f64[N]) -> y {\n"
                          "  xc = x - mean(x, -1)\n"
                          "  y = xc * rsqrt(mean(xc * xc, -1) + 1e-5) * w\n}\n"
                          "kernel g = grad(f)\n", "M=3 N=5", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"add_rmsnorm", "kernel f(x: f64[M, N], r: f64[M, N], w: f64[N]) -> (h: f64[M, N], y: f64[M, N]) {\n"
                    "  h = x + r\n  y = h * rsqrt(mean(h * h, -1) + 1e-6) * w\n}\n"
                    "kernel g = grad(f)\n", "M=3 N=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"swiglu", "kernel f(a: f64[M, N], b: f64[M, N]) -> y { y = silu(a) * b }\n"
               "kernel g = grad(f)\n", "M=3 N=4", NULL, NULL, {{NULL, -3, 3}}, 0, 0},
    {"geglu", "kernel f(a: f64[M, N], b: f64[M, N]) -> y { y = gelu(a) * b + gelu_tanh(b) * a }\n"
              "kernel g = grad(f)\n", "M=3 N=4", NULL, NULL, {{NULL, -3, 3}}, 0, 0},
    {"cross entropy", "kernel f(l: f64[N, V], t: f64[N, V]) -> (loss: f64[N]) {\n"
                      "  loss = sum(t * (logsumexp(l, -1) - l), -1)\n}\n"
                      "kernel g = grad(f, l)\n", "N=3 V=5", NULL, NULL, {{NULL, -3, 3}}, 0, 0},
    /* broadcasts and declared shapes */
    {"broadcasts", "kernel f(x: f64[B, N, D], row: f64[D], col: f64[N, 1], s: f64, one: f64[1, D])\n"
                   "    -> y { y = x * row + col * s - one * x + s }\n"
                   "kernel g = grad(f)\n", "B=2 N=3 D=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"literal dims", "kernel f(x: f64[2, 3], w: f64[1, 3], v: f64[3]) -> y {\n"
                     "  y = mean(x * w, -1) + sum(v) * x\n}\n"
                     "kernel g = grad(f)\n", "", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"declared shapes", "kernel f(x: f64[N, D], v: f64[N]) -> (m: f64[N], s: f64, r: f64[1, N], c: f64[N, 1]) {\n"
                        "  m = max(x, -1) * sum(x, -1)\n  s = sum(x * x)\n  r = v * 2\n  c = mean(x, 1)\n}\n"
                        "kernel g = grad(f)\n", "N=3 D=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    {"outputs that are inputs", "kernel f(x: f64[N], y: f64[N]) -> (a, b, c) {\n"
                                "  a = x\n  b = x\n  c = x * y\n}\n"
                                "kernel g = grad(f, y, x)\n", "N=4", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    /* casts: between floats the rounding passes the gradient on */
    {"casts f32 f64", "kernel f(x: f32[N], w: f64[N]) -> (y: f32[N], z: f64[N]) {\n"
                      "  y = f32(f64(x) * w)\n  z = f64(x) * f64(f32(w))\n}\n"
                      "kernel g = grad(f)\n", "N=4", NULL, NULL, {{NULL, -2, 2}}, 1e-4, 1e-2},
    {"casts to integers", "kernel f(x: f64[N]) -> y {\n"
                          "  y = f64(i32(x * 3)) + f64(i64(x)) * x + f64(bool(x)) + f64(x > 0)\n}\n"
                          "kernel g = grad(f)\n", "N=5", NULL, NULL, {{NULL, 0.1, 2.9}}, 0, 0},
    {"integer inputs", "kernel f(x: f64[N], i: i64[N], m: bool[N]) -> y {\n"
                       "  y = where(m, x * f64(i), x ** 2)\n}\n"
                       "kernel g = grad(f)\n", "N=6", NULL, NULL, {{NULL, -3, 3}}, 0, 0},
    {"f32", "fn rms(x, eps) = x * rsqrt(mean(x * x, -1) + eps)\n"
            "kernel f(x: f32[M, N], w: f32[N]) -> y { y = rms(x, 1e-6) * w }\n"
            "kernel g = grad(f)\n", "M=3 N=5", NULL, NULL, {{NULL, -2, 2}}, 0, 0},
    /* a gradient of a gradient */
    {"second order", "kernel f(x: f64[N, D], w: f64[D]) -> y { y = sum(tanh(x * w) * x, -1) }\n"
                     "kernel g = grad(f)\n"
                     "kernel h = grad(g, x, dy)\n", "N=2 D=3", "g", "h", {{NULL, -2, 2}}, 0, 0},
    {"second order of softmax", "kernel f(x: f64[N, D]) -> y { y = softmax(x, -1) }\n"
                                "kernel g = grad(f)\n"
                                "kernel h = grad(g)\n", "N=2 D=4", "g", "h", {{NULL, -2, 2}}, 0, 0},
};

/* ---- the rules where the function is not differentiable ---------------------- */

typedef struct Point {
  const char *name;
  const char *src;       /* f64 kernels f and g = grad(f), sizes literal */
  double in[4][8];       /* g's inputs (f's, then the cotangents) */
  double want[4][8];     /* g's outputs, as torch.autograd gives them */
} Point;

static const Point points[] = {
    {"relu at 0", "kernel f(x: f64[4]) -> y { y = relu(x) }\nkernel g = grad(f)\n",
     {{-1, 0, -0.0, 2}, {1, 1, 1, 1}}, {{0, 0, 0, 1}}},
    {"abs at 0", "kernel f(x: f64[3]) -> y { y = abs(x) }\nkernel g = grad(f)\n",
     {{-2, 0, 3}, {1, 1, 1}}, {{-1, 0, 1}}},
    {"max ties", "kernel f(x: f64[2, 3]) -> (y: f64[2]) { y = max(x, -1) }\nkernel g = grad(f)\n",
     {{1, 3, 3, 2, 2, 2}, {1, 3}}, {{0, 0.5, 0.5, 1, 1, 1}}},
    {"min ties over all axes", "kernel f(x: f64[2, 2]) -> (y: f64) { y = min(x) }\nkernel g = grad(f)\n",
     {{1, 0, 0, 2}, {4}}, {{0, 2, 2, 0}}},
    {"maximum ties", "kernel f(a: f64[3], b: f64[3]) -> y { y = maximum(a, b) }\nkernel g = grad(f)\n",
     {{1, 2, 3}, {1, 1, 4}, {1, 1, 1}}, {{0.5, 1, 0}, {0.5, 0, 1}}},
    {"minimum ties", "kernel f(a: f64[3], b: f64[3]) -> y { y = minimum(a, b) }\nkernel g = grad(f)\n",
     {{1, 2, 3}, {1, 1, 4}, {2, 2, 2}}, {{1, 0, 2}, {1, 2, 0}}},
    {"clamp at its bounds", "kernel f(x: f64[5]) -> y { y = clamp(x, 0, 1) }\nkernel g = grad(f)\n",
     {{-1, 0, 0.5, 1, 2}, {1, 1, 1, 1, 1}}, {{0, 1, 1, 1, 0}}},
    {"clamp's bounds as tensors", "kernel f(x: f64[5], lo: f64[5], hi: f64[5]) -> y { y = clamp(x, lo, hi) }\n"
                                  "kernel g = grad(f)\n",
     {{-1, 0, 0.5, 1, 2}, {0, 0, 0, 0, 3}, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}},
     {{0, 1, 1, 1, 0}, {1, 0, 0, 0, 0}, {0, 0, 0, 0, 1}}},
    {"prod with one zero", "kernel f(x: f64[3]) -> y { y = prod(x) }\nkernel g = grad(f)\n",
     {{2, 0, 3}, {1}}, {{0, 6, 0}}},
    {"prod with two zeros", "kernel f(x: f64[2, 3]) -> (y: f64[2]) { y = prod(x, -1) }\nkernel g = grad(f)\n",
     {{0, 0, 3, 2, 4, 3}, {1, 2}}, {{0, 0, 0, 24, 12, 16}}},
    {"where", "kernel f(c: bool[2], a: f64[2], b: f64[2]) -> y { y = where(c, a, b) }\nkernel g = grad(f)\n",
     {{1, 0}, {5, 6}, {7, 8}, {2, 3}}, {{2, 0}, {0, 3}}},
    {"sqrt, rsqrt and log at 0", "kernel f(a: f64[1], b: f64[1], c: f64[1]) -> y {\n"
                                 "  y = sqrt(a) + rsqrt(b) + log(c)\n}\nkernel g = grad(f)\n",
     {{0}, {0}, {0}, {1}}, {{INFINITY}, {-INFINITY}, {INFINITY}}},
    {"pow at 0", "kernel f(a: f64[3], b: f64[3]) -> y { y = a ** b }\nkernel g = grad(f)\n",
     {{0, 0, 0}, {2, 0, 0.5}, {1, 1, 1}}, {{0, 0, INFINITY}, {0, 0, 0}}},
    {"detach", "kernel f(x: f64[2]) -> y { y = x * detach(x) + detach(x * 5) }\nkernel g = grad(f)\n",
     {{3, -2}, {1, 2}}, {{3, -4}}},
    {"steps have no gradient", "kernel f(x: f64[4]) -> y {\n"
                               "  y = floor(x) + ceil(x) + round(x) + trunc(x) + sign(x) + x // 2\n}\n"
                               "kernel g = grad(f)\n",
     {{-1.5, 0, 0.5, 2}, {1, 1, 1, 1}}, {{0, 0, 0, 0}}},
    {"no cotangent reaches", "kernel f(x: f64[2], w: f64[2]) -> y { y = where(x > w, 1.0, 2.0) }\n"
                             "kernel g = grad(f)\n",
     {{1, 2}, {2, 1}, {1, 1}}, {{0, 0}, {0, 0}}},
};

static void check_point(const Point *pt) {
  Program p;
  int ready = compile(&p, pt->name, pt->src, 0);
  const Kernel *g = ready ? kernel_named(&p, "g") : NULL;
  if (!ok(g != NULL, "%s: compiles", pt->name)) {
    arena_free(p.arena);
    return;
  }
  const void *ins[MAX_TENSORS];
  void *outs[MAX_TENSORS];
  Tensor in[MAX_TENSORS] = {{0}}, out[MAX_TENSORS] = {{0}};
  for (int i = 0; i < g->ninputs; i++) {
    in[i] = tensor(g->inputs[i].dtype, &g->inputs[i].shape, NULL);
    for (int64_t e = 0; e < in[i].n; e++)
      set(&in[i], e, pt->in[i][e]);
    ins[i] = in[i].buf;
  }
  for (int j = 0; j < g->noutputs; j++) {
    out[j] = tensor(g->outputs[j].dtype, &g->outputs[j].shape, NULL);
    outs[j] = out[j].buf;
  }
  int st = interp_kernel(g, NULL, ins, outs, NULL);
  for (int j = 0; j < g->noutputs; j++) {
    int64_t bad = -1;
    for (int64_t e = 0; e < out[j].n && bad < 0; e++) {
      double got = get(&out[j], e), want = pt->want[j][e];
      if (!(got == want || (isnan(got) && isnan(want))))
        bad = e;
    }
    if (!ok(st == INTERP_SUCCESS && bad < 0, "%s: %s as torch.autograd gives",
            pt->name, g->outputs[j].name))
      diag("element %lld: %.17g, torch gives %.17g", (long long)bad,
           bad >= 0 ? get(&out[j], bad) : 0.0, bad >= 0 ? pt->want[j][bad] : 0.0);
  }
  for (int i = 0; i < MAX_TENSORS; i++) {
    free(in[i].buf);
    free(out[i].buf);
  }
  arena_free(p.arena);
}

/* ---- 16-bit kernels against their f32 twin ----------------------------------- */

typedef struct Twin {
  const char *name;
  const char *src16, *src32; /* f and g = grad(f) each */
  const char *sizes;
} Twin;

static const Twin twins[] = {
    {"rmsnorm bf16",
     "kernel f(x: bf16[M, N], w: bf16[N]) -> (y: bf16[M, N]) {\n"
     "  xf = f32(x)\n  y = bf16(xf * rsqrt(mean(xf * xf, -1) + 1e-6) * f32(w))\n}\n"
     "kernel g = grad(f)\n",
     "kernel f(x: f32[M, N], w: f32[N]) -> (y: f32[M, N]) {\n"
     "  y = x * rsqrt(mean(x * x, -1) + 1e-6) * w\n}\n"
     "kernel g = grad(f)\n", "M=3 N=8"},
    {"softmax f16",
     "kernel f(x: f16[M, N]) -> (y: f16[M, N]) { y = softmax(f32(x), -1) }\n"
     "kernel g = grad(f)\n",
     "kernel f(x: f32[M, N]) -> (y: f32[M, N]) { y = softmax(x, -1) }\n"
     "kernel g = grad(f)\n", "M=2 N=5"},
    {"layernorm bf16",
     "kernel f(x: bf16[M, N], w: bf16[N], b: bf16[N]) -> (y: bf16[M, N], mu: f32[M], rstd: f32[M]) {\n"
     "  mu = mean(f32(x), -1)\n  rstd = rsqrt(var(f32(x), -1) + 1e-5)\n  y = (x - mu) * rstd * w + b\n}\n"
     "kernel g = grad(f)\n",
     "kernel f(x: f32[M, N], w: f32[N], b: f32[N]) -> (y: f32[M, N], mu: f32[M], rstd: f32[M]) {\n"
     "  mu = mean(x, -1)\n  rstd = rsqrt(var(x, -1) + 1e-5)\n  y = (x - mu) * rstd * w + b\n}\n"
     "kernel g = grad(f)\n", "M=3 N=6"},
};

/* The 16-bit gradient is the twin's (the same values, computed in f32 by
 * both), rounded once where it is stored. */
static void check_twin(const Twin *tw) {
  Program p16, p32;
  Run r16, r32;
  Case c16 = {tw->name, tw->src16, tw->sizes, NULL, NULL, {{NULL, -2, 2}}, 0, 0};
  Case c32 = c16;
  c32.src = tw->src32;
  int ready = compile(&p16, tw->name, tw->src16, 0) && setup(&r16, &c16, &p16) &&
              compile(&p32, tw->name, tw->src32, 0) && prepare(&r32, &c32, &p32);
  for (int i = 0; ready && i < r32.g->ninputs; i++)
    for (int64_t e = 0; e < r32.in[i].n; e++)
      set(&r32.in[i], e, get(&r16.in[i], e)); /* the 16-bit values */
  ready = ready && run_gradient(&r32);
  if (ok(ready, "%s: compiles and runs", tw->name)) {
    for (int j = 0; j < r16.g->noutputs; j++) {
      int64_t bad = -1;
      for (int64_t e = 0; e < r16.out[j].n && bad < 0; e++) {
        double twin = r32.grad[j][e], stored = get(&r16.out[j], e);
        DType t = r16.out[j].t;
        double rounded = t == DT_BF16  ? interp_round_bf16(twin)
                         : t == DT_F16 ? interp_round_f16(twin)
                                       : twin;
        if (!(stored == rounded) || t == DT_F32 || t == DT_F64)
          bad = e;
      }
      if (!ok(bad < 0, "%s: %s is the f32 twin's, rounded once", tw->name,
              r16.g->outputs[j].name))
        diag("element %lld: %.9g, twin %.17g", (long long)bad,
             get(&r16.out[j], bad), r32.grad[j][bad]);
    }
  }
  if (ready) {
    free_run(&r16);
    free_run(&r32);
  }
  arena_free(p16.arena);
  arena_free(p32.arena);
}

/* ---- every op has a finite-difference case ------------------------------------ */

static void check_coverage(void) {
  static const char *const unary[] = {
#define X(e, name, kind, d) name,
      TECC_UNARY_BUILTINS(X)
#undef X
  };
  static const char *const binary[] = {
#define X(e, spelling, kind, d) spelling,
      TECC_BINARY_OPS(X)
#undef X
  };
  static const char *const reductions[] = {
#define X(e, name, d) name,
      TECC_REDUCTIONS(X)
#undef X
  };
  seen_reduce[RED_VAR] = seen_reduce[RED_MEAN]; /* var is lowered to means */
  for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++)
    ok(seen_unary[i], "unary '%s' has a finite-difference case", unary[i]);
  ok(seen_unary[UN_NEG] && seen_unary[UN_NOT],
     "unary - and not have finite-difference cases");
  for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++)
    ok(seen_binary[i], "binary '%s' has a finite-difference case", binary[i]);
  for (size_t i = 0; i < sizeof reductions / sizeof reductions[0]; i++)
    ok(seen_reduce[i], "reduction '%s' has a finite-difference case", reductions[i]);
  ok(seen_take, "take has a finite-difference case");
}

int main(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_case(&cases[i]);
  for (size_t i = 0; i < sizeof points / sizeof points[0]; i++)
    check_point(&points[i]);
  for (size_t i = 0; i < sizeof twins / sizeof twins[0]; i++)
    check_twin(&twins[i]);
  check_coverage();
  return done_testing();
}
