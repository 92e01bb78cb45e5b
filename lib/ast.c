/* ast.c — the --emit=ast dump: one node per line, children indented by two
 * spaces, statements followed by their position (@LINE:COL). */
#include "ast.h"

#include <inttypes.h>

static void indent(Buf *b, int depth) {
  for (int i = 0; i < depth; i++)
    buf_puts(b, "  ");
}

/* Statements come in source order: a line cursor keeps the dump linear in
 * the size of the file. */
typedef struct Dumper {
  Buf b;
  LineCursor lines;
} Dumper;

static void put_position(Dumper *d, SrcRange r) {
  if (!r.file)
    return;
  int line, col;
  line_cursor_get(&d->lines, r.file, r.begin, &line, &col);
  buf_printf(&d->b, " @%d:%d", line, col);
}

static void put_type(Buf *b, const AstType *t) {
  buf_puts(b, dtype_name(t->dtype));
  if (t->rank == 0)
    return;
  buf_puts(b, "[");
  for (int i = 0; i < t->rank; i++) {
    if (i > 0)
      buf_puts(b, ", ");
    const SrcRange *r = &t->dims[i].loc;
    if (t->dims[i].expr)
      buf_printf(b, "%.*s", (int)(r->end - r->begin), r->file->text + r->begin);
    else if (t->dims[i].var)
      buf_puts(b, t->dims[i].var);
    else
      buf_printf(b, "%" PRId64, t->dims[i].value);
  }
  buf_puts(b, "]");
}

static void dump_expr(Buf *b, const Expr *e, int depth);

static void dump_slice(Buf *b, const AstSlice *s, int depth) {
  indent(b, depth);
  static const char *const kinds[] = {"range", "...", "index"};
  buf_printf(b, "%s\n", kinds[s->kind]);
  const Expr *parts[] = {s->lo, s->hi, s->step};
  static const char *const names[] = {"start", "stop", "step"};
  for (int i = 0; i < 3; i++) {
    if (!parts[i])
      continue;
    indent(b, depth + 1);
    buf_printf(b, "%s\n", names[i]);
    dump_expr(b, parts[i], depth + 2);
  }
}

static void dump_expr(Buf *b, const Expr *e, int depth) {
  indent(b, depth);
  switch (e->kind) {
  case EXPR_INT: buf_printf(b, "int %" PRId64 "\n", e->ival); break;
  case EXPR_FLOAT: buf_printf(b, "float %s\n", e->text ? e->text : "?"); break;
  case EXPR_BOOL: buf_puts(b, e->ival ? "bool true\n" : "bool false\n"); break;
  case EXPR_NAME: buf_printf(b, "name %s\n", e->name); break;
  case EXPR_UNARY: buf_printf(b, "unary %s\n", e->uop == UN_NEG ? "-" : unary_name(e->uop)); break;
  case EXPR_BINARY: buf_printf(b, "binary %s\n", binary_name(e->bop)); break;
  case EXPR_CALL: buf_printf(b, "call %s\n", e->name); break;
  case EXPR_SLICE: buf_puts(b, "slice\n"); break;
  }
  for (int i = 0; i < e->nargs; i++)
    dump_expr(b, e->args[i], depth + 1);
  for (int i = 0; i < e->nslices; i++)
    dump_slice(b, &e->slices[i], depth + 1);
}

static void dump_params(Buf *b, const char *what, const Param *p, int n, int depth) {
  for (int i = 0; i < n; i++) {
    indent(b, depth);
    buf_printf(b, "%s %s", what, p[i].name);
    if (p[i].type) {
      buf_puts(b, ": ");
      put_type(b, p[i].type);
    }
    buf_puts(b, "\n");
  }
}

static void dump_stmt(Dumper *d, const Stmt *s, int depth) {
  Buf *b = &d->b;
  indent(b, depth);
  switch (s->kind) {
  case STMT_IMPORT:
    buf_printf(b, "import \"%s\"", s->path);
    put_position(d, s->loc);
    buf_puts(b, "\n");
    return;
  case STMT_FN:
    buf_printf(b, "fn %s(", s->name);
    for (int i = 0; i < s->nparams; i++)
      buf_printf(b, "%s%s", i ? ", " : "", s->params[i].name);
    buf_puts(b, ")");
    put_position(d, s->loc);
    buf_puts(b, "\n");
    dump_expr(b, s->value, depth + 1);
    return;
  case STMT_KERNEL:
    buf_printf(b, "kernel %s", s->name);
    put_position(d, s->loc);
    buf_puts(b, "\n");
    dump_params(b, "param", s->params, s->nparams, depth + 1);
    dump_params(b, "out", s->outs, s->nouts, depth + 1);
    for (int i = 0; i < s->nbody; i++)
      dump_stmt(d, s->body[i], depth + 1);
    return;
  case STMT_GRAD:
    buf_printf(b, "kernel %s = grad(%s", s->name, s->of);
    for (int i = 0; i < s->nparams; i++)
      buf_printf(b, ", %s", s->params[i].name);
    buf_puts(b, ")");
    put_position(d, s->loc);
    buf_puts(b, "\n");
    return;
  case STMT_DECL:
    buf_printf(b, "decl %s: ", s->name);
    put_type(b, s->type);
    put_position(d, s->loc);
    buf_puts(b, "\n");
    return;
  case STMT_ASSIGN:
    buf_printf(b, "assign %s", s->name);
    put_position(d, s->loc);
    buf_puts(b, "\n");
    dump_expr(b, s->value, depth + 1);
    return;
  }
  unreachable();
}

const char *ast_dump(Arena *a, const AstFile *f) {
  Dumper d;
  buf_init(&d.b, a);
  line_cursor_init(&d.lines, NULL);
  buf_printf(&d.b, "file %s\n", f->source && f->source->name ? f->source->name : "?");
  for (int i = 0; i < f->nstmts; i++)
    dump_stmt(&d, f->stmts[i], 1);
  return buf_cstr(&d.b);
}
