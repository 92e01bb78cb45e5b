/* emit_stitch.c — the CUDA kernels of stitch groups (stitch.h): the body
 * of the register and stream kernels their plan (stitch_plan.h) and shape
 * (stitch_kernel.h) describe; emit_stitch_launch.c writes their launches.
 *
 * A stitch group walks its domain row by row.  A row is every element
 * with one index `t_o` over the kept axes; `t_r` runs over the reduced
 * axes.  Per row: one pass per reduction level (each thread folds its
 * elements, then a block all-reduce gives every thread the row scalar),
 * then one pass that writes the elementwise outputs, then the row-shaped
 * outputs.  Values that do not vary along the row (reductions, 1/sum,
 * rsqrt(var + eps), loads of row-shaped tensors) are computed once per
 * row; values of the full domain are recomputed in each pass from the
 * inputs, which the "reg" kernel holds in registers (one read of the
 * input) and the "stream" kernel re-reads (rows of any length).
 *
 * At most two kernels per group, instantiated for the variants of its
 * schedule (schedule.h), which the host tries in order:
 *   NAME_reg<IndexT, ITEMS, VEC[, CLUSTER]>: each thread keeps ITEMS
 *     packs of VEC elements of each full-domain input in a register
 *     array; on sm_90 a row may span the blocks of a thread-block
 *     cluster (the CLUSTER instance, when the schedule has that
 *     variant), whose row results meet in distributed shared memory;
 *     the other instances do no cluster arithmetic (rowstats bf16 on an
 *     H100: +0.5 to +2.8 points of copy, bench/NOTES.md);
 *   NAME_stream<IndexT, VEC>: each pass re-reads the row (from L2 when
 *     the rows in flight fit).
 * Schedule row (reduced axes innermost): lanes along threadIdx.x, rows
 * along threadIdx.y; schedule column: lanes along threadIdx.y, rows (the
 * contiguous kept axis) along threadIdx.x.  Column packs ("cvec", when
 * stitch_column_packs()): a thread takes VEC neighbouring columns t_o0 +
 * t_j, so an item (one reduced index t_r) is a 16-byte pack of a row; its
 * row values are arrays over those columns (`name[t_j]`), computed in
 * loops over t_j, and its all-reduce folds VEC columns at once
 * (tecc::column_allreduce_vec).
 *
 * It shares types, expressions and parameters with emit_cu.c through
 * emit_expr.c and emit_common.c (emit.h), and calls nothing of emit_cu.c.
 * SEmit is the state of the body being written (names, memos, the
 * fragments of the pass); what the launch must agree on is the kernel's
 * shape (StitchKernel) and its plan. */
#include "emit_stitch.h"
#include "stitch_kernel.h"

#include <string.h>

typedef struct Cached {
  Value *v;
  const char *name;  /* the register array */
  const char *raw;   /* the element as stored (element scope) */
  const char *ptr;   /* the pointer it is loaded from */
  uint32_t passes;   /* stream kernel: the passes that read it */
  int pairs;         /* 16-bit, held two to a 32-bit word */
  int quads;         /* 8-bit, held four to a 32-bit word (held_in_quads()) */
  int nan_free;      /* an 8-bit float no use shows a NaN's sign of (ir_nan_sign_unseen) */
  const char *row;   /* per item: a broadcast operand's row offset (NULL: the domain's own rows) */
  int kept;          /* stream kernel: its items up to t_keep stay in shared memory for the later passes */
  int kept_at;       /* ... at word VEC * kept_at / 16 of an item's t_kw words */
  int skip;          /* not loaded by the loads being written (kept_loads()) */
} Cached;

/* A pass of the stream kernel in pieces (place_pass()): row scope before
 * its chunk loop, one chunk of it, row scope after; or `whole`, a pass
 * that loads ahead, in one piece. */
typedef struct PassParts {
  Out *before;       /* row scope: the pass's row values, its accumulators */
  Out *loads;        /* a chunk: its register arrays and loads */
  Out *keeps;        /* ... the items it keeps in shared memory */
  Out *chunk;        /* ... its element loops */
  Out *after;        /* row scope: the all-reduces, the row scalars */
  Out *whole;
  const char *guard; /* the condition the chunks run under */
  int row_values;    /* `before` computes values of the row (loads of t_o) */
  int pass, item_guards; /* the emitter's state for the pass (its chunk loop's direction, its loads in write_pipe()) */
} PassParts;

typedef struct SEmit {
  StitchKernel sk;    /* the kernel's shape (stitch_kernel.h) */
  int into_next;      /* the loads being written fill t_n<id>, not t_c<id> */
  int loads_last;     /* ... marked to stay in L2 (tecc::load_last: the pipe's next row) */
  int in_fold;        /* the element loops being written take a fold group's items (two_loop_pass()) */
  Out *prologue;      /* prefetch: before the row loop */
  int pass;           /* the pass being written (stream: which loads) */
  int item_guards;    /* ... keeps its item guards in the WHOLE instance (StitchKernel.first_guards,
                         last_guards) */
  int last_pass;      /* stream kernel: the last pass that reads the row */
  int stage_part;     /* stage_one(): 0 both stores; 1 the PACKS one only (an early output), 2 the other only */
  int keeps;          /* the stream kernel: keeps values in shared memory (stitch_kept_bytes()) */
  int keep_bytes;     /* ... their bytes an element of an item (an item: VEC * keep_bytes bytes a thread) */
  PtrVec params;      /* KParam* (index: the value id for values) */
  NameSet taken;      /* names in use */
  PtrVec memo;        /* Memo*: element scope, one pass */
  PtrVec rowmemo;     /* Memo*: row scope */
  PtrVec narrowed;    /* const char*, in pairs: a row value and its IndexT (position_compare()) */
  PtrVec pack_values; /* const char*, this pass: the row values its elements compare their positions
                         with for equality (pack_tests_position(); tecc::by_pack) */
  PtrVec cached;      /* Cached* */
  /* Fragments of the pass being written (emit.h: emit_fragment()): */
  Out *vdecl, *vafter; /* vec: staging arrays of a pass, their pack stores */
  Out *ipre, *ipost;   /* vec: each item's statements a pack at a time, before and after its
                          elements (each row's; the pass's first element loop only) */
  Out *pre;            /* row scope, before the pass */
  Out *body;           /* element scope */
  Out *row_loads;      /* row scope, at the row's top: the loads of row values that a pass after
                          the first reads (row_value_at()); NULL where they stay in `pre` */
  PtrVec row_loaded;   /* const char*: the names (rowmemo's) of the row values declared there */
  int first_pass;      /* the row's first pass (e->pass) */
  const char *lin;    /* linear domain index of an element, or NULL */
  char used_kept[TECC_MAX_RANK];
  char used_red[TECC_MAX_RANK];  /* this pass */
  int used_elem;      /* this pass's element body names t_e (a held or kept value's element) */
  int used_r;         /* ... names t_r (an element of the domain's own rows, e->lin) */
  int past_end_ok;    /* ... may compute the elements past a row's end (output_pass()) */
  int uses_smem;      /* the kernel's all-reduces use t_smem */
  int uses_slot;      /* ... and the cluster's, t_slot and t_par */
  char used_red_any[TECC_MAX_RANK];
  const char **red_name; /* by value id: the row scalar of a reduction */
  /* reg kernel: full-domain values several passes would compute are kept
   * in register arrays t_m<id> (which ones: the schedule, footprint.c) */
  const char *reuse;     /* by value id: keep it, or NULL */
  char *kept;            /* by value id: stored in t_m<id> already */
  Out *keep_decls;
  int shared_at;         /* SHARED: the bytes an element of the held arrays declared so far take
                            (the next one's region of t_held starts there) */
  /* names: the kernel's own (parameters, row values) stay taken; element
   * values are named anew in each pass (its own C++ scope) */
  PtrVec kernel_names;   /* const char*: re-taken at each pass */
  int names_mark;        /* the entry names */
  /* the pipe (row_body()): the passes in pieces, and the first pass's
   * accumulators set back to their identities for the next row */
  PassParts *parts;      /* NULL: each pass written in place */
  int nparts;
  Out *resets;
  const Out *reset_head; /* the first pass's head, whose mutable row values `resets` sets back */
  int head_consts;       /* ... const row values declared there (the pipe takes none) */
} SEmit;

/* ---- names and parameters ------------------------------------------------ */

static const char *base_name(SEmit *e, const Value *v) {
  return value_temp_name(e->sk.a, e->sk.k, v);
}

/* A name for the whole kernel (a parameter, a row value). */
static const char *kernel_name_for(SEmit *e, const char *want) {
  const char *name = fresh_name(e->sk.a, &e->taken, want);
  vec_push(e->sk.a, &e->kernel_names, (void *)name);
  return name;
}

/* A thread of a cvec kernel takes VEC columns t_o = t_o0 + t_j, one of a
 * rows kernel ROWS rows t_o = t_o0 + t_i * blockDim.y; its row values are
 * arrays over them, indexed by `thread_index()` (NULL: one row a thread). */
static const char *thread_index(const SEmit *e) {
  return e->sk.cvec ? "t_j" : e->sk.rows ? "t_i" : NULL;
}

/* The condition a pass reads its rows under: in a split kernel PHASE 2
 * takes the reductions' results from the partials, not from a read. */
static const char *live_guard(const SEmit *e) {
  return stitch_split_kernel(&e->sk) && e->pass == 1 ? "if (t_live && PHASE != 2)" : "if (t_live)";
}

/* The end of the thread's rows: of the chunk in a split kernel. */
static const char *row_end(const SEmit *e) {
  return stitch_split_kernel(&e->sk) ? "t_hi" : "t_red";
}

/* Is the thread's row t_o inside the domain?  Always in the WHOLE
 * instance (t_whole: whole row groups of whole rows), but for the loads of
 * the next row group (the last group's next is past the end). */
static int row_in_whole(const SEmit *e) {
  return e->sk.whole && e->sk.reg && !e->into_next;
}

static const char *row_in(const SEmit *e) {
  return row_in_whole(e) ? "t_whole || t_o < t_outer" : "t_o < t_outer";
}

/* Is the item at t_r0 inside the row (the chunk of a split kernel)?
 * Always in the WHOLE instance, which says so but in a pass that keeps
 * its guards. */
static int items_whole(const SEmit *e) {
  return e->sk.whole && !e->item_guards;
}

static const char *item_in(const SEmit *e) {
  return items_whole(e) ? "t_whole || t_r0 < t_red" : arena_printf(e->sk.a, "t_r0 < %s", row_end(e));
}

/* The same three as operands of && or ?: (an || in parentheses). */
static const char *row_in_operand(const SEmit *e) {
  return row_in_whole(e) ? "(t_whole || t_o < t_outer)" : row_in(e);
}

/* ... per row t_i in a rows kernel, else the thread's one row. */
static const char *row_live_operand(const SEmit *e) {
  return e->sk.rows ? row_in_operand(e) : "t_live";
}

static const char *item_in_operand(const SEmit *e) {
  return items_whole(e) ? "(t_whole || t_r0 < t_red)" : item_in(e);
}

/* Rows of several runs (StitchPlan.row_runs), runs of whole packs: the
 * pack at `r` of row t_o is at (r / RUN) * (t_outer * RUN) + t_o * RUN +
 * r % RUN, RUN the inner run's elements, and its elements follow it. */
static const char *runs_offset(SEmit *e, const char *r);

static int row_runs(const SEmit *e) {
  return e->sk.vec && e->sk.g->plan->row_runs;
}

/* The offset of the thread's pack t_r0 (cvec: of its VEC columns at row t_r0). */
static const char *pack_offset(SEmit *e) {
  if (row_runs(e))
    return runs_offset(e, "t_r0");
  return e->sk.cvec ? "t_r0 * t_outer + t_o0" : "t_o * t_red + t_r0";
}

/* Opens the loop over the thread's rows (or columns) t_o: `only_live`,
 * the body runs for those inside the domain. */
static void open_thread_rows(const SEmit *e, Out *o, int only_live) {
  emit(o, "#pragma unroll");
  if (e->sk.cvec) {
    open_block(o, "for (int t_j = 0; t_j < VEC; t_j++)");
    emit(o, "const IndexT t_o = t_o0 + t_j;");
  } else {
    open_block(o, "for (int t_i = 0; t_i < ROWS; t_i++)");
    emit(o, "const IndexT t_o = t_o0 + (IndexT)t_i * blockDim.y;");
  }
  if (only_live)
    open_block(o, "if (%s)", row_in(e));
}

static void close_thread_rows(Out *o, int only_live) {
  if (only_live)
    close_block(o, "");
  close_block(o, "");
}

/* A row value as read where thread_index() is the row (or column). */
static const char *row_ref(const SEmit *e, const char *name) {
  const char *at = thread_index(e);
  return at ? arena_printf(e->sk.a, "%s[%s]", name, at) : name;
}

/* `stmt`, a statement of row scope, for each of the thread's rows or
 * columns (a loop, with t_o where it `reads_o`: a load of row values). */
static void row_stmt(SEmit *e, Out *o, const char *stmt, int reads_o) {
  const char *at = thread_index(e);
  if (!at) {
    emit(o, "%s", stmt);
    return;
  }
  if (!reads_o) {
    emit(o, "#pragma unroll");
    emit(o, "for (int %s = 0; %s < %s; %s++) %s", at, at, e->sk.cvec ? "VEC" : "ROWS", at, stmt);
    return;
  }
  open_thread_rows(e, o, 0);
  emit(o, "%s", stmt);
  close_thread_rows(o, 0);
}

/* Declares the row value `name` = `init` (const unless `mut`), with an
 * optional `note` (a comment); `init` reads t_o where it `reads_o`. */
static void row_decl(SEmit *e, Out *o, const char *type, const char *name, const char *init, int mut,
                     const char *note, int reads_o) {
  const char *comment = note ? arena_printf(e->sk.a, " /* %s */", note) : "";
  if (e->reset_head && o == e->reset_head) {
    if (mut)
      row_stmt(e, e->resets, arena_printf(e->sk.a, "%s = %s;", row_ref(e, name), init), reads_o);
    else
      e->head_consts++;
  }
  if (!thread_index(e)) {
    emit(o, "%s%s %s = %s;%s", mut ? "" : "const ", type, name, init, comment);
    return;
  }
  emit(o, "%s %s[%s];%s", type, name, e->sk.cvec ? "VEC" : "ROWS", comment);
  row_stmt(e, o, arena_printf(e->sk.a, "%s = %s;", row_ref(e, name), init), reads_o);
}

/* A new pass: the previous pass's element names are free again. */
static void forget_element_names(SEmit *e) {
  nameset_truncate(&e->taken, e->names_mark);
  for (int i = 0; i < e->kernel_names.len; i++)
    nameset_add(&e->taken, e->kernel_names.items[i]);
}

static KParam *find_param(SEmit *e, ParamKind kind, int index) {
  for (int i = 0; i < e->params.len; i++) {
    KParam *p = e->params.items[i];
    if (p->kind == kind && p->index == index)
      return p;
  }
  return NULL;
}

static const char *param(SEmit *e, ParamKind kind, int index, Value *v) {
  KParam *p = find_param(e, kind, index);
  if (p)
    return p->name;
  p = ARENA_NEW(e->sk.a, KParam);
  p->kind = kind;
  p->index = index;
  p->value = v;
  switch (kind) {
  case P_INPUT: case P_SCALAR: p->name = e->sk.names->inputs[index]; break;
  case P_OUTPUT: p->name = e->sk.names->outputs[index]; break;
  case P_SIZE: p->name = e->sk.names->sizes[index]; break;
  case P_RCOUNT: p->name = index ? "t_rcount64" : "t_rcount"; break;
  case P_FASTDIV: p->name = arena_printf(e->sk.a, "t_fd_%s", e->sk.names->sizes[index]); break;
  default: p->name = kernel_name_for(e, arena_printf(e->sk.a, "%s_mem", base_name(e, v))); break;
  }
  vec_push(e->sk.a, &e->params, p);
  return p->name;
}

/* In the plan's order (stitch_plan.h: param_rank()). */
static void sort_params(SEmit *e) {
  for (int i = 1; i < e->params.len; i++) {
    void *x = e->params.items[i];
    int j = i;
    for (; j > 0 && param_rank(e->params.items[j - 1]) > param_rank(x); j--)
      e->params.items[j] = e->params.items[j - 1];
    e->params.items[j] = x;
  }
}

/* ---- index expressions -------------------------------------------------- */

static int is_reduced_axis(const SEmit *e, int axis) {
  return (int)((e->sk.st->axes >> axis) & 1u);
}

static const char *dim_expr(SEmit *e, Dim d) {
  if (d.var >= 0)
    return param(e, P_SIZE, d.var, NULL);
  return arena_printf(e->sk.a, "(IndexT)%lld", (long long)d.size);
}

/* Product of the domain's dims in `mask` (as IndexT). */
static const char *count_expr(SEmit *e, uint32_t mask) {
  Buf b;
  buf_init(&b, e->sk.a);
  int axes[TECC_MAX_RANK], n = shape_axes(&e->sk.g->domain, mask, axes);
  for (int j = 0; j < n; j++)
    buf_printf(&b, "%s%s", j ? " * " : "", dim_expr(e, e->sk.g->domain.d[axes[j]]));
  return n ? buf_cstr(&b) : "(IndexT)1";
}

/* The inner run's elements (the row's first element is at t_o times it). */
static const char *run_length(SEmit *e) {
  const char *n = count_expr(e, stitch_inner_run(e->sk.g));
  return strchr(n, ' ') ? arena_printf(e->sk.a, "(%s)", n) : n; /* a run of several axes: r / (S * M) */
}

/* r + q * ((t_outer - 1) * RUN) + t_o * RUN, q = r / RUN: one division,
 * where (r / RUN) * (t_outer * RUN) + r % RUN took two and a literal run's
 * misaligned ITEMS 8 instance spilled 64 bytes (ptxas -v, sm_90).  A
 * size variable's run divides by its tecc::FastDiv (a multiply-high) in
 * the PACKS instance (batchnorm bf16 32 x 2048 x 392 37.2 -> 30.5 us, f32
 * 62.6 -> 56.9, H200); the instance for misaligned rows divides, as its
 * ITEMS 8 f32 loads element by element spilled 16 to 24 bytes with the
 * multiply-high. */
static const char *runs_offset(SEmit *e, const char *r) {
  const char *run = run_length(e);
  int var = stitch_runs_divisor(e->sk.g);
  const char *q = var < 0 ? arena_printf(e->sk.a, "%s / %s", r, run)
                          : arena_printf(e->sk.a, "t_packs ? %s.div(%s) : %s / %s", param(e, P_FASTDIV, var, NULL), r,
                                         r, run);
  return arena_printf(e->sk.a, "%s + (%s) * ((t_outer - 1) * %s) + t_o * %s", r, q, run, run);
}

/* Does `v`, evaluated at `map`, vary along the row? */
static int varies_along_row(const SEmit *e, const Value *v, const int *map) {
  return varies_along(&v->shape, map, e->sk.st->axes);
}

static int covers(const SEmit *e, const Shape *s, const int *map, int kept_only) {
  return covers_domain(&e->sk.g->domain, e->sk.st->axes, s, map, kept_only);
}

/* In a rows kernel (stitch_thread_rows()) t_o indexes the kept axes
 * together: a shape indexed by one is indexed by all, consecutive
 * (StitchPlan.kept_partial is 0), whose digits make t_o and whose extents
 * make t_outer.  The offset `off` of the axes before them, extended by
 * theirs. */
static const char *rows_digits(SEmit *e, const char *off) {
  return off ? arena_printf(e->sk.a, "(%s) * t_outer + t_o", off) : "t_o";
}

/* The index along domain axis `ax`, marked used. */
static const char *axis_var(SEmit *e, int ax) {
  if (is_reduced_axis(e, ax))
    e->used_red[ax] = e->used_red_any[ax] = 1;
  else if (e->sk.rows && __builtin_popcount(stitch_kept_axes(e->sk.g)) > 1) /* t_o runs over them (kept_partial) */
    internal_error("group %d: a rows kernel over several kept axes needs axis %d's own index", e->sk.g->id, ax);
  else if (e->sk.cvec || e->sk.rows) /* the one kept axis */
    return "t_o";
  else
    e->used_kept[ax] = 1;
  return arena_printf(e->sk.a, "t_d%d", ax);
}

static const char *offset_expr(SEmit *e, const Shape *s, const int *map) {
  if (e->lin && covers(e, s, map, 0))
    return e->lin;
  if (covers(e, s, map, 1))
    return "t_o";
  const char *off = NULL;
  int kept_done = 0;
  for (int j = 0; j < s->rank; j++) {
    if (dim_is_one(s, j) || map[j] < 0)
      continue;
    if (e->sk.rows && !is_reduced_axis(e, map[j])) {
      off = kept_done++ ? off : rows_digits(e, off);
      continue;
    }
    const char *idx = axis_var(e, map[j]);
    off = off ? arena_printf(e->sk.a, "(%s) * %s + %s", off, dim_expr(e, s->d[j]), idx) : idx;
  }
  return off ? off : "0";
}

/* Splits `idx` into the domain axes of `mask` (row-major): t_d<axis>. */
static void emit_decompose(SEmit *e, Out *o, const char *idx, uint32_t mask, const char *used) {
  const Shape *s = &e->sk.g->domain;
  int axes[TECC_MAX_RANK], n = shape_axes(s, mask, axes), last_used = -1;
  for (int j = 0; j < n; j++)
    if (used[axes[j]])
      last_used = j;
  if (last_used < 0)
    return;
  const char *rest = idx;
  const int packed = strcmp(idx, "t_r") == 0 && stitch_digit_packs(&e->sk) == axes[n - 1];
  if (packed) { /* PACKS: the pack's digits */
    emit(o, "const IndexT t_rp = t_packs ? t_r0 : t_r; /* PACKS: a pack is inside one row of axis %d */", axes[n - 1]);
    rest = "t_rp";
  }
  for (int j = n - 1; j > 0; j--) {
    int ax = axes[j];
    if (j == n - 1 && packed)
      emit(o, "const IndexT t_d%d = t_rp %% %s + (t_packs ? t_r - t_r0 : 0);", ax, dim_expr(e, s->d[ax]));
    else
      emit(o, "const IndexT t_d%d = %s %% %s;", ax, rest, dim_expr(e, s->d[ax]));
    const char *q = arena_printf(e->sk.a, "t_q%d", ax);
    emit(o, "const IndexT %s = %s / %s;", q, rest, dim_expr(e, s->d[ax]));
    rest = q;
  }
  emit(o, "const IndexT t_d%d = %s;", axes[0], rest);
}

/* ---- values --------------------------------------------------------------- */

static const char *sval(SEmit *e, Value *v, const int *map);

static int in_group(const SEmit *e, const Value *v) {
  for (int i = 0; i < e->sk.st->reduces.len; i++)
    if (e->sk.st->reduces.items[i] == v)
      return 1;
  return 0;
}

static int from_memory(const SEmit *e, const Value *v) {
  return v->op == IR_INPUT || (e->sk.kp->stored[v->id] && !in_group(e, v) && e->sk.kp->group_of[v->id] != e->sk.g->id);
}

static const char *mem_param(SEmit *e, Value *v) {
  if (v->op == IR_INPUT)
    return param(e, v->shape.rank == 0 ? P_SCALAR : P_INPUT, v->index, NULL);
  return param(e, P_STORED_READ, v->id, v);
}

/* Element `at` of the 16-bit words `words` (two elements to a word) of
 * dtype t, as f32. */
static const char *pair_elem(Arena *a, DType t, const char *words, const char *at) {
  return arena_printf(a, "tecc::%s_pair(%s, %s)", t == DT_BF16 ? "bf16" : "f16", words, at);
}

/* Element `at` of cached value c's 8-bit words (four elements to a word),
 * in its compute type: e4m3 a half word's cvt at a time
 * (tecc::f8e4m3_quad), the others from the byte. */
static const char *quad_elem(Arena *a, const Cached *c, const char *at) {
  if (c->v->dtype == DT_F8E4M3)
    return arena_printf(a, "tecc::f8e4m3_quad%s(%s, %s)", c->nan_free ? "_arith" : "", c->name, at);
  const char *byte = arena_printf(a, "tecc::quad_byte(%s, %s)", c->name, at);
  if (c->v->dtype == DT_I8)
    byte = arena_printf(a, "(int8_t)%s", byte);
  return cu_load_decode(a, c->v->dtype, c->nan_free, byte);
}

/* The register kernel of rows in packs holds its 8-bit rows (f8, i8, u8;
 * not bool) four to a word, converting at each use, as 16-bit ones two
 * (pairs): a quarter of the registers of f32.  The budget still counts
 * them a register each (footprint.c): ITEMS 8 and 16 were slower than the
 * block variant's 4 (dequantize + RMSNorm 8192 x 14336 on an H200: 132
 * and 126 us of kernel time against 112), so what the words save goes to
 * occupancy: the instances for rows that are not whole row groups take 32
 * registers where f32 took 64 (8192 x 5000: 62 -> 45 us, x 11008: 131 ->
 * 94), and the WHOLE one, a kernel of its own, is bound to 40
 * (whole_apart()).  Rows that are not whole packs move through
 * aligned words (loads_unaligned()), so the element-by-element path only
 * meets items that no loop reads (past the row, or of a row past the
 * last), and leaves their words 0: loaded a byte at a time into the
 * words, those instances spilled 12 to 80 bytes (sm_90).  Not in a kernel
 * that may hold rows in shared memory (SHARED), and only where every
 * variant's packs are whole words (VEC a multiple of 4). */
