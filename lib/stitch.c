/* stitch.c — stitch fusion: one group per softmax / norm (stitch.h). */
#include "stitch.h"

#include <stdlib.h>
#include <string.h>

/* Values beyond this many get no stitching (the dependence matrix is
 * n*n bits). */
enum { STITCH_MAX_VALUES = 8192 };

typedef struct Cluster {
  Shape domain;
  uint32_t axes;
  PtrVec reduces;  /* Value* */
  PtrVec columns;  /* Value*: column sums over the rows, taken by a row cluster (stitch.h) */
  PtrVec loops;    /* Group*: loop groups merged in */
  Group *group;    /* the stitch group, once made */
} Cluster;

typedef struct StitchCtx {
  Arena *a;
  KernelPlan *kp;
  Kernel *k;
  int n;
  int words;       /* uint64 words per row of `dep` */
  uint64_t *dep;   /* dep[v*words + u/64] bit u: v depends on u (u != v) */
  PtrVec clusters; /* Cluster* */
  char *merged;    /* by index in kp->groups: a loop group merged in */
  Buf *why;
} StitchCtx;

static int depends(const StitchCtx *s, int v, int u) {
  return (int)((s->dep[(size_t)v * (size_t)s->words + (size_t)(u >> 6)] >> (u & 63)) & 1u);
}

static void build_dependences(StitchCtx *s) {
  s->words = (s->n + 63) / 64;
  s->dep = ARENA_ARRAY(s->a, uint64_t, (size_t)s->n * (size_t)s->words);
  for (int i = 0; i < s->n; i++) {
    Value *v = s->k->values.items[i];
    uint64_t *row = s->dep + (size_t)i * (size_t)s->words;
    for (int j = 0; j < v->nargs; j++) {
      int u = v->args[j]->id;
      const uint64_t *arow = s->dep + (size_t)u * (size_t)s->words;
      for (int w = 0; w < s->words; w++)
        row[w] |= arow[w];
      row[u >> 6] |= (uint64_t)1 << (u & 63);
    }
  }
}

/* The reduced axes of `r`, literal-1 axes of its argument left out. */
static uint32_t real_axes(const Value *r) {
  uint32_t m = 0;
  for (int i = 0; i < r->args[0]->shape.rank; i++)
    if (((r->axes >> i) & 1u) && !dim_is_one(&r->args[0]->shape, i))
      m |= 1u << i;
  return m;
}

static int stitchable_reduce(const Value *v) {
  return v->op == IR_REDUCE && v->rop != RED_ARGMAX && v->rop != RED_ARGMIN && real_axes(v) != 0;
}

static int in_vec(const PtrVec *v, const void *x) {
  for (int i = 0; i < v->len; i++)
    if (v->items[i] == x)
      return 1;
  return 0;
}

/* A cluster's (or stitch group's) reductions, then its column sums. */
static PtrVec members_of(Arena *a, const PtrVec *reduces, const PtrVec *columns) {
  PtrVec m = {0};
  for (int i = 0; i < reduces->len; i++)
    vec_push(a, &m, reduces->items[i]);
  for (int i = 0; i < columns->len; i++)
    vec_push(a, &m, columns->items[i]);
  return m;
}

/* Reductions outside `members` that `v`'s cone reads: the walk goes
 * through elementwise values and members, and stops at inputs and at
 * other reductions (which some other group stores). */
static void boundary(StitchCtx *s, Value *v, const PtrVec *members, char *seen, PtrVec *out) {
  if (seen[v->id])
    return;
  seen[v->id] = 1;
  if (v->op == IR_INPUT)
    return;
  if (v->op == IR_REDUCE && !in_vec(members, v)) {
    vec_push(s->a, out, v);
    return;
  }
  for (int i = 0; i < v->nargs; i++)
    boundary(s, v->args[i], members, seen, out);
}

/* A cluster is legal when nothing it reads from another group depends on
 * one of its members (that would be a cycle between groups). */
static int cluster_legal(StitchCtx *s, const PtrVec *members, const PtrVec *loops) {
  char *seen = ARENA_ARRAY(s->a, char, s->n);
  PtrVec reads = {0};
  for (int i = 0; i < members->len; i++) {
    Value *r = members->items[i];
    for (int j = 0; j < r->nargs; j++)
      boundary(s, r->args[j], members, seen, &reads);
  }
  for (int i = 0; i < loops->len; i++) {
    Group *g = loops->items[i];
    for (int j = 0; j < g->roots.len; j++)
      boundary(s, g->roots.items[j], members, seen, &reads);
  }
  for (int i = 0; i < reads.len; i++) {
    const Value *b = reads.items[i];
    for (int j = 0; j < members->len; j++)
      if (depends(s, b->id, ((const Value *)members->items[j])->id))
        return 0;
  }
  return 1;
}

/* ---- the group graph stays acyclic --------------------------------------
 * Nodes: the clusters (with the loop groups merged into them so far), the
 * reductions no cluster takes, the loop groups not merged.  Node B
 * depends on node A when B's values read a reduction A computes.  A
 * value-level check is not enough: a cluster that computes x (read by
 * another cluster) and also y (reading that other cluster) closes a
 * cycle though neither x nor y depends on the other. */

