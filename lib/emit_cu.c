/* emit_cu.c — the generated .cu: the embedded runtime, one CUDA kernel per
 * fusion group, and one host entry point per .te kernel (abi.md).
 *
 * A group's kernel walks the IR from its roots.  Each value is evaluated at
 * an index "map": for each of its axes, the domain axis it follows (or -1:
 * a broadcast axis of size 1, index 0).  A broadcast only changes the map;
 * a value read from memory is loaded at the offset its map gives (the
 * domain's linear index when the map is the identity); everything else
 * becomes one named temporary per (value, map). */
#include "emit_cu.h"
#include "stitch.h"
#include "emit.h"
#include "emit_header.h"
#include "emit_stitch.h"
#include "footprint.h"
#include "fuse.h"
#include "runtime.h"
#include "schedule.h"
#include "sizeexpr.h"
#include "stitch_plan.h"

#include <ctype.h>
#include <string.h>

/* ---- one group's kernel: state and parameters ----------------------------- */

/* Everything one group's kernel needs while it is written. */
typedef struct GEmit {
  Arena *a;
  Kernel *k;
  KernelPlan *kp;
  Group *g;
  const EntryNames *names;
  const char *kname;   /* the CUDA kernel's name */
  Out *body;           /* the loop body (a fragment) */
  PtrVec params;       /* KParam* */
  NameSet taken;       /* identifiers in use in the kernel */
  PtrVec memo;         /* Memo* */
  char used_axis[TECC_MAX_RANK];
  char load_axis[TECC_MAX_RANK]; /* loop kernels: of those, the axes the packs' loads index (their
                                    offsets at the pack's start), and the axes the body does */
  char body_axis[TECC_MAX_RANK];
  char *fastdiv;       /* by size variable */
  const char *lin;     /* the domain's linear index, or NULL */
  int vec;             /* loop kernels: writing the packed body */
  PtrVec packs;        /* PackRef*: tensors read/written as 16-byte packs */
  int pack_bytes;      /* largest element size among them */
  const char *pack_sub; /* the pack of this step: "" or "[t_u]" (full reductions) */
  int inner_axis;      /* loop kernels: the domain's innermost axis, or -1 */
  int at_pack_start;   /* offsets at the pack's first element (t_dI, not t_dI + t_k) */
  int row_quotient;    /* the packed body reads t_qI, the domain's row (inner axis I) */
  Out *pre;            /* loop kernels that reuse along an axis: the hoisted values (hoist_values()) */
  uint32_t *axes_memo; /* position_axes(), by value id (axes_memo()) */
  const char *acc;     /* reductions: the accumulator the body adds to */
  int lin_used;        /* the body being written reads or writes at e->lin element by element */
  int arg_index_used;  /* ... pairs its values with t_r (an argmax's or argmin's index) */
  const char *result;  /* a full reduction's epilogue (Group.epilogue): the name of its result */
  Out *epilogue;       /* ... its statements (epilogue_body()), or NULL */
  Out *steps;          /* a full reduction: its first stage's statements, to t_sum (its
                          block's partial); the loop after one (GroupSchedule.one_launch):
                          its loops, over the packs each thread read, the last first */
  Out *one_steps;      /* a full reduction with one_launch and one_held: its steps that also keep
                          each thread's first t_held packs of those in shared memory */
  struct GEmit *one;   /* a full reduction with one_launch: the kernel of both groups */
  const struct GEmit *joined; /* the loop after one: that reduction (join_launch_names()) */
  Out *item;           /* the loop of a lag plan (GroupSchedule.lag): its packs [t_plo, t_phi) as a
                          __device__ function (emit_lag_kernel()) */
  const PtrVec *item_params; /* a lag plan's stitch groups: their item functions' KParam* */
} GEmit;

/* A tensor accessed at the domain's linear index, read or written as
 * tecc::Pack<T, VEC> in the packed loop. */
typedef struct PackRef {
  const char *param;  /* kernel parameter */
  const char *ctype;  /* storage type */
  const Value *value; /* what it holds */
  int store;
  const char *index;  /* the pack's index: NULL for t_p (the element's own),
                         else that of a row operand (broadcast over outer axes) */
  const char *at;     /* a gathered pack (take_pack): the flat offset of its
                         first element, loaded as a pack when `whole`,
                         filled with `none` when `outside`, else with
                         `none` and element t_j where `inside` */
  const char *whole, *outside, *none, *inside;
  const char *itype;  /* a gathered pack: the C type of t_gI */
} PackRef;

static KParam *add_param(GEmit *e, ParamKind kind, int index, Value *v, const char *name) {
  for (int i = 0; i < e->params.len; i++) {
    KParam *p = e->params.items[i];
    if (p->kind == kind && p->index == index && p->value == v)
      return p;
  }
  KParam *p = ARENA_NEW(e->a, KParam);
  p->kind = kind;
  p->index = index;
  p->value = v;
  p->name = name;
  vec_push(e->a, &e->params, p);
  return p;
}

static const char *value_base_name(GEmit *e, const Value *v) {
  return value_temp_name(e->a, e->k, v);
}

/* p and q name the same thing: the same parameter, or a value's slot in
 * the workspace that one writes and the other reads. */
static int same_param(const KParam *p, const KParam *q) {
  if (p->kind == q->kind)
    return p->index == q->index && p->value == q->value;
  return p->value == q->value &&
         ((p->kind == P_WS_WRITE && q->kind == P_STORED_READ) || (p->kind == P_STORED_READ && q->kind == P_WS_WRITE));
}

/* The name of value v's `kind` parameter (a stored read or a workspace
 * write): in a loop that shares one launch with the reduction before it
 * (GEmit.joined), the reduction's parameter of the same slot where it has
 * one (same_param(): the one launch passes it once), else a name neither
 * group has taken.  Named apart, the -O0 slot of an unnamed %1 (`v1`) and
 * a user's `v1` both became v1_mem in the one launch (tests/regress). */
static const char *value_param_name(GEmit *e, ParamKind kind, Value *v) {
  const KParam mine = {kind, 0, v, NULL}; /* as add_param() will make it */
  if (e->joined)
    for (int i = 0; i < e->joined->params.len; i++) {
      const KParam *p = e->joined->params.items[i];
      if (same_param(p, &mine))
        return p->name;
    }
  return fresh_name(e->a, &e->taken, arena_printf(e->a, "%s_mem", value_base_name(e, v)));
}

/* Where a stored value is read from, as a kernel parameter. */
static const char *stored_param(GEmit *e, Value *v) {
  for (int i = 0; i < e->params.len; i++) {
    KParam *p = e->params.items[i];
    if (p->kind == P_STORED_READ && p->value == v)
      return p->name;
  }
  return add_param(e, P_STORED_READ, 0, v, value_param_name(e, P_STORED_READ, v))->name;
}

/* ---- index expressions ------------------------------------------------------ */

static const char *dim_expr(GEmit *e, Dim d) {
  if (d.var >= 0)
    return e->names->sizes[d.var];
  if (d.size > INT32_MAX)
    return arena_printf(e->a, "INT64_C(%lld)", (long long)d.size);
  return arena_printf(e->a, "%lld", (long long)d.size);
}

/* Product of the dims of `s` selected by `mask` (all when mask is ~0u). */
static const char *numel_expr(GEmit *e, const Shape *s, uint32_t mask, const char *cast) {
  Buf b;
  buf_init(&b, e->a);
  int axes[TECC_MAX_RANK], n = shape_axes(s, mask, axes);
  for (int j = 0; j < n; j++)
    buf_printf(&b, "%s%s", j ? " * " : cast, dim_expr(e, s->d[axes[j]]));
  return n ? buf_cstr(&b) : "1";
}

static const char *div_expr(GEmit *e, const char *x, Dim d) {
  if (d.var >= 0) {
    e->fastdiv[d.var] = 1;
    return arena_printf(e->a, "t_fd_%s.div(%s)", e->names->sizes[d.var], x);
  }
  if (d.size == 0) /* an axis of literal size 0 (a slice x[..., 1:1]): the loop never runs, and x / 0 is a warning */
    return "(IndexT)0";
  return arena_printf(e->a, "%s / %s", x, dim_expr(e, d));
}

enum {
  SPLIT_ROW = 1,   /* the innermost axis's quotient t_qI (the row) too */
  SPLIT_CHUNKS = 2 /* a reuse loop's pack: its reuse axis counts chunks (t_reps of them, position
                      t_cA), the quotients named t_wA (the loop names the row t_qI itself) */
};

/* Splits linear index `idx` into the domain axes in `mask` (row-major),
 * declaring t_dA only for the axes the body used (SPLIT_ flags). */
static void emit_decompose(GEmit *e, Out *o, const char *idx, uint32_t mask, int flags) {
  const Shape *s = &e->g->domain;
  int axes[TECC_MAX_RANK], n = shape_axes(s, mask, axes), lo = -1;
  for (int j = 0; j < n && lo < 0; j++)
    if (e->used_axis[axes[j]])
      lo = j;
  if (lo < 0)
    return;
  if ((flags & SPLIT_ROW) && lo == n - 1 && n > 1) /* t_qI without the axes above it */
    lo = n - 2;
  const int chunk = flags & SPLIT_CHUNKS ? e->g->schedule->reuse_axis : -1;
  const char *rest = idx;
  for (int j = n; j-- > lo;) {
    const int ax = axes[j];
    if (!e->used_axis[ax] && j == lo)
      return;
    const char *pos = arena_printf(e->a, ax == chunk ? "t_c%d" : "t_d%d", ax);
    if (j == 0) {
      emit(o, "const IndexT %s = %s;", pos, rest);
      return;
    }
    const char *dim = ax == chunk ? "t_reps" : dim_expr(e, s->d[ax]);
    const char *div = ax == chunk ? arena_printf(e->a, "%s / t_reps", rest) : div_expr(e, rest, s->d[ax]);
    if (j == lo) {
      emit(o, "const IndexT %s = %s - %s * %s;", pos, rest, div, dim);
      return;
    }
    const char *q = arena_printf(e->a, chunk >= 0 ? "t_w%d" : "t_q%d", ax);
    emit(o, "const IndexT %s = %s;", q, div);
    if (e->used_axis[ax])
      emit(o, "const IndexT %s = %s - %s * %s;", pos, rest, q, dim);
    rest = q;
  }
}

/* The map of a value to the domain is the identity: one element per
 * domain element, in the same order. */
static int map_is_identity(GEmit *e, const Shape *s, const int *map) {
  int covered = 0, domain_axes = 0;
  for (int i = 0; i < e->g->domain.rank; i++)
    domain_axes += !dim_is_one(&e->g->domain, i);
  for (int j = 0; j < s->rank; j++)
    covered += !dim_is_one(s, j) && map[j] >= 0;
  return covered == domain_axes;
}

/* Axis `ax` is split from the linear index: for a pack's load where the
 * offset is at the pack's start, else for the body. */
static void use_axis(GEmit *e, int ax) {
  e->used_axis[ax] = 1;
  (e->at_pack_start ? e->load_axis : e->body_axis)[ax] = 1;
}

/* The index along domain axis `ax`.  The packed loop kernel splits
 * t_p * VEC once per pack (rows are whole packs): along the innermost
 * axis, element t_k of the pack is t_dI + t_k. */
static const char *axis_index(GEmit *e, int ax) {
  if (e->vec && e->lin && ax == e->inner_axis && !e->at_pack_start)
    return arena_printf(e->a, "(t_d%d + t_k)", ax);
  return arena_printf(e->a, "t_d%d", ax);
}

static const char *offset_expr(GEmit *e, const Shape *s, const int *map) {
  if (e->lin && map_is_identity(e, s, map))
    return e->lin;
  const char *off = NULL;
  for (int j = 0; j < s->rank; j++) {
    if (dim_is_one(s, j) || map[j] < 0)
      continue;
    use_axis(e, map[j]);
    const char *idx = axis_index(e, map[j]);
    off = off ? arena_printf(e->a, "(%s) * %s + %s", off, dim_expr(e, s->d[j]), idx) : idx;
  }
  if (!off)
    return "0";
  /* (a) * D + b: drop the redundant outer parentheses of a lone index. */
  return off;
}

/* ---- value expressions ------------------------------------------------------- */

static const char *value_expr(GEmit *e, Value *v, const int *map);

/* The flat offset in input `in` of the element a take reads: `idx` along
 * the take's axis (the result's axis `axis`), the position elsewhere (at
 * the pack's first element when e->at_pack_start). */
static const char *gathered_offset(GEmit *e, const KernelInput *in, int rank, const int *map,
                                   const char *const *idx) {
  const int off = rank - in->shape.rank;
  const char *at = NULL;
  for (int j = 0; j < in->shape.rank; j++) {
    const char *c = idx[j + off];
    if (!c && (dim_is_one(&in->shape, j) || map[j + off] < 0))
      continue;
    if (!c) {
      use_axis(e, map[j + off]);
      c = axis_index(e, map[j + off]);
    }
    at = at ? arena_printf(e->a, "(%s) * %s + %s", at, dim_expr(e, in->shape.d[j]), c) : c;
  }
  return at;
}

/* The index of a take along another axis than the packed one, at the
 * pack's first element, as C that needs nothing of the body: an integer
 * input that is 1 along the packed axis (an embedding's ids) read there;
 * else NULL. */
static const char *pack_index(GEmit *e, Value *i, const int *map) {
  int amap[TECC_MAX_RANK];
  while (i->op == IR_BROADCAST) {
    broadcast_arg_map(i, map, amap);
    map = amap;
    i = i->args[0];
  }
  if (i->op == IR_CAST && dtype_is_int(i->args[0]->dtype))
    i = i->args[0];
  if (i->op != IR_INPUT || !dtype_is_int(i->dtype) || i->shape.rank == 0)
    return NULL;
  int last = innermost_axis(&i->shape);
  if (last >= 0 && map[last] == e->inner_axis)
    return NULL; /* it varies within the pack */
  e->at_pack_start = 1;
  const char *off = offset_expr(e, &i->shape, map);
  e->at_pack_start = 0;
  add_param(e, P_INPUT, i->index, NULL, e->names->inputs[i->index]);
  return arena_printf(e->a, "(int64_t)%s[%s]", e->names->inputs[i->index], off);
}

/* position_axes()'s memo for this group, made on first use. */
static uint32_t *axes_memo(GEmit *e) {
  if (!e->axes_memo)
    e->axes_memo = ARENA_ARRAY(e->a, uint32_t, (size_t)e->k->values.len + 1);
  return e->axes_memo;
}


/* What an element outside the axis holds, as storage: NaN's bits, 0. */
static const char *outside_bits(Arena *a, DType t) {
  switch (t) {
  case DT_F16: return "(uint16_t)0x7E00";
  case DT_BF16: return "(uint16_t)0x7FC0";
  case DT_F8E4M3:
  case DT_F8E5M2: return "(uint8_t)0x7F";
  case DT_F32: return "tecc::nan_f32()";
  case DT_F64: return "tecc::nan_f64()";
  default: return arena_printf(a, "(%s)0", cu_storage_ctype(t));
  }
}

/* The flat offset of the row a pack gathers from along the innermost
 * axis, when the input's outer axes are the domain's own (the same
 * sizes, in order): the domain's row, t_qI, which the split of t_i0
 * computes, times the input's row length; else NULL. */
static const char *gathered_row(GEmit *e, const KernelInput *in, int off, int last, const int *map) {
  const Shape *dom = &e->g->domain;
  int dax[TECC_MAX_RANK], nd = shape_axes(dom, ~0u, dax), n = 0;
  for (int i = 0; i < last; i++) {
    if (dim_is_one(&in->shape, i))
      continue;
    if (n >= nd - 1 || map[i + off] != dax[n] || !dim_equal(in->shape.d[i], dom->d[dax[n]]))
      return NULL;
    n++;
  }
  if (n == 0 || n != nd - 1)
    return NULL;
  e->row_quotient = 1;
  return arena_printf(e->a, "t_q%d * %s", e->inner_axis, dim_expr(e, in->shape.d[last]));
}

/* A take in the packed loop whose pack is contiguous in the input: the
 * input's innermost axis is the domain's, and either the take is along
 * another axis with an index the pack shares (an embedding's row), or it
 * is a slice's or a concat's along that axis (start + position).  Loaded
 * as one pack where the whole pack is inside and aligned, else element
 * by element; NULL where it is not such a take. */
static const char *take_pack(GEmit *e, Value *v, const int *map) {
  const KernelInput *in = &e->k->inputs[v->index];
  if (ir_take_naxes(v) != 1)
    return NULL; /* element by element */
  const int axis = ir_take_axis(v, 0), off = v->shape.rank - in->shape.rank;
  const Variant *packed = &e->g->schedule->variants[0];
  int last = innermost_axis(&in->shape);
  if (!e->lin || e->inner_axis < 0 || packed->when != WHEN_ALIGNED || last < 0 ||
      map[last + off] != e->inner_axis || dtype_size(in->dtype) * packed->vec > 16)
    return NULL;
  int along = last + off == axis;
  const char *g;
  if (along) {
    Value *s = ir_take_start(v, 0);
    if (ir_take_step(v, 0) != 1 || !s || (s->op != IR_SIZE && s->op != IR_CONST) ||
        (position_axes(e->kp, e->g, ir_take_index(v, 0), axes_memo(e)) & AXES_MEMORY)) /* its index reads memory */
      return NULL;
    e->at_pack_start = 1;
    const char *pos = axis_index(e, map[axis]);
    use_axis(e, map[axis]);
    e->at_pack_start = 0;
    if (s->op == IR_CONST && (s->ival >= INT64_C(1) << 30 || s->ival <= -(INT64_C(1) << 30)))
      return NULL; /* t_g in IndexT: a position and a start of at most 2^30 */
    g = arena_printf(e->a, "%s + %s", pos, s->op == IR_SIZE ? e->names->sizes[s->index] : cu_const_literal(e->a, s));
  } else if (!(g = pack_index(e, ir_take_index(v, 0), map))) {
    return NULL;
  }
  const char *name = e->names->inputs[v->index];
  add_param(e, P_INPUT, v->index, NULL, name);
  const char *gi = arena_printf(e->a, "t_g%d", e->packs.len);
  /* Read only where the index is inside, the offset fits the index width
   * (the input's count decides it: input_gathered()). */
  const char *row = along ? gathered_row(e, in, off, last, map) : NULL;
  e->at_pack_start = 1;
  const char *idx[TECC_MAX_RANK] = {0};
  idx[axis] = along ? gi : arena_printf(e->a, "(IndexT)%s", gi);
  const char *at = row ? arena_printf(e->a, "%s + %s", row, gi) : gathered_offset(e, in, v->shape.rank, map, idx);
  e->at_pack_start = 0;
  const char *size = dim_expr(e, in->shape.d[axis - off]);
  PackRef *r = ARENA_NEW(e->a, PackRef);
  r->param = name;
  r->ctype = cu_storage_ctype(in->dtype);
  r->value = v;
  r->index = g; /* the index at the pack's first element, t_gI */
  r->at = at;
  r->itype = along ? "IndexT" : "int64_t";
  const char *first = along ? arena_printf(e->a, "%s >= 0 && %s + VEC <= %s", gi, gi, size)
                            : arena_printf(e->a, "%s >= 0 && %s < %s", gi, gi, size);
  r->whole = arena_printf(e->a, "%s && ((%s) & (VEC - 1)) == 0", first, at);
  r->outside = along ? arena_printf(e->a, "%s + VEC <= 0 || %s >= %s", gi, gi, size) : arena_printf(e->a, "!(%s)", first);
  r->none = outside_bits(e->a, in->dtype);
  r->inside = along ? arena_printf(e->a, "%s + t_j >= 0 && %s + t_j < %s", gi, gi, size) : first;
  vec_push(e->a, &e->packs, r);
  return cu_load_conv(e->a, in->dtype, arena_printf(e->a, "t_pk_%s_%d.get(t_k)", name, e->packs.len - 1));
}

/* A gathered load (IR_TAKE): input v->index at the element's position,
 * each of the take's axes at its index; read where all are inside. */
static const char *take_expr(GEmit *e, Value *v, const int *map) {
  if (e->vec) {
    const char *p = take_pack(e, v, map);
    if (p)
      return p;
  }
  const KernelInput *in = &e->k->inputs[v->index];
  const char *idx[TECC_MAX_RANK] = {0}, *name = e->names->inputs[v->index];
  const int n = ir_take_naxes(v), off = v->shape.rank - in->shape.rank;
  for (int j = 0; j < n; j++)
    idx[ir_take_axis(v, j)] = value_expr(e, ir_take_index(v, j), map);
  add_param(e, P_INPUT, v->index, NULL, name);
  const char *at = gathered_offset(e, in, v->shape.rank, map, idx), *inside = NULL;
  const char *size[TECC_MAX_RANK] = {0};
  for (int j = 0; j < n; j++)
    size[ir_take_axis(v, j)] = dim_expr(e, in->shape.d[ir_take_axis(v, j) - off]);
  inside = cu_take_inside(e->a, v, idx, size);
  return cu_gather(e->a, in->dtype, inside, arena_printf(e->a, "%s[%s]", name, at));
}

/* An i64 value within +-2^30 wherever the kernel runs with 32-bit
 * indices (the host takes them only where every count and size is at
 * most 2^30): positions, sizes, small constants, and their // and %. */
static int index_bounded(const Value *v) {
  switch (v->op) {
  case IR_INDEX: case IR_SIZE: return 1;
  case IR_CONST: return v->dtype == DT_I64 && v->ival >= -(INT64_C(1) << 30) && v->ival <= INT64_C(1) << 30;
  case IR_BROADCAST: return index_bounded(v->args[0]);
  case IR_BINARY:
    return (v->bop == BIN_MOD || v->bop == BIN_FLOORDIV) && index_bounded(v->args[0]) && index_bounded(v->args[1]);
  default: return 0;
  }
}