static int held_in_quads(const SEmit *e, const Value *v) {
  return e->sk.quads && stitch_quad_dtype(v->dtype);
}

/* Element t_e of a cached input, in the compute type.  16-bit inputs of a
 * packed kernel stay two to a 32-bit word and convert at each use: half
 * the registers of f32, for one instruction a use.  On an H100 that took
 * the bf16 rows from 43-83% to 47-93% of copy (softmax bf16 4096x16384
 * 68 -> 89, rmsnorm 73 -> 89, card 16384x4096 70 -> 87; bench/NOTES.md). */
static const char *cached_elem(const Cached *c, Arena *a) {
  const char *at = c->row ? "t_j" : "t_e";
  if (c->quads)
    return quad_elem(a, c, at);
  if (!c->pairs)
    return arena_printf(a, "%s[%s]", c->name, at);
  return pair_elem(a, c->v->dtype, c->name, at);
}

static int same_row(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

static int cached_named(const SEmit *e, const char *name) {
  for (int i = 0; i < e->cached.len; i++)
    if (strcmp(((const Cached *)e->cached.items[i])->name, name) == 0)
      return 1;
  return 0;
}

/* The bytes an element of c takes in its register array: 16-bit values
 * held two to a word take 2. */
static int element_bytes(const Cached *c) {
  return c->quads ? 1 : c->pairs ? 2 : dtype_size(cu_compute_dtype(c->v->dtype));
}

/* The group's last variant: the stream variant, whose ITEMS the stream
 * kernel's instances take (columns: schedule.c, wide_column_streams()). */
static const Variant *stream_variant(const SEmit *e) {
  return &e->sk.sched->variants[e->sk.sched->nvariants - 1];
}

/* `row`: NULL for a tensor over the whole domain (held, or loaded a chunk
 * at a time), else a broadcast operand's row offset (loaded a pack at a
 * time in the element loop, open_elements()). */

static Cached *find_cached(const SEmit *e, const Value *v, const char *row) {
  for (int i = 0; i < e->cached.len; i++) {
    Cached *c = e->cached.items[i];
    if (c->v == v && same_row(c->row, row))
      return c;
  }
  return NULL;
}

static const char *cached_load(SEmit *e, Value *v, const char *raw, const char *row) {
  Cached *c = find_cached(e, v, row);
  e->used_elem |= !row;
  if (c) {
    c->passes |= 1u << (e->pass & 31);
    return cached_elem(c, e->sk.a);
  }
  c = ARENA_NEW(e->sk.a, Cached);
  c->v = v;
  c->row = row;
  c->name = arena_printf(e->sk.a, "t_%s%d", row ? "bc" : "c", v->id);
  if (row && cached_named(e, c->name))
    c->name = arena_printf(e->sk.a, "%s_%d", c->name, e->cached.len);
  c->raw = raw;
  c->ptr = mem_param(e, v);
  c->passes = 1u << (e->pass & 31);
  c->kept = !row && e->keeps && stitch_kept_bytes(&e->sk, v) > 0;
  c->kept_at = e->keep_bytes;
  /* 16-bit values two to a word: rows of packs, columns in registers, and
   * streamed columns that take twice the packs (wide_items; in the other
   * column streams the split's instances bound to 32 registers spilled
   * 16-28 bytes with them: tests/programs/column_packs.te, online_sums_bf16.te) */
  c->pairs = (e->sk.vec || (e->sk.cvec && (e->sk.reg || stream_variant(e)->wide_items))) && dtype_is_16bit(v->dtype);
  c->quads = !row && held_in_quads(e, v);
  c->nan_free = dtype_is_f8(v->dtype) && ir_nan_sign_unseen(e->sk.k, v);
  if (c->kept)
    e->keep_bytes += element_bytes(c);
  vec_push(e->sk.a, &e->cached, c);
  return cached_elem(c, e->sk.a);
}

/* The row offset of a row-contiguous tensor: its index over its other axes. */
static const char *row_offset(SEmit *e, const Shape *s, const int *map) {
  const char *off = NULL;
  int kept_done = 0;
  for (int j = 0; j < s->rank; j++) {
    if (dim_is_one(s, j) || map[j] < 0 || is_reduced_axis(e, map[j]))
      continue;
    if (e->sk.rows) {
      off = kept_done++ ? off : rows_digits(e, off);
      continue;
    }
    const char *idx = arena_printf(e->sk.a, "t_d%d", map[j]);
    e->used_kept[map[j]] = 1;
    off = off ? arena_printf(e->sk.a, "(%s) * %s + %s", off, dim_expr(e, s->d[j]), idx) : idx;
  }
  return off ? off : "0";
}

/* Element t_r of a row of a row-contiguous tensor at row offset `row`. */
static const char *at_row(SEmit *e, const char *row, const char *r) {
  return strcmp(row, "0") == 0 ? r : arena_printf(e->sk.a, "(%s) * t_red + %s", row, r);
}

/* ... and the end of that row, as at_row() writes it. */
static const char *operand_row_end(SEmit *e, const char *row) {
  return strcmp(row, "0") == 0 ? "t_red" : arena_printf(e->sk.a, "((%s) + 1) * t_red", row);
}

static const char *load_expr(SEmit *e, Value *v, const int *map, int row_level) {
  const char *p = mem_param(e, v);
  if (v->shape.rank == 0)
    return cu_load_conv_of(e->sk.a, e->sk.k, v, p);
  if (e->sk.vec && !row_level && !covers(e, &v->shape, map, 0) && stitch_row_contiguous(e->sk.g, &v->shape, map)) {
    const char *row = row_offset(e, &v->shape, map);
    return cached_load(e, v, arena_printf(e->sk.a, "%s[%s]", p, at_row(e, row, "t_r")), row);
  }
  const char *off = offset_expr(e, &v->shape, map), *raw = arena_printf(e->sk.a, "%s[%s]", p, off);
  if (covers(e, &v->shape, map, 0) && !row_level)
    return cached_load(e, v, raw, NULL);
  e->used_r |= !row_level && off == e->lin;
  e->past_end_ok &= row_level;
  const char *mem = cu_load_conv_of(e->sk.a, e->sk.k, v, raw);
  if (row_level)
    return arena_printf(e->sk.a, "%s ? %s : (%s)0", thread_index(e) ? row_in_operand(e) : "t_live", mem,
                        cu_compute_ctype(v->dtype));
  return mem;
}

/* The value a read of v at `given` reads, through broadcasts, and its map
 * (literal-1 axes have index 0 at any map: -1). */
static Value *through_broadcasts(Value *v, const int *given, int *map) {
  for (int j = 0; j < v->shape.rank; j++)
    map[j] = dim_is_one(&v->shape, j) ? -1 : given[j];
  while (v->op == IR_BROADCAST) {
    int amap[TECC_MAX_RANK];
    broadcast_arg_map(v, map, amap);
    v = v->args[0];
    for (int j = 0; j < v->shape.rank; j++)
      map[j] = dim_is_one(&v->shape, j) ? -1 : amap[j];
  }
  return v;
}

/* Is v, read at map, the same along the row (a row value, a reduction's
 * scalar, an operand broadcast along the reduced axes)?  Literals are
 * not: a division by one is left as the program wrote it. */
static int row_level_operand(const SEmit *e, Value *v, const int *given) {
  int map[TECC_MAX_RANK];
  v = through_broadcasts(v, given, map);
  if (v->op == IR_CONST)
    return 0;
  if (v->op == IR_REDUCE && in_group(e, v))
    return 1;
  return !varies_along_row(e, v, map);
}

/* x / s per element, in f32 arithmetic, with s a reduction's result the
 * same along the row (softmax's sum): one reciprocal per row, a multiply
 * per element.  That is within 1.5 ulp of the quotient, far inside abi.md
 * section 6, and the division was a quarter of softmax bf16's
 * instructions: on an H100 rows went from 42-46% to 54-62% of copy
 * (bench/NOTES.md, issue 12).  Other groups compute the same quotient as
 * x * (1 / s) too (cu_by_reciprocal()): the same bits. */
static const char *row_reciprocal(SEmit *e, Value *v, const int *map, const char *const *args) {
  if (!cu_by_reciprocal(v) || !varies_along_row(e, v, map) || !row_level_operand(e, v->args[1], map))
    return NULL;
  const char *s = args[1], *sub = strchr(s, '[');
  const char *rcp = kernel_name_for(e, arena_printf(e->sk.a, "inv_%.*s", sub ? (int)(sub - s) : (int)strlen(s), s));
  row_decl(e, e->pre, "float", rcp, arena_printf(e->sk.a, "1.0f / %s", s), 0, NULL, 0);
  return arena_printf(e->sk.a, "tecc::mul(%s, %s)", args[0], row_ref(e, rcp));
}

/* a*b + c, a*b - c and c - a*b in f32 or f64, the product used nowhere
 * else: one fused multiply-add, as nvcc contracts the same expression in
 * PyTorch's kernels and Triton in its own (one rounding instead of two;
 * layernorm's `* w + b` is one instruction an element fewer).  The same
 * in every kernel (cu_fused_product()). */
static const char *fused_multiply_add(SEmit *e, Value *v, const int *map) {
  int i = cu_fused_product(e->sk.kp, v);
  if (i < 0)
    return NULL;
  Value *p = v->args[i];
  const char *a = sval(e, p->args[0], map), *b = sval(e, p->args[1], map), *c = sval(e, v->args[1 - i], map);
  return cu_fma_expr(e->sk.a, v, i, a, b, c);
}

/* A gathered load (IR_TAKE): input v->index at the element's position,
 * each of the take's axes at its index; a row value reads only in live
 * rows. */
static const char *take_expr(SEmit *e, Value *v, const int *map) {
  const KernelInput *in = &e->sk.k->inputs[v->index];
  const char *idx[TECC_MAX_RANK] = {0}, *at = NULL, *inside = NULL;
  const int n = ir_take_naxes(v), off = v->shape.rank - in->shape.rank;
  for (int j = 0; j < n; j++)
    idx[ir_take_axis(v, j)] = sval(e, ir_take_index(v, j), map);
  const char *p = param(e, P_INPUT, v->index, NULL);
  for (int j = 0; j < in->shape.rank; j++) {
    const char *c = idx[j + off];
    if (!c && (dim_is_one(&in->shape, j) || map[j + off] < 0))
      continue;
    if (!c)
      c = axis_var(e, map[j + off]);
    at = at ? arena_printf(e->sk.a, "(%s) * %s + %s", at, dim_expr(e, in->shape.d[j]), c) : c;
  }
  const char *size[TECC_MAX_RANK] = {0};
  for (int j = 0; j < n; j++)
    size[ir_take_axis(v, j)] = dim_expr(e, in->shape.d[ir_take_axis(v, j) - off]);
  inside = cu_take_inside(e->sk.a, v, idx, size);
  if (!varies_along_row(e, v, map))
    inside = arena_printf(e->sk.a, "%s && %s", thread_index(e) ? row_in_operand(e) : "t_live", inside);
  else
    e->past_end_ok = 0;
  return cu_gather(e->sk.a, in->dtype, inside, arena_printf(e->sk.a, "%s[%s]", p, at));
}

/* May the positions along the row (rows of one axis in packs: t_r0 +
 * t_j) equal `value` (a row value) for some element of the pack?  Where
 * they may not, an == among them is false and a != true for the whole
 * pack: the element loop runs in two instances (tecc::by_pack, the flag
 * t_may), and the one for the packs that cannot (all but one a row)
 * drops the compare and the select it feeds, two instructions an element
 * of cross-entropy's backward (`index(l, -1) == t`).  That took its
 * kernel time at 16384 x 32000 bf16 from 582 to 571 us on an H200, the
 * same bits (bench/NOTES.md, issue 47).  Records the value for the
 * pass's test (pack_test()); 0 where the compare stays one an element. */
static int pack_tests_position(SEmit *e, Value *v, const char *value) {
  if ((v->bop != BIN_EQ && v->bop != BIN_NE) || !e->sk.vec || e->sk.cvec || row_runs(e) ||
      __builtin_popcount(e->sk.st->axes) != 1)
    return 0;
  for (int i = 0; i < e->pack_values.len; i++)
    if (strcmp(e->pack_values.items[i], value) == 0)
      return 1;
  vec_push(e->sk.a, &e->pack_values, (void *)value);
  return 1;
}

/* by_pack's test: may the pack hold any of the pass's compared values? */
static const char *pack_test(SEmit *e) {
  Buf b;
  buf_init(&b, e->sk.a);
  for (int i = 0; i < e->pack_values.len; i++)
    buf_printf(&b, "%stecc::pack_holds<VEC>(%s, t_r0)", i ? " || " : "", (const char *)e->pack_values.items[i]);
  return buf_cstr(&b);
}

/* A comparison of a position along the row with an i64 value of row
 * scope (cross-entropy's backward: `index(l, -1) == t`), in IndexT: the
 * value narrowed once a row (tecc::narrow_position, clamped so that every
 * comparison with a position comes out the same), then one 32-bit compare
 * an element where the 64-bit one took three (a sign extension and two
 * compares), and where the pack cannot hold the value, none
 * (pack_tests_position()).  NULL where v is not one. */
static const char *position_compare(SEmit *e, Value *v, const int *map) {
  if (v->op != IR_BINARY || v->bop < BIN_EQ || v->bop > BIN_GE || v->args[0]->dtype != DT_I64)
    return NULL;
  for (int side = 0; side < 2; side++) {
    int pmap[TECC_MAX_RANK], omap[TECC_MAX_RANK];
    Value *pos = through_broadcasts(v->args[side], map, pmap);
    Value *other = through_broadcasts(v->args[1 - side], map, omap);
    if (pos->op != IR_INDEX || !varies_along_row(e, pos, pmap) || varies_along_row(e, other, omap))
      continue;
    const char *value = sval(e, v->args[1 - side], map), *narrow = NULL;
    for (int i = 0; i + 1 < e->narrowed.len && !narrow; i += 2)
      if (strcmp(e->narrowed.items[i], value) == 0)
        narrow = e->narrowed.items[i + 1];
    if (!narrow && other->op == IR_CONST) {
      narrow = arena_printf(e->sk.a, "tecc::narrow_position<IndexT>(%s)", value);
    } else if (!narrow) {
      const char *fresh = kernel_name_for(e, arena_printf(e->sk.a, "%s_at", base_name(e, other)));
      row_decl(e, e->pre, "IndexT", fresh, arena_printf(e->sk.a, "tecc::narrow_position<IndexT>(%s)", value), 0,
               "compared with positions, in IndexT", 0);
      narrow = row_ref(e, fresh);
      vec_push(e->sk.a, &e->narrowed, (void *)value);
      vec_push(e->sk.a, &e->narrowed, (void *)narrow);
    }
    const char *args[2];
    args[side] = arena_printf(e->sk.a, "(IndexT)(%s)", offset_expr(e, &pos->shape, pmap));
    args[1 - side] = narrow;
    const char *compare = cu_op_expr(e->sk.a, v, args);
    if (pack_tests_position(e, v, narrow))
      return arena_printf(e->sk.a, v->bop == BIN_EQ ? "(t_may && %s)" : "(!t_may || %s)", compare);
    return compare;
  }
  return NULL;
}

static const char *compute(SEmit *e, Value *v, const int *map) {
  if (v->op == IR_TAKE)
    return take_expr(e, v, map);
  if (v->op == IR_SIZE)
    return arena_printf(e->sk.a, "(int64_t)%s", param(e, P_SIZE, v->index, NULL));
  if (v->op == IR_INDEX) /* 1 on every other axis: its offset is the position */
    return arena_printf(e->sk.a, "(int64_t)(%s)", offset_expr(e, &v->shape, map));
  const char *narrow = position_compare(e, v, map);
  if (narrow)
    return narrow;
  const char *fused = fused_multiply_add(e, v, map);
  if (fused)
    return fused;
  const char *args[3] = {0};
  for (int i = 0; i < v->nargs; i++)
    args[i] = sval(e, v->args[i], map);
  const char *by_reciprocal = row_reciprocal(e, v, map, args);
  return by_reciprocal ? by_reciprocal : cu_op_expr(e->sk.a, v, args);
}

/* Declares the thread's array `name` of the held (or kept) value's
 * elements, of `type` (`per_word` elements to a word: 2, 16-bit pairs; 4,
 * 8-bit quads), `bytes` each:
 * in registers, or, in a kernel whose instance for rows that are not
 * whole packs may hold them in shared memory (SHARED), its region of
 * t_held after the arrays declared before it (at least 4 bytes an
 * element, as the schedule counts them). */
static void declare_held(SEmit *e, Out *o, const char *type, const char *name, int per_word, int bytes, const char *note) {
  const char *n = arena_printf(e->sk.a, "%sITEMS * VEC%s", e->sk.rows ? "ROWS * " : "",
                               per_word > 1 ? arena_printf(e->sk.a, " / %d", per_word) : "");
  if (!e->sk.shared || e->into_next) {
    emit(o, "%s %s[%s];%s", type, name, n, note);
    return;
  }
  emit(o, "typename tecc::HeldRow<%s, %s, SHARED>::type %s;%s", type, n, name, note);
  if (e->shared_at)
    emit(o, "tecc::bind_held(%s, t_held + %d * %sITEMS * VEC * t_hth, t_hid, t_hth);", name, e->shared_at,
         e->sk.rows ? "ROWS * " : "");
  else
    emit(o, "tecc::bind_held(%s, t_held, t_hid, t_hth);", name);
  e->shared_at += per_word == 2 || bytes >= 4 ? bytes : 4; /* a bool as a register: 4 bytes (footprint.h) */
}

/* A kept value is stored to t_m<id> where first computed. */
static int is_kept(const SEmit *e, const Value *v) {
  return e->reuse && e->reuse[v->id];
}

/* Was the row value of v at `given` declared at the row's top (a
 * constant needs no declaration)? */
static int row_loaded(SEmit *e, Value *v, const int *given) {
  int map[TECC_MAX_RANK];
  v = through_broadcasts(v, given, map);
  if (v->op == IR_CONST)
    return 1;
  Memo *m = memo_find(&e->rowmemo, v, map);
  return m && vec_contains(&e->row_loaded, m->name);
}

/* Where row value v (a load from memory where `mem`) is declared: at the
 * row's top (e->row_loads) where a pass after the first reads it and it
 * is a load, or a gathered load whose indices are declared there, so that
 * it is in flight while the passes before compute and all-reduce (the
 * block waits at their barriers; a load after them waited out its latency
 * alone): cross-entropy's backward with labels, whose output pass reads
 * the row's dloss and label, took 11% less time at 16384 x 32000 bf16,
 * 8-12% at 20000 to 32768 and 4096 x 4096 (H200, bench/NOTES.md
 * 2026-12-01, fourth session).  Only in the register kernel, whose later
 * passes read no memory of their own to hide it behind, and not for the
 * row's outputs (both row_body()).  Else the pass's own row scope. */
static Out *row_value_at(SEmit *e, Value *v, const int *map, int mem) {
  if (!e->row_loads || v->shape.rank == 0 || e->pass <= e->first_pass)
    return e->pre;
  if (mem)
    return e->row_loads;
  if (v->op != IR_TAKE)
    return e->pre;
  for (int j = 0; j < ir_take_naxes(v); j++)
    if (!row_loaded(e, ir_take_index(v, j), map))
      return e->pre;
  return e->row_loads;
}

/* A value (not a constant, broadcast or the group's reduction) as one
 * named temporary per map: per row or per element. */
static const char *named_value(SEmit *e, Value *v, const int *map) {
  int row_level = !varies_along_row(e, v, map);
  PtrVec *memo = row_level ? &e->rowmemo : &e->memo;
  Memo *m = memo_find(memo, v, map);
  if (m)
    return m->name;
  int mem = from_memory(e, v);
  if (!mem && v->op == IR_REDUCE)
    internal_error("stitch: reduction %%%d outside the group is not stored", v->id);
  int whole = !mem && !row_level && covers(e, &v->shape, map, 0);
  e->used_elem |= whole && is_kept(e, v);
  if (whole && is_kept(e, v) && e->kept[v->id])
    return memo_add(e->sk.a, memo, v, map, arena_printf(e->sk.a, "t_m%d[t_e]", v->id))->name;
  const char *expr = mem ? load_expr(e, v, map, row_level) : compute(e, v, map);
  const char *want = base_name(e, v);
  const char *fresh = row_level ? kernel_name_for(e, want) : fresh_name(e->sk.a, &e->taken, want);
  const char *name = memo_add(e->sk.a, memo, v, map, row_level ? row_ref(e, fresh) : fresh)->name;
  if (row_level) {
    Out *at = row_value_at(e, v, map, mem);
    if (at == e->row_loads)
      vec_push(e->sk.a, &e->row_loaded, (void *)name);
    row_decl(e, at, cu_compute_ctype(v->dtype), fresh, expr, 0, NULL,
             (mem && v->shape.rank > 0) || v->op == IR_INDEX || v->op == IR_TAKE);
  }
  else
    emit(e->body, "const %s %s = %s;", cu_compute_ctype(v->dtype), name, expr);
  if (whole && is_kept(e, v)) {
    emit(e->body, "t_m%d[t_e] = %s;", v->id, name);
    declare_held(e, e->keep_decls, cu_compute_ctype(v->dtype), arena_printf(e->sk.a, "t_m%d", v->id), 1,
                 dtype_size(cu_compute_dtype(v->dtype)), "");
    e->kept[v->id] = 1;
  }
  return name;
}

static const char *sval(SEmit *e, Value *v, const int *given) {
  int map[TECC_MAX_RANK];
  v = through_broadcasts(v, given, map);
  if (v->op == IR_CONST)
    return cu_const_literal(e->sk.a, v);
  if (v->op == IR_REDUCE && in_group(e, v)) {
    if (!e->red_name[v->id])
      internal_error("stitch: reduction %%%d used before its level", v->id);
    return e->red_name[v->id];
  }
  return named_value(e, v, map);
}

/* ---- reductions ------------------------------------------------------------ */

typedef struct Red {
  const char *type, *identity, *op;
  DType dt;
} Red;

static Red red_of(Arena *a, const Value *r) {
  Red x = {0};
  x.dt = stitch_acc_dtype(r);
  x.type = cu_compute_ctype(x.dt);
  int is_f = x.dt == DT_F32 || x.dt == DT_F64;
  switch (r->rop) {
  case RED_SUM: case RED_MEAN:
    x.op = "tecc::Sum()";
    x.identity = arena_printf(a, "(%s)0", x.type);
    break;
  case RED_PROD:
    x.op = "tecc::Prod()";
    x.identity = arena_printf(a, "(%s)1", x.type);
    break;
  case RED_MAX: case RED_MIN: {
    int mx = r->rop == RED_MAX;
    x.op = mx ? "tecc::Max()" : "tecc::Min()";
    if (is_f)
      x.identity = arena_printf(a, "(%s(%s)tecc::inf_f64())", mx ? "-" : "", x.type);
    else if (x.dt == DT_I32)
      x.identity = mx ? "INT32_MIN" : "INT32_MAX";
    else if (x.dt == DT_I64)
      x.identity = mx ? "INT64_MIN" : "INT64_MAX";
    else
      x.identity = mx ? "false" : "true";
    break;
  }
  case RED_ANY: x.op = "tecc::Any()"; x.identity = "false"; x.type = "bool"; break;
  case RED_ALL: x.op = "tecc::All()"; x.identity = "true"; x.type = "bool"; break;
  default: internal_error("stitch: reduction %s", reduce_name(r->rop));
  }
  return x;
}

/* ---- the element loop and the reduction pass -------------------------------- */

/* The thread's lane along the row and the lanes of the row: across the
 * blocks of a cluster in the cluster-capable kernel. */
static const char *lane(const SEmit *e) {
  return e->sk.cluster ? "t_lane" : e->sk.row || e->sk.item ? "threadIdx.x" : "threadIdx.y";
}

static const char *lanes(const SEmit *e) {
  return e->sk.cluster ? "t_lanes" : e->sk.row || e->sk.item ? "blockDim.x" : "blockDim.y";
}

/* The first row element of item t_k of this thread (in the chunk t_base
 * of the stream kernel; t_nb, the next one, in loads ahead). */
static const char *first_of_item(SEmit *e) {
  const char *base = e->sk.reg ? "" : e->into_next ? "t_nb + " : "t_base + ";
  return arena_printf(e->sk.a, "%s((IndexT)%s + (IndexT)t_k * (IndexT)%s)%s", base, lane(e), lanes(e),
                      e->sk.cvec ? "" : " * VEC");
}

/* The stream kernel's chunk loop over the row: forward in odd passes,
 * backward in even ones.  A pass that re-reads the row then starts with
 * the chunks the pass before read last, which are still in L2 where the
 * rows in flight are larger than it (128 rows of 1 MiB: the second read
 * of every other pass went to HBM; bench/NOTES.md). */
static void chunk_step(SEmit *e, Out *o) {
  emit(o, "const IndexT t_step = (IndexT)%s * %s; /* the elements of a chunk */", lanes(e),
       e->sk.cvec ? "ITEMS" : "(VEC * ITEMS)");
}

static void open_chunk_loop_dir(SEmit *e, Out *o, int forward) {
  const char *hi = row_end(e);
  if (forward)
    open_block(o, "for (IndexT t_base = %s; t_base < %s; t_base += t_step)", stitch_split_kernel(&e->sk) ? "t_lo" : "0", hi);
  else if (stitch_split_kernel(&e->sk))
    open_block(o, "for (IndexT t_base = t_lo + (%s - t_lo - 1) / t_step * t_step; t_base >= t_lo && t_base < %s; "
               "t_base -= t_step)", hi, hi);
  else
    open_block(o, "for (IndexT t_base = (%s - 1) / t_step * t_step; t_base >= 0 && t_base < %s; t_base -= t_step)", hi,
               hi);
}

static void open_chunk_loop(SEmit *e, Out *o) {
  open_chunk_loop_dir(e, o, e->pass % 2);
}

/* Element `at` of c's register array: c's element when `in`, else 0. */
static void load_one(SEmit *e, Out *o, const Cached *c, const char *name, const char *at, const char *in) {
  if (c->quads)
    internal_error("stitch: %s group %d loads an 8-bit value held four to a word element by element",
                   e->sk.k->name, e->sk.g->id);
  if (c->pairs)
    emit(o, "tecc::set_pair_half(%s, %s, %s ? %s : (uint16_t)0);", name, at, in, c->raw);
  else
    emit(o, "%s[%s] = %s ? %s : (%s)0;", name, at, in, cu_load_decode(e->sk.a, c->v->dtype, c->nan_free, c->raw),
         cu_compute_ctype(c->v->dtype));
}


/* Rows of 16-bit values that are not whole packs move through the
 * aligned 4-byte words they span (tecc::load_unaligned,
 * tecc::store_unaligned), not element by element: rows in 16-byte packs
 * (VEC 8), in a kernel with a PACKS instance, whose aligned path does not
 * carry that code (where t_packs was an argument, as masked rows' once,
 * masked softmax bf16 lost 4.5 points of copy).  So do 8-bit rows at VEC
 * 16 (tecc::load_unaligned_bytes): element by element, 16 checks a pack,
 * the instances for such rows of i8, u8 and f8e5m2 row sums and maxima
 * with an i8 output along the row spilled 60-100 bytes (registers) and
 * 76-364 (stream), through words none but the cluster's 20 and the 64-bit
 * stream's 36, as its aligned instance's 32 (ptxas -v, sm_90).  Not yet
 * timed on a GPU: the choices below, measured on 16-bit rows, are the
 * 8-bit rows' on the same reasoning. */
static int moves_unaligned(const SEmit *e) {
  int vec = stitch_most_vec(e->sk.sched);
  return stitch_takes_packs(&e->sk) && (vec == 8 || vec == 16);
}

/* Do values of type t move so: a storage type whose VEC elements fit in
 * a 16-byte pack (f16, bf16 at VEC 8; i8, u8, f8 at 16, and at 8 in the
 * 8-byte packs of rows that also move 16-bit values: dequant_rmsnorm's
 * f8 q beside its bf16 w and y, whose instances for such rows spilled 8
 * bytes element by element, none so; ptxas -v, sm_90)?  Not bool. */
static int moves_words(const SEmit *e, DType t) {
  return moves_unaligned(e) && dtype_is_storage(t) && dtype_size(t) * stitch_most_vec(e->sk.sched) <= 16;
}

/* The runtime's functions for t's packs: tecc::load_unaligned and
 * store_unaligned (16-bit), or their _bytes kin (1-byte elements), named
 * apart so that a file of 16-bit rows carries only its own piece. */
static const char *words_suffix(DType t) {
  return dtype_size(t) == 1 ? "_bytes" : "";
}


/* Row operand c of the reg kernel (a norm's w or b: the same row offset,
 * 0, for every row) is loaded early in its EARLY instance (the WHOLE one
 * of a variant that says so, schedule.c): its packs t_e<i> with the
 * thread's row, before the reductions, not in the pass that reads it
 * after them, where every row would wait for them before its first store. */
static int loads_early(const SEmit *e, const Cached *c) {
  return e->sk.reg && stitch_any_variant(e->sk.sched, offsetof(Variant, early)) && stitch_takes_packs(&e->sk) && c->row && strcmp(c->row, "0") == 0;
}

static const PlanKernel *plan_kernel(const SEmit *e);

/* An operand of a row of its own for each row (a mask [S, S] under
 * [B, S, S]) that two passes of the register kernel or more read along
 * the row: its packs held with the row (t_h<i>, load_along()) where the
 * thread's held elements leave room (t_hold_along), not loaded again from
 * cache by each pass.  Masked softmax reads its mask in three passes: the
 * mask held took it from 169.4 to 148.8 us in bf16 at 32 x 2048 x 2048
 * and 306.0 to 279.5 in f32 (H200, bench/NOTES.md, issue 48).  Operands
 * of one row for all (a norm's w) stay in L1: loads_early(). */
static int holds_along(const SEmit *e, const Cached *c) {
  if (!e->sk.reg || !e->sk.vec || e->sk.cvec || e->sk.rows || !c->row || strcmp(c->row, "0") == 0 ||
      !stitch_takes_packs(&e->sk))
    return 0;
  uint32_t m = plan_kernel(e)->along_in[c->v->id];
  return (m & (m - 1)) != 0;
}

/* The aligned pack of broadcast operand c at the thread's item t_r0. */
static const char *operand_pack(SEmit *e, const Cached *c) {
  const char *st = cu_storage_ctype(c->v->dtype);
  return arena_printf(e->sk.a, "*reinterpret_cast<const tecc::Pack<%s, VEC> *>(%s + %s)", st, c->ptr,
                      at_row(e, c->row, "t_r0"));
}

/* The pack t_q<i> of broadcast operand c into its register array. */
static void item_pack_words(SEmit *e, Out *o, const Cached *c, int i) {
  emit(o, "#pragma unroll");
  if (c->pairs)
    emit(o, "for (int t_j = 0; t_j < VEC / 2; t_j++) %s[t_j] = tecc::pair_word(t_q%d, t_j);", c->name, i);
  else
    emit(o, "for (int t_j = 0; t_j < VEC; t_j++) %s[t_j] = %s;", c->name,
         cu_load_decode(e->sk.a, c->v->dtype, c->nan_free, arena_printf(e->sk.a, "t_q%d.v[t_j]", i)));
}

/* The packs of this item of the broadcast operands the pass reads (a
 * norm's w and b, an attention mask): one 16-byte load each, where they
 * were loaded element by element, and in every pass that reads them (from
 * L1 or L2 after the first row). */
static void load_item_packs(SEmit *e, Out *o) {
  for (int i = 0; i < e->cached.len; i++) {
    Cached *c = e->cached.items[i];
    if (!c->row || !((c->passes >> (e->pass & 31)) & 1u))
      continue;
    const char *st = cu_storage_ctype(c->v->dtype);
    if (c->pairs)
      emit(o, "uint32_t %s[VEC / 2];", c->name);
    else
      emit(o, "%s %s[VEC];", cu_compute_ctype(c->v->dtype), c->name);
    open_block(o, "if (t_packs)");
    const char *held = loads_early(e, c)    ? arena_printf(e->sk.a, "EARLY ? t_e%d[t_k] : ", i)
                       : holds_along(e, c) ? arena_printf(e->sk.a, "t_hold_along ? t_h%d[t_k] : ", i)
                                           : "";
    emit(o, "const tecc::Pack<%s, VEC> t_q%d = %s%s;", st, i, held, operand_pack(e, c));
    item_pack_words(e, o, c, i);
    /* 16-bit values (a norm's w or b, a mask; 8-bit ones at VEC 16) in
     * a row that is not whole packs: aligned words and a shift
     * (tecc::load_unaligned), inside the operand's row (element by
     * element, the mask's took 8 registers a pack in flight where the
     * words take 5: masked_softmax bf16 spilled 84-228 bytes) */
    if (moves_words(e, c->v->dtype)) {
      else_block(o);
      emit(o, "const tecc::Pack<%s, VEC> t_q%d = tecc::load_unaligned%s<VEC>(%s, %s, t_red - t_r0, %s);", st, i,
           words_suffix(c->v->dtype), c->ptr, at_row(e, c->row, "t_r0"), operand_row_end(e, c->row));
      item_pack_words(e, o, c, i);
      close_block(o, "");
      continue;
    }
    else_block(o);
    emit(o, "#pragma unroll");
    open_block(o, "for (int t_j = 0; t_j < VEC; t_j++)");
    emit(o, "const IndexT t_r = t_r0 + t_j;");
    load_one(e, o, c, c->name, "t_j", "t_r < t_red");
    close_block(o, "");
    close_block(o, "");
  }
}

/* Opens the element loop of a pass: thread element t_e = t_k * VEC + t_j
 * is row element t_r = [t_base +] (lane + t_k * lanes) * VEC + t_j
 * (cvec: t_r = [t_base +] lane + t_k * lanes of column t_o = t_o0 + t_j). */
static void open_elements(SEmit *e, Out *o) {
  if (e->sk.shared) { /* SHARED: t_hu items at a time, each group unrolled (the other instances: one group, */
    emit(o, "#pragma unroll 1"); /* the same machine code as a loop unrolled whole; a count there was not) */
    emit(o, "for (int t_g = 0; t_g < ITEMS; t_g += t_hu)");
  }
  emit(o, "#pragma unroll");
  if (e->in_fold)
    open_block(o, "for (int t_k = t_f; t_k < t_f + FOLD; t_k++)");
  else if (e->sk.shared)
    open_block(o, "for (int t_k = t_g; t_k < (t_g + t_hu < ITEMS ? t_g + t_hu : ITEMS); t_k++)");
  else
    open_block(o, "for (int t_k = 0; t_k < ITEMS; t_k++)");
  emit(o, "const IndexT t_r0 = %s;", first_of_item(e));
  if (e->vdecl && !e->sk.rows)
    emit_fragment(o, e->vdecl);
  /* VEC > 1 only when rows are whole packs: one bound check per pack */
  open_block(o, "if (%s)", item_in(e));
  load_item_packs(e, o); /* rows: once for the thread's rows */
  if (e->sk.rows) {
    open_thread_rows(e, o, 1);
    if (e->vdecl)
      emit_fragment(o, e->vdecl);
  }
  if (e->ipre)
    emit_fragment(o, e->ipre);
  if (e->pack_values.len) /* t_may: the pack may hold a position the elements compare (pack_tests_position()) */
    open_block(o, "tecc::by_pack(%s, [&](auto t_may)", pack_test(e));
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_j = 0; t_j < VEC; t_j++)");
  if (e->used_elem)
    emit(o, "const int t_e = %s * VEC + t_j;", e->sk.rows ? "(t_i * ITEMS + t_k)" : "t_k");
  if (e->sk.vec || e->used_r || memchr(e->used_red, 1, sizeof e->used_red))
    emit(o, "const IndexT t_r = t_r0%s;", e->sk.cvec ? "" : " + t_j");
  if (e->sk.vec && !e->past_end_ok) /* without packs, the row may end inside the last one */
    emit(o, "if (!t_packs && t_r >= t_red) break;");
  if (e->sk.cvec) { /* without packs, the columns may end inside the last one (a block, not a break: */
    emit(o, "const IndexT t_o = t_o0 + t_j;"); /* a break kept an f64 column's registers in local memory) */
    open_block(o, "if (t_packs || t_o < t_outer)");
  }
}

