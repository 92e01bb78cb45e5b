/* stitch_kernel.c — the shape of a stitch group's kernels (stitch_kernel.h). */
#include "stitch_kernel.h"

#include <stddef.h>

int stitch_has_storage(const GroupSchedule *s, Storage st) {
  for (int i = 0; i < s->nvariants; i++)
    if (s->variants[i].storage == st)
      return 1;
  return 0;
}

const Variant *stitch_fit_variant(const GroupSchedule *s, FitRule fit) {
  for (int i = 0; i < s->nvariants; i++)
    if (s->variants[i].fit == fit)
      return &s->variants[i];
  return NULL;
}

int stitch_has_fit(const GroupSchedule *s, FitRule fit) {
  return stitch_fit_variant(s, fit) != NULL;
}

/* A warp variant that loads its next rows ahead (prefetch; with literal
 * sizes its block may be fixed, FIT_NONE, not FIT_SHORT_ROWS), one whose
 * WHOLE instance loads early, ... */
int stitch_any_variant(const GroupSchedule *s, size_t field) {
  for (int i = 0; i < s->nvariants; i++)
    if (*(const int *)((const char *)&s->variants[i] + field))
      return 1;
  return 0;
}

/* Some variant of the kernel (the register one, `reg`, or the stream one)
 * has a WHOLE instance. */
static int whole_variant(const GroupSchedule *s, int reg) {
  for (int i = 0; i < s->nvariants; i++)
    if (s->variants[i].whole && (s->variants[i].storage != STORE_STREAM) == reg)
      return 1;
  return 0;
}

/* Does v, over the domain, read an operand along the row of wider
 * elements than the row's (`seen`: the values already visited)? */
static int reads_wider_along(const StitchKernel *sk, const Value *v, PtrVec *seen) {
  if (vec_contains(&sk->g->plan->along, v))
    return dtype_size(v->dtype) > sk->g->plan->pack_bytes;
  if (vec_contains(seen, v) || !vec_contains(&sk->g->members, v))
    return 0;
  vec_push(sk->a, seen, (void *)v);
  for (int a = 0; a < v->nargs; a++)
    if (reads_wider_along(sk, v->args[a], seen))
      return 1;
  return 0;
}

/* Outputs along the row that need no reduction, written in the register
 * kernel's first pass by its PACKS instance, so that their stores spread
 * over the row's all-reduce waits, not all at the row's end.  On an H200
 * add_rmsnorm f32 4096 x 16384 gained 2.1 points of copy (94.7 -> 96.8),
 * the other shapes -0.4 to +0.9; on an H100 all within 0.5
 * (bench/NOTES.md, issue 12).  The other instances store them with the
 * last pass still: their stores of a row that is not whole packs (16-bit:
 * tecc::store_unaligned, with its lane mask) took registers the first
 * pass lacks (bf16 spills of 32 bytes grew to 152).  Only outputs at the
 * domain's own offsets (the linear index of contiguous rows).
 *
 * Where such an output reads operands along the row of wider elements
 * than the row's, the WHOLE instance keeps the first pass's item guards
 * (first_guards): without them ptxas spilled 92-124 bytes of
 * online_sums_bf16's warp instances (its column softmax's max and sum,
 * f32, two packs of each beside a pack of the bf16 row), with them none
 * (51 registers); t_softmax's, all f32, spilled 16 bytes with them and
 * none without (sm_90, issue 45). */
static void early_outputs(StitchKernel *sk) {
  const Group *g = sk->g;
  if (!sk->reg || !stitch_takes_packs(sk) || stitch_split_kernel(sk) || !reduce_linear_index(&g->domain, sk->st->axes))
    return;
  int map[TECC_MAX_RANK];
  identity_map(map, g->domain.rank);
  PtrVec seen = {0};
  for (int i = 0; i < g->roots.len; i++) {
    Value *v = g->roots.items[i];
    if (stitch_is_column(g, v) || !varies_along(&v->shape, map, sk->st->axes) || v->id >= sk->st->nvalues ||
        sk->st->level[v->id] != 0 || !covers_domain(&g->domain, sk->st->axes, &v->shape, map, 0))
      continue;
    vec_push(sk->a, &sk->early, v);
    sk->first_guards |= reads_wider_along(sk, v, &seen);
  }
}

/* The stream kernel's last pass keeps its item guards in the WHOLE
 * instance where it writes this many outputs along rows of elements
 * narrower than 8 bytes: online_sums' three (f32, at ITEMS 3) spilled 8
 * bytes without them, while seed452's (tests/stitch/regress.te, f64)
 * spilled with them and not without (ptxas -v, sm_90, issue 45); the
 * suite's rows write two at most. */
enum { STREAM_GUARDED_OUTPUTS = 3 };