typedef struct Graph {
  int n;
  char *edge;   /* edge[a * n + b]: b reads what a computes */
  int *owner;   /* by value id: the node computing a reduction, or -1 */
} Graph;

static void add_reads(StitchCtx *s, Graph *gr, int node, Value *from, const PtrVec *own, char *seen) {
  PtrVec reads = {0};
  boundary(s, from, own, seen, &reads);
  for (int i = 0; i < reads.len; i++) {
    int src = gr->owner[((Value *)reads.items[i])->id];
    if (src >= 0 && src != node)
      gr->edge[src * gr->n + node] = 1;
  }
}

static int in_any_cluster_loops(StitchCtx *s, const Group *g) {
  for (int c = 0; c < s->clusters.len; c++)
    if (in_vec(&((Cluster *)s->clusters.items[c])->loops, g))
      return 1;
  return 0;
}

/* v is one of c's reductions or column sums. */
static int in_cluster(const Cluster *c, const Value *v) {
  return in_vec(&c->reduces, v) || in_vec(&c->columns, v);
}

static PtrVec cluster_members(StitchCtx *s, const Cluster *c) {
  return members_of(s->a, &c->reduces, &c->columns);
}

static int is_lone_reduce(StitchCtx *s, const Value *v) {
  if (v->op != IR_REDUCE)
    return 0;
  for (int c = 0; c < s->clusters.len; c++)
    if (in_cluster(s->clusters.items[c], v))
      return 0;
  return 1;
}

static Graph build_graph(StitchCtx *s) {
  Graph gr = {0};
  int nc = s->clusters.len, n = nc;
  gr.owner = ARENA_ARRAY(s->a, int, s->n);
  for (int i = 0; i < s->n; i++)
    gr.owner[i] = -1;
  for (int c = 0; c < nc; c++) {
    PtrVec m = cluster_members(s, s->clusters.items[c]);
    for (int j = 0; j < m.len; j++)
      gr.owner[((Value *)m.items[j])->id] = c;
  }
  for (int i = 0; i < s->n; i++)
    if (is_lone_reduce(s, s->k->values.items[i]))
      gr.owner[i] = n++;
  int first_loop = n;
  n += s->kp->groups.len;
  gr.n = n;
  gr.edge = ARENA_ARRAY(s->a, char, (size_t)n * (size_t)n);
  for (int c = 0; c < nc; c++) {
    Cluster *cl = s->clusters.items[c];
    PtrVec m = cluster_members(s, cl);
    char *seen = ARENA_ARRAY(s->a, char, s->n);
    for (int j = 0; j < m.len; j++) {
      Value *r = m.items[j];
      for (int a = 0; a < r->nargs; a++)
        add_reads(s, &gr, c, r->args[a], &m, seen);
    }
    for (int j = 0; j < cl->loops.len; j++) {
      Group *g = cl->loops.items[j];
      for (int r = 0; r < g->roots.len; r++)
        add_reads(s, &gr, c, g->roots.items[r], &m, seen);
    }
  }
  for (int i = 0; i < s->n; i++) {
    Value *v = s->k->values.items[i];
    if (gr.owner[i] < nc || v->op != IR_REDUCE)
      continue;
    PtrVec own = {0};
    vec_push(s->a, &own, v);
    char *seen = ARENA_ARRAY(s->a, char, s->n);
    for (int a = 0; a < v->nargs; a++)
      add_reads(s, &gr, gr.owner[i], v->args[a], &own, seen);
  }
  for (int i = 0; i < s->kp->groups.len; i++) {
    Group *g = s->kp->groups.items[i];
    if (g->kind != GROUP_LOOP || s->merged[i] || in_any_cluster_loops(s, g))
      continue;
    PtrVec none = {0};
    char *seen = ARENA_ARRAY(s->a, char, s->n);
    for (int r = 0; r < g->roots.len; r++)
      add_reads(s, &gr, first_loop + i, g->roots.items[r], &none, seen);
  }
  return gr;
}

/* Depth-first search: state 1 on the path, 2 done. */
static int reaches_back(const Graph *gr, int v, char *state) {
  state[v] = 1;
  for (int w = 0; w < gr->n; w++) {
    if (!gr->edge[v * gr->n + w])
      continue;
    if (state[w] == 1 || (state[w] == 0 && reaches_back(gr, w, state)))
      return 1;
  }
  state[v] = 2;
  return 0;
}

static int groups_acyclic(StitchCtx *s) {
  Graph gr = build_graph(s);
  char *state = ARENA_ARRAY(s->a, char, gr.n + 1);
  for (int v = 0; v < gr.n; v++)
    if (state[v] == 0 && reaches_back(&gr, v, state))
      return 0;
  return 1;
}

static Cluster *new_cluster(StitchCtx *s, Value *r) {
  Cluster *c = ARENA_NEW(s->a, Cluster);
  c->domain = r->args[0]->shape;
  c->axes = real_axes(r);
  vec_push(s->a, &c->reduces, r);
  vec_push(s->a, &s->clusters, c);
  return c;
}