static void close_elements(SEmit *e, Out *o) {
  if (e->sk.cvec)
    close_block(o, "");
  close_block(o, "");
  if (e->pack_values.len)
    close_block(o, ");");
  if (e->ipost)
    emit_fragment(o, e->ipost);
  if (e->sk.rows) {
    if (e->vafter)
      emit_fragment(o, e->vafter);
    close_thread_rows(o, 1);
  }
  close_block(o, "");
  if (e->vafter && !e->sk.rows)
    emit_fragment(o, e->vafter);
  close_block(o, "");
}

static void start_pass(SEmit *e) {
  forget_element_names(e);
  e->pre = new_out(e->sk.a);
  e->body = new_out(e->sk.a);
  e->memo.len = 0;
  e->pass++;
  e->vdecl = e->vafter = NULL;
  e->ipre = new_out(e->sk.a);
  e->ipost = new_out(e->sk.a);
  memset(e->used_red, 0, sizeof e->used_red);
  e->used_elem = e->used_r = e->past_end_ok = e->item_guards = 0;
  e->pack_values.len = 0;
}

static void load_cached(SEmit *e, Out *o, int pass);
static void load_chunk(SEmit *e, PassParts *p);
static void chunk_loop(SEmit *e, Out *o, Out *body);
static void feed_partials(SEmit *e, Out *o);

/* A chunk of the pass p: its loads, the items it keeps, its elements. */
static void emit_chunk(Out *o, const PassParts *p) {
  emit_fragment(o, p->loads);
  emit_fragment(o, p->keeps);
  emit_fragment(o, p->chunk);
}

/* Writes a pass of the stream kernel from its pieces: before, the chunk
 * loop under its guard, after. */
static void write_pass(SEmit *e, Out *o, const PassParts *p) {
  if (p->whole) {
    emit_fragment(o, p->whole);
    return;
  }
  emit_fragment(o, p->before);
  open_block(o, "%s", p->guard);
  chunk_step(e, o);
  open_chunk_loop_dir(e, o, p->pass % 2);
  emit_chunk(o, p);
  close_block(o, "");
  close_block(o, "");
  emit_fragment(o, p->after);
}

/* The stream kernel's pass in pieces: written in place, or kept for the
 * pipe (row_body()). */
static void place_pass(SEmit *e, Out *o, PassParts p) {
  if (e->parts)
    e->parts[e->nparts++] = p;
  else
    write_pass(e, o, &p);
}

/* The pieces of a stream pass around its chunk, `before` holding the
 * pass's row-scope values and `head`. */
static PassParts pass_parts(SEmit *e, const Out *head) {
  Arena *a = e->sk.a;
  PassParts p = {new_out(a), new_out(a), new_out(a), new_out(a), new_out(a), NULL, live_guard(e), e->pre->b->len > 0,
                 e->pass, e->item_guards};
  emit_fragment(p.before, e->pre);
  if (head)
    emit_fragment(p.before, head);
  return p;
}

/* Writes the pass: its row-scope values, `head`, the element loop (in
 * t_live rows; stream kernel: in chunks), then `tail` (either may be NULL). */
static void end_pass(SEmit *e, Out *o, const Out *head, const Out *tail) {
  if (!e->sk.reg) {
    PassParts p = pass_parts(e, head);
    load_chunk(e, &p);
    chunk_loop(e, p.chunk, e->body);
    if (stitch_split_kernel(&e->sk) && e->pass == 1)
      feed_partials(e, p.after);
    if (tail)
      emit_fragment(p.after, tail);
    place_pass(e, o, p);
    return;
  }
  emit_fragment(o, e->pre);
  if (head)
    emit_fragment(o, head);
  open_block(o, "%s", live_guard(e));
  chunk_loop(e, o, e->body);
  close_block(o, "");
  if (tail)
    emit_fragment(o, tail);
}

/* acc = the row's fold of every thread's accumulator `acc` (cvec: the
 * array over the thread's columns, in place). */
static void emit_allreduce(SEmit *e, Out *o, const char *acc, const Red *x) {
  e->uses_smem = 1;
  if (e->sk.cvec) {
    emit(o, "tecc::column_allreduce_vec(%s, %s, (%s *)t_smem);", acc, x->op, x->type);
    return;
  }
  const char *at = row_ref(e, acc);
  const char *fn = !e->sk.row && !e->sk.item ? "tecc::column_allreduce" : e->sk.lanes ? "tecc::lanes_allreduce<LANES>" : "tecc::row_allreduce";
  row_stmt(e, o, arena_printf(e->sk.a, "%s = %s(%s, %s, (%s *)t_smem);", at, fn, at, x->op, x->type), 0);
}

/* The row scalar of reduction `r`: `val`, its all-reduced accumulator
 * (x's type), in r's type. */
static void row_scalar(SEmit *e, Out *o, Value *r, const char *val, const Red *x) {
  const char *name = kernel_name_for(e, base_name(e, r));
  row_decl(e, o, cu_compute_ctype(r->dtype), name, cu_convert(e->sk.a, val, x->dt, r->dtype), 0, NULL, 0);
  e->red_name[r->id] = row_ref(e, name);
}

/* A float sum (or mean) of a product computed here accumulates with one
 * fused multiply-add, acc = fma(a, b, acc): one instruction and one
 * rounding an element instead of two (rowstats' and the norms' squares;
 * bf16 rowstats on an H100 +0.6 to +2.3 points of copy, bench/NOTES.md).
 * It is written out, so the packed and element-by-element loops and every
 * variant round alike (doc/abi.md, determinism).  A product read from
 * memory, kept in registers or already computed in this pass is added. */
static const char *fused_product_step(SEmit *e, Value *r, const Red *x, const char *acc, const int *map) {
  Value *p = r->args[0];
  if ((r->rop != RED_SUM && r->rop != RED_MEAN) || (x->dt != DT_F32 && x->dt != DT_F64))
    return NULL;
  if (p->op != IR_BINARY || p->bop != BIN_MUL || cu_compute_dtype(p->dtype) != x->dt)
    return NULL;
  if (!varies_along_row(e, p, map) || from_memory(e, p) || is_kept(e, p) || memo_find(&e->memo, p, map))
    return NULL;
  const char *a = sval(e, p->args[0], map), *b = sval(e, p->args[1], map);
  return arena_printf(e->sk.a, "tecc::fma(%s, %s, %s)", a, b, acc);
}

/* A max or min of a 16-bit float tensor the pass holds two to a 32-bit
 * word (bf16 or f16 rows in packs), as softmax's and logsumexp's max of
 * x: each item's words fold into a pair accumulator t_pk<id> with one
 * max.NaN.bf16x2 (f16x2) for two elements, where an element at a time
 * takes a conversion and a max.NaN.f32 each; the pair folds into the f32
 * accumulator after the loop.  Card and logsumexp bf16 rows of 11008
 * and longer gained 0.9 to 1.6 points of copy on an H100
 * (bench/NOTES.md).  A max is exact, and a NaN gives the canonical one
 * in both, so the instances agree bit for bit (sm_80 and later:
 * tecc::pairs_minmax(), else an element at a time; pairs_on()).  Returns
 * the array it reads, or NULL. */
static const Cached *paired_minmax(SEmit *e, Value *r, const Red *x) {
  Value *v = r->args[0];
  if (v->op == IR_CAST && v->dtype == DT_F32) /* a 16-bit float widened: exact */
    v = v->args[0];
  if (!e->sk.vec || (r->rop != RED_MAX && r->rop != RED_MIN) || x->dt != DT_F32 || !dtype_is_16bit(v->dtype) ||
      !from_memory(e, v))
    return NULL;
  const Cached *c = find_cached(e, v, NULL);
  return c && c->pairs ? c : NULL;
}

/* The instances that fold pairs: packs (sm_80 and later), in the reg
 * kernel where a thread holds 8 packs an item or more.  With 4 (32
 * values of 16 bits), ptxas keeps the max's conversions for the next
 * level's pass, so the pairs save a max.NaN.f32 an element and cost its
 * conversion later: card, logsumexp and cross_entropy bf16 rows of 256 to
 * 4096 lost 0.5 to 2.5 points of copy on an H100.  With 8 it converts the
 * values again for the next pass either way (rows of 11008 and 16384
 * gained 1.3 to 1.6), as the stream kernel does for each chunk. */
static const char *pairs_on(const SEmit *e) {
  return e->sk.reg ? "t_packs && tecc::pairs_minmax(VEC) && ITEMS >= 8" : "t_packs && tecc::pairs_minmax(VEC)";
}

/* The pair accumulator of r (paired_minmax()): declared in `head`, each
 * item's words folded in (e->ipre), then into `acc` in `fold`. */
static void pair_minmax(SEmit *e, Value *r, const Cached *c, const Red *x, const char *acc, Out *head, Out *fold) {
  const int mx = r->rop == RED_MAX, bf = c->v->dtype == DT_BF16;
  const char *pk_name = arena_printf(e->sk.a, "t_pk%d", r->id), *pk = row_ref(e, pk_name);
  const char *inf = bf ? (mx ? "0xff80ff80u" : "0x7f807f80u") : (mx ? "0xfc00fc00u" : "0x7c007c00u");
  row_decl(e, head, "uint32_t", pk_name, inf, 1, mx ? "two elements' max a word" : "two elements' min a word", 0);
  open_block(e->ipre, "if (%s)", pairs_on(e));
  emit(e->ipre, "#pragma unroll");
  emit(e->ipre, "for (int t_w = 0; t_w < VEC / 2; t_w++) %s = tecc::minmax_pairs<%s, %s>(%s, %s[%s * (VEC / 2) + t_w]);",
       pk, mx ? "true" : "false", bf ? "true" : "false", pk, c->name, e->sk.rows ? "(t_i * ITEMS + t_k)" : "t_k");
  close_block(e->ipre, "");
  const char *words = arena_printf(e->sk.a, "&%s", pk);
  row_stmt(e, fold, arena_printf(e->sk.a, "if (%s) %s = %s(%s, %s(%s, %s));", pairs_on(e), acc, x->op, acc, x->op,
                                 pair_elem(e->sk.a, c->v->dtype, words, "0"), pair_elem(e->sk.a, c->v->dtype, words, "1")), 0);
}

/* A reduction's accumulator t_acc<id>, declared in `head`; returns it as
 * read (row_ref()). */
static const char *reduce_acc(SEmit *e, Value *r, const Red *x, Out *head) {
  const char *acc_name = arena_printf(e->sk.a, "t_acc%d", r->id);
  row_decl(e, head, x->type, acc_name, x->identity, 1, NULL, 0);
  return row_ref(e, acc_name);
}

/* The parameter holding the reciprocal for a mean of compute type `type`. */
static const char *rcount_param(SEmit *e, const char *type) {
  return param(e, P_RCOUNT, strcmp(type, "double") == 0, NULL);
}

/* A row's mean from its sum `acc` (of compute type `type`): the sum
 * times the reciprocal of the row's length, as PyTorch's mean computes it
 * (exact where the length is a power of two, else within 1.5 ulp of the
 * quotient).  The launching host code divides once (t_rcount): a division
 * in the kernel was an IEEE quotient on each row's path between its
 * passes, and one hoisted to the kernel's start delayed a block's first
 * loads (bench/NOTES.md, issue 12). */
static const char *mean_of(SEmit *e, const char *acc, const char *type) {
  return arena_printf(e->sk.a, "tecc::mul(%s, %s)", acc, rcount_param(e, type));
}

/* Both kernels of a group take the reciprocals of every mean in it, so
 * that one launch list serves both (the stream kernel's moments may not
 * divide where the register kernel does). */
static void declare_rcounts(SEmit *e) {
  for (int i = 0; i < e->sk.st->reduces.len; i++) {
    const Value *r = e->sk.st->reduces.items[i];
    if (r->rop == RED_MEAN)
      rcount_param(e, red_of(e->sk.a, r).type);
  }
}

/* r's accumulator as read (row_ref()). */
static const char *acc_ref(SEmit *e, const Value *r) {
  return row_ref(e, arena_printf(e->sk.a, "t_acc%d", r->id));
}

/* An accumulator a level's all-reduce folds: reduction r's (t_acc<id>),
 * whose row scalar follows, or (r NULL) one whose sum another reduction's
 * row scalar reads (the shifted moments'). */
typedef struct Fold {
  const char *acc; /* its name */
  Red x;
  Value *r;
} Fold;

static Fold fold_of(SEmit *e, Value *r) {
  return (Fold){arena_printf(e->sk.a, "t_acc%d", r->id), red_of(e->sk.a, r), r};
}

/* After f's block all-reduce: r's row scalar. */
static void fold_scalar(SEmit *e, const Fold *f, Out *tail) {
  const char *acc = row_ref(e, f->acc);
  if (f->r)
    row_scalar(e, tail, f->r, f->r->rop == RED_MEAN ? mean_of(e, acc, f->x.type) : acc, &f->x);
}

/* After f's block all-reduce: the cluster's, and r's row scalar. */
static void fold_across_cluster(SEmit *e, const Fold *f, Out *tail) {
  const char *acc = row_ref(e, f->acc);
  if (e->sk.cluster) {
    e->uses_slot = 1;
    open_block(tail, "if (CLUSTER)");
    row_stmt(e, tail, arena_printf(e->sk.a, "%s = tecc::cluster_allreduce(%s, %s, t_slot, t_par);", acc, acc, f->x.op),
             0);
    close_block(tail, "");
  }
  fold_scalar(e, f, tail);
}

/* The accumulators fs[0..n) (one type and operation), all-reduced across
 * the cluster as many at a time as a 16-byte slot holds
 * (tecc::cluster_allreduce_n), in `tail`. */
static void cluster_fold_together(SEmit *e, const Fold *fs, int n, Out *tail) {
  const int per = 16 / (strcmp(fs->x.type, "double") == 0 || strcmp(fs->x.type, "int64_t") == 0 ? 8 : 4);
  const char *at = thread_index(e);
  e->uses_slot = 1;
  open_block(tail, "if (CLUSTER)");
  if (at) {
    emit(tail, "#pragma unroll");
    open_block(tail, "for (int %s = 0; %s < ROWS; %s++)", at, at, at);
  }
  for (int i = 0; i < n; i += per) {
    int k = n - i < per ? n - i : per;
    Buf init;
    buf_init(&init, e->sk.a);
    for (int j = 0; j < k; j++)
      buf_printf(&init, "%s%s", j ? ", " : "", row_ref(e, fs[i + j].acc));
    if (n > per)
      open_scope(tail);
    emit(tail, "%s t_cl[%d] = {%s};", fs->x.type, k, buf_cstr(&init));
    emit(tail, "tecc::cluster_allreduce_n(t_cl, %s, t_slot, t_par);", fs->x.op);
    for (int j = 0; j < k; j++)
      emit(tail, "%s = t_cl[%d];", row_ref(e, fs[i + j].acc), j);
    if (n > per)
      close_block(tail, "");
  }
  if (at)
    close_block(tail, "");
  close_block(tail, "");
}

