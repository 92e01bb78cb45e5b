/* stitch_plan.c — a stitch group's kernels as data (stitch_plan.h).
 *
 * The walk visits a pass's values from the reductions it folds (or the
 * outputs it writes) down to memory: a value once per pass and index map
 * (a row-scope value once per kernel), broadcasts only remapping indices,
 * a reduction of the group itself a per-row scalar.  A value the register
 * kernel keeps is read back from its registers, not visited again. */
#include "stitch_plan.h"
#include "stitch.h"

#include <string.h>

typedef struct Walk {
  Arena *a;
  const KernelPlan *kp;
  const Group *g;
  uint32_t axes;         /* the reduced axes */
  const char *reuse;     /* by value id: keep it (NULL: keep nothing) */
  PlanKernel *kernel;    /* the kernel whose passes are walked */
  int ipass;             /* the pass being walked */
  PtrVec seen;           /* Seen*: element scope, this pass */
  PtrVec row_seen;       /* Seen*: row scope, every pass */
  uint32_t *computed_in; /* by value id: the passes that compute it whole */
  char *kept;            /* by value id: kept by an earlier pass */
  char *kept_read;       /* by value id: a later pass read it back */
  StitchPlan *sp;        /* where the first walk collects the memory values (else NULL) */
  char *reached;         /* by value id: a memory value the kernels read (params) */
  char *along_bytes;     /* by value id: a value along the row counted in own_bytes */
} Walk;

static int contiguous_rows(const Group *g);

/* ---- the walk ---------------------------------------------------------- */

static int in_stitch(const Group *g, const Value *v) {
  return vec_contains(&g->stitch->reduces, v);
}

static int reads_memory(const Walk *w, const Value *v) {
  return v->op == IR_INPUT ||
         (w->kp->stored[v->id] && !in_stitch(w->g, v) && w->kp->group_of[v->id] != w->g->id);
}

static int whole_domain(const Walk *w, const Shape *s, const int *map) {
  return covers_domain(&w->g->domain, w->axes, s, map, 0);
}

static PlanPass *this_pass(const Walk *w) {
  return &w->kernel->passes[w->ipass];
}

static void walk_value(Walk *w, const Value *v, const int *given);

static void note_kept(StitchPlan *sp, const Group *g, const Shape *s, const int *map);

static void compute(Walk *w, const Value *v, const int *map, int row_level) {
  if (w->sp && (v->op == IR_TAKE || v->op == IR_SIZE))
    w->reached[v->id] = 1; /* a gathered input, a size: parameters too */
  if (w->sp && v->op == IR_INDEX) { /* a position along one kept axis of several */
    note_kept(w->sp, w->g, &v->shape, map);
    w->sp->positions = 1;
  }
  if (w->sp && v->op == IR_TAKE) /* a gathered address: one index a kept axis */
    w->sp->kept_partial = 1;
  int whole = !row_level && whole_domain(w, &v->shape, map);
  if (whole && w->reuse && w->reuse[v->id] && w->kept[v->id]) {
    w->kept_read[v->id] = 1;
    return;
  }
  if (whole) {
    w->computed_in[v->id] |= 1u << (w->ipass & 31);
    vec_push(w->a, &this_pass(w)->computed, (void *)v);
  }
  for (int i = 0; i < v->nargs; i++)
    walk_value(w, v->args[i], map);
  if (whole && w->reuse && w->reuse[v->id])
    w->kept[v->id] = 1;
}

static void read_whole(Walk *w, const Value *v) {
  uint32_t bit = 1u << (w->ipass & 31);
  if (!(w->kernel->read_in[v->id] & bit))
    vec_push(w->a, &this_pass(w)->reads, (void *)v);
  w->kernel->read_in[v->id] |= bit;
  if (w->sp && !vec_contains(&w->sp->held, v)) {
    vec_push(w->a, &w->sp->held, (void *)v);
    vec_push(w->a, &w->sp->packed, (void *)v);
  }
}