static int try_join(StitchCtx *s, Cluster *c, Value *r) {
  if (c->axes != real_axes(r) || !shape_equal(&c->domain, &r->args[0]->shape))
    return 0;
  vec_push(s->a, &c->reduces, r);
  if (cluster_legal(s, &c->reduces, &c->loops) && groups_acyclic(s))
    return 1;
  c->reduces.len--;
  buf_printf(s->why, "%s: %%%d not stitched with %%%d: a reduction it reads depends on the cluster (cycle)\n",
             s->k->name, r->id, ((Value *)c->reduces.items[0])->id);
  return 0;
}

static void make_clusters(StitchCtx *s) {
  for (int i = 0; i < s->n; i++) {
    Value *v = s->k->values.items[i];
    if (!stitchable_reduce(v))
      continue;
    int joined = 0;
    for (int c = 0; c < s->clusters.len && !joined; c++)
      joined = try_join(s, s->clusters.items[c], v);
    if (!joined)
      new_cluster(s, v);
  }
}

/* `a` equals `b` once literal-1 axes are dropped. */
static int same_dims(const Shape *a, const Shape *b) {
  Shape x = {0}, y = {0};
  for (int i = 0; i < a->rank; i++)
    if (!dim_is_one(a, i))
      x.d[x.rank++] = a->d[i];
  for (int i = 0; i < b->rank; i++)
    if (!dim_is_one(b, i))
      y.d[y.rank++] = b->d[i];
  return shape_equal(&x, &y);
}

static Shape row_shape(const Cluster *c) {
  Shape r = c->domain;
  for (int i = 0; i < r.rank; i++)
    if ((c->axes >> i) & 1u)
      r.d[i] = (Dim){-1, 1};
  return r;
}

/* Axes of the domain that are not the literal 1. */
static uint32_t row_mask(const Cluster *c) {
  uint32_t m = 0;
  for (int i = 0; i < c->domain.rank; i++)
    if (!dim_is_one(&c->domain, i))
      m |= 1u << i;
  return m;
}

/* A full reduction (no kept axis) would be one block: it stays a reduce
 * group, whose schedule spreads it over the GPU. */
static int has_kept_axis(const Cluster *c) {
  return (c->axes | ~row_mask(c)) != ~0u;
}

static int worth_stitching(const Cluster *c) {
  return (c->reduces.len > 1 || c->loops.len > 0 || c->columns.len > 0) && has_kept_axis(c);
}

static Schedule stitch_schedule(const Cluster *c) {
  int inner = innermost_axis(&c->domain);
  return inner < 0 || ((c->axes >> inner) & 1u) ? SCHED_ROW : SCHED_COLUMN;
}

/* A column reduction whose merged loops only round its result stays a
 * reduce group that stores the casts itself (fuse.c): the column kernel
 * loads packs along the columns and splits the reduced axis over the GPU. */
static int rounds_only(StitchCtx *s, const Cluster *c) {
  if (stitch_schedule(c) != SCHED_COLUMN || c->reduces.len != 1)
    return 0;
  for (int i = 0; i < c->loops.len; i++)
    if (!rounded_reduce(s->kp, c->loops.items[i]))
      return 0;
  return 1;
}

static void unmerge_loops(StitchCtx *s, Cluster *c) {
  for (int i = 0; i < s->kp->groups.len; i++)
    if (in_vec(&c->loops, s->kp->groups.items[i]))
      s->merged[i] = 0;
}

static int loop_fits(const Cluster *c, const Group *g) {
  Shape rs = row_shape(c);
  /* same rank: the emitter maps value axes to domain axes one to one */
  return shape_equal(&g->domain, &c->domain) || (g->domain.rank == rs.rank && same_dims(&g->domain, &rs));
}

static int loop_reads_cluster(StitchCtx *s, const Cluster *c, const Group *g) {
  for (int i = 0; i < g->roots.len; i++)
    for (int j = 0; j < c->reduces.len; j++)
      if (depends(s, ((Value *)g->roots.items[i])->id, ((Value *)c->reduces.items[j])->id))
        return 1;
  return 0;
}

/* ---- column sums in a row cluster ---------------------------------------
 * A row cluster's kernel visits every element of its domain once, and each
 * thread the same columns of every row it takes: a sum over the rows (a
 * norm's dw, db) of a value computed there is a set of column partials
 * the kernel adds as it goes (a second stage sums them in a fixed order).
 * Nothing in the cluster may read such a sum, which is only whole once
 * every row is done. */

static int column_of(const Cluster *c, const Value *r) {
  return stitch_schedule(c) == SCHED_ROW && has_kept_axis(c) && (r->rop == RED_SUM || r->rop == RED_MEAN) &&
         (r->dtype == DT_F32 || r->dtype == DT_F64) && shape_equal(&c->domain, &r->args[0]->shape) &&
         (!c->columns.len || ((const Value *)c->columns.items[0])->dtype == r->dtype) && /* one partials type */
         real_axes(r) == (row_mask(c) & ~c->axes);
}

static int reads_a_column(StitchCtx *s, const Cluster *c, int v) {
  for (int i = 0; i < c->columns.len; i++)
    if (depends(s, v, ((const Value *)c->columns.items[i])->id))
      return 1;
  return 0;
}

/* No reduction or merged loop of c reads one of its columns. */
static int columns_unread(StitchCtx *s, const Cluster *c) {
  for (int i = 0; i < c->reduces.len; i++)
    if (reads_a_column(s, c, ((const Value *)c->reduces.items[i])->id))
      return 0;
  for (int i = 0; i < c->loops.len; i++) {
    const Group *g = c->loops.items[i];
    for (int j = 0; j < g->roots.len; j++)
      if (reads_a_column(s, c, ((const Value *)g->roots.items[j])->id))
        return 0;
  }
  return 1;
}

