/* split.c — reductions over axes that are not one run, split in two
 * (split.h; doc/design.md, pipeline step 4b).
 *
 * A batch-norm's statistics reduce axes 0 and 2 of x[B, C, S]: the kept
 * channel axis lies between the reduced ones, so the rows of one channel
 * are B runs of S contiguous elements, S*C apart.  Fused as one row stitch
 * (rows = C) they load an element at a time, and C rows (64 channels) fill
 * half of an H200's SMs: 0.14x to 0.46x torch.compile (bench/NOTES.md,
 * issue 48).  So, at -O1 and -O2 (a schedule decision, as fusion is),
 * each such reduction becomes two:
 *
 *   r(x, O + I) = r(r(x, I), O)
 *
 * I, the inner run: the reduced axes from the innermost axis that is not
 * a literal 1 outward, up to the first kept axis; O, the other reduced
 * axes.  r(x, I) is a row reduction over contiguous runs (packed, as many
 * rows as B*C), and r(., O) a column reduction over its small result.
 * This holds for sum, prod, max, min, any and all (reassociation: the
 * sums' bits may differ from one reduction's, within abi.md section 6's
 * tolerance, as any change of a reduction's order), and for mean (every
 * run has |I| elements, so the mean of the means is the mean).
 *
 * A variance, mean((y - mean(y, A))**2, A) as lowering writes var (and as
 * a user might), is not split that way, which would read y twice, the
 * second time after the whole mean.  It takes the law of total variance,
 * one read of y:
 *
 *   mi = mean(y, I)    vi = mean((y - mi)**2, I)    (a row stitch: moments)
 *   m  = mean(mi, O)   v  = mean(vi + (mi - m)**2, O)  (a column stitch)
 *
 * (one reduction over O, not mean(vi, O) + mean((mi - m)**2, O): a value
 * that is not a reduction is recomputed by each group that reads it, and
 * the normalization's loop read one operand more an element, whose VEC 4
 * instance spilled 4 bytes; ptxas -v, sm_90)
 * exact in real arithmetic, and in floating point a sum of non-negative
 * terms: no cancellation (Chan et al.'s pairwise update, with equal
 * counts).  Its gradient is var's: the rule pushes 2 (y - mi) / |A| through
 * vi and 2 (mi - m) / |A| through mi, whose sum is 2 (y - m) / |A| (the
 * gradient kernels are built before this pass; they reduce over the same
 * axes and are split as anything else).
 *
 * Not split: runs of fewer than SPLIT_MIN_RUN elements where the sizes
 * are literals (the inner result would be a large fraction of y); a size
 * variable is taken to be large.  Reductions whose innermost axis is kept
 * (a column or a mixed reduction) are left as they are. */
#include "split.h"
#include "opt.h"

enum { SPLIT_MIN_RUN = 32 };

typedef struct Split {
  Arena *a;
  Kernel *k;
} Split;

/* The inner run of v's reduced axes (above), 0 when v is not split. */
static uint32_t inner_run(const Value *v) {
  const Shape *s = &v->args[0]->shape;
  uint32_t run = 0;
  int64_t literal = 1, symbolic = 0;
  int i = s->rank - 1;
  for (; i >= 0; i--) {
    if (dim_literal_one(s->d[i]))
      continue;
    if (!((v->axes >> i) & 1u))
      break;
    run |= 1u << i;
    if (s->d[i].var >= 0)
      symbolic = 1;
    else
      literal *= s->d[i].size;
  }
  uint32_t outer = 0;
  for (; i >= 0; i--)
    if (((v->axes >> i) & 1u) && !dim_literal_one(s->d[i]))
      outer |= 1u << i;
  if (!run || !outer || (!symbolic && literal < SPLIT_MIN_RUN))
    return 0;
  return run;
}

static int splits(const Value *v) {
  if (v->op != IR_REDUCE || v->dtype != v->args[0]->dtype)
    return 0;
  switch (v->rop) {
  case RED_SUM: case RED_PROD: case RED_MAX: case RED_MIN: case RED_MEAN: case RED_ANY: case RED_ALL:
    return inner_run(v) != 0;
  default:
    return 0;
  }
}

static Value *like(Split *s, IrOp op, const Value *v, const Shape *sh) {
  Value *n = ir_new_value(s->a, s->k, op, v->dtype, sh);
  n->loc = v->loc;
  return n;
}

