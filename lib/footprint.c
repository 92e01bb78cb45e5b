/* footprint.c — what a group moves in packs and holds per element
 * (footprint.h).  A loop or reduce group's values are walked here, once
 * each per index map, broadcasts only remapping indices; a stitch group's
 * numbers are its plan's (stitch_plan.c walked its passes). */
#include "footprint.h"
#include "stitch_plan.h"

#include <string.h>

typedef struct Walk {
  Arena *a;
  const KernelPlan *kp;
  const Group *g;
  PtrVec seen;           /* Seen*: the values visited, with their index maps */
  int pack_bytes;
  int own_bytes;         /* bytes per element at the group's own index (footprint.h) */
  int slow_math;         /* software math functions per element */
  uint32_t slow_axes;    /* the domain axes they vary along */
  int split_index;       /* loop: footprint.h */
  int gathers;           /* loop: footprint.h */
  uint32_t *axes_memo;   /* position_axes() */
} Walk;

/* A stitch kernel's last pass moves, an item at a time beside what it
 * holds, a 16-byte pack (4 registers) of each operand read along the row
 * and of each output written along it: three fit in the registers the
 * budget leaves (layernorm's w, b and y); each further one takes from the
 * budget (issue 45: softmax(x, -1) beside softmax(x, 0), two operands
 * and two outputs, and online_sums' five outputs spilled). */
enum { ITEM_PACKS_FREE = 3, PACK_REGISTERS = 4 };

int footprint_held(const Footprint *f) {
  int n = f->held_inputs > f->kept ? f->held_inputs : f->kept;
  return n > 0 ? n : 1;
}

int footprint_held_bytes(const Footprint *f) {
  return 4 * f->held_inputs - 2 * f->held_pairs + 4 * f->held_wide + 4 * f->kept + 4 * f->kept_wide;
}

int footprint_light_items(const Footprint *f) {
  return f->item_packs <= ITEM_PACKS_FREE;
}

int footprint_budget(const Footprint *f, int registers) {
  if (f->item_packs > ITEM_PACKS_FREE)
    registers -= PACK_REGISTERS * (f->item_packs - ITEM_PACKS_FREE);
  int inputs = 2 * f->held_inputs - f->held_pairs + 6 * f->held_wide; /* half registers */
  int kept = 2 * f->kept + 6 * f->kept_wide;
  int need = (inputs > kept ? inputs : kept) + 2 * f->columns + 2 * f->columns_wide; /* each element's column sums */
  int budget = 2 * registers / (need > 0 ? need : 2);
  return budget > 0 ? budget : 1;
}

/* A math function the GPU computes in software, tens of instructions
 * (erf, the trigonometric and hyperbolic ones, pow, ...), where exp, log,
 * sqrt and the arithmetic are a few. */
int footprint_slow_math(const Value *v) {
  if (v->op == IR_BINARY)
    return v->bop == BIN_POW || v->bop == BIN_ATAN2;
  if (v->op != IR_UNARY)
    return 0;
  switch (v->uop) {
  case UN_SIN: case UN_COS: case UN_TAN: case UN_ASIN: case UN_ACOS: case UN_ATAN:
  case UN_SINH: case UN_COSH: case UN_TANH: case UN_ERF: case UN_GELU: case UN_GELU_TANH: case UN_NORMCDF:
  case UN_EXPM1: case UN_LOG1P: case UN_SOFTPLUS:
    return 1;
  default:
    return 0;
  }
}

/* memo: 0 not yet computed, else the axes with bit 30 set. */
uint32_t position_axes(const KernelPlan *kp, const Group *g, const Value *v, uint32_t *memo) {
  enum { DONE = 1u << 30 };
  if (memo[v->id])
    return memo[v->id] & ~(uint32_t)DONE;
  uint32_t r = 0;
  int reads = v->op == IR_INPUT || (kp->stored[v->id] && kp->group_of[v->id] != g->id);
  if (reads ? v->shape.rank > 0 : v->op == IR_TAKE || v->op == IR_REDUCE) {
    r = AXES_MEMORY;
  } else if (v->op == IR_INDEX) {
    r = dim_is_one(&v->shape, __builtin_ctz(v->axes)) ? 0 : v->axes;
  } else if (v->op == IR_BROADCAST) {
    uint32_t a = position_axes(kp, g, v->args[0], memo);
    r = a & AXES_MEMORY ? AXES_MEMORY : a << (v->shape.rank - v->args[0]->shape.rank);
  } else if (!reads) {
    for (int i = 0; i < v->nargs; i++)
      r |= position_axes(kp, g, v->args[i], memo);
  }
  memo[v->id] = r | DONE;
  return r;
}

