/* schedule.h — tile selection (schedule.c; doc/design.md, pipeline step 6).
 *
 * For each fused group the pass writes a GroupSchedule: the schedule class
 * and a short list of variants, each one kernel instance and its launch.
 * The host stub tries the variants in order and launches the first whose
 * condition holds (the last one's always does).  When the sizes are
 * literal (or bound by -D), the conditions are decided here and only the
 * variant that will run is kept.  The emitters print these records; they
 * choose no numbers of their own.
 *
 * A block is threads_x * threads_y threads.  Row classes: threads_x lanes
 * along a row, threads_y rows per block.  Column classes: threads_x
 * contiguous outputs (columns) per block, threads_y lanes along the
 * reduced axis.  A dimension recorded as 0 is fitted to the sizes at run
 * time by the rule FitRule names (the host code is one line per rule).
 *
 * Everything lives in the compilation's arena. */
#ifndef TECC_SCHEDULE_H
#define TECC_SCHEDULE_H

#include "compile.h"
#include "groups.h"

/* The GPU the schedules assume (--arch). */
typedef struct Target {
  const char *arch; /* "sm_90" */
  int sm;           /* 90 */
  int max_cluster;  /* blocks per cluster with distributed shared memory; 1: none */
  int64_t l2_bytes; /* the L2 cache: 50 MiB on an H100 or H200 */
} Target;

typedef enum SchedClass {
  CLASS_ELEMENTWISE,   /* grid-stride loop over the domain, packs and a tail */
  CLASS_ROW,           /* one reduction over the innermost axes */
  CLASS_COLUMN,        /* one reduction over outer axes: threads along the kept axes */
  CLASS_FULL,          /* one reduction over every axis: two deterministic stages */
  CLASS_STITCH_ROW,    /* a stitch group whose reduced axes are innermost */
  CLASS_STITCH_COLUMN  /* a stitch group whose reduced axes are outer */
} SchedClass;

typedef enum Storage {
  STORE_NONE,      /* elementwise: nothing is held */
  STORE_REGISTERS, /* the row (or the partial results) in registers: one read */
  STORE_CLUSTER,   /* a row split over the blocks of a cluster, each part in
                      registers, row results through distributed shared
                      memory (sm_90): one read */
  STORE_STREAM     /* each pass re-reads the row (from L2 while it fits) */
} Storage;

typedef enum When {
  WHEN_ALWAYS,
  WHEN_ALIGNED,      /* every tensor moved in packs is aligned to its pack */
  WHEN_LEN_AT_MOST,  /* the reduced length <= limit */
  WHEN_ROW_AT_MOST,  /* the row (reduced) length <= limit, and 32-bit indices do */
  WHEN_ROW_PACKS,    /* WHEN_ROW_AT_MOST, and the row length a multiple of vec (whole packs) */
  WHEN_ROW_NARROWER, /* WHEN_ROW_AT_MOST, and the warps that cover the row (items * vec * 32
                        elements a warp) are fewer than the power of two FIT_ROW would take */
  WHEN_ROW_FITS,     /* the fitted block holds the row (len <= threads_y * items), 32-bit indices do */
  WHEN_COLUMN_GROUPS, /* column stream: its column groups (8 threads of VEC columns) give
                        3/4 of the SMs a block */
  WHEN_CLUSTERS,     /* len <= limit, 32-bit indices do, the device launches clusters and
                        (unless the variant loops) holds a cluster for every row at once */
  WHEN_COLUMN_SPLIT, /* column stream: its groups of columns alone leave SMs idle, so the
                        rows are cut into chunks (tecc::column_chunks() > 1) */
  WHEN_RUNS_HALF     /* rows of several runs: the inner run is not whole packs of the group's
                        VEC (2 * vec), len <= limit and 32-bit indices do (half packs) */
} When;