static const char *compute_expr(GEmit *e, Value *v, const int *map) {
  if (v->op == IR_TAKE)
    return take_expr(e, v, map);
  if (v->op == IR_SIZE)
    return arena_printf(e->a, "(int64_t)%s", e->names->sizes[v->index]);
  if (v->op == IR_INDEX) { /* 1 on every other axis: its offset is the position */
    const char *off = offset_expr(e, &v->shape, map);
    e->lin_used |= e->lin && strcmp(off, e->lin) == 0;
    return arena_printf(e->a, "(int64_t)(%s)", off);
  }
  int fused = cu_fused_product(e->kp, v);
  if (fused >= 0) {
    Value *p = v->args[fused]; /* the operands named (and made parameters) in the program's order */
    const char *c = fused ? value_expr(e, v->args[0], map) : NULL;
    const char *a = value_expr(e, p->args[0], map), *b = value_expr(e, p->args[1], map);
    return cu_fma_expr(e->a, v, fused, a, b, c ? c : value_expr(e, v->args[1], map));
  }
  const char *a[3] = {0};
  for (int i = 0; i < v->nargs && i < 3; i++)
    a[i] = value_expr(e, v->args[i], map);
  if (v->op == IR_BINARY && v->dtype == DT_I64 && index_bounded(v)) /* at the index width: a 32-bit division */
    return arena_printf(e->a, "(int64_t)tecc::%s((IndexT)%s, (IndexT)%s)", v->bop == BIN_MOD ? "mod" : "floordiv",
                        a[0], a[1]);
  return cu_op_expr(e->a, v, a);
}

static const char *pack_elem(GEmit *e, const char *param, const Value *v, int store) {
  for (int i = 0; i < e->packs.len; i++) {
    PackRef *r = e->packs.items[i];
    if (strcmp(r->param, param) == 0 && r->store == store && !r->index)
      return arena_printf(e->a, "t_pk_%s%s.v[t_k]", param, e->pack_sub);
  }
  const DType t = v->dtype;
  PackRef *r = ARENA_NEW(e->a, PackRef);
  r->param = param;
  r->ctype = cu_storage_ctype(t);
  r->value = v;
  r->store = store;
  vec_push(e->a, &e->packs, r);
  if (dtype_size(t) > e->pack_bytes)
    e->pack_bytes = dtype_size(t);
  return arena_printf(e->a, "t_pk_%s%s.v[t_k]", param, e->pack_sub);
}

/* `param`[off], or its pack element in the packed loop. */
static const char *tensor_elem(GEmit *e, const char *param, const Value *v, const char *off) {
  if (e->vec && e->lin && strcmp(off, e->lin) == 0)
    return pack_elem(e, param, v, 0);
  e->lin_used |= e->lin && strcmp(off, e->lin) == 0;
  return arena_printf(e->a, "%s[%s]", param, off);
}

/* A tensor read over the innermost axis but broadcast over others (a
 * bias `b[N]` added to `x[M, N]`): in the packed loop kernel its VEC
 * elements are adjacent and start a whole pack, read as one. */
static int is_row_operand(GEmit *e, const Value *v, const int *map, const char *off) {
  const Variant *packed = &e->g->schedule->variants[0];
  if (!e->vec || !e->lin || e->inner_axis < 0 || strcmp(off, e->lin) == 0 || packed->when != WHEN_ALIGNED)
    return 0;
  int last = innermost_axis(&v->shape);
  return last >= 0 && map[last] == e->inner_axis && dtype_size(v->dtype) * packed->vec <= 16;
}

static const char *row_pack_elem(GEmit *e, const char *param, const Value *v, const int *map) {
  e->at_pack_start = 1;
  const char *off = offset_expr(e, &v->shape, map);
  const char *index = arena_printf(e->a, strchr(off, ' ') ? "(%s) / VEC" : "%s / VEC", off);
  e->at_pack_start = 0;
  for (int i = 0; i < e->packs.len; i++) {
    PackRef *r = e->packs.items[i];
    if (strcmp(r->param, param) == 0 && r->index && strcmp(r->index, index) == 0)
      return arena_printf(e->a, "t_pk_%s_%d.v[t_k]", param, i);
  }
  PackRef *r = ARENA_NEW(e->a, PackRef);
  r->param = param;
  r->ctype = cu_storage_ctype(v->dtype);
  r->value = v;
  r->index = index;
  vec_push(e->a, &e->packs, r);
  return arena_printf(e->a, "t_pk_%s_%d.v[t_k]", param, e->packs.len - 1);
}

static const char *memory_elem(GEmit *e, const char *param, const Value *v, const int *map) {
  char body[TECC_MAX_RANK];
  memcpy(body, e->body_axis, sizeof body);
  const char *off = offset_expr(e, &v->shape, map);
  if (is_row_operand(e, v, map, off)) {
    memcpy(e->body_axis, body, sizeof body); /* read as a pack: its axes are the load's */
    return row_pack_elem(e, param, v, map);
  }
  return tensor_elem(e, param, v, off);
}

static const char *load_expr(GEmit *e, Value *v, const int *map) {
  if (v->op == IR_INPUT) {
    const char *name = e->names->inputs[v->index];
    if (v->shape.rank == 0) {
      add_param(e, P_SCALAR, v->index, NULL, name);
      return cu_load_conv_of(e->a, e->k, v, name);
    }
    add_param(e, P_INPUT, v->index, NULL, name);
    return cu_load_conv_of(e->a, e->k, v, memory_elem(e, name, v, map));
  }
  const char *p = stored_param(e, v);
  return cu_load_conv_of(e->a, e->k, v, memory_elem(e, p, v, map));
}

static int read_from_memory(GEmit *e, const Value *v) {
  return v->op == IR_INPUT || (e->kp->stored[v->id] && e->kp->group_of[v->id] != e->g->id);
}

static const char *value_expr(GEmit *e, Value *v, const int *map) {
  if (e->result && v == e->g->reduce)
    return e->result;
  if (v->op == IR_CONST)
    return cu_const_literal(e->a, v);
  if (v->op == IR_BROADCAST) {
    int amap[TECC_MAX_RANK];
    broadcast_arg_map(v, map, amap);
    return value_expr(e, v->args[0], amap);
  }
  Memo *m = memo_find(&e->memo, v, map);
  if (m)
    return m->name;
  const char *expr = read_from_memory(e, v) ? load_expr(e, v, map) : compute_expr(e, v, map);
  const char *name = fresh_name(e->a, &e->taken, value_base_name(e, v));
  memo_add(e->a, &e->memo, v, map, name);
  emit(e->body, "const %s %s = %s;", cu_compute_ctype(v->dtype), name, expr);
  return name;
}

/* ---- writing roots ----------------------------------------------------------- */

static const char *ws_param(GEmit *e, Value *v) {
  for (int i = 0; i < e->params.len; i++) {
    KParam *p = e->params.items[i];
    if (p->kind == P_WS_WRITE && p->value == v)
      return p->name;
  }
  return add_param(e, P_WS_WRITE, 0, v, value_param_name(e, P_WS_WRITE, v))->name;
}

/* Element t_k of the packed loop's store pack of `param`: `stored`, or
 * where the pack converts as a whole (cu_converts_packs()), the f32 `expr` into
 * the pack's staging array. */
static void emit_pack_store(GEmit *e, Out *o, const char *param, Value *v, const char *expr, const char *stored) {
  const char *elem = pack_elem(e, param, v, 1);
  if (cu_converts_packs(v->dtype))
    emit(o, "t_f_%s[t_k] = %s;", param, expr);
  else
    emit(o, "%s = %s;", elem, stored);
}

/* Stores `expr` (computed as v's dtype) at `off` of every buffer v lives in. */
static void emit_stores(GEmit *e, Out *o, Value *v, const char *expr, const char *off) {
  const char *stored = cu_store_conv(e->a, v->dtype, expr);
  for (int i = 0; i < e->k->noutputs; i++) {
    if (e->k->outputs[i].value != v)
      continue;
    add_param(e, P_OUTPUT, i, NULL, e->names->outputs[i]);
    if (e->vec)
      emit_pack_store(e, o, e->names->outputs[i], v, expr, stored);
    else
      emit(o, "%s[%s] = %s;", e->names->outputs[i], off, stored);
  }
  if (e->kp->home[v->id].kind == HOME_WORKSPACE) {
    const char *ws = ws_param(e, v);
    if (e->vec)
      emit_pack_store(e, o, ws, v, expr, stored);
    else
      emit(o, "%s[%s] = %s;", ws, off, stored);
  }
}

/* ---- one group's kernel ------------------------------------------------------ */

static void add_root_params(GEmit *e) {
  for (int r = 0; r < e->g->roots.len; r++) {
    Value *v = e->g->roots.items[r];
    for (int i = 0; i < e->k->noutputs; i++)
      if (e->k->outputs[i].value == v)
        add_param(e, P_OUTPUT, i, NULL, e->names->outputs[i]);
    if (e->kp->home[v->id].kind == HOME_WORKSPACE)
      ws_param(e, v);
  }
}

static void add_size_params(GEmit *e) {
  add_root_params(e);
  for (int i = 0; i < e->k->nsizevars; i++)
    add_param(e, P_SIZE, i, NULL, e->names->sizes[i]);
  for (int i = 0; i < e->k->nsizevars; i++)
    if (e->fastdiv[i])
      add_param(e, P_FASTDIV, i, NULL, arena_printf(e->a, "t_fd_%s", e->names->sizes[i]));
}

/* Parameters are ordered: inputs and stored reads, outputs and workspace,
 * sizes, fast divisors (the order they were met, within each class). */
static int param_class(const KParam *p) {
  switch (p->kind) {
  case P_INPUT: case P_SCALAR: case P_STORED_READ: return 0;
  case P_OUTPUT: case P_WS_WRITE: return 1;
  case P_SIZE: return 2;
  default: return 3;
  }
}

static void order_params(GEmit *e) {
  PtrVec sorted = {0};
  for (int c = 0; c < 4; c++)
    for (int i = 0; i < e->params.len; i++)
      if (param_class(e->params.items[i]) == c)
        vec_push(e->a, &sorted, e->params.items[i]);
  e->params = sorted;
}

/* "x.te:3, 4" — the .te lines the group's values came from. */
static const char *source_lines(GEmit *e) {
  Buf b;
  buf_init(&b, e->a);
  const SourceFile *last_file = NULL;
  int lines[64], n = 0;
  for (int i = 0; i < e->g->members.len; i++) {
    const Value *v = e->g->members.items[i];
    if (!v->loc.file)
      continue;
    int line, col;
    source_line_col(v->loc.file, v->loc.begin, &line, &col);
    int seen = 0;
    for (int j = 0; j < n; j++)
      seen |= lines[j] == line;
    if (seen || n == 64)
      continue;
    if (v->loc.file != last_file)
      buf_printf(&b, "%s%s:", n ? "; " : "", source_name(v->loc.file));
    else
      buf_puts(&b, ",");
    buf_printf(&b, "%d", line);
    last_file = v->loc.file;
    lines[n++] = line;
  }
  return n ? buf_cstr(&b) : "(no source)";
}

/* What the group writes: output names, or the value's name for workspace. */
static const char *roots_str(GEmit *e) {
  Buf b;
  buf_init(&b, e->a);
  int n = 0;
  for (int i = 0; i < e->g->roots.len; i++) {
    const Value *v = e->g->roots.items[i];
    for (int o = 0; o < e->k->noutputs; o++)
      if (e->k->outputs[o].value == v)
        buf_printf(&b, "%s%s", n++ ? ", " : "", e->k->outputs[o].name);
    if (e->kp->home[v->id].kind == HOME_WORKSPACE)
      buf_printf(&b, "%s%s (workspace)", n++ ? ", " : "",
                 v->name ? v->name : arena_printf(e->a, "v%d", v->id));
  }
  return buf_cstr(&b);
}

/* Is group i of the plan launched as a programmatic dependent of the
 * launch before it (tecc::launch_next)?  Loop groups after a call's first
 * group are: the GPU starts them while the kernel before them ends, and
 * they wait at their top (wait_for_prior_grid) for its end, which waits
 * for the one before it, so the call's order holds.  It spares the gap
 * between two launches: the per-tensor quantization's cast, after its
 * absolute maximum, took 0.5-0.8 us less (bench/NOTES.md, issue 49).  The
 * call's first launch is an ordinary one: it follows the caller's work. */
static int launched_chained(const KernelPlan *kp, int i) {
  return i > 0 && i < kp->groups.len && ((const Group *)kp->groups.items[i])->kind == GROUP_LOOP;
}

/* The top of the last kernel of group e->g: it lets the next group, where
 * that is launched chained, begin launching, and waits for the launch
 * before it where it was itself launched chained (a reduction's second
 * stage, never chained this way, waits for its first:
 * emit_wait_for_first_stage()). */
static void emit_chain_top(const GEmit *e, Out *o) {
  if (launched_chained(e->kp, e->g->id + 1))
    emit(o, "tecc::let_next_launch(); /* group %d, launched next, waits for this grid's end */", e->g->id + 1);
  if (launched_chained(e->kp, e->g->id))
    emit(o, "tecc::wait_for_prior_grid(); /* launched early: what the kernel before wrote is visible after this */");
}

/* A first stage lets its second (launched by tecc::launch_next) be
 * launched at once; the second waits for the first's end. */
static void emit_let_final_launch(Out *o) {
  emit(o, "tecc::let_next_launch(); /* the second stage waits for this grid's end */");
}

static void emit_wait_for_first_stage(Out *o) {
  emit(o, "tecc::wait_for_prior_grid(); /* the first stage's partials are all written */");
}

/* The kernel's comment, template line and signature; opens its body.
 * Its instances of 64-bit indices are bound to at least one block an SM:
 * with the bound's threads alone ptxas gave them 32 to 40 registers, for
 * every block an SM can hold, and spilled 8 to 24 bytes (their index
 * arithmetic is twice as wide; issue 45); with a minimum it takes what
 * they need (a minimum of 4 blocks of 256 spilled f64 column
 * reductions).  Those of 32-bit indices keep the one-argument form (0):
 * a minimum moves ptxas's choice for them too, and they run the suite. */
static void open_kernel(GEmit *e, Out *o, const char *tparams, int max_threads, const char *extra) {
  emit(o, "/* %s, group %d: %s (%s), writes %s; from %s */", e->k->name, e->g->id,
       group_kind_name(e->g->kind), class_name(e->g->schedule->cls), roots_str(e), source_lines(e));
  emit(o, "template <%s>", tparams);
  open_block(o, "__global__ void __launch_bounds__(%d, sizeof(IndexT) == 8 ? 1 : 0) %s(%s%s)", max_threads, e->kname,
             param_decls(e->a, e->k, &e->params, e->g->kind == GROUP_LOOP && e->kp->in_place_ok), extra);
}

/* Does v, as the group computes it, divide floats?  (`seen`: the values
 * already visited.) */
static int divides_floats(const GEmit *e, const Value *v, PtrVec *seen) {
  if (vec_contains(seen, v) || !vec_contains(&e->g->members, v))
    return 0;
  vec_push(e->a, seen, (void *)v);
  if (v->op == IR_BINARY && v->bop == BIN_DIV && cu_is_float(v->dtype))
    return 1;
  for (int i = 0; i < v->nargs; i++)
    if (divides_floats(e, v->args[i], seen))
      return 1;
  return 0;
}

/* The stores of the group's roots at t_i, packed or not.
 * Every value of the element first, then every store: an output written
 * in place over an input (doc/abi.md §4) is read before it is overwritten.
 * The roots that divide floats are computed first: a division's slow
 * path is a call, and the values live across it are saved around it
 * (bin_i32's eight results, the quotient computed after five others,
 * spilled 12 bytes; first, none: ptxas -v, sm_90, issue 45). */
static Out *hoist_values(GEmit *e);

static Out *loop_body(GEmit *e, int vec) {
  e->lin_used = 0;
  e->vec = vec;
  e->memo.len = 0;
  e->pre = vec && e->g->schedule->reuse_axis >= 0 ? hoist_values(e) : NULL;
  e->body = new_out(e->a);
  int map[TECC_MAX_RANK];
  identity_map(map, e->g->domain.rank);
  Out *stores = new_out(e->a);
  const char **exprs = ARENA_ARRAY(e->a, const char *, e->g->roots.len);
  for (int divides = 1; divides >= 0; divides--)
    for (int i = 0; i < e->g->roots.len; i++) {
      Value *r = e->g->roots.items[i];
      PtrVec seen = {0};
      if (divides_floats(e, r, &seen) == divides)
        exprs[i] = value_expr(e, ir_stored_value(r), map);
    }
  for (int i = 0; i < e->g->roots.len; i++)
    emit_stores(e, stores, e->g->roots.items[i], exprs[i], "t_i");
  emit_fragment(e->body, stores);
  e->vec = 0;
  return e->body;
}

/* The split of linear index `idx` into the axes the bodies use (SPLIT_
 * flags). */
static Out *loop_decompose(GEmit *e, const char *idx, int flags) {
  Out *d = new_out(e->a);
  if (memchr(e->used_axis, 1, sizeof e->used_axis))
    emit_decompose(e, d, idx, ~0u, flags);
  return d;
}

/* The pack's index t_i0 split into the axes in `used` alone (nothing
 * where there are none). */
static Out *axes_decompose(GEmit *e, const char *used, int flags) {
  char all[TECC_MAX_RANK];
  memcpy(all, e->used_axis, sizeof all);
  memcpy(e->used_axis, used, sizeof all);
  Out *d = new_out(e->a);
  if (memchr(used, 1, sizeof all)) {
    emit(d, "const IndexT t_i0 = t_p * VEC;");
    emit_decompose(e, d, "t_i0", ~0u, flags);
  }
  memcpy(e->used_axis, all, sizeof all);
  return d;
}

static int loop_vec(const GEmit *e) {
  return e->packs.len ? 16 / e->pack_bytes : 1;
}

/* The kernel packs as many elements as the schedule planned (a reduction
 * that reads nothing in packs has no width to check). */
static void check_pack_width(const GEmit *e, const Variant *v) {
  if (e->packs.len && 16 / e->pack_bytes != v->vec)
    internal_error("%s reduction %d: the schedule packs %d elements, the kernel %d", class_name(e->g->schedule->cls),
                   e->g->id, v->vec, 16 / e->pack_bytes);
}

/* The name of pack i of the packed loop, r, that it loads, and its type. */
static const char *loaded_pack(GEmit *e, const PackRef *r, int i) {
  return r->at || r->index ? arena_printf(e->a, "t_pk_%s_%d", r->param, i) : arena_printf(e->a, "t_pk_%s", r->param);
}

static const char *loaded_type(GEmit *e, const PackRef *r) {
  return arena_printf(e->a, r->at ? "tecc::Gathered<%s, VEC>" : "tecc::Pack<%s, VEC>", r->ctype);
}

/* r is the input a loop re-reads from its end for the last time in the
 * call (GroupSchedule.reread_last).  On an H200, per-tensor fp8
 * quantization of 8192 x 4096 bf16 (its cast after the full maximum):
 * 49.6 -> 48.6 us a call (bench/NOTES.md, issue 49). */
static int streams_reread(const GEmit *e, const PackRef *r) {
  return e->g->schedule->reread_last && r->value == e->g->schedule->reread && !r->index;
}

/* Pack r of a full reduction with one_launch, or of the loop after it,
 * is one the launch keeps in shared memory (GroupSchedule.one_held):
 * `red` is the reduction's group. */
static int held_pack(const Group *red, const PackRef *r) {
  return !r->store && !r->index && !r->at && vec_contains(&red->schedule->one_held, r->value);
}

/* Loads pack i, r, at pack t_p into `dst`: a constant of that name
 * (`declare`), else an element of the steps' array (emit_packed_steps). */
static void emit_pack_load(GEmit *e, Out *o, const PackRef *r, int i, const char *dst, int declare) {
  const char *type = loaded_type(e, r);
  if (r->at) { /* a gathered pack (take_pack) */
    emit(o, "const %s t_g%d = %s;", r->itype, i, r->index);
    if (declare)
      emit(o, "%s %s;", type, dst);
    emit(o, "if (%s)", r->whole);
    emit(o, "  %s = reinterpret_cast<const %s *>(%s)[(%s) / VEC];", dst, type, r->param, r->at);
    emit(o, "else if (%s)", r->outside);
    emit(o, "  %s = %s::fill(%s);", dst, type, r->none);
    open_block(o, "else");
    emit(o, "%s = %s::fill(%s);", dst, type, r->none);
    emit(o, "#pragma unroll");
    emit(o, "for (int t_j = 0; t_j < VEC; t_j++) if (%s) %s.set(t_j, %s[%s + t_j]);", r->inside, dst, r->param, r->at);
    close_block(o, "");
    return;
  }
  const char *src = arena_printf(e->a, "reinterpret_cast<const %s *>(%s)[%s]", type, r->param, r->index ? r->index : "t_p");
  if (streams_reread(e, r))
    src = arena_printf(e->a, "tecc::load_stream(reinterpret_cast<const %s *>(%s) + t_p)", type, r->param);
  if (declare)
    emit(o, "const %s %s = %s;", type, dst, src);
  else
    emit(o, "%s = %s;", dst, src);
}

/* An output's pack, filled element by element by the body. */
static void declare_store_pack(GEmit *e, Out *o, const PackRef *r) {
  emit(o, "tecc::Pack<%s, VEC> t_pk_%s;", r->ctype, r->param);
  if (cu_converts_packs(r->value->dtype))
    emit(o, "float t_f_%s[VEC];", r->param);
}