static void remove_value(PtrVec *v, const void *x) {
  int n = 0;
  for (int i = 0; i < v->len; i++)
    if (v->items[i] != x)
      v->items[n++] = v->items[i];
  v->len = n;
}

/* r reads none of c's columns, and none of them reads r: each is a sum
 * of values of the domain alone (a column variance reads its mean). */
static int independent_column(StitchCtx *s, const Cluster *c, const Value *r) {
  if (reads_a_column(s, c, r->id))
    return 0;
  for (int i = 0; i < c->columns.len; i++)
    if (depends(s, ((const Value *)c->columns.items[i])->id, r->id))
      return 0;
  return 1;
}

static int try_column(StitchCtx *s, Cluster *c, Cluster *from, Value *r) {
  if (!column_of(c, r) || !independent_column(s, c, r))
    return 0;
  remove_value(&from->reduces, r);
  vec_push(s->a, &c->columns, r);
  PtrVec m = cluster_members(s, c);
  if (cluster_legal(s, &m, &c->loops) && columns_unread(s, c) && groups_acyclic(s))
    return 1;
  c->columns.len--;
  vec_push(s->a, &from->reduces, r);
  return 0;
}

/* Every reduction of `from` is a sum or mean (not a softmax's max over
 * the rows, which the sum beside it reads). */
static int only_sums(const Cluster *from) {
  for (int j = 0; j < from->reduces.len; j++) {
    const Value *r = from->reduces.items[j];
    if (r->rop != RED_SUM && r->rop != RED_MEAN)
      return 0;
  }
  return 1;
}

/* A cluster of column sums (which would be a column reduction re-reading
 * the domain: a norm's dw and db) gives them to a row cluster that can
 * take them; a cluster left empty goes.  Column clusters of other
 * reductions (a softmax over the rows) keep theirs. */
static void take_columns(StitchCtx *s) {
  if (s->kp->sums_apart)
    return;
  for (int i = 0; i < s->clusters.len; i++) {
    Cluster *from = s->clusters.items[i];
    for (int j = 0; j < from->reduces.len && only_sums(from); j++) {
      Value *r = from->reduces.items[j];
      for (int k = 0; k < s->clusters.len; k++) {
        Cluster *c = s->clusters.items[k];
        if (c != from && try_column(s, c, from, r)) {
          buf_printf(s->why, "%s: %%%d (%s over the rows) taken by the row cluster of %%%d as column partials\n",
                     s->k->name, r->id, reduce_name(r->rop), ((Value *)c->reduces.items[0])->id);
          j--;
          break;
        }
      }
    }
  }
  int n = 0;
  for (int i = 0; i < s->clusters.len; i++)
    if (((Cluster *)s->clusters.items[i])->reduces.len)
      s->clusters.items[n++] = s->clusters.items[i];
  s->clusters.len = n;
}

/* Loop groups over the domain or the row shape join the cluster they
 * read (else the first one they fit), when that stays legal. */
static void merge_loops(StitchCtx *s) {
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < s->kp->groups.len; i++) {
      Group *g = s->kp->groups.items[i];
      if (g->kind != GROUP_LOOP || s->merged[i])
        continue;
      for (int j = 0; j < s->clusters.len; j++) {
        Cluster *c = s->clusters.items[j];
        if (!has_kept_axis(c) || !loop_fits(c, g) || (pass == 0 && !loop_reads_cluster(s, c, g)))
          continue;
        vec_push(s->a, &c->loops, g);
        PtrVec m = cluster_members(s, c);
        if (cluster_legal(s, &m, &c->loops) && columns_unread(s, c) && groups_acyclic(s)) {
          s->merged[i] = 1;
          break;
        }
        c->loops.len--;
      }
    }
  }
}

/* Reductions some other group reads (or that are outputs) stay stored. */
static void mark_external_reads(StitchCtx *s, Group *g, const PtrVec *own, char *ext) {
  char *seen = ARENA_ARRAY(s->a, char, s->n);
  PtrVec reads = {0};
  for (int i = 0; i < g->roots.len; i++) {
    Value *v = g->roots.items[i];
    if (v->op == IR_REDUCE && in_vec(own, v)) {
      seen[v->id] = 1;
      for (int j = 0; j < v->nargs; j++)
        boundary(s, v->args[j], own, seen, &reads);
    } else if (v->op == IR_REDUCE) {
      for (int j = 0; j < v->nargs; j++)
        boundary(s, v->args[j], own, seen, &reads);
    } else {
      boundary(s, v, own, seen, &reads);
    }
  }
  /* a stitch group's reductions need not be roots (yet) */
  for (int i = 0; g->kind == GROUP_STITCH && i < own->len; i++) {
    Value *v = own->items[i];
    seen[v->id] = 1;
    for (int j = 0; j < v->nargs; j++)
      boundary(s, v->args[j], own, seen, &reads);
  }
  for (int i = 0; i < reads.len; i++)
    ext[((Value *)reads.items[i])->id] = 1;
}

