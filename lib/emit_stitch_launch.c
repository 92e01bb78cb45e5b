/* emit_stitch_launch.c — the host code that launches a stitch group's
 * kernels (emit_stitch.h): the group's sizes, the test of its packed
 * pointers, then its variants in order, each launching the instance of the
 * register or stream kernel (stitch_kernel.h) its sizes select.  The
 * launch reads the group's plan (stitch_plan.h: the kernels' parameters,
 * what moves in packs, the bytes the stream kernel keeps) and schedule;
 * it writes no kernel. */
#include "emit_stitch.h"
#include "stitch_kernel.h"

#include <string.h>

/* One launch being written. */
typedef struct SLaunch {
  StitchKernel sk;  /* the shape of the kernel it launches: the register one (whose launches also
                       name the stream kernel's instances), or the stream one */
  int stream_keep;  /* the stream kernel's kept bytes an element of an item (stitch_keep_bytes()) */
  int keep_now;     /* the launch being written: the stream kernel's KEEP instance */
  int lanes_now;    /* the LANES of the instance being launched (-1: lanes_apart_from_packs()) */
  int row_sites;    /* the warp variant's launches written so far: each its t_wb[] cache */
  int ahead_now;    /* the launch being written: the AHEAD instance (Variant.ahead) */
} SLaunch;

static SLaunch *new_launch(Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names, int reg) {
  SLaunch *e = ARENA_NEW(a, SLaunch);
  e->sk = stitch_kernel(a, k, kp, g, names, reg);
  return e;
}

static const char *host_count(SLaunch *e, uint32_t mask) {
  Buf b;
  buf_init(&b, e->sk.a);
  int axes[TECC_MAX_RANK], n = shape_axes(&e->sk.g->domain, mask, axes);
  for (int j = 0; j < n; j++) {
    Dim d = e->sk.g->domain.d[axes[j]];
    buf_printf(&b, "%s%s%s", j ? " * " : "", d.var >= 0 ? "(int64_t)" : "", host_dim(e->sk.a, e->sk.names, d));
  }
  return n ? buf_cstr(&b) : "INT64_C(1)";
}

/* The group's rows (columns, for a column group) and their length. */
static void emit_group_sizes(SLaunch *e, Out *o) {
  emit(o, "const int64_t t_rows = %s;", host_count(e, ~e->sk.st->axes));
  emit(o, "const int64_t t_len = %s;", host_count(e, e->sk.st->axes));
}

/* Output `out` is a root of the group along the row at the element's own
 * index (stored in packs). */
static int is_staged_output(SLaunch *e, int out) {
  const Group *g = e->sk.g;
  int map[TECC_MAX_RANK];
  for (int i = 0; i < g->domain.rank; i++)
    map[i] = i;
  Value *v = e->sk.k->outputs[out].value;
  return vec_contains(&g->roots, v) && !stitch_is_column(g, v) && varies_along(&v->shape, map, g->stitch->axes) &&
         covers_domain(&g->domain, g->stitch->axes, &v->shape, map, 0);
}

/* " && C % VEC == 0" where the rows span several axes and a pack must
 * stay inside one row of the innermost (stitch_digit_packs()). */
static const char *digit_packs(SLaunch *e, int vec) {
  int ax = stitch_digit_packs(&e->sk);
  if (ax < 0)
    return "";
  return arena_printf(e->sk.a, " && %s %% %d == 0", host_count(e, 1u << ax), vec);
}

/* " && tecc::aligned16(x) && ..." for the pointers moved in packs (the
 * plan's: in a kernel of columns in packs, only the held ones), or with
 * `half`, " && tecc::aligned_to(x, 8) && ..." for half packs. */
static const char *packed_pointers(SLaunch *e, int half) {
  Buf b;
  buf_init(&b, e->sk.a);
  if (!e->sk.vec && !e->sk.cvec)
    return "";
  const char *test = half ? " && tecc::aligned_to(%s, 8)" : " && tecc::aligned16(%s)";
  const PtrVec *moved = e->sk.vec ? &e->sk.g->plan->packed : &e->sk.g->plan->held;
  for (int i = 0; i < moved->len; i++)
    buf_printf(&b, test, home_pointer(e->sk.a, e->sk.kp, e->sk.names, moved->items[i]));
  for (int i = 0; i < e->sk.k->noutputs; i++)
    if (is_staged_output(e, i))
      buf_printf(&b, test, e->sk.names->outputs[i]);
  return buf_cstr(&b);
}

/* The instance of `packs` of variant v holds its values in shared
 * memory (schedule.c, shared_rows()). */
static int holds_shared(const Variant *v, int packs) {
  return v->shared_bytes && packs == PACKS_NONE;
}

static const char *instance(SLaunch *e, const Variant *v, int packs, int phase);

/* A register variant's threads for a row of t_len (variant_exact_rows()). */
static const char *row_threads(SLaunch *e, const Variant *v) {
  return arena_printf(e->sk.a, "tecc::row_threads(t_len, %d, 1024)", v->items * v->vec);
}

/* Do the rows a warp variant that loads ahead reads exceed the L2 cache
 * (Variant.cover_bytes)?  Its grid then covers them, a block per row
 * group, else SMs * sm_threads threads loop over them. */
static const char *past_l2(SLaunch *e, const Variant *v) {
  return arena_printf(e->sk.a, "tecc::past_l2(t_rows, t_len * %d)", v->cover_bytes);
}