/* The body for each of the pack's VEC elements, then its outputs' packs
 * stored at t_p. */
static void emit_pack_body(GEmit *e, Out *o, const Out *body, int body_lin) {
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_k = 0; t_k < VEC; t_k++)");
  if (body_lin)
    emit(o, "const IndexT t_i = t_p * VEC + t_k;");
  emit_fragment(o, body);
  close_block(o, "");
  for (int i = 0; i < e->packs.len; i++) {
    PackRef *r = e->packs.items[i];
    if (!r->store)
      continue;
    if (cu_converts_packs(r->value->dtype))
      emit(o, "%s;", cu_pack_conv(e->a, r->value->dtype, arena_printf(e->a, "t_f_%s", r->param),
                                  arena_printf(e->a, "t_pk_%s", r->param)));
    emit(o, "reinterpret_cast<tecc::Pack<%s, VEC> *>(%s)[t_p] = t_pk_%s;", r->ctype, r->param, r->param);
  }
}

/* One pack's step of the packed loop, at pack t_p: its packs loaded, the
 * body for each of its VEC elements, its packs stored. */
static void emit_pack_step(GEmit *e, Out *o, const Out *body, int body_lin) {
  for (int i = 0; i < e->packs.len; i++) {
    PackRef *r = e->packs.items[i];
    if (r->store)
      declare_store_pack(e, o, r);
    else
      emit_pack_load(e, o, r, i, loaded_pack(e, r, i), 1);
  }
  emit_pack_body(e, o, body, body_lin);
}

/* A loop's block, counted from the domain's end where an earlier group
 * read its input (GroupSchedule.reread). */
static const char *loop_block(const GEmit *e) {
  return e->g->schedule->reread ? "(IndexT)(gridDim.x - 1 - blockIdx.x)" : "(IndexT)blockIdx.x";
}

/* The packed loop over whole packs, around the packed body.  When the
 * body indexes the domain's axes, rows are whole packs (the host checks
 * it): the index is split once per pack, at its first element. */
static void emit_packed_loop(GEmit *e, Out *o, const Out *decomp, const Out *body, int body_lin) {
  open_block(o, "for (IndexT t_p = %s * blockDim.x + threadIdx.x; t_p < t_npack; t_p += t_stride)", loop_block(e));
  if (memchr(e->used_axis, 1, sizeof e->used_axis)) /* decomp splits t_i0 */
    emit(o, "const IndexT t_i0 = t_p * VEC;");
  emit_fragment(o, decomp);
  emit_pack_step(e, o, body, body_lin);
  close_block(o, "");
}

static void open_steps(Out *o, const char *count, const char *step, const char *cond);

/* The inside of a packed loop of n steps: every step's packs loaded into
 * arrays, then each step's body and stores, reading its packs under
 * their one-step names, where `cond` holds.  `held`: a one launch's
 * reduction, whose kept packs (GroupSchedule.one_held) come from shared
 * memory here. */
static void emit_steps_inside(GEmit *e, Out *o, const Out *const decomp[2], const Out *body, int body_lin, int n,
                              const char *step, const char *cond, const Group *held) {
  for (int i = 0; i < e->packs.len; i++) {
    const PackRef *r = e->packs.items[i];
    if (!r->store)
      emit(o, "%s t_st%d[%d]; /* step t_u's %s */", loaded_type(e, r), i, n, loaded_pack(e, r, i));
  }
  for (int pass = 0; pass < 2; pass++) { /* the loads, then the bodies */
    open_steps(o, arena_printf(e->a, "%d", n), step, cond);
    emit_fragment(o, decomp[pass]);
    for (int i = 0; i < e->packs.len; i++) {
      PackRef *r = e->packs.items[i];
      if (pass == 0 && !r->store && held && held_pack(held, r))
        emit(o, "t_st%d[t_u] = t_hold_%s[(t_j0 - t_u) * blockDim.x + threadIdx.x];", i, r->param);
      else if (pass == 0 && !r->store)
        emit_pack_load(e, o, r, i, arena_printf(e->a, "t_st%d[t_u]", i), 0);
      else if (pass == 1 && r->store)
        declare_store_pack(e, o, r);
      else if (pass == 1)
        emit(o, "const %s &%s = t_st%d[t_u];", loaded_type(e, r), loaded_pack(e, r, i), i);
    }
    if (pass == 1)
      emit_pack_body(e, o, body, body_lin);
    close_block(o, "");
    close_block(o, "");
  }
}

/* A one launch's loop over the packs its reduction's steps gave each
 * thread, its last first (from L2), n at a time; where the reduction
 * keeps packs in shared memory (GroupSchedule.one_held), two loops:
 * steps t_jlast down to t_held from memory, then t_held - 1 down to 0
 * from shared memory, so that no step tests where its pack is (a test a
 * step cost the per-tensor quantization 11% more instructions and 4%
 * of its time at 8192 x 4096 on an H200, bench/NOTES.md, issue 49). */
static void emit_steps_from_last(GEmit *e, Out *o, const Out *const decomp[2], const Out *body, int body_lin, int n) {
  const Group *red = e->kp->groups.items[e->g->id - 1];
  const char *step = "const IndexT t_p = t_p0 - (IndexT)t_u * t_stride;";
  emit(o, "const IndexT t_first = (IndexT)blockIdx.x * blockDim.x + threadIdx.x;");
  if (!red->schedule->one_held.len) {
    open_block(o, "for (IndexT t_p0 = t_first < t_npack ? t_first + (t_npack - 1 - t_first) / t_stride * t_stride : -1; "
                  "t_p0 >= 0; t_p0 -= %d * t_stride)", n);
    emit_steps_inside(e, o, decomp, body, body_lin, n, step, "t_p >= 0", NULL);
    close_block(o, "");
    return;
  }
  emit(o, "const IndexT t_jlast = t_first < t_npack ? (t_npack - 1 - t_first) / t_stride : -1; /* the thread's last step */");
  open_block(o, "for (IndexT t_j0 = t_jlast, t_p0 = t_first + t_j0 * t_stride; t_j0 >= t_held; t_j0 -= %d, "
                "t_p0 -= %d * t_stride)", n, n);
  emit_steps_inside(e, o, decomp, body, body_lin, n, step, "t_j0 - t_u >= t_held", NULL);
  close_block(o, "");
  emit(o, "/* then the steps kept in shared memory */");
  open_block(o, "for (IndexT t_j0 = t_jlast < t_held - 1 ? t_jlast : t_held - 1, t_p0 = t_first + t_j0 * t_stride; "
                "t_j0 >= 0; t_j0 -= %d, t_p0 -= %d * t_stride)", n, n);
  emit_steps_inside(e, o, decomp, body, body_lin, n, step, "t_j0 - t_u >= 0", red);
  close_block(o, "");
}

/* The packed loop in n steps (GroupSchedule.steps): a gathered load
 * waits on its index's load.  Each pass splits the index into the axes
 * it reads itself (decomp[0] the loads', decomp[1] the body's:
 * GEmit.load_axis, body_axis), so that neither declares a position it
 * does not read. */
static void emit_packed_steps(GEmit *e, Out *o, const Out *const decomp[2], const Out *body, int body_lin, int n) {
  open_block(o, "for (IndexT t_p0 = %s * blockDim.x + threadIdx.x; t_p0 < t_npack; t_p0 += %d * t_stride)",
             loop_block(e), n);
  emit_steps_inside(e, o, decomp, body, body_lin, n, "const IndexT t_p = t_p0 + (IndexT)t_u * t_stride;",
                    "t_p < t_npack", NULL);
  close_block(o, "");
}

/* A lag plan (GroupSchedule.lag on its first group), and its loop. */
static int lag_plan(const KernelPlan *kp) {
  return kp->groups.len == 3 && ((const Group *)kp->groups.items[0])->schedule->lag;
}

static int lag_loop(const GEmit *e) {
  return e->g->id == 2 && lag_plan(e->kp);
}

static void emit_steps_inside(GEmit *e, Out *o, const Out *const decomp[2], const Out *body, int body_lin, int n,
                              const char *step, const char *cond, const Group *held);

/* The loop's packs [t_plo, t_phi) by the block's threads: one row of a
 * lag kernel (emit_lag_kernel()), whose rows are whole packs, LAG_STEPS
 * packs a thread loaded before any is stored (schedule.h says why). */
static void emit_loop_item(GEmit *e, const Out *const decomp[2], const Out *body, int body_lin) {
  Out *o = e->item = new_out(e->a);
  emit(o, "/* %s, group %d: packs [t_plo, t_phi) of the loop by the block's threads, an item of the lag kernel */",
       e->k->name, e->g->id);
  emit(o, "template <typename IndexT, int VEC>");
  open_block(o, "__device__ __forceinline__ void tecc_%s_g%d_item(%s, IndexT t_plo, IndexT t_phi)", e->k->name, e->g->id,
             param_decls_lag(e->a, e->k, &e->params));
  open_block(o, "for (IndexT t_p0 = t_plo + threadIdx.x; t_p0 < t_phi; t_p0 += %d * (IndexT)blockDim.x)", LAG_STEPS);
  emit_steps_inside(e, o, decomp, body, body_lin, LAG_STEPS, "const IndexT t_p = t_p0 + (IndexT)t_u * blockDim.x;",
                    "t_p < t_phi", NULL);
  close_block(o, "");
  close_block(o, "");
}

/* ---- reuse along an axis (GroupSchedule.reuse_axis) ------------------------- */

/* A value the packed body computes once for a thread's positions along
 * the reuse axis: software math of positions alone that does not vary
 * along it, at index map `map`. */
typedef struct Hoisted {
  Value *v;
  int map[TECC_MAX_RANK];
} Hoisted;

static void find_hoisted(GEmit *e, Value *v, const int *map, PtrVec *seen, PtrVec *out) {
  if (v->op == IR_CONST)
    return;
  if (v->op == IR_BROADCAST) {
    int amap[TECC_MAX_RANK];
    broadcast_arg_map(v, map, amap);
    find_hoisted(e, v->args[0], amap, seen, out);
    return;
  }
  if (seen_before(e->a, seen, v, map) || read_from_memory(e, v))
    return;
  uint32_t along = domain_axes_of(position_axes(e->kp, e->g, v, axes_memo(e)), v, map);
  if (footprint_slow_math(v) && !(along & (AXES_MEMORY | 1u << e->g->schedule->reuse_axis))) {
    Hoisted *h = ARENA_NEW(e->a, Hoisted);
    h->v = v;
    memcpy(h->map, map, sizeof(int) * (size_t)v->shape.rank);
    vec_push(e->a, out, h);
    return;
  }
  for (int i = 0; i < v->nargs; i++)
    find_hoisted(e, v->args[i], map, seen, out);
}

/* The hoisted values, computed for the VEC elements of the pack into
 * t_hN[VEC] (before the loop along the reuse axis, which then reads
 * them): `pre`. */
static Out *hoist_values(GEmit *e) {
  PtrVec hoisted = {0}, seen = {0};
  int map[TECC_MAX_RANK];
  identity_map(map, e->g->domain.rank);
  for (int i = 0; i < e->g->roots.len; i++)
    find_hoisted(e, ir_stored_value(e->g->roots.items[i]), map, &seen, &hoisted);
  Out *pre = new_out(e->a), *each = new_out(e->a);
  e->body = each;
  const char **names = ARENA_ARRAY(e->a, const char *, hoisted.len + 1);
  for (int i = 0; i < hoisted.len; i++) {
    Hoisted *h = hoisted.items[i];
    names[i] = arena_printf(e->a, "t_h%d", i);
    emit(pre, "%s %s[VEC];", cu_compute_ctype(h->v->dtype), names[i]);
    emit(each, "%s[t_k] = %s;", names[i], value_expr(e, h->v, h->map));
  }
  if (hoisted.len) {
    emit(pre, "#pragma unroll");
    open_block(pre, "for (int t_k = 0; t_k < VEC; t_k++)");
    emit_fragment(pre, each);
    close_block(pre, "");
  }
  e->memo.len = 0; /* what `each` declared is out of scope after it */
  for (int i = 0; i < hoisted.len; i++) {
    Hoisted *h = hoisted.items[i];
    memo_add(e->a, &e->memo, h->v, h->map, arena_printf(e->a, "%s[t_k]", names[i]));
  }
  return pre;
}


/* The packed loop of a group that reuses along axis A: a thread's pack
 * of the domain whose A counts chunks, the hoisted values computed once,
 * then its `reuse` positions along A, a pack step each. */
static void emit_reuse_loop(GEmit *e, Out *o, const Out *decomp, const Out *pre, const Out *body, int body_lin) {
  const Shape *s = &e->g->domain;
  const int A = e->g->schedule->reuse_axis, R = e->g->schedule->reuse, I = e->inner_axis;
  const char *size = dim_expr(e, s->d[A]);
  emit(o, "const IndexT t_reps = (%s + %d) / %d; /* chunks of %d along axis %d */", size, R - 1, R, R, A);
  emit(o, "const IndexT t_nchunk = t_n / %s * t_reps / VEC;", size);
  open_block(o, "for (IndexT t_u = %s * blockDim.x + threadIdx.x; t_u < t_nchunk; t_u += t_stride)", loop_block(e));
  emit(o, "const IndexT t_i0 = t_u * VEC;");
  emit_fragment(o, decomp);
  emit_fragment(o, pre);
  emit(o, "#pragma unroll 1");
  open_block(o, "for (IndexT t_d%d = t_c%d * %d; t_d%d < t_c%d * %d + %d && t_d%d < %s; t_d%d++)", A, A, R, A, A, R, R, A,
             size, A);
  int axes[TECC_MAX_RANK], n = shape_axes(s, ~0u, axes);
  const char *row = NULL;
  for (int j = 0; j + 1 < n; j++)
    row = row ? arena_printf(e->a, "(%s) * %s + t_d%d", row, dim_expr(e, s->d[axes[j]]), axes[j])
              : arena_printf(e->a, "t_d%d", axes[j]);
  emit(o, "const IndexT t_q%d = %s;", I, row);
  emit(o, "const IndexT t_p = (t_q%d * %s + t_d%d) / VEC;", I, dim_expr(e, s->d[I]), I);
  emit_pack_step(e, o, body, body_lin);
  close_block(o, "");
  close_block(o, "");
}

/* Frees the names a body took since `mark` for the next body of the
 * kernel (the scalar tail names its temporaries as the packed body did),
 * keeping those of the parameters it added: they stay the kernel's, and
 * a second value of the same name (a stored read of another `v3`) would
 * have been given one of them again, a parameter declared twice, which
 * nvcc refuses (a random program, seed 7700103: a full reduction whose
 * epilogue reads a value its steps read under another node). */
static void reuse_body_names(GEmit *e, int mark) {
  nameset_truncate(&e->taken, mark);
  for (int i = 0; i < e->params.len; i++)
    nameset_add(&e->taken, ((const KParam *)e->params.items[i])->name);
}

/* The scalar loop over the elements past the last whole pack. */
static void emit_loop_tail(Out *o, const Out *decomp, const Out *sbody) {
  open_block(o, "for (IndexT t_i = t_npack * VEC + (IndexT)blockIdx.x * blockDim.x + threadIdx.x; t_i < t_n; t_i += t_stride)");
  emit_fragment(o, decomp);
  emit_fragment(o, sbody);
  close_block(o, "");
}

/* The loop group runs in the launch of the full reduction before it
 * (GroupSchedule.one_launch). */
static int joins_launch_before(const GEmit *e) {
  const int id = e->g->id;
  return id > 0 && ((const Group *)e->kp->groups.items[id - 1])->schedule->one_launch;
}

/* Packed loop: VEC elements per thread and iteration through 16-byte
 * packs (when the host found every packed pointer aligned; else VEC is
 * 1), then a scalar loop over the tail. */
static void emit_loop_kernel(GEmit *e, Out *o) {
  e->lin = "t_i";
  const int reuse = e->g->schedule->reuse_axis >= 0;
  int ntaken = nameset_mark(&e->taken);
  Out *vbody = loop_body(e, 1);
  Out *pre = e->pre;
  int vbody_lin = e->lin_used;
  char load_axis[TECC_MAX_RANK], body_axis[TECC_MAX_RANK]; /* the packed body's (emit_packed_steps) */
  memcpy(load_axis, e->load_axis, sizeof load_axis);
  memcpy(body_axis, e->body_axis, sizeof body_axis);
  reuse_body_names(e, ntaken); /* the scalar body reuses the names */
  Out *sbody = loop_body(e, 0);
  Out *decomp = loop_decompose(e, "t_i", 0);
  if (reuse) /* the reuse loop splits every axis: rows must be whole packs (emit_loop_launch) */
    for (int i = 0; i < e->g->domain.rank; i++)
      e->used_axis[i] |= !dim_is_one(&e->g->domain, i);
  Out *pdecomp = loop_decompose(e, "t_i0", reuse ? SPLIT_CHUNKS : e->row_quotient ? SPLIT_ROW : 0);
  const Out *step_decomp[2] = {axes_decompose(e, load_axis, e->row_quotient ? SPLIT_ROW : 0),
                               axes_decompose(e, body_axis, 0)};
  add_size_params(e);
  order_params(e);
  e->body = NULL;
  open_kernel(e, o, "typename IndexT, int VEC", e->g->schedule->max_threads, "");
  emit_chain_top(e, o);
  emit(o, "const IndexT t_n = %s;", numel_expr(e, &e->g->domain, ~0u, "(IndexT)"));
  emit(o, "const IndexT t_stride = (IndexT)blockDim.x * gridDim.x;");
  emit(o, "const IndexT t_npack = t_n / VEC;");
  if (reuse)
    emit_reuse_loop(e, o, pdecomp, pre, vbody, vbody_lin);
  else if (e->g->schedule->steps > 1)
    emit_packed_steps(e, o, step_decomp, vbody, vbody_lin, e->g->schedule->steps);
  else
    emit_packed_loop(e, o, pdecomp, vbody, vbody_lin);
  emit_loop_tail(o, decomp, sbody);
  close_block(o, "");
  if (lag_loop(e))
    emit_loop_item(e, step_decomp, vbody, vbody_lin);
  if (joins_launch_before(e)) { /* the same loops for the one launch, the packs from the last, as many in
                                   flight as the reduction's steps had */
    const Group *rg = e->kp->groups.items[e->g->id - 1];
    e->steps = new_out(e->a);
    emit_steps_from_last(e, e->steps, step_decomp, vbody, vbody_lin, rg->schedule->variants[0].items);
    emit_loop_tail(e->steps, decomp, sbody);
  }
}

typedef struct RedInfo {
  const char *acc_type;  /* accumulator C type */
  const char *identity;
  const char *op;        /* functor */
  DType acc_dt;          /* for non-arg reductions */
  int is_arg;
} RedInfo;

static const char *max_identity(Arena *a, DType t, int is_max) {
  switch (t) {
  case DT_I32: return is_max ? "INT32_MIN" : "INT32_MAX";
  case DT_I64: return is_max ? "INT64_MIN" : "INT64_MAX";
  case DT_BOOL: return is_max ? "false" : "true";
  case DT_F64: return is_max ? "(-tecc::inf_f64())" : "tecc::inf_f64()";
  default: (void)a; return is_max ? "(-tecc::inf_f32())" : "tecc::inf_f32()";
  }
}

static RedInfo red_info(Arena *a, const Value *r) {
  RedInfo ri = {0};
  DType at = cu_compute_dtype(r->args[0]->dtype), vt = cu_compute_dtype(r->dtype);
  ri.acc_dt = vt;
  ri.acc_type = cu_compute_ctype(vt);
  switch (r->rop) {
  case RED_SUM:
  case RED_MEAN:
    ri.identity = cu_is_float(vt) ? cu_float_literal(a, 0.0, vt == DT_F32) : (vt == DT_I64 ? "INT64_C(0)" : "0");
    ri.op = "tecc::Sum()";
    break;
  case RED_PROD:
    ri.identity = cu_is_float(vt) ? cu_float_literal(a, 1.0, vt == DT_F32) : (vt == DT_I64 ? "INT64_C(1)" : "1");
    ri.op = "tecc::Prod()";
    break;
  case RED_MAX:
  case RED_MIN:
    ri.identity = max_identity(a, vt, r->rop == RED_MAX);
    ri.op = r->rop == RED_MAX ? "tecc::Max()" : "tecc::Min()";
    break;
  case RED_ANY:
  case RED_ALL:
    ri.acc_dt = DT_BOOL;
    ri.acc_type = "bool";
    ri.identity = r->rop == RED_ANY ? "false" : "true";
    ri.op = r->rop == RED_ANY ? "tecc::Any()" : "tecc::All()";
    break;
  case RED_ARGMAX:
  case RED_ARGMIN:
    ri.is_arg = 1;
    ri.acc_dt = at;
    ri.acc_type = arena_printf(a, "tecc::Arg<%s>", cu_compute_ctype(at));
    ri.identity = arena_printf(a, "tecc::make_arg<%s>(%s, INT64_MAX)", cu_compute_ctype(at),
                               max_identity(a, at, r->rop == RED_ARGMAX));
    ri.op = r->rop == RED_ARGMAX ? "tecc::ArgMax()" : "tecc::ArgMin()";
    break;
  default:
    internal_error("reduction %s reached the back end", reduce_name(r->rop));
  }
  return ri;
}

/* Stores `acc`, the whole reduction of output element `off`, in every
 * root: the reduction and the casts that round it (fuse.c). */
