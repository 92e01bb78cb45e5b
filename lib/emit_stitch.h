/* emit_stitch.h — the kernels, launches and --emit=plan text of stitch
 * groups (stitch.h; H9), for emit_cu.c and emit_dumps.c.  emit_stitch.c
 * calls emit_expr.c, emit_common.c and emit_header.c (emit.h), never
 * emit_cu.c. */
#ifndef TECC_EMIT_STITCH_H
#define TECC_EMIT_STITCH_H

#include "emit.h"

/* The two kernels (registers, streamed) of a stitch group. */
void emit_stitch_kernel(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names);
/* The host code that picks one and launches it. */
void emit_stitch_launch(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names);
/* --emit=plan lines for a stitch group (variants, conditions). */
void stitch_plan_text(Buf *b, Arena *a, const Kernel *k, const KernelPlan *kp, const Group *g);

#endif