static int is_output(const Kernel *k, const Value *v) {
  for (int i = 0; i < k->noutputs; i++)
    if (k->outputs[i].value == v)
      return 1;
  return 0;
}

static int by_value_id(const void *pa, const void *pb) {
  const Value *a = *(Value *const *)pa, *b = *(Value *const *)pb;
  return (a->id > b->id) - (a->id < b->id);
}

static void compute_levels(StitchCtx *s, Stitch *st) {
  int *lvl = ARENA_ARRAY(s->a, int, s->n);
  for (int i = 0; i < s->n; i++) {
    Value *v = s->k->values.items[i];
    int l = 0;
    for (int j = 0; j < v->nargs; j++)
      if (lvl[v->args[j]->id] > l)
        l = lvl[v->args[j]->id];
    if (v->op == IR_REDUCE && in_vec(&st->reduces, v)) {
      l++;
      if (l > st->nlevels)
        st->nlevels = l;
    } else if (v->op == IR_REDUCE) {
      l = 0; /* read from memory */
    }
    lvl[i] = l;
  }
  st->level = lvl;
  st->nvalues = s->n;
}


/* Replaces the cluster's reduce groups and merged loop groups by one
 * stitch group. */
static Group *make_stitch_group(StitchCtx *s, Cluster *c) {
  Group *g = ARENA_NEW(s->a, Group);
  Stitch *st = ARENA_NEW(s->a, Stitch);
  g->kind = GROUP_STITCH;
  g->domain = c->domain;
  g->sched = stitch_schedule(c);
  g->stitch = st;
  st->axes = c->axes;
  st->reduces = c->reduces;
  st->columns = c->columns;
  st->nmerged = c->loops.len;
  for (int i = 0; i < c->loops.len; i++) {
    Group *l = c->loops.items[i];
    for (int j = 0; j < l->roots.len; j++)
      vec_push(s->a, &g->roots, l->roots.items[j]);
  }
  compute_levels(s, st);
  c->group = g;
  return g;
}

static void drop_merged_groups(StitchCtx *s) {
  PtrVec keep = {0};
  for (int i = 0; i < s->kp->groups.len; i++) {
    Group *g = s->kp->groups.items[i];
    int drop = s->merged[i];
    for (int j = 0; j < s->clusters.len && !drop; j++) {
      Cluster *c = s->clusters.items[j];
      drop = c->group && g->kind == GROUP_REDUCE && in_cluster(c, g->reduce);
    }
    if (!drop)
      vec_push(s->a, &keep, g);
  }
  for (int j = 0; j < s->clusters.len; j++) {
    Cluster *c = s->clusters.items[j];
    if (c->group)
      vec_push(s->a, &keep, c->group);
  }
  s->kp->groups = keep;
}

/* A stitched reduction that no other group reads and that is no output
 * stays in registers. */
static void settle_stored(StitchCtx *s) {
  char *ext = ARENA_ARRAY(s->a, char, s->n);
  for (int i = 0; i < s->kp->groups.len; i++) {
    Group *g = s->kp->groups.items[i];
    PtrVec own = {0};
    if (g->kind == GROUP_STITCH)
      own = members_of(s->a, &g->stitch->reduces, &g->stitch->columns);
    mark_external_reads(s, g, &own, ext);
  }
  for (int j = 0; j < s->clusters.len; j++) {
    Cluster *c = s->clusters.items[j];
    if (!c->group)
      continue;
    PtrVec m = cluster_members(s, c);
    for (int i = 0; i < m.len; i++) {
      Value *r = m.items[i];
      if (ext[r->id] || is_output(s->k, r)) {
        vec_push(s->a, &c->group->roots, r);
        s->kp->group_of[r->id] = -2;
      } else {
        s->kp->stored[r->id] = 0;
        s->kp->group_of[r->id] = -1;
      }
    }
    if (c->group->roots.len > 1)
      qsort(c->group->roots.items, (size_t)c->group->roots.len, sizeof(void *), by_value_id);
  }
}

static void explain_cluster(StitchCtx *s, const Cluster *c) {
  Buf *b = s->why;
  buf_printf(b, "%s: stitch: ", s->k->name);
  for (int i = 0; i < c->reduces.len; i++)
    buf_printf(b, "%s%%%d (%s)", i ? ", " : "", ((Value *)c->reduces.items[i])->id,
               reduce_name(((Value *)c->reduces.items[i])->rop));
  if (!c->group) {
    buf_puts(b, ": one reduce group, nothing else over the same row space to fuse with\n");
    return;
  }
  buf_printf(b, " over %s, reduced axes mask 0x%x, %d reduction level(s), %d elementwise output group(s) merged"
                " -> one %s kernel\n",
             shape_str(s->a, s->k, &c->domain), c->axes, c->group->stitch->nlevels, c->loops.len,
             schedule_name(c->group->sched));
}