static void emit_result_at(GEmit *e, Out *o, Value *r, const RedInfo *ri, const char *acc, const char *off) {
  const char *result = acc;
  if (ri->is_arg)
    result = arena_printf(e->a, "%s.i", acc);
  else if (r->rop == RED_MEAN)
    result = cu_mean_of(e->a, acc, ri->acc_type);
  result = cu_convert(e->a, result, ri->is_arg ? DT_I64 : ri->acc_dt, r->dtype);
  if (e->g->roots.len > 1 || e->g->roots.items[0] != r || e->epilogue) {
    emit(o, "const %s t_result = %s;", cu_compute_ctype(r->dtype), result);
    result = "t_result";
  }
  for (int i = 0; i < e->g->roots.len; i++) {
    Value *v = e->g->roots.items[i];
    emit_stores(e, o, v, v == r ? result : cu_convert(e->a, result, r->dtype, v->dtype), off);
  }
  if (e->epilogue)
    emit_fragment(o, e->epilogue);
}

/* A full reduction's epilogue (Group.epilogue): each value computed from
 * the result (t_result, emit_result_at()) and stored, as the thread that
 * stores the result runs it.  Written before the kernels are opened, so
 * that what it reads (scalars, other full reductions' results) is among
 * their parameters. */
static Out *epilogue_body(GEmit *e) {
  if (!e->g->epilogue.len)
    return NULL;
  Out *saved = e->body;
  const char *lin = e->lin;
  int map[TECC_MAX_RANK];
  for (int i = 0; i < TECC_MAX_RANK; i++)
    map[i] = -1; /* every axis of a value of one element: index 0 */
  e->body = new_out(e->a);
  e->memo.len = 0;
  e->vec = 0;
  e->lin = NULL;
  e->result = "t_result";
  for (int i = 0; i < e->g->epilogue.len; i++) {
    Value *v = e->g->epilogue.items[i];
    emit_stores(e, e->body, v, value_expr(e, v, map), "0");
  }
  e->result = NULL;
  e->lin = lin;
  e->memo.len = 0;
  Out *body = e->body;
  e->body = saved;
  return body;
}

/* A parameter the second stage of a split or full reduction takes: what
 * it writes, the sizes, and what an epilogue reads. */
static int final_param(const GEmit *e, const KParam *p) {
  return p->kind == P_OUTPUT || p->kind == P_WS_WRITE || p->kind == P_SIZE ||
         (e->g->epilogue.len && (p->kind == P_SCALAR || p->kind == P_STORED_READ));
}

/* Stores t_acc, the whole reduction of output element t_o. */
static void emit_reduce_final(GEmit *e, Out *o, Value *r, const RedInfo *ri) {
  emit_result_at(e, o, r, ri, "t_acc", "t_o");
}

/* The second stage of a split reduction: combines the partials of each
 * output element in split order (deterministic), then stores it. */
static void emit_split_final(GEmit *e, Out *o, Value *r, const RedInfo *ri) {
  const Group *g = e->g;
  emit(o, "/* %s, group %d: the partials of split reductions, combined in order */", e->k->name, g->id);
  emit(o, "template <typename IndexT>");
  Buf h;
  buf_init(&h, e->a);
  buf_printf(&h, "__global__ void __launch_bounds__(%d) %s_final(const %s *__restrict__ t_part, int t_splits",
             e->g->schedule->final_threads, e->kname, ri->acc_type);
  for (int i = 0; i < e->params.len; i++) {
    const KParam *p = e->params.items[i];
    if (final_param(e, p))
      buf_printf(&h, ", %s", param_decl(e->a, e->k, p, 0));
  }
  buf_puts(&h, ")");
  open_block(o, "%s", buf_cstr(&h));
  emit_chain_top(e, o);
  emit_wait_for_first_stage(o);
  emit(o, "const IndexT t_outer = %s;", numel_expr(e, &g->domain, ~r->axes, "(IndexT)"));
  emit(o, "const IndexT t_red = %s;", numel_expr(e, &g->domain, r->axes, "(IndexT)"));
  emit(o, "(void)t_red;");
  open_block(o, "for (IndexT t_o = (IndexT)blockIdx.x * blockDim.x + threadIdx.x; t_o < t_outer; t_o += (IndexT)blockDim.x * gridDim.x)");
  emit(o, "%s t_acc = t_part[t_o];", ri->acc_type);
  emit(o, "for (int t_s = 1; t_s < t_splits; t_s++)");
  emit(o, "  t_acc = %s(t_acc, t_part[(IndexT)t_s * t_outer + t_o]);", ri->op);
  emit_reduce_final(e, o, r, ri);
  close_block(o, "");
  close_block(o, "");
}

/* The reduction's step for element t_r, into e->body. */
static void reduce_body(GEmit *e, Value *r, const RedInfo *ri) {
  int map[TECC_MAX_RANK];
  identity_map(map, e->g->domain.rank);
  const char *x = cu_convert(e->a, value_expr(e, r->args[0], map), r->args[0]->dtype, ri->acc_dt);
  e->arg_index_used = ri->is_arg;
  if (ri->is_arg)
    emit(e->body, "%s = %s(%s, tecc::make_arg(%s, (int64_t)t_r));", e->acc, ri->op, e->acc, x);
  else
    emit(e->body, "%s = %s(%s, %s);", e->acc, ri->op, e->acc, x);
}

/* The body indexes one of the domain axes in `mask`. */
static int uses_axes(const GEmit *e, uint32_t mask) {
  for (int i = 0; i < e->g->domain.rank; i++)
    if (e->used_axis[i] && ((mask >> i) & 1u))
      return 1;
  return 0;
}

/* Splits t_o (kept axes) and t_r (reduced axes) where the body needs it. */
static void reduce_decompose(GEmit *e, Value *r, Out *kept, Out *red) {
  if (uses_axes(e, ~r->axes))
    emit_decompose(e, kept, "t_o", ~r->axes, 0);
  if (uses_axes(e, r->axes))
    emit_decompose(e, red, "t_r", r->axes, 0);
}

/* After the block reduction: the partial, or the whole result. */
static void emit_reduce_result(GEmit *e, Out *o, Value *r, const RedInfo *ri) {
  open_block(o, "if (t_o < t_outer && threadIdx.x == 0)");
  open_block(o, "if (gridDim.y > 1)");
  emit(o, "t_part[(IndexT)blockIdx.y * t_outer + t_o] = t_acc[0];");
  else_block(o);
  emit_result_at(e, o, r, ri, "t_acc[0]", "t_o");
  close_block(o, "");
  close_block(o, "");
}

/* The parameters a split reduction kernel adds: its partials and chunk. */
static const char *chunk_params(GEmit *e, const RedInfo *ri) {
  return arena_printf(e->a, ", %s *__restrict__ t_part, IndexT t_chunk", ri->acc_type);
}

/* The block reduction's shared memory, the sizes, and the extent of the
 * chunk of the reduced axis this block adds (blockIdx.y). */
static void emit_chunk_extent(GEmit *e, Out *o, Value *r, const RedInfo *ri, int threads) {
  emit_let_final_launch(o);
  emit(o, "__shared__ %s t_smem[%d];", ri->acc_type, threads);
  emit(o, "const IndexT t_outer = %s;", numel_expr(e, &e->g->domain, ~r->axes, "(IndexT)"));
  emit(o, "const IndexT t_red = %s;", numel_expr(e, &e->g->domain, r->axes, "(IndexT)"));
  emit(o, "const IndexT t_rbeg = (IndexT)blockIdx.y * t_chunk;");
  emit(o, "const IndexT t_rend = t_red - t_rbeg < t_chunk ? t_red : t_rbeg + t_chunk;");
}

/* ---- full reductions ---------------------------------------------------------- */

/* The step of a full or column reduction into accumulator `acc`: packed
 * (pack element t_k of step t_u) or element by element. */
static Out *step_body(GEmit *e, const RedInfo *ri, int vec, const char *acc) {
  e->body = new_out(e->a);
  e->lin_used = e->arg_index_used = 0;
  e->memo.len = 0;
  e->vec = vec;
  e->pack_sub = vec ? "[t_u]" : "";
  e->acc = acc;
  reduce_body(e, e->g->reduce, ri);
  e->vec = 0;
  e->pack_sub = "";
  e->acc = "t_acc";
  return e->body;
}

/* Loads step t_u's packs, pack `index` of each packed tensor, where
 * `cond` holds; `whole` (a kernel constant) says all are aligned, else
 * they are read element by element into the same places (the same sums). */
static void open_steps(Out *o, const char *count, const char *step, const char *cond) {
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_u = 0; t_u < %s; t_u++)", count);
  emit(o, "%s", step);
  open_block(o, "if (%s)", cond);
}

/* The adds after the loads: pack element t_k of each step t_u, where
 * `cond` holds; closed by close_step_elements. */
static void open_step_elements(Out *o, const char *step, const char *cond) {
  open_steps(o, "ITEMS", step, cond);
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_k = 0; t_k < VEC; t_k++)");
}

static void close_step_elements(Out *o) {
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
}

/* Pack `index` of r: a reduction reads each element of its packed
 * tensors once, so one that no later group reads again is streamed past
 * L2 (tecc::load_stream). */
static const char *step_pack_load(GEmit *e, const PackRef *r, const char *index) {
  const char *pack = arena_printf(e->a, "reinterpret_cast<const tecc::Pack<%s, VEC> *>(%s)", r->ctype, r->param);
  if (read_by_later_group(e->kp, e->g, r->value))
    return arena_printf(e->a, "%s[%s]", pack, index);
  return arena_printf(e->a, strchr(index, ' ') ? "tecc::load_stream(%s + (%s))" : "tecc::load_stream(%s + %s)", pack,
                      index);
}

static void emit_step_loads(GEmit *e, Out *o, const char *step, const char *cond, const char *index, const char *whole) {
  if (!e->packs.len) /* nothing moves in packs (a middle axis is read element by element) */
    return;
  open_steps(o, "ITEMS", step, cond);
  for (int i = 0; i < e->packs.len; i++) {
    const PackRef *r = e->packs.items[i];
    if (!whole) {
      emit(o, "t_pk_%s[t_u] = %s;", r->param, step_pack_load(e, r, index));
      continue;
    }
    emit(o, "if (%s) t_pk_%s[t_u] = %s;", whole, r->param, step_pack_load(e, r, index));
    emit(o, "else for (int t_k = 0; t_k < VEC; t_k++) t_pk_%s[t_u].v[t_k] = %s[(%s) * VEC + t_k];", r->param,
         r->param, index);
  }
  close_block(o, "");
  close_block(o, "");
}

static void declare_step_packs(GEmit *e, Out *o) {
  for (int i = 0; i < e->packs.len; i++) {
    const PackRef *r = e->packs.items[i];
    emit(o, "tecc::Pack<%s, VEC> t_pk_%s[ITEMS];", r->ctype, r->param);
  }
}

/* A one launch's steps (`hold`): the packs of its first t_held steps
 * that the loop after the barrier reads again (GroupSchedule.one_held)
 * kept in shared memory, thread-major so that a warp's are adjacent. */
static void emit_hold_stores(GEmit *e, Out *o, const char *step) {
  open_block(o, "if (t_j0 < t_held)");
  open_steps(o, "ITEMS", step, "t_p < t_npack && t_j0 + t_u < t_held");
  for (int i = 0; i < e->packs.len; i++) {
    const PackRef *r = e->packs.items[i];
    if (held_pack(e->g, r))
      emit(o, "t_hold_%s[(t_j0 + t_u) * blockDim.x + threadIdx.x] = t_pk_%s[t_u];", r->param, r->param);
  }
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
}

/* The packed steps: ITEMS packs of each tensor loaded, then added, pack
 * element t_k into accumulator t_k; `hold`: those of a one launch, t_j0
 * the thread's step. */
static void emit_full_steps(GEmit *e, Out *o, const Out *decomp, const Out *body, int body_r, int hold) {
  if (hold)
    open_block(o, "for (IndexT t_p0 = (IndexT)blockIdx.x * blockDim.x + threadIdx.x, t_j0 = 0; t_p0 < t_npack; "
                  "t_p0 += ITEMS * t_stride, t_j0 += ITEMS)");
  else
    open_block(o, "for (IndexT t_p0 = (IndexT)blockIdx.x * blockDim.x + threadIdx.x; t_p0 < t_npack; t_p0 += ITEMS * t_stride)");
  declare_step_packs(e, o);
  const char *step = "const IndexT t_p = t_p0 + (IndexT)t_u * t_stride;";
  emit_step_loads(e, o, step, "t_p < t_npack", "t_p", "PACKED");
  if (hold)
    emit_hold_stores(e, o, step);
  open_step_elements(o, step, "t_p < t_npack");
  if (memchr(e->used_axis, 1, sizeof e->used_axis) || body_r) /* decomp splits t_r, or the body reads it */
    emit(o, "const IndexT t_r = t_p * VEC + t_k;");
  emit_fragment(o, decomp);
  emit_fragment(o, body);
  close_step_elements(o);
  close_block(o, "");
}

/* A full reduction's first stage, to t_sum (its block's partial), after
 * VEC and ITEMS; `hold`: a one launch's, keeping packs for its loop. */
static Out *full_steps(GEmit *e, const RedInfo *ri, const Out *decomp, const Out *vbody, int vbody_r, const Out *sbody,
                       int hold) {
  Out *st = new_out(e->a);
  emit(st, "const IndexT t_red = %s;", numel_expr(e, &e->g->domain, ~0u, "(IndexT)"));
  emit(st, "const IndexT t_npack = t_red / VEC;");
  emit(st, "const IndexT t_stride = (IndexT)blockDim.x * gridDim.x;");
  emit(st, "%s t_acc[VEC];", ri->acc_type);
  emit(st, "#pragma unroll");
  emit(st, "for (int t_k = 0; t_k < VEC; t_k++) t_acc[t_k] = %s;", ri->identity);
  emit_full_steps(e, st, decomp, vbody, vbody_r, hold);
  open_block(st, "for (IndexT t_r = t_npack * VEC + (IndexT)blockIdx.x * blockDim.x + threadIdx.x; t_r < t_red; t_r += t_stride)");
  emit_fragment(st, decomp);
  emit_fragment(st, sbody);
  close_block(st, "");
  emit(st, "#pragma unroll");
  emit(st, "for (int t_w = 1; t_w < VEC; t_w *= 2) /* a fixed tree over the accumulators */");
  emit(st, "  for (int t_k = 0; t_k + t_w < VEC; t_k += 2 * t_w) t_acc[t_k] = %s(t_acc[t_k], t_acc[t_k + t_w]);", ri->op);
  emit(st, "const %s t_sum = tecc::row_allreduce(t_acc[0], %s, t_smem);", ri->acc_type, ri->op);
  return st;
}

/* Stage one of a full reduction (schedule.c, full_reduction). */
static void emit_full_kernel(GEmit *e, Out *o) {
  Group *g = e->g;
  Value *r = g->reduce;
  RedInfo ri = red_info(e->a, r);
  const Variant *v = &g->schedule->variants[0];
  e->lin = "t_r";
  add_root_params(e); /* named before the mark: the tail body reuses only its own names */
  int ntaken = nameset_mark(&e->taken);
  Out *vbody = step_body(e, &ri, 1, "t_acc[t_k]");
  int vbody_r = e->lin_used || e->arg_index_used;
  reuse_body_names(e, ntaken); /* the tail reuses the names */
  Out *sbody = step_body(e, &ri, 0, "t_acc[0]");
  e->epilogue = epilogue_body(e);
  check_pack_width(e, v);
  Out *decomp = new_out(e->a);
  if (memchr(e->used_axis, 1, sizeof e->used_axis))
    emit_decompose(e, decomp, "t_r", ~0u, 0);
  add_size_params(e);
  order_params(e);
  e->body = NULL;
  e->steps = full_steps(e, &ri, decomp, vbody, vbody_r, sbody, 0);
  if (g->schedule->one_held.len)
    e->one_steps = full_steps(e, &ri, decomp, vbody, vbody_r, sbody, 1);
  const Out *st = e->steps;
  open_kernel(e, o, "typename IndexT, bool PACKED", v->threads_x, arena_printf(e->a, ", %s *__restrict__ t_part", ri.acc_type));
  emit(o, "/* Each thread adds ITEMS packs of VEC elements per step, pack element k");
  emit(o, " * into t_acc[k]; block b leaves its sum in t_part[b] for %s_final. */", e->kname);
  emit_let_final_launch(o);
  emit(o, "constexpr int VEC = %d, ITEMS = %d;", v->vec, v->items);
  emit(o, "__shared__ %s t_smem[32];", ri.acc_type);
  emit_fragment(o, st);
  open_block(o, "if (threadIdx.x == 0)");
  open_block(o, "if (gridDim.x > 1)");
  emit(o, "t_part[blockIdx.x] = t_sum;");
  else_block(o);
  emit_result_at(e, o, r, &ri, "t_sum", "0");
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
}

/* The per-block partials t_part[0 .. count) combined in block order by
 * the block into t_acc, as the second stage and every block of a one
 * launch do (the same bits), its result then stored by thread 0. */
static void emit_partials_combine(GEmit *e, Out *o, const RedInfo *ri, const char *count) {
  const Group *g = e->g;
  if (g->reduce->rop == RED_MEAN)
    emit(o, "const IndexT t_red = %s;", numel_expr(e, &g->domain, ~0u, "(IndexT)"));
  emit(o, "%s t_acc = %s;", ri->acc_type, ri->identity);
  emit(o, "for (int t_b = threadIdx.x; t_b < %s; t_b += blockDim.x)", count);
  emit(o, "  t_acc = %s(t_acc, t_part[t_b]);", ri->op);
  emit(o, "t_acc = tecc::row_allreduce(t_acc, %s, t_smem);", ri->op);
  open_block(o, "if (threadIdx.x == 0)");
  emit_result_at(e, o, g->reduce, ri, "t_acc", "0");
  close_block(o, "");
}

/* Stage two: one block combines the per-block partials in block order. */
static void emit_full_final(GEmit *e, Out *o) {
  Group *g = e->g;
  RedInfo ri = red_info(e->a, g->reduce);
  emit(o, "/* %s, group %d: the per-block partials, combined in block order */", e->k->name, g->id);
  emit(o, "template <typename IndexT>");
  Buf h;
  buf_init(&h, e->a);
  buf_printf(&h, "__global__ void __launch_bounds__(%d) %s_final(const %s *__restrict__ t_part, int t_parts",
             g->schedule->final_threads, e->kname, ri.acc_type);
  for (int i = 0; i < e->params.len; i++) {
    const KParam *p = e->params.items[i];
    if (final_param(e, p))
      buf_printf(&h, ", %s", param_decl(e->a, e->k, p, 0));
  }
  buf_puts(&h, ")");
  open_block(o, "%s", buf_cstr(&h));
  emit_chain_top(e, o);
  emit_wait_for_first_stage(o);
  emit(o, "__shared__ %s t_smem[32];", ri.acc_type);
  emit_partials_combine(e, o, &ri, "t_parts");
  close_block(o, "");
}

/* The host function that sizes a full reduction's grid (the launch and
 * the workspace of its partials both call it): ITEMS packs per thread,
 * at most sm_threads resident per SM. */
static void emit_full_shape(GEmit *e, Out *o) {
  const Variant *v = &e->g->schedule->variants[0];
  emit(o, "/* %s, group %d: the grid of a full reduction (schedule.c) */", e->k->name, e->g->id);
  open_block(o, "inline unsigned %s_grid(int64_t t_len)", e->kname);
  emit(o, "return tecc::grid_size(t_len, %d, %d);", v->threads_x * v->items * v->vec, v->sm_threads / v->threads_x);
  close_block(o, "");
}

/* ---- row reductions ---------------------------------------------------------- */

/* Pack t_u of a row step that starts at pack t_p0. */
static const char ROW_STEP[] = "const IndexT t_p = t_p0 + (IndexT)t_u * blockDim.x;";

/* The adds of a row step's packs (loaded into t_pk_<param>[ITEMS]), pack
 * element t_k into t_acc[t_k]. */
static void emit_step_adds(GEmit *e, Out *o, const Out *dred, const Out *body, int body_r) {
  open_step_elements(o, ROW_STEP, "t_p < t_pend");
  if (uses_axes(e, e->g->reduce->axes) || body_r) /* dred splits t_r, or the body reads it */
    emit(o, "const IndexT t_r = t_p * VEC + t_k;");
  emit_fragment(o, dred);
  emit_fragment(o, body);
  close_step_elements(o);
}

/* The steps of a row whose packed tensors are aligned and whose length is
 * whole packs: ITEMS packs of each loaded, then added, pack element t_k
 * into t_acc[t_k]; the packs of chunk [t_rbeg, t_rend) (whole packs:
 * tecc::split_launch's `align`). */
static void emit_row_packs(GEmit *e, Out *o, const Out *dred, const Out *body, int body_r) {
  emit(o, "const IndexT t_npack = t_red / VEC, t_pend = t_rend / VEC;");
  open_block(o, "for (IndexT t_p0 = t_rbeg / VEC + threadIdx.x; t_p0 < t_pend; t_p0 += ITEMS * (IndexT)blockDim.x)");
  declare_step_packs(e, o);
  emit_step_loads(e, o, ROW_STEP, "t_p < t_pend", "t_o * t_npack + t_p", NULL);
  emit_step_adds(e, o, dred, body, body_r);
  close_block(o, "");
}

/* A row's start in a row reduction's loop: its index t_o, the
 * accumulators at the identity. */
static void emit_row_start(Out *o, const RedInfo *ri) {
  emit(o, "const IndexT t_o = t_ob + threadIdx.y;");
  emit(o, "%s t_acc[VEC];", ri->acc_type);
  emit(o, "#pragma unroll");
  emit(o, "for (int t_k = 0; t_k < VEC; t_k++) t_acc[t_k] = %s;", ri->identity);
}

/* A row's end: the accumulators in a fixed tree, the block's all-reduce
 * (every thread of the block takes part), the partial or the result. */