/* tecc::launch_rows's sm_threads for variant v (0: a block per row group). */
static const char *grid_threads(SLaunch *e, const Variant *v) {
  if (v->cover_bytes)
    return arena_printf(e->sk.a, "%s ? 0 : %d", past_l2(e, v), v->sm_threads);
  return arena_printf(e->sk.a, "%d", v->sm_threads);
}

/* The threads of variant v's block (emit_block()'s t_tx * t_ty). */
static const char *block_threads(SLaunch *e, const Variant *v) {
  switch (v->fit) {
  case FIT_NONE: return arena_printf(e->sk.a, "%d", v->threads_x * v->threads_y);
  case FIT_CLUSTER: return arena_printf(e->sk.a, "%d", v->threads_x);
  case FIT_ROW:
    if (variant_row_warps(v))
      return arena_printf(e->sk.a, "tecc::held_threads(tecc::ceil_div(t_len, %d) * 32, %d)", 32 * v->items * v->vec,
                          v->block);
    if (variant_exact_rows(v))
      return arena_printf(e->sk.a, "tecc::held_threads(%s, %d)", row_threads(e, v), v->block);
    return arena_printf(e->sk.a, "tecc::held_threads(tecc::pow2_at_least(tecc::ceil_div(t_len, %d), 32, 1024), %d)",
                        v->items * v->vec, v->block);
  default: internal_error("stitch: variant %s holds rows in shared memory in a block of fit %d", v->name, v->fit);
  }
}

/* Its launch site's cache of the room for it (tecc::shared_room). */
static const char *shared_cache(SLaunch *e, const Variant *v) {
  int site = 0;
  for (const Variant *w = e->sk.sched->variants; w < v; w++)
    site += w->shared_bytes > 0;
  return arena_printf(e->sk.a, "t_hr[%d]", site);
}

/* Rows that are not whole packs, in a variant that holds them in shared
 * memory: the bytes of a block, as `type` (the condition's int64_t, the
 * launch's size_t). */
static const char *shared_bytes(SLaunch *e, const Variant *v, const char *type) {
  return arena_printf(e->sk.a, "(%s)%d * %s", type, v->shared_bytes, block_threads(e, v));
}

/* The variant's condition `cond` (NULL: none), and for a variant that
 * holds rows that are not whole packs in shared memory, that the device
 * has it (else a later variant takes them: the stream, which always runs). */
static const char *shared_condition(SLaunch *e, const Variant *v, const char *cond) {
  if (!v->shared_bytes)
    return cond;
  const char *fits = arena_printf(e->sk.a, "(t_packs || %s <= tecc::shared_room(%s, (const void *)%s))",
                                  shared_bytes(e, v, "int64_t"), shared_cache(e, v), instance(e, v, PACKS_NONE, 0));
  return cond ? arena_printf(e->sk.a, "%s && %s", cond, fits) : fits;
}

/* `rest`, after `small` where the group's count does not settle it at
 * compile time (GroupSchedule.small: its 32-bit instances then run even
 * where another group's sizes make the kernel's IndexT 64-bit; tests/gen/gen
 * --seed 7700166's k12 launched nothing there). */
static const char *with_small(SLaunch *e, const char *small, const char *rest) {
  return e->sk.sched->small ? rest : arena_printf(e->sk.a, "%s && %s", small, rest);
}

/* The host functions that mirror the launch's conditions take them with
 * `t_small`, which a group whose count settles it leaves unread. */
static void emit_small_unread(SLaunch *e, Out *o) {
  if (e->sk.sched->small)
    emit(o, "(void)t_small; /* the group's count is literal and 32-bit indices take it */");
}

/* The run-time condition of variant `v` (NULL: none); `small`: that
 * 32-bit indices do (with_small()). */
static const char *variant_condition(SLaunch *e, const Variant *v, const char *kernel, const char *small) {
  Arena *a = e->sk.a;
  switch (v->when) {
  case WHEN_ALWAYS: return NULL;
  case WHEN_ROW_AT_MOST: return with_small(e, small, arena_printf(a, "t_len <= %lld", (long long)v->limit));
  case WHEN_ROW_PACKS:
    return with_small(e, small, arena_printf(a, "t_len <= %lld && t_len %% %d == 0", (long long)v->limit, v->vec));
  case WHEN_ROW_NARROWER:
    return with_small(e, small, arena_printf(a, "t_len <= %lld && tecc::ceil_div(t_len, %d) * 32 < "
                                                "tecc::pow2_at_least(tecc::ceil_div(t_len, %d), 32, 1024)",
                                             (long long)v->limit, 32 * v->items * v->vec, v->items * v->vec));
  case WHEN_ROW_FITS:
    return with_small(e, small, arena_printf(a, "t_len <= (int64_t)(1024 / tecc::column_width(t_rows, t_len, %d, %d)) * %d",
                                             v->vec, v->items, v->items));
  case WHEN_COLUMN_GROUPS: return arena_printf(a, "tecc::column_groups_fill(t_rows, %d)", v->vec);
  case WHEN_COLUMN_SPLIT: return "t_chunks > 1";
  case WHEN_CLUSTERS: {
    const char *cond = with_small(e, small, arena_printf(a, "t_len <= %lld && tecc::clusters_ok((const void *)%s)",
                                                         (long long)v->limit, kernel));
    if (v->loops)
      return cond;
    const char *all = arena_printf(a, "t_rows <= tecc::resident_clusters(%s, tecc::cluster_blocks(t_len, %d), %d)",
                                   kernel, v->threads_x * v->items * v->vec, v->threads_x);
    if (v->pair_loops) /* cluster_pair_loops() */
      return arena_printf(a, "%s && (t_len <= %lld || %s)", cond, 2LL * v->threads_x * v->items * v->vec, all);
    return arena_printf(a, "%s && %s", cond, all);
  }
  case WHEN_RUNS_HALF:
    return with_small(e, small, arena_printf(a, "t_len <= %lld && %s %% %d != 0", (long long)v->limit,
                                             host_count(e, stitch_inner_run(e->sk.g)), 2 * v->vec));
  case WHEN_ALIGNED: case WHEN_LEN_AT_MOST: break;
  }
  internal_error("stitch: variant %s has no condition a stitch group can test", v->name);
}