int stitch_row_contiguous(const Group *g, const Shape *s, const int *map) {
  int red[TECC_MAX_RANK], n = 0, j = s->rank - 1;
  for (int i = 0; i < g->domain.rank; i++)
    if (((g->stitch->axes >> i) & 1u) && !dim_is_one(&g->domain, i))
      red[n++] = i;
  for (int k = n - 1; k >= 0; k--, j--) {
    while (j >= 0 && dim_is_one(s, j))
      j--;
    if (j < 0 || map[j] != red[k] || !dim_equal(s->d[j], g->domain.d[red[k]]))
      return 0;
  }
  for (; j >= 0; j--)
    if (!dim_is_one(s, j) && map[j] >= 0 && ((g->stitch->axes >> map[j]) & 1u))
      return 0;
  return n > 0;
}

/* A memory value read along the row but not over the whole domain: the
 * kept axes it is indexed by.  One row of it for every row of the domain
 * (a mask [S, S] under [B, S, S]) moves its bytes again, from cache. */
static void read_along_row(Walk *w, const Value *v, const int *map) {
  w->kernel->along_in[v->id] |= 1u << (w->ipass & 31);
  if (!w->sp)
    return;
  uint32_t kept = 0;
  for (int j = 0; j < v->shape.rank; j++)
    if (map[j] >= 0 && !((w->axes >> map[j]) & 1u))
      kept |= 1u << map[j];
  if (!vec_contains(&w->sp->along, v)) {
    vec_push(w->a, &w->sp->along, (void *)v);
    if (w->sp->row_packs && stitch_row_contiguous(w->g, &v->shape, map)) {
      vec_push(w->a, &w->sp->packed, (void *)v); /* a pack of its row a pack of the row's */
      if (!kept)
        vec_push(w->a, &w->sp->early, (void *)v);
    }
  }
  w->sp->along_axes |= kept;
  if (kept && !w->along_bytes[v->id]) {
    w->along_bytes[v->id] = 1;
    w->sp->own_bytes += dtype_size(v->dtype);
  }
}

/* A value indexed by some of the domain's kept axes, not all (a group
 * norm's w[G, C, 1] under [B, G, C, S], a position index(x, 1) under
 * [B, S, D]): StitchPlan.kept_partial. */
static void note_kept(StitchPlan *sp, const Group *g, const Shape *s, const int *map) {
  uint32_t all = stitch_kept_axes(g), indexed = 0;
  for (int j = 0; j < s->rank; j++)
    if (!dim_is_one(s, j) && map[j] >= 0)
      indexed |= 1u << map[j];
  sp->kept_partial |= (indexed & all) != 0 && (indexed & all) != all;
}

static void read_memory(Walk *w, const Value *v, const int *map, int row_level) {
  if (w->sp) {
    w->reached[v->id] = 1;
    note_kept(w->sp, w->g, &v->shape, map);
  }
  if (v->shape.rank == 0 || row_level)
    return;
  if (whole_domain(w, &v->shape, map))
    read_whole(w, v);
  else
    read_along_row(w, v, map);
}

static void walk_value(Walk *w, const Value *v, const int *given) {
  int map[TECC_MAX_RANK];
  for (int j = 0; j < v->shape.rank; j++) /* literal-1 axes have index 0 at any map */
    map[j] = dim_is_one(&v->shape, j) ? -1 : given[j];
  if (v->op == IR_CONST || (v->op == IR_REDUCE && in_stitch(w->g, v)))
    return;
  if (v->op == IR_BROADCAST) {
    int amap[TECC_MAX_RANK];
    broadcast_arg_map(v, map, amap);
    walk_value(w, v->args[0], amap);
    return;
  }
  int row_level = !varies_along(&v->shape, map, w->axes);
  if (seen_before(w->a, row_level ? &w->row_seen : &w->seen, v, map))
    return;
  if (reads_memory(w, v))
    read_memory(w, v, map, row_level);
  else
    compute(w, v, map, row_level);
}