static int last_guards(const StitchKernel *sk) {
  return !sk->reg && sk->g->plan->row_outputs >= STREAM_GUARDED_OUTPUTS && sk->g->plan->pack_bytes < 8;
}

StitchKernel stitch_kernel(Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names, int reg) {
  StitchKernel sk = {0};
  const GroupSchedule *s = g->schedule;
  sk.a = a;
  sk.k = k;
  sk.kp = kp;
  sk.g = g;
  sk.st = g->stitch;
  sk.sched = s;
  sk.names = names;
  sk.reg = reg;
  sk.row = g->sched == SCHED_ROW;
  sk.cluster = reg && stitch_has_storage(s, STORE_CLUSTER);
  sk.vec = sk.row && g->plan->row_packs;                       /* the linear index: t_o * t_red + t_r */
  sk.cvec = stitch_column_packs(g) && (stitch_most_vec(s) > 1 || stitch_has_fit(s, FIT_COLUMN_SPLIT)); /* ... t_r * t_outer + t_o */
  sk.rows = reg && sk.vec && stitch_thread_rows(g);
  sk.prefetch = sk.rows && stitch_any_variant(s, offsetof(Variant, prefetch));
  sk.roomy = reg && sk.row && stitch_any_variant(s, offsetof(Variant, roomy));
  sk.solo = reg && sk.row && stitch_any_variant(s, offsetof(Variant, solo));
  sk.lanes = reg && sk.row && !sk.cvec && stitch_has_fit(s, FIT_SHORT_ROWS);
  sk.whole = sk.vec && whole_variant(s, reg);
  sk.split = sk.cvec && stitch_has_fit(s, FIT_COLUMN_SPLIT);
  sk.shared = reg && sk.vec && stitch_any_variant(s, offsetof(Variant, shared_bytes));
  sk.ahead = reg && (sk.vec || sk.cvec) && stitch_any_variant(s, offsetof(Variant, ahead));
  early_outputs(&sk);
  sk.last_guards = last_guards(&sk);
  sk.quads = stitch_quads(&sk);
  return sk;
}

StitchKernel stitch_item_kernel(Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names) {
  const int row = g->sched == SCHED_ROW;
  StitchKernel sk = {0};
  sk.a = a;
  sk.k = k;
  sk.kp = kp;
  sk.g = g;
  sk.st = g->stitch;
  sk.sched = g->schedule;
  sk.names = names;
  sk.item = 1;
  sk.reg = row;
  sk.row = row;
  sk.vec = row; /* the lag kernel runs where the rows are whole aligned packs */
  return sk;
}

int stitch_quad_dtype(DType t) {
  return dtype_size(t) == 1 && dtype_is_storage(t);
}

int stitch_quads(const StitchKernel *sk) {
  int vec = stitch_most_vec(sk->sched);
  if (!sk->reg || !sk->vec || sk->shared || !stitch_takes_packs(sk) || (vec != 8 && vec != 16))
    return 0;
  for (int i = 0; i < sk->sched->nvariants; i++)
    if (sk->sched->variants[i].vec % 4 != 0)
      return 0;
  const PtrVec *held = &sk->g->plan->held;
  for (int i = 0; i < held->len; i++) {
    const Value *v = held->items[i];
    if (stitch_quad_dtype(v->dtype))
      return 1;
  }
  return 0;
}

const char *stitch_kernel_name(const StitchKernel *sk, int reg) {
  return arena_printf(sk->a, "tecc_%s_g%d_%s", sk->k->name, sk->g->id, sk->item ? "item" : reg ? "reg" : "stream");
}

/* t_packs, rows moved as whole packs, aligned, is a template parameter
 * PACKS: that instance has no per-element row-end checks (on an H100 the
 * norms gained 0.6 to 4.7 points of copy, bench/NOTES.md).  Rows that
 * read an operand at a row offset of their own (an attention mask [S, D]
 * under [B, S, D]) take it too: masked softmax bf16 +3.7 on an H100 and
 * +8.3 on an H200, f32 -0.5 and +2.5 (the sixteenth device session; an
 * earlier code lost f32 6.5 with it).  Columns keep it an argument (a
 * PACKS instance lost softmax(x, 0) 2.7 and 10.6 points at 16384 x 4096). */
int stitch_takes_packs(const StitchKernel *sk) {
  return sk->vec;
}

/* Rows over several axes ([B, G, C, S] reduced over C and S): an element
 * at a position along one of them (a group-norm's w[G, C, 1]) splits the
 * row index into digits, a division an axis.  Where the innermost axis is
 * whole packs too (its extent a multiple of VEC, which the launch adds to
 * PACKS' condition) a pack never straddles two of its rows: the PACKS
 * instance divides the pack's first index once and adds the element's
 * place to the last digit (emit_stitch.c, emit_decompose()).  The
 * innermost reduced axis, or -1 where the row is one axis. */