/* The instance a variant launches: kernel<IndexT, [ITEMS,] VEC[, ROWS][,
 * PACKS[, WHOLE]][, CLUSTER][, LANES][, EARLY][, NARROW][, ROOMY][, SOLO][, AHEAD]> or,
 * streamed, <IndexT, VEC[, PACKS][, PHASE]>, with `packs`
 * (PACKS_NONE, PACKS_ALIGNED or PACKS_WHOLE) where it takes PACKS and
 * `phase` where PHASE; EARLY only in the WHOLE instance of a variant that
 * loads early, NARROW in the instances of a narrow variant, ROOMY in
 * those of a roomy one, SOLO in those of a solo one, AHEAD in the one
 * that loads its rows ahead (emit_ahead_launch()). */
static const char *instance(SLaunch *e, const Variant *v, int packs, int phase) {
  const char *index = v->index_bits == 64 ? "int64_t" : v->index_bits == 32 ? "int32_t" : "IndexT";
  const char *pk = stitch_takes_packs(&e->sk) ? (packs != PACKS_NONE ? ", true" : ", false") : "";
  if (stitch_variant_whole_instance(&e->sk, v))
    pk = arena_printf(e->sk.a, "%s%s", pk, packs == PACKS_WHOLE ? ", true" : ", false");
  if (e->sk.shared && v->storage != STORE_STREAM)
    pk = arena_printf(e->sk.a, "%s%s", pk, holds_shared(v, packs) ? ", true" : ", false");
  if (v->storage == STORE_STREAM)
    return arena_printf(e->sk.a, "%s<%s, %d%s%s%s>", stitch_kernel_name(&e->sk, 0), index, v->vec, pk,
                        !e->stream_keep ? "" : e->keep_now ? ", true" : ", false",
                        e->sk.split ? arena_printf(e->sk.a, ", %d", phase) : "");
  const char *cluster = !e->sk.cluster ? "" : v->storage == STORE_CLUSTER ? ", true" : ", false";
  const char *rows = e->sk.rows ? arena_printf(e->sk.a, ", %d", v->rows) : "";
  if (v->rows > 1 && !e->sk.rows)
    internal_error("stitch: variant %s holds %d rows a thread in a kernel of one", v->name, v->rows);
  const char *lanes = e->sk.lanes ? arena_printf(e->sk.a, ", %d", e->lanes_now) : "";
  const char *early = !stitch_early_kernel(&e->sk) ? "" : v->early && packs == PACKS_WHOLE ? ", true" : ", false";
  const char *narrow = !stitch_narrow_kernel(&e->sk) ? "" : variant_narrow(v) ? ", true" : ", false";
  const char *roomy = !e->sk.roomy ? "" : v->roomy ? ", true" : ", false";
  const char *solo = !e->sk.solo ? "" : v->solo ? ", true" : ", false";
  const char *ahead = !e->sk.ahead ? "" : e->ahead_now ? ", true" : ", false";
  const char *name = stitch_kernel_name(&e->sk, 1);
  if (e->sk.quads && packs == PACKS_WHOLE && stitch_whole_instance(&e->sk)) /* emit_stitch.c, whole_apart() */
    name = arena_printf(e->sk.a, "%s_whole", name);
  return arena_printf(e->sk.a, "%s<%s, %d, %d%s%s%s%s%s%s%s%s%s>", name, index, v->items, v->vec, rows, pk, cluster,
                      lanes, early, narrow, roomy, solo, ahead);
}

/* The threads across the columns of a split block: a warp spans 32 packs
 * of a row (256 or 512 contiguous bytes) where the columns have them. */
static const char *split_width(SLaunch *e, int vec) {
  return arena_printf(e->sk.a, "tecc::pow2_at_least(tecc::ceil_div(t_rows, %d), 8, 32)", vec);
}

static const char *chunks_function(SLaunch *e) {
  return arena_printf(e->sk.a, "tecc_%s_g%d_chunks", e->sk.k->name, e->sk.g->id);
}

/* The host function that says how many chunks the column split cuts the
 * rows into (1: an earlier variant runs, or no split helps): the launch
 * and the entry's workspace both ask it, so they agree. */
