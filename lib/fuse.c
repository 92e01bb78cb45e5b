/* fuse.c — partition each kernel's IR into groups, one launch each
 * (fuse.h explains the policy). */
#include "fuse.h"
#include "stitch.h"

#include <stdlib.h>
#include <string.h>

static int computes(const Value *v) {
  return v->op == IR_CAST || v->op == IR_UNARY || v->op == IR_BINARY ||
         v->op == IR_SELECT || v->op == IR_REDUCE || v->op == IR_TAKE;
}

static int is_stored_at(int opt_level, const Value *v) {
  if (opt_level == 0)
    return computes(v);
  return v->op == IR_REDUCE;
}

static Group *new_group(Arena *a, KernelPlan *kp, GroupKind kind, const Shape *domain) {
  Group *g = ARENA_NEW(a, Group);
  g->kind = kind;
  g->domain = *domain;
  g->sched = SCHED_ELEMENTWISE;
  vec_push(a, &kp->groups, g);
  return g;
}

/* Reduced axes that include the innermost real axis read rows. */
static Schedule reduce_schedule(const Value *r) {
  int inner = innermost_axis(&r->args[0]->shape);
  if (inner < 0 || (r->axes >> inner) & 1u)
    return SCHED_ROW;
  return SCHED_COLUMN;
}

static Group *find_loop_group(KernelPlan *kp, const Shape *s) {
  for (int i = 0; i < kp->groups.len; i++) {
    Group *g = kp->groups.items[i];
    if (g->kind == GROUP_LOOP && shape_equal(&g->domain, s))
      return g;
  }
  return NULL;
}

/* One group per stored value (a reduction is always its own group). */
static void make_stored_groups(Arena *a, KernelPlan *kp) {
  Kernel *k = kp->kernel;
  for (int i = 0; i < k->values.len; i++) {
    Value *v = k->values.items[i];
    if (!kp->stored[i])
      continue;
    GroupKind kind = v->op == IR_REDUCE ? GROUP_REDUCE : GROUP_LOOP;
    Group *g = new_group(a, kp, kind, kind == GROUP_REDUCE ? &v->args[0]->shape : &v->shape);
    if (kind == GROUP_REDUCE) {
      g->reduce = v;
      g->sched = reduce_schedule(v);
    }
    vec_push(a, &g->roots, v);
    kp->group_of[i] = -2; /* numbered after sorting */
    v->aux = g;
  }
}

/* Outputs not yet written by a stored group join the loop group of their
 * shape (multi-output kLoop); -O0 gives each its own group. */
static void make_output_groups(Arena *a, KernelPlan *kp, int opt_level) {
  Kernel *k = kp->kernel;
  for (int i = 0; i < k->noutputs; i++) {
    Value *v = k->outputs[i].value;
    if (kp->group_of[v->id] != -1)
      continue;
    Group *g = opt_level > 0 ? find_loop_group(kp, &v->shape) : NULL;
    if (!g)
      g = new_group(a, kp, GROUP_LOOP, &v->shape);
    vec_push(a, &g->roots, v);
    kp->group_of[v->id] = -2;
    v->aux = g;
  }
}

static int root_order(const Group *g) {
  int last = -1;
  for (int i = 0; i < g->roots.len; i++) {
    const Value *v = g->roots.items[i];
    if (v->id > last)
      last = v->id;
  }
  return last;
}

/* Launch order: by the largest root id.  A group reads only stored values,
 * which have smaller ids than the roots that use them. */
static int real_axes(const Shape *s) {
  int n = 0;
  for (int i = 0; i < s->rank; i++)
    n += !dim_is_one(s, i);
  return n;
}

/* Without reductions every fused group reads only inputs, so any order
 * works; larger domains go first, because only they can read (by
 * broadcasting) an input that a smaller group overwrites in place. */
static void sort_by_real_axes(KernelPlan *kp) {
  for (int i = 1; i < kp->groups.len; i++) {
    Group *g = kp->groups.items[i];
    int j = i;
    for (; j > 0 && real_axes(&((Group *)kp->groups.items[j - 1])->domain) < real_axes(&g->domain); j--)
      kp->groups.items[j] = kp->groups.items[j - 1];
    kp->groups.items[j] = g;
  }
}

static void sort_groups(KernelPlan *kp, int opt_level) {
  for (int i = 1; i < kp->groups.len; i++) {
    Group *g = kp->groups.items[i];
    int j = i;
    for (; j > 0 && root_order(kp->groups.items[j - 1]) > root_order(g); j--)
      kp->groups.items[j] = kp->groups.items[j - 1];
    kp->groups.items[j] = g;
  }
  if (!kp->has_reduce && opt_level > 0)
    sort_by_real_axes(kp);
  for (int i = 0; i < kp->groups.len; i++) {
    Group *g = kp->groups.items[i];
    g->id = i;
    for (int r = 0; r < g->roots.len; r++)
      kp->group_of[((Value *)g->roots.items[r])->id] = i;
    for (int r = 0; r < g->epilogue.len; r++)
      kp->group_of[((Value *)g->epilogue.items[r])->id] = i;
  }
}

