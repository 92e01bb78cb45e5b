/* stitch_plan.h — a stitch group's kernels as data (stitch_plan.c; the
 * pipeline's "plan" step, after fusion, before tile selection).
 *
 * A stitch group (stitch.h) runs as a register kernel, which reads each
 * row once and holds it, and a stream kernel, which reads the row again
 * in each pass.  The plan says, for both, what each pass folds and reads,
 * and for the group what its kernels take and hold:
 *
 *   - the passes: one per reduction level and one that writes the
 *     outputs along the row; in the stream kernel of rows, a level of
 *     second moments (var) or of online sums (softmax's sum of exp) is
 *     folded in the pass of the level before it (one read for both);
 *     where no output along the row needs a reduction of the group, the
 *     stream kernel writes them in its first pass, and its output pass
 *     reads nothing;
 *   - each pass's reads (the memory values it reads over the whole
 *     domain) and the values it computes whole;
 *   - the values the register kernel keeps in registers across passes
 *     rather than computing them again (`keep`);
 *   - the memory values held per element, those read along the row only
 *     (a norm's w and b), the outputs, the bytes per element;
 *   - the kernels' parameters, in order: the launch passes them, and the
 *     kernel emitter checks that the kernel it writes takes exactly these.
 *
 * One walk over the group's values computes it, visiting a value once per
 * pass and index map as the emitters do; footprint.c, schedule.c and the
 * emitters read it and walk nothing again.  Everything lives in the
 * compilation's arena. */
#ifndef TECC_STITCH_PLAN_H
#define TECC_STITCH_PLAN_H

#include "compile.h"
#include "groups.h"

typedef enum PassKind {
  PASS_LEVEL,   /* folds the reductions of one level */
  PASS_MOMENTS, /* stream kernel: a level's means and the next level's second moments, one read */
  PASS_ONLINE,  /* stream kernel: a level's maxima and the next level's sums of exp, one read */
  PASS_SHIFTED, /* register kernel: a level's means and the next level's centred sums, from sums
                   about the row's first element, one pass (stitch_shifted_level()) */
  PASS_OUTPUT   /* writes the outputs along the row, then the row's own outputs */
} PassKind;

typedef struct PlanPass {
  PassKind kind;
  int level;         /* the first level it folds (PASS_OUTPUT: 0) */
  int levels;        /* the levels it folds: 1, or 2 (moments, online sums, shifted); PASS_OUTPUT: 0 */
  PtrVec reads;      /* Value*: memory values read over the whole domain, first read first */
  PtrVec computed;   /* Value*: values computed over the whole domain (not kept ones read back) */
  PtrVec writes;     /* Value*: the outputs along the row it writes (the stream kernel's first
                        pass where none needs a reduction of the group: stitch_plan.c) */
} PlanPass;

typedef struct PlanKernel {
  PlanPass *passes;
  int npasses;
  uint32_t *read_in; /* by value id: the passes (bit i: passes[i]) that read it over the whole domain */
  uint32_t *along_in; /* by value id: the passes that read it along the row, not over the whole domain */
} PlanKernel;