/* After the pass: f's block all-reduce (and the cluster's) and the row
 * scalar, in `tail`. */
static void reduce_finish(SEmit *e, const Fold *f, Out *tail) {
  emit_allreduce(e, tail, f->acc, &f->x);
  fold_across_cluster(e, f, tail);
}

/* After the pass, the accumulators `fs` of one level of a row stitch that
 * share a type and an operation: their block all-reduces in one
 * tecc::lanes_allreduce_n (one pair of barriers for all, where
 * layernorm's backward took eight a row), then their cluster all-reduces
 * together and each one's row scalar, in `tail`. */
static void reduce_finish_together(SEmit *e, const Fold *fs, int n, Out *tail) {
  const char *at = thread_index(e);
  if (at) {
    emit(tail, "#pragma unroll");
    open_block(tail, "for (int %s = 0; %s < ROWS; %s++)", at, at, at);
  } else {
    open_scope(tail);
  }
  Buf init;
  buf_init(&init, e->sk.a);
  for (int i = 0; i < n; i++)
    buf_printf(&init, "%s%s", i ? ", " : "", row_ref(e, fs[i].acc));
  emit(tail, "%s t_all[%d] = {%s};", fs->x.type, n, buf_cstr(&init));
  emit(tail, "tecc::lanes_allreduce_n<%s>(t_all, %s, (%s *)t_smem);", e->sk.lanes ? "LANES" : "0", fs->x.op,
       fs->x.type);
  e->uses_smem = 1;
  for (int i = 0; i < n; i++)
    emit(tail, "%s = t_all[%d];", row_ref(e, fs[i].acc), i);
  close_block(tail, "");
  if (e->sk.cluster)
    cluster_fold_together(e, fs, n, tail);
  for (int i = 0; i < n; i++)
    fold_scalar(e, &fs[i], tail);
}

/* The most values one tecc::lanes_allreduce_n takes: K * 32 of them (of
 * at most 8 bytes) stay inside the row kernels' 8 KB of t_smem. */
enum { ALLREDUCE_TOGETHER = 8 };

/* After the pass: the all-reduces of a level's accumulators `fs` (the
 * reductions in the order of the stitch, then the shifted moments'
 * sums); where the kernel folds rows, those of one accumulator type and
 * operation together (reduce_finish_together()). */
static void finish_level(SEmit *e, const Fold *fs, int n, Out *tail) {
  const int rows = e->sk.row && !e->sk.cvec;
  char *done = ARENA_ARRAY(e->sk.a, char, n + 1);
  Fold *same = ARENA_ARRAY(e->sk.a, Fold, n + 1);
  for (int i = 0; i < n; i++) {
    if (done[i])
      continue;
    int nsame = 0;
    for (int j = i; j < n && rows && nsame < ALLREDUCE_TOGETHER; j++) {
      if (!done[j] && strcmp(fs[i].x.type, fs[j].x.type) == 0 && strcmp(fs[i].x.op, fs[j].x.op) == 0) {
        same[nsame++] = fs[j];
        done[j] = 1;
      }
    }
    if (nsame > 1)
      reduce_finish_together(e, same, nsame, tail);
    else
      reduce_finish(e, &fs[i], tail);
  }
}

/* The accumulators a level's all-reduce folds, in order. */
typedef struct Folds {
  Fold *items;
  int len, cap;
} Folds;

static void add_fold(SEmit *e, Folds *fs, Fold f) {
  if (fs->len == fs->cap) {
    int cap = fs->cap ? 2 * fs->cap : 8;
    Fold *items = ARENA_ARRAY(e->sk.a, Fold, cap);
    if (fs->len)
      memcpy(items, fs->items, sizeof *items * (size_t)fs->len);
    fs->items = items;
    fs->cap = cap;
  }
  fs->items[fs->len++] = f;
}

/* One reduction of a pass: its accumulator (`head`), its step per element,
 * the block all-reduce and the row scalar (`tail`; where `later` is given,
 * r joins it and finish_level() finishes it); a pair accumulator folds in
 * `fold` (NULL: `tail`). */
static void reduce_one(SEmit *e, Value *r, const int *map, Out *head, Out *tail, Out *fold, Folds *later) {
  Red x = red_of(e->sk.a, r);
  const char *acc = reduce_acc(e, r, &x, head);
  const char *step = fused_product_step(e, r, &x, acc, map);
  const Cached *pairs = NULL;
  if (!step) {
    const char *arg = sval(e, r->args[0], map);
    step = arena_printf(e->sk.a, "%s(%s, %s)", x.op, acc, cu_convert(e->sk.a, arg, r->args[0]->dtype, x.dt));
    pairs = paired_minmax(e, r, &x);
  }
  if (pairs) {
    pair_minmax(e, r, pairs, &x, acc, head, fold ? fold : tail);
    emit(e->body, "if (!(%s)) %s = %s;", pairs_on(e), acc, step);
  } else {
    emit(e->body, "%s = %s;", acc, step);
  }
  Fold f = fold_of(e, r);
  if (later)
    add_fold(e, later, f);
  else
    reduce_finish(e, &f, tail);
}

/* A sum of a constant over the row (the count a mean's gradient divides
 * by, sum(1) over the row) is the constant times the row's length: no
 * accumulator and no all-reduce (layernorm's backward had two int64 ones
 * a row). */
static const Value *summed_constant(const Value *r) {
  return r->rop == RED_SUM ? ir_const_of(r->args[0]) : NULL;
}

static void closed_form_sum(SEmit *e, Value *r, Out *tail) {
  Red x = red_of(e->sk.a, r);
  const Value *c = summed_constant(r);
  const char *val = arena_printf(e->sk.a, "(%s)%s * (%s)t_red", x.type, cu_const_literal(e->sk.a, c), x.type);
  row_scalar(e, tail, r, val, &x);
}

/* ---- shifted moments (register kernel) ------------------------------------ */

/* A level of centred sums (stitch_shifted_level(): var's squares,
 * layernorm's backward's sum(g * (x - mean))) joins the pass of its
 * means' level.  Each mean m of x takes a shift K, the row's first
 * element of x (every thread loads it); the pass adds S = sum(x - K) and,
 * for each centred sum r, sum((x - K)^2) or sum(o * (x - K)), o one the
 * level before sums (stitch_shifted_mean()); after the level's one
 * all-reduce, with m - K = S / n,
 *   sum((x - m)^2) = sum((x - K)^2) - S (m - K)   (at least 0),
 *   sum(o (x - m)) = sum(o (x - K)) - (m - K) sum(o).
 * K is a value of the row, so the terms are of the row's spread, not of
 * its mean (the "shifted data" form of the variance: no cancellation
 * where the mean is large beside the spread, as in the one-pass sum of
 * squares).  A pass and a pair of barriers less a row: layernorm bf16 at
 * 8192 x 4096 forward 39.2 -> 35.7 us, backward -3 to -6%, groupnorm
 * bf16 -13%; rows of 256 to 512 (the warp variant, no barriers to save)
 * -1 to +3% (H200, bench/NOTES.md, issue 46).  The bits differ from the
 * two passes'. */
/* x's first element of the thread's row as the shift (a thread past the
 * last row loads row 0's, which no sum of it reads: an unconditional
 * load, where a guarded one spilled var_bf16's warp instances for rows
 * that are not whole packs, 4 bytes at 64 registers), through the
 * read-only path (__ldg): a plain load under the test of an empty row
 * spilled var_f64's and layernorm's instances 4 to 12 bytes, at 32 to 80
 * registers of a bound that allowed more (ptxas -v, sm_90). */
static const char *shift_load(SEmit *e, const Value *x, const Red *acc) {
  const Value *in = x->op == IR_CAST ? x->args[0] : x;
  const char *mem = arena_printf(e->sk.a, "__ldg(%s + (%s ? t_o : 0) * %s)", mem_param(e, (Value *)in),
                                 row_live_operand(e), row_runs(e) ? run_length(e) : "t_red");
  const char *val = cu_convert(e->sk.a, cu_load_conv_of(e->sk.a, e->sk.k, in, mem), cu_compute_dtype(in->dtype), acc->dt);
  return arena_printf(e->sk.a, "t_red > 0 ? %s : %s", val, acc->identity);
}

/* ... where the row's lanes are a warp's (LANES, the warp variant): the
 * first lane's first element of the held row, by a shuffle, since a load
 * of it waits on memory once a row (the warp variant loads its next
 * rows ahead; layernorm bf16 at 32768 x 256 lost 8% to the load, H200). */
static const char *shift_of(SEmit *e, const Value *x, const Red *acc) {
  const char *load = shift_load(e, x, acc);
  const Cached *c = find_cached(e, x->op == IR_CAST ? x->args[0] : x, NULL);
  if (!e->sk.lanes || !c)
    return load;
  const char *at = e->sk.rows ? "t_i * ITEMS * VEC" : "0";
  const char *elem = c->quads ? quad_elem(e->sk.a, c, at)
                     : c->pairs ? pair_elem(e->sk.a, c->v->dtype, c->name, at)
                                : arena_printf(e->sk.a, "%s[%s]", c->name, at);
  elem = cu_convert(e->sk.a, elem, cu_compute_dtype(c->v->dtype), acc->dt);
  return arena_printf(e->sk.a, "LANES ? __shfl_sync(0xffffffffu, %s, 0, LANES > 0 ? LANES : (int)blockDim.x) : %s", elem,
                      load);
}

/* The sum of `other` the level before computes (layernorm's backward's
 * sum(dy * w), for its sum(dy * w * (x - mean)); stitch_shifted_mean()
 * takes no other): its accumulator. */
static const char *summed_before(SEmit *e, const Value *other, int level, const Red *x) {
  for (int i = 0; i < e->sk.st->reduces.len; i++) {
    const Value *r = e->sk.st->reduces.items[i];
    if (e->sk.st->level[r->id] == level - 1 && r->rop == RED_SUM && r->args[0] == other &&
        strcmp(red_of(e->sk.a, r).type, x->type) == 0 && !summed_constant(r))
      return arena_printf(e->sk.a, "t_acc%d", r->id);
  }
  internal_error("stitch: the shifted sum of %%%d has no sum of it the level before", other->id);
}

/* r's mean when r is one of the level's centred sums (*other as
 * stitch_shifted_mean() gives it); NULL for a reduction of another level. */
static Value *shifted_at(SEmit *e, Value *r, int level, Value **other) {
  if (e->sk.st->level[r->id] != level)
    return NULL;
  Value *m = stitch_shifted_mean(e->sk.g, r, level, other);
  if (!m)
    internal_error("stitch: a shifted pass's reduction %%%d is no centred sum", r->id);
  return m;
}

/* The level's centred sums, added in this pass about their shifts (their
 * accumulators and those of S join `folds`, with no row scalar of their
 * own: shifted_scalars() writes those). */
static void shifted_sums(SEmit *e, int level, const int *map, Out *head, Folds *folds) {
  PtrVec means = {0};
  for (int i = 0; i < e->sk.st->reduces.len; i++) {
    Value *r = e->sk.st->reduces.items[i], *other = NULL, *m = shifted_at(e, r, level, &other);
    if (!m)
      continue;
    Red x = red_of(e->sk.a, r);
    const char *dev = arena_printf(e->sk.a, "t_dv%d", m->id);
    if (!vec_contains(&means, m)) {
      vec_push(e->sk.a, &means, m);
      const char *k = arena_printf(e->sk.a, "t_sk%d", m->id), *s = arena_printf(e->sk.a, "t_ss%d", m->id);
      const char *xe = sval(e, m->args[0], map); /* x's held row (shift_of() may read it) */
      row_decl(e, head, x.type, k, shift_of(e, m->args[0], &x), 0, "the shift: the row's first element", 1);
      row_decl(e, head, x.type, s, x.identity, 1, NULL, 0);
      emit(e->body, "const %s %s = tecc::sub(%s, %s);", x.type, dev, xe, row_ref(e, k));
      emit(e->body, "%s = %s(%s, %s);", row_ref(e, s), x.op, row_ref(e, s), dev);
      add_fold(e, folds, (Fold){s, x, NULL});
    }
    const char *acc = reduce_acc(e, r, &x, head);
    const char *o = other ? cu_convert(e->sk.a, sval(e, other, map), other->dtype, x.dt) : dev;
    emit(e->body, "%s = tecc::fma(%s, %s, %s);", acc, o, dev, acc);
    add_fold(e, folds, (Fold){arena_printf(e->sk.a, "t_acc%d", r->id), x, NULL});
  }
}

/* After the all-reduce: the centred sums' row scalars. */
static void shifted_scalars(SEmit *e, int level, Out *tail) {
  PtrVec means = {0};
  for (int i = 0; i < e->sk.st->reduces.len; i++) {
    Value *r = e->sk.st->reduces.items[i], *other = NULL, *m = shifted_at(e, r, level, &other);
    if (!m)
      continue;
    Red x = red_of(e->sk.a, r);
    const char *d = arena_printf(e->sk.a, "t_sd%d", m->id), *s = row_ref(e, arena_printf(e->sk.a, "t_ss%d", m->id));
    if (!vec_contains(&means, m)) {
      vec_push(e->sk.a, &means, m);
      /* an empty row's reciprocal is inf: the largest finite one keeps its sums 0, not 0 * inf (a test of
         t_red spilled layernorm bf16's warp instances, 4 bytes at 64 registers) */
      const int f64 = strcmp(x.type, "double") == 0;
      const char *rc = arena_printf(e->sk.a, f64 ? "fmin(%s, 1.7976931348623157e308)" : "fminf(%s, 3.40282347e38f)",
                                    rcount_param(e, x.type));
      row_decl(e, tail, x.type, d, arena_printf(e->sk.a, "tecc::mul(%s, %s)", s, rc), 0, "the mean less the shift", 0);
    }
    const char *acc = acc_ref(e, r), *sum;
    if (!other)
      sum = arena_printf(e->sk.a, "tecc::maximum(tecc::sub(%s, tecc::mul(%s, %s)), %s)", acc, s, row_ref(e, d),
                         x.identity);
    else
      sum = arena_printf(e->sk.a, "tecc::sub(%s, tecc::mul(%s, %s))", acc, row_ref(e, d),
                         row_ref(e, summed_before(e, other, level, &x)));
    row_scalar(e, tail, r, r->rop == RED_MEAN ? mean_of(e, sum, x.type) : sum, &x);
  }
}

static void early_outputs(SEmit *e);
static void row_output(SEmit *e, Value *v, const int *map, int part);

/* The pipe's first pass declares its accumulators in `head`: `resets`
 * sets them back for the next row (row_decl()). */
static void first_pass_head(SEmit *e, const Out *head) {
  e->reset_head = e->parts && e->nparts == 0 ? head : NULL;
}

static void reduction_pass(SEmit *e, Out *o, const PlanPass *p) {
  int map[TECC_MAX_RANK], level = p->level;
  identity_map(map, e->sk.g->domain.rank);
  start_pass(e);
  e->item_guards = level == 1 && e->sk.first_guards;
  Out *head = new_out(e->sk.a), *tail = new_out(e->sk.a);
  first_pass_head(e, head);
  if (p->kind == PASS_SHIFTED)
    emit(head, "/* levels %d-%d: level %d's centred sums about the row's first element */", level, level + 1,
         level + 1);
  else
    emit(head, "/* level %d */", level);
  Folds reduced = {0};
  for (int i = 0; i < e->sk.st->reduces.len; i++) {
    Value *r = e->sk.st->reduces.items[i];
    if (e->sk.st->level[r->id] != level)
      continue;
    if (p->kind == PASS_SHIFTED && stitch_mean_only_shifts(e->sk.kp, e->sk.g, r))
      continue; /* var alone: the shift's deviations are all its mean is for */
    if (summed_constant(r) && !stitch_split_kernel(&e->sk)) /* a split folds every accumulator's partials */
      closed_form_sum(e, r, tail);
    else
      reduce_one(e, r, map, head, tail, NULL, &reduced);
  }
  if (p->kind == PASS_SHIFTED)
    shifted_sums(e, level + 1, map, head, &reduced);
  finish_level(e, reduced.items, reduced.len, tail);
  if (p->kind == PASS_SHIFTED)
    shifted_scalars(e, level + 1, tail);
  if (level == 1)
    early_outputs(e);
  for (int i = 0; i < p->writes.len; i++) /* the stream kernel's outputs that need no level */
    row_output(e, p->writes.items[i], map, 0);
  end_pass(e, o, head, tail);
}

/* ---- second moments in one read (stream kernel) ---------------------------- */

/* var(x) lowers to mean((x - mean(x))**2): a level that reads the mean of
 * the level before, so the stream kernel would read the row twice (a long
 * f32 row of rowstats ran at 75% of copy on an H100; bench/NOTES.md).
 * Instead the pass of the mean also folds, chunk by chunk, the count,
 * mean and squared deviations of the chunk it holds in registers (two
 * loops over them), merged by tecc::MergeMoments: one read for both
 * levels, as accurate as two passes (stitch.h: stitch_moment_mean()).
 * The mean (or sum) of the values the moments centre adds up the chunk
 * sums they keep, after each chunk, not every element a second time
 * (sum_of_chunks()).  The plan says where (PASS_MOMENTS: rows only). */

/* The chunk loops of the moments of `r`: its element in loop 1 (`one`)
 * and loop 2 (`two`); `mid` (between them) and `merge` (after them) in
 * the chunk; `head`/`tail` around the pass. */
typedef struct MomentOuts {
  Out *decl, *one, *mid, *two, *merge, *head, *tail;
} MomentOuts;

static void moments_of_one(SEmit *e, Value *r, Value *a, const char *elem, MomentOuts *mo) {
  const char *t = cu_compute_ctype(a->dtype);
  const int id = r->id;
  emit(mo->head, "tecc::Moments<%s> t_mo%d = tecc::moments((%s)0, (%s)0, (%s)0);", t, id, t, t, t);
  emit(mo->decl, "%s t_cs%d = 0, t_cn%d = 0, t_cq%d = 0; /* this chunk's sum, count, squared deviations */", t, id,
       id, id);
  emit(mo->one, "t_cs%d = tecc::add(t_cs%d, %s);", id, id, elem);
  if (e->sk.vec) { /* whole packs: the count a pack at a time (exact, as every count of a chunk) */
    emit(mo->one, "if (!t_packs) t_cn%d = tecc::add(t_cn%d, (%s)1);", id, id, t);
    emit(e->ipost, "if (t_packs) t_cn%d = tecc::add(t_cn%d, (%s)VEC);", id, id, t);
  } else {
    emit(mo->one, "t_cn%d = tecc::add(t_cn%d, (%s)1);", id, id, t);
  }
  emit(mo->mid, "const %s t_cm%d = tecc::chunk_mean(t_cs%d, t_cn%d);", t, id, id, id);
  emit(mo->merge, "t_mo%d = tecc::MergeMoments()(t_mo%d, tecc::moments(t_cn%d, t_cm%d, t_cq%d));", id, id, id, id,
       id);
  emit(mo->tail, "t_mo%d = tecc::row_allreduce_moments(t_mo%d, (tecc::Moments<%s> *)t_smem);", id, id, t);
  e->uses_smem = 1;
  const char *name = kernel_name_for(e, base_name(e, r));
  const char *val = r->rop == RED_MEAN ? mean_of(e, arena_printf(e->sk.a, "t_mo%d.m2", id), t)
                                       : arena_printf(e->sk.a, "t_mo%d.m2", id);
  emit(mo->tail, "const %s %s = %s;", cu_compute_ctype(r->dtype), name, val);
  e->red_name[r->id] = name;
}

/* One chunk loop over the elements held: `body`. */
static void chunk_loop(SEmit *e, Out *o, Out *body) {
  e->body = body;
  open_elements(e, o);
  emit_decompose(e, o, "t_r", e->sk.st->axes, e->used_red);
  emit_fragment(o, body);
  close_elements(e, o);
}

static int moments_ahead(SEmit *e, const PtrVec *centred);
static void open_chunks_ahead(SEmit *e, Out *o);

/* Does the stream kernel fold its two-level passes in groups of FOLD
 * packs?  Where its instances for rows that are not whole packs take
 * fewer packs a chunk than the others (schedule.c, odd_rows()), the
 * online sums and the moments, which fold a chunk at a time (a chunk's
 * max, its sum and mean), fold FOLD packs at a time in every instance:
 * the same elements in the same groups, so the same bits whatever the
 * pointers' alignment (abi.md, Determinism). */
static int folds_in_groups(const SEmit *e) {
  return !e->sk.reg && stitch_takes_packs(&e->sk) && stream_variant(e)->folds;
}

/* A pass of two levels, chunk by chunk: `first`, loop 1 over the chunk's
 * elements (`one`), `mid`, loop 2 (`two`), then `last` (may be NULL);
 * `tail` after the pass; `ahead`: with the next chunk's loads in flight
 * (open_chunks_ahead(): the pass in one piece). */
static void two_loop_pass(SEmit *e, Out *o, Out *head, Out *first, Out *one, int one_elem, Out *mid, Out *two,
                          Out *last, const Out *tail, int ahead) {
  PassParts p = pass_parts(e, head);
  Out *c = p.chunk;
  if (ahead) {
    p.whole = new_out(e->sk.a);
    emit_fragment(p.whole, p.before);
    open_block(p.whole, "%s", p.guard);
    open_chunks_ahead(e, p.whole);
    c = p.whole;
  } else {
    load_chunk(e, &p);
  }
  e->in_fold = folds_in_groups(e);
  if (e->in_fold) {
    emit(c, "#pragma unroll");
    open_block(c, "for (int t_f = 0; t_f < ITEMS; t_f += FOLD)");
  }
  emit_fragment(c, first);
  int two_elem = e->used_elem; /* each loop names t_e only where its own elements read a held value */
  e->used_elem = one_elem;
  chunk_loop(e, c, one);
  emit_fragment(c, mid);
  e->ipre = e->ipost = NULL; /* loop 1's */
  e->used_elem = two_elem;
  chunk_loop(e, c, two);
  if (last)
    emit_fragment(c, last);
  if (e->in_fold)
    close_block(c, "");
  e->in_fold = 0;
  if (stitch_split_kernel(&e->sk) && e->pass == 1)
    feed_partials(e, p.after);
  emit_fragment(p.after, tail);
  if (ahead) {
    close_block(c, "");
    close_block(c, "");
    emit_fragment(c, p.after);
  }
  place_pass(e, o, p);
}

/* The moment of `seconds` whose chunk sums are what r sums (r a mean or
 * sum, in their type, of the value they centre), or NULL. */
static const Value *chunk_summed(const Value *r, const PtrVec *seconds, const PtrVec *centred) {
  if (r->rop != RED_SUM && r->rop != RED_MEAN)
    return NULL;
  for (int i = 0; i < centred->len; i++) {
    const Value *a = centred->items[i];
    if (r->args[0] == a && cu_compute_dtype(a->dtype) == stitch_acc_dtype(r))
      return seconds->items[i];
  }
  return NULL;
}

/* r's accumulator adds moment m's chunk sum t_cs<m> after each chunk: one
 * add a chunk instead of one an element, the sum blocked by chunks (on an
 * H100 rowstats bf16 rows streamed gained 0.8 to 1.7 points of copy with
 * the count a pack at a time; bench/NOTES.md).  The packed and element by
 * element instances keep the same chunk sums, so the same bits. */
static void sum_of_chunks(SEmit *e, Value *r, const Value *m, MomentOuts *mo) {
  Fold f = fold_of(e, r);
  const char *acc = reduce_acc(e, r, &f.x, mo->head);
  emit(mo->merge, "%s = %s(%s, t_cs%d);", acc, f.x.op, acc, m->id);
  reduce_finish(e, &f, mo->tail);
}