void emit_stitch_chunks(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names) {
  SLaunch *e = new_launch(a, k, kp, g, names, 0);
  emit(o, "/* %s, group %d: the chunks of rows its column split takes, 1 when an earlier variant runs */",
       e->sk.k->name, e->sk.g->id);
  open_block(o, "inline int %s(int64_t t_rows, int64_t t_len, bool t_small)", chunks_function(e));
  emit_small_unread(e, o);
  for (int i = 0; i < e->sk.sched->nvariants; i++) {
    const Variant *v = &e->sk.sched->variants[i];
    if (v->fit == FIT_COLUMN_SPLIT) {
      if (v->split_bound) /* columns of software math (schedule.c, heavy_column_split()) */
        emit(o, "return tecc::column_chunks(t_rows, t_len, %d, %s, %d, %d);", v->vec, split_width(e, v->vec),
             v->split_sm_blocks, v->split_rows);
      else
        emit(o, "return tecc::column_chunks(t_rows, t_len, %d, %s);", v->vec, split_width(e, v->vec));
      break;
    }
    emit(o, "if (%s) return 1;", variant_condition(e, v, NULL, "t_small"));
  }
  close_block(o, "");
}

/* A one-read stream's instances take their grid from their own
 * occupancy at launch (tecc::one_read_grid), so emit_block() leaves it. */
static int grid_at_launch(const SLaunch *e, const Variant *v) {
  return v->one_read && v->storage == STORE_STREAM && !v->partials && !e->sk.split && !e->stream_keep;
}

/* t_tx x t_ty threads and t_grid blocks, by the variant's fit rule. */
static void emit_block(SLaunch *e, Out *o, const Variant *v) {
  switch (v->fit) {
  case FIT_NONE:
    emit(o, "const int t_tx = %d, t_ty = %d;", v->threads_x, v->threads_y);
    break;
  case FIT_ROW:
    if (variant_row_warps(v))
      emit(o, "const int t_tx = (int)tecc::ceil_div(t_len, %d) * 32; /* the warps the row needs */",
           32 * v->items * v->vec);
    else if (variant_exact_rows(v))
      emit(o, "const int t_tx = %s;", row_threads(e, v));
    else
      emit(o, "const int t_tx = tecc::pow2_at_least(tecc::ceil_div(t_len, %d), 32, %s);", v->items * v->vec,
           v->partials ? arena_printf(e->sk.a, "%d", variant_part_threads(v))
           : v->one_read ? "tecc::one_read_threads(t_rows)" : "1024");
    if (v->block == 1)
      emit(o, "const int t_ty = 1; /* a row a block */");
    else
      emit(o, "const int t_ty = t_tx >= %d ? 1 : %d / t_tx;", v->block, v->block);
    break;
  case FIT_SHORT_ROWS: /* the grid and the block's rows: each instance's (tecc::launch_rows), but with partials */
    emit(o, "const int t_tx = tecc::pow2_at_least(tecc::ceil_div(t_len, %d), %d, 32), t_ty = %d / t_tx;",
         v->items * v->vec, MIN_ROW_LANES, v->block);
    if (!v->partials)
      return;
    break;
  case FIT_COLUMNS:
    emit(o, "const int t_tx = tecc::column_width(t_rows, t_len, %d, %d);", v->vec,
         v->storage == STORE_REGISTERS ? v->items : 0);
    emit(o, "const int t_ty = tecc::pow2_at_least(tecc::ceil_div(t_len, %d), 32, 1024 / t_tx);", v->items);
    break;
  case FIT_CLUSTER:
    emit(o, "const unsigned t_cluster = tecc::cluster_blocks(t_len, %d);", v->threads_x * v->items * v->vec);
    if (!v->partials)
      return;
    emit(o, "const unsigned t_grid = tecc::cluster_grid(t_rows, t_cluster, tecc::resident_clusters(%s, t_cluster, %d));",
         instance(e, v, PACKS_ALIGNED, 0), v->threads_x);
    emit(o, "const int64_t t_parts = t_grid / t_cluster; /* a partial row a cluster */");
    return;
  case FIT_COLUMN_SPLIT:
    emit(o, "const int t_tx = %s, t_ty = %d / t_tx;", split_width(e, v->vec), v->block);
    emit(o, "const dim3 t_grid((unsigned)tecc::ceil_div(t_rows, (int64_t)t_tx * %d), (unsigned)t_chunks);", v->vec);
    return;
  }
  const char *rows = e->sk.row ? (v->rows > 1 ? arena_printf(e->sk.a, "t_ty * %d", v->rows) : "t_ty")
                   : v->vec > 1 ? arena_printf(e->sk.a, "t_tx * %d", v->vec) : "t_tx";
  if (grid_at_launch(e, v))
    return;
  if (v->sm_threads == 0)
    emit(o, "const unsigned t_grid = tecc::cover_grid(t_rows, %s);", rows);
  else if (v->cover_bytes)
    emit(o, "const unsigned t_grid = %s ? tecc::cover_grid(t_rows, %s) : tecc::grid_size(t_rows, %s, %d / (t_tx * t_ty));",
         past_l2(e, v), rows, rows, v->sm_threads);
  else
    emit(o, "const unsigned t_grid = tecc::grid_size(t_rows, %s, %d / (t_tx * t_ty));", rows, v->sm_threads);
  if (v->partials)
    emit(o, "const int64_t t_parts = t_grid; /* a partial row a block */");
}

/* The launch of one instance of the variant; a stream kernel of a group
 * with a column split also takes the partials and the chunk (none in
 * PHASE 0). */