void stitch_groups(Arena *a, KernelPlan *kp, Buf *why) {
  StitchCtx s = {0};
  s.a = a;
  s.kp = kp;
  s.k = kp->kernel;
  s.n = s.k->values.len;
  s.why = why;
  if (s.n > STITCH_MAX_VALUES) {
    buf_printf(why, "%s: no stitching: %d values (more than %d)\n", s.k->name, s.n, STITCH_MAX_VALUES);
    return;
  }
  s.merged = ARENA_ARRAY(a, char, kp->groups.len + 1);
  build_dependences(&s);
  make_clusters(&s);
  if (!s.clusters.len)
    return;
  take_columns(&s);
  merge_loops(&s);
  for (int i = 0; i < s.clusters.len; i++) {
    Cluster *c = s.clusters.items[i];
    if (rounds_only(&s, c)) {
      unmerge_loops(&s, c);
      buf_printf(why, "%s: %%%d: a column reduction whose result is only rounded: its reduce group stores "
                      "the cast\n", s.k->name, ((Value *)c->reduces.items[0])->id);
      continue;
    }
    if (worth_stitching(c))
      make_stitch_group(&s, c);
    explain_cluster(&s, c);
  }
  drop_merged_groups(&s);
  settle_stored(&s);
}

/* Launch order: dependences first, else the order sort_groups() gave;
 * then ids and group_of follow the new order. */
void stitch_order_groups(Arena *a, KernelPlan *kp) {
  int n = kp->groups.len;
  char *placed = ARENA_ARRAY(a, char, n + 1);
  PtrVec order = {0};
  while (order.len < n) {
    int next = -1;
    for (int i = 0; i < n && next < 0; i++) {
      Group *g = kp->groups.items[i];
      int ready = !placed[i];
      for (int d = 0; d < g->deps.len && ready; d++)
        ready = placed[((Group *)g->deps.items[d])->id];
      if (ready)
        next = i;
    }
    if (next < 0)
      internal_error("stitch: the groups of %s form a cycle", kp->kernel->name);
    placed[next] = 1;
    vec_push(a, &order, kp->groups.items[next]);
  }
  kp->groups = order;
  for (int i = 0; i < n; i++) {
    Group *g = kp->groups.items[i];
    g->id = i;
    for (int r = 0; r < g->roots.len; r++)
      kp->group_of[((Value *)g->roots.items[r])->id] = i;
  }
}

/* ---- second moments ------------------------------------------------------ */

static int in_group_reduces(const Group *g, const Value *v) {
  return in_vec(&g->stitch->reduces, v);
}

/* d = x - m (m through a broadcast), m the group's mean of x at `level`. */
static Value *centre_of(const Group *g, const Value *d, int level) {
  if (d->op != IR_BINARY || d->bop != BIN_SUB)
    return NULL;
  Value *m = d->args[1];
  if (m->op == IR_BROADCAST)
    m = m->args[0];
  if (m->op != IR_REDUCE || m->rop != RED_MEAN || m->shape.rank != d->shape.rank || m->args[0] != d->args[0] ||
      !in_group_reduces(g, m) || g->stitch->level[m->id] != level || m->dtype != d->dtype)
    return NULL;
  return m;
}

Value *stitch_moment_mean(const Group *g, const Value *r, int level) {
  if (r->op != IR_REDUCE || (r->rop != RED_MEAN && r->rop != RED_SUM))
    return NULL;
  const Value *sq = r->args[0];
  if (sq->op != IR_BINARY || sq->bop != BIN_MUL || sq->args[0] != sq->args[1])
    return NULL;
  Value *m = centre_of(g, sq->args[0], level - 1);
  if (!m)
    return NULL;
  DType t = m->args[0]->dtype;
  if ((t != DT_F32 && t != DT_F64) || m->dtype != t || r->dtype != t || sq->dtype != t)
    return NULL;
  return m;
}

/* Every reduction of g at `level` (there is one) is `kind`. */
static int level_all(const Group *g, int level, Value *(*kind)(const Group *, const Value *, int)) {
  const Stitch *st = g->stitch;
  if (level < 2 || level > st->nlevels)
    return 0;
  int n = 0;
  for (int i = 0; i < st->reduces.len; i++) {
    const Value *r = st->reduces.items[i];
    if (st->level[r->id] != level)
      continue;
    if (!kind(g, r, level))
      return 0;
    n++;
  }
  return n > 0;
}

int stitch_moments_level(const Group *g, int level) {
  return level_all(g, level, stitch_moment_mean);
}

/* ---- shifted moments (register kernel) ----------------------------------- */


/* x is an input over the whole domain, or a float cast of one: the
 * register kernel loads its first element of a row (the shift). */
static int loads_first(const Group *g, const Value *x) {
  const Value *in = x->op == IR_CAST ? x->args[0] : x;
  return in->op == IR_INPUT && dtype_is_float(in->dtype) && shape_equal(&x->shape, &g->domain) &&
         shape_equal(&in->shape, &g->domain);
}

/* g sums o at `level` in an accumulator of r's type (not in closed form,
 * as a sum of a constant). */
static int summed_at(const Group *g, const Value *o, int level, const Value *r) {
  const Stitch *st = g->stitch;
  for (int i = 0; i < st->reduces.len; i++) {
    const Value *s = st->reduces.items[i];
    if (st->level[s->id] == level && s->rop == RED_SUM && s->args[0] == o && s->dtype == r->dtype && !ir_const_of((Value *)o))
      return 1;
  }
  return 0;
}

