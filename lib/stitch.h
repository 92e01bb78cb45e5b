/* stitch.h — stitch fusion (doc/design.md, pipeline steps 5 and 6; H9).
 *
 * At -O1 and -O2, reductions over the same row space (the same argument
 * domain and the same reduced axes, literal-1 axes aside) are clustered
 * into one GROUP_STITCH group, together with the elementwise outputs over
 * that domain or over its row shape.  The group keeps each row on chip:
 * values of the row shape (a reduction's result, 1/sum, rsqrt(var+eps))
 * are per-row scalars in registers, values of the full domain are
 * recomputed from the row (held in registers, or re-read).  It may write
 * several outputs (y, mean, rstd).
 *
 * Legality: a cluster never reads (through elementwise producers) a
 * reduction outside it that depends on one of its members, so the groups
 * stay acyclic; elementwise producers are recomputed in every group that
 * needs them, never stored.
 *
 * Everything lives in the compilation's arena. */
#ifndef TECC_STITCH_H
#define TECC_STITCH_H

#include "groups.h"

typedef struct Stitch {
  uint32_t axes;   /* reduced domain axes (literal-1 axes excluded) */
  PtrVec reduces;  /* Value*: the group's reductions, increasing ids */
  PtrVec columns;  /* Value*: sums (means) over the rows of values of the domain (a norm's dw,
                      db), added up in column partials as the rows go by, then summed in a
                      fixed order by a second stage; nothing in the group reads them */
  int nlevels;     /* reduction levels: a level reads only earlier ones */
  int *level;      /* by value id (< nvalues): 1..nlevels for the group's reductions; for another value
                      the highest level of those it reads, 0 for none */
  int nvalues;
  int nmerged;     /* loop groups merged in (for --explain) */
} Stitch;

/* fuse.c calls these from plan_kernel() at -O1 and -O2: the first after
 * the stored and output groups exist (before sorting), the second after
 * members, reads and deps are collected (launch order by dependences).
 * `why` collects --explain lines. */
void stitch_groups(Arena *a, KernelPlan *kp, Buf *why);
void stitch_order_groups(Arena *a, KernelPlan *kp);

/* var(x) lowers to mean((x - mean(x))**2): a level that reads the mean of
 * the level before.  The stream kernel folds such a level into the pass
 * of the level before (emit_stitch.c: Chan's merge of chunk moments), so
 * that it reads the row once for both.  stitch_moment_mean() gives the
 * mean m when `r`, a reduction of g at `level`, is a mean or sum of
 * d * d with d = a - m, m the group's mean of a at level - 1 and a of
 * f32 or f64; else NULL.  stitch_moments_level(): every reduction at
 * `level` is such a second moment (the stitch plan's stream kernel
 * counts its reads of a row: StitchPlan.stream_reads). */
Value *stitch_moment_mean(const Group *g, const Value *r, int level);
int stitch_moments_level(const Group *g, int level);
/* softmax's sum(exp(v - max(v))) is a level that reads the max of the
 * level before; the stream kernel sums it in the max's pass, about the
 * max so far, rescaled as it grows (emit_stitch.c: the online
 * normalizer).  stitch_online_max() gives the max m when `r`, a reduction
 * of g at `level`, is a float sum of exp(v - s) with m the group's max of
 * v at level - 1 and s computed from m and literals only (m itself, or
 * logsumexp's where(isinf(m), 0, m)); else NULL.  stitch_online_level():
 * every reduction at `level` is such a sum. */