static void emit_instance_launch(SLaunch *e, Out *o, const Variant *v, const char *args, int packs, int phase) {
  if (e->sk.split && v->storage == STORE_STREAM)
    args = phase ? arena_printf(e->sk.a, "%s, (%s *)t_part%d, (int64_t)t_chunk", args, stitch_split_acc_type(&e->sk),
                                e->sk.g->id)
                 : arena_printf(e->sk.a, "%s, (%s *)nullptr, (int64_t)0", args, stitch_split_acc_type(&e->sk));
  const char *smem = holds_shared(v, packs) ? shared_bytes(e, v, "size_t") : "0";
  if (v->fit == FIT_CLUSTER && v->partials) {
    emit(o, "tecc::launch_cluster(%s, t_grid, dim3(%d), t_cluster, 0, stream, %s);", instance(e, v, packs, phase),
         v->threads_x, args);
  } else if (v->fit == FIT_CLUSTER) {
    const char *kernel = instance(e, v, packs, phase);
    const char *resident = holds_shared(v, packs) ? arena_printf(e->sk.a, "%d, %s", v->threads_x, smem)
                                                  : arena_printf(e->sk.a, "%d", v->threads_x);
    emit(o, "tecc::launch_cluster(%s, tecc::cluster_grid(t_rows, t_cluster, tecc::resident_clusters(%s, t_cluster, %s)), "
         "dim3(%d), t_cluster, %s, stream, %s);", kernel, kernel, resident, v->threads_x, smem, args);
  }
  else if (v->storage == STORE_STREAM && e->stream_keep) { /* the KEEP instance alone, keeping none where t_keep is 0 */
    e->keep_now = 1;
    const char *kernel = instance(e, v, packs, phase);
    e->keep_now = 0;
    const int bytes = v->vec * e->stream_keep; /* an item's, a thread */
    emit(o, "static tecc::DeviceCache t_kc; /* its KEEP instance's shared memory budget, per device */");
    emit(o, "const int t_keep = tecc::keep_items(t_kc, (const void *)%s, t_rows, t_len, t_tx, t_ty, %d, %d);", kernel,
         v->vec, e->stream_keep);
    emit(o, "%s<<<t_grid, dim3(t_tx, t_ty), (size_t)t_keep * %d * t_tx * t_ty, stream>>>(%s, t_keep);", kernel, bytes,
         args);
  } else if (v->fit == FIT_SHORT_ROWS && !v->partials)
    emit(o, "tecc::launch_rows(t_wb[%d], %s, t_rows, t_tx, t_ty, %d, %s, stream, %s);", e->row_sites++,
         instance(e, v, packs, phase), v->rows > 1 ? v->rows : 1, grid_threads(e, v), args);
  else if (grid_at_launch(e, v)) {
    const char *kernel = instance(e, v, packs, phase);
    emit(o, "{ static tecc::DeviceCache t_oc; /* its blocks an SM, per device */");
    emit(o, "  %s<<<tecc::one_read_grid(t_oc, %s, t_rows, t_tx, t_ty), dim3(t_tx, t_ty), %s, stream>>>(%s); }", kernel,
         kernel, smem, args);
  } else
    emit(o, "%s<<<t_grid, dim3(t_tx, t_ty), %s, stream>>>(%s);", instance(e, v, packs, phase), smem, args);
}

/* A variant that loads its rows ahead (Variant.ahead): its AHEAD instance
 * where the rows (or columns) move in aligned packs (`cond` for those
 * whose kernel takes no PACKS), the block has 1024 threads and the device
 * the shared memory, a block an SM looping over the rows; else the
 * instance of `packs`. */
static void emit_ahead_launch(SLaunch *e, Out *o, const Variant *v, const char *args, int packs, const char *cond) {
  e->ahead_now = 1;
  const char *kernel = instance(e, v, packs, 0);
  e->ahead_now = 0;
  const int bytes = v->ahead * v->items; /* a thread's */
  const char *rows = e->sk.cvec ? arena_printf(e->sk.a, "t_tx * %d", v->vec) : "t_ty";
  emit(o, "static tecc::DeviceCache t_ah; /* the room in shared memory of its AHEAD instance, per device */");
  open_block(o, "if (%st_tx * t_ty == %d && (int64_t)%d * %d <= tecc::shared_room(t_ah, (const void *)%s))", cond,
             AHEAD_THREADS, bytes, AHEAD_THREADS, kernel);
  emit(o, "%s<<<tecc::grid_size(t_rows, %s, 1), dim3(t_tx, t_ty), (size_t)%d * %d, stream>>>(%s);", kernel, rows, bytes,
       AHEAD_THREADS, args);
  else_block(o);
  emit_instance_launch(e, o, v, args, packs, 0);
  close_block(o, "");
}

/* The instance of `packs` as the branch of the line before it. */
static void emit_branch_launch(SLaunch *e, Out *o, const Variant *v, const char *args, int packs) {
  o->indent++;
  emit_instance_launch(e, o, v, args, packs, 0);
  o->indent--;
}

/* Rows moved in packs: whole row groups of whole rows the WHOLE
 * instance, with no guards at all, others the PACKS one, with no
 * per-element row-end checks; with `none`, the rows that are not packs
 * then the one that loads element by element (where not, t_packs holds:
 * emit_lanes_launch()). */