static void emit_row_end(GEmit *e, Out *o, Value *r, const RedInfo *ri) {
  emit(o, "#pragma unroll");
  emit(o, "for (int t_w = 1; t_w < VEC; t_w *= 2) /* a fixed tree over the accumulators */");
  emit(o, "  for (int t_k = 0; t_k + t_w < VEC; t_k += 2 * t_w) t_acc[t_k] = %s(t_acc[t_k], t_acc[t_k + t_w]);", ri->op);
  emit(o, "t_acc[0] = tecc::row_allreduce(t_acc[0], %s, t_smem);", ri->op);
  emit_reduce_result(e, o, r, ri);
}

/* The packed tensors' packs of a step as words (tecc::load_word), which
 * the loop carries from one row to the next. */
static void declare_step_words(GEmit *e, Out *o) {
  for (int i = 0; i < e->packs.len; i++) {
    const PackRef *r = e->packs.items[i];
    emit(o, "tecc::PackWord<%s, VEC> t_pw_%s[ITEMS];", r->ctype, r->param);
  }
}

/* Pack `index` of r as a word (the loads of step_pack_load()). */
static const char *step_word_load(GEmit *e, const PackRef *r, const char *index) {
  return arena_printf(e->a, "tecc::%s(reinterpret_cast<const tecc::Pack<%s, VEC> *>(%s) + (%s))",
                      read_by_later_group(e->kp, e->g, r->value) ? "load_word" : "load_stream_word", r->ctype, r->param,
                      index);
}

/* Step t_p0's packs of row `row` into the words, where `cond` holds, else
 * zero words (so nothing the loads did not write is carried). */
static void emit_word_loads(GEmit *e, Out *o, const char *row, const char *p0, const char *cond) {
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_u = 0; t_u < ITEMS; t_u++)");
  emit(o, "const IndexT t_p = %s + (IndexT)t_u * blockDim.x;", p0);
  for (int i = 0; i < e->packs.len; i++) {
    const PackRef *r = e->packs.items[i];
    const char *load = step_word_load(e, r, arena_printf(e->a, "%s * t_npack + t_p", row));
    emit(o, "if (%s) t_pw_%s[t_u] = %s;", cond, r->param, load);
    emit(o, "else t_pw_%s[t_u] = {};", r->param);
  }
  close_block(o, "");
}

/* The rows of a block whose packed tensors are aligned and whose length
 * is whole packs: each step ITEMS packs of each loaded, then added, pack
 * element t_k into t_acc[t_k]; the packs of chunk [t_rbeg, t_rend) (whole
 * packs: tecc::split_launch's `align`).  The next row's first step is
 * loaded once this row's last is added, before this row's all-reduce and
 * store, so a block's loads do not stop between its rows: a row of one
 * step (rowsum f32 16384 x 4096) otherwise waited for the all-reduce with
 * nothing in flight (bench/NOTES.md, issue 48). */
static void emit_rows_ahead(GEmit *e, Out *o, Value *r, const RedInfo *ri, const Out *dkept, const Out *dred,
                            const Out *body, int body_r) {
  emit(o, "const IndexT t_npack = t_red / VEC, t_pend = t_rend / VEC, t_first = t_rbeg / VEC + threadIdx.x;");
  emit(o, "const IndexT t_ostep = (IndexT)gridDim.x * blockDim.y;");
  declare_step_words(e, o);
  open_scope(o);
  emit(o, "const IndexT t_o = (IndexT)blockIdx.x * blockDim.y + threadIdx.y; /* the block's first row */");
  emit_word_loads(e, o, "t_o", "t_first", "t_o < t_outer && t_p < t_pend");
  close_block(o, "");
  open_block(o, "for (IndexT t_ob = (IndexT)blockIdx.x * blockDim.y; t_ob < t_outer; t_ob += t_ostep)");
  emit_row_start(o, ri);
  open_block(o, "if (t_o < t_outer)");
  emit_fragment(o, dkept);
  open_block(o, "for (IndexT t_p0 = t_first; t_p0 < t_pend; t_p0 += ITEMS * (IndexT)blockDim.x)");
  emit(o, "/* the row's first step was loaded ahead, during the row before */");
  open_block(o, "if (t_p0 != t_first)");
  emit_word_loads(e, o, "t_o", "t_p0", "t_p < t_pend");
  close_block(o, "");
  declare_step_packs(e, o);
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_u = 0; t_u < ITEMS; t_u++)");
  for (int i = 0; i < e->packs.len; i++) {
    const PackRef *pr = e->packs.items[i];
    emit(o, "t_pk_%s[t_u] = tecc::word_pack<%s, VEC>(t_pw_%s[t_u]);", pr->param, pr->ctype, pr->param);
  }
  close_block(o, "");
  emit_step_adds(e, o, dred, body, body_r);
  close_block(o, "");
  emit(o, "/* the next row's first step, in flight during this row's all-reduce */");
  emit_word_loads(e, o, "(t_o + t_ostep)", "t_first", "t_o + t_ostep < t_outer && t_p < t_pend");
  close_block(o, "");
  emit_row_end(e, o, r, ri);
  close_block(o, "");
}

/* The steps of any other row, in the packed steps' order (the same sums,
 * bit for bit, whichever path a call takes): thread x takes the VEC
 * elements of row packs x, x + blockDim.x, ... counted from the row's
 * start, element t_k into t_acc[t_k], loaded one by one; the row's last
 * pack may be short. */
static void emit_row_elements(Out *o, const Out *dred, const Out *body) {
  emit(o, "const IndexT t_pend = (t_rend + VEC - 1) / VEC;");
  open_block(o, "for (IndexT t_p = t_rbeg / VEC + threadIdx.x; t_p < t_pend; t_p += blockDim.x)");
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_k = 0; t_k < VEC; t_k++)");
  emit(o, "const IndexT t_r = t_p * VEC + t_k;");
  open_block(o, "if (t_r < t_rend)");
  emit_fragment(o, dred);
  emit_fragment(o, body);
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
}

/* A row reduction: threads along the row (x), rows along y, VEC
 * accumulators a thread (schedule.c, reduction()); the column and full
 * classes have kernels of their own. */
static void emit_reduce_kernel(GEmit *e, Out *o) {
  Group *g = e->g;
  Value *r = g->reduce;
  RedInfo ri = red_info(e->a, r);
  const Variant *v = &g->schedule->variants[0];
  e->lin = reduce_linear_index(&g->domain, r->axes);
  add_root_params(e); /* named before the mark: the element body reuses only its own names */
  int ntaken = nameset_mark(&e->taken);
  Out *vbody = step_body(e, &ri, 1, "t_acc[t_k]");
  int vbody_r = e->lin_used || e->arg_index_used;
  reuse_body_names(e, ntaken);
  Out *sbody = step_body(e, &ri, 0, "t_acc[t_k]");
  check_pack_width(e, v);
  Out *dkept = new_out(e->a), *dred = new_out(e->a);
  reduce_decompose(e, r, dkept, dred);
  add_size_params(e);
  order_params(e);
  e->body = NULL;
  open_kernel(e, o, "typename IndexT, int ITEMS, bool PACKED", g->schedule->max_threads, chunk_params(e, &ri));
  emit(o, "/* Blocks with blockIdx.y = s reduce [s * t_chunk, (s + 1) * t_chunk); with");
  emit(o, " * several splits they leave partials in t_part for %s_final.  PACKED: the", e->kname);
  emit(o, " * row is whole packs and every packed pointer aligned to its pack, ITEMS");
  emit(o, " * of them a thread in flight. */");
  emit(o, "constexpr int VEC = %d;", v->vec);
  emit_chunk_extent(e, o, r, &ri, g->schedule->max_threads);
  int ahead = e->packs.len && v->prefetch; /* the packed rows load ahead */
  int step_packs = e->packs.len && !ahead;  /* the packed rows load in each step */
  if (ahead) {
    open_block(o, "if (PACKED)");
    emit_rows_ahead(e, o, r, &ri, dkept, dred, vbody, vbody_r);
    else_block(o);
  }
  open_block(o, "for (IndexT t_ob = (IndexT)blockIdx.x * blockDim.y; t_ob < t_outer; t_ob += (IndexT)gridDim.x * blockDim.y)");
  emit_row_start(o, &ri);
  open_block(o, "if (t_o < t_outer)");
  emit_fragment(o, dkept);
  if (step_packs) {
    open_block(o, "if (PACKED)");
    emit_row_packs(e, o, dred, vbody, vbody_r);
    else_block(o);
  }
  emit_row_elements(o, dred, sbody);
  if (step_packs)
    close_block(o, "");
  close_block(o, "");
  emit_row_end(e, o, r, &ri);
  close_block(o, "");
  if (ahead)
    close_block(o, "");
  close_block(o, "");
  emit_blank(o);
  emit_split_final(e, o, r, &ri);
}

/* ---- column reductions ------------------------------------------------------- */

/* ITEMS rows of VEC adjacent columns per thread and step: the loads first,
 * then the adds, column t_q * VEC + k into t_acc[k]. */
static void emit_column_steps(GEmit *e, Out *o, const Out *dkept, const Out *dred, const Out *body, int body_o) {
  open_block(o, "for (IndexT t_r0 = t_rbeg + threadIdx.y; t_r0 < t_rend; t_r0 += ITEMS * (IndexT)blockDim.y)");
  declare_step_packs(e, o);
  const char *step = "const IndexT t_r = t_r0 + (IndexT)t_u * blockDim.y;";
  emit_step_loads(e, o, step, "t_r < t_rend", "t_r * t_nq + t_q", NULL);
  open_step_elements(o, step, "t_r < t_rend");
  if (body_o)
    emit(o, "const IndexT t_o = t_q * VEC + t_k;");
  emit_fragment(o, dkept);
  emit_fragment(o, dred);
  emit_fragment(o, body);
  close_step_elements(o);
  close_block(o, "");
}

/* Columns of a thread combined across threadIdx.y at once (one pair of
 * barriers, independent folds; tecc::column_reduce); the shared memory
 * of a column kernel holds this many values per thread. */
enum { COLUMN_GROUP = 4 };

/* The column sums of the block's rows, combined across threadIdx.y in a
 * fixed order: the partial of split blockIdx.y, or the result. */
static void emit_column_results(GEmit *e, Out *o, Value *r, const RedInfo *ri) {
  emit(o, "constexpr int t_cg = VEC < %d ? VEC : %d; /* columns combined at once */", COLUMN_GROUP, COLUMN_GROUP);
  emit(o, "for (int t_g = 0; t_g < VEC; t_g += t_cg) tecc::column_reduce<t_cg>(t_acc + t_g, %s, t_smem);", ri->op);
  open_block(o, "if (t_q < t_nq && threadIdx.y == 0)");
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_k = 0; t_k < VEC; t_k++)");
  emit(o, "const IndexT t_o = t_q * VEC + t_k;");
  open_block(o, "if (gridDim.y > 1)");
  emit(o, "t_part[(IndexT)blockIdx.y * t_outer + t_o] = t_acc[t_k];");
  else_block(o);
  emit_result_at(e, o, r, ri, "t_acc[t_k]", "t_o");
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
}

/* A column reduction (seed 003): threads along the contiguous columns,
 * VEC of them per thread in one 16-byte pack (VEC = 1 when the columns
 * are not whole packs), ITEMS rows in flight, partials combined across
 * threadIdx.y; the reduced axis split over gridDim.y when the columns
 * alone cannot fill the GPU (schedule.c). */
static void emit_column_kernel(GEmit *e, Out *o) {
  Group *g = e->g;
  Value *r = g->reduce;
  RedInfo ri = red_info(e->a, r);
  const Variant *v = &g->schedule->variants[0];
  e->lin = reduce_linear_index(&g->domain, r->axes);
  Out *body = step_body(e, &ri, 1, "t_acc[t_k]");
  int body_o = e->lin_used || uses_axes(e, ~r->axes); /* t_o: at e->lin, or split (dkept) */
  check_pack_width(e, v);
  Out *dkept = new_out(e->a), *dred = new_out(e->a);
  reduce_decompose(e, r, dkept, dred);
  add_size_params(e);
  order_params(e);
  e->body = NULL;
  open_kernel(e, o, "typename IndexT, int VEC", v->threads_x * v->threads_y, chunk_params(e, &ri));
  emit(o, "/* Thread (x, y) adds rows y, y + blockDim.y, ... of chunk blockIdx.y for the VEC");
  emit(o, " * columns of pack t_q; with several chunks the partials go to t_part for %s_final. */", e->kname);
  emit(o, "constexpr int ITEMS = %d;", v->items);
  emit_chunk_extent(e, o, r, &ri, v->threads_x * v->threads_y * COLUMN_GROUP);
  emit(o, "const IndexT t_nq = t_outer / VEC;");
  open_block(o, "for (IndexT t_qb = (IndexT)blockIdx.x * blockDim.x; t_qb < t_nq; t_qb += (IndexT)gridDim.x * blockDim.x)");
  emit(o, "const IndexT t_q = t_qb + threadIdx.x;");
  emit(o, "%s t_acc[VEC];", ri.acc_type);
  emit(o, "#pragma unroll");
  emit(o, "for (int t_k = 0; t_k < VEC; t_k++) t_acc[t_k] = %s;", ri.identity);
  open_block(o, "if (t_q < t_nq)");
  emit_column_steps(e, o, dkept, dred, body, body_o);
  close_block(o, "");
  emit_column_results(e, o, r, &ri);
  close_block(o, "");
  close_block(o, "");
  emit_blank(o);
  emit_split_final(e, o, r, &ri);
}

static GEmit *new_gemit(Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names) {
  GEmit *e = ARENA_NEW(a, GEmit);
  e->a = a;
  e->k = k;
  e->kp = kp;
  e->g = g;
  e->names = names;
  e->fastdiv = ARENA_ARRAY(a, char, k->nsizevars + 1);
  e->body = new_out(a);
  e->pack_sub = "";
  e->acc = "t_acc";
  e->inner_axis = g->kind == GROUP_LOOP ? innermost_axis(&g->domain) : -1;
  nameset_init(&e->taken, a);
  take_entry_names(&e->taken, k, names);
  const char *what = g->kind == GROUP_LOOP ? "loop" : g->schedule->cls == CLASS_FULL ? "full" : schedule_name(g->sched);
  e->kname = arena_printf(a, "tecc_%s_g%d_%s", k->name, g->id, what);
  return e;
}

/* The block of one reduction variant, into t_l. */
static void emit_reduce_block(Out *o, const Variant *v) {
  if (v->fit == FIT_ROW) { /* ITEMS packs of VEC elements a thread and step, at most v->block threads a row */
    emit(o, "t_l.tx = (unsigned)tecc::pow2_at_least(tecc::ceil_div(t_len, %d), %d, %d);", v->vec * v->items,
         variant_min_lanes(v), v->block);
    emit(o, "t_l.ty = t_l.tx >= %d ? 1 : %d / t_l.tx;", v->block, v->block);
  } else {
    emit(o, "t_l.tx = %d;", v->threads_x);
    emit(o, "t_l.ty = %d;", v->threads_y);
  }
}

/* A row reduction's grid: a wave of v->sm_threads threads an SM at most,
 * TY rows a block. */
static void emit_row_grid(Out *o, const Variant *v) {
  emit(o, "t_l.grid = tecc::grid_size(t_rows, t_l.ty, %d / (t_l.tx * t_l.ty));", v->sm_threads);
}

/* Does row reduction ge take Variant.long_items packs a thread on long
 * rows (only where it loads packs)? */
static int long_rows(const GEmit *ge) {
  return ge->g->schedule->cls == CLASS_ROW && ge->g->schedule->variants[0].long_items && ge->packs.len;
}

/* Rows of long_packs packs or more that need no split: long_items packs a
 * thread, its block and grid again (the split stays the one of `items`:
 * one chunk). */
static void emit_long_rows_block(Out *o, const Variant *v) {
  Variant lv = *v;
  lv.items = v->long_items;
  open_block(o, "if (t_len >= %lld && t_l.splits == 1)", (long long)v->long_packs * v->vec);
  emit(o, "t_l.items = %d;", lv.items);
  emit_reduce_block(o, &lv);
  emit_row_grid(o, v);
  close_block(o, "");
}

/* The host function that sizes a reduction group's launch by its
 * records: the launch and the workspace of its partials both call it. */
static void emit_reduce_shape(GEmit *ge, Out *o) {
  const GroupSchedule *s = ge->g->schedule;
  int row = s->cls != CLASS_COLUMN;
  emit(o, "/* %s, group %d: block, grid and split of a %s reduction (schedule.c) */", ge->k->name, ge->g->id,
       class_name(s->cls));
  open_block(o, "inline tecc::Launch %s_shape(int64_t t_rows, int64_t t_len)", ge->kname);
  emit(o, "tecc::Launch t_l;");
  for (int i = 0; i < s->nvariants; i++) {
    const Variant *v = &s->variants[i];
    if (v->when == WHEN_LEN_AT_MOST)
      open_block(o, "if (t_len <= %lld)", (long long)v->limit);
    else if (i > 0)
      else_block(o);
    emit_reduce_block(o, v);
  }
  if (s->nvariants > 1)
    close_block(o, "");
  const Variant *v = &s->variants[0];
  if (row)
    emit_row_grid(o, v);
  else /* the same grid for packed and unpacked columns: the same sums */
    emit(o, "t_l.grid = tecc::grid_size(tecc::ceil_div(t_rows, %d), t_l.tx, %d / (t_l.tx * t_l.ty));", v->vec,
         v->sm_threads);
  if (row) /* chunks of whole packs */
    emit(o, "tecc::split_launch(&t_l, t_len, t_l.tx, %d);", v->vec);
  else
    emit(o, "tecc::split_launch(&t_l, t_len, t_l.ty);");
  emit(o, "t_l.items = %d;", v->items);
  if (long_rows(ge))
    emit_long_rows_block(o, v);
  emit(o, "return t_l;");
  close_block(o, "");
}

static void emit_group_kernel(GEmit *e, Out *o) {
  if (e->g->kind == GROUP_STITCH) /* H9: emit_stitch.c */
    emit_stitch_kernel(o, e->a, e->k, e->kp, e->g, e->names);
  else if (e->g->kind == GROUP_LOOP)
    emit_loop_kernel(e, o);
  else if (e->g->schedule->cls == CLASS_FULL) {
    emit_full_kernel(e, o);
    emit_blank(o);
    emit_full_final(e, o);
    emit_blank(o);
    emit_full_shape(e, o);
  } else {
    if (e->g->schedule->cls == CLASS_COLUMN)
      emit_column_kernel(e, o);
    else
      emit_reduce_kernel(e, o);
    emit_blank(o);
    emit_reduce_shape(e, o);
  }
}

/* ---- a full reduction and the loop after it in one launch ----------------- */

/* Loop e, launched with the full reduction red before it in one kernel,
 * names its parameters apart from red's: red's are taken, and a slot
 * both pass keeps red's name (value_param_name()). */
static void join_launch_names(GEmit *e, const GEmit *red) {
  e->joined = red;
  for (int i = 0; i < red->params.len; i++)
    nameset_add(&e->taken, ((const KParam *)red->params.items[i])->name);
}

/* The kernel of both groups: the parameters of each, once (the
 * reduction's first: a slot it writes, the loop reads). */
static GEmit *one_launch_gemit(GEmit *red, GEmit *loop) {
  GEmit *e = new_gemit(red->a, red->k, red->kp, red->g, red->names);
  e->kname = arena_printf(e->a, "tecc_%s_g%d_one", red->k->name, red->g->id);
  const PtrVec *lists[2] = {&red->params, &loop->params};
  for (int l = 0; l < 2; l++)
    for (int i = 0; i < lists[l]->len; i++) {
      KParam *p = lists[l]->items[i], *same = NULL;
      for (int j = 0; j < e->params.len && !same; j++)
        if (strcmp(((KParam *)e->params.items[j])->name, p->name) == 0)
          same = e->params.items[j];
      if (!same)
        vec_push(e->a, &e->params, p);
      else if (!same_param(same, p))
        internal_error("kernel %s, groups %d and %d: two parameters named %s", red->k->name, red->g->id,
                       loop->g->id, p->name);
    }
  order_params(e);
  return e;
}

/* The loop reads held pack r of reduction red's again (a held tensor is
 * a pack in both, a compiler bug where not). */
static int loop_reads_pack(const GEmit *loop, const Group *red, const PackRef *r) {
  for (int i = 0; i < loop->packs.len; i++) {
    const PackRef *l = loop->packs.items[i];
    if (held_pack(red, l) && l->value == r->value)
      return 1;
  }
  return 0;
}

/* The one launch's shared memory, GroupSchedule.one_held: each thread's
 * first t_held packs of each held tensor, tensor after tensor, in the
 * reduction's order of its packs (the host's step bytes add them so). */
static void declare_held(GEmit *red, GEmit *loop, Out *o) {
  const GroupSchedule *s = red->g->schedule;
  int found = 0;
  const char *at = "t_dyn";
  emit(o, "extern __shared__ __align__(16) unsigned char t_dyn[]; /* the packs kept for the loop */");
  for (int i = 0; i < red->packs.len; i++) {
    const PackRef *r = red->packs.items[i];
    if (!held_pack(red->g, r))
      continue;
    if (!loop_reads_pack(loop, red->g, r))
      internal_error("kernel %s, group %d: held tensor %s not among the loop's packs", red->k->name, red->g->id,
                     r->param);
    const char *type = arena_printf(red->a, "tecc::Pack<%s, %d>", r->ctype, s->variants[0].vec);
    emit(o, "%s *const t_hold_%s = reinterpret_cast<%s *>(%s);", type, r->param, type, at);
    at = arena_printf(red->a, "t_hold_%s + (size_t)t_held * blockDim.x", r->param);
    found++;
  }
  if (found != s->one_held.len)
    internal_error("kernel %s, group %d: %d of %d held tensors among its packs", red->k->name, red->g->id, found,
                   s->one_held.len);
}