static void push_unique(Arena *a, PtrVec *v, void *item) {
  for (int i = 0; i < v->len; i++)
    if (v->items[i] == item)
      return;
  vec_push(a, v, item);
}

/* Members: everything reachable from the roots without crossing a stored
 * value or an input.  `mark` is scratch by value id. */
static void collect(Arena *a, KernelPlan *kp, Group *g, Value *v, char *mark, int is_root) {
  if (mark[v->id])
    return;
  mark[v->id] = 1;
  /* A stitch group may have several stored roots that read each other. */
  if (v->op == IR_INPUT || (kp->stored[v->id] && !is_root && kp->group_of[v->id] != g->id)) {
    vec_push(a, &g->reads, v);
    if (v->op != IR_INPUT)
      push_unique(a, &g->deps, kp->groups.items[kp->group_of[v->id]]);
    return;
  }
  if (v->op == IR_TAKE) /* a gathered read of an input, not an operand */
    push_unique(a, &g->reads, kp->kernel->inputs[v->index].value);
  for (int i = 0; i < v->nargs; i++)
    collect(a, kp, g, v->args[i], mark, 0);
}

static int by_id(const void *pa, const void *pb) {
  const Value *a = *(Value *const *)pa, *b = *(Value *const *)pb;
  return (a->id > b->id) - (a->id < b->id);
}

static void collect_members(Arena *a, KernelPlan *kp, Group *g) {
  int n = kp->kernel->values.len;
  char *mark = ARENA_ARRAY(a, char, n);
  for (int i = 0; i < g->roots.len; i++)
    collect(a, kp, g, g->roots.items[i], mark, 1);
  for (int i = 0; i < g->epilogue.len; i++)
    collect(a, kp, g, g->epilogue.items[i], mark, 1);
  for (int i = 0; i < n; i++) {
    Value *v = kp->kernel->values.items[i];
    if (mark[i] && v->op != IR_INPUT && (!kp->stored[i] || kp->group_of[i] == g->id))
      vec_push(a, &g->members, v);
  }
  if (g->reads.len > 1) /* qsort(NULL, 0, ...) is undefined */
    qsort(g->reads.items, (size_t)g->reads.len, sizeof(void *), by_id);
}

/* Stored values live in the first output that holds them, else in a
 * workspace slot; inputs are their own home. */
static void assign_homes(Arena *a, KernelPlan *kp) {
  Kernel *k = kp->kernel;
  for (int i = 0; i < k->ninputs; i++)
    kp->home[k->inputs[i].value->id] = (Home){HOME_INPUT, i};
  for (int i = k->noutputs - 1; i >= 0; i--) {
    Value *v = k->outputs[i].value;
    if (v->op != IR_INPUT)
      kp->home[v->id] = (Home){HOME_OUTPUT, i};
  }
  for (int i = 0; i < k->values.len; i++) {
    if (kp->stored[i] && kp->home[i].kind == HOME_NONE) {
      kp->home[i] = (Home){HOME_WORKSPACE, kp->workspace.len};
      vec_push(a, &kp->workspace, k->values.items[i]);
    }
  }
}

/* A value some other value reads or an output is. */
static int still_needed(const Kernel *k, const Value *r, const PtrVec *casts) {
  for (int i = 0; i < k->noutputs; i++)
    if (k->outputs[i].value == r)
      return 1;
  for (int i = 0; i < k->values.len; i++) {
    const Value *v = k->values.items[i];
    for (int j = 0; j < v->nargs; j++) {
      if (v->args[j] != r)
        continue;
      int absorbed = 0;
      for (int c = 0; c < casts->len; c++)
        absorbed |= casts->items[c] == v;
      if (!absorbed)
        return 1;
    }
  }
  return 0;
}

/* A cast that rounds a reduction for its output is stored by the reduce
 * group itself, from its accumulator: no launch for the cast.  The
 * reduction then stays in registers unless something else reads it. */
static void absorb_rounding(Arena *a, KernelPlan *kp) {
  PtrVec keep = {0};
  for (int i = 0; i < kp->groups.len; i++) {
    Group *l = kp->groups.items[i];
    Group *g = l->kind == GROUP_LOOP ? rounded_reduce(kp, l) : NULL;
    if (!g) {
      vec_push(a, &keep, l);
      continue;
    }
    for (int j = 0; j < l->roots.len; j++)
      vec_push(a, &g->roots, l->roots.items[j]);
  }
  kp->groups = keep;
  for (int i = 0; i < kp->groups.len; i++) {
    Group *g = kp->groups.items[i];
    if (g->kind != GROUP_REDUCE || g->roots.len < 2 || still_needed(kp->kernel, g->reduce, &g->roots))
      continue;
    kp->stored[g->reduce->id] = 0; /* the accumulator holds it */
    kp->group_of[g->reduce->id] = -1;
    memmove(g->roots.items, g->roots.items + 1, sizeof(void *) * (size_t)--g->roots.len);
  }
}