static void emit_packed_launch(SLaunch *e, Out *o, const Variant *v, const char *args, int none) {
  if (stitch_launches_whole(&e->sk, v)) {
    emit(o, "if (t_whole)");
    emit_branch_launch(e, o, v, args, PACKS_WHOLE);
    emit(o, none ? "else if (t_packs)" : "else");
  } else if (none) {
    emit(o, "if (t_packs)");
  } else {
    emit_instance_launch(e, o, v, args, PACKS_ALIGNED, 0);
    return;
  }
  emit_branch_launch(e, o, v, args, PACKS_ALIGNED);
  if (!none)
    return;
  emit(o, "else");
  emit_branch_launch(e, o, v, args, PACKS_NONE);
}

/* Rows moved in packs take the PACKS instance, with no per-element
 * row-end checks, whole row groups of whole rows the WHOLE one, with no
 * guards at all; others the one that loads element by element. */
static void emit_packs_launch(SLaunch *e, Out *o, const Variant *v, const char *args) {
  if (!stitch_takes_packs(&e->sk) && v->ahead && e->sk.ahead) {
    emit_ahead_launch(e, o, v, args, PACKS_NONE, "t_packs && ");
    return;
  }
  if (!stitch_takes_packs(&e->sk)) {
    emit_instance_launch(e, o, v, args, PACKS_NONE, 0);
    return;
  }
  if (v->ahead && e->sk.ahead) {
    if (stitch_launches_whole(&e->sk, v))
      internal_error("stitch: variant %s loads its rows ahead and has a WHOLE instance", v->name);
    open_block(o, "if (t_packs)");
    emit_ahead_launch(e, o, v, args, PACKS_ALIGNED, "");
    else_block(o);
    emit_instance_launch(e, o, v, args, PACKS_NONE, 0);
    close_block(o, "");
    return;
  }
  if (v->storage == STORE_STREAM && e->stream_keep) { /* launches of several lines */
    if (stitch_launches_whole(&e->sk, v)) {
      open_block(o, "if (t_whole)");
      emit_instance_launch(e, o, v, args, PACKS_WHOLE, 0);
      else_if_block(o, "t_packs");
    } else {
      open_block(o, "if (t_packs)");
    }
    emit_instance_launch(e, o, v, args, PACKS_ALIGNED, 0);
    else_block(o);
    emit_instance_launch(e, o, v, args, PACKS_NONE, 0);
    close_block(o, "");
    return;
  }
  emit_packed_launch(e, o, v, args, 1);
}

/* The warp variant's rows that do not move in packs (a length not a
 * multiple of VEC, a view not 16-byte aligned) take one instance of
 * LANES -1, which reads its lanes from blockDim.x (at most a warp's),
 * whatever t_tx: the same folds in the same order, so the same bits
 * (tecc::lanes_allreduce), where an instance for
 * each LANES made four of the largest instances a group has (their
 * element-by-element loads) for the rows that least need the speed
 * (build time, doc/performance.md).  Where the PACKS instances load
 * their rows ahead, each LANES keeps its own; so does a variant of
 * several rows a thread (the norms'): its LANES -1 instance took 78
 * registers where each LANES's took 52, and on an H100 layernorm bf16
 * 32768 x 250 ran 24.3 us against 18.5, rmsnorm bf16 16384 x 500 20.7
 * against 15.0 (softmax's, a row a thread, 0.96-1.04x; bench/NOTES.md). */
static int lanes_apart_from_packs(const SLaunch *e, const Variant *v) {
  return stitch_takes_packs(&e->sk) && !(v->ahead && e->sk.ahead) && v->rows == 1;
}

/* The instance of the lanes of a row (LANES, t_tx) in the warp variant. */
static void emit_lanes_launch(SLaunch *e, Out *o, const Variant *v, const char *args) {
  if (!e->sk.lanes || v->fit != FIT_SHORT_ROWS) {
    emit_packs_launch(e, o, v, args);
    return;
  }
  const int apart = lanes_apart_from_packs(e, v);
  if (apart)
    open_block(o, "if (t_packs)");
  emit(o, "switch (t_tx) { /* the lanes of a row: LANES */");
  for (int l = MIN_ROW_LANES; l <= 32; l *= 2) {
    emit(o, l < 32 ? "case %d:" : "default:", l);
    o->indent++;
    e->lanes_now = l;
    if (apart)
      emit_packed_launch(e, o, v, args, 0);
    else
      emit_packs_launch(e, o, v, args);
    emit(o, "break;");
    o->indent--;
  }
  emit(o, "}");
  e->lanes_now = 0;
  if (!apart)
    return;
  else_block(o);
  e->lanes_now = -1;
  emit_instance_launch(e, o, v, args, PACKS_NONE, 0);
  e->lanes_now = 0;
  close_block(o, "");
}

/* After a variant that leaves column partials (t_grid blocks' rows of
 * t_part<id>), the kernel that sums them in block order. */
static void emit_column_stage(SLaunch *e, Out *o, const char *parts) {
  const PtrVec *cols = &e->sk.st->columns;
  Buf homes;
  buf_init(&homes, e->sk.a);
  for (int i = 0; i < cols->len; i++) {
    const Value *c = cols->items[i];
    for (int h = 0; h < column_homes(e->sk.k, e->sk.kp, c); h++)
      buf_printf(&homes, ", (%s *)%s", cu_storage_ctype(c->dtype),
                 column_home(e->sk.a, e->sk.k, e->sk.kp, e->sk.names, c, h));
  }
  emit(o, "if (t_len > 0)");
  emit(o, "  %s<IndexT><<<dim3((unsigned)tecc::ceil_div(t_len, 32)), dim3(32, 32), 0, stream>>>((const %s *)t_part%d, "
          "(int)%s, (IndexT)t_len, (IndexT)t_rows%s);",
       stitch_columns_name(&e->sk), stitch_column_acc_type(&e->sk), e->sk.g->id, parts, buf_cstr(&homes));
}

