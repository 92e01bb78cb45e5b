/* emit_dumps.c — --emit=fused, dot and json (emit_dumps.h). */
#include "emit_dumps.h"
#include "schedule.h"
#include "stitch.h"
#include "stitch_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *op_label(Arena *a, const Value *v) {
  switch (v->op) {
  case IR_INPUT: return "input";
  case IR_CONST: return "const";
  case IR_CAST: return arena_printf(a, "cast.%s", dtype_name(v->dtype));
  case IR_UNARY: return v->uop == UN_NEG ? "neg" : v->uop == UN_NOT ? "not" : unary_name(v->uop);
  case IR_BINARY: return binary_name(v->bop);
  case IR_SELECT: return "where";
  case IR_BROADCAST: return "broadcast";
  case IR_REDUCE: return reduce_name(v->rop);
  default: return "?";
  }
}

static const char *axes_str(Arena *a, uint32_t axes, int rank) {
  Buf b;
  buf_init(&b, a);
  int n = 0;
  for (int i = 0; i < rank; i++)
    if ((axes >> i) & 1u)
      buf_printf(&b, "%s%d", n++ ? ", " : "", i);
  return buf_cstr(&b);
}

static const char *values_str(Arena *a, const PtrVec *v) {
  Buf b;
  buf_init(&b, a);
  for (int i = 0; i < v->len; i++)
    buf_printf(&b, "%s%s", i ? ", " : "", ir_value_label(a, v->items[i]));
  return v->len ? buf_cstr(&b) : "-";
}

/* ---- fused ---------------------------------------------------------------- */

const char *emit_fused(Compilation *c, Module *m, FusionPlan *p) {
  Arena *a = c->arena;
  Buf b;
  buf_init(&b, a);
  for (int i = 0; i < m->nkernels; i++) {
    Kernel *k = m->kernels[i];
    KernelPlan *kp = p->kernels[i];
    buf_printf(&b, "kernel %s: %d group(s) at -O%d\n", k->name, kp->groups.len, p->opt_level);
    for (int j = 0; j < kp->groups.len; j++) {
      Group *g = kp->groups.items[j];
      buf_printf(&b, "  group %d: %s over %s\n", g->id, group_kind_name(g->kind), shape_str(a, k, &g->domain));
      buf_printf(&b, "    writes: %s\n", values_str(a, &g->roots));
      if (g->epilogue.len)
        buf_printf(&b, "    and from its result: %s\n", values_str(a, &g->epilogue));
      buf_printf(&b, "    reads:  %s\n", values_str(a, &g->reads));
      buf_printf(&b, "    fused:  ");
      for (int v = 0; v < g->members.len; v++) {
        const Value *x = g->members.items[v];
        buf_printf(&b, "%s%s=%s", v ? ", " : "", ir_value_label(a, x), op_label(a, x));
      }
      buf_puts(&b, "\n");
    }
  }
  return buf_cstr(&b);
}

/* ---- dot -------------------------------------------------------------------- */

const char *emit_dot(Compilation *c, Module *m, FusionPlan *p) {
  Arena *a = c->arena;
  Buf b;
  buf_init(&b, a);
  buf_puts(&b, "digraph tecc {\n  node [shape=box, fontname=\"monospace\"];\n");
  for (int i = 0; i < m->nkernels; i++) {
    Kernel *k = m->kernels[i];
    KernelPlan *kp = p->kernels[i];
    buf_printf(&b, "  subgraph cluster_k%d {\n    label=\"kernel %s\";\n", i, k->name);
    for (int j = 0; j < kp->groups.len; j++) {
      Group *g = kp->groups.items[j];
      buf_printf(&b, "    subgraph cluster_k%d_g%d {\n      label=\"group %d (%s, %s)\";\n", i, j, j,
                 group_kind_name(g->kind), schedule_name(g->sched));
      for (int v = 0; v < g->members.len; v++) {
        const Value *x = g->members.items[v];
        buf_printf(&b, "      k%d_v%d;\n", i, x->id);
      }
      buf_puts(&b, "    }\n");
    }
    for (int v = 0; v < k->values.len; v++) {
      const Value *x = k->values.items[v];
      buf_printf(&b, "    k%d_v%d [label=\"%%%d%s%s = %s %s %s\"];\n", i, x->id, x->id, x->name ? " " : "",
                 x->name ? x->name : "", op_label(a, x), dtype_name(x->dtype), shape_str(a, k, &x->shape));
      for (int j = 0; j < x->nargs; j++)
        buf_printf(&b, "    k%d_v%d -> k%d_v%d;\n", i, x->args[j]->id, i, x->id);
    }
    for (int o = 0; o < k->noutputs; o++)
      buf_printf(&b, "    k%d_out%d [label=\"output %s\", shape=oval];\n    k%d_v%d -> k%d_out%d;\n", i, o,
                 k->outputs[o].name, i, k->outputs[o].value->id, i, o);
    buf_puts(&b, "  }\n");
  }
  buf_puts(&b, "}\n");
  return buf_cstr(&b);
}