/* GroupSchedule.one_launch: the reduction's steps (its first stage's),
 * each block's partial, a barrier of the grid, every block combining the
 * partials as the second stage does (the same bits: final_threads is
 * this block) and storing the same result, then the loop's packs, those
 * each thread read in the steps, the last first, as many loaded at a
 * time as the steps load (one at a time, the loop ran 6% slower than the
 * three launches at 8192 x 14336 on an H200: bench/NOTES.md, issue 49). */
static void emit_one_launch_kernel(GEmit *red, GEmit *loop, Out *o) {
  GEmit *e = red->one = one_launch_gemit(red, loop);
  const Group *g = red->g;
  const Variant *v = &g->schedule->variants[0];
  RedInfo ri = red_info(e->a, g->reduce);
  emit(o, "/* %s, groups %d and %d in one cooperative launch (schedule.c, one_launch); from %s */", e->k->name, g->id,
       loop->g->id, source_lines(loop));
  const int hold = g->schedule->one_held.len > 0;
  emit(o, "template <typename IndexT>");
  open_block(o, "__global__ void __launch_bounds__(%d, sizeof(IndexT) == 8 ? 1 : %d) %s(%s, %s *__restrict__ t_part%s)",
             v->threads_x, v->sm_threads / v->threads_x, e->kname,
             param_decls(e->a, e->k, &e->params, e->kp->in_place_ok), ri.acc_type, hold ? ", int t_held" : "");
  emit(o, "__shared__ %s t_smem[32];", ri.acc_type);
  if (hold)
    declare_held(red, loop, o);
  open_scope(o);
  emit(o, "constexpr bool PACKED = true; /* launched when every packed tensor is aligned */");
  emit(o, "constexpr int VEC = %d, ITEMS = %d;", v->vec, v->items);
  emit_fragment(o, hold ? red->one_steps : red->steps);
  emit(o, "if (threadIdx.x == 0) t_part[blockIdx.x] = t_sum;");
  close_block(o, "");
  emit(o, "tecc::grid_barrier(); /* every block's partial is written */");
  open_scope(o);
  emit(o, "/* every block combines the partials, as %s_final, and stores the same bits */", red->kname);
  emit_partials_combine(red, o, &ri, "(int)gridDim.x");
  close_block(o, "");
  emit(o, "__syncthreads(); /* what thread 0 stored, read below */");
  open_scope(o);
  emit(o, "constexpr int VEC = %d;", loop->g->schedule->variants[0].vec);
  emit(o, "const IndexT t_n = %s;", numel_expr(loop, &loop->g->domain, ~0u, "(IndexT)"));
  emit(o, "const IndexT t_stride = (IndexT)blockDim.x * gridDim.x;");
  emit(o, "const IndexT t_npack = t_n / VEC;");
  emit_fragment(o, loop->steps);
  close_block(o, "");
  close_block(o, "");
}

/* ---- host side: the launcher template and the entry point ------------------ */

typedef struct KEmit {
  Compilation *c;
  Arena *a;
  Kernel *k;
  KernelPlan *kp;
  const EntryNames *names;
  GEmit **groups; /* by group id */
  char *snap;     /* by input: may be read from a copy (in-place calls) */
  PtrVec counts;  /* Count*: the entry point's element counts */
  int index64_optional; /* the entry point has 64-bit-index launches that -DTECC_INDEX64=0 leaves out */
  struct KEmit *apart; /* the plan with the column sums apart (KernelPlan.apart), or NULL */
  PtrVec lag_params;   /* the lag kernel's parameters (GroupSchedule.lag; emit_lag_kernel()) */
} KEmit;
/* ---- a split plan's three groups in one persistent launch (GroupSchedule.lag) ---- */

/* The lag kernel's parameter of group `group`'s p: its own reciprocal
 * count (each group's differs), else the name every group shares. */
static const char *lag_arg(Arena *a, const KParam *p, int group) {
  return p->kind == P_RCOUNT ? arena_printf(a, "t_rcount%d", group) : p->name;
}

/* The lag kernel's parameters: every group's, once (a slot one writes
 * and another reads, as written), the reciprocal counts apart. */
static PtrVec lag_params(KEmit *ke, const PtrVec *const lists[3]) {
  PtrVec all = {0};
  for (int l = 0; l < 3; l++)
    for (int i = 0; i < lists[l]->len; i++) {
      const KParam *p = lists[l]->items[i], *same = NULL;
      if (p->kind == P_RCOUNT) {
        KParam *mine = ARENA_NEW(ke->a, KParam);
        *mine = *p;
        mine->name = lag_arg(ke->a, p, l);
        vec_push(ke->a, &all, mine);
        continue;
      }
      for (int j = 0; j < all.len && !same; j++)
        if (strcmp(((const KParam *)all.items[j])->name, p->name) == 0)
          same = all.items[j];
      if (!same)
        vec_push(ke->a, &all, (void *)p);
      else if (!same_param(same, p))
        internal_error("kernel %s, lag kernel: two parameters named %s", ke->k->name, p->name);
    }
  return all;
}

static const char *lag_call_args(KEmit *ke, const PtrVec *params, int group) {
  Buf b;
  buf_init(&b, ke->a);
  for (int i = 0; i < params->len; i++)
    buf_printf(&b, "%s%s", i ? ", " : "", lag_arg(ke->a, params->items[i], group));
  return buf_cstr(&b);
}

/* s with every `from` replaced by `to`. */
static const char *replace_all(Arena *a, const char *s, const char *from, const char *to) {
  Buf b;
  buf_init(&b, a);
  for (const char *at; (at = strstr(s, from)) != NULL; s = at + strlen(from))
    buf_printf(&b, "%.*s%s", (int)(at - s), s, to);
  buf_puts(&b, s);
  return buf_cstr(&b);
}

/* The kernel: blocks take tickets (tecc::lag_take); the first t_lag are
 * rows' statistics (group 0's item), the last t_lag rows' loops (group
 * 2's), between them the two in turn, so that a row is normalized t_lag
 * rows after its statistics, column-major (the rows of a column in turn:
 * row (c, b) is b * t_cols + c).  The block that counts the last of a
 * column's t_per rows folds their partials (group 1's item for column
 * c) and sets the column's flag, which its loops wait for.  t_lag >=
 * t_per: a column's statistics all come before its first loop. */
static void emit_lag_kernel(KEmit *ke, Out *o) {
  GEmit *const *gs = ke->groups;
  const PtrVec *const lists[3] = {gs[0]->item_params, gs[1]->item_params, &gs[2]->params};
  PtrVec params = lag_params(ke, lists);
  const Group *g = gs[0]->g, *f = gs[1]->g;
  emit(o, "/* %s, groups 0, 1 and 2 in one persistent launch, rows normalized t_lag rows after their statistics "
          "(schedule.c, lag_launch) */", ke->k->name);
  emit(o, "template <typename IndexT, int VEC, int LVEC, bool PACKS>");
  open_block(o, "__global__ void TECC_LAG_BOUND(%d, %d, %d) tecc_%s_lag(%s, unsigned *__restrict__ t_lagw, IndexT t_lag)",
             LAG_THREADS, 2, LAG_REGISTERS, ke->k->name, param_decls_lag(ke->a, ke->k, &params));
  emit(o, "__shared__ IndexT t_slot; /* the block's ticket (tecc::lag_take) */");
  emit(o, "__shared__ int t_last; /* the block counted a column's last row (tecc::lag_done) */");
  emit(o, "const IndexT t_cols = %s, t_per = %s;", numel_expr(gs[1], &f->domain, ~f->stitch->axes, "(IndexT)"),
       numel_expr(gs[1], &f->domain, f->stitch->axes, "(IndexT)"));
  emit(o, "const IndexT t_rows = t_cols * t_per, t_lpacks = %s / LVEC; /* a row's packs of the loop */",
       numel_expr(gs[0], &g->domain, g->stitch->axes, "(IndexT)"));
  open_block(o, "for (;;)");
  emit(o, "const IndexT t = tecc::lag_take(t_lagw, &t_slot);");
  emit(o, "if (t >= 2 * t_rows) break;");
  emit(o, "const IndexT t_u = t - t_lag;");
  emit(o, "const bool t_stats = t < t_lag || (t < 2 * t_rows - t_lag && (t_u & 1));");
  emit(o, "const IndexT t_i = t < t_lag ? t : t >= 2 * t_rows - t_lag ? t - t_rows : t_stats ? t_lag + t_u / 2 : t_u / 2;");
  emit(o, "const IndexT t_c = t_i / t_per, t_row = (t_i - t_c * t_per) * t_cols + t_c;");
  open_block(o, "if (t_stats)");
  emit(o, "tecc_%s_g0_item<IndexT, %d, VEC, PACKS>(%s, t_row);", ke->k->name, LAG_ITEMS, lag_call_args(ke, lists[0], 0));
  open_block(o, "if (tecc::lag_done(t_lagw + 2 + t_c, (unsigned)t_per, &t_last))");
  emit(o, "tecc_%s_g1_item<IndexT, 1>(%s, t_c);", ke->k->name, lag_call_args(ke, lists[1], 1));
  emit(o, "tecc::lag_set(t_lagw + 2 + t_cols + t_c);");
  close_block(o, "");
  else_block(o);
  emit(o, "tecc::lag_wait(t_lagw + 2 + t_cols + t_c);");
  emit(o, "tecc_%s_g2_item<IndexT, LVEC>(%s, t_row * t_lpacks, (t_row + 1) * t_lpacks);", ke->k->name,
       lag_call_args(ke, lists[2], 2));
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
  ke->lag_params = params;
}

/* The item functions of a lag plan's groups and its kernel. */
static void emit_lag(KEmit *ke, Out *o) {
  for (int i = 0; i < 2; i++) {
    GEmit *ge = ke->groups[i];
    ge->item_params = emit_stitch_item(o, ke->a, ke->k, ke->kp, ge->g, ke->names);
    emit_blank(o);
  }
  emit_fragment(o, ke->groups[2]->item);
  emit_blank(o);
  emit_lag_kernel(ke, o);
  emit_blank(o);
}


/* Every packed pointer is aligned to its pack, leaving out the tests in
 * `seen` (when not NULL), which takes those it adds. */
static const char *packs_aligned_once(KEmit *ke, GEmit *ge, int vec, PtrVec *seen) {
  Buf b;
  buf_init(&b, ke->a);
  for (int i = 0; i < ge->packs.len; i++) {
    const PackRef *r = ge->packs.items[i];
    const KParam *p = NULL;
    for (int j = 0; j < ge->params.len && !p; j++)
      if (strcmp(((KParam *)ge->params.items[j])->name, r->param) == 0)
        p = ge->params.items[j];
    if (!p)
      internal_error("packed tensor %s is not a parameter", r->param);
    const char *test = arena_printf(ke->a, "tecc::aligned_to(%s, sizeof(%s) * %d)", launch_arg(ke->a, ke->kp, ke->names, p),
                                    r->ctype, vec);
    int known = 0;
    for (int j = 0; seen && j < seen->len && !known; j++)
      known = strcmp(seen->items[j], test) == 0;
    if (known)
      continue;
    if (seen)
      vec_push(ke->a, seen, (void *)test);
    buf_printf(&b, "%s%s", b.len ? " && " : "", test);
  }
  return buf_cstr(&b);
}

static const char *packs_aligned(KEmit *ke, GEmit *ge, int vec) {
  return packs_aligned_once(ke, ge, vec, NULL);
}

/* The reduced count of a reduction group, saturating (it may overflow
 * only when the group has no output element). */
static const char *red_product(KEmit *ke, const Group *g) {
  Buf b;
  buf_init(&b, ke->a);
  buf_puts(&b, "INT64_C(1)");
  int axes[TECC_MAX_RANK], n = shape_axes(&g->domain, g->reduce->axes, axes);
  for (int j = 0; j < n; j++) {
    const char *prev = buf_cstr(&b);
    buf_init(&b, ke->a);
    buf_printf(&b, "tecc::sat_mul(%s, %s)", prev, host_dim(ke->a, ke->names, g->domain.d[axes[j]]));
  }
  return buf_cstr(&b);
}

/* ", out, ws, (IndexT)N" for the second stage of a split reduction. */
static const char *final_args(KEmit *ke, GEmit *ge) {
  Buf b;
  buf_init(&b, ke->a);
  for (int i = 0; i < ge->params.len; i++) {
    const KParam *p = ge->params.items[i];
    if (final_param(ge, p))
      buf_printf(&b, ", %s", launch_arg(ke->a, ke->kp, ke->names, p));
  }
  return buf_cstr(&b);
}

static const char *group_args(KEmit *ke, GEmit *ge) {
  return launch_args(ke->a, ke->kp, ke->names, &ge->params);
}

/* The launch of a loop kernel's instance of VEC v->vec on `grid`, chained
 * to the launch before it where launched_chained() says. */
static void emit_loop_kernel_launch(KEmit *ke, Out *o, GEmit *ge, const Variant *v, const char *grid) {
  if (launched_chained(ke->kp, ge->g->id))
    emit(o, "tecc::launch_next(%s<IndexT, %d>, dim3(%s), dim3(%d), stream, %s);", ge->kname, v->vec, grid, v->threads_x,
         group_args(ke, ge));
  else
    emit(o, "%s<IndexT, %d><<<%s, %d, 0, stream>>>(%s);", ge->kname, v->vec, grid, v->threads_x, group_args(ke, ge));
}

/* One elementwise variant: a pack of VEC elements per thread, enough
 * blocks to cover them all (schedule.c: no grid-stride steps); a loop in
 * steps (emit_packed_steps) takes them where its packs fill more than a
 * wave (tecc::steps_grid). */
static void emit_loop_variant(KEmit *ke, Out *o, GEmit *ge, const Variant *v) {
  const GroupSchedule *s = ge->g->schedule;
  if (s->steps > 1) {
    emit_loop_kernel_launch(ke, o, ge, v,
                            arena_printf(ke->a, "tecc::steps_grid(t_n, %d * %d, %d, %d)", v->threads_x, v->vec,
                                         v->threads_x, s->steps));
    return;
  }
  const char *per_block = v->items > 1 ? arena_printf(ke->a, "%d * %d * %d", v->threads_x, v->vec, v->items)
                                       : arena_printf(ke->a, "%d * %d", v->threads_x, v->vec);
  const char *work = "t_n";
  if (s->reuse_axis >= 0) { /* the positions along it in chunks (emit_reuse_loop) */
    const char *size = host_dim(ke->a, ke->names, ge->g->domain.d[s->reuse_axis]);
    work = arena_printf(ke->a, "t_n / %s * ((%s + %d) / %d)", size, size, s->reuse - 1, s->reuse);
  }
  emit_loop_kernel_launch(ke, o, ge, v, arena_printf(ke->a, "tecc::cover_grid(%s, %s)", work, per_block));
}

/* The test of aligned variant v of a loop: every packed pointer aligned
 * to its pack and, where the body splits the index into axes (once a
 * pack), rows of whole packs. */
static const char *loop_variant_test(KEmit *ke, GEmit *ge, const Variant *v, PtrVec *seen) {
  const char *aligned = packs_aligned_once(ke, ge, v->vec, seen);
  if (!memchr(ge->used_axis, 1, sizeof ge->used_axis))
    return aligned;
  const char *rows = arena_printf(ke->a, "%s %% %d == 0", host_dim(ke->a, ke->names, ge->g->domain.d[ge->inner_axis]), v->vec);
  return *aligned ? arena_printf(ke->a, "%s && %s", aligned, rows) : rows;
}

/* The packed variant when every packed pointer is aligned, else the
 * scalar one (schedule.c). */
static void emit_loop_launch(KEmit *ke, Out *o, GEmit *ge) {
  const GroupSchedule *s = ge->g->schedule;
  emit(o, "const int64_t t_n = %s;", numel_expr(ge, &ge->g->domain, ~0u, "(int64_t)"));
  open_block(o, "if (t_n > 0)");
  for (int i = 0; i < s->nvariants; i++) {
    const Variant *v = &s->variants[i];
    if (v->when == WHEN_ALIGNED) {
      if (v->vec != loop_vec(ge) && (i == 0 || v->vec != loop_vec(ge) / 2)) /* packs, then half packs */
        internal_error("loop group %d: the schedule packs %d elements, the kernel %d", ge->g->id, v->vec, loop_vec(ge));
      if (i == 0)
        open_block(o, "if (%s)", loop_variant_test(ke, ge, v, NULL));
      else
        else_if_block(o, "%s", loop_variant_test(ke, ge, v, NULL));
    } else if (i > 0) {
      else_block(o);
    }
    emit_loop_variant(ke, o, ge, v);
  }
  if (s->nvariants > 1)
    close_block(o, "");
}

/* The reduction kernel, then the split reduction's second stage. */
static void emit_reduce_launch(KEmit *ke, Out *o, GEmit *ge) {
  Group *g = ge->g;
  RedInfo ri = red_info(ke->a, g->reduce);
  emit(o, "const int64_t t_outer = %s;", numel_expr(ge, &g->domain, ~g->reduce->axes, "(int64_t)"));
  emit(o, "const int64_t t_red = %s;", red_product(ke, g));
  open_block(o, "if (t_outer > 0)");
  emit(o, "const tecc::Launch t_l = %s_shape(t_outer, t_red);", ge->kname);
  const char *launch = "<<<dim3(t_l.grid, (unsigned)t_l.splits), dim3(t_l.tx, t_l.ty), 0, stream>>>";
  const char *args = arena_printf(ke->a, "%s, (%s *)t_part%d, (IndexT)t_l.chunk", group_args(ke, ge), ri.acc_type, g->id);
  if (g->schedule->cls == CLASS_COLUMN) {
    int vec = g->schedule->variants[0].vec;
    if (ge->packs.len)
      emit(o, "if (t_outer %% %d == 0 && %s)", vec, packs_aligned(ke, ge, vec));
    else
      emit(o, "if (t_outer %% %d == 0)", vec);
    emit(o, "  %s<IndexT, %d>%s(%s);", ge->kname, vec, launch, args);
    emit(o, "else");
    emit(o, "  %s<IndexT, 1>%s(%s);", ge->kname, launch, args);
  } else if (ge->packs.len) { /* whole packs: the row's length and every packed pointer */
    const Variant *v = &g->schedule->variants[0];
    open_block(o, "if (t_red %% %d == 0 && %s)", v->vec, packs_aligned(ke, ge, v->vec));
    if (long_rows(ge)) { /* long_items where 32-bit indices do */
      emit(o, "if (t_l.items == %d)", v->long_items);
      emit(o, "  %s<IndexT, %s, true>%s(%s);", ge->kname, cu_by_index_bits(ke->a, v->long_items, v->items), launch,
           args);
      emit(o, "else");
      emit(o, "  %s<IndexT, %d, true>%s(%s);", ge->kname, v->items, launch, args);
    } else {
      emit(o, "%s<IndexT, %d, true>%s(%s);", ge->kname, v->items, launch, args);
    }
    else_block(o);
    emit(o, "%s<IndexT, %d, false>%s(%s);", ge->kname, v->items, launch, args);
    close_block(o, "");
  } else {
    emit(o, "%s<IndexT, %d, false>%s(%s);", ge->kname, g->schedule->variants[0].items, launch, args);
  }
  open_block(o, "if (t_l.splits > 1)");
  emit_launch_check(o);
  int final = g->schedule->final_threads;
  emit(o, "tecc::launch_next(%s_final<IndexT>, dim3(tecc::grid_size(t_outer, %d, %d)), dim3(%d), stream, (const %s *)t_part%d, (int)t_l.splits%s);",
       ge->kname, final, g->schedule->variants[0].sm_threads / final, final, ri.acc_type, g->id, final_args(ke, ge));
  close_block(o, "");
}

/* Stage one with whole packs when every packed tensor is aligned, then
 * stage two when there is more than one block. */
static void emit_full_launch(KEmit *ke, Out *o, GEmit *ge) {
  Group *g = ge->g;
  RedInfo ri = red_info(ke->a, g->reduce);
  const char *aligned = ge->packs.len ? packs_aligned(ke, ge, g->schedule->variants[0].vec) : "true";
  emit(o, "const int64_t t_red = %s;", red_product(ke, g));
  emit(o, "const unsigned t_grid = %s_grid(t_red);", ge->kname);
  emit(o, "const bool t_packed = %s;", aligned);
  emit(o, "%s *t_part = (%s *)t_part%d;", ri.acc_type, ri.acc_type, g->id);
  emit(o, "if (t_packed) %s<IndexT, true><<<t_grid, %d, 0, stream>>>(%s, t_part);", ge->kname,
       g->schedule->variants[0].threads_x, group_args(ke, ge));
  emit(o, "else %s<IndexT, false><<<t_grid, %d, 0, stream>>>(%s, t_part);", ge->kname,
       g->schedule->variants[0].threads_x, group_args(ke, ge));
  open_block(o, "if (t_grid > 1)");
  emit_launch_check(o);
  int final = g->schedule->final_threads;
  emit(o, "tecc::launch_next(%s_final<IndexT>, dim3(1), dim3(%d), stream, (const %s *)t_part, (int)t_grid%s);", ge->kname, final,
       ri.acc_type, final_args(ke, ge));
  close_block(o, "");
}

