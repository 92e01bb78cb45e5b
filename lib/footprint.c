/* footprint.c — what a group moves in packs and holds per element
 * (footprint.h).  The walk mirrors the emitters': a value is visited once
 * per pass and index map; broadcasts only remap indices; a reduction of
 * the stitch group itself is a per-row scalar. */
#include "footprint.h"
#include "stitch.h"

#include <string.h>

typedef struct Seen {
  int id;
  int map[TECC_MAX_RANK];
} Seen;

typedef struct Walk {
  Arena *a;
  const KernelPlan *kp;
  const Group *g;
  uint32_t axes;         /* stitch: the reduced axes (0 for a loop group) */
  int pass;              /* stitch: 1..levels, then the output pass */
  PtrVec seen;           /* Seen*: element scope, this pass */
  PtrVec row_seen;       /* Seen*: row scope, every pass */
  int pack_bytes;
  int own_bytes;         /* bytes per element: loop, at its own index; stitch, footprint.h */
  int slow_math;         /* loop: software math functions per element */
  char *held;            /* by value id: a memory value held whole */
  int nheld;
  uint32_t *computed_in; /* by value id: the passes that compute it whole */
  const char *reuse;     /* by value id: keep it (NULL: keep nothing) */
  char *kept;            /* by value id: kept by an earlier pass */
  char *kept_read;       /* by value id: a later pass read it back */
  int row_operands;      /* stitch: memory values broadcast along the rows were read */
  uint32_t row_operand_axes; /* stitch: the kept domain axes those index */
  char *along;           /* stitch: by value id, such a value of rows of its own was counted
                            in own_bytes */
} Walk;

int worth_keeping(const Value *v) {
  if (v->op == IR_UNARY && v->uop == UN_EXP)
    return v->dtype == DT_F64; /* f32's is a multiply and an ex2 (tecc::exp) */
  if (v->op == IR_UNARY)
    return v->uop != UN_NEG && v->uop != UN_NOT;
  if (v->op == IR_BINARY)
    return v->bop == BIN_DIV || v->bop == BIN_POW || v->bop == BIN_MOD || v->bop == BIN_FLOORDIV ||
           v->bop == BIN_ATAN2;
  return 0;
}

int footprint_held(const Footprint *f) {
  int n = f->held_inputs > f->kept ? f->held_inputs : f->kept;
  return n > 0 ? n : 1;
}

int footprint_budget(const Footprint *f, int registers) {
  int inputs = 2 * f->held_inputs - f->held_pairs, kept = 2 * f->kept; /* half registers */
  int need = inputs > kept ? inputs : kept;
  int budget = 2 * registers / (need > 0 ? need : 2);
  return budget > 0 ? budget : 1;
}

/* A math function the GPU computes in software, tens of instructions
 * (erf, the trigonometric and hyperbolic ones, pow, ...), where exp, log,
 * sqrt and the arithmetic are a few. */
static int slow_math(const Value *v) {
  if (v->op == IR_BINARY)
    return v->bop == BIN_POW || v->bop == BIN_ATAN2;
  if (v->op != IR_UNARY)
    return 0;
  switch (v->uop) {
  case UN_SIN: case UN_COS: case UN_TAN: case UN_ASIN: case UN_ACOS: case UN_ATAN:
  case UN_SINH: case UN_COSH: case UN_TANH: case UN_ERF: case UN_GELU: case UN_GELU_TANH:
  case UN_EXPM1: case UN_LOG1P: case UN_SOFTPLUS:
    return 1;
  default:
    return 0;
  }
}

static void widen(Walk *w, DType t) {
  if (dtype_size(t) > w->pack_bytes)
    w->pack_bytes = dtype_size(t);
}

static int seen_before(Walk *w, PtrVec *seen, const Value *v, const int *map) {
  for (int i = 0; i < seen->len; i++) {
    const Seen *s = seen->items[i];
    if (s->id == v->id && memcmp(s->map, map, sizeof(int) * (size_t)v->shape.rank) == 0)
      return 1;
  }
  Seen *s = ARENA_NEW(w->a, Seen);
  s->id = v->id;
  memcpy(s->map, map, sizeof(int) * (size_t)v->shape.rank);
  vec_push(w->a, seen, s);
  return 0;
}