/* ---- the passes -------------------------------------------------------- */


static int along_row(const Group *g, const Value *v) {
  int map[TECC_MAX_RANK];
  for (int i = 0; i < g->domain.rank; i++)
    map[i] = i;
  return varies_along(&v->shape, map, g->stitch->axes);
}

static void walk_pass(Walk *w, const PlanPass *p) {
  int map[TECC_MAX_RANK];
  for (int i = 0; i < w->g->domain.rank; i++)
    map[i] = i;
  w->seen.len = 0;
  const Stitch *st = w->g->stitch;
  if (p->kind != PASS_OUTPUT) {
    for (int i = 0; i < st->reduces.len; i++) {
      const Value *r = st->reduces.items[i];
      if (st->level[r->id] < p->level || st->level[r->id] >= p->level + p->levels)
        continue;
      Value *other = NULL, *m = p->kind == PASS_SHIFTED && st->level[r->id] > p->level
                                     ? stitch_shifted_mean(w->g, r, st->level[r->id], &other)
                                     : NULL;
      if (!m) {
        walk_value(w, r->args[0], map);
        continue;
      }
      walk_value(w, m->args[0], map); /* about the shift: no deviation from m */
      if (other)
        walk_value(w, other, map);
    }
  }
  for (int i = 0; i < p->writes.len; i++) /* along the row, then (output pass) the row's own */
    walk_value(w, ir_stored_value(p->writes.items[i]), map);
  if (p->kind != PASS_OUTPUT)
    return;
  for (int i = 0; i < st->columns.len; i++) /* what the column partials add, an element */
    walk_value(w, ((const Value *)st->columns.items[i])->args[0], map);
  for (int i = 0; i < w->g->roots.len; i++)
    if (!along_row(w->g, w->g->roots.items[i]))
      walk_value(w, w->g->roots.items[i], map);
}

static Walk new_walk(Arena *a, const KernelPlan *kp, const Group *g, PlanKernel *k, const char *reuse) {
  int n = kp->kernel->values.len + 1;
  Walk w = {0};
  w.a = a;
  w.kp = kp;
  w.g = g;
  w.axes = g->stitch->axes;
  w.reuse = reuse;
  w.kernel = k;
  w.computed_in = ARENA_ARRAY(a, uint32_t, n);
  w.kept = ARENA_ARRAY(a, char, n);
  w.kept_read = ARENA_ARRAY(a, char, n);
  k->read_in = ARENA_ARRAY(a, uint32_t, n);
  k->along_in = ARENA_ARRAY(a, uint32_t, n);
  for (int i = 0; i < k->npasses; i++) {
    k->passes[i].reads.len = 0;
    k->passes[i].computed.len = 0;
  }
  return w;
}

static void walk_kernel(Walk *w) {
  for (w->ipass = 0; w->ipass < w->kernel->npasses; w->ipass++)
    walk_pass(w, &w->kernel->passes[w->ipass]);
}

static void add_pass(Arena *a, PlanKernel *k, PassKind kind, int level, int levels) {
  PlanPass *p = ARENA_ARRAY(a, PlanPass, k->npasses + 1);
  if (k->npasses)
    memcpy(p, k->passes, sizeof *p * (size_t)k->npasses);
  p[k->npasses] = (PlanPass){.kind = kind, .level = level, .levels = levels};
  k->passes = p;
  k->npasses++;
}

/* The stream kernel folds a level of second moments (rows) or of online
 * sums in the pass of the level before (emit_stitch.c). */
static PassKind shared_pass(const Group *g, int next) {
  if (g->sched == SCHED_ROW && stitch_moments_level(g, next))
    return PASS_MOMENTS;
  return stitch_online_level(g, next) ? PASS_ONLINE : PASS_LEVEL;
}