/* ---- json -------------------------------------------------------------------- */

static void json_str(Buf *b, const char *s) {
  buf_puts(b, "\"");
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\')
      buf_printf(b, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      buf_printf(b, "\\u%04x", (unsigned char)*s);
    else
      buf_putn(b, s, 1);
  }
  buf_puts(b, "\"");
}

static void json_shape(Buf *b, const Kernel *k, const Shape *s) {
  buf_puts(b, "[");
  for (int i = 0; i < s->rank; i++) {
    if (i)
      buf_puts(b, ", ");
    if (s->d[i].var >= 0)
      json_str(b, k->sizevars[s->d[i].var].name);
    else
      buf_printf(b, "%lld", (long long)s->d[i].size);
  }
  buf_puts(b, "]");
}

/* JSON has no infinity or NaN: those constants are the strings "inf",
 * "-inf" and "nan". */
static void json_float(Buf *b, double x) {
  if (isnan(x))
    buf_puts(b, ", \"value\": \"nan\"");
  else if (isinf(x))
    buf_puts(b, x < 0 ? ", \"value\": \"-inf\"" : ", \"value\": \"inf\"");
  else
    buf_printf(b, ", \"value\": %.17g", x);
}

static void json_value(Buf *b, Arena *a, const Kernel *k, const KernelPlan *kp, const Value *v) {
  buf_printf(b, "        {\"id\": %d, \"op\": ", v->id);
  json_str(b, op_label(a, v));
  buf_puts(b, ", \"dtype\": ");
  json_str(b, dtype_name(v->dtype));
  buf_puts(b, ", \"shape\": ");
  json_shape(b, k, &v->shape);
  buf_puts(b, ", \"args\": [");
  for (int i = 0; i < v->nargs; i++)
    buf_printf(b, "%s%d", i ? ", " : "", v->args[i]->id);
  buf_puts(b, "]");
  if (v->name) {
    buf_puts(b, ", \"name\": ");
    json_str(b, v->name);
  }
  if (v->op == IR_REDUCE)
    buf_printf(b, ", \"axes\": [%s]", axes_str(a, v->axes, v->args[0]->shape.rank));
  if (v->op == IR_INPUT)
    buf_printf(b, ", \"input\": %d", v->index);
  if (v->op == IR_CONST && (v->dtype == DT_F16 || v->dtype == DT_BF16 || v->dtype == DT_F32 || v->dtype == DT_F64))
    json_float(b, v->fval);
  else if (v->op == IR_CONST)
    buf_printf(b, ", \"value\": %lld", (long long)v->ival);
  buf_printf(b, ", \"group\": %d, \"stored\": %s}", kp->group_of[v->id], kp->stored[v->id] ? "true" : "false");
}

static void json_ids(Buf *b, const PtrVec *v) {
  buf_puts(b, "[");
  for (int i = 0; i < v->len; i++)
    buf_printf(b, "%s%d", i ? ", " : "", ((const Value *)v->items[i])->id);
  buf_puts(b, "]");
}

/* `, "name": [ids]`: a field of value ids. */
static void json_ids_field(Buf *b, const char *name, const PtrVec *v) {
  buf_printf(b, ", \"%s\": ", name);
  json_ids(b, v);
}

static const char *json_bool(int x) {
  return x ? "true" : "false";
}

/* The fields of a variant's condition: when, and its limit where the
 * condition has one (null otherwise), then the words of --emit=plan. */
