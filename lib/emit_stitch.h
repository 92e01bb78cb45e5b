/* emit_stitch.h — the kernels and launches of stitch groups (stitch.h),
 * as their schedule records say (schedule.h), for emit_cu.c.  emit_stitch.c
 * calls emit_expr.c, emit_common.c and emit_header.c (emit.h), never
 * emit_cu.c. */
#ifndef TECC_EMIT_STITCH_H
#define TECC_EMIT_STITCH_H

#include "emit.h"

/* The kernels a stitch group's variants launch (registers, streamed). */
void emit_stitch_kernel(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names);
/* The host code that tries the variants (schedule.h) in order and
 * launches the first whose condition holds. */
void emit_stitch_launch(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names);
/* Group g's item function for a lag kernel (emit_cu.c, emit_lag_kernel()):
 * row (column) t_item computed by the whole block, blockDim.y 1
 * (StitchKernel.item).  Its parameters (KParam*), in order. */
const PtrVec *emit_stitch_item(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names);
/* A column split keeps its chunks' partial results in the workspace
 * (t_part<id>): emit_stitch_partials() says whether g may, and
 * emit_stitch_partial_space() adds their bytes to t_ws_bytes at
 * t_part_off<id> (-1: none this call); `small`: 32-bit indices do. */
int emit_stitch_partials(const Group *g);
/* The host function of a group with a column split that gives its chunks
 * (emit_stitch_kernel() writes it beside the kernels). */
void emit_stitch_chunks(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names);
/* A group with column sums (Stitch.columns): the host function that says
 * how many blocks, each a row of partials, its launch takes. */
void emit_stitch_parts(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names);
/* The host names its second stage stores to (the column sums' buffers). */
void emit_stitch_column_uses(Arena *a, const Kernel *k, const KernelPlan *kp, const Group *g, const EntryNames *names,
                             NameSet *uses);
void emit_stitch_partial_space(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names,
                               const char *small);

#endif
