/* emit_common.c — what emit_cu.c and emit_stitch.c build alike for a
 * group's kernel: parameter declarations and launch arguments, the memo of
 * named temporaries, index maps, fresh names, and the spelling of dims in
 * host code and in --emit=plan (emit.h). */
#include "emit.h"

#include <string.h>

/* ---- parameters and launches ----------------------------------------------- */

static DType param_dtype(const Kernel *k, const KParam *p) {
  switch (p->kind) {
  case P_INPUT: case P_SCALAR: return k->inputs[p->index].dtype;
  case P_OUTPUT: return k->outputs[p->index].dtype;
  default: return p->value->dtype;
  }
}

const char *param_decl(Arena *a, const Kernel *k, const KParam *p, int may_alias) {
  const char *restrict_ = may_alias ? "" : "__restrict__ ";
  switch (p->kind) {
  case P_INPUT: case P_STORED_READ:
    return arena_printf(a, "const %s *%s%s", cu_storage_ctype(param_dtype(k, p)), restrict_, p->name);
  case P_SCALAR:
    return arena_printf(a, "%s %s", cu_storage_ctype(param_dtype(k, p)), p->name);
  case P_OUTPUT: case P_WS_WRITE:
    return arena_printf(a, "%s *%s%s", cu_storage_ctype(param_dtype(k, p)), restrict_, p->name);
  case P_SIZE:
    return arena_printf(a, "IndexT %s", p->name);
  case P_FASTDIV:
    return arena_printf(a, "tecc::FastDiv<IndexT> %s", p->name);
  case P_RCOUNT:
    return arena_printf(a, "%s %s", p->index ? "double" : "float", p->name);
  }
  unreachable();
}

const char *param_decls(Arena *a, const Kernel *k, const PtrVec *params, int may_alias) {
  Buf b;
  buf_init(&b, a);
  for (int i = 0; i < params->len; i++)
    buf_printf(&b, "%s%s", i ? ", " : "", param_decl(a, k, params->items[i], may_alias));
  return buf_cstr(&b);
}

const char *param_decls_lag(Arena *a, const Kernel *k, const PtrVec *params) {
  Buf b;
  buf_init(&b, a);
  for (int i = 0; i < params->len; i++) {
    const KParam *p = params->items[i];
    buf_printf(&b, "%s%s", i ? ", " : "", param_decl(a, k, p, p->kind == P_STORED_READ || p->kind == P_WS_WRITE));
  }
  return buf_cstr(&b);
}

const char *slot_name(Arena *a, int slot) {
  return arena_printf(a, "t_ws%d", slot);
}

const char *home_pointer(Arena *a, const KernelPlan *kp, const EntryNames *n, const Value *v) {
  Home h = kp->home[v->id];
  switch (h.kind) {
  case HOME_OUTPUT: return n->outputs[h.index];
  case HOME_WORKSPACE: return slot_name(a, h.index);
  case HOME_INPUT: return n->inputs[h.index];
  default: internal_error("value %d is read from memory but has no home", v->id);
  }
}

const char *launch_arg(Arena *a, const KernelPlan *kp, const EntryNames *n, const KParam *p) {
  switch (p->kind) {
  case P_INPUT: case P_SCALAR: return n->inputs[p->index];
  case P_OUTPUT: return n->outputs[p->index];
  case P_STORED_READ: case P_WS_WRITE: return home_pointer(a, kp, n, p->value);
  case P_SIZE: return arena_printf(a, "(IndexT)%s", n->sizes[p->index]);
  case P_FASTDIV: return arena_printf(a, "tecc::FastDiv<IndexT>(%s)", n->sizes[p->index]);
  case P_RCOUNT: return p->index ? "1.0 / (double)t_len" : "1.0f / (float)t_len";
  }
  unreachable();
}

const char *launch_args(Arena *a, const KernelPlan *kp, const EntryNames *n, const PtrVec *params) {
  Buf b;
  buf_init(&b, a);
  for (int i = 0; i < params->len; i++)
    buf_printf(&b, "%s%s", i ? ", " : "", launch_arg(a, kp, n, params->items[i]));
  return buf_cstr(&b);
}

void emit_launch_check(Out *o) {
  emit(o, "t_err = cudaGetLastError();");
  emit(o, "if (t_err != cudaSuccess) return (tecc_status)(TECC_ERROR_CUDA + (int)t_err);");
}

/* ---- temporaries, names, maps -------------------------------------------------- */

Memo *memo_find(const PtrVec *memo, const Value *v, const int *map) {
  for (int i = 0; i < memo->len; i++) {
    Memo *m = memo->items[i];
    if (m->id == v->id && memcmp(m->map, map, sizeof(int) * (size_t)v->shape.rank) == 0)
      return m;
  }
  return NULL;
}

Memo *memo_add(Arena *a, PtrVec *memo, const Value *v, const int *map, const char *name) {
  Memo *m = ARENA_NEW(a, Memo);
  m->id = v->id;
  memcpy(m->map, map, sizeof(int) * (size_t)v->shape.rank);
  m->name = name;
  vec_push(a, memo, m);
  return m;
}

