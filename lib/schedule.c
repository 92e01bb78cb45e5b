/* schedule.c — tile selection: a schedule record per fused group
 * (schedule.h), and their text for --emit=plan (whose words for a
 * variant's condition --emit=json reuses, emit_dumps.c).
 *
 * The numbers come from a few budgets, named below: 256-thread blocks for
 * elementwise work (seed 004), 2048 resident threads per SM for the grid,
 * 32 registers per thread for the values a stitch kernel holds per
 * element, 1024 threads per block. */
#include "schedule.h"
#include "footprint.h"
#include "stitch.h"
#include "stitch_plan.h"

#include <stdlib.h>
#include <string.h>

enum {
  ELEMENTWISE_THREADS = 256, /* seed 004: a block of 256, a pack per thread */
  SLOW_MATH_BYTES = 4,       /* elementwise: a software math function per this many bytes or fewer: 2 packs a thread */
  GATHER_STEPS = 2,          /* elementwise: packs a thread loads first where a gathered load waits on its index's */
  REUSE = 16,                /* elementwise: positions a thread takes along an axis its software math
                                does not vary along (reuse_axis()) */
  SM_THREADS = 2048,         /* resident threads per SM (sm_70 .. sm_90) */
  MAX_THREADS = 1024,        /* per block */
  HELD_REGISTERS = 32,       /* per thread for held row elements */
  SHORT_ROW_BLOCK = 128,     /* threads of a block of several short rows */
  WARP_ROWS = 2,             /* short rows a thread holds at once, within the budget */
  BLOCK_ROW_THREADS = 128,   /* the most threads of a row at ITEMS 4 when a row may hold more */
  REDUCE_BLOCK = 256,        /* threads of a block of a plain reduction */
  STREAM_ITEMS = 4,          /* packs per thread per chunk of a streamed row */
  STREAM_COLUMN_VEC = 4,     /* columns a thread of a streamed column stitch kernel, at most */
  SPLIT_THREADS = 512,       /* a block of a column split */
  SPLIT_SM_BLOCKS = 2,       /* a column split's chunks: for 2 blocks an SM (tecc::column_chunks) */
  SPLIT_ROWS = 512,          /* a column split's chunk: at least 512 rows */
  FULL_ITEMS = 4,            /* full reductions: packs in flight per thread (64 bytes) */
  ROW_ITEMS = 4,             /* row reductions: packs in flight per thread and step */
  ROW_LONG_ITEMS = 8,        /* ... where a row is ROW_LONG_PACKS packs or more and needs no split */
  ROW_LONG_PACKS = 256,
  ROW_LONG_ACC_BYTES = 48,   /* ... and its VEC accumulators take 48 bytes or fewer (bf16 argmax's
                                96 spilled 64 bytes at ITEMS 8), and an item is one pack (two bf16
                                tensors' 16 packs spilled 196 bytes at ITEMS 8: sum(f32(a) * f32(b))) */
  COLUMN_ITEMS = 4,          /* column reductions: rows in flight per thread */
  ELEMENT_ITEMS = 16,        /* row and column stitches element by element (VEC 1: rows or columns
                                that are not contiguous): elements a thread holds at most; each
                                holds its address beside its value, and at the budget's 32, rank5's
                                and rank8's spilled 56-136 bytes (issue 45) */
  COLUMN_TILE = 64,          /* column reductions: columns per block */
  FULL_SM_THREADS = 1024,    /* full reductions: 4 blocks of 256 per SM, <= 64 registers */
  FINAL_THREADS = 512,       /* the block that combines per-block partials */
  ONE_READ_THREADS = 512,    /* rows read once (stream, or held): two blocks an SM */
  ONE_READ_HELD_16 = 256,    /* ... and 16-bit rows held in registers (one_read_stream) */
  PACK_BYTES = 16,
  STATIC_SHARED_BYTES = 48 * 1024, /* per block, declared in the kernel */
  RUNS_MAX_ITEMS = 8,        /* rows of several runs in the plan before a split (runs_variants()) */
  SHARED_MIN_BYTES = 128     /* a thread's held bytes of 16-bit rows (ITEMS 8) from which those
                                that are not whole packs are held in shared memory (shared_rows()) */
};

Target target_of(const char *arch) {
  Target t = {arch ? arch : "sm_90", 90, 8, 0};
  if (arch && strncmp(arch, "sm_", 3) == 0)
    t.sm = atoi(arch + 3);
  t.max_cluster = t.sm >= 90 ? 8 : 1; /* 8: the portable cluster size */
  t.l2_bytes = (int64_t)(t.sm >= 90 ? 50 : t.sm == 80 ? 40 : 6) << 20; /* others: the smallest of recent parts */
  return t;
}

const char *class_name(SchedClass c) {
  static const char *const names[] = {"elementwise", "row", "column", "full", "stitch-row", "stitch-column"};
  return names[c];
}

const char *storage_name(Storage s) {
  static const char *const names[] = {"none", "registers", "cluster", "stream"};
  return names[s];
}

const char *when_name(When w) {
  static const char *const names[] = {"always",   "aligned",       "len_at_most", "row_at_most",  "row_packs",
                                      "row_narrower", "row_fits", "column_groups", "clusters", "column_split",
                                      "runs_half"};
  _Static_assert(sizeof names / sizeof names[0] == WHEN_RUNS_HALF + 1, "a name for every When");
  return names[w];
}

const char *fit_name(FitRule f) {
  static const char *const names[] = {"none", "row", "short_rows", "cluster", "columns", "column_split"};
  return names[f];
}

int when_uses_limit(When w) {
  return w == WHEN_LEN_AT_MOST || w == WHEN_ROW_AT_MOST || w == WHEN_ROW_PACKS || w == WHEN_ROW_NARROWER ||
         w == WHEN_CLUSTERS || w == WHEN_RUNS_HALF;
}

/* ---- sizes known at compile time --------------------------------------- */

/* The product of the domain's non-1 dims in `mask`, or -1 when one is a
 * size variable; INT64_MAX past that (literal dims may multiply past
 * int64: such a tensor can never be passed, and every use here only asks
 * whether the count is small). */
static int64_t literal_count(const Shape *s, uint32_t mask) {
  int64_t n = 1;
  int saturated = 0;
  for (int i = 0; i < s->rank; i++) {
    if (!((mask >> i) & 1u) || dim_is_one(s, i))
      continue;
    if (s->d[i].var >= 0)
      return -1;
    if (!saturated && __builtin_mul_overflow(n, s->d[i].size, &n))
      saturated = 1;
  }
  return saturated ? INT64_MAX : n;
}

static int pow2_at_least(int64_t x, int lo, int hi) {
  int p = lo;
  while (p < hi && p < x)
    p *= 2;
  return p;
}

static int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/* ---- classes and variants ---------------------------------------------- */

static SchedClass class_of(const Group *g) {
  if (g->kind == GROUP_LOOP)
    return CLASS_ELEMENTWISE;
  if (g->kind == GROUP_STITCH)
    return g->sched == SCHED_ROW ? CLASS_STITCH_ROW : CLASS_STITCH_COLUMN;
  if (literal_count(&g->domain, ~g->reduce->axes) == 1)
    return CLASS_FULL;
  return g->sched == SCHED_ROW ? CLASS_ROW : CLASS_COLUMN;
}

/* A new, zeroed variant at `i`, those from i on one later. */
static Variant *insert_variant(Arena *a, GroupSchedule *s, int i) {
  Variant *grown = ARENA_ARRAY(a, Variant, s->nvariants + 1);
  if (i > 0)
    memcpy(grown, s->variants, sizeof(Variant) * (size_t)i);
  if (s->nvariants > i)
    memcpy(grown + i + 1, s->variants + i, sizeof(Variant) * (size_t)(s->nvariants - i));
  s->variants = grown;
  s->nvariants++;
  return &grown[i];
}

static Variant *add(Arena *a, GroupSchedule *s, const char *name, When when, Storage st) {
  Variant *v = insert_variant(a, s, s->nvariants);
  v->name = name;
  v->when = when;
  v->storage = st;
  v->vec = v->items = v->rows = v->threads_y = v->cluster = v->split = 1;
  v->sm_threads = SM_THREADS;
  return v;
}

/* A pack per thread, or two where the loop computes a software math
 * function (erf, sin, ...) for every SLOW_MATH_BYTES bytes it moves or
 * fewer: such a loop waits on instructions, not memory, and half the
 * threads pay half the index math and block starts.  On an H100,
 * gelu(x + b) in bf16 (an erf per 4 bytes) went from 85.6 to 90.6% of
 * copy at 16384 x 4096 and from 81-83 to 85-88 at the other shapes, where
 * swiglu, chain5 (a sin per 12 bytes) and the casts lost about a point
 * with two packs (bench/NOTES.md, issue 11). */
/* The axis a thread of a loop whose software math is computed from
 * positions alone (a rotary embedding's sin and cos of angles that vary
 * along the sequence and the head dimension only) takes REUSE positions
 * along, computing that math once for them: the innermost axis but the
 * domain's last along which none of it varies; -1 where there is none. */
static int reuse_axis(const Group *g, const Footprint *f) {
  if (f->slow_math == 0 || (f->slow_axes & AXES_MEMORY))
    return -1;
  int inner = -1;
  for (int i = g->domain.rank - 1; i >= 0 && inner < 0; i--)
    if (!dim_is_one(&g->domain, i))
      inner = i;
  for (int i = inner - 1; i >= 0; i--)
    if (!dim_is_one(&g->domain, i) && !((f->slow_axes >> i) & 1u))
      return i;
  return -1;
}

static void elementwise(Arena *a, GroupSchedule *s, const Footprint *f, const Group *g) {
  int vec = f->pack_bytes ? PACK_BYTES / f->pack_bytes : 1;
  int slow = f->slow_math > 0 && f->slow_math * SLOW_MATH_BYTES >= f->own_bytes;
  s->reuse_axis = slow ? reuse_axis(g, f) : -1;
  s->reuse = s->reuse_axis >= 0 ? REUSE : 1;
  /* Where an element's index splits into axes, a pack must not straddle
   * the inner one: rows of 196 bf16 (a 14 x 14 feature map) are not whole
   * 16-byte packs and ran one element a thread.  Half packs (8 bytes) fit
   * them: on an H200 a batch norm's normalization of bf16 [16, 1024, 196]
   * took 11.4 us where the scalar loop took 18.6 (bench/NOTES.md).  Not
   * the loops that reuse math along an axis (a rotary embedding's from
   * positions: its VEC 4 instance spilled 4 bytes). */
  int half = vec >= 4 && f->split_index && s->reuse_axis < 0;
  /* A gathered load waits on the load of its index (an embedding's row at
   * ids[n]): a pack a thread has two loads in flight one after the other.
   * A thread loads GATHER_STEPS packs, each index and then each row,
   * before it computes and stores any.  On an H200, the embedding of
   * 8192 and 32768 rows of a 128256 x 4096 bf16 table went from 88.3 and
   * 90.1% of the ceiling to 91.9 and 96.0 (four steps: the same; bench/NOTES.md,
   * issue 47). */
  s->steps = f->gathers && s->reuse_axis < 0 ? GATHER_STEPS : 1;
  for (int w = vec; w > 1 && w >= (half ? vec / 2 : vec); w /= 2) {
    Variant *v = add(a, s, w == vec ? "packed" : "half", WHEN_ALIGNED, STORE_NONE);
    v->vec = w;
    v->threads_x = ELEMENTWISE_THREADS;
    if (s->steps > 1)
      v->items = s->steps;
    else if (slow && s->reuse_axis < 0)
      v->items = 2;
  }
  Variant *scalar = add(a, s, "scalar", WHEN_ALWAYS, STORE_NONE);
  scalar->threads_x = ELEMENTWISE_THREADS;
  if (s->steps > 1) /* the same kernel at VEC 1: its steps of one element */
    scalar->items = s->steps;
}

/* A full reduction (seed 000): 4 blocks of 256 threads per SM, each
 * thread with FULL_ITEMS 16-byte packs in flight and VEC independent
 * accumulators; each block leaves one partial, and one block combines
 * them in block order.  The grid depends only on the sizes and the SM
 * count, so the sum is the same, bit for bit, on every run. */
static void full_reduction(Arena *a, GroupSchedule *s, const Footprint *f) {
  Variant *v = add(a, s, "full", WHEN_ALWAYS, STORE_REGISTERS);
  v->vec = f->pack_bytes ? PACK_BYTES / f->pack_bytes : 1;
  v->items = FULL_ITEMS;
  v->threads_x = REDUCE_BLOCK;
  v->sm_threads = FULL_SM_THREADS;
  v->split = SPLIT_PER_BLOCK;
}