static void json_condition(Buf *b, Arena *a, const Variant *v, int first) {
  buf_printf(b, "\"when\": \"%s\", \"limit\": ", when_name(v->when));
  if (when_uses_limit(v->when))
    buf_printf(b, "%lld", (long long)v->limit);
  else
    buf_puts(b, "null");
  buf_puts(b, ", \"condition\": ");
  json_str(b, variant_condition_text(a, v, first));
}

/* Every field of a Variant (schedule.h), in its order. */
static void json_variant(Buf *b, Arena *a, const Variant *v, int first) {
  buf_puts(b, "          {\"name\": ");
  json_str(b, v->name);
  buf_puts(b, ", ");
  json_condition(b, a, v, first);
  buf_printf(b, ", \"storage\": \"%s\", \"fit\": \"%s\", \"vec\": %d, \"items\": %d, \"rows\": %d",
             storage_name(v->storage), fit_name(v->fit), v->vec, v->items, v->rows);
  buf_printf(b, ", \"prefetch\": %s, \"threads_x\": %d, \"threads_y\": %d, \"block\": %d, \"min_lanes\": %d",
             json_bool(v->prefetch), v->threads_x, v->threads_y, v->block, variant_min_lanes(v));
  buf_printf(b, ", \"cluster\": %d", v->cluster);
  buf_printf(b, ", \"sm_threads\": %d, \"cover_bytes\": %d, \"split\": %d, \"index_bits\": %d, \"one_read\": %s",
             v->sm_threads, v->cover_bytes, v->split, v->index_bits, json_bool(v->one_read));
  buf_printf(b, ", \"wide_items\": %d, \"long_items\": %d, \"long_packs\": %d", v->wide_items, v->long_items,
             v->long_packs);
  buf_printf(b, ", \"items64\": %d, \"odd_items\": %d, \"odd_items64\": %d, \"split_items\": %d, \"folds\": %s",
             v->items64, v->odd_items, v->odd_items64, v->split_items, json_bool(v->folds));
  buf_printf(b, ", \"min_blocks\": %d, \"roomy\": %s, \"solo\": %s", v->min_blocks, json_bool(v->roomy),
             json_bool(v->solo));
  if (v->fit == FIT_COLUMN_SPLIT)
    buf_printf(b, ", \"split_sm_blocks\": %d, \"split_rows\": %d, \"split_bound\": %d", v->split_sm_blocks,
               v->split_rows, v->split_bound);
  buf_printf(b, ", \"keeps\": %s, \"loops\": %s, \"pair_loops\": %s, \"early\": %s, \"partials\": %s, \"shared_bytes\": %d, "
                "\"ahead\": %d, \"whole\": %s}", json_bool(v->keeps), json_bool(v->loops), json_bool(v->pair_loops),
             json_bool(v->early), json_bool(v->partials), v->shared_bytes, v->ahead, json_bool(v->whole));
}

/* The ids of the values a stitch group keeps across passes (GroupSchedule.keep). */
static void json_kept(Buf *b, const Kernel *k, const GroupSchedule *s) {
  buf_puts(b, "[");
  int n = 0;
  for (int i = 0; s->keep && i < k->values.len; i++)
    if (s->keep[i])
      buf_printf(b, "%s%d", n++ ? ", " : "", i);
  buf_puts(b, "]");
}

/* The group's GroupSchedule (schedule.h): its numbers, then its variants
 * in the order the host tries them. */
