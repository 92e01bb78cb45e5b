/* stitch_kernel.h — the shape of one of a stitch group's kernels (the
 * register kernel or the stream kernel): what it moves in packs, how many
 * rows a thread holds, which template parameters it takes, and so which
 * instances it has.  The kernel's body (emit_stitch.c) and its launch
 * (emit_stitch_launch.c) both ask these questions, of the group's plan
 * (stitch_plan.h) and schedule (schedule.h), here, so that the instances
 * one writes are the instances the other launches.
 *
 * Everything lives in the compilation's arena. */
#ifndef TECC_STITCH_KERNEL_H
#define TECC_STITCH_KERNEL_H

#include "emit.h"
#include "schedule.h"
#include "stitch.h"
#include "stitch_plan.h"

typedef struct StitchKernel {
  Arena *a;
  Kernel *k;
  KernelPlan *kp;
  Group *g;
  const Stitch *st;
  const GroupSchedule *sched;
  const EntryNames *names;
  int reg;      /* the register kernel (else the stream kernel) */
  int row;      /* schedule row (else column) */
  int vec;      /* contiguous rows: VEC-element packs (the PACKS instance) */
  int cvec;     /* columns: VEC neighbouring columns a thread, moved in packs */
  int rows;     /* reg kernel of rows: ROWS rows a thread (t_o0 + t_i * blockDim.y) */
  int prefetch; /* rows: an instance of ROWS > 1 or ROOMY loads the next row group ahead (t_n<id>) */
  int roomy;    /* reg kernel of rows with partials: a roomy variant's instances (ROOMY) are bound
                   to two blocks of ROOMY_BLOCK threads an SM (Variant.roomy) */
  int solo;     /* reg kernel of rows with partials: a solo variant's instances (SOLO) are bound
                   to one block of SOLO_BLOCK threads an SM (Variant.solo) */
  int lanes;    /* reg kernel of rows with a warp variant: the lanes of a row, LANES (0: blockDim.x) */
  int whole;    /* rows in packs: the WHOLE instance drops the reg kernel's row and item guards
                   (whole row groups of whole rows), the stream kernel's item guards (rows of
                   whole chunks) */
  int split;    /* the group has a column split variant (its stream kernel takes PHASE) */
  int cluster;  /* reg kernel: a row may span a thread-block cluster (CLUSTER) */
  int shared;   /* reg kernel: the instance of a variant for rows that are not whole packs may
                   hold its values in dynamic shared memory (SHARED; Variant.shared_bytes) */
  int ahead;    /* reg kernel in packs: a variant's AHEAD instance loads the next row's (columns')
                   packs into dynamic shared memory while it computes this one (Variant.ahead) */
  int quads;    /* reg kernel of rows in packs: holds its 8-bit rows four to a word (stitch_quads(),
                   emit_stitch.c), its WHOLE instance a kernel of its own (_whole), bound to
                   40 registers */
  PtrVec early; /* Value*: the roots the reg kernel's PACKS instance writes in its first pass
                   (stitch_early_outputs()) */
  int first_guards; /* ... its WHOLE instance keeps that pass's item guards (stitch_kernel.c) */
  int last_guards;  /* stream kernel: its WHOLE instance keeps the last pass's item guards */
  int item;     /* an item of a lag kernel (emit_lag.c): a __device__ function that computes row
                   (column) t_item alone, with all of the block's threads along it (blockDim.y
                   is 1): rows in whole aligned packs held in registers, or a column streamed
                   one element a thread; none of the instances above */
} StitchKernel;

/* The register kernel (`reg`) of g, or its stream kernel. */
StitchKernel stitch_kernel(Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names, int reg);
/* The item function of g for a lag kernel (StitchKernel.item): of a
 * row group the register kernel in packs, of a column group the stream
 * kernel one element a thread. */
StitchKernel stitch_item_kernel(Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names);
/* Does the register kernel hold 8-bit rows four to a 32-bit word?  Rows
 * in packs that move through aligned words where they are not whole packs
 * (VEC 8 or 16), every variant's VEC a multiple of 4, no SHARED
 * instance, and some held value f8, i8 or u8 (emit_stitch.c says why). */
int stitch_quads(const StitchKernel *sk);
/* A dtype held so: f8, i8, u8 (not bool, which is no storage type). */
int stitch_quad_dtype(DType t);
/* "tecc_<kernel>_g<id>_reg" (`reg`) or "..._stream" ("..._item" for an item). */
const char *stitch_kernel_name(const StitchKernel *sk, int reg);

/* The instances of a kernel that takes PACKS: element by element, in
 * aligned packs, and in packs of whole row groups of whole rows (WHOLE). */
enum { PACKS_NONE, PACKS_ALIGNED, PACKS_WHOLE };

/* The schedule's variants: some variant with storage `st`, fit rule
 * `fit`, or the int flag at `field` set (offsetof(Variant, prefetch),
 * ...); the widest pack is stitch_most_vec() (schedule.h). */
int stitch_has_storage(const GroupSchedule *s, Storage st);
int stitch_has_fit(const GroupSchedule *s, FitRule fit);
/* Its first variant of that fit, or NULL. */
const Variant *stitch_fit_variant(const GroupSchedule *s, FitRule fit);
int stitch_any_variant(const GroupSchedule *s, size_t field);

/* The kernel's template parameters beyond IndexT, ITEMS and VEC: PACKS
 * (rows moved as whole packs, aligned), WHOLE after it, PHASE (a column
 * split's stream kernel), EARLY (a row operand loaded with the row),
 * NARROW (blocks of the warps a row needs). */
int stitch_takes_packs(const StitchKernel *sk);
int stitch_digit_packs(const StitchKernel *sk);
int stitch_whole_instance(const StitchKernel *sk);
int stitch_split_kernel(const StitchKernel *sk);
int stitch_early_kernel(const StitchKernel *sk);
int stitch_narrow_kernel(const StitchKernel *sk);
/* Variant v's kernel has a WHOLE instance; v launches it when its rows
 * are whole. */
int stitch_variant_whole_instance(const StitchKernel *sk, const Variant *v);
int stitch_launches_whole(const StitchKernel *sk, const Variant *v);

/* The bytes an element of v takes in the stream kernel's shared memory,
 * where it keeps v (else 0), and their sum over the values it keeps. */
int stitch_kept_bytes(const StitchKernel *sk, const Value *v);
int stitch_keep_bytes(const StitchKernel *sk);

/* The partials' type of a column split: the accumulators' (one type,
 * stitch_column_split()). */
const char *stitch_split_acc_type(const StitchKernel *sk);

/* Column sums (Stitch.columns): their accumulators' type (one type for
 * all, stitch.c), the second stage's kernel, and the buffers each is
 * stored in (its outputs, then its workspace slot) and their host names. */
const char *stitch_column_acc_type(const StitchKernel *sk);
const char *stitch_columns_name(const StitchKernel *sk);
int column_homes(const Kernel *k, const KernelPlan *kp, const Value *c);
const char *column_home(Arena *a, const Kernel *k, const KernelPlan *kp, const EntryNames *names, const Value *c, int h);

#endif