static void broadcast_map(const Value *v, const int *map, int *amap) {
  const Value *arg = v->args[0];
  int shift = v->shape.rank - arg->shape.rank;
  for (int j = 0; j < arg->shape.rank; j++)
    amap[j] = dim_is_one(&arg->shape, j) ? -1 : map[j + shift];
}

static int covers(const Walk *w, const Shape *s, const int *map, int kept_only) {
  return covers_domain(&w->g->domain, w->axes, s, map, kept_only);
}

/* ---- loop groups ------------------------------------------------------- */

/* Every non-1 axis of the domain indexes `s` (emit_cu.c's identity test). */
static int at_own_index(const Walk *w, const Shape *s, const int *map) {
  int covered = 0, domain_axes = 0;
  for (int i = 0; i < w->g->domain.rank; i++)
    domain_axes += !dim_is_one(&w->g->domain, i);
  for (int j = 0; j < s->rank; j++)
    covered += !dim_is_one(s, j) && map[j] >= 0;
  return covered == domain_axes;
}

static int loop_reads_memory(const Walk *w, const Value *v) {
  return v->op == IR_INPUT || (w->kp->stored[v->id] && w->kp->group_of[v->id] != w->g->id);
}

static void loop_visit(Walk *w, const Value *v, const int *map) {
  if (v->op == IR_CONST)
    return;
  if (v->op == IR_BROADCAST) {
    int amap[TECC_MAX_RANK];
    broadcast_map(v, map, amap);
    loop_visit(w, v->args[0], amap);
    return;
  }
  if (seen_before(w, &w->seen, v, map))
    return;
  if (loop_reads_memory(w, v)) {
    int by_value = v->op == IR_INPUT && v->shape.rank == 0; /* a scalar argument */
    if (!by_value && at_own_index(w, &v->shape, map)) {
      widen(w, v->dtype);
      w->own_bytes += dtype_size(v->dtype);
    }
    return;
  }
  w->slow_math += slow_math(v);
  for (int i = 0; i < v->nargs; i++)
    loop_visit(w, v->args[i], map);
}

static void identity(int *map, int rank) {
  for (int i = 0; i < rank; i++)
    map[i] = i;
}

static void loop_footprint(Walk *w) {
  int map[TECC_MAX_RANK];
  identity(map, w->g->domain.rank);
  for (int i = 0; i < w->g->roots.len; i++) {
    const Value *r = w->g->roots.items[i];
    loop_visit(w, r, map);
    widen(w, r->dtype); /* every root is stored at the element's index */
    w->own_bytes += dtype_size(r->dtype);
  }
}

/* A plain reduction reads its operand over the whole domain; its result
 * is stored per output element, never in packs. */
static void reduce_footprint(Walk *w) {
  int map[TECC_MAX_RANK];
  identity(map, w->g->domain.rank);
  loop_visit(w, w->g->reduce->args[0], map);
}

/* ---- stitch groups ----------------------------------------------------- */

static int in_stitch(const Walk *w, const Value *v) {
  const PtrVec *r = &w->g->stitch->reduces;
  for (int i = 0; i < r->len; i++)
    if (r->items[i] == v)
      return 1;
  return 0;
}

static int stitch_reads_memory(const Walk *w, const Value *v) {
  return v->op == IR_INPUT ||
         (w->kp->stored[v->id] && !in_stitch(w, v) && w->kp->group_of[v->id] != w->g->id);
}

static int varies_along_row(const Walk *w, const Value *v, const int *map) {
  return varies_along(&v->shape, map, w->axes);
}

static void hold(Walk *w, const Value *v) {
  if (!w->held[v->id]) {
    w->held[v->id] = 1;
    w->nheld++;
  }
}

static void stitch_visit(Walk *w, const Value *v, const int *given);