static int clamp(int x, int lo, int hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* Plain reductions keep their partials in registers; a second, ordered
 * stage combines the chunks of a split (deterministic).  A row's threads
 * take ITEMS packs of VEC elements a step (16-byte loads where the row is
 * whole packs and the packed tensors are aligned, else the same packs'
 * elements one by one: the same sums, bit for bit), element k into
 * accumulator k, at most REDUCE_BLOCK
 * threads a row.  On an H100 (bench/NOTES.md, issue 48) against one
 * element a step and a thread per element up to 1024: sum(x, -1) f32
 * 32768 x 1024 255 -> 48 us, 4096 x 16384 139 -> 91, 4096 x 11008 103 ->
 * 64; bf16 summed in f32 0.09-0.45x the time; argmax f32 0.06-0.59x.
 * Blocks of up to 1024 threads a row (one step each) took 15-50% longer
 * at rows of 11008-65536.  Rows of ROW_LONG_PACKS packs and more that
 * need no split take ITEMS 8 where 32-bit indices do (long_items): on an
 * H200 f32 32768 x 1024 40.2 -> 34.7 us, 16384 x 4096 76.8 -> 65.3, 4096
 * x 11008 52.9 -> 50.2, bf16 4096 x 11008 26.8 -> 22.2; at 256 (64 packs)
 * ITEMS 8 took 7-15% longer (61 registers: 4 blocks an SM, not 5) and
 * with a split 10-18% (a second wave of chunks).  A row takes from
 * MIN_ROW_LANES lanes (min_lanes), rows of up to 64 packs sharing a warp
 * as the stitch's warp variant's do, where a warp a row left two packs a
 * lane in flight: on an H100 (prog_ab, kernel time) sum f32 32768 x 256
 * 14.9 -> 13.4 us, 65536 x 128 16.6 -> 13.6; bf16 in f32 32768 x 256 9.0
 * -> 6.6, 65536 x 128 14.8 -> 6.7; amax bf16 65536 x 100 11.6 -> 6.5;
 * rows of 512 packs and more the same.  A column
 * block spans COLUMN_TILE columns (8 lanes of bf16 packs, 16 of f32, 32
 * of f64) and REDUCE_BLOCK / lanes rows.  Against 32 lanes of packs it
 * has four times the blocks along the columns, so a wide matrix fills the
 * GPU without a split, and a narrow one's split leaves fewer partials.  On
 * an H100, % of copy (bench/NOTES.md, issue 11): 1024 x 65536 bf16 78.9
 * -> 87.3, f32 93.9 -> 96.6; 65536 x 1024 bf16 78.3 -> 82.3, f32 92.5 ->
 * 93.8; 16384 x 4096 bf16 83.6 -> 81.8, f32 93.4 -> 93.4. */
/* The register bytes of one accumulator of reduction r: its compute
 * type (dtype_compute(): 8- and 16-bit values in 32 bits), a register at
 * least (a bool's too); an argmax or argmin keeps an int64 index beside
 * its value. */
static int accumulator_bytes(const Value *r) {
  int arg = r->rop == RED_ARGMAX || r->rop == RED_ARGMIN;
  int bytes = dtype_size(dtype_compute(arg ? r->args[0]->dtype : r->dtype));
  if (bytes < 4)
    bytes = 4;
  return arg ? bytes + 8 : bytes;
}

static void reduction(Arena *a, GroupSchedule *s, const Footprint *f, const Group *g) {
  if (s->cls == CLASS_COLUMN) { /* seed 003: threads along the columns, packed */
    Variant *v = add(a, s, "columns", WHEN_ALWAYS, STORE_REGISTERS);
    v->vec = f->pack_bytes ? PACK_BYTES / f->pack_bytes : 1;
    v->items = COLUMN_ITEMS;
    v->threads_x = clamp(COLUMN_TILE / v->vec, 8, 32);
    v->threads_y = REDUCE_BLOCK / v->threads_x;
    v->split = 0;
    return;
  }
  Variant *v = add(a, s, s->cls == CLASS_FULL ? "full" : "row", WHEN_ALWAYS, STORE_REGISTERS);
  v->vec = f->pack_bytes ? PACK_BYTES / f->pack_bytes : 1;
  v->items = ROW_ITEMS;
  v->long_items = f->pack_bytes && v->vec * accumulator_bytes(g->reduce) <= ROW_LONG_ACC_BYTES &&
                          v->vec * f->own_bytes <= PACK_BYTES
                      ? ROW_LONG_ITEMS
                      : 0;
  v->long_packs = ROW_LONG_PACKS;
  v->fit = FIT_ROW;
  v->threads_x = v->threads_y = 0;
  v->block = REDUCE_BLOCK;
  v->min_lanes = s->cls == CLASS_ROW ? MIN_ROW_LANES : 32;
  /* The next row ahead where the step reads nothing but packs of 4-byte
   * elements.  On an H100 (prog_ab, kernel time) sum f32 took 0.91-0.98x
   * the time (4096 x 11008 63.0 -> 58.7 us, 16384 x 4096 88.1 -> 85.7,
   * 32768 x 256 13.4 -> 12.4), mean f32 0.93-0.97x, sum of squares
   * 0.96-1.00x; bf16 sums in f32 1.00-1.04x and bf16 argmax 0.98-1.03x,
   * so 16-bit rows keep their loads in the step.  With a row's operands
   * beside the carried packs (a batch-norm backward's mean and scale a
   * channel) an instance spilled 48 bytes (ptxas -v). */
  v->prefetch = s->cls == CLASS_ROW && f->pack_bytes == 4 && !f->split_index;
  v->split = 0;
}

static Variant *row_variant(Arena *a, GroupSchedule *s, const char *name, int vec, int items, int sm_threads) {
  Variant *v = add(a, s, name, WHEN_ROW_AT_MOST, STORE_REGISTERS);
  v->vec = vec;
  v->items = items;
  v->limit = (int64_t)MAX_THREADS * items * vec;
  v->fit = FIT_ROW;
  v->threads_x = v->threads_y = 0;
  v->block = SHORT_ROW_BLOCK;
  v->index_bits = 32;
  v->sm_threads = sm_threads; /* 0: a block per row group */
  return v;
}

/* Rows in a cluster cost one read, but a cluster works on one row at a
 * time, one 1024-thread block an SM, and each level's cluster all-reduce
 * stalls it.  With more rows than the device holds clusters, they pay
 * where the stream kernel reads each row twice and the row has one level
 * (rmsnorm, add_rmsnorm: on an H100 at 1024 x 65536 f32 +9.3 and +21.6
 * points of copy over the stream, at 128 x 262144 rmsnorm f32 +11.4,
 * add_rmsnorm bf16 +9.7, the others -1.1 to +1.2); with two levels
 * (softmax, layernorm) they lost 4 to 12 but layernorm f32 at 1024 x
 * 65536 (+6.4), and where the stream reads each row once (card,
 * logsumexp, rowstats) 9 to 50 (bench/NOTES.md, issue 12). */
static int cluster_loops(const Group *g) {
  return g->stitch->nlevels == 1 && g->plan->stream_reads >= 2;
}

/* f32 rows of a mean and a variance that write along the row (layernorm,
 * group-norm) loop in clusters of two blocks too: on an H200
 * (bench/prog_ab.py, bench/NOTES.md, issue 48) layernorm f32 at 2048 x
 * 49152 took 23% less time than the stream, 512 x 40960 10%, 1024 x 65536
 * 2.8%, group-norm f32 16 x 32 x 10 x 4096 4.7%; in clusters of four or
 * eight blocks they lost (group-norm 8 x 32 x 20 x 4096 +23%, layernorm
 * 128 x 262144 +9.6%).  Not measured: 16-bit rows, and softmax's online
 * sums, whose clusters lost on an H100 (issue 12). */
static int cluster_pair_loops(const Group *g, const Footprint *f) {
  const PlanKernel *k = &g->plan->stream;
  return g->stitch->nlevels == 2 && f->pack_bytes == 4 && g->plan->stream_reads >= 2 && k->npasses > 0 &&
         k->passes[0].kind == PASS_MOMENTS;
}

static int at_most(int x, int most) {
  return x < most ? x : most;
}

/* Whole row groups of whole rows (R = T*ITEMS*VEC and rows a multiple of
 * the block's TY, as at the power-of-two shapes) take an instance of the
 * warp and block variants without row or item guards (WHOLE): every load
 * and store of the thread is in range.  On an H100 (bench/NOTES.md, issue
 * 12) card, logsumexp and rowstats bf16 gained 1.4 to 4.1 points of copy
 * at 32768 x 256 to 16384 x 4096, softmax f32 and bf16 0.4 to 1.8,
 * rmsnorm bf16 32768 x 1024 1.6.  Not the long variant nor two rows a
 * thread: without their guards they spilled (layernorm f32 16384 x 4096
 * 96.7 -> 46.6, layernorm bf16 32768 x 256 -11.3). */
static int takes_whole(const Group *g, int rows, int vec) {
  return rows == 1 && vec > 1 && stitch_thread_rows(g);
}

/* Rows of whole chunks (R a multiple of the chunk, T*ITEMS*VEC, as at the
 * power-of-two shapes) take an instance of the stream variant without
 * item guards (WHOLE), as the register variants' whole row groups do:
 * each item of each loop of a chunk had its own bound check and branch.
 * On an H100 (bench/NOTES.md, issue 12) card, logsumexp and rowstats
 * bf16 gained 0.9 to 2.4 points of copy at 128 x 262144 to 2048 x 65536,
 * their f32 rows up to 0.7, layernorm f32 1.5 to 4.5.  Not 16-bit rows
 * read again: layernorm bf16 lost 3 to 4 at 128 x 262144 and 512 x
 * 131072 (ptxas gave its KEEP instance 64 registers for 55), softmax,
 * rmsnorm and add_rmsnorm bf16 moved within 0.5 but one +1.1. */

/* A stream kernel's instances of 64-bit indices take half its packs a
 * chunk: their index and address arithmetic takes twice the registers,
 * and at ITEMS 4 ptxas spilled 8 to 208 bytes of them (16-bit rows that
 * are not whole packs, f32 kept values; issue 45).  They run only on
 * tensors of 2^31 elements and more, each a second or more of HBM
 * traffic, where a chunk of half the packs still has 8 KB a block in
 * flight.
 *
 * A stream kernel of 4-byte elements that reads each row again
 * (softmax, layernorm f32: the rows in flight in L2 for the second read)
 * takes twice the packs a chunk where 32-bit indices do: on an H100
 * layernorm f32 1024 x 65536 gained 7 to 9.5 points of copy, softmax f32
 * 0.5 to 1.7.  Its instance for rows that are not whole packs takes
 * `items` (odd_rows()), and every instance folds the online sums and
 * moments that many packs at a time: the same bits whatever the pointers'
 * alignment.  Not where such a pass reads an operand along the row
 * (softmax(x * w, -1)): its packs, loaded in both loops of each fold
 * group, made the aligned instance spill (4-16 bytes).  16-bit
 * rows (+0.1 to +1.1) spilled 264-444 bytes at 8, 64-bit indices 150-950,
 * and rows read once lost 1-5 points (card, logsumexp and rowstats bf16
 * 128 x 262144; bench/NOTES.md): they keep STREAM_ITEMS.  So do rows
 * that read an operand at a row offset of their own (an attention mask,
 * element by element), and those whose last pass moves more than three
 * packs an item besides the row's (operands along the row and outputs:
 * layernorm's w, b and y are three): at 8 packs masked softmax f32 and
 * softmax(x, -1) beside softmax(x, 0) spilled (issue 45). */
static int half(int items) {
  return items > 1 ? items / 2 : 1;
}

/* Does a pass of the stream kernel that folds two levels (moments,
 * online sums) read an operand along the row? */
static int folds_read_along(const StitchPlan *sp) {
  for (int i = 0; i < sp->stream.npasses; i++) {
    const PlanPass *p = &sp->stream.passes[i];
    for (int j = 0; p->levels >= 2 && j < p->computed.len; j++) {
      const Value *v = p->computed.items[j];
      for (int a = 0; a < v->nargs; a++) {
        const Value *arg = v->args[a];
        while (arg->op == IR_BROADCAST && !vec_contains(&sp->along, arg))
          arg = arg->args[0];
        if (vec_contains(&sp->along, arg))
          return 1;
      }
    }
  }
  return 0;
}

static int reread_items(const Group *g, const Footprint *f, int max_items, int items, int vec) {
  int more = at_most(max_items, 2 * STREAM_ITEMS);
  int light = !f->row_operand_axes && footprint_light_items(f) && !folds_read_along(g->plan);
  return g->plan->stream_reads >= 2 && vec == PACK_BYTES / 4 && light && more > items ? more : 0;
}

/* The block variant's WHOLE instance of a norm (row operands read at the
 * same offset in every row: w, b) loads their packs with the row, before
 * its reductions, bound at its 128 threads (EARLY, emit_stitch.c): else
 * every row waits for them after its last all-reduce, before its first
 * store (Triton's layernorm loads them first too).  On an H100
 * (bench/NOTES.md, issue 12) layernorm bf16 gained 3.4 to 5.3 points of
 * copy at 32768 x 1024 and 8192 x 2048, rmsnorm bf16 0.6 to 3.1, f32
 * -0.4 to +1.3, in 56 to 96 registers.  Not the other instances: with
 * their guards they took up to 95 registers and lost layernorm f32
 * 32768 x 768 4.7 points; nor the warp variant (two rows a thread): -1.6
 * to -7.0 at 32768 x 256; the bound alone moved nothing.  Rows that hold
 * two values (a norm's backward: x and dy) keep them: layernorm bf16's
 * gradient without its column sums spilled 264 bytes with them at ITEMS
 * 4 (ptxas -v, sm_90, issue 46). */
static int early_operands(const Footprint *f, const Variant *v) {
  return v->whole && f->row_operands && !f->row_operand_axes && f->held_inputs == 1;
}

/* Rows of two levels or more with column partials (layernorm's
 * backward: five row sums, two column sums) spend more instructions on
 * each row (its all-reduces, the row's scalars) than on its elements at
 * ITEMS 1 (58 an element on an H200, ncu, issue 46: the issue, not the
 * bytes, set its time).  Their block variant takes twice the items in
 * half the threads (ROOMY: 128 registers, room for the partials of twice
 * the columns a thread) and loads the next row group while this one
 * computes, so that an SM's half as many threads keep as many bytes in
 * flight.  On an H200 (bench/NOTES.md, issue 46) layernorm bf16's
 * backward went from 111.3 to 92.1 us at 8192 x 4096, 92.9 to 74.8 at
 * 32768 x 1024, 49.7 to 35.7 at 32768 x 512.  Rows of one level lost
 * (hand-edited): rmsnorm bf16's backward (ITEMS 2 already) 26% without
 * the loads ahead, 1% faster with them; add_rmsnorm's (four values held)
 * 7 to 10% with them.  f32 layernorm lost 2 to 4% (ITEMS 4 at VEC 4), and
 * an 8-bit row held in f64 spilled 260 bytes at 128 registers
 * (tests/regress/column_fold_f64.te).  So only rows of two levels that
 * hold two 16-bit values or one. */
static int roomy_rows(const Footprint *f, const Group *g) {
  return g->stitch->nlevels >= 2 && f->held_inputs >= 1 && f->held_inputs <= 2 && f->held_pairs == f->held_inputs &&
         !f->held_wide && !f->kept;
}

/* The roomy variant, before the block variant `i` (with partials) of the
 * same rows, for rows of whole packs: its ITEMS sum a row in another
 * order than the block variant's, so the choice is the row length's, not
 * the pointers' (a misaligned call gives the bits of an aligned one, its
 * instance for them loading ahead too); rows of other lengths keep the
 * block variant (in 256-thread blocks layernorm bf16's backward lost 9 to
 * 13% there: 8192 x 4095, 32768 x 1023). */
static void insert_roomy(Arena *a, GroupSchedule *s, int i) {
  Variant *v = insert_variant(a, s, i);
  *v = s->variants[i + 1]; /* the block variant, now after it */
  v->name = "roomy";
  v->when = WHEN_ROW_PACKS;
  v->items *= 2;
  v->roomy = 1;
  v->prefetch = 1;
  v->exact_rows = 0;
  v->block = ROOMY_BLOCK;
  v->sm_threads = 2 * ROOMY_BLOCK;
}

/* Rows with column partials longer than the block variant's (bf16 rows
 * of 8192 to 16384: rmsnorm's and add_rmsnorm's backward at 4096 x
 * 11008) ran as the cluster variant, a row across a cluster's blocks of
 * 512 threads: each row waits on a cluster barrier for each all-reduce,
 * and a cluster takes one row at a time.  The solo variants, after the
 * register variants, hold a row in one block of the warps it needs, up
 * to SOLO_BLOCK threads, one block an SM (SOLO: 128 registers a thread);
 * the grid is a wave, each block looping over rows.  Rows of one level
 * that hold two values or fewer (rmsnorm's backward) take first the
 * items SOLO_AHEAD_REGISTERS hold with the values twice over, the next
 * row loaded while this one computes ("solo"), then the items
 * SOLO_AHEAD_LONG_REGISTERS hold so ("solo-ahead"; not where the passes
 * compute positions, whose index math took ramp's backward in
 * tests/grad/programs/grad_positions.te to 72 bytes of spills), then, for
 * longer rows, the items SOLO_REGISTERS hold once ("solo-long"); the
 * others take the latter alone ("solo").  solo-ahead, against solo-long
 * (H200, bench/prog_ab.py, backward kernel time, the same bits):
 * rmsnorm bf16 136.3 -> 109.8 us at 4096 x 14336, 129.3 -> 101.4 at
 * 4096 x 12296, 142.0 -> 133.7 at 4096 x 16384, 248.9 -> 235.7 at
 * 8192 x 16384, 62.0 -> 57.3 at 1024 x 16384.  The solo variants
 * against the cluster before them (H200, bench/NOTES.md, issue 46),
 * backward kernel time: rmsnorm bf16 152.6 -> 89.1 us at 4096 x 11008
 * (solo-long alone, no loads ahead: 123.9), 173.1 -> 142.1 at 4096 x
 * 16384;
 * add_rmsnorm bf16 283.0 -> 149.5 at 4096 x 11008; rmsnorm f32 246.7 ->
 * 136.7 there; add_rmsnorm f32 259.1 -> 203.5 at 8192 x 4096; layernorm
 * f32 (its column sums apart before) 167.3 -> 127.2 at 4096 x 8192.
 * Layernorm f32 with the loads ahead lost 21 to 46% (4096 x 8192, 4096 x
 * 5000).  Only where they hold longer rows than the register variants
 * before them, and not for the rows of the roomy variant (layernorm
 * bf16's backward, issue-bound on each row's own work: at 4096 x 8192 the
 * plan with its column sums apart took 118.7 us, solo 135.7; at 4096 x
 * 11008 169.2 and 162.4), nor rows of 8-byte values (f64 column sums:
 * tests/ir/grad-signature.te's instance spilled 16 bytes). */
static int solo_items(const Footprint *f, int vec, int ahead, int registers) {
  Footprint held = *f;
  if (ahead) { /* this row's values and the next row's */
    held.held_inputs *= 2;
    held.held_pairs *= 2;
    held.held_wide *= 2;
  }
  return footprint_budget(&held, registers) / vec;
}

/* Inserts at *at, after the variants of rows up to *most long, a solo
 * variant like `base` of `items` (with the loads ahead where `ahead`),
 * where it holds longer rows. */
static void insert_solo_at(Arena *a, GroupSchedule *s, int *at, int64_t *most, Variant base, const char *name,
                           int items, int ahead) {
  Variant solo = base;
  solo.items = items;
  solo.limit = (int64_t)SOLO_BLOCK * items * solo.vec;
  if (items < 1 || solo.limit <= *most)
    return;
  solo.name = name;
  solo.when = WHEN_ROW_AT_MOST;
  solo.solo = 1;
  solo.prefetch = ahead;
  solo.roomy = solo.exact_rows = solo.whole = solo.early = 0;
  solo.rows = 1;
  solo.fit = FIT_ROW;
  solo.threads_x = solo.threads_y = 0; /* fitted: the warps the row needs */
  solo.block = 1; /* one row a block: no fold across threadIdx.y */
  solo.sm_threads = SOLO_BLOCK;
  *insert_variant(a, s, (*at)++) = solo;
  *most = solo.limit;
}

static void insert_solo(Arena *a, GroupSchedule *s, const Footprint *f, const Group *g) {
  if (roomy_rows(f, g) || f->held_wide || f->kept_wide || f->columns_wide) /* 8-byte values: 16 bytes spilled */
    return;
  int at = 0;
  int64_t most = 0;
  while (at < s->nvariants && s->variants[at].storage == STORE_REGISTERS) {
    most = s->variants[at].limit > most ? s->variants[at].limit : most;
    at++;
  }
  if (at == 0 || s->variants[at - 1].vec == 1) /* rows element by element: none */
    return;
  Variant base = s->variants[at - 1];
  int ahead = g->stitch->nlevels == 1 && f->held_inputs <= 2;
  int first = at;
  if (ahead) {
    insert_solo_at(a, s, &at, &most, base, "solo", solo_items(f, base.vec, 1, SOLO_AHEAD_REGISTERS), 1);
    if (!g->plan->positions)
      insert_solo_at(a, s, &at, &most, base, "solo-ahead", solo_items(f, base.vec, 1, SOLO_AHEAD_LONG_REGISTERS), 1);
  }
  insert_solo_at(a, s, &at, &most, base, at > first ? "solo-long" : "solo", solo_items(f, base.vec, 0, SOLO_REGISTERS), 0);
}

/* The cluster variant of rows with column partials loads the next row
 * while it computes this one where a thread's held values twice over
 * and its partials take 40 registers or fewer of its 64 (rmsnorm bf16's,
 * 48, spilled 24 bytes; an 8-bit row held in f64, 80, 88 bytes more than
 * without: tests/regress/column_fold_f64.te), and it holds two values or
 * fewer.  On an H200 (bench/NOTES.md, issue 46) rmsnorm f32's backward
 * went from 294.0 to 249.9 us at 4096 x 11008, 275.1 to 235.3 at
 * 8192 x 8192, 310.6 to 286.6 at 4096 x 16384; add_rmsnorm's (four
 * values) moved -1 to +1.6%. */
static int cluster_ahead(const Variant *v, const Footprint *f, const Group *g) {
  int held = footprint_held_bytes(f) * v->items * v->vec / 4, partials = g->stitch->columns.len * v->items * v->vec;
  return f->held_inputs <= 2 && 2 * held + partials <= 40;
}

/* Rows that add column partials (a norm's backward: dw, db) keep them
 * in registers, each thread its columns' across the rows it takes, and
 * fold them per block at the end (emit_stitch.c): the grid is a wave of
 * large blocks, COLUMN_PART_BLOCK threads, COLUMN_PART_SM an SM (bound to
 * that: 64 registers, so that two blocks are resident and one's loads
 * overlap the other's all-reduces), so that the partials (a row of R
 * accumulators a block) stay few beside the rows.  The accumulators take
 * from the held budget (footprint_budget()).  Bound to one block of 512
 * (128 registers, twice the budget), rmsnorm bf16's backward ran at
 * 1.7x its ideal bytes at 8192 x 4096 and layernorm's lost to two
 * kernels (H200): only rows longer than these variants hold take such a
 * block (insert_solo()).  The cluster variant keeps a partial row a
 * cluster, each block its part of the row's columns; no narrow variant
 * (blocks of odd rows: the fold across threadIdx.y takes a power of
 * two); the stream kernel adds each row to its block's partials in
 * memory, one row a block. */
static void column_partials(Arena *a, GroupSchedule *s, const Footprint *f, const Group *g) {
  for (int i = 0; i < s->nvariants; i++) {
    Variant *v = &s->variants[i];
    int stream = v->storage == STORE_STREAM;
    if (v->fit == FIT_CLUSTER) { /* a partial row a cluster, each block its part of the row */
      int64_t blocks = v->limit / ((int64_t)v->threads_x * v->items * v->vec);
      if (f->shifted) /* beside the shifted sums, red_f16's element-by-element instance spilled 32 bytes at ITEMS 2 */
        v->items = 1;
      v->limit = blocks * COLUMN_PART_BLOCK * v->items * v->vec;
      v->threads_x = COLUMN_PART_BLOCK;
      v->loops = 1;
    } else if (!stream && v->limit > (int64_t)COLUMN_PART_BLOCK * v->items * v->vec) {
      v->limit = (int64_t)COLUMN_PART_BLOCK * v->items * v->vec; /* no block over COLUMN_PART_BLOCK */
    }
    v->block = stream ? 1 : COLUMN_PART_BLOCK;
    v->whole = stream && v->whole; /* rmsnorm's backward without guards spilled 84 bytes at 128 registers */
    v->early = 0;
    v->sm_threads = stream ? MAX_THREADS : COLUMN_PART_SM;
    v->prefetch = v->fit == FIT_CLUSTER && cluster_ahead(v, f, g);
    v->partials = 1;
  }
  for (int i = 0; i < s->nvariants; i++)
    if (s->variants[i].exact_rows && roomy_rows(f, g)) {
      insert_roomy(a, s, i);
      break;
    }
  insert_solo(a, s, f, g);
}

/* The items of VEC elements a row or column stitch holds a thread: the
 * held budget's, at most ELEMENT_ITEMS where it reads element by element. */
static int held_items(const GroupSchedule *s, int vec) {
  int items = s->budget / vec > 0 ? s->budget / vec : 1;
  return vec == 1 ? at_most(items, ELEMENT_ITEMS) : items;
}

/* The warp variant's items: `items`, but 2 for 16-bit rows of one row a
 * thread that write 8-bit values along them (a quantization's q), whose
 * output pass converts and packs every element: twice the lanes a row,
 * half the chain a thread.  On an H200 (bench/NOTES.md, issue 49) the
 * per-block fp8 quantization x[8192, G, 128] took 87.1 -> 86.0 us at
 * G = 112 and 28.3 -> 27.8 at G = 32 (CUDA events), where 8 lanes with
 * 64-thread blocks lost 7% and 4 lanes in 64-thread blocks moved 0.5%.
 * Rows above 512 then take the block variant at `items`, the same block
 * of one warp a row that the warp variant gave them. */
static int warp_items(const StitchPlan *sp, int vec, int rows, int items) {
  return rows == 1 && sp->narrow_outputs && vec == PACK_BYTES / 2 ? at_most(items, 2) : items;
}

static uint32_t batch_axes(const Group *g, const Footprint *f);
static int64_t reduced_length(const Group *g);

/* The bytes an item that variant v's AHEAD instance loads ahead: 16 a
 * held value, where each value's item is one aligned pack the thread
 * keeps in its registers as loaded (16-bit values in pairs at VEC 8, f32
 * at VEC 4), the items of the 1024 threads fit AHEAD_MOST_BYTES, and the
 * rows are visited in order (no batch-fastest order) without column partials;
 * else 0.  A block of 1024 threads is the SM's one: with nothing else to
 * overlap, it loaded its next row only after writing this one.  With the
 * next row's packs copied into shared memory by cp.async while this row
 * computes (a block an SM, looping over the rows), softmax bf16 at 1024 x
 * 65536 took 8.5% less time, at 1024 x 40000 13% (H200, bench/NOTES.md,
 * issue 48); at 512 threads, two blocks an SM, the loop alone cost 8-16%
 * and the copies won nothing back, so only blocks of 1024 take it. */
static int ahead_bytes(const Group *g, const Footprint *f, const Variant *v) {
  const PtrVec *held = &g->plan->held;
  if (!held->len || g->stitch->columns.len || v->partials || batch_axes(g, f) || v->vec < 2 ||
      (v->fit == FIT_ROW ? !g->plan->row_packs : !stitch_column_packs(g)))
    return 0;
  for (int i = 0; i < held->len; i++) {
    DType t = ((const Value *)held->items[i])->dtype;
    if (!(dtype_is_16bit(t) && v->vec == PACK_BYTES / 2) && !(t == DT_F32 && v->vec == PACK_BYTES / 4))
      return 0;
  }
  int bytes = PACK_BYTES * held->len;
  return (int64_t)bytes * v->items * AHEAD_THREADS <= AHEAD_MOST_BYTES ? bytes : 0;
}

/* The register variant of the longest rows (`long`; the columns' `reg`)
 * loads ahead where it can take blocks of 1024 threads (rows read once
 * hold at most 512: one_read_stream()) and ahead_bytes() says so. */
static void ahead_variants(GroupSchedule *s, const Group *g, const Footprint *f) {
  Variant *last = NULL;
  for (int i = 0; i < s->nvariants; i++) {
    Variant *v = &s->variants[i];
    if (v->storage == STORE_REGISTERS && (v->fit == FIT_ROW || v->fit == FIT_COLUMNS))
      last = v;
  }
  if (!last || last->rows != 1 || last->solo || last->roomy)
    return;
  const int64_t half = (int64_t)(AHEAD_THREADS / 2) * last->items * last->vec, len = reduced_length(g);
  if (last->fit == FIT_ROW && (last->exact_rows || last->when == WHEN_ROW_NARROWER || last->limit <= half ||
                               (len >= 0 && len <= half))) /* a literal row that 512 threads hold */
    return;
  last->ahead = ahead_bytes(g, f, last);
}

/* Rows in registers: several rows per warp (4 to 32 lanes a row) while a
 * warp holds them, then a block per row at about four packs per thread
 * (at most 128 threads when a thread may hold more), then (long rows) the
 * whole budget per thread, then a cluster of blocks (sm_90); longer rows
 * stream.  16-bit rows are held two elements to a register, so their
 * budget is twice f32's.  The whole budget from 128 threads up (it was
 * 256, and 16-bit rows had half the budget) took rowstats f32 16384 x
 * 4096 from 95.0 to 99.2% of copy, bf16 4096 x 16384 73.4 -> 89.2 and
 * 4096 x 11008 57.3 -> 78.6 on an H100 (bench/NOTES.md, issue 11).
 * Every row group has its own block: on an H100 that beat a persistent
 * grid by 5-11 points of copy for f32 at 32768 x 1024 and 16384 x 4096.
 * For 16-bit rows a persistent grid (2048 threads a SM) won 3-6 points
 * when they held half the elements they do now (issue 12); with the
 * whole budget, a block per row group gained 4.6-8.7 points for softmax,
 * log_softmax, rmsnorm and add_rmsnorm bf16 at 32768 x 1024 to
 * 4096 x 11008 and 4.2 for rowstats at 16384 x 4096, and lost 0.5-0.9
 * for card and logsumexp (2.5-3.3 at 1024 x 65536), which stay 1.2-1.7x
 * torch.compile (bench/NOTES.md, issue 11).
 *
 * Rows that write nothing along them (card, logsumexp, rowstats) take
 * the whole budget first in blocks of just the warps the row needs, up
 * to 384 threads, in an instance bound to 3 blocks an SM (narrow), where
 * the long variant's power of two would leave warps idle: on an H200
 * (bench/NOTES.md, issue 12) card, logsumexp and rowstats f32 at 4096 x
 * 11008 went from 74-78% of copy (512 threads, two blocks an SM) to 92-94
 * (352, three), bf16 at 4096 x 24000 from 64-70 to 78-89.  Where the
 * power of two is the warps the row needs (4096 x 16384 bf16: 256
 * threads) the bound alone lost card and logsumexp 1.6 to 2 points, and
 * rows that write along them (softmax, the norms) moved -6 to +5: those
 * keep the long variant.
 *
 * 16-bit rows that one warp holds at the whole budget (1024 < R <= 2048
 * at VEC 8, ITEMS 8) take a warp a row (warp-long) before the block
 * variant's two warps at ITEMS 4: the row's all-reduces stay in the warp,
 * with no shared memory or barrier.  On an H200 (bench/NOTES.md, issue 47)
 * the causal softmax bf16 32 x 2048 x 2048 went from 89.4 to 95.6% of its
 * ceiling.  Not rows with an operand along them: masked_softmax bf16 at
 * the same shape moved +3.5% (f32(s) + f32(m)) and -3.1% (the suite's
 * s * 0.125 + m).  f32 rows one warp would hold (512 < R <= 1024, the
 * suite's 32768 x 1024) were not measured; they keep the block variant. */
static void stitch_row(Arena *a, GroupSchedule *s, const Footprint *f, const Target *t, const Group *g) {
  int vec = f->pack_bytes ? PACK_BYTES / f->pack_bytes : 1;
  int max_items = held_items(s, vec);
  /* the short rows' variants hold 4 packs an item, 2 where the last pass
   * moves more than ITEM_PACKS_FREE packs an item besides the row's (the
   * row operands and outputs along the row of fn_axis and online_sums:
   * their whole-row-group instances spilled 8-176 bytes at 4; issue 45);
   * not rows with operands at a row offset of their own, whose
   * instances at 2 spilled where those at 4 did not (row_operands) */
  /* and 2 for rows of two levels or more that hold two values beside an
   * operand along the row (a norm's gradient with its column sums apart:
   * at 4, layernorm bf16's WHOLE instance spilled 264 bytes; issue 46),
   * or two values and no operand beside an output along the row (softmax's
   * and log_softmax's gradients: at 4, their bf16 WHOLE instances spilled
   * 44 to 64 bytes; at 2, H200, bench/prog_ab.py, their backward at
   * 32768 x 256 to 1024 took 7 to 27% less time, at 8192 x 4096 -10% and
   * +3.5%, where rows of 1024 take the warp-long variant at 4; issue 46) */
  int two_held = f->held_inputs >= 2 && (f->row_operands ? g->stitch->nlevels >= 2 : f->row_outputs > 0);
  int items = at_most(max_items, (footprint_light_items(f) || f->row_operand_axes) && !two_held ? 4 : 2);
  int rows = stitch_thread_rows(g) && f->row_operands && footprint_light_items(f) && items >= WARP_ROWS ? WARP_ROWS : 1;
  Variant *v = row_variant(a, s, "warp", vec, warp_items(g->plan, vec, rows, items) / rows, 0);
  v->rows = rows;
  v->fit = FIT_SHORT_ROWS;
  /* a norm's one input: the next rows' loads overlap this row group's
   * sums (on an H100 rmsnorm bf16 at 32768 x 256 +4.7 points of copy,
   * the layernorms +1.2 and +1.5; two held inputs, add_rmsnorm, lost 20:
   * bench/NOTES.md); not where an element held takes more than its
   * share of a pack (an f8 row held in f32 beside bf16 operands, VEC 8:
   * 32 bytes a pack, whose instances spilled 132 bytes; issue 49); nor
   * 16-bit rows whose register kernel folds shifted sums (PASS_SHIFTED:
   * layernorm bf16's instances spilled 4 bytes at 64 registers).  Its
   * grid: SMs * 1024 threads looping over rows that the L2 cache holds, a
   * block per row group over larger ones (cover_bytes, tecc::past_l2): on
   * an H200 (bench/NOTES.md, issue 48; bench/prog_ab.py, norms over rows
   * of 128 to 512) the loop took 3.5-13% less time over 16-32 MB of rows,
   * the cover 0-10% less over 64-256 MB (RMSNorm bf16 over a head
   * dimension of 128 at 524288 rows: 73.2 -> 65.7 us; ncu of the literal
   * 128: DRAM 72.7 -> 78.8%, the same occupancy) */
  if (rows > 1 && f->held_inputs == 1 && !f->kept && !(f->shifted && f->held_pairs) &&
      footprint_held_bytes(f) * vec <= PACK_BYTES) {
    v->prefetch = 1;
    v->sm_threads = MAX_THREADS;
    v->cover_bytes = dtype_size(((const Value *)g->plan->held.items[0])->dtype);
  }
  v->limit = 32 * (int64_t)v->items * vec;
  v->whole = takes_whole(g, rows, vec);
  if (max_items > items && vec == PACK_BYTES / 2 && !f->row_operands)
    row_variant(a, s, "warp-long", vec, max_items, 0)->limit = 32 * (int64_t)max_items * vec;
  v = row_variant(a, s, "block", vec, items, 0);
  v->whole = takes_whole(g, 1, vec);
  v->exact_rows = 1;
  if (max_items > items) {
    v->early = early_operands(f, v);
    v->limit = (int64_t)BLOCK_ROW_THREADS * items * vec;
    if (!f->row_outputs && !f->columns) {
      v = row_variant(a, s, "narrow", vec, max_items, 0);
      v->when = WHEN_ROW_NARROWER;
      v->limit = (int64_t)NARROW_THREADS * max_items * vec;
    }
    row_variant(a, s, "long", vec, max_items, 0);
  }
  if (t->max_cluster > 1 && f->pack_bytes) {
    v = row_variant(a, s, "cluster", vec, max_items, MAX_THREADS);
    v->when = WHEN_CLUSTERS;
    v->storage = STORE_CLUSTER;
    v->fit = FIT_CLUSTER;
    v->threads_x = MAX_THREADS;
    v->threads_y = 1;
    v->cluster = 0;
    v->limit = (int64_t)t->max_cluster * MAX_THREADS * max_items * vec;
    v->loops = cluster_loops(g);
    v->pair_loops = !v->loops && cluster_pair_loops(g, f);
  }
  /* stream: ITEMS within the budget (more spilled: add_rmsnorm bf16); long
   * rows, one block per SM, so the rows in flight stay in L2 */
  v = row_variant(a, s, "stream", vec, at_most(max_items, STREAM_ITEMS), MAX_THREADS);
  v->when = WHEN_ALWAYS;
  v->storage = STORE_STREAM;
  v->index_bits = 0; /* 64-bit only when the sizes need it: 64-bit index math cost bf16 rows 20% */
  v->wide_items = reread_items(g, f, max_items, v->items, vec);
  v->items64 = v->items > 1 ? v->items / 2 : 0;
  v->keeps = g->plan->stream_reads >= 2;
  v->whole = vec > 1 && (!v->keeps || vec <= 4);
  if (f->columns)
    column_partials(a, s, f, g);
}

/* Rows that are not whole packs (PACKS false: a length that is not a
 * multiple of VEC, or a pointer that is not 16-byte aligned) load with a
 * bounds test per element, or 16-bit ones through the five aligned words
 * a pack spans (tecc::load_unaligned), and the stream kernel's instances
 * for them spilled at the aligned instances' packs (ptxas -v, sm_90,
 * issue 45).  Measured on an H200 against the same instances spilling
 * (bench/NOTES.md, issue 45):
 *   - f32 rows read again take `items`, not wide_items' 8 packs: softmax
 *     f32 1024 x 50257 241.2 -> 211.6 us, layernorm f32 128 x 262143
 *     237.4 -> 171.1, no spill (half of `items`, 2 packs, 327 us);
 *   - 16-bit rows take half of `items` (card bf16 1024 x 50257 10%
 *     faster), except where a pass folds a chunk at a time: folding half
 *     the packs at a time cost the aligned instances up to 1.3% at the
 *     suite's long rows (rowstats bf16 1024 x 65536 +1.2%, cross-entropy
 *     bf16 128 x 262144 +1.1%), and at `items` those do not spill (the
 *     stream kernel of cross-entropy, which holds l and onehot, loads
 *     such rows through aligned words: loads_unaligned(), emit_stitch.c);
 *   - so do rows that write two outputs or more along them, f32 too
 *     (add_rmsnorm's h and y), and f32 rows read again among them
 *     (imports' acts, 72 bytes at `items`): that cost add_rmsnorm f32
 *     and bf16 1-5% at such rows, but at `items` they spilled 12-108
 *     bytes, and the spills go (issue 45); 16-bit ones that also fold
 *     take a quarter (online_sums_bf16's spilled 40 bytes at half);
 *   - the other f32 rows read once keep `items`: half of it cost card,
 *     logsumexp and rowstats f32 4-16%, and they do not spill.
 * A thread takes the same packs in the same order in either instance
 * (pack p of a row goes to lane p % T, whatever the packs a chunk), and
 * the online sums and moments, which fold a chunk at a time, fold
 * odd_items packs at a time in both (FOLD, emit_stitch.c,
 * folds_in_groups()): the same bits whatever the alignment.  So where a
 * pass folds, odd_items divides the aligned instances' packs.  (Binding
 * the 16-bit register instances for such rows to 512 threads, one block
 * an SM, took their spills out too, but ptxas then gave them 128
 * registers and a quarter of the occupancy: softmax, rmsnorm and
 * layernorm bf16 at 4096 x 11007 46-50% slower.) */
static int odd_items(const Variant *v, const Group *g, int items) {
  int folds = plan_folds_by_chunk(&g->plan->stream), outputs = g->plan->row_outputs;
  int wide16 = v->vec == PACK_BYTES / 2;
  if (wide16 && folds && outputs >= 2)
    return half(half(items));
  if ((wide16 && !folds && !v->wide_items) || outputs >= 2)
    return half(items);
  return v->wide_items ? items : 0;
}

static void odd_rows(GroupSchedule *s, const Group *g) {
  if (!g->plan->row_packs) /* no PACKS instance: every row loads element by element */
    return;
  int folds = plan_folds_by_chunk(&g->plan->stream);
  for (int i = 0; i < s->nvariants; i++) {
    Variant *v = &s->variants[i];
    if (v->storage != STORE_STREAM || v->vec == 1)
      continue;
    int items64 = v->items64 ? v->items64 : v->items;
    int odd = odd_items(v, g, v->items), odd64 = odd_items(v, g, items64);
    int aligned = v->wide_items ? v->wide_items : v->items;
    if (odd && (!folds || (aligned % odd == 0 && items64 % odd64 == 0))) {
      v->odd_items = odd;
      v->odd_items64 = odd64;
      v->folds = folds;
    }
  }
}

/* Does the register variant v's instance for rows that are not whole
 * packs (PACKS false) hold its values in shared memory (shared_rows())?
 * Rows that write along them, where ptxas spilled their registers
 * (ptxas -v, sm_90, issue 45): two values held or kept; an operand at a
 * row offset of its own (a mask); two results or more; 16-bit rows of
 * ITEMS 8 in a cluster, or with fewer than two operands along the row
 * (layernorm bf16's, which did not spill, ran 7-10% slower so at 256
 * and 1024 threads). */
static int holds_in_shared(const Variant *v, const Group *g, const Footprint *f, int bytes) {
  if (!f->row_outputs)
    return 0;
  int wide16 = f->held_pairs && bytes >= SHARED_MIN_BYTES && (v->storage == STORE_CLUSTER || f->row_operands < 2);
  return wide16 || f->held_inputs + f->kept >= 2 || f->row_operand_axes || g->roots.len >= 2;
}

/* Register variants whose instance for rows that are not whole packs
 * (PACKS false) spills hold the row (and the values they keep) in
 * dynamic shared memory instead, a thread's element i at i * threads +
 * its index, and unroll their element loops a few items at a time
 * (`#pragma unroll`; a register array is only unrolled whole).  ptxas
 * hoists each unrolled item's loads (the five aligned words of a pack of
 * 16-bit elements at any 2-byte boundary, a test an element of f32
 * ones, a mask's and a norm's w) beside the row, and at 1024 threads (64
 * registers) those instances spilled (24 to 2188 bytes,
 * tests/nvcc/spills.known); in shared memory with every item unrolled
 * they still spilled.  Measured on an H200 (bench/NOTES.md, issue 45)
 * against the instances in registers, at rows of 1023 to 262143: softmax
 * and log_softmax bf16 -16 to +1%, rmsnorm bf16 -17 to +3%, add_rmsnorm
 * -19 to +7%; but f32 rows of one value 4 to 28% slower (each element a
 * word of shared memory that every pass reads), and rows that write
 * nothing along them (card, logsumexp, rowstats, cross-entropy) up to
 * 42%: those keep their registers, which did not spill.  Not the warp
 * variant (several rows a warp) nor rows with column partials. */
static void shared_rows(GroupSchedule *s, const Group *g, const Footprint *f) {
  if (!g->plan->row_packs) /* no PACKS instance */
    return;
  for (int i = 0; i < s->nvariants; i++) {
    Variant *v = &s->variants[i];
    int held = v->storage == STORE_REGISTERS || v->storage == STORE_CLUSTER;
    int bytes = footprint_held_bytes(f) * v->items * v->vec;
    if (held && v->vec > 1 && v->rows == 1 && v->fit != FIT_SHORT_ROWS && !v->partials && holds_in_shared(v, g, f, bytes))
      v->shared_bytes = bytes;
  }
}

/* A stream kernel that reads each row once (rowstats: its variance
 * shares the mean's pass, stitch.h) gives a row 512 threads when the
 * rows fill two blocks on every SM: one block's end-of-row all-reduces
 * then overlap the other's loads.  Rows read again by a later pass keep
 * 1024 threads, one block an SM, so that the rows in flight stay in L2.
 * For the same reason rows held in registers take at most 512 threads
 * there; longer ones stream (rowstats bf16 1024 x 65536: 76.5% of copy
 * in registers, one block an SM, 82.7% streamed by blocks of 512).
 * On an H100 rowstats f32 1024 x 65536 went from 86.9 to 94.7% of copy
 * (layernorm, read twice, lost 1.4 -> 1.7x at 128 x 262144 with 512;
 * bench/NOTES.md, issue 11).
 *
 * Where the rows fill six blocks an SM they take 256 threads, six blocks
 * an SM where the kernel's registers let it (tecc::one_read_threads,
 * one_read_grid): more rows in flight, each block's all-reduces hidden
 * by five others' loads.  On an H200 (bench/NOTES.md, issue 47) the
 * cross-entropy with labels bf16 4096 x 128256 went from 93.1 to 101.9%
 * of its ceiling, logsumexp, rowstats and card bf16 at 1024 x 65536 +2.5
 * to +3.9 points of copy, rowstats f32 +4.0, card and logsumexp f32 -0.4
 * and -1.2, the suite's other rows within 0.3.  And 16-bit rows held in
 * registers take at most 256 threads (ONE_READ_HELD_16; longer ones
 * stream): at 512, two blocks an SM, the cross-entropy bf16 16384 x 32000
 * ran at 82.0% of its ceiling, streamed by blocks of 256 at 100.0; at
 * 256 (4096 x 16384) the registers keep it (rowstats bf16 85.1% of copy,
 * streamed 71.0).  f32 rows keep 512: streamed, rowstats f32 4096 x
 * 16384 lost 3.9%, card and logsumexp moved within 0.4. */
static void one_read_stream(GroupSchedule *s, const Group *g) {
  if (g->plan->stream_reads != 1)
    return;
  for (int i = 0; i < s->nvariants; i++) {
    Variant *v = &s->variants[i];
    int most = v->vec == PACK_BYTES / 2 && v->when != WHEN_ROW_NARROWER ? ONE_READ_HELD_16 : ONE_READ_THREADS;
    if (v->storage == STORE_STREAM)
      v->one_read = 1;
    if (v->storage == STORE_REGISTERS && v->fit == FIT_ROW && v->limit > (int64_t)most * v->items * v->vec)
      v->limit = (int64_t)most * v->items * v->vec;
  }
}

static void column_variant(Arena *a, GroupSchedule *s, const char *name, int vec, int items) {
  Variant *v = add(a, s, name, WHEN_ROW_FITS, STORE_REGISTERS);
  v->vec = vec;
  v->items = items;
  v->fit = FIT_COLUMNS;
  v->threads_x = v->threads_y = 0;
  v->index_bits = 32;
}

/* Column packs: a thread takes VEC neighbouring columns, a 16-byte pack
 * of each row it reads, while the block's all-reduce of VEC values a
 * thread (1024 * VEC accumulators and 32 * VEC results of 8 bytes) fits
 * the 48 KB of static shared memory (f64 and i64 sums: VEC 4). */
static int column_vec(const Footprint *f, const Group *g) {
  if (!f->pack_bytes || !stitch_column_packs(g))
    return 1;
  int vec = PACK_BYTES / f->pack_bytes;
  while (vec > 1 && stitch_column_allreduce_bytes(g) * vec > STATIC_SHARED_BYTES)
    vec /= 2;
  return vec;
}

static void column_stream(Arena *a, GroupSchedule *s, const char *name, When when, int vec, int items) {
  Variant *v = add(a, s, name, when, STORE_STREAM);
  v->vec = vec;
  v->items = items;
  v->fit = FIT_COLUMNS;
  v->threads_x = v->threads_y = 0;
  v->index_bits = 0; /* 32-bit where the sizes allow: bf16 bias_gelu backward -4% (H200, issue 46) */
}

/* Streamed 16-bit columns hold their elements two to a word (emit_stitch.c,
 * the Cached pairs) and take twice the packs a thread in their instances
 * of 32-bit indices: with 4 packs of 4 columns (32 bytes a thread in
 * flight, where f32 has 64) softmax_col bf16 read at 54% of DRAM's peak
 * (ncu, 16384 x 4096: the one block an SM of each 32-column group
 * waiting on its loads).  On an H200 (bench/NOTES.md, issue 48;
 * bench/prog_ab.py, kernel time) at 8: 16384 x 4096 140.7 -> 121.8 us,
 * 8192 x 8192 144.9 -> 129.7, 4096 x 16384 143.2 -> 129.4, and the split's
 * two phases at 65536 x 1024 140.2 -> 128.5, 32768 x 2048 136.9 -> 126.1;
 * the pairs alone moved nothing (0.994-1.000x).  The instances of 64-bit
 * indices keep 4: at 8 they spilled 80-128 bytes (ptxas -v, sm_90).  Only
 * these streams hold pairs: in the halved ones (heavy_column_stream())
 * the split's instances bound to 32 registers spilled 16-28 bytes with
 * them. */
static void wide_column_streams(GroupSchedule *s) {
  for (int i = 0; i < s->nvariants; i++)
    if (s->variants[i].storage == STORE_STREAM) /* stream-packed, split and stream */
      s->variants[i].wide_items = 2 * STREAM_ITEMS;
}

/* Column streams holding 8-byte values keep 64-bit indices: the 32-bit
 * instance of tests/stitch/regress.te's seed229 (f64, a column a thread)
 * spilled 24 bytes where the 64-bit one did not (ptxas -v, sm_90). */
static void wide_columns_index64(GroupSchedule *s, const Footprint *f) {
  if (!f->held_wide && !f->kept_wide)
    return;
  for (int i = 0; i < s->nvariants; i++)
    if (s->variants[i].storage == STORE_STREAM)
      s->variants[i].index_bits = 64;
}

/* The columns a thread of the register variants takes: a thread holds
 * each row value of its columns (a column's max, its sum, their log) in
 * VEC registers, one a column, so where the group writes two results or
 * more, or holds 8-byte values, half a pack of them (as many packs
 * ITEMS, half the elements), but two where it holds 16-bit values (a
 * word of two).  At a whole pack those instances spilled
 * 8 to 104 bytes (softmax and log_softmax bf16 over columns, three f32
 * results, f64 softmax; ptxas -v, sm_90, issue 45), at half none did;
 * with the elements kept (twice the ITEMS) f32's still did. */
static int held_column_vec(const Group *g, const Footprint *f, int vec) {
  int heavy = g->roots.len >= 2 || f->held_wide || f->kept_wide;
  if (vec == 1 || !heavy || (vec == 2 && f->held_pairs)) /* 16-bit values are held two to a word */
    return vec;
  return vec / 2;
}

/* The streamed columns of the groups whose register variants take half
 * a pack (held_column_vec()) spilled at 4 packs in flight of 4 columns a
 * thread (ptxas -v, sm_90, tests/programs/column_packs.te and
 * column_split.te: f32 with two results or more 28-40 bytes, f64 8-28,
 * bf16's second phase of a split 8; issue 45).  On an H200, against those
 * instances spilling (bench/NOTES.md):
 *   - f32 take 2 packs a thread in the instances of packs (VEC > 1; a
 *     column a thread keeps 4): 2-8% faster (col_f32 16384 x 4096
 *     390.5 -> 360.9 us); half a pack instead was 17-26% slower;
 *   - 16-bit ones take 2 in the second phase of a split only: -0.3% to
 *     +5.2% (at 2 in every phase, 8-23% slower; at half a pack, 17-29%);
 *   - 8-byte ones a column a thread, as the register variants: 2-23%
 *     faster, but soft_f64 +3.7% at 70001 x 4096 and +22.6% at 65536 x
 *     1024; 2 columns a thread at 1 pack (the most that did not spill)
 *     were slower, 10-48%.
 * Groups that read row values along each column (a norm's gradient with
 * its sums apart reads the rows' mean and rstd; y = x / sum(x, 0) +
 * mean(x, -1)) take half the packs as well, 16-bit ones in every phase:
 * at 4, reduce_bcast's f32 instances of 64-bit indices spilled 64-68
 * bytes, layernorm bf16's 8-16 (ptxas -v, sm_90, issue 46). */
static void heavy_column_stream(const Group *g, const Footprint *f, int vec, int held_vec, int *stream_vec, int *items,
                                int *split_items) {
  int along = g->plan->along.len > 0 && f->pack_bytes <= 4; /* row values read along each column */
  if (held_vec == vec && !along)
    return;
  if (f->held_wide || f->kept_wide)
    *stream_vec = 1;
  else if (f->pack_bytes == 2 && !along)
    *split_items = STREAM_ITEMS / 2;
  else
    *items = STREAM_ITEMS / 2;
}

/* 16-bit columns that compute software math an element (bias_gelu's
 * backward: an erf and an exp) are bound by their instructions, not by
 * HBM: the split runs wherever R holds two chunks, before the stream of
 * packs, each thread with 2 packs in flight in blocks of 512 threads,
 * three an SM (40 registers: 75% of the warps, where the stream's 64 left
 * 50%; two with 64-bit indices, which spilled at three), in chunks for up
 * to 6 blocks an SM (two waves: against rounding up, 0.90-0.95x at 8192 x
 * 14336, 4096 x 11008 and 16384 x 4096; bench/NOTES.md, issue 48) of at
 * least 256 rows.  On an H200 (bench/NOTES.md, issue
 * 46) bias_gelu bf16's backward went from 357.2 to 265.1 us at 8192 x
 * 14336, 141.7 to 112.1 at 4096 x 11008, 34.3 to 28.1 at 32768 x 256,
 * 171.2 to 154.3 at 1024 x 65536, 89.6 to 89.4 at 32768 x 1024 (the
 * split alone: 322.1, 126.2, 33.4, 168.2; two blocks an SM: 282.8, 120.7,
 * 27.6, 166.1, 94.6).  Not f32, which moves twice the bytes an element:
 * bias_gelu f32's lost up to 12% at 32768 x 1024 (105.0 to 117.9 us; two
 * blocks an SM 110.9), and f32 groups of more values spilled at three. */
static void heavy_column_split(Variant *v) {
  v->items = STREAM_ITEMS / 2;
  v->split_items = 0;
  v->split_sm_blocks = 6;
  v->split_rows = 256;
  v->split_bound = 3;
}

/* Columns in registers: about four packs (or elements) per lane while
 * they fit, then the whole budget; longer columns stream, in packs of up
 * to 4 columns a thread while those column groups give 3/4 of the SMs a
 * block, else a column a thread (the most groups: a block of 1024 threads
 * streams a group, one block an SM).  On an H100, softmax(x, 0) at 16384
 * x 4096 (128 groups of 4-column packs) ran at 57.8% of copy (f32) and
 * 46.4% (bf16) with packs against 45.9% and 29.7% without; at 65536 x
 * 1024 packs gave 27.0% and 13.2% against 50.0% and 31.7%, and splitting
 * each column over a cluster's blocks only won back 50.1% and 26.6%
 * (bench/NOTES.md).  A split's grid is one wave of two blocks of 512
 * threads an SM (SPLIT_SM_BLOCKS; the kernel's 64 registers a thread let
 * an SM hold no more): the second phase then finds each chunk's last rows
 * in L2, and no last wave of a few blocks runs alone.  On an H200
 * (bench/NOTES.md, issue 48; bench/prog_ab.py, kernel time) softmax_col
 * bf16 at 65536 x 1024 took 128.5 -> 118.7 us against chunks for four
 * blocks an SM (two waves), f32 211.3 -> 205.2; rounding the chunks up
 * instead of down left 8 blocks a second wave at 32768 x 2048, 1.22x
 * slower.  Where rounding down leaves one chunk but the SMs hold more
 * blocks than there are groups, two (bias_gelu bf16's backward at 1024 x
 * 65536, 512 groups: the stream of packs instead took 128.4 -> 152.1). */
static void stitch_column(Arena *a, GroupSchedule *s, const Footprint *f, const Group *g) {
  int vec = column_vec(f, g), held_vec = held_column_vec(g, f, vec);
  int stream_vec = at_most(vec, STREAM_COLUMN_VEC), stream_items = STREAM_ITEMS, split_items = 0;
  heavy_column_stream(g, f, vec, held_vec, &stream_vec, &stream_items, &split_items);
  int max_items = held_items(s, vec);
  int items = at_most(max_items, 4);
  int split = vec > 1 && stitch_column_split(g), heavy = split && f->slow_math > 0 && f->pack_bytes == 2;
  column_variant(a, s, "short", held_vec, items);
  if (max_items > items)
    column_variant(a, s, "reg", held_vec, max_items);
  if (stream_vec > 1 && !heavy)
    column_stream(a, s, "stream-packed", WHEN_COLUMN_GROUPS, stream_vec, stream_items);
  if (split) { /* at VEC 1 too: a column a thread of each chunk */
    column_stream(a, s, "split", WHEN_COLUMN_SPLIT, stream_vec, stream_items);
    Variant *v = &s->variants[s->nvariants - 1];
    v->split_items = split_items;
    v->fit = FIT_COLUMN_SPLIT;
    v->block = SPLIT_THREADS;
    v->split = 0;
    v->split_sm_blocks = SPLIT_SM_BLOCKS;
    v->split_rows = SPLIT_ROWS;
    if (heavy)
      heavy_column_split(v);
  }
  if (stream_vec > 1 && heavy)
    column_stream(a, s, "stream-packed", WHEN_COLUMN_GROUPS, stream_vec, stream_items);
  column_stream(a, s, "stream", WHEN_ALWAYS, 1, STREAM_ITEMS);
  if (f->pack_bytes == 2 && !heavy && stream_items == STREAM_ITEMS && !split_items)
    wide_column_streams(s);
  wide_columns_index64(s, f);
  /* one block an SM, as the other kernels of 64-bit indices (emit_cu.c):
   * with none, ptxas took 32 registers for col_bool's (VEC 1) and spilled
   * 8 bytes; softmax_col's kept their speed (H200, within 0.5%), but the
   * groups above, which do not spill without it, lost up to 17% (col_f32
   * at 262144 x 64, 48 registers where it took 44; bench/NOTES.md) */
  if (held_vec == vec)
    s->variants[s->nvariants - 1].min_blocks = 1;
}

/* ---- literal sizes: decide what the host would ------------------------- */

/* 32-bit indices do for every element of the domain (the launcher's own
 * test: sizes and the element count below 2^30). */
static int small_domain(const Group *g) {
  int64_t n = literal_count(&g->domain, ~0u);
  return n >= 0 && n < ((int64_t)1 << 30);
}

int stitch_most_vec(const GroupSchedule *s) {
  int most = 1;
  for (int i = 0; i < s->nvariants; i++)
    most = s->variants[i].vec > most ? s->variants[i].vec : most;
  return most;
}

int variant_narrow(const Variant *v) {
  return v->when == WHEN_ROW_NARROWER;
}

/* In the block variant, a row of R = 32 * w * ITEMS * VEC elements takes
 * w warps, not the power of two above them: no thread idles, and every
 * row group is whole, so the instance without row or item guards runs.
 * On an H200, dequantize + RMSNorm (an f8 row, bf16 w and y) at 8192 x
 * 14336 went from 154 to 115 us of kernel time (448 threads, not 512
 * with an eighth idle; bench/NOTES.md, issue 49).  Not the long variant:
 * at the same length (224 threads, not 256) the fp8 per-row quantization
 * lost 1.8% and RMSNorm bf16 moved 0.2%.  Rows that are not whole warps
 * of a thread's elements keep the power of two: the narrow variant's
 * warps for rows that write along them moved -6 to +5% (issue 12). */
int variant_row_warps(const Variant *v) {
  return variant_narrow(v) || v->solo;
}

int variant_part_threads(const Variant *v) {
  return v->roomy ? ROOMY_BLOCK : v->solo ? SOLO_BLOCK : COLUMN_PART_BLOCK;
}

int variant_min_lanes(const Variant *v) {
  return v->min_lanes ? v->min_lanes : v->fit == FIT_SHORT_ROWS ? MIN_ROW_LANES : 32;
}

int variant_exact_rows(const Variant *v) {
  return v->exact_rows && v->fit == FIT_ROW && !v->partials;
}

/* tecc::row_threads(): the block's threads for a row of `len`. */
static int row_threads(const Variant *v, int64_t len) {
  int per = v->items * v->vec;
  int64_t lanes = ceil_div(len, per);
  if (len > 0 && len % (32 * (int64_t)per) == 0 && lanes <= MAX_THREADS)
    return (int)lanes;
  return pow2_at_least(lanes, 32, MAX_THREADS);
}

int stream_chunk(const Variant *v) {
  return (v->wide_items > v->items ? v->wide_items : v->items) * v->vec;
}

/* WHEN_ROW_NARROWER: a row of `len` held in fewer warps than the power
 * of two FIT_ROW would give it. */
static int narrower(const Variant *v, int64_t len) {
  int64_t lanes = ceil_div(len, (int64_t)v->items * v->vec);
  return len <= v->limit && ceil_div(lanes, 32) * 32 < pow2_at_least(lanes, 32, MAX_THREADS);
}

/* The variant's own condition on the row length is known to hold. */
static int length_holds(const Variant *v, int64_t len) {
  if (v->when == WHEN_ROW_NARROWER)
    return len >= 0 && narrower(v, len);
  if (v->when == WHEN_ROW_PACKS)
    return len >= 0 && len <= v->limit && len % v->vec == 0;
  return v->when == WHEN_ROW_AT_MOST && len >= 0 && len <= v->limit;
}

static int length_fails(const Variant *v, int64_t len) {
  if (v->when == WHEN_ROW_NARROWER)
    return len >= 0 && !narrower(v, len);
  if (v->when == WHEN_ROW_PACKS)
    return len >= 0 && (len > v->limit || len % v->vec != 0);
  return (v->when == WHEN_ROW_AT_MOST || v->when == WHEN_CLUSTERS) && len >= 0 && len > v->limit;
}

/* A fitted row block with a literal row length gets its numbers now. */
static void fix_row_fit(Variant *v, int64_t len) {
  if ((v->fit != FIT_ROW && v->fit != FIT_SHORT_ROWS) || len < 0)
    return;
  int short_rows = v->fit == FIT_SHORT_ROWS;
  int64_t lanes = ceil_div(len, (int64_t)v->items * v->vec);
  if (variant_row_warps(v)) /* kept only where R fits */
    v->threads_x = clamp((int)ceil_div(lanes, 32) * 32, 32, v->solo ? SOLO_BLOCK : NARROW_THREADS);
  else if (variant_exact_rows(v))
    v->threads_x = row_threads(v, len);
  else
    v->threads_x = pow2_at_least(lanes, variant_min_lanes(v), short_rows ? 32 : MAX_THREADS);
  v->threads_y = v->threads_x >= v->block ? 1 : v->block / v->threads_x;
  v->fit = FIT_NONE;
}

static void keep(GroupSchedule *s, int *n, int i, int64_t len) {
  Variant v = s->variants[i];
  fix_row_fit(&v, len);
  s->variants[(*n)++] = v;
}

/* Keeps what can run: the first variant whose row length holds (then, when
 * 32-bit indices may not do, the last one, which always runs), with the
 * ones before it that cannot be ruled out. */
static void decide(GroupSchedule *s, int64_t len, int small) {
  int n = 0, last = s->nvariants - 1;
  for (int i = 0; i <= last; i++) {
    if (length_fails(&s->variants[i], len))
      continue;
    keep(s, &n, i, len);
    if (s->variants[i].when == WHEN_ALWAYS)
      break;
    if (length_holds(&s->variants[i], len)) { /* and the stream for rows whose shared memory the device lacks */
      if (!small || s->variants[i].shared_bytes)
        keep(s, &n, last, len);
      break;
    }
  }
  s->nvariants = n;
}

static int64_t reduced_length(const Group *g) {
  uint32_t axes = g->kind == GROUP_STITCH ? g->stitch->axes : g->kind == GROUP_REDUCE ? g->reduce->axes : 0;
  return literal_count(&g->domain, axes);
}

/* ---- the pass ------------------------------------------------------------ */

/* A fitted block counts as 1024 threads, so the kernels' bound keeps 64
 * registers a thread: bounds of 128-512 (up to 98 registers, 23-31%
 * occupancy) cost softmax bf16 rows 10-12 points of copy (bench/NOTES.md).
 * A block fixed by literal sizes is bound by its own threads (not
 * measured yet); EARLY instances by early_threads(). */
static int max_threads(const GroupSchedule *s) {
  int most = 1;
  for (int i = 0; i < s->nvariants; i++) {
    const Variant *v = &s->variants[i];
    int n = v->fit == FIT_NONE ? v->threads_x * v->threads_y : v->partials ? COLUMN_PART_BLOCK : MAX_THREADS;
    most = n > most ? n : most;
  }
  return most;
}

/* The largest block of variant v (a fitted one: the most its row length
 * limit gives). */
static int most_threads(const Variant *v) {
  int n = v->fit == FIT_NONE ? v->threads_x * v->threads_y : v->block;
  if (v->fit == FIT_ROW && v->limit / ((int64_t)v->items * v->vec) > n)
    n = (int)(v->limit / ((int64_t)v->items * v->vec));
  return n;
}

/* The largest block of a variant that loads early: their __launch_bounds__. */
static int early_threads(const GroupSchedule *s) {
  int most = 0;
  for (int i = 0; i < s->nvariants; i++)
    if (s->variants[i].early && most_threads(&s->variants[i]) > most)
      most = most_threads(&s->variants[i]);
  return most;
}

/* Where the operands read along the row (footprint.h) are indexed by the
 * last kept axes Q only, and not by the ones before them, P (an attention
 * mask [S, S] under scores [B, S, S]: P = B), the rows may be visited
 * batch-fastest (tecc::batch_fastest: in tiles of 64 rows of Q, each for
 * every batch in turn), so that the P rows that read one row of the
 * operand are in flight together and it comes from HBM once, not once a
 * batch.  The sizes decide, at run time (the host passes the kernels
 * t_batch, the batch or 1, emit_stitch_launch.c): in domain order two batches' reads of
 * one row of it are Q rows apart, Q*R*own_bytes of traffic, and past
 * half the L2 the operand no longer stays there.  On an H100
 * softmax(s * 0.125 + m, -1) at 32 x 2048 x 2048 (bench/NOTES.md, ab70 to
 * ab74): f32, 48 MiB apart, 71.9% of copy in domain order, 90.2 batch by
 * batch, 92.1-92.5 in tiles of 64 rows (fewer batches at once, 4 or 8:
 * 85.4, 89.5); bf16, 24 MiB apart, 82.5 in domain order and 63-68 in any
 * of those orders: it reads the mask once (ncu: 277 MB from HBM, not
 * 314), but HBM delivers 1.80 TB/s, not 2.33, with 32 streams 8 MiB
 * apart.  Returns P, or 0 where the order cannot matter. */
static uint32_t batch_axes(const Group *g, const Footprint *f) {
  uint32_t used = f->row_operand_axes, batch = 0;
  int in_q = 0;
  for (int i = 0; i < g->domain.rank; i++) {
    if (dim_is_one(&g->domain, i) || ((g->stitch->axes >> i) & 1u))
      continue; /* not a kept axis */
    if ((used >> i) & 1u)
      in_q = 1;
    else if (in_q)
      return 0; /* an axis of P after one of Q: no two blocks of rows */
    else
      batch |= 1u << i;
  }
  return in_q ? batch : 0;
}

/* A loop group's input of the whole domain that an earlier group of the
 * call also reads (GroupSchedule.reread), or NULL.  The earlier group
 * (a row stitch: rows in order) leaves the tensor's last part in L2; a
 * loop whose first blocks take the domain's end reads it from there.  On
 * an H200 (bench/NOTES.md, issue 48) a batch-norm's normalization after
 * its statistics, x[32, C, S] read again: bf16 10.3% and 7.6% faster
 * (C = 64, S = 12544; C = 2048, S = 392), f32 4.3% and 4.6%. */
static const Value *rereads(const KernelPlan *kp, const Group *g) {
  for (int i = 0; i < g->reads.len; i++) {
    const Value *v = g->reads.items[i];
    if (shape_equal(&v->shape, &g->domain) && read_by_earlier_group(kp, g, v))
      return v;
  }
  return NULL;
}

static GroupSchedule *schedule_group(Arena *a, const KernelPlan *kp, const Group *g, const Target *t) {
  GroupSchedule *s = ARENA_NEW(a, GroupSchedule);
  Footprint f = group_footprint(a, kp, g);
  s->reuse_axis = -1;
  s->reuse = 1;
  s->steps = 1;
  s->cls = class_of(g);
  s->held = footprint_held(&f);
  s->budget = footprint_budget(&f, HELD_REGISTERS);
  s->keep = f.keep;
  switch (s->cls) {
  case CLASS_ELEMENTWISE:
    elementwise(a, s, &f, g);
    s->reread = rereads(kp, g);
    s->reread_last = s->reread && s->reread->dtype != DT_F64 && !read_by_later_group(kp, g, s->reread);
    break;
  case CLASS_ROW: case CLASS_COLUMN: reduction(a, s, &f, g); break;
  case CLASS_FULL: full_reduction(a, s, &f); break;
  case CLASS_STITCH_ROW: stitch_row(a, s, &f, t, g); break;
  case CLASS_STITCH_COLUMN: stitch_column(a, s, &f, g); break;
  }
  if (s->cls == CLASS_STITCH_ROW) {
    one_read_stream(s, g);
    odd_rows(s, g);
    shared_rows(s, g, &f);
    s->batch = batch_axes(g, &f);
    s->batch_bytes = f.own_bytes;
    s->batch_limit = t->l2_bytes / 2;
  }
  if (s->cls == CLASS_STITCH_ROW || s->cls == CLASS_STITCH_COLUMN)
    ahead_variants(s, g, &f);
  if (g->kind == GROUP_STITCH) {
    int64_t len = reduced_length(g);
    s->decided = len >= 0;
    s->small = small_domain(g);
    decide(s, len, s->small);
  }
  s->max_threads = max_threads(s);
  s->early_threads = early_threads(s);
  s->final_threads = s->cls == CLASS_FULL ? FINAL_THREADS : ELEMENTWISE_THREADS;
  return s;
}

/* Group n reads one of group g's results. */
static int reads_result_of(const Group *n, const Group *g) {
  for (int i = 0; i < n->reads.len; i++)
    for (int r = 0; r < g->roots.len; r++)
      if (n->reads.items[i] == g->roots.items[r])
        return 1;
  return 0;
}

/* The tensors a one launch of reduction g and loop n keeps in shared
 * memory between the two (GroupSchedule.one_held): those both read in
 * whole packs at the domain's own positions, where both move packs of as
 * many elements (the loop's pack j of a thread is then the steps' pack
 * j).  The cast of the per-tensor fp8 quantization read x from HBM a
 * second time past what L2 kept: its first packs, those L2 has lost by
 * the barrier, now come from the blocks' shared memory.  At most two of
 * the steps' ITEMS a thread (8 packs, 32 KB a block of 256): holding all
 * the device has room for (13 packs of 16 bytes at 4 blocks an SM on an
 * H200) was 3% slower than none at 4096 x 4096 and 8192 x 14336; 4, 5,
 * 6, 8 and 10 were measured, 8 the fastest nearly everywhere (8192 x
 * 4096 0.95 of none, 2048 x 4096 0.91; 3072 x 4096 1.015, bench/NOTES.md). */
static void one_launch_held(Arena *a, const KernelPlan *kp, Group *g, const Group *n) {
  GroupSchedule *s = g->schedule;
  if (s->variants[0].vec != n->schedule->variants[0].vec)
    return;
  for (int i = 0; i < g->reads.len; i++) {
    Value *v = g->reads.items[i];
    if ((v->op == IR_INPUT || kp->stored[v->id]) && shape_equal(&v->shape, &g->domain) &&
        vec_contains(&n->reads, v))
      vec_push(a, &s->one_held, v);
  }
  s->one_held_steps = 2 * s->variants[0].items;
}

/* A full reduction whose result the loop after it, over the same domain,
 * reads: both in one launch (GroupSchedule.one_launch).  The three
 * launches cost the gaps between them and each kernel's ramp and tail:
 * on an H200 (bench/NOTES.md, issue 49) a hand-written form of it made
 * the per-tensor fp8 quantization of 8192 x 4096 bf16 3.5% faster, of
 * 4096 x 4096 7%, 8192 x 14336 the same.  Not for loops that take
 * several positions along an axis or load in steps (their own orders). */
static void one_launch(Arena *a, KernelPlan *kp) {
  for (int j = 0; j + 1 < kp->groups.len; j++) {
    Group *g = kp->groups.items[j], *n = kp->groups.items[j + 1];
    GroupSchedule *s = g->schedule;
    if (g->kind != GROUP_REDUCE || s->cls != CLASS_FULL || n->kind != GROUP_LOOP)
      continue;
    if (!shape_equal(&g->domain, &n->domain) || !reads_result_of(n, g))
      continue;
    if (n->schedule->reuse_axis >= 0 || n->schedule->steps > 1 || n->schedule->variants[0].when != WHEN_ALIGNED)
      continue;
    s->one_launch = 1;
    s->final_threads = s->variants[0].threads_x;
    one_launch_held(a, kp, g, n);
    j++; /* the loop is taken */
  }
}

/* A split plan's three groups over [B, C, S...] (split.c): the row
 * stitch's partials of each (b, c) row (reducing the trailing axes S),
 * the column stitch that folds them over B, the loop over the domain
 * after them.  In one
 * persistent launch (GroupSchedule.lag) a row's normalization runs a
 * fixed distance behind its statistics and reads the row from L2, where
 * the three launches read x from HBM twice: a hand-written kernel of it
 * took 0.86x the time at 32 x 64 x 12544 f32 on an H100 (bench/NOTES.md,
 * issue 48). */
static void lag_launch(KernelPlan *kp) {
  if (kp->groups.len != 3)
    return;
  Group *g = kp->groups.items[0], *f = kp->groups.items[1], *n = kp->groups.items[2];
  if (g->kind != GROUP_STITCH || g->sched != SCHED_ROW || f->kind != GROUP_STITCH || f->sched == SCHED_ROW ||
      n->kind != GROUP_LOOP)
    return;
  const int rank = g->domain.rank;
  const uint32_t all = (1u << rank) - 1, rows = g->stitch->axes;
  if (rank < 3 || f->domain.rank != rank || !shape_equal(&g->domain, &n->domain) || f->stitch->axes != 1u ||
      (rows & 3u) || ((all & ~rows) & ((all & ~rows) + 1)) || g->stitch->columns.len || f->stitch->columns.len)
    return; /* g reduces a trailing run of axes past 0 and 1, f axis 0 of its rows' results */
  for (int i = 0; i < rank; i++)
    if (rows & (1u << i) ? !dim_is_one(&f->domain, i) : !dim_equal(g->domain.d[i], f->domain.d[i]))
      return;
  if (n->schedule->reuse_axis >= 0 || n->schedule->steps > 1 || !reads_result_of(n, f) || !reads_result_of(f, g))
    return;
  if (!g->plan->row_packs || g->plan->row_runs || !g->plan->pack_bytes)
    return;
  for (int i = 0; i < g->plan->packed.len; i++) { /* the loop's packs of them: the launch checks their alignment */
    const Value *v = g->plan->packed.items[i];
    if (!shape_equal(&v->shape, &g->domain) || !vec_contains(&n->reads, v))
      return;
  }
  g->schedule->lag = 1;
}

static void schedule_plan(Arena *a, KernelPlan *kp, const Target *t) {
  for (int j = 0; j < kp->groups.len; j++) {
    Group *g = kp->groups.items[j];
    g->schedule = schedule_group(a, kp, g, t);
  }
  one_launch(a, kp);
  lag_launch(kp);
}

/* The longest rows a row stitch keeps its column sums for (KernelPlan.apart):
 * those of its register variants, and of its cluster one where the row
 * has one level of reductions.  Longer rows run the plan with the sums
 * apart: on an H100 (bench/NOTES.md, issue 46) the row stitch's stream
 * took layernorm bf16 1024 x 65536 to 1694 us where the two groups took
 * 348, rmsnorm bf16 128 x 262144 to 569 where they took 162; and a
 * cluster that all-reduces two levels a row across its blocks lost too
 * (layernorm bf16 4096 x 11008 520 us, apart 219), where one level
 * (rmsnorm) kept up with them (184 and 181 us) or won (2048 x 32768: 231
 * and 437).  Where the apart plan is the split kernel (fuse.c,
 * plan_unsplit()), only the register variants' rows: a channel that the
 * registers do not hold streamed twice (batchnorm bf16 32 x 256 x 3136,
 * 48.6 us against the split plan's 41.8 on an H200), and the cluster
 * variant of rows of several runs has not been measured. */
static int64_t rows_apart(const KernelPlan *kp, const Group *g) {
  const GroupSchedule *s = g->schedule;
  int64_t most = 0;
  for (int i = 0; i < s->nvariants; i++) {
    const Variant *v = &s->variants[i];
    int kept = v->storage == STORE_REGISTERS ||
               (v->storage == STORE_CLUSTER && g->stitch->nlevels == 1 && !kp->apart_split);
    if (kept && v->limit > most)
      most = v->limit;
  }
  return most;
}

/* The apart plan runs rows longer than `than` only: its row stitch of
 * those rows leaves out the variants of rows no longer (their instances
 * would never run), and its cluster variant, whose instance for rows
 * that are not whole packs (in shared memory) did not always run where
 * the aligned one did: a misaligned call of layernorm f32's gradient at
 * 64 x 40000 gave other bits than an aligned one (tecc-conform, H200;
 * without the cluster the two match, and the stream is as fast there). */
static void rows_longer(Group *g, int64_t than) {
  GroupSchedule *s = g->schedule;
  int n = 0;
  for (int i = 0; i < s->nvariants; i++) {
    const Variant *v = &s->variants[i];
    int by_length = when_uses_limit(v->when);
    if ((!by_length || v->limit > than) && v->storage != STORE_CLUSTER)
      s->variants[n++] = *v;
  }
  s->nvariants = n;
  s->max_threads = max_threads(s);
  s->early_threads = early_threads(s);
}

/* Every tensor g moves in packs has elements of `bytes`. */
static int one_element_size(const Group *g, int bytes) {
  for (int i = 0; i < g->plan->packed.len; i++)
    if (dtype_size(((const Value *)g->plan->packed.items[i])->dtype) != bytes)
      return 0;
  for (int i = 0; i < g->roots.len; i++) {
    const Value *r = g->roots.items[i];
    if (shape_equal(&r->shape, &g->domain) && dtype_size(r->dtype) != bytes)
      return 0;
  }
  return 1;
}

/* Runs that are not whole packs but whole half packs (bf16 rows of runs
 * of 196, a 14 x 14 feature map: not 16 bytes but 8) take, first, the
 * longest register variant at half the VEC, up to the rows it holds
 * (WHEN_RUNS_HALF; emit_cu.c's entry runs the split plan for others): on
 * an H200 a batch norm of bf16 16 x 1024 x 196 took 5.6 us where the
 * split plan took 11.5, f32 16 x 1024 x 98 5.1 where it took 10.2
 * (bench/NOTES.md).  16-bit and f32 rows whose tensors moved in packs are
 * all of one element size (the unaligned loads of 16-bit packs take 8 or
 * 4 elements, of 8-bit ones 16 or 8). */
static void half_runs(Arena *a, Group *g) {
  GroupSchedule *s = g->schedule;
  Variant half = s->variants[s->nvariants - 1];
  if ((half.vec != 8 && half.vec != 4) || !one_element_size(g, PACK_BYTES / half.vec))
    return;
  half.name = "half";
  half.when = WHEN_RUNS_HALF;
  half.vec /= 2;
  half.limit /= 2; /* its threads, half the elements a pack */
  half.whole = 0;
  half.ahead = 0; /* its packs of 8 bytes: no AHEAD instance (ahead_bytes()) */
  *insert_variant(a, s, 0) = half;
}

/* The main plan's rows, where its apart plan is the split kernel: the
 * entry runs it for rows no longer than its register variants hold, in
 * 32-bit indices, whose runs are whole packs, and the split plan for any
 * other call (emit_cu.c, emit_apart_call()).  So its register variants
 * alone, the last one unconditional, of at most 8 items: rows that are
 * not whole aligned packs (misaligned pointers) load element by element,
 * which at 16 items spilled 512 bytes (bf16 rows held at VEC 4 for an f32
 * output; ptxas -v, sm_90), and are not held in shared memory, which
 * falls back to the stream on a device without the room. */
static int runs_variants(Arena *a, Group *g) {
  GroupSchedule *s = g->schedule;
  int n = 0;
  for (int i = 0; i < s->nvariants; i++) {
    const Variant *v = &s->variants[i];
    if (v->storage == STORE_REGISTERS && when_uses_limit(v->when) && v->items <= RUNS_MAX_ITEMS) {
      s->variants[n] = *v;
      s->variants[n].shared_bytes = 0;
      s->variants[n++].ahead = 0;
    }
  }
  if (!n) /* literal rows longer than the registers hold */
    return 0;
  s->variants[n - 1].when = WHEN_ALWAYS;
  s->nvariants = n;
  half_runs(a, g);
  s->max_threads = max_threads(s);
  s->early_threads = early_threads(s);
  return 1;
}

static int same_rows(const Group *a, const Group *b) {
  return a->kind == GROUP_STITCH && b->kind == GROUP_STITCH && a->sched == b->sched &&
         a->stitch->axes == b->stitch->axes && shape_equal(&a->domain, &b->domain);
}

/* p->kernels[i] becomes its apart plan, under the kernel's own name. */
static void take_apart(Module *m, FusionPlan *p, int i) {
  KernelPlan *kp = p->kernels[i];
  if (kp->apart_split) { /* the split kernel's own values */
    kp->apart->kernel->name = kp->kernel->name;
    m->kernels[i] = kp->apart->kernel;
  } else {
    kp->apart->kernel = kp->kernel;
  }
  p->kernels[i] = kp->apart;
}

/* With literal sizes only the plan that runs is left (the apart plan then
 * takes the kernel's own name); and the split plan alone where the rows'
 * run is literal (stitch_plan.c, runs_whole_packs(): the plan before the
 * split would load it element by element) or literal rows are longer than
 * its register variants hold. */
static void choose_apart(Arena *a, Module *m, FusionPlan *p, int i) {
  KernelPlan *kp = p->kernels[i];
  Group *g = kp->groups.items[kp->apart_group];
  if (kp->apart_split && (!g->plan->row_runs || !runs_variants(a, g))) {
    take_apart(m, p, i);
    return;
  }
  kp->apart_len = rows_apart(kp, g);
  for (int j = 0; j < kp->apart->groups.len; j++)
    if (same_rows(kp->apart->groups.items[j], g))
      rows_longer(kp->apart->groups.items[j], kp->apart_len);
  int64_t len = reduced_length(g);
  if (len >= 0 && len <= kp->apart_len) {
    kp->apart = NULL;
    kp->apart_split = 0; /* alone, it takes 64-bit indices too (emit_cu.c, emit_entry()) */
  } else if (len >= 0) {
    take_apart(m, p, i);
  }
}

void schedule_module(Compilation *c, Module *m, FusionPlan *p) {
  Target t = target_of(c->opts.arch);
  for (int i = 0; i < m->nkernels; i++) {
    KernelPlan *kp = p->kernels[i];
    schedule_plan(c->arena, kp, &t);
    if (kp->apart) {
      schedule_plan(c->arena, kp->apart, &t);
      choose_apart(c->arena, m, p, i);
    }
  }
}

/* ---- --emit=plan ----------------------------------------------------------- */

const char *variant_condition_text(Arena *a, const Variant *v, int first) {
  switch (v->when) {
  case WHEN_ALWAYS: return first ? "always" : "otherwise";
  case WHEN_ALIGNED: return "when every tensor moved in packs is aligned to its pack";
  case WHEN_LEN_AT_MOST: return arena_printf(a, "when R <= %lld", (long long)v->limit);
  case WHEN_ROW_AT_MOST: return arena_printf(a, "when R <= %lld and 32-bit indices do", (long long)v->limit);
  case WHEN_ROW_PACKS:
    return arena_printf(a, "when R <= %lld, R %% %d == 0 and 32-bit indices do", (long long)v->limit, v->vec);
  case WHEN_ROW_NARROWER:
    return arena_printf(a, "when R <= %lld, 32*ceil(R/%d) < pow2 >= R/%d (a power of two would leave warps idle) and "
                           "32-bit indices do", (long long)v->limit, 32 * v->items * v->vec, v->items * v->vec);
  case WHEN_ROW_FITS: return "when R <= TY*ITEMS and 32-bit indices do";
  case WHEN_COLUMN_GROUPS:
    return arena_printf(a, "when ceil(rows/(8*%d)) >= 3/4 of the SMs", v->vec);
  case WHEN_COLUMN_SPLIT: /* before the stream of packs where the columns compute software math */
    return arena_printf(a, "when %sR holds two chunks of %d or more",
                        v->split_bound ? "" : "its groups of columns leave SMs idle and ", v->split_rows);
  case WHEN_RUNS_HALF:
    return arena_printf(a, "when the rows' runs are not whole packs of %d, R <= %lld and 32-bit indices do", 2 * v->vec,
                        (long long)v->limit);
  case WHEN_CLUSTERS:
    return arena_printf(a, "when R <= %lld, %s, 32-bit indices do and the device launches clusters",
                        (long long)v->limit, v->loops ? "for any number of rows"
                        : v->pair_loops ? "the device holds a cluster for every row at once or a row fits two blocks"
                                        : "the device holds a cluster for every row at once");
  }
  unreachable();
}

static const char *block_text(Arena *a, const Variant *v) {
  switch (v->fit) {
  case FIT_NONE:
    return v->threads_y > 1 ? arena_printf(a, "block %d x %d", v->threads_x, v->threads_y)
                            : arena_printf(a, "block %d", v->threads_x);
  case FIT_ROW:
    if (v->split == 0) /* a plain row reduction (reduction()) */
      return arena_printf(a, "block T x %d/T, T = pow2 in [%d, %d] >= R/%d", v->block, variant_min_lanes(v), v->block,
                          v->items * v->vec);
    if (variant_narrow(v))
      return arena_printf(a, "block T x max(1, %d/T), T = 32*ceil(R/%d) (the warps the row needs), bound to %d "
                             "blocks of up to %d threads an SM", v->block, 32 * v->items * v->vec, NARROW_BLOCKS,
                          NARROW_THREADS);
    if (v->solo)
      return arena_printf(a, "block T, T = 32*ceil(R/%d) (the warps the row needs), bound to one block of up to %d "
                             "threads an SM", 32 * v->items * v->vec, SOLO_BLOCK);
    if (v->block == 1)
      return arena_printf(a, "block T, T = pow2 in [32, %d] >= R/%d", v->partials ? variant_part_threads(v) : MAX_THREADS,
                          v->items * v->vec);
    if (variant_exact_rows(v))
      return arena_printf(a, "block T x max(1, %d/T), T = R/%d where that is whole warps, else pow2 in [32, 1024] "
                             ">= R/%d", v->block, v->items * v->vec, v->items * v->vec);
    return arena_printf(a, "block T x max(1, %d/T), T = pow2 in [32, %s] >= R/%d", v->block,
                        v->partials ? arena_printf(a, "%d", variant_part_threads(v))
                        : v->one_read ? "256 when rows >= 6*SMs, 512 when rows >= 2*SMs (a single read of each "
                                        "row), else 1024" : "1024",
                        v->items * v->vec);
  case FIT_SHORT_ROWS:
    return arena_printf(a, "block T x %d/T, T = pow2 in [%d, 32] >= R/%d (%d/T rows a warp)%s", v->block,
                        MIN_ROW_LANES, v->items * v->vec, 32,
                        v->partials ? "" : ", or one warp where that keeps as many warps an SM (the device's "
                                           "occupancy, at launch)");
  case FIT_CLUSTER:
    return arena_printf(a, "block %d, cluster C = ceil(R/%d) blocks, a row per cluster", v->threads_x,
                        v->threads_x * v->items * v->vec);
  case FIT_COLUMN_SPLIT:
    return arena_printf(a, "block TX x %d/TX, TX = pow2 in [8, 32] >= rows/%d, a block per group of TX*%d "
                           "columns and chunk of R", v->block, v->vec, v->vec);
  case FIT_COLUMNS:
    return arena_printf(a, "block TX x TY, TX = 32, 16 or 8 threads of %d column(s) (the most that leave 2 blocks "
                           "per SM%s, else 8), TY = pow2 in [32, 1024/TX] >= R/%d", v->vec,
                        v->storage == STORE_REGISTERS ? " and hold R" : "", v->items);
  }
  unreachable();
}

static const char *grid_text(Arena *a, const Variant *v) {
  if (v->fit == FIT_CLUSTER && v->partials)
    return arena_printf(a, "grid = the clusters the device holds at once, each looping over rows, each cluster's "
                           "column partials a row of the workspace, then summed in cluster order by a second kernel%s",
                        v->prefetch ? ", the next row loaded while this one computes" : "");
  if (v->fit == FIT_CLUSTER)
    return v->loops || v->pair_loops ? "grid = the clusters the device holds at once, each looping over rows"
                                     : "grid = a cluster per row";
  if (v->fit == FIT_COLUMN_SPLIT)
    return arena_printf(a, "grid = groups x C, C = min(floor(%d*SMs/groups) (2 where that is 1 and %d*SMs > "
                           "groups), R/%d, 1024) chunks of R, each chunk's partial results into the workspace, then a "
                           "second kernel folds them in chunk order and writes its chunk",
                        v->split_sm_blocks, v->split_sm_blocks, v->split_rows);
  if (v->storage == STORE_NONE) /* elementwise: emit_cu.c, emit_loop_variant */
    return v->items > 1 ? arena_printf(a, "grid = ceil(n/(%d*VEC*%d)), %d packs per thread", v->threads_x * v->threads_y,
                                       v->items, v->items)
                        : arena_printf(a, "grid = ceil(n/(%d*VEC)), a pack per thread", v->threads_x * v->threads_y);
  if (v->partials)
    return arena_printf(a, "grid <= SMs*%d/(block threads), each block's column partials folded into a row of "
                           "the workspace, then summed in block order by a second kernel%s", v->sm_threads,
                        v->roomy ? ", 128 registers a thread, the next rows loaded while these compute"
                        : v->solo ? arena_printf(a, ", 128 registers a thread, each block looping over rows%s",
                                                 v->prefetch ? ", the next row loaded while this one computes" : "")
                                  : "");
  if (v->prefetch && v->cover_bytes)
    return arena_printf(a, "grid <= SMs*%d/(block threads), TY*%d rows a block at a time, or, where the rows' "
                           "bytes exceed the L2 cache, grid = ceil(rows/(TY*%d)); %d rows a thread, the next rows "
                           "loaded while these compute", v->sm_threads, v->rows, v->rows, v->rows);
  if (v->prefetch)
    return arena_printf(a, "grid <= SMs*%d/(block threads), TY*%d rows a block at a time, %d rows a thread, the "
                           "next rows loaded while these compute", v->sm_threads, v->rows, v->rows);
  if (v->sm_threads == 0 && v->rows > 1)
    return arena_printf(a, "grid = ceil(rows/(TY*%d)), a block per TY*%d rows, %d rows a thread", v->rows, v->rows,
                        v->rows);
  if (v->sm_threads == 0)
    return v->threads_y > 1 || v->fit != FIT_NONE ? "grid = ceil(rows/TY), a block per TY rows" : "grid = rows";
  if (v->fit == FIT_NONE)
    return arena_printf(a, "grid <= %d*SMs", v->sm_threads / (v->threads_x * v->threads_y));
  if (v->one_read)
    return arena_printf(a, "grid <= SMs*%d/(block threads), blocks of 256 six an SM where their registers let it hold "
                           "them (the device's occupancy, at launch)", v->sm_threads);
  return arena_printf(a, "grid <= SMs*%d/(block threads)", v->sm_threads);
}

static void variant_text(Buf *b, Arena *a, const GroupSchedule *s, const Variant *v, int first) {
  buf_printf(b, "    variant %s (%s): %s, VEC %d", v->name, variant_condition_text(a, v, first),
             storage_name(v->storage), v->vec);
  if (v->storage == STORE_REGISTERS || v->storage == STORE_CLUSTER || v->storage == STORE_STREAM)
    buf_printf(b, ", ITEMS %d", v->items);
  if (v->wide_items && v->items64)
    buf_printf(b, " (%d where 32-bit indices do, %d with 64-bit ones)", v->wide_items, v->items64);
  else if (v->wide_items)
    buf_printf(b, " (%d where 32-bit indices do)", v->wide_items);
  else if (v->items64)
    buf_printf(b, " (%d with 64-bit indices)", v->items64);
  if (v->long_items)
    buf_printf(b, " (%d where 32-bit indices do, the row is whole aligned packs, %d or more, and needs no split)",
               v->long_items, v->long_packs);
  if (v->split_items)
    buf_printf(b, " (%d in the second phase)", v->split_items);
  if (v->min_blocks)
    buf_printf(b, ", the kernel bound to %d block an SM or more", v->min_blocks);
  if (v->split_bound)
    buf_printf(b, ", its instances bound to %d blocks an SM (%d with 64-bit indices)", v->split_bound,
               v->split_bound - 1);
  if (v->odd_items)
    buf_printf(b, ", and %d (%d with 64-bit indices) where the rows are not whole aligned packs%s", v->odd_items,
               v->odd_items64, v->folds ? " (a chunk's online sums or moments folded that many packs at a time in every "
                                          "instance)" : "");
  if (v->rows > 1)
    buf_printf(b, ", ROWS %d", v->rows);
  buf_printf(b, ", %s, %s", block_text(a, v), grid_text(a, v));
  if (v->shared_bytes)
    buf_printf(b, ", rows that are not whole aligned packs held in shared memory (%d bytes a thread, the element "
                  "loops %d items at a time; the stream where the device has not that much a block)",
               v->shared_bytes, v->items >= 2 * SHARED_UNROLL ? SHARED_UNROLL : SHARED_UNROLL / 2);
  if (v->ahead)
    buf_printf(b, ", in blocks of 1024 threads, where the %s move in aligned packs and the device has the room, a "
                  "block an SM looping over them, the next %s loaded ahead into shared memory while %s "
                  "(%d bytes a thread)", v->fit == FIT_COLUMNS ? "columns" : "rows",
               v->fit == FIT_COLUMNS ? "columns' packs" : "row's packs",
               v->fit == FIT_COLUMNS ? "these compute" : "this one computes", v->ahead * v->items);
  if (v->whole && v->storage == STORE_STREAM)
    buf_printf(b, ", rows of whole chunks without item guards when R %% (T*%d) == 0 and the rows move in aligned packs",
               stream_chunk(v));
  else if (v->whole)
    buf_puts(b, ", whole row groups without row or item guards when R = T*ITEMS*VEC, rows % TY == 0 and the rows "
                "move in aligned packs");
  if (v->early)
    buf_printf(b, " (there the operands read along every row, as a norm's w and b, are loaded with the row, before "
                  "its reductions, in blocks bound at %d threads)", most_threads(v));
  if (v->keeps)
    buf_puts(b, ", in blocks of 1024 threads where the rows of a wave (a block an SM) fill more than half of L2 "
                "the row's first packs of each value read again (4 or 8 bytes, 16-bit ones in pairs) kept in shared "
                "memory for the later passes, as many as fit (in 152 KB with the kernel's own while the wave fits in "
                "L2)");
  if (v->split == SPLIT_PER_BLOCK)
    buf_printf(b, ", packs loaded whole when every packed tensor is aligned, else element by element (the same "
                  "sums, bit for bit), a partial per block combined in block order by one block of %d",
               s->final_threads);
  if (v->split == 0 && v->fit != FIT_COLUMN_SPLIT)
    buf_printf(b, ", split: S = min(ceil(4*SMs/grid), R/(16*lanes), 1024) chunks when the grid is short%s, "
                  "combined in chunk order", v->fit == FIT_ROW ? " (whole packs)" : "");
  if (v->split == 0 && v->fit == FIT_ROW)
    buf_puts(b, ", packs loaded whole when the row is whole packs and every packed tensor is aligned, else the same "
                "packs' elements one by one (the same sums, bit for bit)");
  if (v->index_bits)
    buf_printf(b, ", %d-bit indices", v->index_bits);
  else
    buf_puts(b, ", 64-bit indices when a size or count exceeds 2^30, else 32-bit");
  buf_puts(b, "\n");
}

/* ", C % VEC == 0 (...)" where the rows span several axes: a pack stays
 * inside one row of the innermost (stitch_kernel.c, stitch_digit_packs()). */
static const char *digit_packs_text(Arena *a, const Kernel *k, const Group *g, int vec) {
  int n = 0, last = -1;
  for (int i = 0; i < g->domain.rank; i++)
    if (((g->stitch->axes >> i) & 1u) && !dim_is_one(&g->domain, i))
      n++, last = i;
  if (n < 2)
    return "";
  return arena_printf(a, ", %s %% %d == 0 (a pack inside one row of the last reduced axis)",
                      dims_text(a, k, &g->domain, 1u << last), vec);
}

/* Does the group load storage values in packs (at VEC 16: 8-bit ones, not
 * bool, which rows that are not whole packs load element by element)? */
static int packs_storage(const Group *g) {
  for (int i = 0; i < g->plan->packed.len; i++)
    if (dtype_is_storage(((const Value *)g->plan->packed.items[i])->dtype))
      return 1;
  return 0;
}

static void stitch_text(Buf *b, Arena *a, const Kernel *k, const Group *g, const GroupSchedule *s) {
  const Stitch *st = g->stitch;
  buf_printf(b, "    stitch: %d reduction(s) in %d level(s):", st->reduces.len, st->nlevels);
  for (int i = 0; i < st->reduces.len; i++) {
    const Value *r = st->reduces.items[i];
    buf_printf(b, "%s %%%d %s (level %d)", i ? "," : "", r->id, reduce_name(r->rop), st->level[r->id]);
  }
  buf_printf(b, "; %d value(s) held per element, %d element(s) per thread and value\n", s->held, s->budget);
  if (st->columns.len) {
    buf_puts(b, "    column sums (over the rows, as partials each thread adds for its columns):");
    for (int i = 0; i < st->columns.len; i++) {
      const Value *c = st->columns.items[i];
      buf_printf(b, "%s %%%d %s", i ? "," : "", c->id, reduce_name(c->rop));
    }
    buf_puts(b, "\n");
  }
  buf_puts(b, stitch_plan_text(a, g->plan, g->stitch->nvalues, "    "));
  int vec = s->variants[s->variants[0].when == WHEN_RUNS_HALF ? 1 : 0].vec, most = stitch_most_vec(s);
  if (most > 1 && s->cls == CLASS_STITCH_COLUMN)
    buf_printf(b, "    packs: a thread takes VEC neighbouring columns (%d in registers), a pack of each row it reads, "
                  "when the columns are whole packs (rows %% %d == 0) and the pointers aligned, else through the "
                  "aligned 4-byte words a row's columns span where every value a pass loads is 16-bit and held two "
                  "to a word (and 16-bit outputs stored so where the kernel holds such values; a register kernel that loads "
                  "ahead stores whole packs so too in its ITEMS 8 instance that does not), "
                  "element by element "
                  "where not (the same split: the same sums, bit for bit)\n",
               vec, most);
  else if (vec == 8 || (vec == 16 && packs_storage(g))) /* 16- or 8-bit rows: emit_stitch.c, moves_words */
    buf_printf(b, "    packs: a thread takes VEC = %d consecutive elements, moved as one 16-byte pack when R %% %d == 0%s "
                  "and the row pointers are aligned, else through the aligned 4-byte words it spans (the same split: "
                  "the same sums, bit for bit)\n", vec, vec, digit_packs_text(a, k, g, vec));
  else if (vec > 1)
    buf_printf(b, "    packs: a thread takes VEC = %d consecutive elements, moved as one 16-byte pack when R %% %d == 0%s "
                  "and the row pointers are aligned, else element by element (the same split: the same sums, bit "
                  "for bit)\n", vec, vec, digit_packs_text(a, k, g, vec));
  if (s->variants[0].when == WHEN_RUNS_HALF)
    buf_printf(b, "    half packs: runs that are whole packs of %d but not of %d move as packs of %d elements (8 bytes) "
                  "in the variant half\n", vec / 2, vec, vec / 2);
}

/* A value as the plan names it: an input by its name, else as the dumps
 * do. */
static const char *value_text(Arena *a, const Kernel *k, const Value *v) {
  return v->op == IR_INPUT ? k->inputs[v->index].name : ir_value_label(a, v);
}

static void group_text(Buf *b, Arena *a, const Kernel *k, const KernelPlan *kp, const Group *g) {
  const GroupSchedule *s = g->schedule;
  buf_printf(b, "  group %d: %s, class %s, domain %s\n", g->id, group_kind_name(g->kind), class_name(s->cls),
             shape_str(a, k, &g->domain));
  uint32_t axes = g->kind == GROUP_STITCH ? g->stitch->axes : g->kind == GROUP_REDUCE ? g->reduce->axes : 0;
  if (g->kind == GROUP_LOOP)
    buf_printf(b, "    elements n = %s\n", dims_text(a, k, &g->domain, ~0u));
  else
    buf_printf(b, "    rows = %s, row length R = %s\n", dims_text(a, k, &g->domain, ~axes),
               dims_text(a, k, &g->domain, axes));
  if (s->reuse_axis >= 0)
    buf_printf(b, "    reuse: a thread takes %d consecutive positions along %s, its software math (which does not "
                  "vary along it) computed once for them (the grids below count %s as ceil(%s/%d))\n", s->reuse,
               dims_text(a, k, &g->domain, 1u << s->reuse_axis), dims_text(a, k, &g->domain, 1u << s->reuse_axis),
               dims_text(a, k, &g->domain, 1u << s->reuse_axis), s->reuse);
  if (s->steps > 1)
    buf_printf(b, "    steps: a thread loads %d packs, each gathered one after its index, before it computes any, "
                  "where a pack a thread would fill more than a wave (tecc::steps_grid)\n", s->steps);
  if (s->reread)
    buf_printf(b, "    order: blocks from the domain's end (an earlier group read %s in full: what it read last "
                  "is still in L2)%s\n", value_text(a, k, s->reread),
               s->reread_last ? "; its packs loaded evict-first, its last read in the call" : "");
  if (s->batch) {
    const char *q = dims_text(a, k, &g->domain, ~axes & ~s->batch);
    buf_printf(b, "    row order: the batch %s fastest, in tiles of 64 rows of %s, when %s*R*%lld bytes (what moves "
                  "between two batches' reads of one row of an operand broadcast over the batch, in domain order) "
                  "exceed %lld (half the L2); else in domain order\n",
               dims_text(a, k, &g->domain, s->batch), q, q, (long long)s->batch_bytes, (long long)s->batch_limit);
  }
  if (g->kind == GROUP_REDUCE)
    buf_printf(b, "    reduces: %%%d %s\n", g->reduce->id, reduce_name(g->reduce->rop));
  if (g->epilogue.len) {
    buf_puts(b, "    then, from its result, in the thread that writes it:");
    for (int i = 0; i < g->epilogue.len; i++)
      buf_printf(b, " %s", value_text(a, k, g->epilogue.items[i]));
    buf_puts(b, "\n");
  }
  if (g->kind == GROUP_STITCH)
    stitch_text(b, a, k, g, s);
  for (int i = 0; i < s->nvariants; i++)
    variant_text(b, a, s, &s->variants[i], i == 0);
  if (s->one_launch)
    buf_printf(b, "    one launch with group %d when the grid is more than one block, every packed tensor of both "
                  "is aligned and the device holds the whole grid at once: a cooperative grid, the partials, a "
                  "barrier, every block combining them as one block of %d, then group %d's loop over the packs "
                  "each thread read, its last first; else three launches\n",
               g->id + 1, s->final_threads, g->id + 1);
  if (s->lag)
    buf_printf(b, "    one persistent launch with groups %d and %d when indices fit 32 bits, the rows are whole packs of "
                  "both group %d and group %d, of %d bytes to %d x %d packs, and the rows hold more than half of "
                  "L2 (aligned pointers: packs; else one element at a time, the same bits): blocks take rows in tickets, a column's rows in turn, each row's partials and, "
                  "a quarter of L2 (at least a column's rows) behind, its loop; the last of a column's rows folds "
                  "them (group %d's column) for its loops; else three launches\n",
               g->id + 1, g->id + 2, g->id, g->id + 2, LAG_ROW_BYTES, LAG_THREADS, LAG_ITEMS, g->id + 1);
  if (s->one_held.len) {
    buf_puts(b, "    held in shared memory from the steps to the loop: each thread's first packs of");
    for (int i = 0; i < s->one_held.len; i++)
      buf_printf(b, "%s %s", i ? "," : "", value_text(a, k, s->one_held.items[i]));
    buf_printf(b, ", at most %d a thread, as many as the device holds at the grid's blocks an SM; the others "
                  "from L2 or memory\n", s->one_held_steps);
  }
  buf_printf(b, "    bytes moved per call: %s\n", group_bytes(a, k, kp, g));
}

const char *schedule_dump(Arena *a, const Module *m, const FusionPlan *p) {
  Buf b;
  buf_init(&b, a);
  for (int i = 0; i < m->nkernels; i++) {
    const Kernel *k = m->kernels[i];
    const KernelPlan *kp = p->kernels[i];
    buf_printf(&b, "kernel %s: %d launch(es), %d workspace buffer(s), in-place %s\n", k->name, kp->groups.len,
               kp->workspace.len, kp->in_place_ok ? "allowed" : "refused");
    if (kp->apart)
      buf_printf(&b, "  for rows of group %d up to %lld long (longer: the plan below)\n", kp->apart_group,
                 (long long)kp->apart_len);
    for (int j = 0; j < kp->groups.len; j++)
      group_text(&b, a, k, kp, kp->groups.items[j]);
    if (!kp->apart)
      continue;
    buf_printf(&b, "  rows longer than %lld: %s, %d launch(es), %d workspace buffer(s)\n", (long long)kp->apart_len,
               kp->apart_split ? "the reductions split (split.c)" : "the sums over them apart", kp->apart->groups.len,
               kp->apart->workspace.len);
    for (int j = 0; j < kp->apart->groups.len; j++)
      group_text(&b, a, kp->apart->kernel, kp->apart, kp->apart->groups.items[j]);
  }
  return buf_cstr(&b);
}