typedef enum FitRule {
  FIT_NONE,      /* every dimension is recorded */
  FIT_ROW,       /* threads_x = the power of two in [32, 1024] >= len / (items * vec) (a
                    narrow variant: the multiple of 32 >= it); threads_y = max(1, block /
                    threads_x) rows */
  FIT_SHORT_ROWS, /* threads_x = the power of two in [4, 32] >= len / (items * vec):
                    several rows per warp; threads_y = block / threads_x rows */
  FIT_CLUSTER,   /* cluster = the power of two >= len / (1024 * items * vec), threads_x = 1024 */
  FIT_COLUMNS,   /* threads_x = 32, 16 or 8 columns (the most that leaves 2 blocks per SM);
                    threads_y = the power of two in [32, 1024 / threads_x] >= len / items */
  FIT_COLUMN_SPLIT /* threads_x = the power of two in [8, 32] >= cols / vec, threads_y = 1024 /
                      threads_x; grid = groups x chunks (tecc::column_chunks) */
} FitRule;

enum { SPLIT_PER_BLOCK = -1 };

/* FIT_SHORT_ROWS: the fewest threads of a row (the emitter's launch code
 * and the plan text name it too). */
enum { MIN_ROW_LANES = 4 };

/* A narrow variant (variant_narrow()): the most threads of its blocks and
 * the blocks an SM its NARROW instance is bound to keep
 * (__launch_bounds__(384, 3): 56 registers a thread). */
enum { NARROW_THREADS = 384, NARROW_BLOCKS = 3 };

/* Variant.shared_bytes: the items the element loops of an instance that
 * holds its row in shared memory unroll at a time, where it holds twice
 * that many or more (else half as many: ITEMS 3 unrolled whole spilled). */
enum { SHARED_UNROLL = 4 };

/* Variant.ahead: the threads of its AHEAD instance's block (the SM's
 * one), and the most dynamic shared memory it may ask of it (the SM's
 * 228 KB less the kernels' own and some L1). */
enum { AHEAD_THREADS = 1024, AHEAD_MOST_BYTES = 160 * 1024 };

/* A lag kernel (GroupSchedule.lag): a row item's packs a thread, the
 * most threads of its block (rows of up to 512 x 8 packs), a thread's
 * registers (TECC_LAG_BOUND: at 64 the loop's steps spilled 4 to 124
 * bytes at 4 and 8 steps, f32 and bf16; at 72 two blocks of 416 threads
 * an SM run), the packs its loop item loads before it stores any (one at
 * a time, the stores of y, which may alias later loads, kept each load
 * waiting on the one before: 0.985 of the three launches' time at 32 x
 * 64 x 12544 f32 on an H100, with 4 at a time 0.931), and its shortest
 * rows in bytes: it was measured at
 * rows of 25 to 64 KB (bench/NOTES.md, issue 48); rows of 12.5 KB ran
 * 1.76x the three launches' time while the grid was sized for another
 * block, and have not run since; much shorter rows would ask more
 * tickets of their one word than it gives at the copy's rate. */
enum { LAG_ITEMS = 8, LAG_THREADS = 512, LAG_REGISTERS = 72, LAG_STEPS = 4, LAG_ROW_BYTES = 16384 };

/* Rows with column partials (Variant.partials): the most threads of a
 * block, and its fitted size. */
enum { COLUMN_PART_BLOCK = 512, COLUMN_PART_SM = 1024 };

/* A roomy variant (Variant.roomy): its blocks' threads, two an SM, so
 * that its ROOMY instances are bound to 128 registers a thread. */
enum { ROOMY_BLOCK = 256 };

/* A solo variant (Variant.solo): the most threads of its blocks, one an
 * SM, so that its SOLO instances are bound to 128 registers a thread, and
 * the registers its held values and partials take of them: with the next
 * row's values loaded ahead, SOLO_AHEAD_REGISTERS (SOLO_AHEAD_LONG_REGISTERS
 * for the longer rows of solo-ahead), else SOLO_REGISTERS
 * (at 80, the instances of rows with positions, tests/grad/programs/
 * grad_positions.te, and f64 column sums, tests/ir/grad-signature.te,
 * spilled 16 to 80 bytes: ptxas -v, sm_90). */
enum { SOLO_BLOCK = 512, SOLO_AHEAD_REGISTERS = 80, SOLO_AHEAD_LONG_REGISTERS = 96, SOLO_REGISTERS = 72 };

