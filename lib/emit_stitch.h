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

#endif
