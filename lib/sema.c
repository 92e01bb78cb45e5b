/* sema.c — program structure (doc/language.md §4-§5): imports, functions and
 * their inlining, kernels (explicit and implicit), names, size variables,
 * outputs, -D bindings; each expression is typed by sema_expr.c.  The
 * result is the typed program of typed.h (sema_check()); see sema.h. */
#include "sema.h"
#include "parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- string map ------------------------------------------------------------ */

static uint32_t str_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

void *strmap_get(const StrMap *m, const char *key) {
  if (!m->cap)
    return NULL;
  for (uint32_t i = str_hash(key) & (uint32_t)(m->cap - 1);;
       i = (i + 1) & (uint32_t)(m->cap - 1)) {
    if (!m->keys[i])
      return NULL;
    if (!strcmp(m->keys[i], key))
      return m->vals[i];
  }
}

static void strmap_grow(Arena *a, StrMap *m) {
  StrMap bigger = {0};
  bigger.cap = m->cap ? m->cap * 2 : 16;
  bigger.keys = ARENA_ARRAY(a, const char *, bigger.cap);
  bigger.vals = ARENA_ARRAY(a, void *, bigger.cap);
  for (int i = 0; i < m->cap; i++)
    if (m->keys[i])
      strmap_put(a, &bigger, m->keys[i], m->vals[i]);
  *m = bigger;
}

void strmap_put(Arena *a, StrMap *m, const char *key, void *val) {
  if ((m->len + 1) * 2 > m->cap)
    strmap_grow(a, m);
  uint32_t i = str_hash(key) & (uint32_t)(m->cap - 1);
  while (m->keys[i] && strcmp(m->keys[i], key))
    i = (i + 1) & (uint32_t)(m->cap - 1);
  if (!m->keys[i])
    m->len++;
  m->keys[i] = key;
  m->vals[i] = val;
}

/* ---- what earlier errors hide ------------------------------------------- */

/* A name whose definition did not parse (or any name, after a broken
 * statement whose name could not be read): its uses are not reported,
 * the syntax error is their cause.  Any kernel's scope: a name broken in
 * one kernel also silences its undeclared uses in another. */
static int is_broken(const Sema *s, const char *name) {
  return s->broken_unnamed || strmap_get(&s->broken, name) ||
         !strcmp(name, AST_ERROR_NAME);
}

static void note_broken(Sema *s, const AstFile *f) {
  for (int i = 0; i < f->nbroken; i++)
    strmap_put(s->a, &s->broken, f->broken[i], (void *)f);
  s->broken_unnamed |= f->broken_unnamed;
  s->import_failed |= f->broken_import;
}

/* An unused input or value: a warning given only when the program has no
 * errors, where it would more often be a consequence than a cause. */
typedef struct Unused {
  SrcRange loc;
  const char *what; /* "input" or "value" */
  const char *name;
} Unused;

static void warn_later(Sema *s, SrcRange loc, const char *what, const char *name) {
  Unused *u = ARENA_NEW(s->a, Unused);
  *u = (Unused){loc, what, name};
  vec_push(s->a, &s->unused, u);
}

static void give_unused_warnings(Sema *s) {
  for (int i = 0; i < s->unused.len && !diag_has_errors(s->d); i++) {
    const Unused *u = s->unused.items[i];
    diag_warning(s->d, u->loc, "unused %s '%s'", u->what, u->name);
  }
}

/* ---- spelling suggestions ------------------------------------------------ */

/* Optimal string alignment distance: a swap of neighbours counts 1. */
static int edit_distance(const char *a, const char *b, int limit) {
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (la - lb > limit || lb - la > limit || la > 64 || lb > 64)
    return limit + 1;
  static const int W = 65;
  int d[65 * 65];
  for (int i = 0; i <= la; i++)
    d[i * W] = i;
  for (int j = 0; j <= lb; j++)
    d[j] = j;
  for (int i = 1; i <= la; i++)
    for (int j = 1; j <= lb; j++) {
      int cost = a[i - 1] != b[j - 1];
      int best = d[(i - 1) * W + j - 1] + cost;
      if (d[(i - 1) * W + j] + 1 < best)
        best = d[(i - 1) * W + j] + 1;
      if (d[i * W + j - 1] + 1 < best)
        best = d[i * W + j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[(i - 2) * W + j - 2] + 1 < best)
        best = d[(i - 2) * W + j - 2] + 1;
      d[i * W + j] = best;
    }
  return d[la * W + lb];
}

/* The closest candidate to `name` (ties: the first in strcmp order), if
 * it is close enough to be a likely typo. */
typedef struct Suggestion {
  const char *name;
  const char *best;
  int dist;
} Suggestion;

/* Up to 2 edits, fewer for short names: 'expp' -> 'exp', 'xs' -> 'x',
 * 'wieght' -> 'weight'; never for a one-letter name. */
static void suggest_init(Suggestion *sg, const char *name) {
  size_t n = strlen(name);
  sg->name = name;
  sg->best = NULL;
  sg->dist = n <= 1 ? 0 : n <= 5 ? 1 : 2;
}

static void suggest_consider(Suggestion *sg, const char *cand) {
  if (!strcmp(cand, sg->name) || sg->dist == 0)
    return;
  int d = edit_distance(sg->name, cand, sg->dist);
  if (d > sg->dist || (sg->best && d == sg->dist && strcmp(cand, sg->best) > 0))
    return;
  if (!sg->best || d < sg->dist || strcmp(cand, sg->best) < 0) {
    sg->best = cand;
    sg->dist = d;
  }
}

static void suggest_map(Suggestion *sg, const StrMap *m) {
  for (int i = 0; i < m->cap; i++)
    if (m->keys[i])
      suggest_consider(sg, m->keys[i]);
}