static Value *reduce(Split *s, ReduceOp op, Value *x, uint32_t axes, const Value *at) {
  Shape sh = x->shape;
  for (int i = 0; i < sh.rank; i++)
    if ((axes >> i) & 1u)
      sh.d[i] = (Dim){-1, 1};
  Value *r = like(s, IR_REDUCE, at, &sh);
  r->dtype = x->dtype;
  r->rop = op;
  r->axes = axes;
  r->args[0] = x;
  r->nargs = 1;
  return r;
}

static Value *binary(Split *s, BinaryOp op, Value *a, Value *b, const Value *at) {
  b = ir_broadcast(s->a, s->k, b, &a->shape, at->loc);
  Value *r = like(s, IR_BINARY, at, &a->shape);
  r->dtype = a->dtype;
  r->bop = op;
  r->args[0] = a;
  r->args[1] = b;
  r->nargs = 2;
  return r;
}

/* mean(y, I) split from mean(y, A) (above), or NULL. */
static Value *split_mean_of(Value *m, Value *y, uint32_t axes) {
  if (m->op == IR_BROADCAST)
    m = m->args[0];
  if (m->op != IR_REDUCE || m->rop != RED_MEAN)
    return NULL;
  Value *mi = m->args[0];
  if (mi->op != IR_REDUCE || mi->rop != RED_MEAN || mi->args[0] != y || (mi->axes | m->axes) != axes)
    return NULL;
  return mi;
}

/* v = mean((y - mean(y, A))**2, A), its mean already split: the total
 * variance (above), or NULL where v is not that. */
static Value *total_variance(Split *s, Value *v) {
  Value *sq = v->args[0];
  if (v->rop != RED_MEAN || sq->op != IR_BINARY || sq->bop != BIN_MUL || sq->args[0] != sq->args[1])
    return NULL;
  Value *d = sq->args[0];
  if (d->op != IR_BINARY || d->bop != BIN_SUB)
    return NULL;
  Value *y = d->args[0], *mi = split_mean_of(d->args[1], y, v->axes);
  if (!mi)
    return NULL;
  uint32_t inner = mi->axes, outer = v->axes & ~inner;
  Value *di = binary(s, BIN_SUB, y, mi, v);
  Value *vi = reduce(s, RED_MEAN, binary(s, BIN_MUL, di, di, v), inner, v);
  Value *e = binary(s, BIN_SUB, mi, reduce(s, RED_MEAN, mi, outer, v), v);
  return reduce(s, RED_MEAN, binary(s, BIN_ADD, vi, binary(s, BIN_MUL, e, e, v), v), outer, v);
}

static Value *split_value(Split *s, Value *v) {
  Value *r = total_variance(s, v);
  if (!r) {
    uint32_t inner = inner_run(v);
    r = reduce(s, v->rop, reduce(s, v->rop, v->args[0], inner, v), v->axes & ~inner, v);
  }
  r->name = v->name;
  return r;
}

static int splits_any(const Kernel *k) {
  for (int i = 0; i < k->values.len; i++)
    if (splits(k->values.items[i]))
      return 1;
  return 0;
}

static void split_kernel(Arena *a, Kernel *k) {
  if (!splits_any(k))
    return;
  k->unsplit = ir_clone_kernel(a, k);
  Split s = {a, k};
  PtrVec old = k->values;
  k->values = (PtrVec){0};
  for (int i = 0; i < old.len; i++) {
    Value *v = old.items[i];
    for (int j = 0; j < v->nargs; j++)
      v->args[j] = ir_forwarded(v->args[j]);
    v->id = k->values.len;
    vec_push(a, &k->values, v); /* until opt drops it: its uses read its replacement (aux) */
    if (splits(v))
      v->aux = split_value(&s, v);
  }
  for (int i = 0; i < k->noutputs; i++)
    k->outputs[i].value = ir_forwarded(k->outputs[i].value);
  for (int i = 0; i < k->values.len; i++)
    ((Value *)k->values.items[i])->aux = NULL;
}

void split_reductions(Compilation *c, Module *m) {
  for (int i = 0; i < m->nkernels; i++) {
    split_kernel(c->arena, m->kernels[i]);
    ir_verify_after(c->arena, m->kernels[i], "splitting reductions");
  }
  optimize_module(c, m); /* CSE of the inner reductions, and the dead ones out */
}