typedef struct Variant {
  const char *name;    /* the kernel's suffix and the plan's name: "packed", "block", ... */
  When when;
  int64_t limit;       /* WHEN_LEN_AT_MOST, WHEN_ROW_AT_MOST, WHEN_ROW_PACKS, WHEN_ROW_NARROWER,
                          WHEN_CLUSTERS */
  Storage storage;
  FitRule fit;
  int vec;             /* elements per 16-byte pack (1: one at a time) */
  int items;           /* packs each thread holds (registers) or takes per chunk (stream) */
  int rows;            /* rows a thread holds at once (stitch_thread_rows(); 1: one) */
  int prefetch;        /* registers, rows > 1: a thread loads its next rows while it computes
                          these (the grid a wave: sm_threads); a plain row reduction: a block
                          loads its next row's first step before this row's all-reduce */
  int threads_x, threads_y; /* 0: fitted (fit) */
  int block;           /* FIT_ROW: the threads of a block of short rows */
  int min_lanes;       /* FIT_ROW: the fewest lanes of a row, a power of two (0: a warp's) */
  int cluster;         /* blocks per cluster (1: none; 0: fitted) */
  int sm_threads;      /* grid = min(blocks needed, SMs * sm_threads / block threads);
                          0: the blocks needed (stitch rows held in registers) */
  int cover_bytes;     /* prefetch: the bytes an element of the rows reads; where rows x length x
                          these exceed the L2 cache (tecc::past_l2) the grid is the blocks needed,
                          else sm_threads (0: sm_threads always) */
  int split;           /* reductions: 1 = none, 0 = chosen at run time to fill the GPU,
                          SPLIT_PER_BLOCK: a partial per block, then one block combines them */
  int index_bits;      /* 32 or 64; 0: either, as the sizes need (2^30 and more: 64) */
  int one_read;        /* stream that reads each row once: rows of 512 threads, two blocks
                          an SM, when the rows fill them (FIT_ROW) */
  int wide_items;      /* stream that reads each row again: ITEMS of its instances of
                          32-bit indices (0: items) */
  int items64;         /* stream rows: ITEMS of its instances of 64-bit indices (0: items) */
  int long_items;      /* plain row reduction: ITEMS of its instances of 32-bit indices for rows of
                          whole aligned packs, long_packs or more, that need no split (0: items) */
  int long_packs;
  int odd_items;       /* stream rows: ITEMS of its instances for rows that are not whole packs
                          (PACKS false) of 32-bit indices, and odd_items64 of 64-bit ones (0: as
                          the aligned instances) */
  int odd_items64;
  int min_blocks;      /* streamed columns, the last variant: the kernel's __launch_bounds__
                          minimum of blocks an SM (0: none) */
  int split_items;     /* column split: ITEMS of its second phase, which writes the outputs from
                          the folded partials (0: items) */
  int split_sm_blocks; /* column split: the blocks an SM its chunks aim at (tecc::column_chunks) */
  int split_rows;      /* column split: the least rows of a chunk */
  int split_bound;     /* column split: its instances' __launch_bounds__ minimum of blocks an SM
                          with 32-bit indices (one fewer with 64-bit ones); 0: the kernel's */
  int folds;           /* stream rows with odd_items: the passes that fold a chunk at a time
                          (online sums, moments) fold odd_items (odd_items64) packs at a time,
                          in every instance: the same bits whatever the alignment */
  int keeps;           /* stream that reads each row again: keeps the row's first packs of what
                          it reads again in shared memory, where a wave's rows fill more than
                          half of L2 (tecc::keep_items, emit_stitch.c) */
  int loops;           /* cluster: taken for any number of rows, the clusters the device
                          holds at once looping over them (else only when they hold every row) */
  int pair_loops;      /* cluster, not `loops`: taken for any number of rows too where a row fits a
                          cluster of two blocks, the clusters looping over rows
                          (cluster_pair_loops()) */
  int early;           /* registers, whole: the WHOLE instance loads the row operands' packs (a
                          norm's w and b) with the row, before its reductions (EARLY), bound
                          by GroupSchedule.early_threads */
  int roomy;           /* registers, rows in aligned packs, with partials: the block variant's
                          ITEMS twice over in blocks of ROOMY_BLOCK threads, two an SM (ROOMY: 128
                          registers a thread), the next row group loaded while this one computes */
  int solo;            /* registers, rows with partials longer than the block variant's: a block
                          of the warps the row needs, up to SOLO_BLOCK threads, one an SM (SOLO:
                          128 registers a thread), at the items SOLO_REGISTERS hold (or, with
                          prefetch, SOLO_AHEAD_REGISTERS with the values twice over) */
  int partials;        /* rows with column partials (Stitch.columns): a partial row a block
                          (registers: folded across threadIdx.y; stream: one row a block),
                          summed in block order by a second kernel; never blocks of one warp */
  int shared_bytes;    /* registers, one row a thread: the bytes of held and kept values a thread
                          of its instance for rows that are not whole packs (PACKS false) holds in
                          dynamic shared memory, not registers (its element loops unrolled by
                          SHARED_UNROLL); 0: registers, as the aligned instances */
  int ahead;           /* registers, one row (or group of columns) a thread: the bytes an item of
                          its held values (16 a value) that the AHEAD instance, for rows in aligned
                          packs in blocks of 1024 threads (one an SM), loads ahead into dynamic
                          shared memory, the next row's while this one computes (ahead_bytes();
                          0: none) */
  int exact_rows;      /* registers, a block per row (the block variant): T is the warps a row
                          fills exactly where it is whole warps of ITEMS * VEC elements
                          (variant_exact_rows()) */
  int whole;           /* registers, one row a thread: whole row groups of whole rows (R =
                          T*ITEMS*VEC, rows a multiple of TY) take an instance without row
                          or item guards (WHOLE); stream: rows of whole chunks (R a
                          multiple of T*ITEMS*VEC) one without item guards */
} Variant;