/* Levels `level` and `level` + 1 (its second moments) in one pass. */
static void moment_pass(SEmit *e, Out *o, int level) {
  int map[TECC_MAX_RANK];
  identity_map(map, e->sk.g->domain.rank);
  start_pass(e);
  MomentOuts mo;
  Out **outs[] = {&mo.decl, &mo.one, &mo.mid, &mo.two, &mo.merge, &mo.head, &mo.tail};
  for (size_t i = 0; i < sizeof outs / sizeof *outs; i++)
    *outs[i] = new_out(e->sk.a);
  emit(mo.head, "/* levels %d and %d in one read: level %d's second moments, chunk by chunk */", level, level + 1,
       level + 1);
  PtrVec seconds = {0}, centred = {0}; /* level + 1's moments, and the values they centre */
  for (int i = 0; i < e->sk.st->reduces.len; i++) {
    Value *r = e->sk.st->reduces.items[i];
    if (e->sk.st->level[r->id] == level + 1) {
      vec_push(e->sk.a, &seconds, r);
      vec_push(e->sk.a, &centred, stitch_moment_mean(e->sk.g, r, level + 1)->args[0]);
    }
  }
  for (int i = 0; i < e->sk.st->reduces.len; i++) {
    Value *r = e->sk.st->reduces.items[i];
    if (e->sk.st->level[r->id] != level || stitch_mean_only_centres(e->sk.kp, e->sk.g, r))
      continue;
    const Value *by = chunk_summed(r, &seconds, &centred);
    if (by)
      sum_of_chunks(e, r, by, &mo);
    else
      reduce_one(e, r, map, mo.head, mo.tail, NULL, NULL);
  }
  Out *one = e->body;
  for (int i = 0; i < seconds.len; i++)
    moments_of_one(e, seconds.items[i], centred.items[i], sval(e, centred.items[i], map), &mo);
  emit_fragment(one, mo.one);
  int one_elem = e->used_elem;
  /* loop 2: the element values anew, in their own scope */
  forget_element_names(e);
  e->memo.len = 0;
  e->used_elem = 0;
  e->body = mo.two;
  for (int i = 0; i < seconds.len; i++) {
    Value *r = seconds.items[i], *a = centred.items[i];
    const char *t = cu_compute_ctype(a->dtype), *elem = sval(e, a, map);
    emit(mo.two, "const %s t_dv%d = tecc::sub(%s, t_cm%d);", t, r->id, elem, r->id);
    emit(mo.two, "t_cq%d = tecc::fma(t_dv%d, t_dv%d, t_cq%d);", r->id, r->id, r->id, r->id);
  }
  two_loop_pass(e, o, mo.head, mo.decl, one, one_elem, mo.mid, mo.two, mo.merge, mo.tail, moments_ahead(e, &centred));
}

/* ---- online max-and-sum (stream kernel) ----------------------------------- */

/* softmax's sum(exp(v - max(v))) reads the max of the level before, so the
 * stream kernel would read the row once more for it (softmax f32 1024 x
 * 65536 on an H100: three reads, 0.84x torch.compile; bench/NOTES.md).
 * Instead the max's pass also sums exp(v - shift) chunk by chunk about
 * the thread's max so far (Milakov and Gimelshein's online normalizer):
 * after a chunk's max, the sum so far is rescaled by exp(old shift - new
 * shift) (tecc::rescale_exp), then the chunk's terms are added, one exp
 * each as in two passes.  After the pass each thread's sum is rescaled
 * to the row's shift, then summed across the row in the usual order:
 * deterministic, and within a few ulp of two passes (stitch.h:
 * stitch_online_max()).  The plan says where (PASS_ONLINE). */

/* The shift s of an online sum r = sum(exp(v - s)). */
static Value *online_shift(const Value *r) {
  return r->args[0]->args[0]->args[1];
}

/* The shift s of an online sum with its max m read as `at`. */
static const char *shift_at(SEmit *e, Value *s, const Value *m, const char *at) {
  while (s->op == IR_BROADCAST)
    s = s->args[0];
  if (s == m)
    return at;
  if (s->op == IR_CONST)
    return cu_const_literal(e->sk.a, s);
  const char *args[3] = {0};
  if (s->nargs > 3) /* an online shift is the max through elementwise operations (stitch.c), never a take */
    internal_error("stitch: the online shift %%%d has %d operands", s->id, s->nargs);
  for (int i = 0; i < s->nargs; i++)
    args[i] = shift_at(e, s->args[i], m, at);
  return cu_op_expr(e->sk.a, s, args);
}

/* The fragments of an online pass: `save` before a chunk's first loop,
 * `rescale` between its loops, `two` the second loop's elements; `head`
 * and `tail` around the pass. */
typedef struct OnlineOuts {
  Out *save, *rescale, *two, *head, *tail;
} OnlineOuts;

/* The online sum r = sum(exp(v - s)) of max m: accumulator t_os<r>. */
static void online_sum_of_one(SEmit *e, Value *r, Value *m, const int *map, OnlineOuts *oo) {
  Value *ex = r->args[0], *d = ex->args[0];
  Red x = red_of(e->sk.a, r);
  const char *t = cu_compute_ctype(m->dtype);
  const int id = r->id;
  const char *os = row_ref(e, arena_printf(e->sk.a, "t_os%d", id)), *sh = row_ref(e, arena_printf(e->sk.a, "t_sh%d", id));
  const char *acc = row_ref(e, arena_printf(e->sk.a, "t_acc%d", m->id)), *pm = row_ref(e, arena_printf(e->sk.a, "t_pm%d", id));
  row_decl(e, oo->head, x.type, arena_printf(e->sk.a, "t_os%d", id), x.identity, 1,
           "sum of exp about this thread's shift so far", 0);
  row_decl(e, oo->save, t, arena_printf(e->sk.a, "t_pm%d", id), acc, 0, "the thread's max before this chunk", 0);
  row_decl(e, oo->rescale, t, arena_printf(e->sk.a, "t_sh%d", id), shift_at(e, online_shift(r), m, acc), 0, NULL, 0);
  row_stmt(e, oo->rescale,
           arena_printf(e->sk.a, "%s = tecc::rescale_exp(%s, %s, %s);", os, os, shift_at(e, online_shift(r), m, pm), sh), 0);
  const char *dargs[] = {sval(e, d->args[0], map), sh};
  const char *eargs[] = {cu_op_expr(e->sk.a, d, dargs)};
  const char *term = cu_convert(e->sk.a, cu_op_expr(e->sk.a, ex, eargs), ex->dtype, x.dt);
  emit(oo->two, "%s = %s(%s, %s);", os, x.op, os, term);
}

/* After the pass: each thread's sum about its own max, rescaled to the
 * row's shift, then summed across the row. */
static void online_sum_tail(SEmit *e, Value *r, Value *m, Out *before, Out *after) {
  Red x = red_of(e->sk.a, r);
  Value *s = online_shift(r);
  const int id = r->id;
  const char *os_name = arena_printf(e->sk.a, "t_os%d", id), *os = row_ref(e, os_name);
  const char *tm = row_ref(e, arena_printf(e->sk.a, "t_tm%d", id));
  row_decl(e, before, cu_compute_ctype(m->dtype), arena_printf(e->sk.a, "t_tm%d", id),
           row_ref(e, arena_printf(e->sk.a, "t_acc%d", m->id)), 0, "the thread's own max", 0);
  row_stmt(e, after, arena_printf(e->sk.a, "%s = tecc::rescale_exp(%s, %s, %s);", os, os, shift_at(e, s, m, tm),
                                  shift_at(e, s, m, e->red_name[m->id])), 0);
  emit_allreduce(e, after, os_name, &x);
  row_scalar(e, after, r, os, &x);
}

/* Levels `level` and `level` + 1 (its online sums) in one pass. */
static void online_pass(SEmit *e, Out *o, int level) {
  int map[TECC_MAX_RANK];
  identity_map(map, e->sk.g->domain.rank);
  start_pass(e);
  OnlineOuts oo;
  Out **outs[] = {&oo.save, &oo.rescale, &oo.two, &oo.head, &oo.tail};
  for (size_t i = 0; i < sizeof outs / sizeof *outs; i++)
    *outs[i] = new_out(e->sk.a);
  Out *level_tail = new_out(e->sk.a);
  first_pass_head(e, oo.head);
  emit(oo.head, "/* levels %d and %d in one read: level %d's sums of exp, rescaled as the max grows */", level,
       level + 1, level + 1);
  for (int i = 0; i < e->sk.st->reduces.len; i++) {
    Value *r = e->sk.st->reduces.items[i];
    if (e->sk.st->level[r->id] == level)
      reduce_one(e, r, map, oo.head, level_tail, oo.rescale, NULL);
  }
  Out *one = e->body;
  int one_elem = e->used_elem;
  /* loop 2: the element values anew, in their own scope */
  forget_element_names(e);
  e->memo.len = 0;
  e->used_elem = 0;
  e->body = oo.two;
  PtrVec sums = {0};
  for (int i = 0; i < e->sk.st->reduces.len; i++) {
    Value *r = e->sk.st->reduces.items[i];
    if (e->sk.st->level[r->id] == level + 1) {
      vec_push(e->sk.a, &sums, r);
      online_sum_of_one(e, r, stitch_online_max(e->sk.g, r, level + 1), map, &oo);
    }
  }
  Out *after = new_out(e->sk.a);
  for (int i = 0; i < sums.len; i++) {
    Value *r = sums.items[i];
    online_sum_tail(e, r, stitch_online_max(e->sk.g, r, level + 1), oo.tail, after);
  }
  emit_fragment(oo.tail, level_tail);
  emit_fragment(oo.tail, after);
  two_loop_pass(e, o, oo.head, oo.save, one, one_elem, oo.rescale, oo.two, NULL, oo.tail, 0);
}

/* ---- outputs ---------------------------------------------------------------- */

/* Stores `expr` in every buffer `v` lives in, at `off`. */
static void emit_stores(SEmit *e, Out *o, Value *v, const char *expr, const char *off) {
  const char *stored = cu_store_conv(e->sk.a, v->dtype, expr);
  for (int i = 0; i < e->sk.k->noutputs; i++)
    if (e->sk.k->outputs[i].value == v)
      emit(o, "%s[%s] = %s;", param(e, P_OUTPUT, i, NULL), off, stored);
  if (e->sk.kp->home[v->id].kind == HOME_WORKSPACE)
    emit(o, "%s[%s] = %s;", param(e, P_WS_WRITE, v->id, v), off, stored);
}

/* Does the kernel hold 16-bit values two to a word (Cached.pairs)?  Its
 * 16-bit column outputs are stored through words where the columns are
 * not whole packs (columns_in_words()): in a kernel of f32 elements
 * (bias_gelu bf16's backward, the heavy split) they made it 1.09x slower
 * at 8192 x 14335 and 4096 x 11007 (H200). */
static int holds_pairs(const SEmit *e) {
  for (int i = 0; i < e->cached.len; i++)
    if (((const Cached *)e->cached.items[i])->pairs)
      return 1;
  return 0;
}

/* Its outputs: each pack stored through the aligned 4-byte words it spans
 * (tecc::store_unaligned). */
static int stores_unaligned(const SEmit *e, DType t) {
  if (e->sk.cvec)
    return dtype_is_16bit(t) && holds_pairs(e);
  return moves_words(e, t);
}

/* What more than whole packs (t_packs) a 16-bit output's aligned 16-byte
 * store needs, where the others go through words (stores_unaligned()).
 * In a column register kernel with an AHEAD instance, whole packs of
 * ITEMS 8 take that instance where it fits, so its other instance goes
 * through words even for them: beside a 16-byte store of the pack, the
 * pack read as words took a 16-byte stack frame there, the pack staged
 * as words or composed from its elements (shifts, byte_perm) 16-20 bytes
 * and spills; through words alone none (softmax_col bf16, ptxas -v,
 * sm_90).  Element by element instead (0055ab0) took 1.56-1.66x the
 * words' time on an H200 at 1000 x 16383 and 1024 x 12345
 * (bench/NOTES.md, 2026-12-05).  Kernels without AHEAD (bias_gelu's
 * backward) store whole packs in 16 bytes at every ITEMS: they took no
 * frame so. */
static const char *packs_where(const SEmit *e, DType t) {
  if (!e->sk.cvec || !e->sk.reg || !e->sk.ahead || !stores_unaligned(e, t))
    return "";
  if (e->stage_part != 0)
    internal_error("a column register kernel's output in parts");
  return " && (AHEAD || ITEMS < 8)";
}

/* A full-domain output of the vec kernel: each thread's VEC consecutive
 * elements (cvec: the item's VEC columns) go to a staging array, then out
 * as one pack. */
static void stage_one(SEmit *e, const char *ptr, DType t, const char *expr, int last) {
  const char *ct = cu_storage_ctype(t);
  const char *s = arena_printf(e->sk.a, "t_s_%s", ptr);
  if (!e->vdecl) {
    e->vdecl = new_out(e->sk.a);
    e->vafter = new_out(e->sk.a);
  }
  /* columns: zeroed, as the elements of a pack past the last column are
   * never set, and left undefined they gave the column kernel of
   * softmax_col bf16 a stack frame (ptxas -v, sm_90); rows keep them
   * undefined (zeroed, rmsnorm bf16's rows that are not whole packs
   * spilled) */
  emit(e->vdecl, e->sk.cvec ? "tecc::Pack<%s, VEC> %s = {};" : "tecc::Pack<%s, VEC> %s;", ct, s);
  if (cu_converts_packs(t)) { /* converted a pack at a time (cu_pack_conv) */
    const char *f = arena_printf(e->sk.a, "t_f_%s", ptr);
    emit(e->vdecl, e->sk.cvec ? "float %s[VEC] = {};" : "float %s[VEC];", f);
    emit(e->body, "%s[t_j] = %s;", f, expr);
    emit(e->vafter, "%s;", cu_pack_conv(e->sk.a, t, f, s));
  } else {
    emit(e->body, "%s.v[t_j] = %s;", s, cu_store_conv(e->sk.a, t, expr));
  }
  const char *at = pack_offset(e), *left = e->sk.cvec ? "t_outer - t_o0" : "t_red - t_r0";
  const char *dst = arena_printf(e->sk.a, "reinterpret_cast<tecc::Pack<%s, VEC> *>(%s + %s)", ct, ptr, at);
  if (e->stage_part != 2)
    emit(e->vafter,
         last ? "if (%s && t_packs%s) tecc::store_stream(%s, %s);" : "if (%s && t_packs%s) *%s = %s;",
         item_in_operand(e), packs_where(e, t), dst, s);
  if (e->stage_part == 1)
    return;
  const char *other = e->stage_part == 2 ? "if (!t_packs && " : "else if (";
  if (stores_unaligned(e, t))
    emit(e->vafter, "%st_r0 < %s) tecc::store_unaligned%s(%s + %s, %s, %s);", other, row_end(e), words_suffix(t), ptr,
         at, s, left);
  else
    emit(e->vafter, "%st_r0 < %s) tecc::store_head(%s + %s, %s, %s);", other, row_end(e), ptr, at, s, left);
}

/* Does the group write an output along the row (softmax's y), not only
 * row values (rowstats' mean and variance)?  The plan counts them. */
static int writes_along_row(SEmit *e) {
  return e->sk.g->plan->row_outputs > 0;
}

/* Packs moved past L2 (tecc::load_stream, tecc::store_stream: evict
 * first), where no later group of the call reads them.  The register
 * kernel reads each element once: where the group writes only row values
 * its loads go past L2, as a full reduction's do (on an H100 rowstats and
 * card rows gained up to 3 points of copy, f32 32768x256 70.2 -> 73.2),
 * while rows that also write a row lost 1 to 2 (softmax, the norms) with
 * the loads and 0.1 to 0.5 with the stores, so those keep plain ones.  On
 * H200s over two input sets in turn both hints were tried twice: 0 to 5%
 * faster on one machine, 4 to 7% slower on another at every size past
 * twice L2 (per-row fp8 8192x14336 1.070, per-block 1.045, softmax bf16
 * 16384x4096 1.047; an A/A pair there 1.000), and the loads alone slower
 * on both (issue 49, bench/NOTES.md).
 * The stream kernel of rows reads each input's packs past L2 in the last
 * pass that reads the row and writes its outputs past it: the rows it
 * reads again then stay in L2.  Rows read twice gained 7 to 19 points at
 * 1024 x 65536 (softmax f32 64.9 -> 84.1, add_rmsnorm bf16 69.2 ->
 * 86.1), where either hint alone gave at most 8.6; column streams moved
 * -2.1 to +2.8 and keep plain loads and stores (bench/NOTES.md). */
static int load_past_l2(SEmit *e, const Value *v, int pass) {
  if (read_by_later_group(e->sk.kp, e->sk.g, v))
    return 0;
  return e->sk.reg ? !writes_along_row(e) : e->sk.row && pass == e->last_pass;
}

static int store_past_l2(const SEmit *e, const Value *v) {
  return !e->sk.reg && e->sk.row && !read_by_later_group(e->sk.kp, e->sk.g, v);
}

static void stage_stores(SEmit *e, Value *v, const char *expr) {
  int last = store_past_l2(e, v);
  for (int i = 0; i < e->sk.k->noutputs; i++)
    if (e->sk.k->outputs[i].value == v)
      stage_one(e, param(e, P_OUTPUT, i, NULL), v->dtype, expr, last);
  if (e->sk.kp->home[v->id].kind == HOME_WORKSPACE)
    stage_one(e, param(e, P_WS_WRITE, v->id, v), v->dtype, expr, 0);
}

/* An output is stored from ir_stored_value(). */
static const char *store_value(SEmit *e, Value *v, const int *map) { return sval(e, ir_stored_value(v), map); }

/* Output v along the row, in the pass being written (`part`: SEmit.stage_part). */
static void row_output(SEmit *e, Value *v, const int *map, int part) {
  const char *val = store_value(e, v, map), *off = offset_expr(e, &v->shape, map);
  e->stage_part = part;
  if ((e->sk.vec || e->sk.cvec) && off == e->lin) {
    stage_stores(e, v, val);
  } else {
    emit_stores(e, e->body, v, val, off);
    e->used_r |= off == e->lin;
    e->past_end_ok = 0;
  }
  e->stage_part = 0;
}

/* Is v an output the register kernel's PACKS instance writes in its first
 * pass (StitchKernel.early, stitch_kernel.c)? */
static int writes_early(const SEmit *e, const Value *v) {
  return vec_contains(&e->sk.early, v);
}

static void early_outputs(SEmit *e) {
  int map[TECC_MAX_RANK];
  identity_map(map, e->sk.g->domain.rank);
  for (int i = 0; i < e->sk.early.len; i++)
    row_output(e, e->sk.early.items[i], map, 1);
}

static void add_to_column(SEmit *e, int i, const int *map);

/* The last pass.  In the register kernel of 16-bit rows in 16-byte
 * packs, where the pass reduces nothing and reads and writes memory only
 * a pack at a time, the instance for rows that are not whole packs
 * computes the last pack's elements past the row's end too (the zeros
 * its loads put there), which tecc::store_unaligned does not write: no
 * test and break an element, whose branches kept values alive (ptxas -v,
 * sm_90: layernorm bf16's ITEMS 8 instance spilled 136 bytes, none now;
 * on an H200 layernorm bf16 4096 x 11007 124.5 -> 119.4 us, 1024 x 50257
 * 172.1 -> 161.1).  Not in other kernels: f32 rows, which store such
 * rows element by element (tecc::store_head), then branched around each
 * store (softmax f32 4096 x 11007 +14%, 1024 x 50257 +52%), and the
 * stream kernel lost 3-5% at 128 x 262143 (bench/NOTES.md, issue 45).
 * Nor where the aligned instance writes an output in its first pass and
 * the row holds two values (add_rmsnorm's h = x + r, whose instances
 * then spilled 4 bytes where they had not).  8-bit rows at VEC 16
 * (stores_unaligned) do the same, on the 16-bit rows' measurements. */
static void output_pass(SEmit *e, Out *o, const PlanPass *p) {
  int map[TECC_MAX_RANK], any = 0;
  identity_map(map, e->sk.g->domain.rank);
  start_pass(e);
  e->past_end_ok = e->sk.reg && e->sk.st->columns.len == 0;
  e->item_guards = e->sk.last_guards;
  for (int i = 0; i < p->writes.len; i++) {
    Value *v = p->writes.items[i];
    int early = writes_early(e, v);
    row_output(e, v, map, early ? 2 : 0);
    e->past_end_ok &= stores_unaligned(e, v->dtype) && (!early || e->sk.g->plan->held.len < 2);
    any = 1;
  }
  for (int i = 0; i < e->sk.st->columns.len; i++) {
    add_to_column(e, i, map);
    any = 1;
  }
  if (any)
    end_pass(e, o, NULL, NULL);
  else
    emit_fragment(o, e->pre);
}

/* The row's outputs of one value a row, after its last pass. */
static void row_outputs(SEmit *e, Out *o) {
  int map[TECC_MAX_RANK];
  identity_map(map, e->sk.g->domain.rank);
  e->pre = new_out(e->sk.a);
  Out *stores = new_out(e->sk.a);
  for (int i = 0; i < e->sk.g->roots.len; i++) {
    Value *v = e->sk.g->roots.items[i];
    if (varies_along_row(e, v, map) || stitch_is_column(e->sk.g, v))
      continue;
    emit_stores(e, stores, v, sval(e, v, map), offset_expr(e, &v->shape, map));
  }
  emit_fragment(o, e->pre);
  if (!stores->b->len)
    return;
  open_block(o, "if (t_live && %s == 0%s)", lane(e), stitch_split_kernel(&e->sk) ? " && blockIdx.y == 0" : "");
  if (thread_index(e))
    open_thread_rows(e, o, 1);
  emit_fragment(o, stores);
  if (thread_index(e))
    close_thread_rows(o, 1);
  close_block(o, "");
}

/* ---- column partials (Stitch.columns: a norm's dw, db) -------------------- */

/* An element's term of column sum i: the register kernel adds it to the
 * thread's accumulator of the element's column (a thread has the same
 * columns in every row it takes), the stream kernel to its block's
 * partial row in memory (one row a block: each column one thread's). */
static void add_to_column(SEmit *e, int i, const int *map) {
  Value *c = e->sk.st->columns.items[i];
  const char *term = sval(e, c->args[0], map);
  if (e->sk.reg) {
    emit(e->body, "t_col%d[t_k * VEC + t_j] += %s;", i, term);
    return;
  }
  emit(e->body, "t_cols[((IndexT)%d * gridDim.x + blockIdx.x) * t_red + t_r] += %s;", i, term);
  e->used_r = 1;
}

/* Before the row loop: the accumulators (registers), or the block's
 * partial rows zeroed (stream). */
static void declare_columns(SEmit *e, Out *o) {
  const PtrVec *cols = &e->sk.st->columns;
  if (!cols->len)
    return;
  const char *acc = stitch_column_acc_type(&e->sk);
  if (e->sk.reg) {
    for (int i = 0; i < cols->len; i++)
      emit(o, "%s t_col%d[ITEMS * VEC] = {}; /* %%%d: the thread's columns, summed over its rows */", acc, i,
           ((const Value *)cols->items[i])->id);
    return;
  }
  emit(o, "/* the block's partial rows of its column sums, zeroed before its rows add to them */");
  open_block(o, "for (IndexT t_q = threadIdx.x; t_q < t_red; t_q += blockDim.x)");
  for (int i = 0; i < cols->len; i++)
    emit(o, "t_cols[((IndexT)%d * gridDim.x + blockIdx.x) * t_red + t_q] = (%s)0;", i, acc);
  close_block(o, "");
  emit(o, "__syncthreads();");
}

/* The bytes write_columns() folds through at once: VEC sums of half the
 * block's threads (a bool or bf16 row with f64 sums needs more than the
 * all-reduces' 8 KB). */
static const char *column_fold_bytes(SEmit *e) {
  int threads = e->sk.sched->max_threads;
  if (stitch_narrow_kernel(&e->sk) && NARROW_THREADS > threads)
    threads = NARROW_THREADS;
  return arena_printf(e->sk.a, "%d * VEC * sizeof(%s)", threads / 2, stitch_column_acc_type(&e->sk));
}

/* After the row loop, the register kernel: each column sum's accumulators
 * folded across threadIdx.y (a fixed tree in shared memory: blockDim.y is
 * a power of two), then row blockIdx.x of its partials. */
static void write_columns(SEmit *e, Out *o) {
  const PtrVec *cols = &e->sk.st->columns;
  if (!cols->len || !e->sk.reg)
    return;
  const char *acc = stitch_column_acc_type(&e->sk);
  const char *part = e->sk.cluster ? "blockIdx.x / t_blocks" : "blockIdx.x";
  const char *parts = e->sk.cluster ? "gridDim.x / t_blocks" : "gridDim.x";
  emit(o, "/* the column partials: the block's rows folded across threadIdx.y, then row %s of t_cols */", part);
  emit(o, "%s *t_cf = reinterpret_cast<%s *>(t_smem);", acc, acc);
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_k = 0; t_k < ITEMS; t_k++)");
  emit(o, "const IndexT t_r0 = %s;", first_of_item(e));
  for (int i = 0; i < cols->len; i++) {
    open_block(o, "for (unsigned t_h = blockDim.y / 2; t_h > 0; t_h /= 2)");
    emit(o, "__syncthreads();");
    open_block(o, "if (threadIdx.y >= t_h && threadIdx.y < 2 * t_h)");
    emit(o, "#pragma unroll");
    emit(o, "for (int t_j = 0; t_j < VEC; t_j++) t_cf[((threadIdx.y - t_h) * blockDim.x + threadIdx.x) * VEC + t_j] = "
            "t_col%d[t_k * VEC + t_j];", i);
    close_block(o, "");
    emit(o, "__syncthreads();");
    open_block(o, "if (threadIdx.y < t_h)");
    emit(o, "#pragma unroll");
    emit(o, "for (int t_j = 0; t_j < VEC; t_j++) t_col%d[t_k * VEC + t_j] += t_cf[(threadIdx.y * blockDim.x + "
            "threadIdx.x) * VEC + t_j];", i);
    close_block(o, "");
    close_block(o, "");
  }
  open_block(o, "if (threadIdx.y == 0)");
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_j = 0; t_j < VEC; t_j++)");
  open_block(o, "if (t_r0 + t_j < t_red)");
  for (int i = 0; i < cols->len; i++)
    emit(o, "t_cols[((IndexT)%d * (%s) + %s) * t_red + t_r0 + t_j] = t_col%d[t_k * VEC + t_j];", i, parts, part, i);
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
}