static void suggest_builtins(Suggestion *sg) {
  static const char *const names[] = {
#define X(e, name, kind, d) name,
      TECC_UNARY_BUILTINS(X)
#undef X
#define X(e, name, d) name,
      TECC_REDUCTIONS(X)
#undef X
#define X(e, name, ctype, size, comp) name,
      TECC_DTYPES(X)
#undef X
      "maximum", "minimum", "pow", "atan2", "where", "clamp", "detach"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    suggest_consider(sg, names[i]);
}

/* "; did you mean 'x'?" or "". */
static const char *did_you_mean(Arena *a, const Suggestion *sg) {
  return sg->best ? arena_printf(a, "; did you mean '%s'?", sg->best) : "";
}

/* ---- diagnostics ------------------------------------------------------- */

Diag *sema_error(Sema *s, SrcRange r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = arena_vprintf(s->a, fmt, ap);
  va_end(ap);
  if (s->depth == 0)
    return diag_error(s->d, r, "%s", msg);
  if (s->expansion_failed)
    return NULL; /* one error per expansion: the rest repeat it */
  s->expansion_failed = 1;
  Diag *d = diag_error(s->d, s->frames[0].call, "%s", msg);
  for (int i = 0; i < s->depth; i++) {
    SrcRange at = i + 1 < s->depth ? s->frames[i + 1].call : r;
    diag_note(s->d, d, at, "in expansion of '%s'", s->frames[i].fn->name);
  }
  return d;
}

static void note_defined(Sema *s, Diag *d, SrcRange at) {
  diag_note(s->d, d, at, "previous definition is here");
}

/* ---- bindings of a kernel -------------------------------------------- */

typedef struct Binding {
  const char *name;
  SrcRange loc;
  TVal *val;        /* NULL when its definition had an error */
  int input;        /* 1 + the input's index, or 0 */
  int reads;
} Binding;

typedef struct KernelBuild {
  const char *name;
  SrcRange loc;
  int order;                  /* fns visible: order below this */
  PtrVec inputs;              /* Binding* */
  PtrVec assigns;             /* Binding* of assignments, in order */
  StrMap later;               /* names assigned anywhere in the kernel */
} KernelBuild;

static int reserved_name(Sema *s, const char *name, SrcRange loc) {
  if (!is_builtin_name(s, name))
    return 0;
  sema_error(s, loc, "cannot redefine builtin '%s'", name);
  return 1;
}

static int is_constant_name(const char *name);

/* An input, value, output or fn parameter may shadow a builtin function
 * (`cos: f32[S, D]`, doc/language.md §4.3); the dtype names and the
 * constants pi, inf and nan stay reserved. */
static int reserved_tensor_name(Sema *s, const char *name, SrcRange loc) {
  DType t;
  if (!is_constant_name(name) && !dtype_from_name(name, &t))
    return 0;
  return reserved_name(s, name, loc);
}

/* A call of a builtin's name that a tensor shadows: `what` is "an input",
 * "a value" or "a parameter of 'f'", `noun` the word to rename, `how`
 * "declared" or "assigned" for the note at the shadowing definition. */
static void shadowed_call(Sema *s, const Expr *call, const char *what,
                          const char *noun, SrcRange defined, const char *how) {
  Diag *d = sema_error(s, call->name_loc, "cannot call '%s': it is %s here and "
                       "hides the builtin; rename the %s to call it", call->name,
                       what, noun);
  if (d)
    diag_note(s->d, d, defined, "'%s' is %s here", call->name, how);
}

static Binding *bind(Sema *s, const char *name, SrcRange loc, TVal *val) {
  Binding *b = ARENA_NEW(s->a, Binding);
  b->name = name;
  b->loc = loc;
  b->val = val;
  strmap_put(s->a, s->scope, name, b);
  return b;
}

/* Checks that `name` may be defined now in the kernel's scope.  A name
 * that may not is bound to an error value when it is still free, so that
 * its uses do not report again. */
static int check_new_name(Sema *s, const char *name, SrcRange loc, int decl) {
  Binding *old = strmap_get(s->scope, name);
  if (!old && reserved_tensor_name(s, name, loc)) {
    bind(s, name, loc, NULL);
    return 0;
  }
  if (!old && strmap_get(&s->sizevars, name)) {
    sema_error(s, loc, "'%s' is already a size variable", name);
    bind(s, name, loc, NULL);
    return 0;
  }
  if (old) {
    if (decl) {
      note_defined(s, sema_error(s, loc, "redefinition of '%s'", name),
                   old->loc);
    } else if (old->input) {
      Diag *d = sema_error(s, loc, "cannot assign to input '%s'", name);
      diag_note(s->d, d, old->loc, "'%s' is declared here", name);
    } else {
      note_defined(s, sema_error(s, loc, "'%s' is already assigned", name),
                   old->loc);
    }
    return 0;
  }
  return 1;
}

/* ---- size variables and types ----------------------------------------- */

static int sizevar_index(Sema *s, const char *name) {
  return (int)(intptr_t)strmap_get(&s->sizevars, name) - 1;
}

static int add_sizevar(Sema *s, const char *name, SrcRange loc) {
  int i = sizevar_index(s, name);
  if (i >= 0)
    return i;
  if (is_builtin_name(s, name) || strmap_get(&s->fns, name) ||
      strmap_get(&s->later_fns, name)) {
    sema_error(s, loc, "size variable '%s' has the name of a %s", name,
               is_builtin_name(s, name) ? "builtin" : "function");
    return -2;
  }
  if (strmap_get(s->scope, name) || strmap_get(&s->tensor_names, name)) {
    sema_error(s, loc, "size variable '%s' has the name of a tensor", name);
    return -2;
  }
  i = s->sizevar_names.len;
  vec_push(s->a, &s->sizevar_names, (void *)name);
  strmap_put(s->a, &s->sizevars, name, (void *)(intptr_t)(i + 1));
  return i;
}

/* An input type: its size variables join the kernel's. */
static int input_shape(Sema *s, const AstType *t, Shape *out) {
  out->rank = t->rank;
  int ok = 1;
  for (int i = 0; i < t->rank; i++) {
    const AstDim *d = &t->dims[i];
    out->d[i] = (Dim){-1, d->value};
    if (d->expr) {
      sema_error(s, d->loc, "an input's size is a literal or a size variable; size expressions "
                 "are for output types");
      ok = 0;
      continue;
    }
    if (d->var) {
      out->d[i].var = add_sizevar(s, d->var, d->loc);
      ok &= out->d[i].var >= 0;
    }
  }
  return ok;
}

/* An output type: its size variables must come from the inputs. */
static int output_shape(Sema *s, const AstType *t, Shape *out) {
  out->rank = t->rank;
  int ok = 1;
  for (int i = 0; i < t->rank; i++) {
    const AstDim *d = &t->dims[i];
    out->d[i] = (Dim){-1, d->value};
    if (d->expr) {
      ok &= sema_output_dim(s, d, &out->d[i]);
      continue;
    }
    if (!d->var)
      continue;
    out->d[i].var = sizevar_index(s, d->var);
    if (out->d[i].var < 0) {
      sema_error(s, d->loc, "size variable '%s' appears only in output types",
                 d->var);
      ok = 0;
    }
  }
  return ok;
}

/* ---- functions ----------------------------------------------------------- */

static int fn_visible(Sema *s, const FnDef *f, int order, SrcRange loc) {
  if (f->order < order)
    return 1;
  Diag *d = sema_error(s, loc, "function '%s' is used before its definition",
                       f->name);
  diag_note(s->d, d, f->stmt->name_loc, "'%s' is defined here", f->name);
  return 0;
}

static int check_arity(Sema *s, const Expr *call, int lo, int hi) {
  int n = call->nargs;
  if (n >= lo && (hi < 0 || n <= hi))
    return 1;
  const char *plural = lo == 1 ? "" : "s";
  if (hi < 0)
    sema_error(s, call->loc, "'%s' takes at least %d argument%s, %d given",
               call->name, lo, plural, n);
  else if (lo == hi)
    sema_error(s, call->loc, "'%s' takes %d argument%s, %d given", call->name,
               lo, plural, n);
  else
    sema_error(s, call->loc, "'%s' takes %d to %d arguments, %d given",
               call->name, lo, hi, n);
  return 0;
}

static void fn_arity(const FnDef *f, int *lo, int *hi) {
  *lo = *hi = f->stmt->nparams;
  if (f->variadic) {
    *lo -= 1;
    *hi = -1;
  }
}

/* What the frameworks' functions that tecc lacks become
 * (doc/language.md §14); the hint follows "unknown function 'NAME'". */
static const char *missing_function_hint(const char *name) {
  static const char *const hints[][2] = {
      {"reshape", "reshape"}, {"view", "reshape"}, {"flatten", "reshape"},
      {"squeeze", "reshape"}, {"unsqueeze", "reshape"}, {"expand_dims", "reshape"},
      {"transpose", "transpose"}, {"permute", "transpose"}, {"swapaxes", "transpose"},
      {"matmul", "matrix product"}, {"mm", "matrix product"}, {"bmm", "matrix product"},
      {"dot", "matrix product"}, {"einsum", "matrix product"}, {"linear", "matrix product"},
      {"cumsum", "scan"}, {"cumprod", "scan"}, {"topk", "top-k"}, {"sort", "sort"},
      {"argsort", "sort"}, {"conv1d", "convolution"}, {"conv2d", "convolution"},
  };
  for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
    if (!strcmp(name, hints[i][0]))
      return hints[i][1];
  return NULL;
}

/* "; did you mean 'sum'?", a note on what tecc lacks, or "". */
static const char *unknown_function_hint(Sema *s, const char *name) {
  const char *missing = missing_function_hint(name);
  if (missing && !strcmp(missing, "matrix product"))
    return "; tecc has no matrix product: call cuBLAS or CUTLASS for it and fuse "
           "what surrounds it with tecc (doc/language.md §14)";
  if (missing)
    return arena_printf(s->a, "; tecc has no %s: a kernel's tensors keep the shapes "
                        "and order of their types (doc/language.md §14)", missing);
  Suggestion sg;
  suggest_init(&sg, name);
  suggest_builtins(&sg);
  suggest_map(&sg, &s->fns);
  return did_you_mean(s->a, &sg);
}

/* A call of a name that is no builtin and no fn of any file. */
static int unknown_callee(Sema *s, const Expr *call) {
  int lo, hi;
  return !builtin_arity(s, call->name, &lo, &hi) && !strmap_get(&s->fns, call->name) &&
         !strmap_get(&s->later_fns, call->name);
}

/* A call's callee exists, is visible from `order` and gets enough
 * arguments; *fn is set for fn calls. */
static int check_callee(Sema *s, const Expr *call, int order, FnDef **fn) {
  int lo, hi;
  *fn = NULL;
  if (builtin_arity(s, call->name, &lo, &hi))
    return check_arity(s, call, lo, hi);
  FnDef *f = strmap_get(&s->fns, call->name);
  const Stmt *later = strmap_get(&s->later_fns, call->name);
  if (!f && later) {
    Diag *d = sema_error(s, call->name_loc,
                         "function '%s' is used before its definition",
                         call->name);
    diag_note(s->d, d, later->name_loc, "'%s' is defined here", call->name);
    return 0;
  }
  if (!f && !strcmp(call->name, "grad")) {
    sema_error(s, call->name_loc, "'grad' makes a kernel: write 'kernel NAME = "
                                  "grad(KERNEL)' at the top level");
    return 0;
  }
  if (!f) {
    /* after a broken import or fn, the function may well be defined there */
    if (!s->import_failed && !is_broken(s, call->name))
      sema_error(s, call->name_loc, "unknown function '%s'%s", call->name,
                 unknown_function_hint(s, call->name));
    return 0;
  }
  if (!fn_visible(s, f, order, call->name_loc))
    return 0;
  fn_arity(f, &lo, &hi);
  *fn = f;
  return check_arity(s, call, lo, hi);
}

static int fn_param_index(const Stmt *fn, const char *name) {
  for (int i = 0; i < fn->nparams; i++)
    if (!strcmp(fn->params[i].name, name))
      return i;
  return -1;
}

static int is_constant_name(const char *name) {
  return !strcmp(name, "pi") || !strcmp(name, "inf") || !strcmp(name, "nan");
}

/* A call in a fn body of one of its parameters' names. */
static int calls_param(Sema *s, const FnDef *f, const Expr *e) {
  int i = e->kind == EXPR_CALL ? fn_param_index(f->stmt, e->name) : -1;
  if (i < 0)
    return 0;
  shadowed_call(s, e, arena_printf(s->a, "a parameter of '%s'", f->name), "parameter",
                f->stmt->params[i].loc, "declared");
  return 1;
}

/* Names and calls of a fn body, checked once at its definition. */
static int check_fn_expr(Sema *s, const FnDef *f, const Expr *e) {
  int ok = 1;
  if (e->kind == EXPR_NAME && !strcmp(e->name, AST_ERROR_NAME))
    return 0;
  if (e->kind == EXPR_NAME && fn_param_index(f->stmt, e->name) < 0 &&
      !is_constant_name(e->name)) {
    Suggestion sg;
    suggest_init(&sg, e->name);
    for (int i = 0; i < f->stmt->nparams; i++)
      suggest_consider(&sg, f->stmt->params[i].name);
    Diag *d = sema_error(s, e->loc, "use of undeclared name '%s'%s", e->name,
                         did_you_mean(s->a, &sg));
    diag_note(s->d, d, f->stmt->name_loc,
              "function '%s' sees only its parameters", f->name);
    ok = 0;
  }
  FnDef *callee;
  if (calls_param(s, f, e))
    ok = 0;
  else if (e->kind == EXPR_CALL && !check_callee(s, e, f->order, &callee))
    ok = 0;
  if (e->kind == EXPR_CALL && unknown_callee(s, e))
    return 0; /* its arguments' errors would follow from it */
  for (int i = 0; i < e->nargs; i++)
    ok &= check_fn_expr(s, f, e->args[i]);
  for (int i = 0; i < e->nslices; i++) {
    const AstSlice *sl = &e->slices[i];
    const Expr *parts[] = {sl->lo, sl->hi, sl->step};
    for (int j = 0; j < 3; j++)
      if (parts[j])
        ok &= check_fn_expr(s, f, parts[j]);
  }
  return ok;
}

static int check_fn_params(Sema *s, const Stmt *st) {
  int ok = 1;
  for (int i = 0; i < st->nparams; i++) {
    const Param *p = &st->params[i];
    if (reserved_tensor_name(s, p->name, p->loc))
      ok = 0;
    for (int j = 0; j < i; j++)
      if (!strcmp(st->params[j].name, p->name)) {
        Diag *d = sema_error(s, p->loc, "duplicate parameter '%s'", p->name);
        note_defined(s, d, st->params[j].loc);
        ok = 0;
        break;
      }
  }
  return ok;
}

typedef struct FnState {
  FnDef def;
  int bad; /* its definition had errors: calls are not expanded */
} FnState;

static void define_fn(Sema *s, const Stmt *st, int prelude) {
  FnDef *old = strmap_get(&s->fns, st->name);
  if (!prelude && reserved_name(s, st->name, st->name_loc))
    return;
  if (old) {
    Diag *d = sema_error(s, st->name_loc, "redefinition of function '%s'",
                         st->name);
    note_defined(s, d, old->stmt->name_loc);
    return;
  }
  FnState *fs = ARENA_NEW(s->a, FnState);
  FnDef *f = &fs->def;
  f->name = st->name;
  f->stmt = st;
  f->order = s->order++;
  f->prelude = prelude;
  f->variadic = prelude && st->nparams > 0 &&
                !strcmp(st->params[st->nparams - 1].name, "axes");
  strmap_put(s->a, &s->fns, st->name, f);
  int ok = check_fn_params(s, st);
  ok &= check_fn_expr(s, f, st->value);
  fs->bad = !ok;
}

static int fn_is_bad(const FnDef *f) {
  return ((const FnState *)(const void *)f)->bad;
}

/* ---- expressions ----------------------------------------------------------- */

static TVal *eval(Sema *s, const Expr *e);

static void set_loc_at(Sema *s, SrcRange loc) {
  s->cur_loc = loc;
  s->cur_loc_is_last_output = 0;
}

/* New nodes are located at e, or inside a fn at its outermost call. */
static void set_loc(Sema *s, const Expr *e) {
  set_loc_at(s, s->depth ? s->frames[0].call : e->loc);
}

static TVal *with_loc(Sema *s, const TVal *t, SrcRange loc) {
  if (!t)
    return NULL;
  TVal *c = ARENA_NEW(s->a, TVal);
  *c = *t;
  c->loc = loc;
  return c;
}

static TVal *eval_fn_param(Sema *s, const Expr *e) {
  int i = fn_param_index(s->fn->stmt, e->name);
  if (i < 0)
    return NULL;
  return with_loc(s, s->params[i], e->loc);
}

static TVal *constant(Sema *s, const char *name, SrcRange loc) {
  double v = !strcmp(name, "pi") ? 3.14159265358979323846
             : !strcmp(name, "inf") ? 1.0 / 0.0 : 0.0 / 0.0;
  return sema_weak_float(s, v, loc);
}

static const Suggestion *name_suggestion(Sema *s, const char *name) {
  Suggestion *sg = ARENA_NEW(s->a, Suggestion);
  suggest_init(sg, name);
  suggest_map(sg, s->scope);
  suggest_consider(sg, "pi");
  suggest_consider(sg, "inf");
  suggest_consider(sg, "nan");
  if (!sg->best)
    suggest_builtins(sg); /* 'y = x * sigmod' then at least says the word */
  return sg;
}

static void undeclared(Sema *s, const Expr *e) {
  SrcRange *later = s->kb ? strmap_get(&s->kb->later, e->name) : NULL;
  if (is_broken(s, e->name))
    return;
  if (later) {
    Diag *d = sema_error(s, e->loc, "'%s' is used before its definition",
                         e->name);
    diag_note(s->d, d, *later, "'%s' is defined here", e->name);
  } else if (is_builtin_name(s, e->name) || strmap_get(&s->fns, e->name))
    sema_error(s, e->loc, "'%s' is a function; call it with arguments",
               e->name);
  else
    sema_error(s, e->loc, "use of undeclared name '%s'%s", e->name,
               did_you_mean(s->a, name_suggestion(s, e->name)));
}

static TVal *eval_name(Sema *s, const Expr *e) {
  if (s->fn) {
    TVal *p = eval_fn_param(s, e);
    return p ? p : constant(s, e->name, e->loc);
  }
  Binding *b = strmap_get(s->scope, e->name);
  if (b) {
    b->reads++;
    TVal *t = with_loc(s, b->val, e->loc);
    if (t)
      t->literal = 0; /* a name is not a literal (axes must be) */
    return t;
  }
  if (is_constant_name(e->name))
    return constant(s, e->name, e->loc);
  int var = sizevar_index(s, e->name);
  if (var >= 0) { /* its run-time value (language.md §8.5) */
    set_loc(s, e);
    return sema_size_value(s, var, e->loc);
  }
  undeclared(s, e);
  return NULL;
}

static TVal *axes_param(Sema *s, TVal **args, int from, int nargs,
                        SrcRange loc) {
  TVal *t = ARENA_NEW(s->a, TVal);
  t->kind = TV_AXES;
  t->loc = loc;
  t->naxes = nargs - from;
  t->axes = args + from;
  return t;
}

static TVal *expand_fn(Sema *s, const FnDef *f, const Expr *call, TVal **args) {
  if (fn_is_bad(f))
    return NULL;
  if (s->depth == SEMA_MAX_DEPTH) {
    sema_error(s, call->loc, "functions nested too deeply");
    return NULL;
  }
  int np = f->stmt->nparams;
  TVal **params = ARENA_ARRAY(s->a, TVal *, np ? np : 1);
  for (int i = 0; i < np; i++)
    params[i] = f->variadic && i == np - 1
                    ? axes_param(s, args, i, call->nargs, call->loc)
                    : args[i];
  const FnDef *saved_fn = s->fn;
  TVal **saved_params = s->params;
  s->frames[s->depth++] = (Frame){f, call->loc};
  s->fn = f;
  s->params = params;
  TVal *r = eval(s, f->stmt->value);
  if (--s->depth == 0)
    s->expansion_failed = 0;
  s->fn = saved_fn;
  s->params = saved_params;
  r = with_loc(s, r, call->loc);
  if (r)
    r->literal = 0; /* a call is not a literal, even if it returns one */
  return r;
}

static int current_order(Sema *s);

/* In a kernel, a call of a builtin's name that an input or a value of the
 * kernel shadows (doc/language.md §4.3). */
static int calls_shadowed(Sema *s, const Expr *e) {
  Binding *b = s->fn ? NULL : strmap_get(s->scope, e->name);
  if (!b || !is_builtin_name(s, e->name))
    return 0;
  int input = b->input != 0;
  shadowed_call(s, e, input ? "an input" : "a value", input ? "input" : "value",
                b->loc, input ? "declared" : "assigned");
  return 1;
}

static TVal *eval_call(Sema *s, const Expr *e) {
  FnDef *f = NULL;
  if (!s->fn && unknown_callee(s, e)) { /* its arguments' errors follow from it */
    check_callee(s, e, current_order(s), &f);
    return NULL;
  }
  TVal **args = ARENA_ARRAY(s->a, TVal *, e->nargs ? e->nargs : 1);
  int ok = 1;
  for (int i = 0; i < e->nargs; i++)
    ok &= (args[i] = eval(s, e->args[i])) != NULL;
  if (calls_shadowed(s, e))
    return NULL;
  /* inside a fn, callees were checked at its definition */
  if (!s->fn && !check_callee(s, e, current_order(s), &f))
    return NULL;
  if (s->fn)
    f = strmap_get(&s->fns, e->name);
  if (!ok)
    return NULL;
  if (f && !builtin_arity(s, e->name, &(int){0}, &(int){0}))
    return expand_fn(s, f, e, args);
  set_loc(s, e);
  return sema_builtin_call(s, e, args, e->nargs);
}

/* x[...]: the bounds are evaluated like any expression (a size variable
 * is a weak integer that knows its size expression). */
static TVal *eval_slice(Sema *s, const Expr *e) {
  TVal *x = eval(s, e->args[0]);
  TVal **parts = ARENA_ARRAY(s->a, TVal *, 3 * e->nslices + 1);
  int ok = x != NULL;
  for (int i = 0; i < e->nslices; i++) {
    const AstSlice *sl = &e->slices[i];
    const Expr *p[] = {sl->lo, sl->hi, sl->step};
    for (int j = 0; j < 3; j++)
      if (p[j])
        ok &= (parts[3 * i + j] = eval(s, p[j])) != NULL;
  }
  if (!ok)
    return NULL;
  set_loc(s, e);
  return sema_slice(s, e, x, parts);
}

static TVal *eval(Sema *s, const Expr *e) {
  switch (e->kind) {
  case EXPR_INT:
    return sema_weak_int(s, e->ival, e->loc, 1);
  case EXPR_FLOAT:
    return sema_weak_float(s, e->fval, e->loc);
  case EXPR_BOOL:
    set_loc(s, e);
    return sema_bool(s, (int)e->ival, e->loc);
  case EXPR_NAME:
    return eval_name(s, e);
  case EXPR_UNARY: {
    TVal *a = eval(s, e->args[0]);
    set_loc(s, e);
    return sema_unary(s, e->uop, a, e->op_loc, e->loc);
  }
  case EXPR_BINARY: {
    TVal *a = eval(s, e->args[0]);
    TVal *b = eval(s, e->args[1]);
    set_loc(s, e);
    return sema_binary(s, e->bop, a, b, e->op_loc, e->loc);
  }
  case EXPR_CALL:
    return eval_call(s, e);
  case EXPR_SLICE:
    return eval_slice(s, e);
  }
  unreachable();
}

/* ---- kernels ------------------------------------------------------------ */


static int current_order(Sema *s) { return s->kb ? s->kb->order : s->order; }

static void note_later(Sema *s, KernelBuild *kb, const char *name,
                       SrcRange loc) {
  if (strmap_get(&kb->later, name))
    return;
  SrcRange *at = ARENA_NEW(s->a, SrcRange);
  *at = loc;
  strmap_put(s->a, &kb->later, name, at);
}

static void begin_kernel(Sema *s, KernelBuild *kb, const char *name,
                         SrcRange loc) {
  memset(kb, 0, sizeof *kb);
  kb->name = name;
  kb->loc = loc;
  s->k = ARENA_NEW(s->a, TypedKernel);
  s->k->name = name;
  s->k->loc = loc;
  s->nodes = (PtrVec){0};
  s->sizevars = (StrMap){0};
  s->sizevar_names = (PtrVec){0};
  s->size_defs = (PtrVec){0};
  s->scope = ARENA_NEW(s->a, StrMap);
  s->kb = kb;
}

static void add_input(Sema *s, KernelBuild *kb, const char *name,
                      SrcRange loc, const AstType *t) {
  if (!check_new_name(s, name, loc, 1))
    return;
  Shape sh;
  TVal *val = NULL;
  if (!t->bad && input_shape(s, t, &sh)) {
    set_loc_at(s, loc);
    val = ARENA_NEW(s->a, TVal);
    val->kind = TV_TENSOR;
    val->dtype = t->dtype;
    val->node = sema_input_node(s, kb->inputs.len, t->dtype, &sh);
    val->loc = loc;
  }
  Binding *b = bind(s, name, loc, val);
  vec_push(s->a, &kb->inputs, b);
  b->input = kb->inputs.len;
}

static void add_assign(Sema *s, KernelBuild *kb, const Stmt *st) {
  TVal *val = eval(s, st->value);
  if (!check_new_name(s, st->name, st->name_loc, 0))
    return;
  if (val && val->kind == TV_AXES)
    val = NULL;
  Binding *b = bind(s, st->name, st->name_loc, val);
  vec_push(s->a, &kb->assigns, b);
}

static void warn_unused(Sema *s, KernelBuild *kb, StrMap *outputs) {
  for (int i = 0; i < kb->inputs.len; i++) {
    Binding *b = kb->inputs.items[i];
    if (!b->reads)
      warn_later(s, b->loc, "input", b->name);
  }
  for (int i = 0; i < kb->assigns.len; i++) {
    Binding *b = kb->assigns.items[i];
    if (!b->reads && !strmap_get(outputs, b->name))
      warn_later(s, b->loc, "value", b->name);
  }
}

/* Shapes equal after removing every literal-1 axis from both. */
static int same_up_to_ones(const Shape *a, const Shape *b) {
  Shape x = {0}, y = {0};
  for (int i = 0; i < a->rank; i++)
    if (a->d[i].var >= 0 || a->d[i].size != 1)
      x.d[x.rank++] = a->d[i];
  for (int i = 0; i < b->rank; i++)
    if (b->d[i].var >= 0 || b->d[i].size != 1)
      y.d[y.rank++] = b->d[i];
  return shape_equal(&x, &y);
}

static void finish_inputs(Sema *s, KernelBuild *kb) {
  TypedKernel *k = s->k;
  k->ninputs = kb->inputs.len;
  k->inputs = ARENA_ARRAY(s->a, TypedInput, k->ninputs + 1);
  for (int i = 0; i < k->ninputs; i++) {
    Binding *b = kb->inputs.items[i];
    TypedInput *in = &k->inputs[i];
    in->name = b->name;
    in->loc = b->loc;
    if (b->val) {
      in->dtype = b->val->dtype;
      in->shape = b->val->node->shape;
      in->node = b->val->node;
    }
  }
}

/* The names assigned to tensors, in order: they name the IR values. */
static void finish_bindings(Sema *s, KernelBuild *kb) {
  TypedKernel *k = s->k;
  k->bindings = ARENA_ARRAY(s->a, TypedBinding, kb->assigns.len + 1);
  for (int i = 0; i < kb->assigns.len; i++) {
    Binding *b = kb->assigns.items[i];
    if (b->val && b->val->kind == TV_TENSOR)
      k->bindings[k->nbindings++] = (TypedBinding){b->name, b->val->node};
  }
}

/* bool, integer or float: a declared output dtype of another kind than
 * its value's is an error unless the value is cast (doc/language.md
 * §4.1), as PyTorch's out= refuses float -> integer and non-bool -> bool;
 * tecc refuses integer -> float too (an argmax stored as bf16). */
typedef enum DKind { KIND_BOOL, KIND_INT, KIND_FLOAT } DKind;

static DKind dtype_kind(DType t) {
  return t == DT_BOOL ? KIND_BOOL : dtype_is_float(t) ? KIND_FLOAT : KIND_INT;
}

/* The kind a value brings: a weak integer fits integer and float outputs
 * (a literal takes the dtype it meets); a weak float only float ones. */
static int kind_fits(const TVal *val, DType declared) {
  DKind want = dtype_kind(declared);
  switch (val->kind) {
  case TV_WEAK_INT: return want != KIND_BOOL;
  case TV_WEAK_FLOAT: return want == KIND_FLOAT;
  default: return dtype_kind(val->dtype) == want;
  }
}

/* "an integer (i64)", "bool", "a float literal". */
static const char *value_kind_str(Sema *s, const TVal *val) {
  static const char *const kinds[] = {"bool", "an integer", "a float"};
  if (val->kind != TV_TENSOR)
    return tval_type_str(s, val);
  DKind k = dtype_kind(val->dtype);
  if (k == KIND_BOOL)
    return "bool";
  return arena_printf(s->a, "%s (%s)", kinds[k], dtype_name(val->dtype));
}

static int check_output_kind(Sema *s, const char *name, SrcRange loc,
                             const TVal *val, DType declared) {
  if (kind_fits(val, declared))
    return 1;
  const char *dt = dtype_name(declared);
  Diag *d = sema_error(s, loc, "output '%s' is declared %s but its value is %s; "
                       "cast it explicitly: '%s = %s(...)'",
                       name, dt, value_kind_str(s, val), name, dt);
  if (d && val->loc.file)
    diag_note(s->d, d, val->loc, "'%s' is assigned here", name);
  return 0;
}

/* One output; `decl` is its declared type or NULL. */
static int make_output(Sema *s, TypedOutput *out, const char *name,
                       SrcRange loc, TVal *val, const AstType *decl) {
  if (decl && decl->bad)
    return 0;
  if (val && decl && !check_output_kind(s, name, loc, val, decl->dtype))
    return 0;
  val = sema_output_value(s, val, decl ? &decl->dtype : NULL);
  if (!val)
    return 0;
  out->name = name;
  out->dtype = val->dtype;
  out->shape = val->node->shape;
  if (decl) {
    Shape sh;
    if (!output_shape(s, decl, &sh))
      return 0;
    if (!same_up_to_ones(&sh, &val->node->shape)) {
      sema_error(s, loc, "output '%s' is declared %s but its value is %s", name,
                 type_str(s, decl->dtype, &sh), tval_type_str(s, val));
      return 0;
    }
    out->dtype = decl->dtype;
    out->shape = sh;
  }
  out->value = val->node;
  s->cur_loc_is_last_output = 1; /* lowering locates the store there */
  return 1;
}

/* ---- -D bindings and the finished kernel ----------------------------------- */

static int define_value(Sema *s, const char *name, int64_t *value) {
  for (size_t i = 0; i < s->c->opts.n_defines; i++)
    if (!strcmp(s->c->opts.defines[i].name, name)) {
      *value = s->c->opts.defines[i].value;
      return 1;
    }
  return 0;
}

/* Every size variable of the kernel, with its -D value if it has one. */
static void finish_sizevars(Sema *s) {
  TypedKernel *k = s->k;
  k->nsizevars = s->sizevar_names.len;
  k->sizevars = ARENA_ARRAY(s->a, TypedSizeVar, k->nsizevars + 1);
  for (int i = 0; i < k->nsizevars; i++) {
    TypedSizeVar *sv = &k->sizevars[i];
    sv->name = s->sizevar_names.items[i];
    sv->def = i < s->size_defs.len ? s->size_defs.items[i] : NULL;
    if (!sv->def)
      sv->bound = define_value(s, sv->name, &sv->value);
  }
}

static void put_sig_type(Sema *s, Buf *b, DType t, const Shape *sh) {
  buf_puts(b, type_str(s, t, sh));
}

static const char *signature(Sema *s) {
  TypedKernel *k = s->k;
  Buf b;
  buf_init(&b, s->a);
  buf_printf(&b, "kernel %s(", k->name);
  for (int i = 0; i < k->ninputs; i++) {
    buf_printf(&b, "%s%s: ", i ? ", " : "", k->inputs[i].name);
    put_sig_type(s, &b, k->inputs[i].dtype, &k->inputs[i].shape);
  }
  buf_puts(&b, ") -> (");
  for (int i = 0; i < k->noutputs; i++) {
    buf_printf(&b, "%s%s: ", i ? ", " : "", k->outputs[i].name);
    put_sig_type(s, &b, k->outputs[i].dtype, &k->outputs[i].shape);
  }
  buf_puts(&b, ")");
  return buf_cstr(&b);
}

static void end_kernel(Sema *s) {
  for (int i = 0; i < s->sizevar_names.len; i++)
    if (i >= s->size_defs.len || !s->size_defs.items[i])
      strmap_put(s->a, &s->used_defines, s->sizevar_names.items[i], s);
  if (s->k->noutputs)
    s->k->te_signature = signature(s);
  finish_sizevars(s);
  finish_bindings(s, s->kb);
  s->k->nnodes = s->nodes.len;
  s->k->nodes = (TypedNode **)s->nodes.items;
  s->k->imported = s->importing;
  vec_push(s->a, &s->kernels, s->k);
  s->kb = NULL;
  s->k = NULL;
}

/* ---- explicit kernels ------------------------------------------------------ */

static void kernel_params(Sema *s, KernelBuild *kb, const Stmt *st) {
  for (int i = 0; i < st->nparams; i++) {
    const Param *p = &st->params[i];
    int dup = 0;
    for (int j = 0; j < i && !dup; j++)
      if (!strcmp(st->params[j].name, p->name)) {
        Diag *d = sema_error(s, p->loc, "duplicate parameter '%s'", p->name);
        note_defined(s, d, st->params[j].loc);
        dup = 1;
      }
    if (!dup)
      add_input(s, kb, p->name, p->loc, p->type);
  }
}

static int check_out_names(Sema *s, const Stmt *st, StrMap *outs) {
  int ok = 1;
  for (int i = 0; i < st->nouts; i++) {
    const Param *o = &st->outs[i];
    strmap_put(s->a, outs, o->name, (void *)o);
    for (int j = 0; j < i; j++)
      if (!strcmp(st->outs[j].name, o->name)) {
        Diag *d = sema_error(s, o->loc, "duplicate output '%s'", o->name);
        note_defined(s, d, st->outs[j].loc);
        ok = 0;
      }
    Binding *b = strmap_get(s->scope, o->name);
    if (b && b->input) {
      Diag *d = sema_error(s, o->loc, "'%s' is both an input and an output",
                           o->name);
      diag_note(s->d, d, b->loc, "'%s' is declared here", o->name);
      ok = 0;
    }
  }
  return ok;
}

static void explicit_outputs(Sema *s, const Stmt *st) {
  TypedKernel *k = s->k;
  k->outputs = ARENA_ARRAY(s->a, TypedOutput, st->nouts + 1);
  int ok = 1;
  for (int i = 0; i < st->nouts; i++) {
    const Param *o = &st->outs[i];
    Binding *b = strmap_get(s->scope, o->name);
    if (!b || b->input) {
      if (!b && !is_broken(s, o->name))
        sema_error(s, o->loc, "output '%s' is never assigned", o->name);
      ok = 0;
      continue;
    }
    ok &= make_output(s, &k->outputs[i], o->name, o->loc, b->val, o->type);
  }
  if (ok)
    k->noutputs = st->nouts;
}

static void check_kernel(Sema *s, const Stmt *st, int order) {
  KernelBuild kb;
  begin_kernel(s, &kb, st->name, st->name_loc);
  kb.order = order;
  for (int i = 0; i < st->nbody; i++)
    note_later(s, &kb, st->body[i]->name, st->body[i]->name_loc);
  kernel_params(s, &kb, st);
  finish_inputs(s, &kb);
  StrMap outs = {0};
  int outs_ok = check_out_names(s, st, &outs);
  for (int i = 0; i < st->nbody; i++)
    add_assign(s, &kb, st->body[i]);
  if (outs_ok)
    explicit_outputs(s, st);
  warn_unused(s, &kb, &outs);
  end_kernel(s);
}

/* ---- the implicit kernel --------------------------------------------------- */

static const char *implicit_name(Sema *s, const SourceFile *f) {
  if (s->c->opts.kernel_name)
    return s->c->opts.kernel_name;
  if (!strcmp(f->name, "<stdin>") || !strcmp(f->name, "-"))
    return "kernel";
  const char *base = strrchr(f->name, '/');
  base = base ? base + 1 : f->name;
  const char *dot = strrchr(base, '.');
  size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  Buf b;
  buf_init(&b, s->a);
  if (n == 0 || (base[0] >= '0' && base[0] <= '9'))
    buf_puts(&b, "_");
  for (size_t i = 0; i < n; i++) {
    char c = base[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9') || c == '_';
    buf_putn(&b, ok ? &c : "_", 1);
  }
  return buf_cstr(&b);
}

/* The values no one reads are the outputs: a few of many assignments. */
static int count_unread(const KernelBuild *kb) {
  int n = 0;
  for (int i = 0; i < kb->assigns.len; i++)
    n += !((Binding *)kb->assigns.items[i])->reads;
  return n;
}

static void implicit_outputs(Sema *s, KernelBuild *kb, StrMap *outs) {
  TypedKernel *k = s->k;
  k->outputs = ARENA_ARRAY(s->a, TypedOutput, count_unread(kb) + 1);
  int n = 0, ok = 1;
  for (int i = 0; i < kb->assigns.len; i++) {
    Binding *b = kb->assigns.items[i];
    if (b->reads)
      continue;
    strmap_put(s->a, outs, b->name, b);
    if (!b->val) {
      ok = 0;
      continue;
    }
    ok &= make_output(s, &k->outputs[n++], b->name, b->loc, b->val, NULL);
  }
  if (ok)
    k->noutputs = n;
}

static void check_implicit(Sema *s, const AstFile *f, const int *orders) {
  KernelBuild kb;
  begin_kernel(s, &kb, implicit_name(s, f->source),
               (SrcRange){f->source, 0, 0});
  for (int i = 0; i < f->nstmts; i++) {
    const Stmt *st = f->stmts[i];
    if (st->kind == STMT_DECL || st->kind == STMT_ASSIGN)
      note_later(s, &kb, st->name, st->name_loc);
  }
  for (int i = 0; i < f->nstmts; i++) {
    const Stmt *st = f->stmts[i];
    kb.order = orders[i];
    if (st->kind == STMT_DECL)
      add_input(s, &kb, st->name, st->name_loc, st->type);
    else if (st->kind == STMT_ASSIGN)
      add_assign(s, &kb, st);
  }
  finish_inputs(s, &kb);
  StrMap outs = {0};
  implicit_outputs(s, &kb, &outs);
  if (!s->k->noutputs && !diag_has_errors(s->d))
    sema_error(s, kb.loc, "kernel '%s' has no outputs", kb.name);
  warn_unused(s, &kb, &outs);
  end_kernel(s);
}

/* ---- kernel names -------------------------------------------------------- */

static const char *const c_keywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
    "bool", "break", "case", "catch", "char", "char8_t", "char16_t",
    "char32_t", "class", "co_await", "co_return", "co_yield", "compl",
    "concept", "const", "const_cast", "consteval", "constexpr", "constinit",
    "continue", "decltype", "default", "delete", "do", "double",
    "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
    "float", "for", "friend", "goto", "if", "inline", "int", "long",
    "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
    "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "restrict", "return", "short", "signed",
    "sizeof", "static", "static_assert", "static_cast", "struct", "switch",
    "template", "this", "thread_local", "throw", "true", "try", "typedef",
    "typeid", "typename", "union", "unsigned", "using", "virtual", "void",
    "volatile", "wchar_t", "while", "xor", "xor_eq", "_Alignas", "_Alignof",
    "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn",
    "_Static_assert", "_Thread_local", "__global__", "__device__",
    "__host__", "__shared__", "__constant__", "__managed__", "__restrict__",
    "__noinline__", "__forceinline__", "__launch_bounds__", "__grid_constant__",
    "gridDim", "blockIdx", "blockDim", "threadIdx", "warpSize", "main"};

static int is_keyword(const char *name) {
  for (size_t i = 0; i < sizeof c_keywords / sizeof c_keywords[0]; i++)
    if (!strcmp(name, c_keywords[i]))
      return 1;
  return 0;
}

/* The generated entry point has C linkage: it may not be a function of
 * the C/CUDA math library that the .cu sees. */
static int is_libc_function(const char *name) {
  static const char *const libc[] = {
      "abs",   "exp",  "exp2",  "expm1", "log",   "log2",  "log10", "log1p",
      "sqrt",  "rsqrt", "sin",  "cos",   "tan",   "asin",  "acos",  "atan",
      "atan2", "sinh", "cosh",  "tanh",  "erf",   "floor", "ceil",  "round",
      "trunc", "pow",  "fmax",  "fmin",  "malloc", "free", "printf", "exit"};
  for (size_t i = 0; i < sizeof libc / sizeof libc[0]; i++)
    if (!strcmp(name, libc[i]))
      return 1;
  return 0;
}

static int is_c_identifier(const char *name) {
  if (!*name || (*name >= '0' && *name <= '9'))
    return 0;
  for (const char *p = name; *p; p++) {
    char c = *p;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return 0;
  }
  return 1;
}

/* `hint` follows the message for a name that came from the file name. */
static int check_kernel_name(Sema *s, const char *name, SrcRange loc,
                             StrMap *seen, const char *hint) {
  if (!is_c_identifier(name)) {
    sema_error(s, loc, "kernel name '%s' is not a valid C identifier%s", name,
               hint);
    return 0;
  }
  if (is_libc_function(name)) {
    sema_error(s, loc, "kernel name '%s' clashes with a C library function%s",
               name, hint);
    return 0;
  }
  if (is_keyword(name)) {
    sema_error(s, loc, "kernel name '%s' is a C, C++ or CUDA keyword%s", name,
               hint);
    return 0;
  }
  if (!strncmp(name, "tecc_", 5)) {
    sema_error(s, loc, "kernel name '%s' uses the reserved prefix 'tecc_'%s",
               name, hint);
    return 0;
  }
  SrcRange *old = strmap_get(seen, name);
  if (old) {
    Diag *d = sema_error(s, loc, "redefinition of kernel '%s'", name);
    note_defined(s, d, *old);
    return 0;
  }
  SrcRange *at = ARENA_NEW(s->a, SrcRange);
  *at = loc;
  strmap_put(s->a, seen, name, at);
  return 1;
}

/* ---- gradient kernels (language.md §13) ------------------------------ */

/* A kernel that grad may name: one defined with a body or by grad, in the
 * main file or an imported one. */
typedef struct KernelDef {
  const TypedKernel *k; /* NULL when its definition had errors */
  int index;            /* its index in Sema.kernels */
} KernelDef;

/* The first definition of a name stays (a second one is an error). */
static void add_kernel_def(Sema *s, const Stmt *st, const TypedKernel *k) {
  if (strmap_get(&s->kernel_defs, st->name))
    return;
  KernelDef *kd = ARENA_NEW(s->a, KernelDef);
  kd->k = k;
  kd->index = s->kernels.len - 1;
  strmap_put(s->a, &s->kernel_defs, st->name, kd);
}

static void unknown_kernel(Sema *s, const Stmt *st) {
  const FnDef *f = strmap_get(&s->fns, st->of);
  if (f && !f->prelude) {
    Diag *d = sema_error(s, st->of_loc, "'%s' is a function, not a kernel",
                         st->of);
    diag_note(s->d, d, f->stmt->name_loc, "'%s' is defined here", st->of);
    return;
  }
  Suggestion sg;
  suggest_init(&sg, st->of);
  suggest_map(&sg, &s->kernel_defs);
  /* after a broken import or kernel, the kernel may well be defined there */
  if (!s->import_failed && !is_broken(s, st->of))
    sema_error(s, st->of_loc, "unknown kernel '%s'%s", st->of,
               did_you_mean(s->a, &sg));
}

/* The kernel a grad statement differentiates, defined before it; NULL
 * after an error (reported here, or in its definition). */
static const KernelDef *grad_target(Sema *s, const Stmt *st) {
  const KernelDef *kd = strmap_get(&s->kernel_defs, st->of);
  if (kd)
    return kd->k ? kd : NULL;
  const Stmt *later = strmap_get(&s->later_kernels, st->of);
  if (later == st) {
    sema_error(s, st->of_loc, "kernel '%s' cannot be its own gradient", st->of);
  } else if (later) {
    Diag *d = sema_error(s, st->of_loc,
                         "kernel '%s' is used before its definition", st->of);
    diag_note(s->d, d, later->name_loc, "'%s' is defined here", st->of);
  } else {
    unknown_kernel(s, st);
  }
  return NULL;
}

static int input_index(const TypedKernel *k, const char *name) {
  for (int i = 0; i < k->ninputs; i++)
    if (!strcmp(k->inputs[i].name, name))
      return i;
  return -1;
}

/* Input `p` of the grad statement: an input of k, named once, a float. */
static int named_input(Sema *s, const Stmt *st, const TypedKernel *k, int p) {
  const Param *in = &st->params[p];
  int i = input_index(k, in->name);
  if (i < 0) {
    Suggestion sg;
    suggest_init(&sg, in->name);
    for (int j = 0; j < k->ninputs; j++)
      suggest_consider(&sg, k->inputs[j].name);
    sema_error(s, in->loc, "kernel '%s' has no input '%s'%s", k->name, in->name,
               did_you_mean(s->a, &sg));
    return -1;
  }
  for (int q = 0; q < p; q++)
    if (!strcmp(st->params[q].name, in->name)) {
      Diag *d = sema_error(s, in->loc, "input '%s' is named twice", in->name);
      note_defined(s, d, st->params[q].loc);
      return -1;
    }
  if (!dtype_is_float(k->inputs[i].dtype)) {
    sema_error(s, in->loc, "cannot differentiate with respect to '%s': %s",
               in->name, dtype_name(k->inputs[i].dtype));
    return -1;
  }
  return i;
}

/* The inputs differentiated: those named, in that order, or every float
 * input of k. */
static TypedGrad *grad_inputs(Sema *s, const Stmt *st, const TypedKernel *k) {
  TypedGrad *g = ARENA_NEW(s->a, TypedGrad);
  g->wrt = ARENA_ARRAY(s->a, int, k->ninputs + 1);
  int ok = 1;
  for (int p = 0; p < st->nparams; p++) {
    int i = named_input(s, st, k, p);
    ok &= i >= 0;
    g->wrt[g->nwrt] = i;
    g->nwrt += i >= 0;
  }
  for (int i = 0; i < k->ninputs && !st->nparams; i++)
    if (dtype_is_float(k->inputs[i].dtype))
      g->wrt[g->nwrt++] = i;
  if (ok && !g->nwrt)
    sema_error(s, st->of_loc, "kernel '%s' has no float input to differentiate",
               k->name);
  return ok && g->nwrt ? g : NULL;
}

static int float_outputs(const TypedKernel *k) {
  int n = 0;
  for (int i = 0; i < k->noutputs; i++)
    n += dtype_is_float(k->outputs[i].dtype);
  return n;
}

/* A gradient or cotangent name (what) must not be a name the gradient
 * kernel already has: an input or a size variable of k. */
static int new_grad_name(Sema *s, const TypedKernel *k, const char *what,
                         const char *name, SrcRange at) {
  int i = input_index(k, name);
  if (i >= 0) {
    Diag *d = sema_error(s, at, "%s '%s' clashes with input '%s' of '%s'", what,
                         name, name, k->name);
    diag_note(s->d, d, k->inputs[i].loc, "'%s' is declared here", name);
    return 0;
  }
  for (int v = 0; v < k->nsizevars; v++)
    if (!strcmp(k->sizevars[v].name, name)) {
      sema_error(s, at, "%s '%s' clashes with size variable '%s' of '%s'", what,
                 name, name, k->name);
      return 0;
    }
  return 1;
}

static const char *d_name(Sema *s, const char *name) {
  return arena_printf(s->a, "d%s", name);
}

/* Inputs: k's, then a cotangent per float output; outputs: a gradient
 * per input differentiated.  Either is located at the input it comes
 * from, or at the kernel named. */
static int grad_signature(Sema *s, const Stmt *st, const TypedKernel *k,
                          const TypedGrad *g, TypedKernel *gk) {
  int ok = 1;
  gk->inputs = ARENA_ARRAY(s->a, TypedInput, k->ninputs + k->noutputs + 1);
  for (int i = 0; i < k->ninputs; i++)
    gk->inputs[gk->ninputs++] = k->inputs[i];
  for (int o = 0; o < k->noutputs; o++) {
    const TypedOutput *out = &k->outputs[o];
    if (!dtype_is_float(out->dtype))
      continue;
    const char *name = d_name(s, out->name);
    ok &= new_grad_name(s, k, "cotangent", name, st->of_loc);
    gk->inputs[gk->ninputs++] =
        (TypedInput){name, out->dtype, out->shape, st->of_loc, NULL};
  }
  gk->outputs = ARENA_ARRAY(s->a, TypedOutput, g->nwrt + 1);
  for (int w = 0; w < g->nwrt; w++) {
    const TypedInput *in = &k->inputs[g->wrt[w]];
    const char *name = d_name(s, in->name);
    SrcRange at = st->nparams ? st->params[w].loc : st->of_loc;
    ok &= new_grad_name(s, k, "gradient", name, at);
    gk->outputs[gk->noutputs++] = (TypedOutput){name, in->dtype, in->shape, NULL};
  }
  return ok;
}

static const char *grad_te_signature(Sema *s, TypedKernel *gk) {
  s->k = gk;
  s->sizevar_names = (PtrVec){0};
  for (int v = 0; v < gk->nsizevars; v++)
    vec_push(s->a, &s->sizevar_names, (void *)gk->sizevars[v].name);
  const char *sig = signature(s);
  s->k = NULL;
  s->sizevar_names = (PtrVec){0};
  return sig;
}

/* `kernel NAME = grad(OF, WRT...)`: the gradient kernel, with its
 * signature; NULL after an error. */
/* Whether node n reads an input in g's wrt (memo by node order: 1 no,
 * 2 yes). */
static int reads_wrt(const TypedNode *n, const TypedGrad *g, char *memo) {
  if (n->order < 0)
    return 0;
  if (!memo[n->order]) {
    int yes = 0;
    for (int i = 0; i < g->nwrt && n->op == TN_INPUT; i++)
      yes |= g->wrt[i] == n->input;
    for (int i = 0; i < n->nargs && !yes; i++)
      yes = reads_wrt(n->args[i], g, memo);
    memo[n->order] = (char)(1 + yes);
  }
  return memo[n->order] == 2;
}

/* A float take() of k, of a value that reads an input differentiated,
 * with more than one index along its axis: its gradient is a scatter-add,
 * which tecc does not emit (language.md §9.7). */
static const TypedNode *scattering_take(Sema *s, const TypedKernel *k, const TypedGrad *g) {
  char *memo = arena_alloc(s->a, (size_t)k->nnodes + 1);
  memset(memo, 0, (size_t)k->nnodes + 1);
  for (int i = 0; i < k->nnodes; i++) {
    const TypedNode *n = k->nodes[i];
    int ax = n->op == TN_TAKE ? __builtin_ctz(n->axes) : 0;
    if (n->op == TN_TAKE && !n->step && dtype_is_float(n->dtype) &&
        (n->shape.d[ax].var >= 0 || n->shape.d[ax].size != 1) && reads_wrt(n->args[0], g, memo))
      return n;
  }
  return NULL;
}

/* A take with one index along its axis A under n (n's axes), reached by
 * a gather of n along `axis`, when n is not 1 along A: the gather reads it
 * at several positions along A, a scatter-add again (gather.c composes
 * the two into one take of both axes). */
static const TypedNode *regathered_take(const TypedNode *n, int axis, const Shape *at, int rank, char *seen) {
  if (axis < 0 || (n->shape.d[axis].var < 0 && n->shape.d[axis].size == 1) || n->order < 0 || seen[n->order])
    return NULL; /* spread along the axis, not gathered */
  seen[n->order] = 1;
  if (n->op == TN_TAKE && !n->step && n->axes != 1u << axis) {
    int a = __builtin_ctz(n->axes) + (rank - n->shape.rank);
    if (at->d[a].var >= 0 || at->d[a].size != 1)
      return n;
  }
  for (int i = 0; i < n->nargs; i++) {
    const TypedNode *r = regathered_take(n->args[i], axis - (n->shape.rank - n->args[i]->shape.rank), at,
                                         rank, seen);
    if (r)
      return r;
  }
  return NULL;
}

/* A float take or slice of k that reads an input differentiated and
 * gathers a take along another axis at several of its positions. */
static const TypedNode *regathering(Sema *s, const TypedKernel *k, const TypedGrad *g, const TypedNode **inner) {
  char *memo = arena_alloc(s->a, (size_t)k->nnodes + 1);
  char *seen = arena_alloc(s->a, (size_t)k->nnodes + 1);
  memset(memo, 0, (size_t)k->nnodes + 1);
  for (int i = 0; i < k->nnodes; i++) {
    const TypedNode *n = k->nodes[i];
    if (n->op != TN_TAKE || !dtype_is_float(n->dtype) || !reads_wrt(n->args[0], g, memo))
      continue;
    memset(seen, 0, (size_t)k->nnodes + 1);
    const TypedNode *x = n->args[0];
    *inner = regathered_take(x, __builtin_ctz(n->axes) - (n->shape.rank - x->shape.rank), &n->shape,
                             n->shape.rank, seen);
    if (*inner)
      return n;
  }
  return NULL;
}

static int differentiable_gathers(Sema *s, const Stmt *st, const TypedKernel *k, const TypedGrad *g) {
  const TypedNode *t = scattering_take(s, k, g), *inner = NULL;
  if (t) {
    Diag *d = sema_error(s, st->of_loc, "cannot differentiate '%s': the gradient of a 'take' with more than "
                         "one index along its axis is a scatter-add, which is not supported", k->name);
    diag_note(s->d, d, t->loc, "this take");
    return 0;
  }
  if ((t = regathering(s, k, g, &inner))) {
    int a = __builtin_ctz(inner->axes) + (t->shape.rank - inner->shape.rank);
    Diag *d = sema_error(s, st->of_loc, "cannot differentiate '%s': a take along axis %d read at several "
                         "positions along it by a gather along axis %d has a scatter-add as its gradient, which "
                         "is not supported", k->name, a, __builtin_ctz(t->axes));
    diag_note(s->d, d, inner->loc, "this take");
    diag_note(s->d, d, t->loc, "gathered here");
    return 0;
  }
  return 1;
}

static const TypedKernel *check_grad(Sema *s, const Stmt *st) {
  const KernelDef *kd = grad_target(s, st);
  if (!kd)
    return NULL;
  const TypedKernel *k = kd->k;
  TypedGrad *g = grad_inputs(s, st, k);
  if (g && !k->grad && !differentiable_gathers(s, st, k, g))
    return NULL;
  if (g && !float_outputs(k)) {
    sema_error(s, st->of_loc, "kernel '%s' has no float output to differentiate",
               k->name);
    return NULL;
  }
  if (!g)
    return NULL;
  g->of = kd->index;
  TypedKernel *gk = ARENA_NEW(s->a, TypedKernel);
  gk->name = st->name;
  gk->loc = st->name_loc;
  gk->grad = g;
  gk->imported = s->importing;
  gk->sizevars = k->sizevars;
  gk->nsizevars = k->nsizevars;
  if (!grad_signature(s, st, k, g, gk))
    return NULL;
  gk->te_signature = grad_te_signature(s, gk);
  vec_push(s->a, &s->kernels, gk);
  return gk;
}

/* ---- imports ------------------------------------------------------------- */

typedef struct ImportState {
  int *state; /* by SourceFile id: 0 new, 1 being read, 2 done */
  int cap;
} ImportState;

static int *file_state(Sema *s, ImportState *is, int id) {
  if (id >= is->cap) {
    int cap = (id + 1) * 2;
    int *st = ARENA_ARRAY(s->a, int, cap);
    if (is->cap)
      memcpy(st, is->state, sizeof(int) * (size_t)is->cap);
    is->state = st;
    is->cap = cap;
  }
  return &is->state[id];
}

static const char *dir_of(Sema *s, const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return ".";
  if (slash == path)
    return "/";
  return arena_strndup(s->a, path, (size_t)(slash - path));
}

static const char *join(Sema *s, const char *dir, const char *path) {
  if (path[0] == '/' || !dir || !strcmp(dir, "."))
    return arena_strdup(s->a, path);
  return arena_printf(s->a, "%s%s%s", dir,
                      dir[strlen(dir) - 1] == '/' ? "" : "/", path);
}

/* Only readable regular files are imported: a directory or a device such
 * as /dev/zero or /dev/stdin is "not found" (and never read). */
static int importable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

static SourceFile *find_import(Sema *s, const char *dir, const char *path) {
  const char *first = join(s, dir, path);
  if (importable(first))
    return compilation_load(s->c, first, first);
  if (path[0] == '/')
    return NULL;
  for (size_t i = 0; i < s->c->opts.n_include_dirs; i++) {
    const char *p = join(s, s->c->opts.include_dirs[i], path);
    if (importable(p))
      return compilation_load(s->c, p, p);
  }
  return NULL;
}

static void load_imports(Sema *s, ImportState *is, const AstFile *f,
                         const char *dir);

static void check_imported_stmts(Sema *s, const AstFile *f);

static void import_one(Sema *s, ImportState *is, const Stmt *st,
                       const char *dir) {
  SourceFile *sf = find_import(s, dir, st->path);
  struct stat fs;
  if (!sf && stat(join(s, dir, st->path), &fs) == 0 && !S_ISREG(fs.st_mode)) {
    sema_error(s, st->path_loc, "cannot import '%s': not a regular file", st->path);
    s->import_failed = 1;
    return;
  }
  if (!sf) {
    sema_error(s, st->path_loc, "cannot find imported file '%s'", st->path);
    s->import_failed = 1;
    return;
  }
  int *state = file_state(s, is, sf->id);
  if (*state == 1) {
    sema_error(s, st->path_loc, "import cycle through '%s'", sf->name);
    return;
  }
  if (*state == 2)
    return;
  *state = 1;
  int errors = s->d->n_errors;
  AstFile *af = parse_file(s->a, s->d, sf);
  if (s->d->n_errors != errors)
    s->import_failed = 1;
  load_imports(s, is, af, dir_of(s, sf->path ? sf->path : sf->name));
  check_imported_stmts(s, af);
  *file_state(s, is, sf->id) = 2;
}

static void load_imports(Sema *s, ImportState *is, const AstFile *f,
                         const char *dir) {
  for (int i = 0; i < f->nstmts; i++)
    if (f->stmts[i]->kind == STMT_IMPORT)
      import_one(s, is, f->stmts[i], dir);
}

/* ---- the prelude ------------------------------------------------------- */

static void load_prelude(Sema *s) {
  SourceFile *sf = compilation_add_source(s->c, "<prelude>", NULL,
                                          tecc_prelude_te,
                                          strlen(tecc_prelude_te));
  int errors = s->d->n_errors;
  AstFile *af = parse_file(s->a, s->d, sf);
  for (int i = 0; i < af->nstmts; i++)
    if (af->stmts[i]->kind == STMT_FN)
      define_fn(s, af->stmts[i], 1);
  if (s->d->n_errors != errors)
    internal_error("the prelude has errors");
}

/* ---- the whole program ------------------------------------------------- */

static int has_stmt(const AstFile *f, StmtKind kind) {
  for (int i = 0; i < f->nstmts; i++)
    if (f->stmts[i]->kind == kind)
      return 1;
  return 0;
}

static int defines_kernels(const AstFile *f) {
  return has_stmt(f, STMT_KERNEL) || has_stmt(f, STMT_GRAD);
}

static void reject_toplevel(Sema *s, const AstFile *f, const Stmt *st) {
  const Stmt *first_kernel = NULL;
  for (int i = 0; i < f->nstmts && !first_kernel; i++)
    if (f->stmts[i]->kind == STMT_KERNEL || f->stmts[i]->kind == STMT_GRAD)
      first_kernel = f->stmts[i];
  Diag *d = sema_error(s, st->loc, "top-level %s in a file that defines kernels",
                       st->kind == STMT_DECL ? "declaration" : "assignment");
  diag_note(s->d, d, first_kernel->name_loc, "kernel '%s' is defined here",
            first_kernel->name);
}

static void warn_unused_defines(Sema *s) {
  for (size_t i = 0; i < s->c->opts.n_defines; i++) {
    const char *name = s->c->opts.defines[i].name;
    if (!strmap_get(&s->used_defines, name))
      diag_warning(s->d, (SrcRange){0},
                   "-D %s: no size variable named '%s' in this program", name,
                   name);
  }
}

static TypedProgram *make_program(Sema *s) {
  TypedProgram *p = ARENA_NEW(s->a, TypedProgram);
  p->nkernels = s->kernels.len;
  p->kernels = (TypedKernel **)s->kernels.items;
  return p;
}

/* Every fn, kernel and tensor name of a file: a size variable may not
 * share a name with a fn or tensor (doc/language.md §3), and grad names
 * only a kernel defined before it. */
static void collect_names(Sema *s, const Stmt *st) {
  void *yes = (void *)st;
  switch (st->kind) {
  case STMT_FN:
    strmap_put(s->a, &s->later_fns, st->name, yes);
    break;
  case STMT_DECL:
  case STMT_ASSIGN:
    strmap_put(s->a, &s->tensor_names, st->name, yes);
    break;
  case STMT_KERNEL:
    if (!strmap_get(&s->later_kernels, st->name))
      strmap_put(s->a, &s->later_kernels, st->name, yes);
    for (int i = 0; i < st->nparams; i++)
      strmap_put(s->a, &s->tensor_names, st->params[i].name, yes);
    for (int i = 0; i < st->nouts; i++)
      strmap_put(s->a, &s->tensor_names, st->outs[i].name, yes);
    for (int i = 0; i < st->nbody; i++)
      strmap_put(s->a, &s->tensor_names, st->body[i]->name, yes);
    break;
  case STMT_GRAD:
    if (!strmap_get(&s->later_kernels, st->name))
      strmap_put(s->a, &s->later_kernels, st->name, yes);
    break;
  default:
    break;
  }
}

/* The names of the file whose statements are checked now. */
typedef struct FileNames {
  StrMap later_fns, tensor_names, later_kernels;
} FileNames;

static void collect_file_names(Sema *s, const AstFile *f) {
  s->later_fns = s->tensor_names = s->later_kernels = (StrMap){0};
  for (int i = 0; i < f->nstmts; i++)
    collect_names(s, f->stmts[i]);
}

/* An imported file's names replace the importing file's for a while. */
static FileNames enter_file(Sema *s, const AstFile *f) {
  FileNames saved = {s->later_fns, s->tensor_names, s->later_kernels};
  collect_file_names(s, f);
  return saved;
}

static void leave_file(Sema *s, FileNames saved) {
  s->later_fns = saved.later_fns;
  s->tensor_names = saved.tensor_names;
  s->later_kernels = saved.later_kernels;
}

/* A kernel definition or grad statement of any file. */
static void define_kernel(Sema *s, const Stmt *st, int order) {
  if (!check_kernel_name(s, st->name, st->name_loc, &s->kernel_names, "")) {
    add_kernel_def(s, st, NULL);
    return;
  }
  const TypedKernel *k = NULL;
  int errors = s->d->n_errors;
  if (st->kind == STMT_GRAD) {
    k = check_grad(s, st);
  } else {
    check_kernel(s, st, order);
    TypedKernel *last = s->kernels.items[s->kernels.len - 1];
    if (s->d->n_errors == errors && last->noutputs > 0) /* else an error */
      k = last;                                       /* was hidden */
  }
  add_kernel_def(s, st, k);
}

static void check_imported_stmts(Sema *s, const AstFile *f) {
  FileNames saved = enter_file(s, f);
  s->importing++;
  for (int i = 0; i < f->nstmts; i++) {
    const Stmt *st = f->stmts[i];
    if (st->kind == STMT_FN)
      define_fn(s, st, 0);
    else if (st->kind == STMT_KERNEL || st->kind == STMT_GRAD)
      define_kernel(s, st, s->order++);
    else if (st->kind != STMT_IMPORT)
      sema_error(s, st->loc, "an imported file may contain only imports, "
                             "functions and kernels");
  }
  s->importing--;
  leave_file(s, saved);
}

/* A file of top-level declarations, whose implicit kernel a grad
 * statement names: that is the one error to report. */
static int grads_implicit(Sema *s, const AstFile *f, const char *name) {
  if (has_stmt(f, STMT_KERNEL) ||
      !(has_stmt(f, STMT_DECL) || has_stmt(f, STMT_ASSIGN)))
    return 0;
  int found = 0;
  for (int i = 0; i < f->nstmts; i++) {
    const Stmt *st = f->stmts[i];
    if (st->kind == STMT_GRAD && !strcmp(st->of, name)) {
      sema_error(s, st->of_loc,
                 "cannot differentiate the implicit kernel '%s'; write it as "
                 "'kernel %s(INPUTS) -> OUTPUTS { ... }'", name, name);
      found = 1;
    }
  }
  return found;
}

static void check_main(Sema *s, const AstFile *f) {
  int *orders = ARENA_ARRAY(s->a, int, f->nstmts + 1);
  int explicit = defines_kernels(f);
  collect_file_names(s, f);
  if (grads_implicit(s, f, implicit_name(s, f->source)))
    return;
  for (int i = 0; i < f->nstmts; i++) {
    const Stmt *st = f->stmts[i];
    orders[i] = s->order++;
    if (explicit && (st->kind == STMT_DECL || st->kind == STMT_ASSIGN))
      reject_toplevel(s, f, st);
    else if (st->kind == STMT_FN)
      define_fn(s, st, 0);
    else if (st->kind == STMT_KERNEL || st->kind == STMT_GRAD)
      define_kernel(s, st, orders[i]);
  }
  if (!explicit) {
    const char *name = implicit_name(s, f->source);
    const char *hint = s->c->opts.kernel_name
                           ? ""
                           : " (from the file name); use --name=NAME";
    if (check_kernel_name(s, name, (SrcRange){0}, &s->kernel_names, hint))
      check_implicit(s, f, orders);
  }
}

TypedProgram *sema_check(Compilation *c, AstFile *main) {
  Sema sema = {0};
  Sema *s = &sema;
  s->c = c;
  s->a = c->arena;
  s->d = &c->diags;
  sema_builtins_init(s);
  load_prelude(s);
  note_broken(s, main);
  ImportState is = {0};
  *file_state(s, &is, main->source->id) = 1;
  load_imports(s, &is, main, c->main_dir);
  check_main(s, main);
  give_unused_warnings(s);
  warn_unused_defines(s);
  if (diag_has_errors(s->d))
    return NULL;
  return make_program(s);
}