/* One variant's block, grid and launch: in the warp variant the
 * instance of its lanes a row (LANES, t_tx), each launched by
 * tecc::launch_rows, which picks its block (one warp or t_ty rows) and
 * grid once a device. */
static void emit_variant_launch(SLaunch *e, Out *o, const Variant *v, const char *args) {
  emit(o, "/* %s: %s, VEC %d, ITEMS %d%s */", v->name, storage_name(v->storage), v->vec, v->items,
       v->rows > 1 ? arena_printf(e->sk.a, ", ROWS %d", v->rows) : "");
  if (v->when == WHEN_RUNS_HALF) /* its own packs, of 8 bytes (schedule.c, half_runs()) */
    emit(o, "const bool t_packs = t_len %% %d == 0 && %s %% %d == 0%s;", v->vec,
         host_count(e, stitch_inner_run(e->sk.g)), v->vec, packed_pointers(e, 1));
  emit_block(e, o, v);
  if (stitch_launches_whole(&e->sk, v) && v->storage == STORE_STREAM)
    emit(o, "const bool t_whole = t_packs && t_len %% ((int64_t)t_tx * %d) == 0; /* rows of whole chunks */",
         stream_chunk(v));
  else if (stitch_launches_whole(&e->sk, v))
    emit(o, "const bool t_whole = t_packs && t_len == (int64_t)t_tx * %d && t_rows %% t_ty == 0; /* whole row groups "
            "of whole rows */", v->items * v->vec);
  if (v->fit == FIT_COLUMN_SPLIT) { /* the chunks' partials, then their fold and the writes */
    emit(o, "const int64_t t_chunk = tecc::ceil_div(t_len, (int64_t)t_chunks);");
    emit_instance_launch(e, o, v, args, PACKS_NONE, 1);
    emit_instance_launch(e, o, v, args, PACKS_NONE, 2);
    return;
  }
  Out *launch = v->fit == FIT_SHORT_ROWS && !v->partials ? new_out(e->sk.a) : o;
  e->row_sites = 0;
  emit_lanes_launch(e, launch, v, args);
  if (v->partials)
    emit_column_stage(e, o, "t_parts");
  if (launch == o)
    return;
  emit(o, "static tecc::DeviceCache t_wb[%d]; /* each launch's block: one warp or t_ty rows (tecc::launch_rows) */",
       e->row_sites);
  emit_fragment(o, launch);
}

/* The variants in order: the first whose condition holds is launched. */
static void emit_variants(SLaunch *e, Out *o, const char *args) {
  const GroupSchedule *s = e->sk.sched;
  for (int i = 0; i < s->nvariants; i++) {
    const Variant *v = &s->variants[i];
    const char *cond = shared_condition(e, v, variant_condition(e, v, instance(e, v, PACKS_ALIGNED, 0),
                                                                "sizeof(IndexT) == 4"));
    if (i == 0 && cond)
      open_block(o, "if (%s)", cond);
    else if (i == 0)
      open_scope(o);
    else if (cond)
      else_if_block(o, "%s", cond);
    else
      else_block(o);
    emit_variant_launch(e, o, v, args);
  }
  close_block(o, "");
}