/* The second stage: column sum i of column `t_r` is its blocks' partials
 * summed in block order (thread row y takes blocks y, y + 32, ..., then
 * row 0 adds the 32 in order), a mean divided by the rows, stored in
 * every buffer the sum lives in. */
static void emit_column_sums(Out *o, SEmit *e) {
  const PtrVec *cols = &e->sk.st->columns;
  const char *acc = stitch_column_acc_type(&e->sk);
  Buf decl;
  buf_init(&decl, e->sk.a);
  for (int i = 0; i < cols->len; i++) {
    const Value *c = cols->items[i];
    for (int h = 0; h < column_homes(e->sk.k, e->sk.kp, c); h++)
      buf_printf(&decl, ", %s *__restrict__ t_d%d_%d", cu_storage_ctype(c->dtype), i, h);
  }
  emit(o, "/* %s, group %d: its column sums from the blocks' partials, in block order */", e->sk.k->name, e->sk.g->id);
  emit(o, "template <typename IndexT>");
  open_block(o, "__global__ void __launch_bounds__(1024) %s(const %s *__restrict__ t_cols, int t_parts, IndexT t_red, "
                "IndexT t_outer%s)", stitch_columns_name(&e->sk), acc, buf_cstr(&decl));
  emit(o, "__shared__ %s t_f[32][33];", acc);
  emit(o, "const IndexT t_r = (IndexT)blockIdx.x * 32 + threadIdx.x;");
  for (int i = 0; i < cols->len; i++) {
    const Value *c = cols->items[i];
    open_scope(o);
    emit(o, "%s t_acc = 0;", acc);
    emit(o, "if (t_r < t_red)");
    emit(o, "  for (int t_p = threadIdx.y; t_p < t_parts; t_p += 32) t_acc += t_cols[((IndexT)%d * t_parts + t_p) * t_red + t_r];", i);
    emit(o, "t_f[threadIdx.y][threadIdx.x] = t_acc;");
    emit(o, "__syncthreads();");
    open_block(o, "if (threadIdx.y == 0 && t_r < t_red)");
    emit(o, "%s t_sum = t_f[0][threadIdx.x];", acc);
    emit(o, "for (int t_y = 1; t_y < 32; t_y++) t_sum += t_f[t_y][threadIdx.x];");
    if (c->rop == RED_MEAN)
      emit(o, "t_sum = t_sum / (%s)t_outer;", acc);
    for (int h = 0; h < column_homes(e->sk.k, e->sk.kp, c); h++)
      emit(o, "t_d%d_%d[t_r] = %s;", i, h, cu_store_conv(e->sk.a, c->dtype, "t_sum"));
    close_block(o, "");
    emit(o, "__syncthreads();");
    close_block(o, "");
  }
  close_block(o, "");
}

/* ---- loads: the held row, a stream chunk, kept items ------------------------ */

/* Loads the thread's elements of the full-domain inputs into registers:
 * the whole row (reg kernel, pass 0 = all), or one chunk of the inputs
 * that pass `pass` reads (stream kernel). */
static int loaded_in(const Cached *c, int pass) {
  return !c->row && !c->skip && (pass == 0 || ((c->passes >> (pass & 31)) & 1u));
}

/* The item of the thread's held elements that t_k of row t_i is. */
static const char *held_item(const SEmit *e) {
  return e->sk.rows ? "(t_i * ITEMS + t_k)" : "t_k";
}

/* The register array of c's next row group (prefetch): t_n<id>. */
static const char *next_name(const SEmit *e, const Cached *c) {
  return arena_printf(e->sk.a, "t_n%s", c->name + strlen("t_c"));
}

/* The register array a load fills: t_c<id>, or the next rows' t_n<id>. */
static const char *held_name(const SEmit *e, const Cached *c) {
  return e->into_next ? next_name(e, c) : c->name;
}

/* The host picks VEC > 1 only when rows are whole packs, aligned. */
/* The pack of cached value c at the thread's item: aligned, or (rows of a
 * length that is not whole packs) 16-bit elements at any 2-byte boundary
 * (8-bit at any byte), loaded inside the tensor's t_outer * t_red
 * elements. */
static const char *pack_load(SEmit *e, const Cached *c, int pass, int unaligned) {
  const char *ct = cu_storage_ctype(c->v->dtype);
  if (unaligned)
    return arena_printf(e->sk.a, "tecc::load_unaligned%s<VEC>(%s, %s, %s, t_outer * t_red)",
                        words_suffix(c->v->dtype), c->ptr, pack_offset(e),
                        e->sk.cvec ? "t_outer - t_o0" : "t_red - t_r0");
  const char *at = arena_printf(e->sk.a, "reinterpret_cast<const tecc::Pack<%s, VEC> *>(%s + %s)", ct, c->ptr,
                                pack_offset(e));
  /* the pipe's next row, re-read from L2: every item, those kept in
   * shared memory too (marking only the others, a select an item, took
   * cross-entropy's backward at 4096 x 128256 from 0.868x to 0.923x of the
   * passes one after the other; H200, bench/NOTES.md, issue 47) */
  if (e->loads_last)
    return arena_printf(e->sk.a, "tecc::load_last(%s)", at);
  return arena_printf(e->sk.a, load_past_l2(e, c->v, pass) ? "tecc::load_stream(%s)" : "*%s", at);
}

/* Column packs of 16-bit values held two to a word (Cached.pairs) where
 * the columns are not whole packs: each row's VEC columns through the
 * aligned words they span (tecc::load_unaligned), not element by element,
 * where every value the pass loads is so held; their stores so too
 * (stores_unaligned()).  The same elements, 0 past the row: the same
 * sums, bit for bit.  On an H200 (bench/NOTES.md, issue 48) softmax_col
 * bf16 at 16384 x 4095, 8191 x 8191 and 4096 x 11007 took 0.76-0.85x the
 * time with both, 65536 x 1023 0.96x, 70001 x 100 1.03x; the loads alone
 * moved 0.96-1.18x. */
static int columns_in_words(const SEmit *e, int pass) {
  int any = 0;
  for (int i = 0; i < e->cached.len; i++) {
    const Cached *c = e->cached.items[i];
    if (!loaded_in(c, pass))
      continue;
    if (!c->pairs)
      return 0;
    any = 1;
  }
  return any;
}

/* Its loads: each pack through the aligned words it spans, where every value
 * the pass loads is 16-bit (8-bit at VEC 16: moves_words), of the
 * domain's own rows.  The condition
 * under which they do
 * (NULL: never): rows the group writes along, always; rows it only
 * reduces (card, logsumexp, rowstats), in the register instances of
 * ITEMS 8, or in every instance where it holds two values or more
 * (cross-entropy's l and onehot).  On an H100 (bench/NOTES.md, issue 12)
 * the element-by-element loads of the ITEMS 8 instances spilled (700 to
 * 1000 bytes: 5.7% of copy at 4096 x 11007, 44 with these), and where two
 * values are held those of ITEMS 4 and the stream's too (84 to 546 bytes;
 * cross-entropy bf16 20-28% faster with the words on an H200, issue 45);
 * while the block, warp and stream kernels that only reduce one value
 * lose with them (5 to 19 points with issue 12's loads; with the words,
 * card, logsumexp and rowstats bf16 at 32768 x 255 11-20% slower on an
 * H200, issue 45). */
static const char *loads_unaligned(SEmit *e, int pass) {
  if (e->sk.cvec)
    return columns_in_words(e, pass) ? "VEC > 1" : NULL;
  if (!moves_unaligned(e))
    return NULL;
  int quads = 0;
  for (int i = 0; i < e->cached.len; i++) {
    const Cached *c = e->cached.items[i];
    if (loaded_in(c, pass) && (!moves_words(e, c->v->dtype) || c->row))
      return NULL;
    quads |= loaded_in(c, pass) && c->quads;
  }
  if (quads) /* held_in_quads() */
    return "VEC > 1";
  if (writes_along_row(e) || e->sk.g->plan->held.len >= 2)
    return "VEC > 1";
  return e->sk.reg ? "VEC > 1 && ITEMS > 4" : NULL;
}

static void load_packs(SEmit *e, Out *o, int pass, int unaligned) {
  for (int i = 0; i < e->cached.len; i++) {
    Cached *c = e->cached.items[i];
    if (!loaded_in(c, pass))
      continue;
    const char *ct = cu_storage_ctype(c->v->dtype);
    emit(o, "const tecc::Pack<%s, VEC> t_p%d = %s;", ct, i, pack_load(e, c, pass, unaligned));
    emit(o, "#pragma unroll");
    if (c->quads)
      emit(o, "for (int t_j = 0; t_j < VEC / 4; t_j++) %s[%s * VEC / 4 + t_j] = tecc::quad_word(t_p%d, t_j);",
           held_name(e, c), held_item(e), i);
    else if (c->pairs)
      emit(o, "for (int t_j = 0; t_j < VEC / 2; t_j++) %s[%s * VEC / 2 + t_j] = tecc::pair_word(t_p%d, t_j);",
           held_name(e, c), held_item(e), i);
    else
      emit(o, "for (int t_j = 0; t_j < VEC; t_j++) %s[%s * VEC + t_j] = %s;", held_name(e, c), held_item(e),
           cu_load_decode(e->sk.a, c->v->dtype, c->nan_free, arena_printf(e->sk.a, "t_p%d.v[t_j]", i)));
  }
}

/* Does `pass` load 16-bit values held two to a word? */
static int loads_pairs(const SEmit *e, int pass) {
  for (int i = 0; i < e->cached.len; i++) {
    const Cached *c = e->cached.items[i];
    if (loaded_in(c, pass) && c->pairs)
      return 1;
  }
  return 0;
}

/* Element by element, 0 past the row's end. */
static void load_elements(SEmit *e, Out *o, int pass) {
  for (int i = 0; i < e->cached.len; i++) { /* 8-bit quads: 0 (held_in_quads()) */
    const Cached *c = e->cached.items[i];
    if (!loaded_in(c, pass) || !c->quads)
      continue;
    emit(o, "#pragma unroll");
    emit(o, "for (int t_j = 0; t_j < VEC / 4; t_j++) %s[%s * VEC / 4 + t_j] = 0;", held_name(e, c), held_item(e));
  }
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_j = 0; t_j < VEC; t_j++)");
  if (e->sk.cvec) {
    emit(o, "const IndexT t_r = t_r0, t_o = t_o0 + t_j;");
    emit(o, "const bool t_in = t_o < t_outer && t_r < %s;", row_end(e));
  } else if (e->sk.vec && !loads_pairs(e, pass)) {
    /* without packs, one check an item: an element past the row's end
     * (which no loop reads) loads its last one; a check an element kept
     * each item's VEC predicates live, and layernorm f32's ITEMS 8
     * instance spilled 44 bytes (none so; 16-bit pairs spilled more) */
    emit(o, "const IndexT t_r = t_packs || t_r0 + t_j < t_red ? t_r0 + t_j : t_red - 1;");
    emit(o, "const bool t_in = %s && (t_packs ? t_r < t_red : t_r0 < t_red);", row_live_operand(e));
  } else {
    emit(o, "const IndexT t_r = t_r0 + t_j;");
    emit(o, "const bool t_in = %s && t_r < t_red;", row_live_operand(e));
  }
  char all[TECC_MAX_RANK];
  memcpy(all, e->used_red_any, sizeof all);
  if (!e->lin) {
    emit(o, "const IndexT t_rr = t_in ? t_r : 0;");
    emit_decompose(e, o, "t_rr", e->sk.st->axes, all);
  }
  for (int i = 0; i < e->cached.len; i++) {
    Cached *c = e->cached.items[i];
    if (!loaded_in(c, pass))
      continue;
    if (!c->quads) /* only items no loop reads come here: their words stay 0 (held_in_quads()) */
      load_one(e, o, c, held_name(e, c), arena_printf(e->sk.a, "%s * VEC + t_j", held_item(e)), "t_in");
  }
  close_block(o, "");
}

/* Declares the register arrays the loads of `pass` fill; their count. */
static int declare_cached(SEmit *e, Out *o, int pass) {
  int n = 0;
  for (int i = 0; i < e->cached.len; i++) {
    Cached *c = e->cached.items[i];
    if (!loaded_in(c, pass))
      continue;
    if (c->quads)
      declare_held(e, o, "uint32_t", held_name(e, c), 4, 1, " /* four 8-bit elements a word */");
    else if (c->pairs)
      declare_held(e, o, "uint32_t", held_name(e, c), 2, 2, " /* two 16-bit elements a word */");
    else
      declare_held(e, o, cu_compute_ctype(c->v->dtype), held_name(e, c), 1, element_bytes(c), "");
    n++;
  }
  return n;
}

/* One item's loads of `pass` (t_k, from t_r0): whole packs, unaligned
 * packs, or element by element. */
static void load_item(SEmit *e, Out *o, int pass) {
  if (e->sk.vec || e->sk.cvec) {
    open_block(o, "if (VEC > 1 && t_packs && %s && %s)", row_live_operand(e), item_in_operand(e));
    load_packs(e, o, pass, 0);
    const char *unaligned = loads_unaligned(e, pass);
    if (unaligned) {
      else_if_block(o, "%s && %s && %s", unaligned, row_live_operand(e), item_in_operand(e));
      load_packs(e, o, pass, 1);
    }
    else_block(o);
  }
  load_elements(e, o, pass);
  if (e->sk.vec || e->sk.cvec)
    close_block(o, "");
}

/* The kept values `pass` loads: those an earlier pass kept (`later`), or
 * those it keeps itself. */
static int kept_in(const Cached *c, int pass, int later) {
  int first = __builtin_ctz(c->passes); /* the pass that loads it first */
  return c->kept && loaded_in(c, pass) && (later ? first < pass : first == pass);
}

static int count_kept(const SEmit *e, int pass, int later) {
  int n = 0;
  for (int i = 0; i < e->cached.len; i++)
    n += kept_in(e->cached.items[i], pass, later);
  return n;
}

/* Item t_g of kept value c in shared memory (tecc::keep_put, keep_get):
 * `put` there from its register array, or back. */
static void keep_item(SEmit *e, Out *o, const Cached *c, int put) {
  const char *n = c->pairs ? "VEC / 2" : "VEC";
  emit(o, "tecc::keep_%s<%s>(t_kept + (t_g * t_kw + VEC * %d / 16) * t_kth + t_kid, t_kth, %s + t_k * %s);",
       put ? "put" : "get", n, c->kept_at, c->name, n);
}

/* The stream kernel's loads of `pass` where it keeps items in shared
 * memory: an item an earlier pass kept comes back from there (the others
 * this pass loads, if any, from memory), and the pass that loads a kept
 * value first keeps it. */
static void kept_loads(SEmit *e, Out *o, int pass, int later) {
  open_block(o, "if (KEEP && t_g < t_keep)");
  for (int i = 0; i < e->cached.len; i++)
    if (kept_in(e->cached.items[i], pass, later))
      keep_item(e, o, e->cached.items[i], !later);
  if (!later) {
    close_block(o, "");
    return;
  }
  int others = 0;
  for (int i = 0; i < e->cached.len; i++) {
    Cached *c = e->cached.items[i];
    others += loaded_in(c, pass) && !kept_in(c, pass, 1);
  }
  for (int i = 0; others && i < e->cached.len; i++)
    ((Cached *)e->cached.items[i])->skip = kept_in(e->cached.items[i], pass, 1);
  if (others)
    load_item(e, o, pass);
  for (int i = 0; i < e->cached.len; i++)
    ((Cached *)e->cached.items[i])->skip = 0;
  else_block(o);
}

/* The row's item at the chunk's start, t_g0 (the kept items'). */
static void first_item(Out *o) {
  emit(o, "const IndexT t_g0 = t_base / t_step * ITEMS; /* the row's item at the chunk's start */");
}

/* The loads of `pass` into the arrays declare_cached() declared; the
 * items it keeps in shared memory after them, in `keeps` (NULL: not
 * here, the caller writes them, t_g0 with them: pipe_next_rest()). */
static void load_declared_keeping(SEmit *e, Out *o, int pass, Out *keeps) {
  int back = count_kept(e, pass, 1), keep = keeps ? count_kept(e, pass, 0) : 0;
  if (e->sk.rows)
    open_thread_rows(e, o, 0);
  if (back || keep)
    first_item(o);
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_k = 0; t_k < ITEMS; t_k++)");
  emit(o, "const IndexT t_r0 = %s;", first_of_item(e));
  if (back) {
    emit(o, "const IndexT t_g = t_g0 + t_k; /* items below t_keep: in shared memory after the first pass */");
    kept_loads(e, o, pass, 1);
  }
  load_item(e, o, pass);
  if (back)
    close_block(o, "");
  close_block(o, "");
  if (keep) { /* after every load of the chunk is under way: a store of an item waits for its load */
    emit(keeps, "#pragma unroll");
    open_block(keeps, "for (int t_k = 0; t_k < ITEMS; t_k++)");
    emit(keeps, "const IndexT t_g = t_g0 + t_k;");
    kept_loads(e, keeps, pass, 0);
    close_block(keeps, "");
  }
  if (e->sk.rows)
    close_thread_rows(o, 0);
}

static void load_declared(SEmit *e, Out *o, int pass) {
  load_declared_keeping(e, o, pass, o);
}

static void load_cached(SEmit *e, Out *o, int pass) {
  if (declare_cached(e, o, pass))
    load_declared(e, o, pass);
}

/* A stream pass's chunk: its loads, and the items it keeps apart. */
static void load_chunk(SEmit *e, PassParts *p) {
  if (declare_cached(e, p->loads, e->pass))
    load_declared_keeping(e, p->loads, e->pass, p->keeps);
}

/* ---- the emitter ------------------------------------------------------------- */

/* The emitter of the register kernel (`reg`) or the streaming one. */
static SEmit *semit_of(StitchKernel sk) {
  Arena *a = sk.a;
  Kernel *k = sk.k;
  Group *g = sk.g;
  SEmit *e = ARENA_NEW(a, SEmit);
  e->sk = sk;
  e->reuse = sk.reg ? g->schedule->keep : NULL;
  e->red_name = ARENA_ARRAY(a, const char *, k->values.len + 1);
  e->kept = ARENA_ARRAY(a, char, k->values.len + 1);
  ir_count_uses(k); /* fused_multiply_add() asks which products have one use */
  e->keep_decls = new_out(a);
  nameset_init(&e->taken, a);
  take_entry_names(&e->taken, k, sk.names);
  e->names_mark = nameset_mark(&e->taken);
  e->lin = reduce_linear_index(&g->domain, g->stitch->axes);
  if (row_runs(e)) /* one division a pack (its elements follow it) */
    e->lin = arena_printf(a, "%s + (t_r - t_r0)", runs_offset(e, "t_r0"));
  declare_rcounts(e);
  return e;
}

static SEmit *new_semit(Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names, int reg) {
  return semit_of(stitch_kernel(a, k, kp, g, names, reg));
}

/* ---- the column split (stream kernel, PHASE 1 and 2) -------------------- */

/* Partial p of chunk `chunk` for column t_o (stitch_column_split()). */
static const char *partial_at(SEmit *e, const char *chunk, int p) {
  return arena_printf(e->sk.a, "t_part[(%s * %d + %d) * t_outer + t_o]", chunk, e->sk.st->reduces.len, p);
}

/* In a split group, level 2 can only be online sums (stitch_column_split()). */
static int is_online_sum(const SEmit *e, const Value *r) {
  return e->sk.st->nlevels == 2 && e->sk.st->level[r->id] == 2;
}

/* The partial of reduction r: its place among the group's reductions. */
static int partial_index(const SEmit *e, const Value *r) {
  for (int p = 0; p < e->sk.st->reduces.len; p++)
    if (e->sk.st->reduces.items[p] == r)
      return p;
  internal_error("stitch: %%%d is not a reduction of its split", r->id);
}

/* The accumulator of reduction r after its all-reduce: an online sum's
 * is about its max's value. */
static const char *acc_after_allreduce(SEmit *e, const Value *r) {
  return arena_printf(e->sk.a, "t_%s%d[t_j]", is_online_sum(e, r) ? "os" : "acc", r->id);
}

static void write_partials(SEmit *e, Out *o) {
  emit(o, "/* split: this chunk's partial results, for the fold */");
  open_block(o, "if (PHASE == 1)");
  open_block(o, "if (threadIdx.y == 0 && t_live)");
  open_thread_rows(e, o, 1);
  for (int p = 0; p < e->sk.st->reduces.len; p++)
    emit(o, "%s = %s;", partial_at(e, "(IndexT)blockIdx.y", p), acc_after_allreduce(e, e->sk.st->reduces.items[p]));
  close_thread_rows(o, 1);
  close_block(o, "");
  close_block(o, "");
}

/* The accumulators of a split's PHASE 2 from the chunks' partials: thread
 * y folds chunks y, y + TY, ... (plain reductions, then the online sums
 * rescaled from each chunk's max to the thread's), and the pass's own
 * all-reduce folds the threads, in the same fixed order every call. */
static void feed_partials(SEmit *e, Out *o) {
  emit(o, "/* split: the chunks' partial results, a share of the chunks a thread */");
  open_block(o, "if (t_live && PHASE == 2)");
  for (int online = 0; online <= 1; online++) {
    Out *body = new_out(e->sk.a);
    for (int p = 0; p < e->sk.st->reduces.len; p++) {
      Value *r = e->sk.st->reduces.items[p];
      if (is_online_sum(e, r) != online)
        continue;
      Red x = red_of(e->sk.a, r);
      const char *acc = acc_after_allreduce(e, r), *part = partial_at(e, "(IndexT)t_c", p);
      if (online) {
        Value *m = stitch_online_max(e->sk.g, r, 2);
        const char *chunk_max = partial_at(e, "(IndexT)t_c", partial_index(e, m));
        part = arena_printf(e->sk.a, "tecc::rescale_exp(%s, %s, %s)", part, shift_at(e, online_shift(r), m, chunk_max),
                            shift_at(e, online_shift(r), m, acc_after_allreduce(e, m)));
      }
      emit(body, "%s = %s(%s, %s);", acc, x.op, acc, part);
    }
    if (!body->b->len)
      continue;
    open_block(o, "for (unsigned t_c = threadIdx.y; t_c < gridDim.y; t_c += blockDim.y)");
    open_thread_rows(e, o, 1);
    emit_fragment(o, body);
    close_thread_rows(o, 1);
    close_block(o, "");
  }
  close_block(o, "");
}

/* ---- the row loop: row groups, loads ahead, early operands ------------------ */

/* The first row group of the block and the step to its next (a
 * cluster's blocks share theirs). */
static const char *first_row_group(const SEmit *e, const char *rows) {
  return arena_printf(e->sk.a, e->sk.cluster ? "(IndexT)(blockIdx.x / t_blocks) * %s" : "(IndexT)blockIdx.x * %s", rows);
}

static const char *row_group_step(const SEmit *e, const char *rows) {
  return arena_printf(e->sk.a, e->sk.cluster ? "(IndexT)(gridDim.x / t_blocks) * %s" : "(IndexT)gridDim.x * %s", rows);
}

/* The rows of a block's row group: blockDim.y rows, each thread ROWS of them. */
static const char *block_rows(const SEmit *e) {
  return e->sk.rows ? "(blockDim.y * ROWS)" : "blockDim.y";
}

/* Columns in packs (cvec): the block's first group of columns, and the step to its next. */
static const char COLUMN_GROUP_FIRST[] = "(IndexT)blockIdx.x * (blockDim.x * VEC)";
static const char COLUMN_GROUP_STEP[] = "(IndexT)gridDim.x * (blockDim.x * VEC)";

/* t_c<id> takes over what the loads ahead put in t_n<id>. */
static void take_next(SEmit *e, Out *o, int pass) {
  for (int i = 0; i < e->cached.len; i++) {
    Cached *c = e->cached.items[i];
    if (!loaded_in(c, pass))
      continue;
    emit(o, "#pragma unroll");
    emit(o, "for (int t_q = 0; t_q < (int)(sizeof %s / sizeof %s[0]); t_q++) %s[t_q] = %s[t_q];", c->name, c->name,
         c->name, next_name(e, c));
  }
}

/* The moments pass of a stream kernel whose group writes nothing along
 * its rows (rowstats, var: the kernel's one read of the row) loads the
 * next chunk while it folds this one, where the chunk's registers twice
 * over fit: one value of 32 or 16 bits read, its mean and variance in
 * f32 and no other reduction (rowstats f32 and bf16: 53 to 63 registers,
 * no spills).  A second value read or a second variance, f64 moments,
 * more reductions beside them (sum, max, min, mean and var of one row: 8
 * bytes) or a later pass that writes the row (layernorm f32: 0.8 to 1.6
 * KB, half its speed) spilled.  On an H200 rowstats bf16 at 1024 x 65536
 * to 128 x 262144 gained 2.5 to 6 points of copy, on an H100 0 to 2; the
 * online sums of softmax and logsumexp gained on one GPU what they lost
 * on the other (bench/NOTES.md, issue 12). */
static int moments_ahead(SEmit *e, const PtrVec *centred) {
  if (e->sk.reg || !e->sk.vec || e->pass % 2 == 0 || stitch_split_kernel(&e->sk) || writes_along_row(e) || centred->len != 1 ||
      e->sk.st->reduces.len > 2)
    return 0;
  if (cu_compute_dtype(((Value *)centred->items[0])->dtype) != DT_F32)
    return 0;
  int loaded = 0;
  for (int i = 0; i < e->cached.len; i++) {
    const Cached *c = e->cached.items[i];
    if (loaded_in(c, e->pass) && (c->kept || dtype_size(c->v->dtype) > 4))
      return 0;
    loaded += loaded_in(c, e->pass);
  }
  return loaded == 1;
}