Value *stitch_shifted_mean(const Group *g, const Value *r, int level, Value **other) {
  if (r->op != IR_REDUCE || (r->rop != RED_MEAN && r->rop != RED_SUM) || (r->dtype != DT_F32 && r->dtype != DT_F64))
    return NULL;
  const Value *p = r->args[0];
  if (p->op != IR_BINARY || p->bop != BIN_MUL || p->dtype != r->dtype)
    return NULL;
  for (int i = 0; i < 2; i++) {
    Value *m = centre_of(g, p->args[i], level - 1), *o = p->args[1 - i];
    if (!m || !loads_first(g, m->args[0]))
      continue;
    if (o == p->args[i]) {
      *other = NULL;
      return m;
    }
    if (o->id < g->stitch->nvalues && g->stitch->level[o->id] <= level - 2 && summed_at(g, o, level - 1, r)) {
      *other = o;
      return m;
    }
  }
  return NULL;
}

static Value *shifted_kind(const Group *g, const Value *r, int level) {
  Value *other;
  return stitch_shifted_mean(g, r, level, &other);
}

int stitch_shifted_level(const Group *g, int level) {
  return level_all(g, level, shifted_kind);
}

/* ---- online max-and-sum -------------------------------------------------- */

/* `s`, read through broadcasts and casts, computes from `m` and literals
 * only (and mentions m). */
static int shift_of(const Value *s, const Value *m, int *found) {
  while (s->op == IR_BROADCAST)
    s = s->args[0];
  if (s == m)
    return *found = 1;
  if (s->op == IR_CONST)
    return 1;
  if (s->op != IR_UNARY && s->op != IR_BINARY && s->op != IR_SELECT && s->op != IR_CAST)
    return 0;
  for (int i = 0; i < s->nargs; i++)
    if (!shift_of(s->args[i], m, found))
      return 0;
  return 1;
}

static int is_float(DType t) {
  return t == DT_F32 || t == DT_F64;
}

Value *stitch_online_max(const Group *g, const Value *r, int level) {
  if (r->op != IR_REDUCE || r->rop != RED_SUM || !is_float(r->dtype))
    return NULL;
  const Value *ex = r->args[0];
  if (ex->op != IR_UNARY || ex->uop != UN_EXP)
    return NULL;
  const Value *d = ex->args[0];
  if (d->op != IR_BINARY || d->bop != BIN_SUB || !is_float(d->dtype))
    return NULL;
  const Stitch *st = g->stitch;
  for (int i = 0; i < st->reduces.len; i++) {
    Value *m = st->reduces.items[i];
    int found = 0;
    if (m->rop == RED_MAX && st->level[m->id] == level - 1 && m->args[0] == d->args[0] &&
        m->dtype == d->dtype && m->shape.rank == d->shape.rank && shift_of(d->args[1], m, &found) && found)
      return m;
  }
  return NULL;
}

int stitch_online_level(const Group *g, int level) {
  return level_all(g, level, stitch_online_max);
}

uint32_t stitch_kept_axes(const Group *g) {
  uint32_t kept = 0;
  for (int i = 0; i < g->domain.rank; i++)
    if (!dim_is_one(&g->domain, i) && !((g->stitch->axes >> i) & 1u))
      kept |= 1u << i;
  return kept;
}

/* How many kept axes g's domain has (literal 1s aside) where they all
 * come after its reduced axes (`kept_last`) or all before them; else 0. */
static int kept_axes_together(const Group *g, int kept_last) {
  uint32_t kept = stitch_kept_axes(g), reduced = 0;
  for (int i = 0; i < g->domain.rank; i++)
    if (!dim_is_one(&g->domain, i) && ((g->stitch->axes >> i) & 1u))
      reduced |= 1u << i;
  uint32_t first = kept_last ? reduced : kept, then = kept_last ? kept : reduced;
  if (first && then && (uint32_t)__builtin_ctz(then) < 32u - (uint32_t)__builtin_clz(first))
    return 0; /* some axis of `then` comes before the last of `first` */
  return __builtin_popcount(kept);
}

int stitch_column_packs(const Group *g) {
  return g->kind == GROUP_STITCH && g->sched != SCHED_ROW && kept_axes_together(g, 1) == 1;
}

int stitch_kept_first(const Group *g) {
  return kept_axes_together(g, 0);
}

DType stitch_acc_dtype(const Value *r) {
  return dtype_compute(r->dtype);
}

int stitch_column_split(const Group *g) {
  if (!stitch_column_packs(g))
    return 0;
  const Stitch *st = g->stitch;
  if (st->nlevels > 2 || (st->nlevels == 2 && !stitch_online_level(g, 2)))
    return 0;
  DType acc = DT_BOOL;
  for (int i = 0; i < st->reduces.len; i++) {
    const Value *r = st->reduces.items[i];
    DType t = stitch_acc_dtype(r);
    if ((r->rop != RED_SUM && r->rop != RED_MEAN && r->rop != RED_MAX && r->rop != RED_MIN) ||
        (t != DT_F32 && t != DT_F64) || (i && t != acc))
      return 0;
    acc = t;
  }
  return st->reduces.len > 0;
}

int stitch_is_column(const Group *g, const Value *v) {
  return g->kind == GROUP_STITCH && vec_contains(&g->stitch->columns, v);
}