static void json_schedule(Buf *b, Arena *a, const Kernel *k, const Group *g) {
  const GroupSchedule *s = g->schedule;
  buf_printf(b, ",\n         \"class\": \"%s\", \"max_threads\": %d, \"early_threads\": %d, \"final_threads\": %d",
             class_name(s->cls), s->max_threads, s->early_threads, s->final_threads);
  buf_printf(b, ", \"held\": %d, \"budget\": %d, \"kept\": ", s->held, s->budget);
  json_kept(b, k, s);
  buf_printf(b, ", \"batch\": [%s], \"batch_bytes\": %lld, \"batch_limit\": %lld, \"decided\": %s",
             axes_str(a, s->batch, g->domain.rank), (long long)s->batch_bytes, (long long)s->batch_limit,
             json_bool(s->decided));
  buf_printf(b, ", \"reuse_axis\": %d, \"reuse\": %d, \"steps\": %d, \"reversed\": %s, \"reread_last\": %s, "
                "\"one_launch\": %s, \"lag\": %s",
             s->reuse_axis, s->reuse, s->steps, json_bool(s->reread != NULL), json_bool(s->reread_last),
             json_bool(s->one_launch), json_bool(s->lag));
  buf_puts(b, ", \"one_held\": [");
  for (int i = 0; i < s->one_held.len; i++)
    buf_printf(b, "%s%d", i ? ", " : "", ((const Value *)s->one_held.items[i])->id);
  buf_printf(b, "], \"one_held_steps\": %d", s->one_held_steps);
  buf_puts(b, ",\n         \"variants\": [\n");
  for (int i = 0; i < s->nvariants; i++) {
    json_variant(b, a, &s->variants[i], i == 0);
    buf_puts(b, i + 1 < s->nvariants ? ",\n" : "\n");
  }
  buf_puts(b, "         ]");
}

static const char *pass_kind_name(PassKind kind) {
  switch (kind) {
  case PASS_LEVEL: return "level";
  case PASS_MOMENTS: return "moments";
  case PASS_ONLINE: return "online";
  case PASS_SHIFTED: return "shifted";
  case PASS_OUTPUT: return "output";
  }
  unreachable();
}

/* One kernel's passes (stitch_plan.h): kind, the levels folded, reads and
 * computed values by id. */
static void json_plan_kernel(Buf *b, const char *name, const PlanKernel *pk) {
  buf_printf(b, "\"%s\": [", name);
  for (int i = 0; i < pk->npasses; i++) {
    const PlanPass *p = &pk->passes[i];
    buf_printf(b, "%s{\"kind\": \"%s\", \"level\": %d, \"levels\": %d, \"reads\": ", i ? ", " : "",
               pass_kind_name(p->kind), p->level, p->levels);
    json_ids(b, &p->reads);
    json_ids_field(b, "computes", &p->computed);
    json_ids_field(b, "writes", &p->writes);
    buf_puts(b, "}");
  }
  buf_puts(b, "]");
}

/* The parameter kinds of a kernel, as the plan lists them. */
static const char *param_kind_name(ParamKind kind) {
  switch (kind) {
  case P_INPUT: return "input";
  case P_SCALAR: return "scalar";
  case P_OUTPUT: return "output";
  case P_STORED_READ: return "stored_read";
  case P_WS_WRITE: return "workspace_write";
  case P_SIZE: return "size";
  case P_FASTDIV: return "fastdiv";
  case P_RCOUNT: return "reciprocal_count";
  }
  unreachable();
}

/* A stitch group's plan: its kernels' passes, what it holds, reads along
 * the row, moves in packs and loads early, and the kernels' parameters. */
static void json_plan(Buf *b, const Group *g, const StitchPlan *sp) {
  buf_puts(b, ",\n         \"plan\": {");
  json_plan_kernel(b, "register_passes", &sp->reg);
  buf_puts(b, ",\n                  ");
  json_plan_kernel(b, "stream_passes", &sp->stream);
  buf_puts(b, ",\n                  \"held\": ");
  json_ids(b, &sp->held);
  json_ids_field(b, "along", &sp->along);
  json_ids_field(b, "packed", &sp->packed);
  json_ids_field(b, "early", &sp->early);
  json_ids_field(b, "columns", &g->stitch->columns);
  buf_printf(b, ", \"stream_reads\": %d, \"own_bytes\": %d, \"pack_bytes\": %d, \"params\": [", sp->stream_reads,
             sp->own_bytes, sp->pack_bytes);
  for (int i = 0; i < sp->params.len; i++) {
    const KParam *p = sp->params.items[i];
    buf_printf(b, "%s{\"kind\": \"%s\", \"index\": %d}", i ? ", " : "", param_kind_name(p->kind), p->index);
  }
  buf_puts(b, "]}");
}