/* The chunk loop of a pass that loads ahead: t_n<id> is loaded before the
 * loop (the first chunk) and at the top of each iteration (the next one,
 * in flight while this one computes), and t_c<id> takes it over. */
static void open_chunks_ahead(SEmit *e, Out *o) {
  const int pass = e->pass;
  chunk_step(e, o);
  e->into_next = 1;
  declare_cached(e, o, pass);
  open_scope(o);
  emit(o, "const IndexT t_nb = 0; /* the first chunk, loaded ahead of the loop */");
  load_declared(e, o, pass);
  close_block(o, "");
  e->into_next = 0;
  open_chunk_loop(e, o);
  declare_cached(e, o, pass);
  take_next(e, o, pass);
  emit(o, "/* the next chunk's loads, under way while this one computes */");
  open_block(o, "if (t_base + t_step < %s)", row_end(e));
  emit(o, "const IndexT t_nb = t_base + t_step;");
  e->into_next = 1;
  load_declared(e, o, pass);
  e->into_next = 0;
  close_block(o, "");
}

/* The instances of the variants that load ahead (Variant.prefetch): the
 * warp variant's of ROWS > 1, a roomy variant's (aligned or not:
 * schedule.c, insert_roomy()), the solo one's (its ITEMS, not
 * solo-long's: insert_solo()), the cluster variant's; packs only but for
 * the roomy one (element by element spilled; the solo one's rows of
 * 9001, not whole packs, took as long with the loads ahead as the
 * cluster did, 247.9 us against 247.2 for rmsnorm bf16's backward). */
static const char *ahead_instances(const SEmit *e) {
  Buf b;
  buf_init(&b, e->sk.a);
  for (int i = 0; i < e->sk.sched->nvariants; i++) {
    const Variant *v = &e->sk.sched->variants[i];
    const char *c = v->roomy ? "ROOMY"
                  : v->solo ? arena_printf(e->sk.a, "SOLO && ITEMS == %d && t_packs", v->items) /* not solo-long's */
                  : v->fit == FIT_CLUSTER ? "CLUSTER && t_packs" : "ROWS > 1 && t_packs";
    if (v->prefetch && !strstr(buf_cstr(&b), c))
      buf_printf(&b, "%s%s", b.len ? " || " : "", c);
  }
  return buf_cstr(&b);
}

/* AHEAD (Variant.ahead): the loop's current row (group of columns), its
 * step, and the block's first. */
static const char *ahead_row(const SEmit *e) {
  return e->sk.cvec || e->sk.rows ? "t_o0" : "t_o";
}

static const char *ahead_step(const SEmit *e) {
  return e->sk.cvec ? COLUMN_GROUP_STEP : row_group_step(e, block_rows(e));
}

static const char *ahead_first(const SEmit *e) {
  return e->sk.cvec ? arena_printf(e->sk.a, "%s + (IndexT)threadIdx.x * VEC", COLUMN_GROUP_FIRST)
                    : arena_printf(e->sk.a, "%s + threadIdx.y", first_row_group(e, block_rows(e)));
}

/* AHEAD: the slot of value n's item t_k. */
static const char *ahead_slot(SEmit *e, int n) {
  return n ? arena_printf(e->sk.a, "(%d * ITEMS + t_k) * t_ath + t_aid", n) : "t_k * t_ath + t_aid";
}

/* AHEAD: the held values' packs of row `row` copied into the thread's
 * slots of t_ahead (tecc::ahead_copy), value n's item t_k at slot
 * (n * ITEMS + t_k) * t_ath + t_aid, every value one aligned pack an item
 * (ahead_bytes(), schedule.c); the block's first in the prologue, the
 * next one in the loop, under `open`. */
static void ahead_copies(SEmit *e, Out *o, const char *open, const char *row) {
  if (*open)
    open_block(o, "%s", open);
  else
    open_scope(o);
  emit(o, "const IndexT %s = %s;", e->sk.cvec ? "t_o0" : "t_o", row);
  open_block(o, e->sk.cvec ? "if (t_o0 < t_outer) /* AHEAD: columns of the tensor */"
                           : "if (t_o < t_outer) /* AHEAD: a row of the tensor */");
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_k = 0; t_k < ITEMS; t_k++)");
  emit(o, "const IndexT t_r0 = %s;", first_of_item(e));
  int n = 0;
  for (int i = 0; i < e->cached.len; i++) {
    const Cached *c = e->cached.items[i];
    if (loaded_in(c, 0))
      emit(o, "if (t_r0 < t_red) tecc::ahead_copy(t_ahead, %s, %s + %s);", ahead_slot(e, n++), c->ptr, pack_offset(e));
  }
  close_block(o, "");
  close_block(o, "");
  emit(o, "tecc::ahead_commit();");
  close_block(o, "");
}

/* AHEAD: this row's packs from the slots the loop's last round (or the
 * prologue, for the block's first row) filled, then the next row's copies,
 * under way while this one computes (issued before the output pass
 * instead, they were 4-16% slower than none for rows: bench/NOTES.md). */
static void load_ahead(SEmit *e, Out *o) {
  int n = 0;
  for (int i = 0; i < e->cached.len; i++) {
    const Cached *c = e->cached.items[i];
    if (!loaded_in(c, 0))
      continue;
    if (!(c->pairs || (c->v->dtype == DT_F32 && !c->quads)) || c->kept)
      internal_error("stitch: %s group %d loads %%%d ahead, not a value held as loaded", e->sk.k->name, e->sk.g->id,
                     c->v->id);
    n++;
  }
  const Variant *v = NULL;
  for (int i = 0; i < e->sk.sched->nvariants; i++)
    if (e->sk.sched->variants[i].ahead)
      v = &e->sk.sched->variants[i];
  if (!v || v->ahead != 16 * n)
    internal_error("stitch: %s group %d loads %d values ahead, its schedule %d bytes an item", e->sk.k->name,
                   e->sk.g->id, n, v ? v->ahead : 0);
  if (!e->prologue)
    e->prologue = new_out(e->sk.a);
  ahead_copies(e, e->prologue, "if (AHEAD) /* the block's first row, into shared memory */", ahead_first(e));
  emit(o, "tecc::ahead_wait(); /* this row's copies */");
  emit(o, "#pragma unroll"); /* every item: those past the row (never copied) no pass reads; */
  open_block(o, "for (int t_k = 0; t_k < ITEMS; t_k++)"); /* a test an item spilled 8 bytes (softmax bf16 over columns) */
  n = 0;
  for (int i = 0; i < e->cached.len; i++) {
    const Cached *c = e->cached.items[i];
    if (loaded_in(c, 0))
      emit(o, "tecc::ahead_take(t_ahead, %s, %s, t_k * 4);", ahead_slot(e, n++), c->name);
  }
  close_block(o, "");
  emit(o, "const IndexT t_an = %s + %s; /* the next row, its packs under way while this one computes */", ahead_row(e),
       ahead_step(e));
  ahead_copies(e, o, "", "t_an");
}

/* The reg kernel's loads of the thread's rows.  With prefetch, an instance
 * of ROWS > 1 (the warp variant, launched a wave of blocks that loop over
 * the row groups), or with partials a ROOMY one (the roomy variant, its
 * grid a wave too) or a CLUSTER one (each cluster looping over rows), has
 * the next row group's loads in flight while it
 * computes this one: t_n<id> is loaded ahead (before the loop, then at the
 * top of each iteration for the next), and t_c<id> takes it over.  The
 * AHEAD instance takes its row from shared memory (load_ahead()). */
static void load_thread_rows(SEmit *e, Out *o) {
  if (!e->sk.prefetch && !e->sk.ahead) {
    load_cached(e, o, 0);
    return;
  }
  declare_cached(e, o, 0);
  if (e->sk.ahead) {
    open_block(o, "if (AHEAD)");
    load_ahead(e, o);
    else_block(o);
  }
  if (!e->sk.prefetch) {
    load_declared(e, o, 0);
    close_block(o, "");
    return;
  }
  const char *rows = block_rows(e); /* prefetch: a rows kernel */
  const char *ahead = arena_printf(e->sk.a, "if (%s)", ahead_instances(e));
  if (!e->prologue)
    e->prologue = new_out(e->sk.a);
  e->into_next = 1;
  declare_cached(e, e->prologue, 0);
  open_block(e->prologue, "%s", ahead);
  emit(e->prologue, "const IndexT t_o0 = %s + threadIdx.y; /* the block's first row group */", first_row_group(e, rows));
  load_declared(e, e->prologue, 0);
  close_block(e->prologue, "");
  e->into_next = 0;
  open_block(o, "%s", ahead);
  take_next(e, o, 0);
  e->into_next = 1;
  emit(o, "const IndexT t_o0 = t_ob + %s + threadIdx.y; /* the next row group */", row_group_step(e, rows));
  load_declared(e, o, 0);
  e->into_next = 0;
  else_block(o);
  load_declared(e, o, 0);
  close_block(o, "");
  if (e->sk.ahead)
    close_block(o, "");
}

/* Where `when` holds, the thread's packs of the operands `takes` picks
 * into their arrays `array`<i>[t_k], the items inside the row (and where
 * `item_in` also holds). */
static void load_operand_packs(SEmit *e, Out *o, int (*takes)(const SEmit *, const Cached *), const char *array,
                               const char *when, const char *item_in) {
  open_block(o, "if (%s)", when);
  emit(o, "#pragma unroll");
  open_block(o, "for (int t_k = 0; t_k < ITEMS; t_k++)");
  emit(o, "const IndexT t_r0 = %s;", first_of_item(e));
  open_block(o, "if (%s)", item_in);
  for (int i = 0; i < e->cached.len; i++) {
    const Cached *c = e->cached.items[i];
    if (takes(e, c))
      emit(o, "%s%d[t_k] = %s;", array, i, operand_pack(e, c));
  }
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
}

/* EARLY: the packs of the row operands (loads_early()) with the row. */
static void load_early(SEmit *e, Out *o) {
  if (!stitch_early_kernel(&e->sk))
    return;
  for (int i = 0; i < e->cached.len; i++) {
    const Cached *c = e->cached.items[i];
    if (loads_early(e, c))
      emit(o, "tecc::Pack<%s, VEC> t_e%d[ITEMS]; /* EARLY: %s's packs, before the row's reductions */",
           cu_storage_ctype(c->v->dtype), i, c->ptr);
  }
  load_operand_packs(e, o, loads_early, "t_e", "EARLY && t_packs", item_in(e));
}

/* The packs of the operands holds_along() takes, with the row, where
 * every held element of the thread fits in 128 bytes: 32 registers (a
 * row's ITEMS 4 instances; those of ITEMS 8 spilled 152-192 bytes so). */
static void load_along(SEmit *e, Out *o) {
  int bytes = 0, any = 0;
  for (int i = 0; i < e->cached.len; i++) {
    const Cached *c = e->cached.items[i];
    if (holds_along(e, c)) {
      bytes += dtype_size(c->v->dtype);
      any = 1;
    } else if (loaded_in(c, 0)) {
      bytes += element_bytes(c);
    }
  }
  if (!any)
    return;
  emit(o, "constexpr bool t_hold_along = t_packs && ITEMS * VEC * %d <= 128; /* the along operands' packs held too */",
       bytes);
  for (int i = 0; i < e->cached.len; i++) {
    const Cached *c = e->cached.items[i];
    if (holds_along(e, c))
      emit(o, "tecc::Pack<%s, VEC> t_h%d[t_hold_along ? ITEMS : 1]; /* %s's packs, read by several passes */",
           cu_storage_ctype(c->v->dtype), i, c->ptr);
  }
  load_operand_packs(e, o, holds_along, "t_h", "t_hold_along",
                     arena_printf(e->sk.a, "%s && %s", row_live_operand(e), item_in(e)));
}

/* ---- the kernel: its passes, signature and row loop ------------------------- */

/* The passes of the kernel being written (its plan's). */
static const PlanKernel *plan_kernel(const SEmit *e) {
  return e->sk.reg ? &e->sk.g->plan->reg : &e->sk.g->plan->stream;
}

/* Does the output pass read the row for outputs along it?  (Its column
 * terms read it too, loaded as in the pass before.) */
static int reads_in_output_pass(const PlanKernel *pk) {
  return pk->passes[pk->npasses - 1].writes.len > 0;
}

/* ---- the pipe (stream kernel) ------------------------------------------------
 *
 * A stream kernel of two passes, a reduction pass and an output pass that
 * reads the row again, where its blocks take several rows (a grid of a
 * wave looping over them), walks row r's output pass and row r + 1's
 * first pass in one chunk loop: each chunk's loads of the next row (from
 * HBM, marked to stay in L2: tecc::load_last) go first, in flight while
 * this row's chunk is read again (from shared memory and L2) and
 * written, where the passes one after the other left each row's
 * all-reduces and the ends of its chunk loops with nothing in flight.
 * Kernel time against the passes one after the other (bf16, H200,
 * bench/NOTES.md, issue 47): cross-entropy's backward 0.82x to 0.92x at
 * 4096 x 80000 to 131072, softmax 0.85x to 0.96x, log_softmax 0.85x at
 * 80000, 0.98x to 1.04x at 120000 to 131072 (already near the copy
 * there: the pipe's L2 misses cost more than it hides).  The block's
 * first row's first pass runs alone before the row loop, and a row with
 * no next row walks its output pass alone, backward as before (its
 * chunks still in L2 first: rows of 1 MiB, bench/NOTES.md).  The first
 * pass walks forward in all three, so its folds, and the row's bits,
 * are the same as without the pipe. */

/* Does the group reduce or write f64 values? */
static int computes_f64(const Group *g) {
  for (int i = 0; i < g->roots.len; i++)
    if (((const Value *)g->roots.items[i])->dtype == DT_F64)
      return 1;
  for (int i = 0; i < g->stitch->reduces.len; i++)
    if (((const Value *)g->stitch->reduces.items[i])->dtype == DT_F64)
      return 1;
  return 0;
}

/* Are the values a row's passes read (over the row, and along it) one
 * held value of 16 bits or fewer, and at most one beside it, and its
 * outputs along the row not 8-bit?  Two chunks of more in flight at 64
 * registers (the stream kernel's bound, 1024 threads) spilled: f32
 * softmax 40 bytes, rmsnorm f32 96, layernorm f32 (its moments) 72, the
 * bf16 backward of log_softmax (y and dy) 104 and of cross-entropy with
 * a one-hot target 64, a row's fp8 quantization (its packs converted
 * four at a time) 24 to 56, and so did f64 arithmetic (softmax of u8 rows
 * in f64, 12 to 28; ptxas -v, sm_90). */
static int pipe_values(const Group *g) {
  const StitchPlan *plan = g->plan;
  if (plan->held.len != 1 || plan->along.len > 1 || plan->narrow_outputs || computes_f64(g))
    return 0;
  const PtrVec *lists[] = {&plan->held, &plan->along};
  for (int l = 0; l < 2; l++)
    for (int i = 0; i < lists[l]->len; i++)
      if (dtype_size(((const Value *)lists[l]->items[i])->dtype) > 2)
        return 0;
  return 1;
}

/* Can the kernel pipe (its shape; pipe_parts() checks the passes)?  Its
 * first pass the online sums or a level (moments, whose registers are
 * more: layernorm bf16's instance for rows that are not whole packs
 * spilled 16 bytes). */
static int pipe_shape(const SEmit *e, const PlanKernel *pk) {
  if (e->sk.reg || e->sk.cvec || e->sk.rows || e->sk.cluster || !e->sk.row || stitch_split_kernel(&e->sk) ||
      e->sk.sched->batch || e->sk.st->columns.len || e->sk.early.len || pk->npasses != 2 || !pipe_values(e->sk.g))
    return 0;
  const PlanPass *first = &pk->passes[0];
  return (first->kind == PASS_LEVEL || first->kind == PASS_ONLINE) && first->writes.len == 0 &&
         reads_in_output_pass(pk);
}

/* Do the passes written pipe: both in pieces, the first one's row scope
 * only accumulators (the next row's, reset), no kept axis's index? */
static int pipe_parts(const SEmit *e) {
  const PassParts *a = &e->parts[0], *b = &e->parts[1];
  return e->nparts == 2 && !a->whole && !b->whole && !a->row_values && !e->head_consts &&
         !memchr(e->used_kept, 1, sizeof e->used_kept);
}

/* The rows the pipe takes: a row of the held value of at most
 * PIPE_ROW_BYTES.  Past that the output pass's chunks, re-read a row's
 * traffic after the first pass read them (the next row's reads, this
 * row's writes), had left L2, where alone it walks back from the chunks
 * read last: cross-entropy's backward (bf16, kernel time, H200, without
 * tecc::load_last) at 4096 x 128256 0.91x, 4096 x 151936 1.06x, 2048 x
 * 256000 1.09x (bench/NOTES.md, issue 47). */
enum { PIPE_ROW_BYTES = 256 * 1024 };

/* The next row's first pass in a chunk of the pipe: `loads` (its loads,
 * at the chunk's start, into t_n<id>), `rest` (t_c<id> from them, the
 * items it keeps, its element loops); both in scopes where t_o is the
 * next row (t_live, this row's, holds there: a next row is inside). */
static void next_row_scope(Out *o) {
  open_scope(o);
  emit(o, "const IndexT t_o = t_on; /* the next row's first pass */");
}

static void pipe_next_loads(SEmit *e, Out *o, const PassParts *a) {
  const int pass = e->pass, guards = e->item_guards;
  e->pass = a->pass;
  e->item_guards = a->item_guards;
  e->into_next = 1;
  declare_cached(e, o, a->pass);
  next_row_scope(o);
  emit(o, "const IndexT t_nb = t_base;");
  e->loads_last = 1;
  load_declared_keeping(e, o, a->pass, NULL); /* its items kept after B's chunk (pipe_next_rest()) */
  e->loads_last = 0;
  close_block(o, "");
  e->into_next = 0;
  e->pass = pass;
  e->item_guards = guards;
}

static void pipe_next_rest(SEmit *e, Out *o, const PassParts *a) {
  next_row_scope(o);
  declare_cached(e, o, a->pass);
  take_next(e, o, a->pass);
  if (a->keeps->b->len)
    first_item(o);
  emit_fragment(o, a->keeps);
  emit_fragment(o, a->chunk);
  close_block(o, "");
}

/* The pipe: the block's first row's first pass (e->prologue, before the
 * row loop), then in the row loop: the first pass's all-reduces, and the
 * output pass's chunks each beside the next row's, whose loads go first
 * (in flight while the output pass's chunk re-reads and writes) and
 * whose items kept in shared memory go after the output pass took this
 * row's back. */
static void write_pipe(SEmit *e, Out *o, const PassParts *a, const PassParts *b) {
  Out *pro = e->prologue = new_out(e->sk.a);
  emit(pro, "/* the pipe: a row's output pass walks its chunks beside the next row's first pass */");
  emit_fragment(pro, a->before);
  open_scope(pro);
  emit(pro, "const IndexT t_o = (IndexT)blockIdx.x * blockDim.y + threadIdx.y; /* the thread's first row */");
  emit(pro, "const bool t_live = t_o < t_outer;");
  open_block(pro, "%s", a->guard);
  chunk_step(e, pro);
  open_chunk_loop_dir(e, pro, 1);
  emit_chunk(pro, a);
  close_block(pro, "");
  close_block(pro, "");
  close_block(pro, "");
  emit_fragment(o, a->after);
  emit_fragment(o, b->before);
  emit(o, "/* the first pass's accumulators, for the next row */");
  emit_fragment(o, e->resets);
  emit(o, "const IndexT t_on = t_o + (IndexT)gridDim.x * blockDim.y; /* the thread's next row */");
  open_block(o, "%s", b->guard);
  chunk_step(e, o);
  const int bytes = dtype_size(((const Value *)e->sk.g->plan->held.items[0])->dtype);
  /* rows of whole packs: the instances for the others, loading through
   * aligned words, spilled 24 to 28 bytes with a kept item (ptxas -v) */
  open_block(o, "if (%st_on < t_outer && t_red <= %d) /* rows of at most %d KiB */",
             stitch_takes_packs(&e->sk) ? "t_packs && " : "", PIPE_ROW_BYTES / bytes, PIPE_ROW_BYTES / 1024);
  open_chunk_loop_dir(e, o, 1);
  pipe_next_loads(e, o, a);
  open_scope(o);
  emit_chunk(o, b);
  close_block(o, "");
  pipe_next_rest(e, o, a);
  close_block(o, "");
  else_block(o);
  open_chunk_loop_dir(e, o, b->pass % 2);
  emit_chunk(o, b);
  close_block(o, "");
  open_block(o, "if (t_on < t_outer) /* the next row's first pass alone */");
  open_chunk_loop_dir(e, o, 1);
  next_row_scope(o);
  emit_chunk(o, a);
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
  close_block(o, "");
}

/* The row loop's body: passes, outputs. */
static void row_body(SEmit *e, Out *o) {
  Out *passes = new_out(e->sk.a);
  const PlanKernel *pk = plan_kernel(e);
  e->last_pass = e->pass + pk->npasses - 1 + reads_in_output_pass(pk); /* the last that reads the row */
  e->first_pass = e->pass + 1;
  /* Only the register kernel loads row values at the row's top: the
   * stream kernel's later passes load their chunks beside them, and its
   * 64 registers had no room to hold them from the top (an RMSNorm's row
   * scale spilled 8 bytes, ptxas -v sm_90); it gained 1% at 4096 x 128256
   * (row_value_at()). */
  e->row_loads = e->sk.reg ? new_out(e->sk.a) : NULL;
  e->row_loaded.len = 0;
  if (pipe_shape(e, pk)) {
    e->parts = ARENA_ARRAY(e->sk.a, PassParts, pk->npasses);
    e->resets = new_out(e->sk.a);
  }
  for (int i = 0; i < pk->npasses; i++) {
    const PlanPass *p = &pk->passes[i];
    if (p->kind == PASS_MOMENTS)
      moment_pass(e, passes, p->level);
    else if (p->kind == PASS_ONLINE)
      online_pass(e, passes, p->level);
    else if (p->kind == PASS_LEVEL || p->kind == PASS_SHIFTED)
      reduction_pass(e, passes, p);
  }
  if (stitch_split_kernel(&e->sk)) {
    write_partials(e, passes);
    emit(passes, "/* split: the chunk's outputs, once the chunks' partials are folded (PHASE 0 and 2) */");
    open_block(passes, "if (PHASE != 1)");
  }
  output_pass(e, passes, &pk->passes[pk->npasses - 1]);
  e->reset_head = NULL;
  if (e->parts && pipe_parts(e)) {
    write_pipe(e, passes, &e->parts[0], &e->parts[1]);
  } else if (e->parts) {
    for (int i = 0; i < e->nparts; i++)
      write_pass(e, passes, &e->parts[i]);
  }
  e->parts = NULL;
  /* The row's outputs read their row values where they are, not from the
   * top: the forward of cross-entropy with labels, whose label and l[t]
   * only they read, took 0.8-2% longer with them there (H200,
   * bench/NOTES.md 2026-12-01), and its f32 instance of 4 items spilled 8
   * bytes (ptxas -v, sm_90). */
  Out *top = e->row_loads;
  e->row_loads = NULL;
  row_outputs(e, passes);
  if (stitch_split_kernel(&e->sk))
    close_block(passes, "");
  if (e->sk.rows && memchr(e->used_kept, 1, sizeof e->used_kept))
    internal_error("stitch: a rows kernel indexes its one kept axis by more than t_o");
  emit_decompose(e, o, "t_o", ~e->sk.st->axes, e->used_kept);
  if (top)
    emit_fragment(o, top);
  if (e->sk.reg)
    load_thread_rows(e, o);
  load_early(e, o);
  load_along(e, o);
  emit_fragment(o, e->keep_decls);
  emit_fragment(o, passes);
}

/* The stream of column packs (VEC > 1, WHEN_COLUMN_GROUPS), if any. */
static const Variant *packed_column_variant(const SEmit *e) {
  for (int i = 0; e->sk.cvec && i < e->sk.sched->nvariants; i++)
    if (e->sk.sched->variants[i].when == WHEN_COLUMN_GROUPS && e->sk.sched->variants[i].vec > 1)
      return &e->sk.sched->variants[i];
  return NULL;
}

/* The stream kernel's packs per thread per chunk: more in its instances
 * of 32-bit indices where the schedule says (Variant.wide_items), fewer
 * in those of 64-bit indices (Variant.items64), and fewer again for rows
 * that are not whole packs (Variant.odd_items, odd_items64); streamed
 * columns' instances of packs and a split's second phase may take fewer
 * (schedule.c, heavy_column_stream()). */