/* A loop group of one element computed from full reductions (a scale
 * from an absolute maximum, a loss divided by a count) is computed and
 * written by the thread that writes the latest of those reductions, in
 * that group's last stage: no launch of its own (Group.epilogue).  On an
 * H200 the per-tensor fp8 quantization's scale was 2.5 us of its four
 * launches (bench/NOTES.md, issue 49). */
static void absorb_epilogues(Arena *a, KernelPlan *kp) {
  PtrVec keep = {0};
  for (int i = 0; i < kp->groups.len; i++) {
    Group *l = kp->groups.items[i];
    Group *g = epilogue_host(a, kp, l);
    if (!g) {
      vec_push(a, &keep, l);
      continue;
    }
    for (int j = 0; j < l->roots.len; j++) {
      vec_push(a, &g->epilogue, l->roots.items[j]);
      ((Value *)l->roots.items[j])->aux = g;
    }
  }
  kp->groups = keep;
}

static KernelPlan *plan_kernel(Arena *a, Kernel *k, int opt_level, Buf *why, int sums_apart) {
  KernelPlan *kp = ARENA_NEW(a, KernelPlan);
  int n = k->values.len, gathers = 0;
  kp->kernel = k;
  kp->sums_apart = sums_apart;
  kp->stored = ARENA_ARRAY(a, char, n);
  kp->home = ARENA_ARRAY(a, Home, n);
  kp->group_of = ARENA_ARRAY(a, int, n);
  for (int i = 0; i < n; i++) {
    Value *v = k->values.items[i];
    kp->group_of[i] = -1;
    kp->stored[i] = (char)is_stored_at(opt_level, v);
    kp->has_reduce |= v->op == IR_REDUCE;
    gathers |= v->op == IR_TAKE;
  }
  make_stored_groups(a, kp);
  make_output_groups(a, kp, opt_level);
  if (opt_level >= 1) { /* H9: stitch fusion (stitch.c) */
    stitch_groups(a, kp, why);
    absorb_rounding(a, kp);
    absorb_epilogues(a, kp);
  }
  sort_groups(kp, opt_level);
  for (int i = 0; i < kp->groups.len; i++)
    collect_members(a, kp, kp->groups.items[i]);
  if (opt_level >= 1)
    stitch_order_groups(a, kp);
  assign_homes(a, kp);
  kp->in_place_ok = !kp->has_reduce && !gathers; /* a gather reads other elements */
  return kp;
}

/* Output `out` may be the very buffer of input `in` (same dtype and
 * layout, checked by the caller) when the kernel is elementwise and every
 * other launch that reads the input runs before the one that writes the
 * output: that one reads each element only where it writes it. */
int fuse_in_place_ok(const KernelPlan *kp, int out, int in) {
  const Kernel *k = kp->kernel;
  if (!kp->in_place_ok)
    return 0;
  int writer = kp->group_of[k->outputs[out].value->id];
  const Value *input = k->inputs[in].value;
  for (int i = 0; i < kp->groups.len; i++) {
    const Group *g = kp->groups.items[i];
    if (g->id > writer && vec_contains(&g->reads, input))
      return 0;
  }
  return 1;
}

/* The row stitch of kp that takes column sums (a norm's backward), or -1. */
static int columns_group(const KernelPlan *kp) {
  for (int i = 0; i < kp->groups.len; i++) {
    const Group *g = kp->groups.items[i];
    if (g->kind == GROUP_STITCH && g->stitch->columns.len)
      return i;
  }
  return -1;
}

/* Where a row stitch takes column sums, the plan without them: its
 * kernel a copy of k under another name, so that its kernels and
 * launcher are its own (the values are k's).  Long rows run it: a block
 * then streams each row and adds it to its partial row of the sums in
 * memory, and a row as long as 65536 moved its partials' bytes again
 * (layernorm bf16 1024 x 65536 at 5 times the two groups' time, H100,
 * bench/NOTES.md). */
static void plan_apart(Arena *a, KernelPlan *kp, int opt_level) {
  kp->apart_group = columns_group(kp);
  if (kp->apart_group < 0)
    return;
  Kernel *copy = ARENA_NEW(a, Kernel);
  *copy = *kp->kernel;
  copy->name = arena_printf(a, "%s_apart", kp->kernel->name);
  Buf scratch; /* its fusion's reasons are the main plan's but the column sums */
  buf_init(&scratch, a);
  kp->apart = plan_kernel(a, copy, opt_level, &scratch, 1);
}

