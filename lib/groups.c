/* groups.c — names and shape helpers for the groups of groups.h. */
#include "groups.h"

#include <string.h>

const char *group_kind_name(GroupKind k) {
  return k == GROUP_LOOP ? "loop" : k == GROUP_STITCH ? "stitch" : "reduce";
}

const char *schedule_name(Schedule s) {
  switch (s) {
  case SCHED_ELEMENTWISE:
    return "elementwise";
  case SCHED_ROW:
    return "row";
  case SCHED_COLUMN:
    return "column";
  }
  unreachable();
}

int dim_is_one(const Shape *s, int i) {
  return dim_literal_one(s->d[i]);
}

int innermost_axis(const Shape *domain) {
  for (int i = domain->rank - 1; i >= 0; i--)
    if (!dim_is_one(domain, i))
      return i;
  return -1;
}

const char *dims_text(Arena *a, const Kernel *k, const Shape *s, uint32_t mask) {
  Buf b;
  buf_init(&b, a);
  int n = 0;
  for (int i = 0; i < s->rank; i++) {
    if (!((mask >> i) & 1u) || dim_is_one(s, i))
      continue;
    if (s->d[i].var >= 0)
      buf_printf(&b, "%s%s", n++ ? "*" : "", k->sizevars[s->d[i].var].name);
    else
      buf_printf(&b, "%s%lld", n++ ? "*" : "", (long long)s->d[i].size);
  }
  return n ? buf_cstr(&b) : "1";
}

static void put_bytes(Buf *b, int *n, Arena *a, const Kernel *k, const Value *v) {
  buf_printf(b, "%s%d*%s", (*n)++ ? " + " : "", dtype_size(v->dtype), dims_text(a, k, &v->shape, ~0u));
}

/* Bytes one launch moves: each value read from memory once, each root
 * written once per buffer it lives in (a lower bound: broadcast operands
 * are re-read through the caches, streamed rows more than once). */
const char *group_bytes(Arena *a, const Kernel *k, const KernelPlan *kp, const Group *g) {
  Buf b;
  buf_init(&b, a);
  int n = 0;
  for (int i = 0; i < g->reads.len; i++)
    put_bytes(&b, &n, a, k, g->reads.items[i]);
  for (int e = 0; e < 2; e++) {
    const PtrVec *written = e ? &g->epilogue : &g->roots;
    for (int i = 0; i < written->len; i++) {
      const Value *v = written->items[i];
      for (int o = 0; o < k->noutputs; o++)
        if (k->outputs[o].value == v)
          put_bytes(&b, &n, a, k, v);
      if (kp->home[v->id].kind == HOME_WORKSPACE)
        put_bytes(&b, &n, a, k, v);
    }
  }
  return n ? buf_cstr(&b) : "0";
}

int varies_along(const Shape *s, const int *map, uint32_t axes) {
  for (int j = 0; j < s->rank; j++)
    if (!dim_is_one(s, j) && map[j] >= 0 && ((axes >> map[j]) & 1u))
      return 1;
  return 0;
}

void broadcast_arg_map(const Value *v, const int *map, int *arg_map) {
  const Value *arg = v->args[0];
  int shift = v->shape.rank - arg->shape.rank;
  for (int j = 0; j < arg->shape.rank; j++)
    arg_map[j] = dim_is_one(&arg->shape, j) ? -1 : map[j + shift];
}

typedef struct Seen {
  int id;
  int map[TECC_MAX_RANK];
} Seen;

int seen_before(Arena *a, PtrVec *seen, const Value *v, const int *map) {
  for (int i = 0; i < seen->len; i++) {
    const Seen *s = seen->items[i];
    if (s->id == v->id && memcmp(s->map, map, sizeof(int) * (size_t)v->shape.rank) == 0)
      return 1;
  }
  Seen *s = ARENA_NEW(a, Seen);
  s->id = v->id;
  memcpy(s->map, map, sizeof(int) * (size_t)v->shape.rank);
  vec_push(a, seen, s);
  return 0;
}