/* Where no output along the row needs a reduction of the group (bias and
 * gelu's backward: dx beside db, its column sum) and no column partial
 * reads the row after the last level, the stream kernel writes those
 * outputs in its first pass, a plain level, and its output pass reads no
 * row: one read of the domain, not two. */
static int writes_first(const Group *g, const PlanKernel *k) {
  const Stitch *st = g->stitch;
  if (k->passes[0].kind != PASS_LEVEL || st->columns.len)
    return 0;
  int any = 0;
  for (int i = 0; i < g->roots.len; i++) {
    const Value *v = g->roots.items[i];
    if (!along_row(g, v) || stitch_is_column(g, v))
      continue;
    if (v->id >= st->nvalues || st->level[v->id] != 0)
      return 0;
    any = 1;
  }
  return any;
}

/* The register kernel folds a level of centred sums in the pass of the
 * level before, about a shift it loads from rows in packs. */
static PassKind register_pass(const Group *g, int next, int row_packs) {
  return row_packs && stitch_shifted_level(g, next) ? PASS_SHIFTED : PASS_LEVEL;
}

static void plan_passes(Arena *a, const Group *g, PlanKernel *k, int stream, int row_packs) {
  int levels = g->stitch->nlevels;
  for (int l = 1; l <= levels;) {
    PassKind kind = stream ? shared_pass(g, l + 1) : register_pass(g, l + 1, row_packs);
    int n = kind == PASS_LEVEL ? 1 : 2;
    add_pass(a, k, kind, l, n);
    l += n;
  }
  add_pass(a, k, PASS_OUTPUT, 0, 0);
  PlanPass *writer = stream && writes_first(g, k) ? &k->passes[0] : &k->passes[k->npasses - 1];
  for (int i = 0; i < g->roots.len; i++)
    if (along_row(g, g->roots.items[i]) && !stitch_is_column(g, g->roots.items[i]))
      vec_push(a, &writer->writes, g->roots.items[i]);
}

/* The passes of k that read the row: the output pass only where it
 * writes along the row.  (Its column terms read the row too, but a
 * stream kernel of column sums takes the one-read schedule as it did.) */
static int row_reads(const PlanKernel *k) {
  return k->npasses - (k->passes[k->npasses - 1].writes.len == 0);
}

/* ---- what the register kernel keeps ------------------------------------ */

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

/* Values computed whole in several passes and worth their registers are
 * kept; then a kept value whose readers are all kept too is dropped. */
static const char *choose_kept(Arena *a, const KernelPlan *kp, const Group *g, StitchPlan *sp) {
  Walk first = new_walk(a, kp, g, &sp->reg, NULL);
  first.sp = sp;
  first.reached = ARENA_ARRAY(a, char, kp->kernel->values.len + 1);
  first.along_bytes = ARENA_ARRAY(a, char, kp->kernel->values.len + 1);
  walk_kernel(&first);
  int n = kp->kernel->values.len;
  char *reuse = ARENA_ARRAY(a, char, n + 1);
  for (int i = 0; i < n; i++) {
    uint32_t m = first.computed_in[i];
    reuse[i] = (char)((m & (m - 1)) != 0 && worth_keeping(kp->kernel->values.items[i]));
  }
  Walk second = new_walk(a, kp, g, &sp->reg, reuse);
  walk_kernel(&second);
  for (int i = 0; i < n; i++) {
    reuse[i] = (char)(reuse[i] && second.kept_read[i]);
    sp->nkept += reuse[i];
    sp->kept_wide += reuse[i] && dtype_size(((const Value *)kp->kernel->values.items[i])->dtype) == 8;
  }
  sp->keep = reuse;
  Walk final = new_walk(a, kp, g, &sp->reg, reuse);
  walk_kernel(&final);
  return first.reached;
}

/* ---- the parameters ---------------------------------------------------- */