int stitch_digit_packs(const StitchKernel *sk) {
  if (!sk->vec || !sk->row)
    return -1;
  int axes[TECC_MAX_RANK], n = shape_axes(&sk->g->domain, sk->st->axes, axes); /* those of extent > 1 */
  return n >= 2 ? axes[n - 1] : -1;
}

/* An instance for whole row groups of whole rows (WHOLE): where it takes
 * PACKS. */
int stitch_whole_instance(const StitchKernel *sk) {
  return sk->whole && stitch_takes_packs(sk);
}

/* The stream kernel of a group with a column split: PHASE 0 reads all
 * rows, 1 a chunk of them for its partial results, 2 folds the chunks'
 * partials and writes the chunk. */
int stitch_split_kernel(const StitchKernel *sk) {
  return sk->split && !sk->reg;
}

/* A row operand the register kernel loads early (the plan's). */
int stitch_early_kernel(const StitchKernel *sk) {
  return sk->reg && !sk->item && stitch_any_variant(sk->sched, offsetof(Variant, early)) && stitch_takes_packs(sk) &&
         sk->g->plan->early.len > 0;
}

/* A variant's blocks are the warps its rows need, bound to NARROW_BLOCKS
 * an SM (schedule.c). */
int stitch_narrow_kernel(const StitchKernel *sk) {
  for (int i = 0; sk->reg && !sk->item && i < sk->sched->nvariants; i++)
    if (variant_narrow(&sk->sched->variants[i]))
      return 1;
  return 0;
}

/* The stream kernel where its variant says so, the register kernel where
 * one of its variants does (the launches are written for the register
 * kernel's shape). */
int stitch_variant_whole_instance(const StitchKernel *sk, const Variant *v) {
  return v->storage == STORE_STREAM ? v->whole && stitch_takes_packs(sk) : stitch_whole_instance(sk);
}

int stitch_launches_whole(const StitchKernel *sk, const Variant *v) {
  return v->whole && stitch_variant_whole_instance(sk, v);
}

/* v over the whole domain (not a broadcast operand), read by more than one
 * of the stream kernel's passes (the plan's), held in words of 4 or 8
 * bytes (16-bit values two to a word), in a kernel of rows in packs
 * (without a column split) whose stream variant keeps.  In the KEEP
 * instance, which the host launches where the rows of a wave fill more
 * than half of L2 (tecc::keep_items), the later passes read the row's
 * first items, as many as fit, from shared memory rather than HBM: the
 * ones a backward pass reads last, which L2 is the least likely to still
 * hold (emit_stitch.c, open_chunks()). */
int stitch_kept_bytes(const StitchKernel *sk, const Value *v) {
  const Variant *last = &sk->sched->variants[sk->sched->nvariants - 1];
  uint32_t passes = sk->g->plan->stream.read_in[v->id];
  int n = dtype_is_16bit(v->dtype) ? 2 : dtype_size(cu_compute_dtype(v->dtype));
  if (!sk->vec || !last->keeps || __builtin_popcount(passes) < 2 || !vec_contains(&sk->g->plan->held, v))
    return 0;
  return (n == 2 || n == 4 || n == 8) && last->vec * n % 16 == 0 ? n : 0;
}

int stitch_keep_bytes(const StitchKernel *sk) {
  const PtrVec *held = &sk->g->plan->held;
  int sum = 0;
  for (int i = 0; i < held->len; i++)
    sum += stitch_kept_bytes(sk, held->items[i]);
  return sum;
}

const char *stitch_split_acc_type(const StitchKernel *sk) {
  return cu_compute_ctype(stitch_acc_dtype(sk->st->reduces.items[0]));
}

const char *stitch_column_acc_type(const StitchKernel *sk) {
  return cu_compute_ctype(stitch_acc_dtype(sk->st->columns.items[0]));
}

const char *stitch_columns_name(const StitchKernel *sk) {
  return arena_printf(sk->a, "tecc_%s_g%d_columns", sk->k->name, sk->g->id);
}

int column_homes(const Kernel *k, const KernelPlan *kp, const Value *c) {
  int n = kp->home[c->id].kind == HOME_WORKSPACE;
  for (int o = 0; o < k->noutputs; o++)
    n += k->outputs[o].value == c;
  return n;
}

const char *column_home(Arena *a, const Kernel *k, const KernelPlan *kp, const EntryNames *names, const Value *c, int h) {
  for (int o = 0; o < k->noutputs; o++)
    if (k->outputs[o].value == c && h-- == 0)
      return names->outputs[o];
  if (kp->home[c->id].kind == HOME_WORKSPACE && h == 0)
    return home_pointer(a, kp, names, c);
  internal_error("stitch: column sum %%%d has no home %d", c->id, h);
}