static void declare_stream_items(SEmit *e, Out *o) {
  const Variant *v = stream_variant(e);
  const char *items = cu_by_index_bits(e->sk.a, v->wide_items ? v->wide_items : v->items, v->items64 ? v->items64 : v->items);
  const char *odd = cu_by_index_bits(e->sk.a, v->odd_items, v->odd_items64);
  if (stitch_takes_packs(&e->sk) && v->odd_items)
    items = arena_printf(e->sk.a, "PACKS ? (%s) : %s", items, odd);
  const Variant *packed = packed_column_variant(e);
  if (packed && packed->items != v->items) /* streamed columns: the packs in flight of VEC > 1 (schedule.c) */
    items = arena_printf(e->sk.a, "VEC == 1 ? %s : %d", items, packed->items);
  const Variant *split = stitch_split_kernel(&e->sk) ? stitch_fit_variant(e->sk.sched, FIT_COLUMN_SPLIT) : NULL;
  if (split && split->split_items)
    items = arena_printf(e->sk.a, "PHASE == 2 ? %d : %s", split->split_items, items);
  else if (split && split->items != (packed ? packed->items : v->items)) /* schedule.c, heavy_column_split() */
    items = arena_printf(e->sk.a, "PHASE ? %d : %s", split->items, items);
  emit(o, "constexpr int ITEMS = %s; /* packs per thread per chunk */", items);
  if (folds_in_groups(e))
    emit(o, "constexpr int FOLD = %s; /* the packs a chunk's online sums and moments fold at a time, in every instance */",
         odd);
}

/* The cluster-capable kernel takes a row per cluster, its lanes across
 * the cluster's blocks (one row per block).  Its CLUSTER instances are
 * launched only where the file was compiled for sm_90 (tecc::clusters_ok):
 * compiled for an older architecture their bodies are empty (a plain
 * `nvcc -c`, for sm_75, compiled softmax's four for nothing). */
static void declare_cluster_lanes(const SEmit *e, Out *o) {
  emit(o, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900");
  emit(o, "if (CLUSTER) return; /* never launched: tecc::clusters_ok wants sm_90 code */");
  emit(o, "#endif");
  if (e->uses_slot) {
    emit(o, "__shared__ __align__(16) unsigned char t_slot[32]; /* this block's row results, for the cluster, in turn */");
    emit(o, "unsigned t_par = 0; /* the slot of the next tecc::cluster_allreduce */");
  }
  emit(o, "const unsigned t_rank = CLUSTER ? tecc::cluster_rank() : 0, t_blocks = CLUSTER ? tecc::cluster_size() : 1;");
  emit(o, "const unsigned t_lane = t_rank * blockDim.x + threadIdx.x, t_lanes = t_blocks * blockDim.x;");
}

/* The template parameters of the kernel after IndexT, in order: each
 * one's type and name, `n` of them. */
typedef struct TParam {
  const char *type, *name;
} TParam;

static int template_list(const SEmit *e, TParam *t) {
  int n = 0;
#define TP(cond, ty, nm) \
  if (cond)              \
  t[n++] = (TParam){ty, nm}
  TP(e->sk.reg, "int", "ITEMS");
  TP(1, "int", "VEC");
  TP(e->sk.reg && e->sk.rows, "int", "ROWS");
  TP(stitch_takes_packs(&e->sk), "bool", "PACKS");
  TP(stitch_whole_instance(&e->sk), "bool", "WHOLE");
  TP(e->sk.reg && e->sk.shared, "bool", "SHARED");
  TP(!e->sk.reg && e->keep_bytes, "bool", "KEEP");
  TP(!e->sk.reg && stitch_split_kernel(&e->sk), "int", "PHASE");
  TP(e->sk.reg && e->sk.cluster, "bool", "CLUSTER");
  TP(e->sk.reg && e->sk.lanes, "int", "LANES");
  TP(e->sk.reg && stitch_early_kernel(&e->sk), "bool", "EARLY");
  TP(e->sk.reg && stitch_narrow_kernel(&e->sk), "bool", "NARROW");
  TP(e->sk.roomy, "bool", "ROOMY");
  TP(e->sk.solo, "bool", "SOLO");
  TP(e->sk.ahead, "bool", "AHEAD");
#undef TP
  return n;
}

/* The template parameters of the kernel after IndexT: declared
 * ("int ITEMS, int VEC, ...") or, for a call, named ("ITEMS, VEC, ..."). */
static const char *template_params(const SEmit *e, int names) {
  TParam t[16];
  int n = template_list(e, t);
  Buf b;
  buf_init(&b, e->sk.a);
  for (int i = 0; i < n; i++)
    buf_printf(&b, "%s%s%s%s", i ? ", " : "", names ? "" : t[i].type, names ? "" : " ", t[i].name);
  return buf_cstr(&b);
}

/* The kernel written takes the parameters its plan lists, which the
 * launch passes. */
static void check_params(const SEmit *e) {
  const PtrVec *want = &e->sk.g->plan->params;
  int same = want->len == e->params.len;
  for (int i = 0; same && i < want->len; i++)
    same = param_rank(want->items[i]) == param_rank(e->params.items[i]);
  if (!same)
    internal_error("stitch: %s group %d's kernel takes %d parameters, its plan %d or others", e->sk.k->name, e->sk.g->id,
                   e->params.len, want->len);
}

/* The kernel holds in shared memory what its variants' plans say
 * (Variant.shared_bytes, the bytes a thread): what the launches give. */
static void check_shared(const SEmit *e) {
  for (int i = 0; e->sk.shared && i < e->sk.sched->nvariants; i++) {
    const Variant *v = &e->sk.sched->variants[i];
    if (v->shared_bytes && v->shared_bytes != e->shared_at * v->items * v->vec)
      internal_error("stitch: %s group %d holds %d bytes an element in shared memory, its variant %s %d a thread",
                     e->sk.k->name, e->sk.g->id, e->shared_at, v->name, v->shared_bytes);
  }
}

/* A register kernel of column packs holds 16-bit values two to a word
 * (Cached.pairs): every variant it runs takes two columns or more
 * (schedule.c, held_column_vec()). */
static void check_pairs(const SEmit *e) {
  for (int i = 0; e->sk.reg && e->sk.cvec && i < e->cached.len; i++) {
    if (!((const Cached *)e->cached.items[i])->pairs)
      continue;
    for (int j = 0; j < e->sk.sched->nvariants; j++) {
      const Variant *v = &e->sk.sched->variants[j];
      if (v->storage == STORE_REGISTERS && v->vec < 2)
        internal_error("stitch: %s group %d holds 16-bit values two to a word, its variant %s one column a thread",
                       e->sk.k->name, e->sk.g->id, v->name);
    }
  }
}

/* A register kernel of 8-bit quads (StitchKernel.quads) with a WHOLE
 * instance is written as its body, a __device__ function, and two
 * kernels that call it: `name` for the other instances, bound as the
 * others (`bound`), and `name`_whole for the WHOLE one, bound to 32
 * registers a thread (TECC_QUADS_BOUND, __maxnreg__ from CUDA 12.4).
 * Left to itself ptxas gave the WHOLE instance of dequantize + RMSNorm
 * 63 registers, two blocks of 448 threads an SM; at 40 it ran three, and
 * 8192 x 14336 went from 120 to 96 us on an H200; at 32, four: 94.1 ->
 * 88.4 us (16384: 103.9 -> 102.2; rows of 1024 to 12288 within 1.6%,
 * either way; 36 registers allocate as 40).  No WHOLE instance of the
 * tracked programs spills at 32.  Bounding it by __launch_bounds__ (512
 * threads, 3 or 4 blocks) spilled 4 to 12 bytes, and __maxnreg__ on the
 * whole template spilled 12 to 28 in the instances for rows that are not
 * whole packs, which the threads' bound alone gives 46 registers and no
 * spill (ptxas -v, sm_90; bench/NOTES.md, issue 49). */
enum { QUADS_WHOLE_REGISTERS = 32 };

/* The minimum of blocks of a quads kernel's instances but WHOLE: the group's, but at least one
 * block an SM in a warp variant's instances of 32 lanes a row, to which
 * ptxas, left to itself, gave 32 registers and 8 bytes of spills
 * (dequantize + RMSNorm; with the minimum, 47 and none: sm_90). */
static const char *quads_blocks(const SEmit *e, const char *blocks) {
  return e->sk.quads && e->sk.lanes && !blocks ? "LANES == 32 ? 1 : 0" : blocks;
}

static int whole_apart(const SEmit *e) {
  return e->sk.quads && stitch_whole_instance(&e->sk);
}

static void emit_whole_apart(SEmit *e, Out *o, const char *bound, const char *threads, const char *decls,
                             const char *extra_names) {
  const char *name = stitch_kernel_name(&e->sk, 1), *tparams = template_params(e, 0);
  Buf args;
  buf_init(&args, e->sk.a);
  for (int i = 0; i < e->params.len; i++)
    buf_printf(&args, "%s%s", i ? ", " : "", ((const KParam *)e->params.items[i])->name);
  const char *call = arena_printf(e->sk.a, "%s_body<IndexT, %s>(%s%s);", name, template_params(e, 1), buf_cstr(&args),
                                  extra_names);
  emit(o, "template <typename IndexT, %s>", tparams);
  emit(o, "__global__ void %s %s(%s) { %s }", bound, name, decls, call);
  emit(o, "template <typename IndexT, %s>", tparams);
  emit(o, "__global__ void TECC_QUADS_BOUND(%s, %d) %s_whole(%s) { %s }", threads, QUADS_WHOLE_REGISTERS, name, decls,
       call);
}

static void emit_one_kernel(SEmit *e, Out *o, const char *roots) {
  Out *body = new_out(e->sk.a);
  row_body(e, body);
  check_shared(e);
  check_pairs(e);
  const char *outer = count_expr(e, ~e->sk.st->axes), *red = count_expr(e, e->sk.st->axes);
  sort_params(e);
  check_params(e);
  emit(o, "/* %s, group %d: %s, writes %s; %s */", e->sk.k->name, e->sk.g->id, class_name(e->sk.sched->cls), roots,
       e->sk.reg ? (e->sk.cluster ? "rows held in registers, across a cluster's blocks on sm_90"
                            : "rows held in registers")
              : "rows streamed, re-read by each pass");
  emit(o, "template <typename IndexT, %s>", template_params(e, 0));
  /* the parameters past the plan's: declared, and named for a call (whole_apart()) */
  const char *extra = "", *extra_names = "";
  if ((e->sk.vec || e->sk.cvec) && !stitch_takes_packs(&e->sk)) { /* AHEAD: packs (t_packs below) */
    extra = e->sk.ahead ? ", bool t_packed" : ", bool t_packs";
    extra_names = e->sk.ahead ? ", t_packed" : ", t_packs";
  }
  if (stitch_split_kernel(&e->sk)) {
    extra = arena_printf(e->sk.a, "%s, %s *__restrict__ t_part, IndexT t_chunk", extra, stitch_split_acc_type(&e->sk));
    extra_names = arena_printf(e->sk.a, "%s, t_part, t_chunk", extra_names);
  }
  if (e->sk.st->columns.len) {
    extra = arena_printf(e->sk.a, "%s, %s *__restrict__ t_cols", extra, stitch_column_acc_type(&e->sk));
    extra_names = arena_printf(e->sk.a, "%s, t_cols", extra_names);
  }
  if (e->sk.sched->batch && !e->sk.item) { /* the rows visited batch-fastest (above 1: the launcher's t_batched) */
    if (stitch_split_kernel(&e->sk))
      internal_error("stitch: group %d visits its rows batch-fastest and splits its columns", e->sk.g->id);
    extra = arena_printf(e->sk.a, "%s, IndexT t_batch", extra);
    extra_names = arena_printf(e->sk.a, "%s, t_batch", extra_names);
  }
  if (e->keep_bytes) {
    extra = arena_printf(e->sk.a, "%s, int t_keep", extra);
    extra_names = arena_printf(e->sk.a, "%s, t_keep", extra_names);
  }
  /* NARROW: no minimum of blocks (0) in its other instances, as the
   * one-argument form: an explicit 1 moved ptxas's register choice (the
   * block variant of card bf16 from 32 registers to 48, -1.7 points of
   * copy at 16384 x 4096 on an H200) */
  const char *threads = arena_printf(e->sk.a, "%d", e->sk.sched->max_threads), *blocks = NULL;
  /* the stream kernel's instances for rows that are not whole packs,
   * where they take fewer packs than the others (schedule.c, odd_rows()):
   * one block an SM, its 1024 threads' 64 registers (bound so, add_rmsnorm
   * bf16's, which take as many, were 7.9% slower at 1024 x 50257 on an
   * H200; bench/NOTES.md, issue 45) */
  if (!e->sk.reg && stitch_takes_packs(&e->sk) && stream_variant(e)->odd_items)
    blocks = "PACKS ? 0 : 1";
  /* SHARED: at least one block an SM, which lets ptxas have its 64
   * registers; with none it took 32 and spilled (4 to 36 bytes) */
  if (e->sk.shared)
    blocks = "SHARED ? 1 : 0";
  if (!e->sk.reg && stream_variant(e)->min_blocks) /* streamed columns (schedule.c, stitch_column()) */
    blocks = arena_printf(e->sk.a, "%d", stream_variant(e)->min_blocks);
  if (stitch_narrow_kernel(&e->sk)) {
    threads = arena_printf(e->sk.a, "NARROW ? %d : %s", NARROW_THREADS, threads);
    blocks = arena_printf(e->sk.a, "NARROW ? %d : %s", NARROW_BLOCKS, blocks ? arena_printf(e->sk.a, "(%s)", blocks) : "0");
  }
  if (stitch_early_kernel(&e->sk))
    threads = arena_printf(e->sk.a, "EARLY ? %d : %s", e->sk.sched->early_threads, threads);
  const Variant *split = stitch_split_kernel(&e->sk) ? stitch_fit_variant(e->sk.sched, FIT_COLUMN_SPLIT) : NULL;
  if (!e->sk.reg && split && split->split_bound) { /* schedule.c, heavy_column_split() */
    threads = arena_printf(e->sk.a, "PHASE ? %d : %s", split->block, threads);
    blocks = arena_printf(e->sk.a, "PHASE ? (sizeof(IndexT) == 4 ? %d : %d) : %s", split->split_bound,
                          split->split_bound - 1, blocks ? arena_printf(e->sk.a, "(%s)", blocks) : "0");
  }
  if (e->sk.st->columns.len) /* schedule.c, column_partials(): two blocks an SM */
    blocks = arena_printf(e->sk.a, "%d", COLUMN_PART_SM / COLUMN_PART_BLOCK);
  if (e->sk.roomy) /* schedule.c, insert_roomy(): two blocks of ROOMY_BLOCK threads, 128 registers */
    threads = arena_printf(e->sk.a, "ROOMY ? %d : %s", ROOMY_BLOCK, threads);
  if (e->sk.solo) { /* schedule.c, insert_solo(): one block of SOLO_BLOCK threads, 128 registers */
    if (e->sk.sched->max_threads != SOLO_BLOCK)
      threads = arena_printf(e->sk.a, "SOLO ? %d : %s", SOLO_BLOCK, threads);
    blocks = arena_printf(e->sk.a, "SOLO ? 1 : %s", blocks);
  }
  blocks = quads_blocks(e, blocks);
  /* LANES -1 (the warp variant's rows not in packs, emit_stitch_launch.c):
   * blocks of the variant's threads at most, one an SM at least, so that
   * ptxas may take the registers it needs: under the template's 1024
   * threads it spilled 4 to 8 bytes at 64 (red_bf16, card_bf16, seed452),
   * and with no minimum of blocks up to 44 (kept_f64: 56 registers; with
   * the minimum 56 to 91 and none; sm_90) */
  const Variant *warp = e->sk.reg && e->sk.lanes ? stitch_fit_variant(e->sk.sched, FIT_SHORT_ROWS) : NULL;
  const char *most = threads; /* the WHOLE kernel apart keeps `threads`: its instance has packs */
  if (warp && strcmp(threads, arena_printf(e->sk.a, "%d", warp->block)))
    most = arena_printf(e->sk.a, "LANES < 0 ? %d : %s", warp->block, threads);
  if (warp && !(blocks && blocks[strspn(blocks, "0123456789")] == '\0')) /* not already a count for all */
    blocks = blocks ? arena_printf(e->sk.a, "LANES < 0 ? 1 : (%s)", blocks) : "LANES < 0 ? 1 : 0";
  const char *bound = blocks ? arena_printf(e->sk.a, "__launch_bounds__(%s, %s)", most, blocks)
                             : arena_printf(e->sk.a, "__launch_bounds__(%s)", most);
  const char *decls = arena_printf(e->sk.a, "%s%s", e->sk.item ? param_decls_lag(e->sk.a, e->sk.k, &e->params)
                                                               : param_decls(e->sk.a, e->sk.k, &e->params, 0), extra);
  if (e->sk.item)
    open_block(o, "__device__ __forceinline__ void %s(%s, IndexT t_item)", stitch_kernel_name(&e->sk, e->sk.reg),
               decls);
  else if (whole_apart(e))
    open_block(o, "__device__ __forceinline__ void %s_body(%s)", stitch_kernel_name(&e->sk, 1), decls);
  else
    open_block(o, "__global__ void %s %s(%s)", bound, stitch_kernel_name(&e->sk, e->sk.reg), decls);
  if (stitch_takes_packs(&e->sk))
    emit(o, "constexpr bool t_packs = PACKS; /* whole packs, aligned: no row-end checks per element */");
  else if ((e->sk.vec || e->sk.cvec) && e->sk.ahead)
    emit(o, "const bool t_packs = AHEAD || t_packed; /* whole packs, aligned (AHEAD: always) */");
  if (stitch_whole_instance(&e->sk))
    emit(o, e->sk.reg ? "constexpr bool t_whole = WHOLE; /* whole row groups of whole rows: no row or item guards */"
                   : "constexpr bool t_whole = WHOLE; /* rows of whole chunks: no item guards */");
  else if (e->sk.whole)
    emit(o, "constexpr bool t_whole = false; /* no PACKS, no WHOLE instance */");
  if (e->sk.cvec && e->uses_smem)
    emit(o, "__shared__ __align__(16) unsigned char t_smem[%d * VEC]; /* tecc::column_allreduce_vec */",
         stitch_column_allreduce_bytes(e->sk.g));
  else if (e->sk.st->columns.len && e->sk.reg) /* write_columns() folds half the block's threads' VEC sums */
    emit(o, "__shared__ __align__(16) unsigned char t_smem[%s > 8 * 1024 ? %s : 8 * 1024];", column_fold_bytes(e),
         column_fold_bytes(e));
  else if (e->uses_smem) /* all-reduces */
    emit(o, "__shared__ __align__(16) unsigned char t_smem[8 * 1024];");
  if (e->sk.shared) {
    emit(o, "extern __shared__ __align__(16) unsigned char t_held[]; /* SHARED: the held values, element i of thread t "
            "at i * t_hth + t */");
    emit(o, "const unsigned t_hth = blockDim.x * blockDim.y, t_hid = threadIdx.y * blockDim.x + threadIdx.x;");
    emit(o, "constexpr int t_hu = SHARED ? (ITEMS >= %d ? %d : %d) : ITEMS; /* the items an element loop unrolls at "
            "a time (schedule.h, SHARED_UNROLL) */", 2 * SHARED_UNROLL, SHARED_UNROLL, SHARED_UNROLL / 2);
  }
  if (e->sk.ahead) {
    emit(o, "extern __shared__ __align__(16) unsigned char t_ahead[]; /* AHEAD: the next row's packs (tecc::ahead_copy) */");
    emit(o, "constexpr unsigned t_ath = %d; /* AHEAD: a block's threads (emit_ahead_launch()) */", AHEAD_THREADS);
    emit(o, "const unsigned t_aid = threadIdx.y * blockDim.x + threadIdx.x;");
    if (e->sk.rows)
      emit(o, "static_assert(!AHEAD || ROWS == 1, \"AHEAD: a row a thread\");");
  }
  if (e->keep_bytes) {
    emit(o, "extern __shared__ uint4 t_kept[]; /* the row's first t_keep items of the values read again (tecc::keep_items) */");
    emit(o, "constexpr int t_kw = VEC * %d / 16; /* their 16-byte words an item */", e->keep_bytes);
    emit(o, "const unsigned t_kth = blockDim.x * blockDim.y, t_kid = threadIdx.y * blockDim.x + threadIdx.x;");
  }
  emit(o, "const IndexT t_outer = %s;", outer);
  emit(o, "const IndexT t_red = %s;", red);
  if (!e->sk.reg)
    declare_stream_items(e, o);
  if (stitch_split_kernel(&e->sk)) {
    emit(o, "/* the block's rows: all of them (PHASE 0), or chunk blockIdx.y of t_chunk rows (1, 2) */");
    emit(o, "const IndexT t_lo = PHASE ? (IndexT)blockIdx.y * t_chunk : 0;");
    emit(o, "const IndexT t_hi = PHASE && t_red - t_lo > t_chunk ? t_lo + t_chunk : t_red;");
  }
  const char *item = e->sk.row ? "y" : "x";
  if (e->sk.cluster)
    declare_cluster_lanes(e, o);
  if (e->prologue)
    emit_fragment(o, e->prologue);
  declare_columns(e, o);
  if (e->sk.item) {
    open_block(o, "if (t_item < t_outer) /* the item's %s */", e->sk.row ? "row" : "column");
    emit(o, "const IndexT t_ob = t_item;");
  } else if (e->sk.cluster || e->sk.rows) {
    open_block(o, "for (IndexT t_ob = %s; t_ob < t_outer; t_ob += %s)", first_row_group(e, block_rows(e)),
               row_group_step(e, block_rows(e)));
  } else if (e->sk.cvec) {
    open_block(o, "for (IndexT t_ob = %s; t_ob < t_outer; t_ob += %s)", COLUMN_GROUP_FIRST, COLUMN_GROUP_STEP);
  } else {
    open_block(o, "for (IndexT t_ob = (IndexT)blockIdx.x * blockDim.%s; t_ob < t_outer; t_ob += (IndexT)gridDim.x * blockDim.%s)", item, item);
  }
  if (e->sk.cvec) {
    emit(o, "const IndexT t_o0 = t_ob + (IndexT)threadIdx.x * VEC; /* the thread's first column */");
    emit(o, "const bool t_live = t_o0 < t_outer;");
  } else if (e->sk.rows) {
    emit(o, "const IndexT t_o0 = t_ob + threadIdx.y; /* the thread's first row */");
    emit(o, "const bool t_live = %st_o0 < t_outer;", e->sk.whole ? "t_whole || " : "");
  } else {
    const char *row = e->sk.item ? "t_ob" : arena_printf(e->sk.a, "t_ob + threadIdx.%s", item);
    if (e->sk.sched->batch && !e->sk.item) /* t_batch over 1: the rows batch-fastest (schedule.c, batch_axes()) */
      row = arena_printf(e->sk.a, "t_batch > 1 ? tecc::batch_fastest<IndexT>(%s, t_outer, t_batch) : %s", row, row);
    emit(o, "const IndexT t_o = %s;", row);
    emit(o, "const bool t_live = %st_o < t_outer;", e->sk.whole && e->sk.reg ? "t_whole || " : "");
  }
  emit_fragment(o, body);
  close_block(o, "");
  if (e->sk.cluster)
    emit(o, "if (CLUSTER) tecc::cluster_drain(); /* the last row's slots may still be read */");
  write_columns(e, o);
  close_block(o, "");
  if (whole_apart(e))
    emit_whole_apart(e, o, bound, threads, decls, extra_names);
}

static const char *roots_str(Arena *a, const Kernel *k, const KernelPlan *kp, const Group *g) {
  Buf b;
  buf_init(&b, a);
  int n = 0;
  for (int i = 0; i < g->roots.len; i++) {
    const Value *v = g->roots.items[i];
    for (int o = 0; o < k->noutputs; o++)
      if (k->outputs[o].value == v)
        buf_printf(&b, "%s%s", n++ ? ", " : "", k->outputs[o].name);
    if (kp->home[v->id].kind == HOME_WORKSPACE)
      buf_printf(&b, "%s%%%d (workspace)", n++ ? ", " : "", v->id);
  }
  return buf_cstr(&b);
}

/* The emitter of the stream kernel, which keeps values. */
static SEmit *stream_semit(Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names) {
  SEmit *e = new_semit(a, k, kp, g, names, 0);
  e->keeps = 1;
  return e;
}

/* Group g's item function for a lag kernel (StitchKernel.item). */
const PtrVec *emit_stitch_item(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names) {
  SEmit *e = semit_of(stitch_item_kernel(a, k, kp, g, names));
  emit_one_kernel(e, o, roots_str(a, k, kp, g));
  return &e->params;
}

/* The kernels the group's variants launch: the register kernel (also the
 * cluster one), the streaming kernel. */
void emit_stitch_kernel(Out *o, Arena *a, Kernel *k, KernelPlan *kp, Group *g, const EntryNames *names) {
  const char *roots = roots_str(a, k, kp, g);
  const GroupSchedule *s = g->schedule;
  int reg = stitch_has_storage(s, STORE_REGISTERS) || stitch_has_storage(s, STORE_CLUSTER);
  if (reg)
    emit_one_kernel(new_semit(a, k, kp, g, names, 1), o, roots);
  if (reg && stitch_has_storage(s, STORE_STREAM))
    emit_blank(o);
  if (stitch_has_storage(s, STORE_STREAM))
    emit_one_kernel(stream_semit(a, k, kp, g, names), o, roots);
  if (stitch_has_fit(s, FIT_COLUMN_SPLIT)) {
    emit_blank(o);
    emit_stitch_chunks(o, a, k, kp, g, names);
  }
  if (g->stitch->columns.len) {
    emit_blank(o);
    emit_column_sums(o, new_semit(a, k, kp, g, names, 1));
    emit_blank(o);
    emit_stitch_parts(o, a, k, kp, g, names);
  }
}