void emit_stitch_launch(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names) {
  SLaunch *e = new_launch(a, k, kp, g, names, 1);
  if (stitch_has_storage(g->schedule, STORE_STREAM))
    e->stream_keep = stitch_keep_bytes(&e->sk);
  const char *args = launch_args(a, kp, names, &g->plan->params);
  const GroupSchedule *s = g->schedule;
  emit(o, "/* group %d: %s, %d reduction level(s), %d value(s) held per element */", g->id, class_name(s->cls),
       g->stitch->nlevels, s->held);
  open_scope(o);
  emit_group_sizes(e, o);
  open_block(o, "if (t_rows > 0)");
  /* The same element-to-thread split whatever the alignment (so the same
   * sums, bit for bit; tests/conform compares a misaligned call with an
   * aligned one): rows that are not whole aligned packs keep VEC and
   * ITEMS and load element by element, or 16-bit ones through the aligned
   * words a pack spans (t_packs false).  Many of those instances spill
   * (tests/nvcc/spills.known).  Tried in issue 45 on an H200
   * (bench/NOTES.md): half the packs a chunk in their stream instances
   * took the spills out and made cross-entropy bf16 20-27% faster at
   * 1024 x 50257, but folded the online sums in other chunks (other bits
   * than the aligned call) and cost f32 rows read once 4-16%; binding the
   * 16-bit register instances to 512 threads, one block an SM, gave them
   * 128 registers and a quarter of the occupancy (softmax, rmsnorm and
   * layernorm bf16 at 4096 x 11007 46-50% slower). */
  if ((e->sk.vec || e->sk.cvec) && stitch_most_vec(s) == 1) /* columns split at VEC 1 (schedule.c, stitch_column()) */
    emit(o, "const bool t_packs = false; /* a column a thread in every variant */");
  else if (e->sk.vec || e->sk.cvec)
    emit(o, "const bool t_packs = %s %% %d == 0%s%s;", e->sk.cvec ? "t_rows" : "t_len", stitch_most_vec(s),
         digit_packs(e, stitch_most_vec(s)), packed_pointers(e, 0));
  if ((e->sk.vec || e->sk.cvec) && !stitch_takes_packs(&e->sk))
    args = arena_printf(a, "%s, t_packs", args);
  int shared_sites = 0;
  for (int i = 0; i < s->nvariants; i++)
    shared_sites += s->variants[i].shared_bytes > 0;
  if (shared_sites)
    emit(o, "static tecc::DeviceCache t_hr[%d]; /* the room in shared memory of each instance that holds its rows "
            "there, per device */", shared_sites);
  if (g->stitch->columns.len)
    args = arena_printf(a, "%s, (%s *)t_part%d", args, stitch_column_acc_type(&e->sk), g->id);
  if (s->batch) { /* schedule.c, batch_axes(); the kernels' argument t_batch */
    emit(o, "const bool t_batched = %s > 1 && %s * t_len * %lld > %lld; /* the rows visited batch-fastest */",
         host_count(e, s->batch), host_count(e, ~g->stitch->axes & ~s->batch), (long long)s->batch_bytes,
         (long long)s->batch_limit);
    args = arena_printf(a, "%s, (IndexT)(t_batched ? %s : 1)", args, host_count(e, s->batch));
  }
  if (e->sk.split)
    emit(o, "const int t_chunks = %s(t_rows, t_len, sizeof(IndexT) == 4);", chunks_function(e));
  emit_variants(e, o, args);
  emit_launch_check(o);
  if (g->stitch->columns.len) { /* no rows: each column sum is over none (0, a mean NaN) */
    else_block(o);
    emit_column_stage(e, o, "0");
    emit_launch_check(o);
  }
  close_block(o, "");
  close_block(o, "");
}

int emit_stitch_partials(const Group *g) {
  return g->kind == GROUP_STITCH && (stitch_has_fit(g->schedule, FIT_COLUMN_SPLIT) || g->stitch->columns.len);
}

static const char *parts_function(SLaunch *e) {
  return arena_printf(e->sk.a, "tecc_%s_g%d_parts", e->sk.k->name, e->sk.g->id);
}

/* The host function that says how many blocks, and so partial rows, the
 * launch of a group with column sums takes: the entry's workspace asks
 * it, with the launch's own conditions and grid. */
void emit_stitch_parts(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names) {
  SLaunch *e = new_launch(a, k, kp, g, names, 1);
  emit(o, "/* %s, group %d: the blocks its launch takes, each a row of column partials */", k->name, g->id);
  open_block(o, "inline int64_t %s(int64_t t_rows, int64_t t_len, bool t_small)", parts_function(e));
  const char *cond = NULL;
  emit_small_unread(e, o);
  for (int i = 0; i < e->sk.sched->nvariants; i++) {
    const Variant *v = &e->sk.sched->variants[i];
    cond = variant_condition(e, v, instance(e, v, PACKS_ALIGNED, 0), "t_small");
    if (cond)
      open_block(o, "if (%s)", cond);
    else
      open_scope(o);
    emit_block(e, o, v);
    emit(o, "return t_parts;");
    close_block(o, "");
  }
  if (cond) /* decided: the variants kept hold for the group's literal length (schedule.c, decide()) */
    emit(o, "return 0; /* no variant takes these sizes: the launch takes no blocks */");
  close_block(o, "");
}

void emit_stitch_partial_space(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names,
                               const char *small) {
  SLaunch *e = new_launch(a, k, kp, g, names, 0);
  emit(o, "int64_t t_part_off%d = -1;", g->id);
  open_scope(o);
  emit_group_sizes(e, o);
  if (g->stitch->columns.len) { /* a row of partials a block for each column sum */
    open_block(o, "if (t_rows > 0)");
    emit(o, "t_part_off%d = t_ws_bytes;", g->id);
    emit(o, "t_ws_bytes += ((int64_t)%d * %s(t_rows, t_len, %s) * t_len * (int64_t)sizeof(%s) + 255) / 256 * 256;",
         g->stitch->columns.len, parts_function(e), small, stitch_column_acc_type(&e->sk));
    close_block(o, "");
    close_block(o, "");
    return;
  }
  emit(o, "const int t_chunks = t_rows > 0 ? %s(t_rows, t_len, %s) : 1;", chunks_function(e), small);
  open_block(o, "if (t_chunks > 1)");
  emit(o, "t_part_off%d = t_ws_bytes;", g->id);
  emit(o, "t_ws_bytes += ((int64_t)t_chunks * %d * t_rows * (int64_t)sizeof(%s) + 255) / 256 * 256;",
       g->stitch->reduces.len, stitch_split_acc_type(&e->sk));
  close_block(o, "");
  close_block(o, "");
}

void emit_stitch_column_uses(Arena *a, const Kernel *k, const KernelPlan *kp, const Group *g, const EntryNames *names,
                             NameSet *uses) {
  for (int i = 0; i < g->stitch->columns.len; i++) {
    const Value *c = g->stitch->columns.items[i];
    for (int h = 0; h < column_homes(k, kp, c); h++)
      nameset_add(uses, column_home(a, k, kp, names, c, h));
  }
}