uint32_t domain_axes_of(uint32_t own, const Value *v, const int *map) {
  if (own & AXES_MEMORY)
    return AXES_MEMORY;
  uint32_t d = 0;
  for (int j = 0; j < v->shape.rank; j++)
    if (((own >> j) & 1u) && map[j] >= 0)
      d |= 1u << map[j];
  return d;
}

static void widen(Walk *w, DType t) {
  if (dtype_size(t) > w->pack_bytes)
    w->pack_bytes = dtype_size(t);
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

/* Does one of take v's indices read memory (ids[n], not a position)? */
static int index_reads_memory(Walk *w, const Value *v) {
  for (int j = 0; j < ir_take_naxes(v); j++)
    if (position_axes(w->kp, w->g, ir_take_index(v, j), w->axes_memo) & AXES_MEMORY)
      return 1;
  return 0;
}

static void loop_visit(Walk *w, const Value *v, const int *map) {
  if (v->op == IR_CONST)
    return;
  if (v->op == IR_BROADCAST) {
    int amap[TECC_MAX_RANK];
    broadcast_arg_map(v, map, amap);
    loop_visit(w, v->args[0], amap);
    return;
  }
  if (seen_before(w->a, &w->seen, v, map))
    return;
  if (loop_reads_memory(w, v)) {
    int by_value = v->op == IR_INPUT && v->shape.rank == 0; /* a scalar argument */
    if (!by_value && at_own_index(w, &v->shape, map)) {
      widen(w, v->dtype);
      w->own_bytes += dtype_size(v->dtype);
    } else if (!by_value) {
      w->split_index = 1;
    }
    return;
  }
  if (v->op == IR_INDEX || v->op == IR_TAKE)
    w->split_index = 1;
  if (v->op == IR_TAKE && index_reads_memory(w, v))
    w->gathers++;
  if (footprint_slow_math(v)) {
    w->slow_math++;
    w->slow_axes |= domain_axes_of(position_axes(w->kp, w->g, v, w->axes_memo), v, map);
  }
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

/* The plan's numbers (stitch_plan.h): it walked the group's passes once. */
static void stitch_footprint(const Group *g, const StitchPlan *sp, Footprint *f) {
  f->held_inputs = sp->held.len;
  f->held_pairs = sp->held_pairs;
  f->held_wide = sp->held_wide;
  f->kept_wide = sp->kept_wide;
  f->kept = sp->nkept;
  f->keep = sp->keep;
  f->row_operands = sp->along.len;
  /* rows in 16-byte packs only: a column kernel's budget sets its ITEMS,
   * which it takes as a power of two (7, from two operands and two
   * outputs, broke one); element by element an item moves 4 bytes */
  f->item_packs = g->sched == SCHED_ROW && sp->pack_bytes ? sp->along.len + sp->row_outputs : 0;
  f->row_operand_axes = sp->along_axes;
  f->row_outputs = sp->row_outputs;
  f->own_bytes = sp->own_bytes;
  f->pack_bytes = sp->pack_bytes;
  f->columns = sp->columns;
  f->columns_wide = sp->columns_wide;
  for (int i = 0; i < sp->reg.npasses; i++)
    f->shifted |= sp->reg.passes[i].kind == PASS_SHIFTED;
}

static Walk new_walk(Arena *a, const KernelPlan *kp, const Group *g) {
  Walk w = {0};
  w.a = a;
  w.kp = kp;
  w.g = g;
  w.axes_memo = ARENA_ARRAY(a, uint32_t, (size_t)kp->kernel->values.len + 1);
  return w;
}

/* The software math functions a stitch group computes per element (its
 * loop walk, of which only that count is taken). */
static int stitch_slow_math(Arena *a, const KernelPlan *kp, const Group *g) {
  Walk w = new_walk(a, kp, g);
  loop_footprint(&w);
  return w.slow_math;
}

Footprint group_footprint(Arena *a, const KernelPlan *kp, const Group *g) {
  Footprint f = {0};
  if (g->kind == GROUP_STITCH) {
    stitch_footprint(g, g->plan, &f);
    f.slow_math = stitch_slow_math(a, kp, g);
  } else {
    Walk w = new_walk(a, kp, g);
    if (g->kind == GROUP_LOOP)
      loop_footprint(&w);
    else
      reduce_footprint(&w);
    f.pack_bytes = w.pack_bytes;
    f.own_bytes = w.own_bytes;
    f.slow_math = w.slow_math;
    f.slow_axes = w.slow_axes;
    f.split_index = w.split_index;
    f.gathers = w.gathers;
  }
  if (f.pack_bytes > 16)
    internal_error("an element of %d bytes does not fit a 16-byte pack", f.pack_bytes);
  return f;
}