static void emit_group_launch(KEmit *ke, Out *o, GEmit *ge) {
  Group *g = ge->g;
  if (g->kind == GROUP_STITCH) { /* H9: emit_stitch.c */
    emit_stitch_launch(o, ke->a, ke->k, ke->kp, g, ke->names);
    return;
  }
  emit(o, "/* group %d: %s (%s) */", g->id, group_kind_name(g->kind), class_name(g->schedule->cls));
  open_scope(o);
  if (g->schedule->cls == CLASS_FULL) { /* an empty reduction still stores its identity */
    emit_full_launch(ke, o, ge);
    emit_launch_check(o);
    close_block(o, "");
    return;
  }
  if (g->kind == GROUP_LOOP)
    emit_loop_launch(ke, o, ge);
  else
    emit_reduce_launch(ke, o, ge);
  emit_launch_check(o);
  close_block(o, "");
  close_block(o, "");
}

/* Groups that leave partial results in the workspace: split reductions
 * and column splits (t_part<id>). */
static int has_partials(const Group *g) {
  return g->kind == GROUP_REDUCE || emit_stitch_partials(g) || g->schedule->lag;
}

/* The entry point's parameters (without the stream), for the launcher. */
static void put_host_params(KEmit *ke, Buf *b) {
  put_entry_params(b, ke->k, ke->names);
  for (int i = 0; i < ke->k->nsizevars; i++)
    if (ke->k->sizevars[i].def)
      buf_printf(b, "int64_t %s, ", ke->names->sizes[i]);
  for (int i = 0; i < ke->kp->workspace.len; i++) {
    const Value *v = ke->kp->workspace.items[i];
    buf_printf(b, "%s *%s, ", cu_storage_ctype(v->dtype), slot_name(ke->a, i));
  }
  for (int i = 0; i < ke->kp->groups.len; i++)
    if (has_partials(ke->kp->groups.items[i]))
      buf_printf(b, "void *t_part%d, ", i);
}

static void put_host_args(KEmit *ke, Buf *b) {
  const Kernel *k = ke->k;
  for (int i = 0; i < k->ninputs; i++)
    buf_printf(b, "%s, ", ke->names->inputs[i]);
  for (int i = 0; i < k->noutputs; i++)
    buf_printf(b, "%s, ", ke->names->outputs[i]);
  for (int i = 0; i < k->nsizevars; i++)
    buf_printf(b, "%s, ", ke->names->sizes[i]);
  for (int i = 0; i < ke->kp->workspace.len; i++)
    buf_printf(b, "%s, ", slot_name(ke->a, i));
  for (int i = 0; i < ke->kp->groups.len; i++)
    if (has_partials(ke->kp->groups.items[i]))
      buf_printf(b, "t_part%d, ", i);
}

/* The host names a group's launch reads: what it passes its kernels (the
 * plan's parameters for a stitch group), the sizes of its domain, its
 * partial results. */
static void group_host_uses(KEmit *ke, const GEmit *ge, NameSet *uses) {
  const Group *g = ge->g;
  const PtrVec *params = g->kind == GROUP_STITCH ? &g->plan->params : &ge->params;
  for (int i = 0; i < params->len; i++) {
    const KParam *p = params->items[i];
    if (p->kind == P_SIZE || p->kind == P_FASTDIV)
      nameset_add(uses, ke->names->sizes[p->index]);
    else if (p->kind != P_RCOUNT)
      nameset_add(uses, launch_arg(ke->a, ke->kp, ke->names, p));
  }
  for (int i = 0; i < g->domain.rank; i++)
    if (!dim_is_one(&g->domain, i) && g->domain.d[i].var >= 0)
      nameset_add(uses, ke->names->sizes[g->domain.d[i].var]);
  if (has_partials(g))
    nameset_add(uses, arena_printf(ke->a, "t_part%d", g->id));
  if (g->kind == GROUP_STITCH)
    emit_stitch_column_uses(ke->a, ke->k, ke->kp, g, ke->names, uses);
}

/* "T name, " for each parameter in `uses`, "T, " for the others (not
 * every group reads every argument). */
static const char *used_params(Arena *a, const char *params, const NameSet *uses) {
  Buf b;
  buf_init(&b, a);
  for (const char *p = params; *p;) {
    size_t len = strcspn(p, ",");
    size_t name = len;
    while (name > 0 && (isalnum((unsigned char)p[name - 1]) || p[name - 1] == '_'))
      name--;
    char *word = arena_strndup(a, p + name, len - name);
    size_t keep = nameset_has(uses, word) ? len : name;
    while (keep > 0 && p[keep - 1] == ' ')
      keep--;
    buf_printf(&b, "%.*s, ", (int)keep, p);
    p += len + (p[len] == ',') + (p[len] == ',' && p[len + 1] == ' ');
  }
  return buf_cstr(&b);
}

/* The bytes of packs a step of a thread of the one launch of red keeps
 * (declare_held()). */
static int held_step_bytes(const GEmit *red) {
  int bytes = 0;
  for (int i = 0; i < red->packs.len; i++) {
    const PackRef *r = red->packs.items[i];
    if (held_pack(red->g, r))
      bytes += red->g->schedule->variants[0].vec * dtype_size(r->value->dtype);
  }
  return bytes;
}

/* Groups red (a full reduction) and loop after it in one cooperative
 * launch where the host finds it can be (GroupSchedule.one_launch), else
 * their three launches. */
static void emit_one_launch(KEmit *ke, Out *o, GEmit *red, GEmit *loop) {
  const Group *g = red->g;
  const Variant *v = &g->schedule->variants[0];
  RedInfo ri = red_info(ke->a, g->reduce);
  const char *one = arena_printf(ke->a, "%s<IndexT>", red->one->kname);
  PtrVec seen = {0}; /* each pointer's test once */
  const char *aligned = packs_aligned_once(ke, red, v->vec, &seen);
  const char *loop_test = loop_variant_test(ke, loop, &loop->g->schedule->variants[0], &seen);
  const int step_bytes = held_step_bytes(red);
  emit(o, "/* groups %d and %d: reduce (full) and loop (elementwise), in one launch where it can be */", g->id, loop->g->id);
  open_scope(o);
  emit(o, "const unsigned t_grid = %s_grid(%s);", red->kname, red_product(ke, g));
  emit(o, "static tecc::DeviceCache t_fits; /* by device: 1 + the blocks of %s it holds at once */", red->one->kname);
  const char *smem = "0", *held = "";
  if (step_bytes) {
    emit(o, "static tecc::DeviceCache t_room; /* by device: 1 + the steps of %d bytes a thread it holds */", step_bytes);
    emit(o, "const int t_room_steps = tecc::held_steps(t_room, (const void *)%s, %d, %d, %d, %d);", one,
         v->threads_x, v->sm_threads / v->threads_x, step_bytes, g->schedule->one_held_steps);
    smem = arena_printf(ke->a, "(size_t)t_room_steps * %d", v->threads_x * step_bytes);
  }
  open_block(o, "if (t_grid > 1%s%s%s%s && tecc::cooperative_fits(t_fits, (const void *)%s, t_grid, %d%s%s))",
             *aligned ? " && " : "", aligned, *loop_test ? " && " : "", loop_test, one, v->threads_x,
             step_bytes ? ", " : "", step_bytes ? smem : "");
  if (step_bytes) {
    emit(o, "const int64_t t_packs = %s / %d, t_threads = (int64_t)t_grid * %d;", red_product(ke, g), v->vec,
         v->threads_x);
    emit(o, "const int64_t t_steps = (t_packs + t_threads - 1) / t_threads; /* a thread's at most */");
    emit(o, "const int t_held = (int)(t_steps < t_room_steps ? t_steps : t_room_steps);");
    smem = arena_printf(ke->a, "(size_t)t_held * %d", v->threads_x * step_bytes);
    held = ", t_held";
  }
  emit(o, "tecc::launch_cooperative(%s, dim3(t_grid), dim3(%d), %s, stream, %s, (%s *)t_part%d%s);", one,
       v->threads_x, smem, launch_args(ke->a, ke->kp, ke->names, &red->one->params), ri.acc_type, g->id, held);
  emit_launch_check(o);
  else_block(o);
  emit_group_launch(ke, o, red);
  emit_group_launch(ke, o, loop);
  close_block(o, "");
  close_block(o, "");
}

/* The host's count of `mask`'s axes of g's domain, as int64_t. */
static const char *host_count(KEmit *ke, const Group *g, uint32_t mask) {
  GEmit tmp = {0};
  tmp.a = ke->a;
  tmp.names = ke->names;
  tmp.g = (Group *)g;
  return numel_expr(&tmp, &g->domain, mask, "(int64_t)");
}

/* A lag plan's three groups in one launch where the host finds it can
 * be (GroupSchedule.lag): 32-bit indices, rows of whole packs of both
 * the statistics and the loop that a block of LAG_THREADS holds, rows
 * of more than half of L2 (at 51 MB, x read twice by the three launches
 * took 1.05x the time of one launch, f32 16 x 64 x 12544 on an H100;
 * bench/NOTES.md); else their three launches.  From the sizes alone:
 * the pointers' alignment picks the instance (the same bits).  Its
 * counters, in the workspace (t_part0), zeroed first. */
static void emit_lag_launch(KEmit *ke, Out *o) {
  GEmit *const *gs = ke->groups;
  const Group *g = gs[0]->g, *f = gs[1]->g;
  const int bytes = g->plan->pack_bytes, vec = 16 / bytes, lvec = gs[2]->g->schedule->variants[0].vec;
  const char *aligned = packs_aligned(ke, gs[2], lvec), *inner = "";
  if (memchr(gs[2]->used_axis, 1, sizeof gs[2]->used_axis)) /* the loop splits its index: rows of whole packs */
    inner = arena_printf(ke->a, " && %s %% %d == 0", host_dim(ke->a, ke->names, gs[2]->g->domain.d[gs[2]->inner_axis]),
                         lvec);
  emit(o, "/* groups 0, 1 and 2: a split plan's, in one persistent launch where it can be */");
  open_scope(o);
  emit(o, "const int64_t t_cols = %s, t_per = %s, t_len = %s;", host_count(ke, f, ~f->stitch->axes),
       host_count(ke, f, f->stitch->axes), host_count(ke, g, g->stitch->axes));
  emit(o, "const int64_t t_rows = t_cols * t_per;");
  const char *whole = vec % lvec == 0 ? arena_printf(ke->a, "t_len %% %d == 0", vec)
                                     : arena_printf(ke->a, "t_len %% %d == 0 && t_len %% %d == 0", vec, lvec);
  open_block(o, "if (sizeof(IndexT) == 4 && t_part0 && %s%s && t_len * %d >= %d && t_len <= %d && "
                "tecc::past_l2(2 * t_rows, t_len * %d))", whole, inner, bytes, LAG_ROW_BYTES, LAG_THREADS * LAG_ITEMS * vec,
             bytes);
  emit(o, "/* the same bits either way (abi.md section 6): the rows' sums in the same order, the loop elementwise */");
  emit(o, "const bool t_packed = %s;", *aligned ? aligned : "true");
  emit(o, "const auto t_kernel = t_packed ? &tecc_%s_lag<int32_t, %d, %d, true> : &tecc_%s_lag<int32_t, %d, 1, false>;",
       ke->k->name, vec, lvec, ke->k->name, vec);
  emit(o, "const int t_threads = 32 * (int)tecc::ceil_div(t_len / %d, 32 * %d); /* a row's packs, %d a thread */", vec,
       LAG_ITEMS, LAG_ITEMS);
  emit(o, "const unsigned t_grid = tecc::lag_grid((const void *)t_kernel, t_threads, 2 * t_rows);");
  emit(o, "const int64_t t_lag = tecc::lag_rows(t_per, t_len * %d), t_dist = t_lag < t_rows ? t_lag : t_rows;", bytes);
  emit(o, "t_err = cudaMemsetAsync(t_part0, 0, (size_t)(2 + 2 * t_cols) * sizeof(unsigned), stream);");
  emit(o, "if (t_err != cudaSuccess) return (tecc_status)(TECC_ERROR_CUDA + (int)t_err);");
  Buf args;
  buf_init(&args, ke->a);
  for (int i = 0; i < ke->lag_params.len; i++) {
    const KParam *p = ke->lag_params.items[i];
    const char *arg = launch_arg(ke->a, ke->kp, ke->names, p);
    if (p->kind == P_RCOUNT) /* its group's: the rows' length, or the rows a column folds */
      arg = arena_printf(ke->a, p->index ? "1.0 / (double)%s" : "1.0f / (float)%s",
                         strcmp(p->name, "t_rcount0") == 0 ? "t_len" : "t_per");
    buf_printf(&args, "%s, ", replace_all(ke->a, arg, "IndexT", "int32_t")); /* the kernel's 32-bit instance */
  }
  emit(o, "t_kernel<<<t_grid, t_threads, 0, stream>>>(%s(unsigned *)t_part0, (int32_t)t_dist);", buf_cstr(&args));
  emit_launch_check(o);
  else_block(o);
  for (int i = 0; i < 3; i++)
    emit_group_launch(ke, o, ke->groups[i]);
  close_block(o, "");
  close_block(o, "");
}

static void emit_launcher(KEmit *ke, Out *o) {
  Out *body = new_out(ke->a);
  emit(body, "cudaError_t t_err;");
  if (lag_plan(ke->kp))
    emit_lag_launch(ke, body);
  for (int i = lag_plan(ke->kp) ? 3 : 0; i < ke->kp->groups.len; i++) {
    if (ke->groups[i]->one) {
      emit_one_launch(ke, body, ke->groups[i], ke->groups[i + 1]);
      i++;
    } else
      emit_group_launch(ke, body, ke->groups[i]);
  }
  emit(body, "return TECC_SUCCESS;");
  Buf b;
  buf_init(&b, ke->a);
  put_host_params(ke, &b);
  NameSet uses;
  nameset_init(&uses, ke->a);
  for (int i = 0; i < ke->kp->groups.len; i++)
    group_host_uses(ke, ke->groups[i], &uses);
  emit(o, "/* Enqueues every group of %s, in order. */", ke->k->name);
  emit(o, "template <typename IndexT>");
  open_block(o, "tecc_status tecc_%s_launch(%scudaStream_t stream)", ke->k->name,
             used_params(ke->a, buf_cstr(&b), &uses));
  emit_fragment(o, body);
  close_block(o, "");
}

/* ---- host side: the entry point ---------------------------------------------- */

/* An element count the entry point uses: a literal when every dim is one,
 * else a size or a variable checked for int64 overflow, once per
 * distinct product of dims. */
typedef struct Count {
  const char *key;  /* the dims, as multiplied */
  const char *expr; /* the host expression */
  int64_t value;    /* when known */
  int known;        /* every dim is a literal and the product fits */
  int domain;       /* some group's domain: it decides the index width */
} Count;

static const char *host_literal(Arena *a, int64_t v) {
  return v > INT32_MAX ? arena_printf(a, "INT64_C(%lld)", (long long)v) : arena_printf(a, "%lld", (long long)v);
}

static const char *count_dim(KEmit *ke, Dim d) {
  return d.var >= 0 ? ke->names->sizes[d.var] : host_literal(ke->a, d.size);
}

static Count *find_count(KEmit *ke, const char *key) {
  for (int i = 0; i < ke->counts.len; i++) {
    Count *c = ke->counts.items[i];
    if (strcmp(c->key, key) == 0)
      return c;
  }
  return NULL;
}

/* "int64_t t_n_x;" and its checked product; sizes are already >= 0. */
static void emit_count_product(KEmit *ke, Out *o, const char *var, const Shape *s, const int *axes, int n) {
  const char *ret = "return TECC_ERROR_INVALID_VALUE;";
  emit(o, "int64_t %s;", var);
  emit(o, "if (!tecc::mul_size(%s, %s, &%s)) %s", count_dim(ke, s->d[axes[0]]), count_dim(ke, s->d[axes[1]]),
       var, ret);
  for (int j = 2; j < n; j++)
    emit(o, "if (!tecc::mul_size(%s, %s, &%s)) %s", var, count_dim(ke, s->d[axes[j]]), var, ret);
}

/* The count of the dims of `s` in `mask`; a product met for the first
 * time that needs a run-time check is checked here, into `var`. */
static Count *checked_count(KEmit *ke, Out *o, const char *var, const Shape *s, uint32_t mask) {
  int axes[TECC_MAX_RANK], n = shape_axes(s, mask, axes);
  Buf key;
  buf_init(&key, ke->a);
  int64_t value = 1;
  int known = 1;
  for (int j = 0; j < n; j++) {
    Dim d = s->d[axes[j]];
    buf_printf(&key, "%s%s", j ? " * " : "", count_dim(ke, d));
    if (d.var >= 0 || __builtin_mul_overflow(value, d.size, &value))
      known = 0;
  }
  Count *c = find_count(ke, buf_cstr(&key));
  if (c)
    return c;
  c = ARENA_NEW(ke->a, Count);
  c->key = buf_cstr(&key);
  c->known = known;
  c->value = value;
  if (known)
    c->expr = host_literal(ke->a, value);
  else if (n == 1)
    c->expr = c->key;
  else {
    emit_count_product(ke, o, var, s, axes, n);
    c->expr = var;
  }
  vec_push(ke->a, &ke->counts, c);
  return c;
}

/* The alias checks read a tensor's byte count: an input's against every
 * output, an output's against the tensor inputs and the other outputs. */
static int bytes_read(const KEmit *ke, int is_output) {
  if (!is_output)
    return ke->k->noutputs > 0;
  int tensors = ke->k->noutputs - 1;
  for (int j = 0; j < ke->k->ninputs; j++)
    tensors += ke->k->inputs[j].shape.rank > 0;
  return tensors > 0;
}

/* t_bytes_NAME, and the NULL check of a non-empty tensor; its count. */
static Count *emit_tensor_bytes(KEmit *ke, Out *o, const char *name, const Shape *s, DType t, int is_output) {
  Count *c = checked_count(ke, o, arena_printf(ke->a, "t_n_%s", name), s, ~0u);
  int64_t bytes;
  if (c->known && !__builtin_mul_overflow(c->value, (int64_t)dtype_size(t), &bytes)) {
    if (bytes_read(ke, is_output))
      emit(o, "const int64_t t_bytes_%s = %s;", name, host_literal(ke->a, bytes));
    if (c->value > 0)
      emit(o, "if (!%s) return TECC_ERROR_INVALID_VALUE;", name);
    return c;
  }
  emit(o, "int64_t t_bytes_%s;", name);
  emit(o, "if (!tecc::mul_size(%s, %d, &t_bytes_%s)) return TECC_ERROR_INVALID_VALUE;", c->expr, dtype_size(t), name);
  emit(o, "if (%s > 0 && !%s) return TECC_ERROR_INVALID_VALUE;", c->expr, name);
  return c;
}

/* Whether some take of k gathers from input `in`: its offsets are then
 * computed at the index width too, which its count must decide. */
static int input_gathered(const Kernel *k, int in) {
  for (int i = 0; i < k->values.len; i++) {
    const Value *v = k->values.items[i];
    if (v->op == IR_TAKE && v->index == in)
      return 1;
  }
  return 0;
}
/* Shapes equal once literal-1 axes are dropped (same layout). */
static int same_layout(const Shape *a, const Shape *b) {
  Shape x = {0}, y = {0};
  for (int i = 0; i < a->rank; i++)
    if (!dim_is_one(a, i))
      x.d[x.rank++] = a->d[i];
  for (int i = 0; i < b->rank; i++)
    if (!dim_is_one(b, i))
      y.d[y.rank++] = b->d[i];
  return shape_equal(&x, &y);
}

/* In-place capable: the kernel is elementwise and the output has the
 * input's dtype and layout.  When no later launch reads the input, the
 * in-place call is simply allowed; otherwise the input is first copied to
 * the workspace (t_snapJ) and read from there. */
static int in_place_capable(KEmit *ke, int out, int in) {
  const KernelInput *x = &ke->k->inputs[in];
  const KernelOutput *y = &ke->k->outputs[out];
  return ke->kp->in_place_ok && x->shape.rank > 0 && x->dtype == y->dtype && same_layout(&x->shape, &y->shape);
}

static void emit_alias_checks(KEmit *ke, Out *o) {
  const Kernel *k = ke->k;
  const EntryNames *n = ke->names;
  ke->snap = ARENA_ARRAY(ke->a, char, k->ninputs + 1);
  for (int i = 0; i < k->noutputs; i++)
    for (int j = 0; j < k->ninputs; j++)
      if (in_place_capable(ke, i, j) && !fuse_in_place_ok(ke->kp, i, j))
        ke->snap[j] = 1;
  for (int j = 0; j < k->ninputs; j++)
    if (ke->snap[j])
      emit(o, "bool t_snap%d = false; /* %s is read from a copy */", j, n->inputs[j]);
  for (int i = 0; i < k->noutputs; i++) {
    for (int j = 0; j < k->ninputs; j++) {
      if (k->inputs[j].shape.rank == 0)
        continue;
      const char *cond = arena_printf(ke->a, "tecc::overlap(%s, t_bytes_%s, %s, t_bytes_%s)", n->outputs[i],
                                      n->outputs[i], n->inputs[j], n->inputs[j]);
      const char *same = arena_printf(ke->a, "(const void *)%s == (const void *)%s", n->outputs[i], n->inputs[j]);
      if (!in_place_capable(ke, i, j)) {
        emit(o, "if (%s) return TECC_ERROR_ALIASING;", cond);
      } else if (fuse_in_place_ok(ke->kp, i, j)) {
        emit(o, "if (%s && !(%s)) return TECC_ERROR_ALIASING;", cond, same);
      } else {
        open_block(o, "if (%s)", cond);
        emit(o, "if (!(%s)) return TECC_ERROR_ALIASING;", same);
        emit(o, "t_snap%d = true;", j);
        close_block(o, "");
      }
    }
    for (int j = 0; j < i; j++)
      emit(o, "if (tecc::overlap(%s, t_bytes_%s, %s, t_bytes_%s)) return TECC_ERROR_ALIASING;",
           n->outputs[i], n->outputs[i], n->outputs[j], n->outputs[j]);
  }
}

