/* emit_stitch.h — the kernels, launches and --emit=plan text of stitch
 * groups (stitch.h; H9), for emit_cu.c and emit_dumps.c. */
#ifndef TECC_EMIT_STITCH_H
#define TECC_EMIT_STITCH_H

#include "emit.h"

/* The kernel and launch text of a stitch group, into `b` at `indent`. */
void emit_stitch_kernel(Buf *b, int indent, Arena *a, Kernel *k, KernelPlan *kp, Group *g,
                        const EntryNames *names);
void emit_stitch_launch(Buf *b, int indent, Arena *a, Kernel *k, KernelPlan *kp, Group *g,
                        const EntryNames *names);
/* --emit=plan lines for a stitch group (variants, conditions). */
void stitch_plan_text(Buf *b, Arena *a, const Kernel *k, const KernelPlan *kp, const Group *g);

#endif