typedef struct StitchPlan {
  PlanKernel reg;       /* the register kernel: a pass per level, then the outputs; keeps `keep` */
  PlanKernel stream;    /* the stream kernel: nothing kept, shared passes for moments and online sums */
  PtrVec held;          /* Value*: memory values read over the whole domain (the register kernel
                           holds each element once), first read first */
  PtrVec along;         /* Value*: memory values read along the row but not over the whole domain (a
                           norm's w and b, a mask broadcast over a batch) */
  uint32_t along_axes;  /* the kept domain axes those are indexed by */
  int row_packs;        /* rows move in packs (row schedule): each row one contiguous run of the
                           domain, or several (row_runs) */
  int kept_partial;     /* a memory value the group reads or writes, or a position, is indexed by
                           some of the kept axes, not all, or a gather's address needs each kept
                           axis's own index (stitch_thread_rows(): rows of one kept axis then) */
  int row_runs;         /* a row is several runs (stitch_row_runs()): packs never straddle them,
                           as the launch checks (the inner run whole packs) */
  PtrVec packed;        /* Value*: where rows move in packs, what the kernels load in packs (the
                           held values, the row-contiguous ones along the row), first read first */
  PtrVec early;         /* Value*: of those along the row, the ones read at the same offset in
                           every row (a norm's w and b), which a kernel may load with the row */
  const char *keep;     /* by value id: 1 for the values the register kernel keeps across passes */
  int nkept;
  int row_outputs;      /* roots written along the row (softmax's y, not rowstats' mean) */
  int narrow_outputs;   /* of those, 8-bit ones (a quantization's q) */
  int positions;        /* the passes compute positions (`index`): index math an element */
  int stream_reads;     /* the stream kernel's reads of a row: its passes, the output pass only
                           where it writes along the row */
  int own_bytes;        /* bytes read and written per element: the held values, those along
                           the row with rows of their own, the outputs along the row */
  int pack_bytes;       /* rows (or columns) moved in packs: the widest such element; 0: no packs */
  int held_pairs;       /* of the held values, 16-bit ones in packed rows (two to a register) */
  int held_wide;        /* of the held values, 8-byte ones (f64, i64: footprint_budget counts them four) */
  int kept_wide;        /* of the kept values, 8-byte ones */
  int columns;          /* sums over the rows added up as column partials (Stitch.columns): each
                           an accumulator per element a thread holds (ITEMS * VEC) */
  int columns_wide;     /* ... of them, f64 ones */
  PtrVec params;        /* KParam*: the parameters of both kernels, in order */
} StitchPlan;

/* Keeping a value costs registers: only math functions and divisions are
 * worth them; adds, casts and f32 exp (two instructions) are recomputed.
 * Keeping softmax's exp held 64 values a thread and spilled; recomputing
 * it took softmax bf16 from 63-65% to 81% of copy at 32768 x 1024 and
 * 16384 x 4096, softmax f32 4096 x 16384 from 71% to 97% (H100,
 * bench/NOTES.md, issue 12). */
int worth_keeping(const Value *v);

/* A tensor that varies along g's rows and whose last axes are the row's
 * (the same sizes, in order), as a norm's w [N] or an attention mask
 * [S, S] under [B, S, S]: a row of it is contiguous. */
int stitch_row_contiguous(const Group *g, const Shape *s, const int *map);
/* Rows a thread: g is a row stitch group whose kept axes come before its
 * reduced axes, so each row is a contiguous run of the domain and a
 * thread may hold ROWS of them at once, sharing the packs of operands
 * broadcast along the rows (a norm's w and b; schedule.c's warp variant,
 * emit_stitch.c's `rows` kernels).  Several kept axes ([B, S, H, 128], a
 * head-dimension norm) where every tensor the group reads or writes is
 * indexed by all of them or none, and no position or gather needs one
 * axis's own index (StitchPlan.kept_partial is 0: g's plan first): one
 * row index over them.  On an H200 (bench/NOTES.md) quant_block
 * [8192, 32, 128] took 25.2 us where the plain kernel took 25.9. */
int stitch_thread_rows(const Group *g);

/* Sets g->plan for every stitch group of every kernel. */
void plan_stitches(Compilation *c, Module *m, FusionPlan *p);

/* The plan of one group (plan_stitches() calls it). */
StitchPlan *stitch_plan(Arena *a, const KernelPlan *kp, const Group *g);

/* The rank of a parameter in a kernel's list: inputs, scalars, stored
 * reads, outputs, workspace, sizes, fast divisions, reciprocals; then by
 * index. */
int param_rank(const KParam *p);

/* Has the kernel a pass that folds a chunk at a time (the stream
 * kernel's moments and online sums: a chunk's mean, or max, before its
 * squared deviations, or sum of exp)? */
int plan_folds_by_chunk(const PlanKernel *pk);

/* --emit=plan: each kernel's passes, what each reads and computes whole
 * (%<value id>), the register kernel's kept values (of `nvalues`); a line
 * a kernel, indented by `indent`. */
const char *stitch_plan_text(Arena *a, const StitchPlan *sp, int nvalues, const char *indent);

#endif