int covers_domain(const Shape *domain, uint32_t axes, const Shape *s, const int *map, int kept_only) {
  int want[TECC_MAX_RANK], n = 0, got = 0;
  for (int i = 0; i < domain->rank; i++)
    if (!dim_is_one(domain, i) && !(kept_only && ((axes >> i) & 1u)))
      want[n++] = i;
  for (int j = 0; j < s->rank; j++) {
    if (dim_is_one(s, j))
      continue;
    if (map[j] < 0 || got >= n || map[j] != want[got])
      return 0;
    got++;
  }
  return got == n;
}

/* The reduce group whose reduction is `v`, or NULL. */
static Group *reduce_group_of(const KernelPlan *kp, const Value *v) {
  for (int i = 0; i < kp->groups.len; i++) {
    Group *g = kp->groups.items[i];
    if (g->kind == GROUP_REDUCE && g->reduce == v)
      return g;
  }
  return NULL;
}

/* Whether a group of kp on the `after` side of g (later in the launch
 * order, or earlier) reads v. */
static int read_beside(const KernelPlan *kp, const Group *g, const Value *v, int after) {
  int past = 0;
  for (int i = 0; i < kp->groups.len; i++) {
    const Group *h = kp->groups.items[i];
    if (h == g)
      past = 1;
    else if (past == after && vec_contains(&h->reads, v))
      return 1;
  }
  return 0;
}

int read_by_later_group(const KernelPlan *kp, const Group *g, const Value *v) { return read_beside(kp, g, v, 1); }

int read_by_earlier_group(const KernelPlan *kp, const Group *g, const Value *v) { return read_beside(kp, g, v, 0); }

int reduces_fully(const Group *g) {
  if (g->kind != GROUP_REDUCE)
    return 0;
  for (int i = 0; i < g->domain.rank; i++)
    if (!dim_is_one(&g->domain, i) && !((g->reduce->axes >> i) & 1u))
      return 0;
  return 1;
}

/* The full reduce group v comes from (through the elementwise values that
 * a loop recomputes) in *host: the latest such, by its reduction's id;
 * 0 where v reads anything a scalar epilogue cannot.  `seen`, by value
 * id: already walked (a value shared in a DAG is walked once). */
static int epilogue_reads(const KernelPlan *kp, const Value *v, Group **host, char *seen) {
  if (seen[v->id])
    return 1;
  seen[v->id] = 1;
  if (v->op == IR_CONST || v->op == IR_SIZE || (v->op == IR_INPUT && v->shape.rank == 0))
    return 1;
  if (v->op == IR_INPUT || v->op == IR_TAKE || v->op == IR_INDEX)
    return 0;
  if (kp->stored[v->id]) {
    Group *g = reduce_group_of(kp, v);
    if (!g || !reduces_fully(g))
      return 0;
    if (!*host || (*host)->reduce->id < g->reduce->id)
      *host = g;
    return 1;
  }
  for (int i = 0; i < v->nargs; i++)
    if (!epilogue_reads(kp, v->args[i], host, seen))
      return 0;
  return 1;
}

Group *epilogue_host(Arena *a, const KernelPlan *kp, const Group *loop) {
  if (loop->kind != GROUP_LOOP || shape_literal_numel(&loop->domain) != 1)
    return NULL;
  Group *host = NULL;
  char *seen = ARENA_ARRAY(a, char, kp->kernel->values.len);
  for (int i = 0; i < loop->roots.len; i++)
    if (!epilogue_reads(kp, loop->roots.items[i], &host, seen))
      return NULL;
  return host;
}

/* The reduce group a loop group only rounds the result of: every root a
 * float cast of that group's reduction.  NULL when there is none. */
Group *rounded_reduce(const KernelPlan *kp, const Group *loop) {
  Group *r = NULL;
  for (int i = 0; i < loop->roots.len; i++) {
    const Value *v = loop->roots.items[i];
    if (v->op != IR_CAST || !dtype_is_float(v->dtype) || !dtype_is_float(v->args[0]->dtype))
      return NULL;
    if (v->args[0]->dtype == DT_F64 && dtype_size(v->dtype) == 2)
      return NULL; /* f64 to 16 bits rounds once through its own kernel code */
    Group *g = reduce_group_of(kp, v->args[0]);
    if (!g || (r && g != r))
      return NULL;
    r = g;
  }
  return r;
}