static void json_group(Buf *b, Arena *a, const Kernel *k, const KernelPlan *kp, const Group *g) {
  buf_printf(b, "        {\"id\": %d, \"kind\": \"%s\", \"schedule\": \"%s\", \"domain\": ", g->id,
             group_kind_name(g->kind), schedule_name(g->sched));
  json_shape(b, k, &g->domain);
  json_ids_field(b, "roots", &g->roots);
  json_ids_field(b, "epilogue", &g->epilogue);
  json_ids_field(b, "members", &g->members);
  json_ids_field(b, "reads", &g->reads);
  buf_puts(b, ", \"bytes\": ");
  json_str(b, group_bytes(a, k, kp, g));
  json_schedule(b, a, k, g);
  if (g->plan)
    json_plan(b, g, g->plan);
  buf_puts(b, "}");
}

static void json_groups(Buf *b, Arena *a, Kernel *k, KernelPlan *kp) {
  buf_puts(b, "[\n");
  for (int g = 0; g < kp->groups.len; g++) {
    json_group(b, a, k, kp, kp->groups.items[g]);
    buf_puts(b, g + 1 < kp->groups.len ? ",\n" : "\n");
  }
  buf_puts(b, "      ]");
}

const char *emit_json(Compilation *c, Module *m, FusionPlan *p) {
  Arena *a = c->arena;
  Buf b;
  buf_init(&b, a);
  buf_printf(&b, "{\n  \"tecc\": \"%s\",\n  \"opt_level\": %d,\n  \"kernels\": [\n", TECC_VERSION_STRING, p->opt_level);
  for (int i = 0; i < m->nkernels; i++) {
    Kernel *k = m->kernels[i];
    KernelPlan *kp = p->kernels[i];
    buf_puts(&b, "    {\n      \"name\": ");
    json_str(&b, k->name);
    buf_puts(&b, ",\n      \"signature\": ");
    json_str(&b, k->te_signature);
    if (k->grad_of) {
      buf_puts(&b, ",\n      \"gradient_of\": ");
      json_str(&b, k->grad_of);
    }
    buf_puts(&b, ",\n      \"sizes\": [");
    for (int s = 0, n = 0; s < k->nsizevars; s++) {
      if (k->sizevars[s].def)
        continue;
      if (n++)
        buf_puts(&b, ", ");
      json_str(&b, k->sizevars[s].name);
    }
    buf_puts(&b, "],\n      \"inputs\": [");
    for (int s = 0; s < k->ninputs; s++) {
      buf_printf(&b, "%s{\"name\": ", s ? ", " : "");
      json_str(&b, k->inputs[s].name);
      buf_printf(&b, ", \"dtype\": \"%s\", \"shape\": ", dtype_name(k->inputs[s].dtype));
      json_shape(&b, k, &k->inputs[s].shape);
      buf_printf(&b, ", \"value\": %d}", k->inputs[s].value->id);
    }
    buf_puts(&b, "],\n      \"outputs\": [");
    for (int s = 0; s < k->noutputs; s++) {
      buf_printf(&b, "%s{\"name\": ", s ? ", " : "");
      json_str(&b, k->outputs[s].name);
      buf_printf(&b, ", \"dtype\": \"%s\", \"shape\": ", dtype_name(k->outputs[s].dtype));
      json_shape(&b, k, &k->outputs[s].shape);
      buf_printf(&b, ", \"value\": %d}", k->outputs[s].value->id);
    }
    buf_puts(&b, "],\n      \"values\": [\n");
    for (int v = 0; v < k->values.len; v++) {
      json_value(&b, a, k, kp, k->values.items[v]);
      buf_puts(&b, v + 1 < k->values.len ? ",\n" : "\n");
    }
    buf_puts(&b, "      ],\n      \"groups\": ");
    json_groups(&b, a, k, kp);
    if (kp->apart) {
      buf_printf(&b, ",\n      \"apart\": {\"group\": %d, \"rows_longer_than\": %lld, \"split\": %s, \"groups\": ",
                 kp->apart_group, (long long)kp->apart_len, kp->apart_split ? "true" : "false");
      json_groups(&b, a, kp->apart->kernel, kp->apart);
      buf_puts(&b, "}");
    }
    buf_printf(&b, "\n    }%s\n", i + 1 < m->nkernels ? "," : "");
  }
  buf_puts(&b, "  ]\n}\n");
  return buf_cstr(&b);
}
