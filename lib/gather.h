/* gather.h — an IR expression read at other positions along one axis
 * (a take, a slice, a concat: doc/language.md §9.7–§9.9).
 *
 * gather_value() rebuilds v's expression so that where the axis is k it
 * computes what v computes where the axis is i[k]: each input that varies
 * along the axis becomes an IR_TAKE of it, a position along the axis
 * becomes i, a take along the same axis composes its index with i, a
 * take along other axes gathers its indices and takes the axis too, and
 * what is 1 along the axis stays as it is.  An index that depends on the
 * position along the axis only (a slice's, a concat's, their gradients')
 * also gathers through a reduction over other axes.  Lowering gathers a take's
 * operand with it; the gradient of a slice gathers the cotangent. */
#ifndef TECC_GATHER_H
#define TECC_GATHER_H

#include "ir.h"

typedef struct Gather {
  Arena *a;
  Kernel *k;      /* where the new values go */
  SrcRange loc;   /* given to them */
  Value *i;       /* the index: i64, of the result's shape */
  Value *along;   /* i when it depends on the position along the axis only:
                     of shape [1, .., n, .., 1], or NULL */
  Value *start;   /* i is start + step * position (an i64 scalar), or NULL */
  int64_t step;
  int axis;       /* in the result's axes */
  Shape shape;    /* the result's */
  Value **memo;   /* by value id: the values gathered so far */
} Gather;

/* A Gather over the values of k so far. */
Gather gather_new(Arena *a, Kernel *k, Value *i, int axis, const Shape *shape);
/* v gathered, of the result's shape; NULL where that is not possible (a
 * reduction that varies along the axis, unless `along` is known). */
Value *gather_value(Gather *g, Value *v);

#endif