int param_rank(const KParam *p) {
  static const int order[] = {[P_INPUT] = 0, [P_SCALAR] = 1, [P_STORED_READ] = 2, [P_OUTPUT] = 3,
                              [P_WS_WRITE] = 4, [P_SIZE] = 5, [P_FASTDIV] = 6, [P_RCOUNT] = 7};
  return order[p->kind] * 1000000 + p->index;
}

static void add_param(Arena *a, PtrVec *params, ParamKind kind, int index, Value *v) {
  for (int i = 0; i < params->len; i++) {
    const KParam *p = params->items[i];
    if (p->kind == kind && p->index == index)
      return;
  }
  KParam *p = ARENA_NEW(a, KParam);
  p->kind = kind;
  p->index = index;
  p->value = v;
  int j = params->len;
  vec_push(a, params, p);
  for (; j > 0 && param_rank(params->items[j - 1]) > param_rank(p); j--)
    params->items[j] = params->items[j - 1];
  params->items[j] = p;
}

/* What both kernels take: the memory values they read, the outputs and
 * workspace they write, the sizes of the domain, the reciprocal of the
 * row's length for a mean (f32 and f64 accumulators apart). */
static void plan_params(Arena *a, const KernelPlan *kp, const Group *g, StitchPlan *sp, const char *reached) {
  const Kernel *k = kp->kernel;
  for (int i = 0; i < k->values.len; i++) {
    Value *v = k->values.items[i];
    if (!reached[v->id])
      continue;
    if (v->op == IR_SIZE) {
      add_param(a, &sp->params, P_SIZE, v->index, NULL);
      continue;
    }
    if (v->op == IR_TAKE) {
      const Shape *s = &k->inputs[v->index].shape;
      add_param(a, &sp->params, P_INPUT, v->index, NULL);
      for (int j = 0; j < s->rank; j++)
        if (s->d[j].var >= 0)
          add_param(a, &sp->params, P_SIZE, s->d[j].var, NULL);
      continue;
    }
    if (v->op == IR_INPUT)
      add_param(a, &sp->params, v->shape.rank == 0 ? P_SCALAR : P_INPUT, v->index, NULL);
    else
      add_param(a, &sp->params, P_STORED_READ, v->id, v);
  }
  for (int i = 0; i < g->roots.len; i++) {
    Value *v = g->roots.items[i];
    if (stitch_is_column(g, v))
      continue; /* written by the second stage, from the partials */
    int map[TECC_MAX_RANK];
    for (int j = 0; j < v->shape.rank; j++) /* aligned to the domain's last axes */
      map[j] = j + g->domain.rank - v->shape.rank;
    note_kept(sp, g, &v->shape, map);
    for (int o = 0; o < k->noutputs; o++)
      if (k->outputs[o].value == v)
        add_param(a, &sp->params, P_OUTPUT, o, NULL);
    if (kp->home[v->id].kind == HOME_WORKSPACE)
      add_param(a, &sp->params, P_WS_WRITE, v->id, v);
  }
  for (int i = 0; i < g->domain.rank; i++)
    if (!dim_is_one(&g->domain, i) && g->domain.d[i].var >= 0)
      add_param(a, &sp->params, P_SIZE, g->domain.d[i].var, NULL);
  if (sp->row_runs && stitch_runs_divisor(g) >= 0)
    add_param(a, &sp->params, P_FASTDIV, stitch_runs_divisor(g), NULL);
  for (int i = 0; i < g->stitch->reduces.len; i++) {
    const Value *r = g->stitch->reduces.items[i];
    if (r->rop == RED_MEAN)
      add_param(a, &sp->params, P_RCOUNT, stitch_acc_dtype(r) == DT_F64, NULL);
  }
}

/* ---- bytes ------------------------------------------------------------- */

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

/* An output written along the row at the element's own index (staged in
 * packs where the rows move in packs). */