int stitch_row_runs(const Group *g) {
  if (g->kind != GROUP_STITCH || g->sched != SCHED_ROW)
    return 0;
  enum { START, OUTER, KEPT, INNER } at = START;
  for (int i = 0; i < g->domain.rank; i++) {
    if (dim_is_one(&g->domain, i))
      continue;
    int red = (g->stitch->axes >> i) & 1u;
    if (red)
      at = at == START ? OUTER : at == KEPT ? INNER : at;
    else if (at == OUTER || at == KEPT)
      at = KEPT;
    else
      return 0; /* kept axes first (one run a row) or after the inner run */
  }
  return at == INNER;
}

uint32_t stitch_inner_run(const Group *g) {
  uint32_t axes = 0;
  for (int i = g->domain.rank - 1; i >= 0; i--) {
    if (dim_is_one(&g->domain, i))
      continue;
    if (!((g->stitch->axes >> i) & 1u))
      break;
    axes |= 1u << i;
  }
  return axes;
}

int stitch_runs_divisor(const Group *g) {
  uint32_t run = stitch_inner_run(g);
  if (__builtin_popcount(run) != 1) /* none, or a run of two axes or more */
    return -1;
  Dim d = g->domain.d[__builtin_ctz(run)];
  return d.var >= 0 ? d.var : -1;
}

int stitch_acc_bytes(const Group *g) {
  int most = 1;
  for (int i = 0; i < g->stitch->reduces.len; i++) {
    const Value *r = g->stitch->reduces.items[i];
    int n = r->rop == RED_ANY || r->rop == RED_ALL ? 1 : dtype_size(stitch_acc_dtype(r));
    most = n > most ? n : most;
  }
  return most;
}

int stitch_column_allreduce_bytes(const Group *g) {
  return 32 * 8 + 1024 * stitch_acc_bytes(g);
}

/* Does `v` read `u` (through broadcasts; a broadcast itself does not
 * count: its readers do)? */
static int reads(const Value *v, const Value *u) {
  if (v->op == IR_BROADCAST)
    return 0;
  for (int i = 0; i < v->nargs; i++) {
    const Value *a = v->args[i];
    while (a->op == IR_BROADCAST)
      a = a->args[0];
    if (a == u)
      return 1;
  }
  return 0;
}

/* `v` is an output, stored, or a root of g: needed as itself. */
static int kept_as_itself(const KernelPlan *kp, const Group *g, const Value *v) {
  return is_output(kp->kernel, v) || kp->stored[v->id] || kp->home[v->id].kind == HOME_WORKSPACE ||
         in_vec(&g->roots, v);
}

/* Every reader of `v` is `only`. */
static int read_only_by(const KernelPlan *kp, const Group *g, const Value *v, const Value *only) {
  if (kept_as_itself(kp, g, v))
    return 0;
  const PtrVec *values = &kp->kernel->values;
  for (int i = 0; i < values->len; i++)
    if (values->items[i] != only && reads(values->items[i], v))
      return 0;
  return 1;
}

/* The moment of g at `level` + 1 whose deviation is `d` from the mean m. */
static const Value *moment_of(const Group *g, const Value *m, const Value *d) {
  const Stitch *st = g->stitch;
  int level = st->level[m->id] + 1;
  for (int j = 0; j < st->reduces.len; j++) {
    const Value *r = st->reduces.items[j];
    if (st->level[r->id] == level && stitch_moment_mean(g, r, level) == m && r->args[0]->args[0] == d)
      return r;
  }
  return NULL;
}

/* The centred sum of g at `level` + 1 whose product reads the deviation
 * `d` from the mean m (the register kernel's shifted sums). */
static const Value *shifted_of(const Group *g, const Value *m, const Value *d) {
  const Stitch *st = g->stitch;
  int level = st->level[m->id] + 1;
  for (int j = 0; j < st->reduces.len; j++) {
    const Value *r = st->reduces.items[j];
    Value *other;
    if (st->level[r->id] == level && stitch_shifted_mean(g, r, level, &other) == m &&
        (r->args[0]->args[0] == d || r->args[0]->args[1] == d))
      return r;
  }
  return NULL;
}

/* m serves only as the centre of the sums `sum_of` finds at the level
 * after it (which `level_ok` says are all such sums): every value that
 * reads m is a deviation only such a sum's product reads. */
static int mean_only_centres(const KernelPlan *kp, const Group *g, const Value *m, int level_ok,
                             const Value *(*sum_of)(const Group *, const Value *, const Value *)) {
  if (!level_ok || kept_as_itself(kp, g, m))
    return 0;
  const PtrVec *values = &kp->kernel->values;
  for (int i = 0; i < values->len; i++) {
    const Value *d = values->items[i];
    if (!reads(d, m))
      continue;
    const Value *r = sum_of(g, m, d);
    if (!r || !read_only_by(kp, g, d, r->args[0]) || !read_only_by(kp, g, r->args[0], r))
      return 0;
  }
  return 1;
}

int stitch_mean_only_shifts(const KernelPlan *kp, const Group *g, const Value *m) {
  return mean_only_centres(kp, g, m, stitch_shifted_level(g, g->stitch->level[m->id] + 1), shifted_of);
}

int stitch_mean_only_centres(const KernelPlan *kp, const Group *g, const Value *m) {
  return mean_only_centres(kp, g, m, stitch_moments_level(g, g->stitch->level[m->id] + 1), moment_of);
}
