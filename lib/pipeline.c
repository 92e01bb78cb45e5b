/* pipeline.c — the one place that lists the passes, in order (doc/design.md,
 * "The pipeline"; as QBE's main.c):
 *
 *   parse -> sema -> lower -> grad -> opt -> split -> fuse -> schedule -> emit
 *
 * Each pass reports user errors in c->diags (only parse and sema can) and
 * the pipeline stops after the first pass that reported any, except that
 * sema also runs after syntax errors.  After each
 * pass, TECC_DUMP=<pass> (opts.dump_after) appends what it produced to the
 * debugging dump. */
#include "pipeline.h"
#include "emit_cu.h"
#include "emit_dumps.h"
#include "emit_header.h"
#include "fuse.h"
#include "grad.h"
#include "lower.h"
#include "opt.h"
#include "parse.h"
#include "schedule.h"
#include "sema.h"
#include "split.h"
#include "stitch_plan.h"

static int failed(const Compilation *c) {
  return diag_has_errors(&c->diags);
}

static AstFile *parse_pass(Compilation *c, SourceFile *main) {
  AstFile *ast = parse_file(c->arena, &c->diags, main);
  if (compilation_wants_dump(c, "parse"))
    compilation_dump_text(c, "parse", ast_dump(c->arena, ast));
  return ast;
}

/* Sema checks the statements that parsed even after syntax errors (the
 * broken ones' names are in the AST, so their uses are not reported),
 * so that one run reports every independent error (language.md §11). */
static Module *front_half(Compilation *c, SourceFile *main, int optimize) {
  AstFile *ast = parse_pass(c, main);
  TypedProgram *checked = sema_check(c, ast);
  if (!checked || failed(c))
    return NULL;
  if (compilation_wants_dump(c, "sema"))
    compilation_dump_text(c, "sema", typed_dump(c->arena, checked));
  Module *m = lower_program(c, checked);
  compilation_dump_after(c, "lower", m);
  grad_module(c, m);
  if (failed(c))
    return NULL;
  compilation_dump_after(c, "grad", m);
  if (optimize) {
    optimize_module(c, m);
    compilation_dump_after(c, "opt", m);
  }
  return failed(c) ? NULL : m;
}

Module *compile_unoptimized_ir(Compilation *c, SourceFile *main) {
  return front_half(c, main, 0);
}

/* The dumps that stop after fusion or tile selection. */
static const char *plan_dump(Compilation *c, Module *m, FusionPlan *p) {
  switch (c->opts.emit) {
  case TECC_EMIT_FUSED: return emit_fused(c, m, p);
  case TECC_EMIT_PLAN: return schedule_dump(c->arena, m, p);
  case TECC_EMIT_DOT: return emit_dot(c, m, p);
  case TECC_EMIT_JSON: return emit_json(c, m, p);
  default: internal_error("no dump for --emit=%d", (int)c->opts.emit);
  }
}

static void back_half(Compilation *c, Module *m) {
  if (c->opts.opt_level >= 1) {
    split_reductions(c, m);
    compilation_dump_after(c, "split", m);
  }
  FusionPlan *p = fuse_module(c, m, c->opts.opt_level);
  if (compilation_wants_dump(c, "fuse"))
    compilation_dump_text(c, "fuse", emit_fused(c, m, p));
  plan_stitches(c, m, p);
  schedule_module(c, m, p);
  if (compilation_wants_dump(c, "schedule"))
    compilation_dump_text(c, "schedule", schedule_dump(c->arena, m, p));
  if (c->opts.explain)
    c->explanation = p->explanation;
  if (c->opts.emit == TECC_EMIT_CU) {
    c->output = emit_cu(c, m, p);
    c->header = emit_header(c, m);
  } else {
    c->output = plan_dump(c, m, p);
  }
}

int compile_pipeline(Compilation *c, SourceFile *main) {
  if (c->opts.emit == TECC_EMIT_AST) {
    AstFile *ast = parse_pass(c, main);
    c->output = failed(c) ? NULL : ast_dump(c->arena, ast);
    return !failed(c);
  }
  Module *m = front_half(c, main, 1);
  if (!m)
    return 0;
  if (c->opts.emit == TECC_EMIT_IR) {
    c->output = ir_dump(c->arena, m);
    return 1;
  }
  if (c->opts.emit == TECC_EMIT_HEADER) {
    c->header = c->output = emit_header(c, m);
    return 1;
  }
  back_half(c, m);
  return !failed(c);
}