Value *stitch_online_max(const Group *g, const Value *r, int level);
int stitch_online_level(const Group *g, int level);
/* The register kernel folds a level of centred sums into the pass of the
 * level before as well, from sums about a shift K, the row's first
 * element (emit_stitch.c, "shifted moments"): one pass and one all-reduce
 * where two took two, the layer norms' forward and backward.
 * stitch_shifted_mean() gives the mean m when `r`, a reduction of g at
 * `level`, is an f32 or f64 mean or sum of d * d or d * o (either order),
 * d = x - m, m the group's mean of x at level - 1, x an input over the
 * whole domain or a float cast of one, and o a value of level - 2 or less
 * that g sums at level - 1 in r's type (layernorm's backward's dy * w:
 * the correction takes that sum) (*other: o, NULL for d * d); else NULL.  stitch_shifted_level(): every
 * reduction at `level` is such a sum. */
Value *stitch_shifted_mean(const Group *g, const Value *r, int level, Value **other);
int stitch_shifted_level(const Group *g, int level);
/* The mean m of g serves only as the centre of the second moments of the
 * level after it (var(x) alone: no output, not stored, read only by the
 * moments' deviations), so a pass that folds those moments needs no sum
 * for it. */
int stitch_mean_only_centres(const KernelPlan *kp, const Group *g, const Value *m);
/* ... and the same for the centred sums of the register kernel's shifted
 * pass (stitch_shifted_level()), which read no deviation from m. */
int stitch_mean_only_shifts(const KernelPlan *kp, const Group *g, const Value *m);
/* Column packs: g is a column stitch group whose one kept axis follows
 * its reduced axes, so a row of the domain is the kept axis, contiguous,
 * and VEC neighbouring columns are VEC neighbouring elements (footprint.c,
 * schedule.c and emit_stitch.c's cvec kernels).  stitch_acc_bytes(): the
 * widest accumulator of g's reductions (f32 for 16-bit data), in bytes. */
int stitch_column_packs(const Group *g);
/* The kept axes of g's domain (literal 1s aside), as a mask. */
uint32_t stitch_kept_axes(const Group *g);
/* How many kept axes g's domain has (literal 1s aside) where they all
 * come before its reduced ones, else 0 (stitch_thread_rows()). */
int stitch_kept_first(const Group *g);
/* Rows of several runs: g is a row stitch group whose domain's axes
 * (literal 1s aside) are reduced ones, then kept ones, then reduced ones
 * again, the inner run (a batch norm's channel of x[B, C, S]: B runs of S
 * elements, C*S apart).  Element r of row o is at (r / RUN) * (K * RUN) +
 * o * RUN + r % RUN, RUN the inner run's elements and K the kept ones',
 * so a pack inside a run is contiguous (StitchPlan.row_runs). */
int stitch_row_runs(const Group *g);
/* The reduced axes of g's domain after its last kept axis (literal 1s
 * aside): the inner run of rows of several runs. */
uint32_t stitch_inner_run(const Group *g);
/* ... whose inner run is one axis of a size variable: that variable, whose
 * tecc::FastDiv the row kernels divide a pack's row index by (a
 * multiply-high, where the division took some twenty instructions a
 * pack); else -1 (a literal run divides by a constant). */
int stitch_runs_divisor(const Group *g);
/* Column split: g is a column packs group whose reductions all come from
 * one read before its outputs (one level, or a max and its online sums)
 * and fold across chunks of rows (float sums, means, maxima and minima of
 * one accumulator type): its stream may cut the rows into chunks, a block
 * per chunk and group of columns, the chunks' partial results folded in
 * chunk order by a second kernel (schedule.c's "split", emit_stitch.c). */
int stitch_column_split(const Group *g);
/* v is one of g's column sums (Stitch.columns): a root the group's second
 * stage writes from its column partials. */
int stitch_is_column(const Group *g, const Value *v);
int stitch_acc_bytes(const Group *g);
/* The accumulator type of reduction r: f32 for 16-bit data (abi.md §6),
 * else r's own. */
DType stitch_acc_dtype(const Value *r);
/* The shared memory of tecc::column_allreduce_vec per column a thread:
 * 32 results of 8 bytes and 1024 accumulators (runtime/tecc_rows.cuh). */
int stitch_column_allreduce_bytes(const Group *g);

#endif