typedef struct GroupSchedule {
  SchedClass cls;
  Variant *variants;  /* tried in order */
  int nvariants;
  int max_threads;    /* the largest block a variant launches: the kernels' __launch_bounds__ */
  int early_threads;  /* the largest block of a variant that loads early: the EARLY instances'
                         __launch_bounds__ (0: none loads early) */
  int final_threads;  /* split reductions: the block of the ordered second stage */
  int held;           /* stitch: full-domain values held per element */
  int budget;         /* stitch: elements a thread may hold per value */
  const char *keep;   /* stitch: by value id, the values kept across passes */
  uint32_t batch;     /* stitch rows: the kept axes P visited fastest when the sizes ask
                         (batch_axes()); 0: the rows in domain order */
  int64_t batch_bytes; /* ... when Q*R*batch_bytes, what moves between two batches' reads of
                         one row of the broadcast operand in domain order, exceeds batch_limit */
  int64_t batch_limit; /* half the target's L2 */
  int small;          /* stitch: the group's element count is literal and under 2^30, so its 32-bit
                         instances fit whatever index width the kernel's other sizes ask (and
                         decide() drops the fallback for 64-bit ones) */
  int decided;        /* stitch: the row length is literal (or bound by -D), so the conditions on it
                         were decided here: only the variants that can run remain (decide()) */
  int reuse_axis;     /* loop: a thread takes `reuse` consecutive positions along this domain
                         axis and computes the software math that does not vary along it
                         once for them (reuse_axis()); -1: a position each */
  int reuse;
  int steps;          /* loop: the packs a thread loads before it computes any, a step each
                         (emit_cu.c, emit_packed_steps()), where a gathered load's address waits
                         on a load of its index: the aligned variants' items; 1: a pack at a time */
  const Value *reread; /* loop: an input of the whole domain an earlier group of the call read in
                         full (a norm's statistics' x): the blocks walk the domain from its end,
                         so that the first ones find what that group read last still in L2
                         (rereads()); NULL: from its start */
  int reread_last;    /* loop: no later group of the call reads `reread`: its packs are loaded
                         evict-first (tecc::load_stream), so that what they miss does not push
                         out of L2 the lines of it the loop has yet to reach.  Not for f64:
                         a pack of two through the hint's 16-byte word took a stack slot in
                         one instance (tests/nvcc/compile.sh, tests/stitch/regress.te) */
  int one_launch;      /* full: the next group, a loop over the same domain that reads the result,
                         runs in the same launch where the host finds the grid more than one
                         block, every packed tensor of both aligned and the device able to hold
                         the whole grid at once (tecc::cooperative_fits): a cooperative grid,
                         the blocks' partials, a barrier (tecc::grid_barrier), every block
                         combining them as the second stage does (final_threads is the first
                         stage's block, so that both ways give the same bits), then the loop
                         over the packs each thread read, its last first (from L2); else the
                         three launches */
  PtrVec one_held;    /* one_launch: Value*, the tensors it keeps in shared memory between the
                         steps and the loop (one_launch_held()): a thread's first packs of
                         each, as many as the device's shared memory holds at the grid's blocks
                         an SM (tecc::held_steps), go to the loop from there, the rest from L2
                         or HBM; empty: none */
  int one_held_steps; /* one_held: a thread's packs of each held, at most (one_launch_held()) */
  int lag;            /* the first of a split plan's three groups (a batch norm's: the rows'
                         partials, their fold a column, the loop), which run in one persistent
                         launch where the host finds the rows whole aligned packs that one
                         block holds (lag_launch(), emit_cu.c): rows normalized LAG rows
                         behind their statistics, their second read from L2; else the three
                         launches */
} GroupSchedule;