static int staged_output(const KernelPlan *kp, const Group *g, const Value *root) {
  int map[TECC_MAX_RANK];
  for (int i = 0; i < g->domain.rank; i++)
    map[i] = i;
  const Kernel *k = kp->kernel;
  for (int o = 0; o < k->noutputs; o++)
    if (k->outputs[o].value == root)
      return along_row(g, root) && covers_domain(&g->domain, g->stitch->axes, &root->shape, map, 0);
  return 0;
}

static void widen(StitchPlan *sp, DType t) {
  if (dtype_size(t) > sp->pack_bytes)
    sp->pack_bytes = dtype_size(t);
}

static void plan_bytes(const KernelPlan *kp, const Group *g, StitchPlan *sp) {
  int packed = sp->row_packs || stitch_column_packs(g);
  for (int i = 0; i < sp->held.len; i++) {
    const Value *v = sp->held.items[i];
    sp->own_bytes += dtype_size(v->dtype);
    sp->held_wide += dtype_size(v->dtype) == 8;
    if (packed) {
      widen(sp, v->dtype);
      sp->held_pairs += dtype_is_16bit(v->dtype); /* held two to a register (emit_stitch.c) */
    }
  }
  for (int i = 0; i < g->stitch->columns.len; i++) {
    const Value *c = g->stitch->columns.items[i];
    sp->columns++;
    sp->columns_wide += dtype_size(stitch_acc_dtype(c)) == 8;
  }
  for (int i = 0; i < g->roots.len; i++) {
    const Value *r = g->roots.items[i];
    if (stitch_is_column(g, r))
      continue;
    sp->row_outputs += along_row(g, r);
    sp->narrow_outputs += along_row(g, r) && dtype_size(r->dtype) == 1;
    if (!staged_output(kp, g, r))
      continue;
    sp->own_bytes += dtype_size(r->dtype);
    if (packed)
      widen(sp, r->dtype);
  }
  if (packed && !sp->pack_bytes)
    sp->pack_bytes = 1;
}

/* ---- the plan ---------------------------------------------------------- */

int stitch_thread_rows(const Group *g) {
  if (g->kind != GROUP_STITCH || g->sched != SCHED_ROW)
    return 0;
  int kept = stitch_kept_first(g);
  return kept == 1 || (kept > 1 && g->plan && !g->plan->kept_partial);
}

/* Is a size variable among the axes of g's inner run? */
static int run_of_variable(const Group *g) {
  uint32_t run = stitch_inner_run(g);
  for (int i = 0; i < g->domain.rank; i++)
    if (((run >> i) & 1u) && g->domain.d[i].var >= 0)
      return 1;
  return 0;
}

/* Rows of several runs move in packs in the plan before a split (fuse.c,
 * plan_unsplit()) where every run is whole packs: then a pack never
 * straddles two, whatever the alignment, and its elements follow it
 * (emit_stitch.c, runs_offset()).  The run of a size variable: the entry
 * checks it (emit_cu.c: else the split plan).  Not a literal run: its
 * division by a constant, inlined, spilled 8 to 304 bytes in the
 * instances of 8 items (tests/programs/runs_rows.te at -DS=392, ptxas
 * -v, sm_90), where the size variable's did not; such a kernel keeps the
 * split plan (schedule.c, choose_apart()).  Other rows of runs (a literal
 * run too short to split) load element by element, a division an
 * element: with packs, their instances of 8 items spilled 8 to 56 bytes
 * (f32 [B, C, 16]). */
static int runs_whole_packs(const KernelPlan *kp, const Group *g) {
  return kp->apart_split && kp->groups.items[kp->apart_group] == g && run_of_variable(g);
}

static StitchPlan *make_plan(Arena *a, const KernelPlan *kp, const Group *g, int runs) {
  StitchPlan *sp = ARENA_NEW(a, StitchPlan);
  sp->row_runs = runs && stitch_row_runs(g);
  sp->row_packs = g->sched == SCHED_ROW && (contiguous_rows(g) || sp->row_runs);
  plan_passes(a, g, &sp->reg, 0, sp->row_packs);
  plan_passes(a, g, &sp->stream, 1, sp->row_packs);
  const char *reached = choose_kept(a, kp, g, sp);
  Walk stream = new_walk(a, kp, g, &sp->stream, NULL);
  walk_kernel(&stream);
  plan_params(a, kp, g, sp, reached);
  plan_bytes(kp, g, sp);
  sp->stream_reads = row_reads(&sp->stream);
  return sp;
}