static void emit_snapshot_space(KEmit *ke, Out *o) {
  for (int j = 0; j < ke->k->ninputs; j++) {
    if (!ke->snap[j])
      continue;
    emit(o, "const int64_t t_snap_off%d = t_ws_bytes;", j);
    emit(o, "if (t_snap%d) t_ws_bytes += (t_bytes_%s + 255) / 256 * 256;", j, ke->names->inputs[j]);
  }
}

static void emit_snapshots(KEmit *ke, Out *o) {
  for (int j = 0; j < ke->k->ninputs; j++) {
    if (!ke->snap[j])
      continue;
    const char *x = ke->names->inputs[j];
    open_block(o, "if (t_snap%d)", j);
    emit(o, "cudaError_t t_err = cudaMemcpyAsync(t_ws + t_snap_off%d, %s, (size_t)t_bytes_%s, cudaMemcpyDeviceToDevice, stream);", j, x, x);
    open_block(o, "if (t_err != cudaSuccess)");
    emit(o, "(void)cudaFreeAsync(t_ws, stream);");
    emit(o, "(void)cudaGetLastError(); /* this call's own failure: in the status, not left pending */");
    emit(o, "return (tecc_status)(TECC_ERROR_CUDA + (int)t_err);");
    close_block(o, "");
    emit(o, "%s = (const %s *)(t_ws + t_snap_off%d);", x, abi_ctype(ke->k->inputs[j].dtype), j);
    close_block(o, "");
  }
}

/* `if (count == 0) return TECC_ERROR_EMPTY_REDUCTION;` once a count. */
static void check_not_empty(KEmit *ke, Out *o, PtrVec *checked, const Count *red) {
  if ((red->known && red->value != 0) || vec_contains(checked, red))
    return;
  emit(o, "if (%s == 0) return TECC_ERROR_EMPTY_REDUCTION;", red->expr);
  vec_push(ke->a, checked, (void *)red);
}

static void emit_domain_checks(KEmit *ke, Out *o) {
  PtrVec checked = {0};
  for (int i = 0; i < ke->kp->groups.len; i++) {
    Group *g = ke->kp->groups.items[i];
    checked_count(ke, o, arena_printf(ke->a, "t_dom%d", i), &g->domain, ~0u)->domain = 1;
    if (g->kind == GROUP_REDUCE && (g->reduce->rop == RED_ARGMAX || g->reduce->rop == RED_ARGMIN))
      check_not_empty(ke, o, &checked, checked_count(ke, o, arena_printf(ke->a, "t_red%d", i), &g->domain, g->reduce->axes));
  }
  /* those the optimizer dropped (Kernel.arg_reductions) */
  for (int i = 0; i < ke->k->arg_reductions.len; i++) {
    const ArgReduction *r = ke->k->arg_reductions.items[i];
    check_not_empty(ke, o, &checked, checked_count(ke, o, arena_printf(ke->a, "t_arg%d", i), &r->shape, r->axes));
  }
}

static void add_index_term(KEmit *ke, Buf *b, PtrVec *terms, const char *expr) {
  for (int i = 0; i < terms->len; i++)
    if (strcmp(terms->items[i], expr) == 0)
      return;
  buf_printf(b, "%s%s > t_lim", terms->len ? " || " : "", expr);
  vec_push(ke->a, terms, (void *)expr);
}

/* When the launches need 64-bit indices (some domain count or size is
 * above 2^30): NULL when never, "true" when always, else the condition
 * on the sizes. */
static const char *index_condition(KEmit *ke) {
  Buf b;
  buf_init(&b, ke->a);
  PtrVec terms = {0};
  for (int i = 0; i < ke->counts.len; i++) {
    const Count *c = ke->counts.items[i];
    if (c->domain && c->known && c->value > (INT64_C(1) << 30))
      return "true";
    if (c->domain && !c->known)
      add_index_term(ke, &b, &terms, c->expr);
  }
  for (int i = 0; i < ke->k->nsizevars; i++) {
    add_index_term(ke, &b, &terms, ke->names->sizes[i]);
    const SizeExpr *def = ke->k->sizevars[i].def; /* a concat part's start is negative */
    if (def && !se_nonneg(ke->a, def))
      add_index_term(ke, &b, &terms, arena_printf(ke->a, "-%s", ke->names->sizes[i]));
  }
  return terms.len ? buf_cstr(&b) : NULL;
}
/* Split reductions keep splits * outer partials in the workspace, a
 * column split (emit_stitch.c) its chunks' partial results; `small`: 32-bit
 * indices do. */
static void emit_partial_space(KEmit *ke, Out *o, const char *small) {
  for (int i = 0; i < ke->kp->groups.len; i++) {
    Group *g = ke->kp->groups.items[i];
    if (emit_stitch_partials(g))
      emit_stitch_partial_space(o, ke->a, ke->k, ke->kp, g, ke->names, small);
    if (g->schedule->lag) { /* the lag kernel's counters (emit_lag_launch()) */
      const Group *f = ke->kp->groups.items[1];
      emit(o, "const int64_t t_part_off%d = t_ws_bytes;", i);
      emit(o, "t_ws_bytes += ((2 + 2 * %s) * (int64_t)sizeof(unsigned) + 255) / 256 * 256;",
           host_count(ke, f, ~f->stitch->axes));
    }
    if (g->kind != GROUP_REDUCE)
      continue;
    RedInfo ri = red_info(ke->a, g->reduce);
    emit(o, "int64_t t_part_off%d = -1;", i);
    open_scope(o);
    if (g->schedule->cls == CLASS_FULL) {
      emit(o, "const int64_t t_grid = %s_grid(%s);", ke->groups[g->id]->kname, red_product(ke, g));
      open_block(o, "if (t_grid > 1)");
      emit(o, "t_part_off%d = t_ws_bytes;", i);
      emit(o, "t_ws_bytes += (t_grid * (int64_t)sizeof(%s) + 255) / 256 * 256;", ri.acc_type);
      close_block(o, "");
      close_block(o, "");
      continue;
    }
    GEmit tmp = {0};
    tmp.a = ke->a;
    tmp.names = ke->names;
    tmp.g = g;
    emit(o, "const int64_t t_outer = %s;", numel_expr(&tmp, &g->domain, ~g->reduce->axes, "(int64_t)"));
    emit(o, "const int64_t t_red = %s;", red_product(ke, g));
    open_block(o, "if (t_outer > 0)");
    emit(o, "const tecc::Launch t_l = tecc_%s_g%d_%s_shape(t_outer, t_red);", ke->k->name, g->id, schedule_name(g->sched));
    open_block(o, "if (t_l.splits > 1)");
    emit(o, "t_part_off%d = t_ws_bytes;", i);
    emit(o, "t_ws_bytes += (t_l.splits * t_outer * (int64_t)sizeof(%s) + 255) / 256 * 256;", ri.acc_type);
    close_block(o, "");
    close_block(o, "");
    close_block(o, "");
  }
}

/* A workspace holds the materialized values, the copies of inputs that
 * an in-place call overwrites, and the partials of split reductions. */
static int needs_workspace(const KEmit *ke) {
  if (ke->kp->workspace.len)
    return 1;
  for (int j = 0; j < ke->k->ninputs; j++)
    if (ke->snap[j])
      return 1;
  for (int i = 0; i < ke->kp->groups.len; i++)
    if (has_partials(ke->kp->groups.items[i]))
      return 1;
  return 0;
}

static void emit_workspace(KEmit *ke, Out *o, const char *small) {
  KernelPlan *kp = ke->kp;
  emit(o, "int64_t t_ws_bytes = 0;");
  for (int i = 0; i < kp->workspace.len; i++) {
    const Value *v = kp->workspace.items[i];
    const Count *c = checked_count(ke, o, arena_printf(ke->a, "t_n_ws%d", i), &v->shape, ~0u);
    emit(o, "const int64_t t_off%d = t_ws_bytes;", i);
    int64_t bytes;
    if (c->known && !__builtin_mul_overflow(c->value, (int64_t)dtype_size(v->dtype), &bytes) &&
        bytes <= INT64_MAX / 2) {
      emit(o, "t_ws_bytes += %s;", host_literal(ke->a, (bytes + 255) / 256 * 256));
      continue;
    }
    emit(o, "int64_t t_bytes_ws%d;", i);
    emit(o, "if (!tecc::mul_size(%s, %d, &t_bytes_ws%d) || t_bytes_ws%d > INT64_MAX / 2) return TECC_ERROR_INVALID_VALUE;",
         c->expr, dtype_size(v->dtype), i, i);
    emit(o, "t_ws_bytes += (t_bytes_ws%d + 255) / 256 * 256;", i);
  }
  emit_snapshot_space(ke, o);
  emit_partial_space(ke, o, small);
}

/* Argument checks: nothing is enqueued unless they pass. */
static void emit_argument_checks(KEmit *ke, Out *o) {
  const Kernel *k = ke->k;
  const EntryNames *n = ke->names;
  emit(o, "/* Argument checks: nothing is enqueued unless they pass. */");
  for (int i = 0; i < k->nsizevars; i++)
    if (!k->sizevars[i].def)
      emit(o, "if (%s < 0) return TECC_ERROR_INVALID_VALUE;", n->sizes[i]);
  for (int i = 0; i < k->nsizevars; i++)
    if (k->sizevars[i].def)
      emit(o, "const int64_t %s = %s; /* %s */", n->sizes[i], se_c(ke->a, k->sizevars[i].def, n->sizes),
           k->sizevars[i].name);
  for (int i = 0; i < k->ninputs; i++)
    if (k->inputs[i].shape.rank > 0) {
      Count *c = emit_tensor_bytes(ke, o, n->inputs[i], &k->inputs[i].shape, k->inputs[i].dtype, 0);
      c->domain |= input_gathered(k, i);
    }
  for (int i = 0; i < k->noutputs; i++)
    emit_tensor_bytes(ke, o, n->outputs[i], &k->outputs[i].shape, k->outputs[i].dtype, 1);
  emit_alias_checks(ke, o);
  emit_domain_checks(ke, o);
}

/* An error an earlier CUDA call left pending is the caller's to read: it
 * is reported, not cleared, and nothing is enqueued (abi.md §3). */
static void emit_pending_check(Out *o) {
  emit(o, "/* A CUDA error the caller has not read yet: report it, leave it pending. */");
  emit(o, "const cudaError_t t_pending = cudaPeekAtLastError();");
  emit(o, "if (t_pending != cudaSuccess) return (tecc_status)(TECC_ERROR_CUDA + (int)t_pending);");
}

/* Allocates the workspace and points the slots and partials into it. */
static void emit_workspace_alloc(KEmit *ke, Out *o) {
  KernelPlan *kp = ke->kp;
  emit(o, "char *t_ws = NULL;");
  open_block(o, "if (t_ws_bytes > 0)");
  open_block(o, "if (tecc::workspace_alloc(&t_ws, (size_t)t_ws_bytes, stream) != cudaSuccess)");
  emit(o, "(void)cudaGetLastError();");
  emit(o, "return TECC_ERROR_OUT_OF_MEMORY;");
  close_block(o, "");
  close_block(o, "");
  for (int i = 0; i < kp->workspace.len; i++) {
    const char *t = cu_storage_ctype(((Value *)kp->workspace.items[i])->dtype);
    emit(o, "%s *%s = t_ws ? (%s *)(t_ws + t_off%d) : NULL;", t, slot_name(ke->a, i), t, i);
  }
  for (int i = 0; i < kp->groups.len; i++)
    if (has_partials(kp->groups.items[i]))
      emit(o, "void *t_part%d = t_part_off%d >= 0 ? (void *)(t_ws + t_part_off%d) : NULL;", i, i, i);
}

/* "tecc_k_launch<int32_t>(x, y, M, N, stream)". */
static const char *launcher_call(KEmit *ke, const char *index_type) {
  Buf args;
  buf_init(&args, ke->a);
  put_host_args(ke, &args);
  return arena_printf(ke->a, "tecc_%s_launch<%s>(%sstream)", ke->k->name, index_type, buf_cstr(&args));
}

/* `lhs` the launcher's status, at the index width `big` says
 * (index_condition()). */
static void emit_launch_status(KEmit *ke, Out *o, const char *lhs, const char *big) {
  if (!big || strcmp(big, "true") == 0) {
    emit(o, "%s%s;", lhs, launcher_call(ke, big ? "int64_t" : "int32_t"));
    return;
  }
  emit(o, "#if TECC_INDEX64");
  emit(o, "%st_big ? %s", lhs, launcher_call(ke, "int64_t"));
  emit(o, "%*s: %s;", (int)strlen(lhs) + 6, "", launcher_call(ke, "int32_t"));
  emit(o, "#else");
  emit(o, "%s%s;", lhs, launcher_call(ke, "int32_t"));
  emit(o, "#endif");
}

/* Calls the launcher, then frees the workspace, if any. */
static void emit_launcher_call(KEmit *ke, Out *o, const char *big, int ws) {
  if (!ws) {
    emit_launch_status(ke, o, "return ", big);
    return;
  }
  emit_launch_status(ke, o, "tecc_status t_status = ", big);
  open_block(o, "if (t_ws)");
  emit(o, "const cudaError_t t_err = cudaFreeAsync(t_ws, stream);");
  open_block(o, "if (t_err != cudaSuccess)");
  emit(o, "(void)cudaGetLastError(); /* this call's own failure: in the status, not left pending */");
  emit(o, "if (t_status == TECC_SUCCESS) t_status = (tecc_status)(TECC_ERROR_CUDA + (int)t_err);");
  close_block(o, "");
  close_block(o, "");
  emit(o, "return t_status;");
}

/* The workspace of ke's plan, its launches, and the return. */
static void emit_plan_call(KEmit *ke, Out *o, const char *big) {
  const int ws = needs_workspace(ke);
  if (ws) {
    emit_workspace(ke, o, !big ? "true" : strcmp(big, "true") == 0 ? "false" : "!t_big");
    emit_workspace_alloc(ke, o);
    emit_snapshots(ke, o);
  }
  emit_launcher_call(ke, o, big, ws);
}

/* The apart plan's groups are checked with the main plan's (the index
 * width covers both): they share the counts. */
static void apart_checks(KEmit *ke, Out *o) {
  if (!ke->apart)
    return;
  ke->apart->snap = ARENA_ARRAY(ke->a, char, ke->k->ninputs + 1);
  ke->apart->counts = ke->counts;
  emit_domain_checks(ke->apart, o);
  ke->counts = ke->apart->counts;
}

/* Rows longer than the main plan keeps its column sums for (or, where
 * the apart plan is the kernel with its reductions split, than its rows
 * of several runs held on chip) run the apart plan. */
/* The variant of rows whose runs are half packs (WHEN_RUNS_HALF), or NULL. */
static const Variant *runs_half(const GroupSchedule *s) {
  for (int i = 0; i < s->nvariants; i++)
    if (s->variants[i].when == WHEN_RUNS_HALF)
      return &s->variants[i];
  return NULL;
}

static void emit_apart_call(KEmit *ke, Out *o, const char *big) {
  if (!ke->apart)
    return;
  const Group *g = ke->kp->groups.items[ke->kp->apart_group];
  const Count *len = checked_count(ke, o, "t_len_apart", &g->domain, g->stitch->axes);
  if (ke->kp->apart_split) { /* and runs that are not whole packs (stitch_plan.c, runs_whole_packs()) */
    const Count *run = checked_count(ke, o, "t_run_apart", &g->domain, stitch_inner_run(g));
    const Variant *half = runs_half(g->schedule);
    const char *odd = arena_printf(ke->a, "%s %% %d != 0", run->expr, stitch_most_vec(g->schedule));
    if (half) /* schedule.c, half_runs() */
      odd = arena_printf(ke->a, "(%s && (%s %% %d != 0 || %s > %s))", odd, run->expr, half->vec, len->expr,
                         host_literal(ke->a, half->limit));
    emit(o, "/* rows longer than %lld, or of runs that are not whole packs%s: the plan with the reductions split (two "
            "reads) */", (long long)ke->kp->apart_len,
         half ? arena_printf(ke->a, " (nor half packs of rows up to %lld)", (long long)half->limit) : "");
    open_block(o, "if (%s > %s || %s%s)", len->expr, host_literal(ke->a, ke->kp->apart_len), odd,
               !big ? "" : strcmp(big, "true") == 0 ? " || true" : " || t_big");
  } else {
    emit(o, "/* rows longer than %lld: the sums over them in a column group of their own */",
         (long long)ke->kp->apart_len);
    open_block(o, "if (%s > %s)", len->expr, host_literal(ke->a, ke->kp->apart_len));
  }
  /* the counts it declares live in its block: its own copy of the list */
  PtrVec counts = {0};
  for (int i = 0; i < ke->counts.len; i++)
    vec_push(ke->a, &counts, ke->counts.items[i]);
  ke->apart->counts = counts;
  emit_plan_call(ke->apart, o, big);
  close_block(o, "");
}

static void emit_entry(KEmit *ke, Out *o) {
  const Kernel *k = ke->k;
  emit(o, "/* %s */", k->te_signature ? k->te_signature : k->name);
  open_block(o, "extern \"C\" %s", entry_signature(ke->a, k, ke->names));
  emit_argument_checks(ke, o);
  apart_checks(ke, o);
  emit_pending_check(o);
  const char *big = index_condition(ke);
  ke->index64_optional = big && strcmp(big, "true") != 0;
  if (ke->index64_optional) {
    emit(o, "/* 64-bit indexing only when some count needs it. */");
    emit(o, "const int64_t t_lim = INT64_C(1) << 30;");
    emit(o, "const bool t_big = %s;", big);
    emit(o, "#if !TECC_INDEX64");
    emit(o, "if (t_big) return TECC_ERROR_INVALID_VALUE; /* built without 64-bit indices */");
    emit(o, "#endif");
  }
  emit_apart_call(ke, o, big);
  emit_plan_call(ke, o, ke->kp->apart_split ? NULL : big); /* 32-bit indices: emit_apart_call() */
  close_block(o, "");
}

/* ---- the file ------------------------------------------------------------------ */

static KEmit *emit_kernel_device(Compilation *c, Kernel *k, KernelPlan *kp, Out *o) {
  KEmit *ke = ARENA_NEW(c->arena, KEmit);
  ke->c = c;
  ke->a = c->arena;
  ke->k = k;
  ke->kp = kp;
  ke->names = entry_names(c->arena, k);
  ke->groups = ARENA_ARRAY(c->arena, GEmit *, kp->groups.len + 1);
  ir_count_uses(k); /* cu_fused_product() asks which products have one use */
  for (int i = 0; i < kp->groups.len; i++) {
    ke->groups[i] = new_gemit(c->arena, k, kp, kp->groups.items[i], ke->names);
    const int joined = joins_launch_before(ke->groups[i]);
    if (joined)
      join_launch_names(ke->groups[i], ke->groups[i - 1]);
    emit_group_kernel(ke->groups[i], o);
    emit_blank(o);
    if (joined) {
      emit_one_launch_kernel(ke->groups[i - 1], ke->groups[i], o);
      emit_blank(o);
    }
  }
  if (lag_plan(kp))
    emit_lag(ke, o);
  emit_launcher(ke, o);
  emit_blank(o);
  if (kp->apart)
    ke->apart = emit_kernel_device(c, kp->apart->kernel, kp->apart, o);
  return ke;
}

/* The banner, the includes, the TECC_INDEX64 switch where some entry
 * point has 64-bit-index launches (`index64`), and the pieces of the
 * runtime `code` uses. */
static void emit_prologue(Compilation *c, Out *o, int opt_level, int index64, const char *code) {
  const SourceFile *main = c->files.len ? c->files.items[0] : NULL;
  emit(o, "/* Generated by tecc %s from %s (-O%d).  Do not edit. */", TECC_VERSION_STRING,
       source_name(main), opt_level);
  emit(o, "#include <cuda_runtime.h>");
  emit(o, "#include <stdint.h>");
  emit(o, "#include \"%s\"", header_file_name(c));
  emit_blank(o);
  if (index64) {
    emit(o, "/* nvcc -DTECC_INDEX64=0 leaves out the 64-bit-index kernels: a smaller");
    emit(o, " * library, built about twice as fast, whose calls with a count of 2^30 or");
    emit(o, " * more return TECC_ERROR_INVALID_VALUE (abi.md, section 3). */");
    emit(o, "#ifndef TECC_INDEX64");
    emit(o, "#define TECC_INDEX64 1");
    emit(o, "#endif");
    emit_blank(o);
  }
  const char *runtime = runtime_for(c->arena, code);
  if (!*runtime)
    return;
  emit(o, "/* ---- the pieces of the tecc runtime (runtime/) this file uses ---- */");
  emit_text(o, runtime);
  emit(o, "/* ---- end of the tecc runtime ---- */");
  emit_blank(o);
}

/* The kernels and entry points are written first: the runtime they name
 * goes before them. */
const char *emit_cu(Compilation *c, Module *m, FusionPlan *p) {
  Out *code = new_out(c->arena);
  emit(code, "namespace {");
  emit_blank(code);
  KEmit **kes = ARENA_ARRAY(c->arena, KEmit *, m->nkernels + 1);
  for (int i = 0; i < m->nkernels; i++)
    kes[i] = emit_kernel_device(c, m->kernels[i], p->kernels[i], code);
  emit(code, "}  // namespace");
  int index64 = 0;
  for (int i = 0; i < m->nkernels; i++) {
    emit_blank(code);
    emit_entry(kes[i], code);
    index64 |= kes[i]->index64_optional;
  }
  const char *text = out_finish(code, ".cu");
  Out *o = new_out(c->arena);
  emit_prologue(c, o, p->opt_level, index64, text);
  emit_text(o, text);
  return out_finish(o, ".cu");
}
