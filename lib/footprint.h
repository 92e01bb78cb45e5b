/* footprint.h — what one group moves and holds per element (footprint.c),
 * the facts tile selection (schedule.c) sizes its choices by:
 *
 *   - the tensors the group reads or writes at the element's own index,
 *     which can move in 16-byte packs, and the widest of their elements;
 *   - for a stitch group, the full-domain values each thread holds in
 *     registers per element in the register kernel: the inputs it reads
 *     whole (held once, read once from memory) and the math results that
 *     several passes would otherwise recompute (kept).
 *
 * A stitch group's numbers come from its plan (stitch_plan.h), which
 * walked its passes as the emitters print them, so that the budget the
 * schedule gives and what the kernel holds agree: the stitch emitter keeps
 * exactly the values `keep` names.  A loop or reduce group's values are
 * walked here as emit_cu.c visits them (the same memoization by value and
 * index map); the loop emitter stops with an internal error if the pack
 * width it finds differs. */
#ifndef TECC_FOOTPRINT_H
#define TECC_FOOTPRINT_H

#include "groups.h"

typedef struct Footprint {
  int pack_bytes;   /* widest element moved in packs; 0: nothing can move in packs */
  int held_inputs;  /* stitch: full-domain memory values held per element */
  int held_pairs;   /* stitch: of those, 16-bit ones in packed rows (two to a register) */
  int held_wide;    /* stitch: of those, 8-byte ones (four registers' budget each) */
  int own_bytes;    /* bytes read and written per element of the domain.  loop: the tensors at
                       its index; stitch: the inputs it holds, the operands with rows of
                       their own (a mask, not a norm's w) and the outputs along the row */
  int slow_math;    /* loop, stitch: software math functions (erf, sin, ...) computed per element */
  uint32_t slow_axes; /* loop: the domain axes those vary along (AXES_MEMORY: some read memory) */
  int split_index;    /* loop: an element's index splits into its axes (an operand read by some
                         of them, a position, a gathered load): a pack must not straddle the
                         inner axis, whose size must then be a multiple of it */
  int gathers;      /* loop: gathered loads whose index reads memory (an embedding's row at
                       ids[n]): loads that wait on a load */
  int kept;         /* stitch: math results kept per element for later passes */
  int kept_wide;    /* stitch: of those, 8-byte ones (four registers' budget each) */
  const char *keep; /* stitch: by value id, 1 for the values kept (or NULL) */
  int row_operands; /* stitch: the memory values read along the row but not over the whole
                       domain (a norm's w and b, a mask broadcast over a batch) */
  uint32_t row_operand_axes; /* stitch: the kept domain axes those are indexed by (a mask [S, S]
                       under [B, S, S]: the S of the rows) */
  int row_outputs;  /* stitch: roots written along the row (a softmax's y; rowstats' m and v,
                       one value a row, are not) */
  int item_packs;   /* stitch rows: the packs the last pass moves an item besides the row's,
                       row_operands + row_outputs (0 for columns and rows not in packs) */
  int columns;      /* stitch rows: sums over the rows kept as column partials, an accumulator
                       per element a thread holds each (Stitch.columns) */
  int columns_wide; /* stitch rows: of those, f64 ones */
  int shifted;      /* stitch rows: the register kernel folds a level of centred sums into its
                       means' pass (PASS_SHIFTED), holding a shift and its sums a row */
} Footprint;

Footprint group_footprint(Arena *a, const KernelPlan *kp, const Group *g);

/* A math function the GPU computes in software, tens of instructions. */
int footprint_slow_math(const Value *v);

/* The axes of its own shape a value of loop group g varies along, when
 * it is computed from positions, sizes, constants and scalar arguments
 * alone (a rotary embedding's angles); else AXES_MEMORY.  `memo` holds
 * a zeroed entry per value of the kernel. */
enum { AXES_MEMORY = 1u << 31 };
uint32_t position_axes(const KernelPlan *kp, const Group *g, const Value *v, uint32_t *memo);

/* The domain axes of those, for v at index map `map`. */
uint32_t domain_axes_of(uint32_t own, const Value *v, const int *map);

/* Registers per element a thread of the register kernel needs: the inputs
 * die as the values kept from them are born, so the larger count (>= 1).
 * (At 1024 threads a block, ptxas then spills a little for softmax's
 * largest ITEMS; counting both halves the items per thread and measured
 * slower on an H100: fewer bytes in flight.) */
int footprint_held(const Footprint *f);

/* Elements of each value a thread may hold in `registers` registers: a
 * 16-bit input of a packed row takes half a register (the stitch emitter
 * holds it in pairs), an 8-byte value (f64, i64) four (its two, and the
 * double-width temporaries of its arithmetic), every other held or kept
 * value one.  (Counting f64 as one register held 16 x 2 doubles in the
 * 32 registers' budget, and ptxas spilled 264 to 544 bytes; as two, 8
 * to 160: issue 45.)  The inputs die as the kept values are born, so the
 * larger need counts. */
int footprint_budget(const Footprint *f, int registers);

/* The bytes a thread of the register kernel holds an element, all at
 * once (in shared memory, schedule.c's shared_rows()): its held inputs
 * (16-bit ones of packed rows two to a word, 8-byte ones 8) and the math
 * results it keeps (f32, or 8 bytes). */
int footprint_held_bytes(const Footprint *f);

/* A stitch kernel's last pass moves at most three packs an item besides
 * the row's (operands and outputs along the row): what a budget leaves
 * room for (footprint.c). */
int footprint_light_items(const Footprint *f);


#endif