static void stitch_compute(Walk *w, const Value *v, const int *map, int row_level) {
  int whole = !row_level && covers(w, &v->shape, map, 0);
  if (whole && w->reuse && w->reuse[v->id] && w->kept[v->id]) {
    w->kept_read[v->id] = 1;
    return;
  }
  if (whole)
    w->computed_in[v->id] |= 1u << (w->pass & 31);
  for (int i = 0; i < v->nargs; i++)
    stitch_visit(w, v->args[i], map);
  if (whole && w->reuse && w->reuse[v->id])
    w->kept[v->id] = 1;
}

/* A memory value read along the row but not over the whole domain (a
 * norm's w, an attention mask broadcast over a batch): the kept axes it
 * is indexed by. */
static void read_along_row(Walk *w, const Value *v, const int *map) {
  uint32_t kept = 0;
  for (int j = 0; j < v->shape.rank; j++)
    if (map[j] >= 0 && !((w->axes >> map[j]) & 1u))
      kept |= 1u << map[j];
  w->row_operands = 1;
  w->row_operand_axes |= kept;
  if (kept && !w->along[v->id]) { /* one row for every row (w): the same bytes again, from cache */
    w->along[v->id] = 1;
    w->own_bytes += dtype_size(v->dtype);
  }
}

static void stitch_visit(Walk *w, const Value *v, const int *given) {
  int map[TECC_MAX_RANK];
  for (int j = 0; j < v->shape.rank; j++) /* literal-1 axes have index 0 at any map */
    map[j] = dim_is_one(&v->shape, j) ? -1 : given[j];
  if (v->op == IR_CONST || (v->op == IR_REDUCE && in_stitch(w, v)))
    return;
  if (v->op == IR_BROADCAST) {
    int amap[TECC_MAX_RANK];
    broadcast_map(v, map, amap);
    stitch_visit(w, v->args[0], amap);
    return;
  }
  int row_level = !varies_along_row(w, v, map);
  if (seen_before(w, row_level ? &w->row_seen : &w->seen, v, map))
    return;
  if (!stitch_reads_memory(w, v))
    stitch_compute(w, v, map, row_level);
  else if (v->shape.rank > 0 && !row_level && covers(w, &v->shape, map, 0))
    hold(w, v);
  else if (v->shape.rank > 0 && !row_level)
    read_along_row(w, v, map);
}

/* An output of a rounding cast to f16/bf16 of an f32 value stores the f32
 * value (emit_stitch.c's store_value). */
static const Value *stored_value(const Value *v) {
  if (v->op == IR_CAST && (v->dtype == DT_F16 || v->dtype == DT_BF16) && v->args[0]->dtype == DT_F32)
    return v->args[0];
  return v;
}

static void next_pass(Walk *w) {
  w->seen.len = 0;
  w->pass++;
}

/* One register-kernel emission: a pass per reduction level, the output
 * pass, then the row outputs. */
static void stitch_passes(Walk *w) {
  const Stitch *st = w->g->stitch;
  int map[TECC_MAX_RANK];
  identity(map, w->g->domain.rank);
  for (int l = 1; l <= st->nlevels; l++) {
    next_pass(w);
    for (int i = 0; i < st->reduces.len; i++) {
      const Value *r = st->reduces.items[i];
      if (st->level[r->id] == l)
        stitch_visit(w, r->args[0], map);
    }
  }
  next_pass(w);
  for (int i = 0; i < w->g->roots.len; i++) {
    const Value *v = w->g->roots.items[i];
    if (varies_along_row(w, v, map))
      stitch_visit(w, stored_value(v), map);
  }
  for (int i = 0; i < w->g->roots.len; i++) {
    const Value *v = w->g->roots.items[i];
    if (!varies_along_row(w, v, map))
      stitch_visit(w, v, map);
  }
}

static Walk stitch_walk(Arena *a, const KernelPlan *kp, const Group *g, const char *reuse) {
  int n = kp->kernel->values.len + 1;
  Walk w = {0};
  w.a = a;
  w.kp = kp;
  w.g = g;
  w.axes = g->stitch->axes;
  w.held = ARENA_ARRAY(a, char, n);
  w.computed_in = ARENA_ARRAY(a, uint32_t, n);
  w.kept = ARENA_ARRAY(a, char, n);
  w.kept_read = ARENA_ARRAY(a, char, n);
  w.along = ARENA_ARRAY(a, char, n);
  w.reuse = reuse;
  stitch_passes(&w);
  return w;
}