/* Fills g->schedule for every group of every kernel. */
void schedule_module(Compilation *c, Module *m, FusionPlan *p);

/* --emit=plan and TECC_DUMP=schedule: the records, group by group. */
const char *schedule_dump(Arena *a, const Module *m, const FusionPlan *p);

/* Variant v is narrow (WHEN_ROW_NARROWER; rows that write nothing along
 * them, schedule.c): FIT_ROW gives it the warps the row needs (not a
 * power of two), at most NARROW_THREADS, and it launches the kernel's
 * NARROW instance, bound to NARROW_BLOCKS blocks an SM. */
int variant_narrow(const Variant *v);

/* FIT_ROW gives variant v the warps the row needs, 32 * ceil(R / (32 *
 * ITEMS * VEC)) threads, not a power of two: the narrow variant and the
 * solo ones (Variant.solo). */
int variant_row_warps(const Variant *v);

/* Variant v is the block variant of rows in registers (Variant.exact_rows;
 * FIT_ROW, not column partials): its T is the warps a row fills exactly
 * where the row is whole warps of ITEMS * VEC elements, else a power of
 * two (tecc::row_threads; schedule.c says why). */
int variant_exact_rows(const Variant *v);
/* The fewest lanes a fitted row of variant v takes (Variant.min_lanes):
 * MIN_ROW_LANES for FIT_SHORT_ROWS and a plain row reduction, whose short
 * rows share a warp as the stitch's warp variant's do; a warp for the
 * other FIT_ROW variants. */
int variant_min_lanes(const Variant *v);
/* A fitted variant with partials: the most threads of its blocks (the
 * launch's cap on T, the plan's words). */
int variant_part_threads(const Variant *v);

/* The widest pack (VEC) of the schedule's variants: the launch's test of
 * whole packs, and the plan's. */
int stitch_most_vec(const GroupSchedule *s);

/* The elements of a row a stream variant's block takes a chunk with the
 * larger of its ITEMS (wide_items): rows of a multiple of t_tx times it
 * run its WHOLE instance. */
int stream_chunk(const Variant *v);

const char *class_name(SchedClass c);
const char *storage_name(Storage s);
/* The names --emit=json gives a When and a FitRule: the enumerator in
 * lower case without its prefix ("row_at_most", "short_rows"). */
const char *when_name(When w);
const char *fit_name(FitRule f);

/* Variant.limit is part of condition w (else it is unused). */
int when_uses_limit(When w);

/* The condition of variant v in words, as --emit=plan and --emit=json
 * write it: "when R <= 4096 and 32-bit indices do"; WHEN_ALWAYS is
 * "always" for the first variant, "otherwise" after others. */
const char *variant_condition_text(Arena *a, const Variant *v, int first);

/* The target of an --arch string (sm_XY); unknown newer ones get sm_90's. */
Target target_of(const char *arch);

#endif