StitchPlan *stitch_plan(Arena *a, const KernelPlan *kp, const Group *g) {
  return make_plan(a, kp, g, runs_whole_packs(kp, g));
}

void plan_stitches(Compilation *c, Module *m, FusionPlan *p) {
  for (int i = 0; i < m->nkernels; i++) {
    for (KernelPlan *kp = p->kernels[i]; kp; kp = kp->apart) {
      for (int j = 0; j < kp->groups.len; j++) {
        Group *g = kp->groups.items[j];
        if (g->kind == GROUP_STITCH)
          g->plan = stitch_plan(c->arena, kp, g);
      }
    }
  }
}

/* ---- --emit=plan ------------------------------------------------------- */

static const char *pass_name(Arena *a, const PlanPass *p) {
  switch (p->kind) {
  case PASS_LEVEL: return arena_printf(a, "level %d", p->level);
  case PASS_MOMENTS:
    return arena_printf(a, "levels %d-%d (means and second moments, one read)", p->level, p->level + 1);
  case PASS_ONLINE:
    return arena_printf(a, "levels %d-%d (max and online sums of exp, one read)", p->level, p->level + 1);
  case PASS_SHIFTED:
    return arena_printf(a, "levels %d-%d (means and centred sums about the row's first element, one pass)", p->level,
                        p->level + 1);
  case PASS_OUTPUT: return "outputs";
  }
  unreachable();
}

static void values_text(Buf *b, const PtrVec *vs) {
  if (!vs->len)
    buf_printf(b, "nothing");
  for (int i = 0; i < vs->len; i++)
    buf_printf(b, "%s%%%d", i ? " " : "", ((const Value *)vs->items[i])->id);
}

static void kernel_text(Arena *a, Buf *b, const PlanKernel *k, const char *name, const char *indent) {
  buf_printf(b, "%s%s kernel passes:", indent, name);
  for (int i = 0; i < k->npasses; i++) {
    buf_printf(b, "%s %s reads ", i ? ";" : "", pass_name(a, &k->passes[i]));
    values_text(b, &k->passes[i].reads);
    if (k->passes[i].computed.len) {
      buf_puts(b, ", computes ");
      values_text(b, &k->passes[i].computed);
    }
    if (k->passes[i].writes.len && k->passes[i].kind != PASS_OUTPUT) {
      buf_puts(b, ", writes ");
      values_text(b, &k->passes[i].writes);
    }
  }
}

static void kept_text(Buf *b, const StitchPlan *sp, int nvalues) {
  buf_puts(b, nvalues && sp->nkept ? "; keeps" : "");
  for (int i = 0; sp->keep && i < nvalues; i++)
    if (sp->keep[i])
      buf_printf(b, " %%%d", i);
  buf_puts(b, sp->nkept ? " in registers across passes" : "");
}

const char *stitch_plan_text(Arena *a, const StitchPlan *sp, int nvalues, const char *indent) {
  Buf b;
  buf_init(&b, a);
  kernel_text(a, &b, &sp->reg, "register", indent);
  kept_text(&b, sp, nvalues);
  buf_puts(&b, "\n");
  kernel_text(a, &b, &sp->stream, "stream", indent);
  buf_puts(&b, "\n");
  return buf_cstr(&b);
}

int plan_folds_by_chunk(const PlanKernel *pk) {
  for (int i = 0; i < pk->npasses; i++)
    if (pk->passes[i].kind == PASS_MOMENTS || pk->passes[i].kind == PASS_ONLINE)
      return 1;
  return 0;
}