/* Does group g write an output of kp's kernel over its whole domain (a
 * batch norm's y)? */
static int writes_domain(const KernelPlan *kp, const Group *g) {
  const Kernel *k = kp->kernel;
  int map[TECC_MAX_RANK];
  for (int i = 0; i < g->domain.rank; i++)
    map[i] = i;
  for (int o = 0; o < k->noutputs; o++) {
    const Value *v = k->outputs[o].value;
    if (kp->group_of[v->id] == g->id && v->shape.rank == g->domain.rank &&
        covers_domain(&g->domain, g->stitch->axes, &v->shape, map, 0))
      return 1;
  }
  return 0;
}

/* The row stitch of kp over rows of several runs that writes along them, or -1. */
static int runs_group(const KernelPlan *kp) {
  for (int i = 0; i < kp->groups.len; i++) {
    const Group *g = kp->groups.items[i];
    if (stitch_row_runs(g) && writes_domain(kp, g))
      return i;
  }
  return -1;
}

/* Where split.c split a kernel's reductions, the kernel as it was before
 * may fuse into a row stitch over rows of several runs (stitch_row_runs())
 * that writes along them: a batch norm's y = (x - mean(x, 0, 2)) * ...,
 * one block a channel of B runs, x read once, where the split plan reads
 * it twice (its rows' moments, then the normalization).  On an H200
 * (bench/NOTES.md, issue 48; kernel time) batchnorm f32 32 x 2048 x 392
 * went from 79.2 to 62.4 us, bf16 41.4 -> 36.6, f32 32 x 512 x 784 41.1
 * -> 36.0; but channels longer than the registers hold (32 x 64 x 12544,
 * the stream variant) took 35-59% longer, as did the statistics alone
 * (mean and var, nothing written along the row: the split plan reads x
 * once too), 17-59%.  So that plan is the main one, for rows its
 * register variants hold (schedule.c, runs_variants()), and the split
 * one its `apart`, for the other calls (emit_cu.c, emit_apart_call()).
 * Not where either plan has an apart plan of its own (column sums). */
static void plan_unsplit(Arena *a, FusionPlan *p, Module *m, int i, int opt_level, Buf *why) {
  Kernel *k = m->kernels[i];
  if (!k->unsplit || p->kernels[i]->apart)
    return;
  Buf reasons; /* --explain's, where this plan is taken */
  buf_init(&reasons, a);
  KernelPlan *u = plan_kernel(a, k->unsplit, opt_level, &reasons, 0);
  int g = runs_group(u);
  if (g < 0 || columns_group(u) >= 0)
    return;
  buf_printf(why, "%s: the kernel before the split fuses into rows of several runs written along them: its plan is "
                  "the main one, the split one (above) runs the rows it does not hold\n%s",
             k->name, buf_cstr(&reasons));
  Kernel *split = ARENA_NEW(a, Kernel);
  *split = *k;
  split->name = arena_printf(a, "%s_apart", k->name);
  p->kernels[i]->kernel = split;
  u->apart = p->kernels[i];
  u->apart_group = g;
  u->apart_split = 1;
  p->kernels[i] = u;
  m->kernels[i] = k->unsplit;
}

static const char *explain(Arena *a, FusionPlan *p, Module *m, Buf *why) {
  Buf b;
  buf_init(&b, a);
  buf_puts(&b, buf_cstr(why));
  for (int i = 0; i < p->nkernels; i++) {
    KernelPlan *kp = p->kernels[i];
    for (int j = 0; j < kp->groups.len; j++) {
      Group *g = kp->groups.items[j];
      buf_printf(&b, "%s: group %d (%s, %s): %d value(s) fused, %d read from memory\n",
                 m->kernels[i]->name, g->id, group_kind_name(g->kind),
                 schedule_name(g->sched), g->members.len, g->reads.len);
    }
  }
  return buf_cstr(&b);
}

FusionPlan *fuse_module(Compilation *c, Module *m, int opt_level) {
  Arena *a = c->arena;
  FusionPlan *p = ARENA_NEW(a, FusionPlan);
  p->opt_level = opt_level;
  p->nkernels = m->nkernels;
  p->kernels = ARENA_ARRAY(a, KernelPlan *, m->nkernels);
  Buf why;
  buf_init(&why, a);
  for (int i = 0; i < m->nkernels; i++) {
    p->kernels[i] = plan_kernel(a, m->kernels[i], opt_level, &why, 0);
    plan_apart(a, p->kernels[i], opt_level);
    plan_unsplit(a, p, m, i, opt_level, &why);
  }
  p->explanation = explain(a, p, m, &why);
  return p;
}