static int names_parameter(const Kernel *k, const char *name) {
  for (int i = 0; i < k->ninputs; i++)
    if (strcmp(k->inputs[i].name, name) == 0)
      return 1;
  for (int i = 0; i < k->noutputs; i++)
    if (strcmp(k->outputs[i].name, name) == 0)
      return 1;
  for (int i = 0; i < k->nsizevars; i++)
    if (strcmp(k->sizevars[i].name, name) == 0)
      return 1;
  return 0;
}

const char *value_temp_name(Arena *a, const Kernel *k, const Value *v) {
  const char *name = v->op == IR_INPUT ? k->inputs[v->index].name : v->name;
  if (!name)
    return arena_printf(a, "v%d", v->id);
  return names_parameter(k, name) ? arena_printf(a, "%s_val", name) : name;
}

const char *fresh_name(Arena *a, NameSet *taken, const char *want) {
  return nameset_fresh(taken, name_is_reserved(want) ? arena_printf(a, "u_%s", want) : want);
}

void take_entry_names(NameSet *taken, const Kernel *k, const EntryNames *n) {
  for (int i = 0; i < k->ninputs; i++)
    nameset_add(taken, n->inputs[i]);
  for (int i = 0; i < k->noutputs; i++)
    nameset_add(taken, n->outputs[i]);
  for (int i = 0; i < k->nsizevars; i++)
    nameset_add(taken, n->sizes[i]);
}

void identity_map(int *map, int rank) {
  for (int i = 0; i < rank; i++)
    map[i] = i;
}

const char *reduce_linear_index(const Shape *s, uint32_t axes) {
  int seen_red = 0, kept_after_red = 0, seen_kept = 0, red_after_kept = 0;
  for (int i = 0; i < s->rank; i++) {
    if (dim_is_one(s, i))
      continue;
    if ((axes >> i) & 1u) {
      seen_red = 1;
      red_after_kept |= seen_kept;
    } else {
      kept_after_red |= seen_red;
      seen_kept = 1;
    }
  }
  if (!kept_after_red)
    return "t_o * t_red + t_r";
  if (!red_after_kept)
    return "t_r * t_outer + t_o";
  return NULL;
}

/* ---- dims ------------------------------------------------------------------------ */

int shape_axes(const Shape *s, uint32_t mask, int *axes) {
  int n = 0;
  for (int i = 0; i < s->rank; i++)
    if (((mask >> i) & 1u) && !dim_is_one(s, i))
      axes[n++] = i;
  return n;
}

const char *plan_dims(Arena *a, const Kernel *k, const Shape *s, uint32_t mask) {
  Buf b;
  buf_init(&b, a);
  int axes[TECC_MAX_RANK], n = shape_axes(s, mask, axes);
  for (int j = 0; j < n; j++) {
    Dim d = s->d[axes[j]];
    if (d.var >= 0)
      buf_printf(&b, "%s%s", j ? "*" : "", k->sizevars[d.var].name);
    else
      buf_printf(&b, "%s%lld", j ? "*" : "", (long long)d.size);
  }
  return n ? buf_cstr(&b) : "1";
}

const char *host_dim(Arena *a, const EntryNames *n, Dim d) {
  return d.var >= 0 ? n->sizes[d.var] : arena_printf(a, "INT64_C(%lld)", (long long)d.size);
}

/* ---- entry-point names ------------------------------------------------- */

static int name_taken(const char **names, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], s) == 0)
      return 1;
  return 0;
}

static const char *unique_name(Arena *a, const char **taken, int ntaken, const char *want) {
  const char *s = name_is_reserved(want) ? arena_printf(a, "u_%s", want) : want;
  while (name_taken(taken, ntaken, s))
    s = arena_printf(a, "%s_", s);
  return s;
}

EntryNames *entry_names(Arena *a, const Kernel *k) {
  EntryNames *n = ARENA_NEW(a, EntryNames);
  int total = k->ninputs + k->noutputs + k->nsizevars, used = 0;
  const char **all = ARENA_ARRAY(a, const char *, total + 1);
  n->inputs = ARENA_ARRAY(a, const char *, k->ninputs + 1);
  n->outputs = ARENA_ARRAY(a, const char *, k->noutputs + 1);
  n->sizes = ARENA_ARRAY(a, const char *, k->nsizevars + 1);
  for (int i = 0; i < k->ninputs; i++) {
    n->inputs[i] = unique_name(a, all, used, k->inputs[i].name);
    all[used] = n->inputs[i];
    used++;
  }
  for (int i = 0; i < k->noutputs; i++) {
    n->outputs[i] = unique_name(a, all, used, k->outputs[i].name);
    all[used] = n->outputs[i];
    used++;
  }
  for (int i = 0; i < k->nsizevars; i++) {
    const SizeVar *sv = &k->sizevars[i];
    n->sizes[i] = unique_name(a, all, used, sv->def ? se_ident(a, sv->def, n->sizes) : sv->name);
    all[used] = n->sizes[i];
    used++;
  }
  return n;
}