/* Rows are contiguous when no kept axis follows a reduced one: then a
 * thread's consecutive row elements are consecutive in memory. */
static int contiguous_rows(const Group *g) {
  int seen_red = 0;
  for (int i = 0; i < g->domain.rank; i++) {
    if (dim_is_one(&g->domain, i))
      continue;
    if ((g->stitch->axes >> i) & 1u)
      seen_red = 1;
    else if (seen_red)
      return 0;
  }
  return 1;
}

static int is_staged_output(const Walk *w, const Value *root) {
  int map[TECC_MAX_RANK];
  identity(map, w->g->domain.rank);
  const Kernel *k = w->kp->kernel;
  for (int o = 0; o < k->noutputs; o++)
    if (k->outputs[o].value == root)
      return varies_along_row(w, root, map) && covers(w, &root->shape, map, 0);
  return 0;
}

/* Values computed whole in several passes and worth their registers are
 * kept; then a kept value whose readers are all kept too is dropped. */
static void stitch_footprint(Arena *a, const KernelPlan *kp, const Group *g, Footprint *f) {
  Walk first = stitch_walk(a, kp, g, NULL);
  int n = kp->kernel->values.len;
  char *reuse = ARENA_ARRAY(a, char, n + 1);
  for (int i = 0; i < n; i++) {
    uint32_t m = first.computed_in[i];
    reuse[i] = (char)((m & (m - 1)) != 0 && worth_keeping(kp->kernel->values.items[i]));
  }
  Walk second = stitch_walk(a, kp, g, reuse);
  for (int i = 0; i < n; i++) {
    reuse[i] = (char)(reuse[i] && second.kept_read[i]);
    f->kept += reuse[i];
  }
  f->keep = reuse;
  f->held_inputs = first.nheld;
  f->row_operands = first.row_operands;
  f->row_operand_axes = first.row_operand_axes;
  int map[TECC_MAX_RANK];
  identity(map, g->domain.rank);
  for (int i = 0; i < g->roots.len; i++)
    f->row_outputs += varies_along_row(&first, g->roots.items[i], map);
  int packed = (g->sched == SCHED_ROW && contiguous_rows(g)) || stitch_column_packs(g);
  for (int i = 0; i < n; i++) {
    if (!first.held[i])
      continue;
    DType t = ((Value *)kp->kernel->values.items[i])->dtype;
    first.own_bytes += dtype_size(t);
    if (packed) {
      widen(&first, t);
      f->held_pairs += dtype_is_16bit(t); /* packed rows and columns hold 16-bit inputs in pairs (emit_stitch.c) */
    }
  }
  for (int i = 0; i < g->roots.len; i++) {
    const Value *r = g->roots.items[i];
    if (!is_staged_output(&first, r))
      continue;
    first.own_bytes += dtype_size(r->dtype);
    if (packed)
      widen(&first, r->dtype);
  }
  f->own_bytes = first.own_bytes;
  if (packed)
    f->pack_bytes = first.pack_bytes ? first.pack_bytes : 1;
}

Footprint group_footprint(Arena *a, const KernelPlan *kp, const Group *g) {
  Footprint f = {0};
  if (g->kind == GROUP_STITCH) {
    stitch_footprint(a, kp, g, &f);
  } else {
    Walk w = {0};
    w.a = a;
    w.kp = kp;
    w.g = g;
    if (g->kind == GROUP_LOOP)
      loop_footprint(&w);
    else
      reduce_footprint(&w);
    f.pack_bytes = w.pack_bytes;
    f.own_bytes = w.own_bytes;
    f.slow_math = w.slow_math;
  }
  if (f.pack_bytes > 16)
    internal_error("an element of %d bytes does not fit a 16-byte pack", f.pack_bytes);
  return f;
}
