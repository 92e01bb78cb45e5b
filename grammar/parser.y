/* parser.y — the grammar of .te files (doc/language.md §4-§6).
 *
 * A pure LALR(1) parser with LAC.  Actions build the AST (lib/ast.h) in the
 * compilation's arena.  Syntax errors are reported by
 * yyreport_syntax_error() below with a message that says what was expected;
 * recovery resumes at the next statement boundary (see lexer_skip_statement),
 * so one run reports every independent error. */
%require "3.6"
%define api.pure full
%define api.prefix {te_yy}
%define api.token.prefix {TOK_}
%define api.location.type {TeLoc}
%define parse.lac full
%define parse.error custom
%locations
%expect 0
%lex-param {void *scanner}
%parse-param {void *scanner} {ParseState *ps}

%code requires {
#include "scanner.h"
#include "parse.h"

/* An expression under construction and the depth of its tree. */
typedef struct ExprVal {
  Expr *e;
  int depth;
} ExprVal;

typedef struct ParseState {
  Arena *arena;
  DiagList *diags;
  const SourceFile *src;
  LexState *lex;
  PtrVec stmts;
  PtrVec broken;       /* const char*: AstFile.broken */
  int broken_unnamed, broken_import;
  int seen_non_import; /* a statement other than import was parsed */
  int nesting_reported;
} ParseState;

#define YYLLOC_DEFAULT(Cur, Rhs, N)                      \
  do {                                                   \
    if (N) {                                             \
      (Cur).begin = YYRHSLOC(Rhs, 1).begin;              \
      (Cur).end = YYRHSLOC(Rhs, N).end;                  \
    } else {                                             \
      (Cur).begin = (Cur).end = YYRHSLOC(Rhs, 0).end;    \
    }                                                    \
  } while (0)
}

%code {
#include <ctype.h>
#include <string.h>

enum { MAX_EXPR_DEPTH = 1000 };
#define YYMAXDEPTH 10000

static SrcRange R(const ParseState *ps, TeLoc loc) {
  SrcRange r = {ps->src, loc.begin, loc.end};
  return r;
}

static void perror_at(ParseState *ps, TeLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void perror_at(ParseState *ps, TeLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *msg = arena_vprintf(ps->arena, fmt, ap);
  va_end(ap);
  diag_error(ps->diags, R(ps, loc), "%s", msg);
}

/* Bison's own errors: only "memory exhausted", when the parser stack
 * reaches YYMAXDEPTH. */
static void te_yyerror(TeLoc *loc, void *scanner, ParseState *ps, const char *msg) {
  (void)scanner;
  if (strcmp(msg, "memory exhausted") == 0)
    perror_at(ps, *loc, "input is nested too deeply for the parser (the limit is %d levels)",
              YYMAXDEPTH);
  else
    perror_at(ps, *loc, "%s", msg);
}

static ExprVal expr_val(ParseState *ps, Expr *e, int depth, TeLoc loc) {
  ExprVal v = {e, depth};
  if (depth > MAX_EXPR_DEPTH) {
    /* Keep the tree shallow for the passes that recurse over it. */
    if (!ps->nesting_reported)
      perror_at(ps, loc, "expression is nested too deeply (the limit is %d levels)",
                MAX_EXPR_DEPTH);
    ps->nesting_reported = 1;
    v.e = ARENA_NEW(ps->arena, Expr);
    v.e->kind = EXPR_NAME;
    v.e->loc = v.e->name_loc = e->loc;
    v.e->name = AST_ERROR_NAME;
    v.depth = 1;
  }
  return v;
}

static Expr *new_expr(ParseState *ps, ExprKind kind, TeLoc loc) {
  Expr *e = ARENA_NEW(ps->arena, Expr);
  e->kind = kind;
  e->loc = R(ps, loc);
  return e;
}

static const char *spelling(ParseState *ps, TeLoc loc) {
  return arena_strndup(ps->arena, ps->src->text + loc.begin, loc.end - loc.begin);
}

static ExprVal literal(ParseState *ps, ExprKind kind, TeLoc loc) {
  Expr *e = new_expr(ps, kind, loc);
  e->text = spelling(ps, loc);
  return expr_val(ps, e, 1, loc);
}

static ExprVal name_expr(ParseState *ps, const char *name, TeLoc loc) {
  Expr *e = new_expr(ps, EXPR_NAME, loc);
  e->name = name;
  e->name_loc = e->loc;
  return expr_val(ps, e, 1, loc);
}

static ExprVal unary(ParseState *ps, UnaryOp op, TeLoc op_loc, ExprVal x, TeLoc loc) {
  Expr *e = new_expr(ps, EXPR_UNARY, loc);
  e->uop = op;
  e->op_loc = R(ps, op_loc);
  e->args = ARENA_ARRAY(ps->arena, Expr *, 1);
  e->args[0] = x.e;
  e->nargs = 1;
  return expr_val(ps, e, x.depth + 1, loc);
}

static ExprVal binary(ParseState *ps, BinaryOp op, TeLoc op_loc, ExprVal a, ExprVal b,
                      TeLoc loc) {
  Expr *e = new_expr(ps, EXPR_BINARY, loc);
  e->bop = op;
  e->op_loc = R(ps, op_loc);
  e->args = ARENA_ARRAY(ps->arena, Expr *, 2);
  e->args[0] = a.e;
  e->args[1] = b.e;
  e->nargs = 2;
  int depth = a.depth > b.depth ? a.depth : b.depth;
  return expr_val(ps, e, depth + 1, loc);
}

/* Arguments are collected in a PtrVec of ExprVal*. */
static PtrVec *arg_list(ParseState *ps, PtrVec *list, ExprVal x) {
  if (!list)
    list = ARENA_NEW(ps->arena, PtrVec);
  ExprVal *copy = ARENA_NEW(ps->arena, ExprVal);
  *copy = x;
  vec_push(ps->arena, list, copy);
  return list;
}

static ExprVal call(ParseState *ps, const char *name, TeLoc name_loc, PtrVec *args,
                    TeLoc loc) {
  Expr *e = new_expr(ps, EXPR_CALL, loc);
  e->name = name;
  e->name_loc = R(ps, name_loc);
  int n = args ? args->len : 0, depth = 0;
  e->args = ARENA_ARRAY(ps->arena, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++) {
    ExprVal *a = args->items[i];
    e->args[i] = a->e;
    if (a->depth > depth)
      depth = a->depth;
  }
  e->nargs = n;
  return expr_val(ps, e, depth + 1, loc);
}

/* A part of a slice that is not written. */
static const ExprVal NO_PART = {NULL, 0};

static AstSlice *new_slice(ParseState *ps, SliceKind kind, ExprVal lo, ExprVal hi,
                           ExprVal step, TeLoc loc) {
  AstSlice *s = ARENA_NEW(ps->arena, AstSlice);
  s->kind = kind;
  s->lo = lo.e;
  s->hi = hi.e;
  s->step = step.e;
  s->loc = R(ps, loc);
  s->depth = lo.depth > hi.depth ? lo.depth : hi.depth;
  if (step.depth > s->depth)
    s->depth = step.depth;
  return s;
}

static PtrVec *slice_list(ParseState *ps, PtrVec *list, AstSlice *s) {
  if (!list)
    list = ARENA_NEW(ps->arena, PtrVec);
  vec_push(ps->arena, list, s);
  return list;
}

static ExprVal subscript(ParseState *ps, ExprVal x, PtrVec *slices, TeLoc loc) {
  Expr *e = new_expr(ps, EXPR_SLICE, loc);
  e->args = ARENA_ARRAY(ps->arena, Expr *, 1);
  e->args[0] = x.e;
  e->nargs = 1;
  e->nslices = slices->len;
  e->slices = ARENA_ARRAY(ps->arena, AstSlice, slices->len);
  int depth = x.depth;
  for (int i = 0; i < slices->len; i++) {
    AstSlice *sl = slices->items[i];
    e->slices[i] = *sl;
    if (sl->depth > depth)
      depth = sl->depth;
  }
  return expr_val(ps, e, depth + 1, loc);
}

/* `a OP b` where a is itself a comparison: doc/language.md §6 forbids chains. */
static ExprVal comparison(ParseState *ps, BinaryOp op, TeLoc op_loc, ExprVal a,
                          ExprVal b, TeLoc loc, int chained) {
  if (chained)
    perror_at(ps, op_loc,
              "comparison operators cannot be chained; write 'a < b and b < c'");
  return binary(ps, op, op_loc, a, b, loc);
}

/* ---- types --------------------------------------------------------------- */

static const char *dtype_suggestion(const char *name) {
  static const char *const pairs[][2] = {
      {"float", "f32"},  {"float32", "f32"}, {"double", "f64"}, {"float64", "f64"},
      {"half", "f16"},   {"float16", "f16"}, {"bfloat16", "bf16"}, {"int", "i32"},
      {"int32", "i32"},  {"int64", "i64"},   {"long", "i64"},   {"boolean", "bool"},
      {"u8", "bool"},    {"i8", "i32"},      {"i16", "i32"},    {"u32", "i64"},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    if (strcmp(pairs[i][0], name) == 0)
      return pairs[i][1];
  return NULL;
}

static AstType *make_type(ParseState *ps, const char *name, TeLoc name_loc, PtrVec *dims,
                          TeLoc dims_loc, TeLoc loc) {
  AstType *t = ARENA_NEW(ps->arena, AstType);
  t->loc = R(ps, loc);
  if (!dtype_from_name(name, &t->dtype)) {
    const char *sugg = dtype_suggestion(name);
    if (sugg)
      perror_at(ps, name_loc, "unknown dtype '%s'; did you mean '%s'?", name, sugg);
    else
      perror_at(ps, name_loc,
                "unknown dtype '%s' (expected bool, i32, i64, f16, bf16, f32 or f64)",
                name);
    t->dtype = DT_F32;
    t->bad = 1;
  }
  int n = dims ? dims->len : 0;
  if (n > TECC_MAX_RANK) {
    perror_at(ps, dims_loc, "tensor rank %d exceeds the maximum of %d", n, TECC_MAX_RANK);
    n = TECC_MAX_RANK;
    t->bad = 1;
  }
  t->rank = n;
  for (int i = 0; i < n; i++)
    t->dims[i] = *(AstDim *)dims->items[i];
  return t;
}

/* The type of a parameter written without one (reported already). */
static AstType *bad_type(ParseState *ps, TeLoc loc) {
  AstType *t = ARENA_NEW(ps->arena, AstType);
  t->loc = R(ps, loc);
  t->dtype = DT_F32;
  t->bad = 1;
  return t;
}

/* A dimension: a literal, a size variable, or an expression sema reads
 * as a size expression. */
static PtrVec *dim_list(ParseState *ps, PtrVec *list, ExprVal x, TeLoc loc) {
  if (!list)
    list = ARENA_NEW(ps->arena, PtrVec);
  AstDim *d = ARENA_NEW(ps->arena, AstDim);
  if (x.e->kind == EXPR_INT)
    d->value = x.e->ival;
  else if (x.e->kind == EXPR_NAME)
    d->var = x.e->name;
  else
    d->expr = x.e;
  d->loc = R(ps, loc);
  vec_push(ps->arena, list, d);
  return list;
}

/* ---- statements ---------------------------------------------------------- */

static Stmt *new_stmt(ParseState *ps, StmtKind kind, TeLoc loc) {
  Stmt *s = ARENA_NEW(ps->arena, Stmt);
  s->kind = kind;
  s->loc = R(ps, loc);
  return s;
}

static Param *new_param(ParseState *ps, const char *name, TeLoc loc, AstType *type) {
  Param *p = ARENA_NEW(ps->arena, Param);
  p->name = name;
  p->loc = R(ps, loc);
  p->type = type;
  return p;
}

static PtrVec *param_list(ParseState *ps, PtrVec *list, Param *p) {
  if (!list)
    list = ARENA_NEW(ps->arena, PtrVec);
  vec_push(ps->arena, list, p);
  return list;
}

static Param *param_array(ParseState *ps, PtrVec *list, int *n) {
  *n = list ? list->len : 0;
  Param *a = ARENA_ARRAY(ps->arena, Param, *n ? *n : 1);
  for (int i = 0; i < *n; i++)
    a[i] = *(Param *)list->items[i];
  return a;
}

/* Diagnostics about an import point at its file name, as gcc's do for
 * #include. */
static Stmt *import_stmt(ParseState *ps, const char *path, TeLoc path_loc, TeLoc loc) {
  Stmt *s = new_stmt(ps, STMT_IMPORT, loc);
  s->path = path;
  s->path_loc = R(ps, path_loc);
  return s;
}

static Stmt *assign_stmt(ParseState *ps, const char *name, TeLoc name_loc, ExprVal v,
                         TeLoc loc) {
  Stmt *s = new_stmt(ps, STMT_ASSIGN, loc);
  s->name = name;
  s->name_loc = R(ps, name_loc);
  s->value = v.e;
  return s;
}

static Stmt *decl_stmt(ParseState *ps, const char *name, TeLoc name_loc, AstType *t,
                       TeLoc loc) {
  Stmt *s = new_stmt(ps, STMT_DECL, loc);
  s->name = name;
  s->name_loc = R(ps, name_loc);
  s->type = t;
  return s;
}

static Stmt *fn_stmt(ParseState *ps, const char *name, TeLoc name_loc, PtrVec *params,
                     ExprVal body, TeLoc loc) {
  Stmt *s = new_stmt(ps, STMT_FN, loc);
  s->name = name;
  s->name_loc = R(ps, name_loc);
  s->params = param_array(ps, params, &s->nparams);
  s->value = body.e;
  return s;
}

static Stmt *kernel_stmt(ParseState *ps, const char *name, TeLoc name_loc, PtrVec *params,
                         PtrVec *outs, PtrVec *body, TeLoc loc) {
  Stmt *s = new_stmt(ps, STMT_KERNEL, loc);
  s->name = name;
  s->name_loc = R(ps, name_loc);
  s->params = param_array(ps, params, &s->nparams);
  s->outs = param_array(ps, outs, &s->nouts);
  s->nbody = body ? body->len : 0;
  s->body = ARENA_ARRAY(ps->arena, Stmt *, s->nbody ? s->nbody : 1);
  for (int i = 0; i < s->nbody; i++)
    s->body[i] = body->items[i];
  return s;
}

/* ---- statements that did not parse -------------------------------------- */

static void add_broken(ParseState *ps, const char *name) {
  vec_push(ps->arena, &ps->broken, (void *)name);
}

static int is_name_char(char c) {
  return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The name that starts at *at, advancing past it and the blanks after
 * it; NULL when no name starts there. */
static const char *name_at(ParseState *ps, uint32_t *at) {
  const char *text = ps->src->text;
  uint32_t begin = *at, end = begin;
  if (begin >= ps->src->len || (text[begin] >= '0' && text[begin] <= '9'))
    return NULL;
  while (end < ps->src->len && is_name_char(text[end]))
    end++;
  if (end == begin)
    return NULL;
  *at = end;
  while (*at < ps->src->len && strchr(" \t\r\n", text[*at]))
    (*at)++;
  return arena_strndup(ps->arena, text + begin, end - begin);
}

/* A statement from `at` failed to parse: note what it defines, read from
 * its first words (`NAME =`, `NAME :`, `kernel NAME`, `fn NAME`,
 * `import`).  `lookahead` is the token that stopped it: when that is no
 * token (YYEMPTY), recovery is only discarding it, after the statement
 * was noted.  When it is the '=' or ':' of a name that starts a line, the
 * statement swallowed the start of the next one, which is broken too. */
static void broken_statement(ParseState *ps, TeLoc at, int lookahead) {
  const LexState *lx = ps->lex;
  if (lookahead == TOK_TE_YYEMPTY)
    return;
  if ((lookahead == '=' || lookahead == ':') && lx->prev_kind == TOK_IDENT &&
      lx->prev_first_on_line)
    add_broken(ps, spelling(ps, lx->prev_loc));
  uint32_t p = at.begin;
  const char *word = name_at(ps, &p), *text = ps->src->text;
  if (word && (!strcmp(word, "kernel") || !strcmp(word, "fn")))
    word = name_at(ps, &p);
  else if (word && !strcmp(word, "import"))
    word = NULL, ps->broken_import = 1;
  else if (word && !(p < ps->src->len && (text[p] == ':' || (text[p] == '=' && text[p + 1] != '='))))
    word = NULL;
  if (word)
    add_broken(ps, word);
  else if (!ps->broken_import)
    ps->broken_unnamed = 1;
}

/* `kernel NAME = grad(OF, WRT...)`: the value must be a call of grad
 * whose arguments are names. */
static Stmt *grad_stmt_checked(ParseState *ps, const char *name, TeLoc name_loc, ExprVal v,
                               TeLoc loc) {
  const Expr *e = v.e;
  if (e->kind != EXPR_CALL || strcmp(e->name, "grad") != 0) {
    perror_at(ps, (TeLoc){e->loc.begin, e->loc.end},
              "a kernel defined with '=' is a gradient: 'kernel %s = grad(KERNEL, ...)'",
              name);
    return NULL;
  }
  if (e->nargs == 0) {
    perror_at(ps, (TeLoc){e->loc.begin, e->loc.end},
              "'grad' takes the kernel to differentiate, then the inputs to "
              "differentiate with respect to");
    return NULL;
  }
  for (int i = 0; i < e->nargs; i++)
    if (e->args[i]->kind != EXPR_NAME) {
      perror_at(ps, (TeLoc){e->args[i]->loc.begin, e->args[i]->loc.end},
                "the arguments of 'grad' are names: a kernel, then its inputs");
      return NULL;
    }
  Stmt *s = new_stmt(ps, STMT_GRAD, loc);
  s->name = name;
  s->name_loc = R(ps, name_loc);
  s->of = e->args[0]->name;
  s->of_loc = e->args[0]->loc;
  s->nparams = e->nargs - 1;
  s->params = ARENA_ARRAY(ps->arena, Param, s->nparams ? s->nparams : 1);
  for (int i = 1; i < e->nargs; i++)
    s->params[i - 1] = (Param){e->args[i]->name, e->args[i]->loc, NULL};
  return s;
}

/* A malformed grad statement is dropped: its kernel is broken. */
static Stmt *grad_stmt(ParseState *ps, const char *name, TeLoc name_loc, ExprVal v,
                       TeLoc loc) {
  Stmt *s = grad_stmt_checked(ps, name, name_loc, v, loc);
  if (!s)
    add_broken(ps, name);
  return s;
}

static PtrVec *stmt_list(ParseState *ps, PtrVec *list, Stmt *s) {
  if (!list)
    list = ARENA_NEW(ps->arena, PtrVec);
  if (s)
    vec_push(ps->arena, list, s);
  return list;
}

static void top_level(ParseState *ps, Stmt *s) {
  if (!s)
    return;
  if (s->kind == STMT_IMPORT && ps->seen_non_import)
    perror_at(ps, (TeLoc){s->loc.begin, s->loc.end},
              "imports must come before every other statement");
  if (s->kind != STMT_IMPORT)
    ps->seen_non_import = 1;
  vec_push(ps->arena, &ps->stmts, s);
}

/* After a statement failed to parse: drop the rest of it. */
static void recover(ParseState *ps, int lookahead, int keep_brackets) {
  LexState *lx = ps->lex;
  lexer_keep_brackets(lx, keep_brackets);
  if (lookahead == TOK_TE_YYEMPTY || lookahead == TOK_YYEOF)
    return;
  if (lookahead == '{') {
    lexer_skip_statement(lx, 1);
    return;
  }
  if (lx->last_first_on_line || lookahead == ';' || lookahead == '}' ||
      lookahead == TOK_KERNEL || lookahead == TOK_FN || lookahead == TOK_IMPORT)
    return;
  lexer_skip_statement(lx, 0);
}
}

%union {
  int64_t i;
  double f;
  const char *s;
  ExprVal x;
  PtrVec *list;
  Stmt *stmt;
  AstType *type;
  Param *param;
  AstSlice *slice;
  int op;
}

%token <s> IDENT "identifier"
%token <s> STRING "string"
%token <i> INT "integer"
%token <f> FLOAT "number"
%token KERNEL "'kernel'" FN "'fn'" IMPORT "'import'"
%token AND "'and'" OR "'or'" NOT "'not'" TRUE "'true'" FALSE "'false'"
%token FLOORDIV "'//'" POW "'**'" EQ "'=='" NE "'!='" LE "'<='" GE "'>='"
%token ARROW "'->'" ELLIPSIS "'...'"

%type <x> expr or_expr and_expr not_expr cmp_expr comparison add_expr mul_expr
%type <x> unary power postfix primary
%type <op> cmp_op mul_op
%type <list> args arg_list params_opt params outs out_list body dim_list slices
%type <slice> slice
%type <x> slice_part
%type <list> fn_params_opt fn_params
%type <stmt> stmt import fn_def kernel_def grad_def decl assign body_item
%type <type> type
%type <param> param out fn_param

%%

file:
    %empty
  | file stmt               { top_level(ps, $2); }
  ;

stmt:
    import
  | fn_def
  | kernel_def
  | grad_def
  | decl
  | assign
  | ';'                     { $$ = NULL; }
  | error                   { $$ = NULL; broken_statement(ps, @1, yychar); recover(ps, yychar, 0); }
  ;

import:
    IMPORT STRING           { $$ = import_stmt(ps, $2, @2, @$); }
  ;

decl:
    IDENT ':' type          { $$ = decl_stmt(ps, $1, @1, $3, @$); }
  ;

assign:
    IDENT '=' expr          { $$ = assign_stmt(ps, $1, @1, $3, @$); }
  ;

/* ---- fn ---- */

fn_def:
    FN IDENT '(' fn_params_opt ')' '=' expr
                            { $$ = fn_stmt(ps, $2, @2, $4, $7, @$); }
  ;

fn_params_opt:
    %empty                  { $$ = NULL; }
  | fn_params
  ;

fn_params:
    fn_param                { $$ = param_list(ps, NULL, $1); }
  | fn_params ',' fn_param  { $$ = param_list(ps, $1, $3); }
  ;

fn_param:
    IDENT                   { $$ = new_param(ps, $1, @1, NULL); }
  | IDENT ':' type          {
                              perror_at(ps, @2, "parameters of 'fn' have no types; "
                                        "remove ': ...' after '%s'", $1);
                              $$ = new_param(ps, $1, @1, NULL);
                            }
  ;

/* ---- kernel ---- */

kernel_def:
    KERNEL IDENT '(' params_opt ')' ARROW outs '{' body '}'
                            { $$ = kernel_stmt(ps, $2, @2, $4, $7, $9, @$); }
  ;

grad_def:
    KERNEL IDENT '=' expr   { $$ = grad_stmt(ps, $2, @2, $4, @$); }
  ;

params_opt:
    %empty                  { $$ = NULL; }
  | params
  ;

params:
    param                   { $$ = param_list(ps, NULL, $1); }
  | params ',' param        { $$ = param_list(ps, $1, $3); }
  ;

param:
    IDENT ':' type          { $$ = new_param(ps, $1, @1, $3); }
  | IDENT                   {
                              perror_at(ps, @1, "kernel parameter '%s' needs a type, "
                                        "as in '%s: f32[N]'", $1, $1);
                              $$ = new_param(ps, $1, @1, bad_type(ps, @1));
                            }
  ;

outs:
    out                     { $$ = param_list(ps, NULL, $1); }
  | '(' out_list ')'        { $$ = $2; }
  ;

out_list:
    out                     { $$ = param_list(ps, NULL, $1); }
  | out_list ',' out        { $$ = param_list(ps, $1, $3); }
  ;

out:
    IDENT                   { $$ = new_param(ps, $1, @1, NULL); }
  | IDENT ':' type          { $$ = new_param(ps, $1, @1, $3); }
  ;

body:
    %empty                  { $$ = NULL; }
  | body body_item          { $$ = stmt_list(ps, $1, $2); }
  ;

body_item:
    assign
  | ';'                     { $$ = NULL; }
  | IDENT ':' type          {
                              perror_at(ps, @$, "a kernel body cannot declare inputs; "
                                        "make '%s' a parameter of the kernel", $1);
                              add_broken(ps, $1);
                              $$ = NULL;
                            }
  | error                   { $$ = NULL; broken_statement(ps, @1, yychar); recover(ps, yychar, 1); }
  ;

/* ---- types ---- */

type:
    IDENT                   { $$ = make_type(ps, $1, @1, NULL, @1, @$); }
  | IDENT '[' ']'           { $$ = make_type(ps, $1, @1, NULL, @2, @$); }
  | IDENT '[' dim_list ']'  { $$ = make_type(ps, $1, @1, $3, @3, @$); }
  ;

dim_list:
    add_expr                { $$ = dim_list(ps, NULL, $1, @1); }
  | dim_list ',' add_expr   { $$ = dim_list(ps, $1, $3, @3); }
  ;

/* ---- expressions (doc/language.md §6, lowest precedence first) ---- */

expr: or_expr;

or_expr:
    and_expr
  | or_expr OR and_expr     { $$ = binary(ps, BIN_OR, @2, $1, $3, @$); }
  ;

and_expr:
    not_expr
  | and_expr AND not_expr   { $$ = binary(ps, BIN_AND, @2, $1, $3, @$); }
  ;

not_expr:
    cmp_expr
  | NOT not_expr            { $$ = unary(ps, UN_NOT, @1, $2, @$); }
  ;

cmp_expr:
    add_expr
  | comparison
  ;

comparison:
    add_expr cmp_op add_expr    { $$ = comparison(ps, $2, @2, $1, $3, @$, 0); }
  | comparison cmp_op add_expr  { $$ = comparison(ps, $2, @2, $1, $3, @$, 1); }
  ;

cmp_op:
    EQ                      { $$ = BIN_EQ; }
  | NE                      { $$ = BIN_NE; }
  | '<'                     { $$ = BIN_LT; }
  | LE                      { $$ = BIN_LE; }
  | '>'                     { $$ = BIN_GT; }
  | GE                      { $$ = BIN_GE; }
  ;

add_expr:
    mul_expr
  | add_expr '+' mul_expr   { $$ = binary(ps, BIN_ADD, @2, $1, $3, @$); }
  | add_expr '-' mul_expr   { $$ = binary(ps, BIN_SUB, @2, $1, $3, @$); }
  ;

mul_expr:
    unary
  | mul_expr mul_op unary   { $$ = binary(ps, $2, @2, $1, $3, @$); }
  ;

mul_op:
    '*'                     { $$ = BIN_MUL; }
  | '/'                     { $$ = BIN_DIV; }
  | FLOORDIV                { $$ = BIN_FLOORDIV; }
  | '%'                     { $$ = BIN_MOD; }
  ;

unary:
    power
  | '-' unary               { $$ = unary(ps, UN_NEG, @1, $2, @$); }
  | '+' unary               { $$ = $2; $$.e->loc = R(ps, @$); }
  ;

power:
    postfix
  | postfix POW unary       { $$ = binary(ps, BIN_POW, @2, $1, $3, @$); }
  ;

postfix:
    primary
  | IDENT '(' args ')'      { $$ = call(ps, $1, @1, $3, @$); }
  | postfix '[' slices ']'  { $$ = subscript(ps, $1, $3, @$); }
  ;

slices:
    slice                   { $$ = slice_list(ps, NULL, $1); }
  | slices ',' slice        { $$ = slice_list(ps, $1, $3); }
  ;

slice:
    expr                    { $$ = new_slice(ps, SLICE_INDEX, $1, NO_PART, NO_PART, @$); }
  | ELLIPSIS                { $$ = new_slice(ps, SLICE_ELLIPSIS, NO_PART, NO_PART, NO_PART, @$); }
  | slice_part ':' slice_part
                            { $$ = new_slice(ps, SLICE_RANGE, $1, $3, NO_PART, @$); }
  | slice_part ':' slice_part ':' slice_part
                            { $$ = new_slice(ps, SLICE_RANGE, $1, $3, $5, @$); }
  ;

slice_part:
    %empty                  { $$ = NO_PART; }
  | expr
  ;

args:
    %empty                  { $$ = NULL; }
  | arg_list
  ;

arg_list:
    expr                    { $$ = arg_list(ps, NULL, $1); }
  | arg_list ',' expr       { $$ = arg_list(ps, $1, $3); }
  ;

primary:
    INT                     { $$ = literal(ps, EXPR_INT, @1); $$.e->ival = $1; }
  | FLOAT                   { $$ = literal(ps, EXPR_FLOAT, @1); $$.e->fval = $1; }
  | TRUE                    { $$ = literal(ps, EXPR_BOOL, @1); $$.e->ival = 1; }
  | FALSE                   { $$ = literal(ps, EXPR_BOOL, @1); $$.e->ival = 0; }
  | IDENT                   { $$ = name_expr(ps, $1, @1); }
  | '(' expr ')'            { $$ = $2; $$.e->loc = R(ps, @$); }
  ;

%%

/* ---- syntax error messages ---------------------------------------------- */

/* Where a message points: 0 = where the token was expected, 1 = at the
 * unexpected token, AT_PREVIOUS = at the token before it,
 * AT_PREVIOUS_LINE_END = after the token before that. */
enum { AT_PREVIOUS = 2, AT_PREVIOUS_LINE_END = 3 };

typedef struct Expected {
  yysymbol_kind_t syms[YYNTOKENS];
  int n;
} Expected;

static int expects(const Expected *x, yysymbol_kind_t sym) {
  for (int i = 0; i < x->n; i++)
    if (x->syms[i] == sym)
      return 1;
  return 0;
}

static int expects_char(const Expected *x, int c) { return expects(x, YYTRANSLATE(c)); }

static int is_reserved(yysymbol_kind_t sym) {
  return sym == YYSYMBOL_KERNEL || sym == YYSYMBOL_FN || sym == YYSYMBOL_IMPORT ||
         sym == YYSYMBOL_AND || sym == YYSYMBOL_OR || sym == YYSYMBOL_NOT ||
         sym == YYSYMBOL_TRUE || sym == YYSYMBOL_FALSE;
}

/* 'text' of a token as written, shortened when long. */
static const char *token_text(ParseState *ps, TeLoc loc) {
  enum { MAX_SHOWN = 32 };
  uint32_t len = loc.end - loc.begin;
  const char *p = ps->src->text + loc.begin;
  if (len > MAX_SHOWN)
    return arena_printf(ps->arena, "'%.*s...'", MAX_SHOWN - 3, p);
  return arena_printf(ps->arena, "'%.*s'", (int)len, p);
}

/* "before 'x'" or "at end of input". */
static const char *where(ParseState *ps, yysymbol_kind_t la, TeLoc loc) {
  if (la == YYSYMBOL_YYEOF)
    return "at end of input";
  return arena_printf(ps->arena, "before %s", token_text(ps, loc));
}

/* The innermost open bracket, not counting the lookahead itself; when the
 * lookahead is a closer that jumped over an unclosed bracket, that one. */
static const OpenBracket *innermost_open(const LexState *lx, yysymbol_kind_t la) {
  if (lx->closed_over)
    return &lx->last_closed_over;
  int n = lx->nopen;
  if (n > 0 && lx->opens[n - 1].begin == lx->last_loc.begin &&
      (la == YYTRANSLATE('(') || la == YYTRANSLATE('[') || la == YYTRANSLATE('{')))
    n--;
  return n > 0 ? &lx->opens[n - 1] : NULL;
}

static const char *closer_message(ParseState *ps, const Expected *x, yysymbol_kind_t la) {
  const OpenBracket *open = innermost_open(ps->lex, la);
  if (!open)
    return NULL;
  char closer = open->kind == '(' ? ')' : open->kind == '[' ? ']' : '}';
  if (!expects_char(x, closer))
    return NULL;
  int line, col;
  source_line_col(ps->src, open->begin, &line, &col);
  return arena_printf(ps->arena, "expected '%c' to close '%c' at %d:%d", closer,
                      open->kind, line, col);
}

/* What the parser wanted after a keyword-like token that must be followed
 * by a name (or a string). */
static const char *name_expected_message(ParseState *ps) {
  switch (ps->lex->prev_kind) {
  case ':': return "expected a type such as 'f32[N]' after ':'";
  case TOK_KERNEL: return "expected the kernel's name after 'kernel'";
  case TOK_FN: return "expected the function's name after 'fn'";
  case TOK_ARROW: return "expected the kernel's outputs after '->'";
  case TOK_IMPORT: return "expected a file name in double quotes after 'import'";
  default: return NULL;
  }
}

/* After a name that starts a statement: '=' or ':' must follow.  Words of
 * other languages get a hint. */
static const char *name_then_what(ParseState *ps, TeLoc name) {
  static const char *const hints[][2] = {
      {"if", "'if' is not part of the language; use where(cond, a, b)"},
      {"else", "'else' is not part of the language; use where(cond, a, b)"},
      {"def", "functions are written 'fn name(a, b) = expression'"},
      {"return", "'return' is not needed: a fn is 'fn name(a, b) = expression'"},
      {"for", "loops are not part of the language; operations apply to whole tensors"},
      {"while", "loops are not part of the language; operations apply to whole tensors"},
  };
  const char *word = ps->src->text + name.begin;
  size_t len = name.end - name.begin;
  for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
    if (strlen(hints[i][0]) == len && memcmp(hints[i][0], word, len) == 0)
      return hints[i][1];
  return arena_printf(ps->arena, "expected '=' or ':' after %s", token_text(ps, name));
}

static const char *listed(ParseState *ps, const Expected *x, yysymbol_kind_t la, TeLoc loc) {
  enum { MAX_LISTED = 4 };
  if (x->n == 0 || x->n > MAX_LISTED)
    return arena_printf(ps->arena, "unexpected %s",
                        la == YYSYMBOL_YYEOF ? "end of input" : token_text(ps, loc));
  Buf b;
  buf_init(&b, ps->arena);
  buf_puts(&b, "expected ");
  for (int i = 0; i < x->n; i++) {
    if (i > 0)
      buf_puts(&b, i == x->n - 1 ? " or " : ", ");
    buf_puts(&b, yysymbol_name(x->syms[i]));
  }
  buf_printf(&b, " %s", where(ps, la, loc));
  return buf_cstr(&b);
}

/* The message for an expression context: an operand was expected. */
/* Inside the brackets of a type such as f32[N, D]: the innermost open
 * '[' follows a dtype's name. */
static int in_dims(ParseState *ps, yysymbol_kind_t la) {
  const OpenBracket *open = innermost_open(ps->lex, la);
  if (!open || open->kind != '[')
    return 0;
  const char *text = ps->src->text;
  uint32_t end = open->begin, begin = end;
  while (begin > 0 && (isalnum((unsigned char)text[begin - 1]) || text[begin - 1] == '_'))
    begin--;
  DType dt;
  return begin < end && dtype_from_name(arena_strndup(ps->arena, text + begin, end - begin), &dt);
}

static const char *operand_message(ParseState *ps, const Expected *x, yysymbol_kind_t la) {
  (void)x;
  if (in_dims(ps, la))
    return "expected a dimension (an integer, a size variable or a size expression)";
  if (la == YYSYMBOL_NOT)
    return "'not' binds more loosely than this operator; put 'not ...' in parentheses";
  return "expected expression";
}

/* The message after a complete operand: an operator, a closer or the end of
 * the statement may follow. */
static const char *after_operand_message(ParseState *ps, const Expected *x,
                                         yysymbol_kind_t la, TeLoc loc) {
  int same_line = !ps->lex->last_first_on_line;
  if (la == YYTRANSLATE('(') && same_line)
    return "expected an operator before '('; only a name can be called";
  const char *closing = closer_message(ps, x, la);
  if (closing && (la == YYSYMBOL_YYEOF || !expects_char(x, '}') || !same_line))
    return closing;
  if (closing)
    return arena_printf(ps->arena, "expected an operator or '}' %s", where(ps, la, loc));
  return arena_printf(ps->arena, "expected an operator or the end of the statement %s",
                      where(ps, la, loc));
}

static const char *syntax_message(ParseState *ps, const Expected *x, yysymbol_kind_t la,
                                  TeLoc loc, int *at_token) {
  LexState *lx = ps->lex;
  int is_closer = la == YYTRANSLATE(')') || la == YYTRANSLATE(']') || la == YYTRANSLATE('}');
  *at_token = 1;
  if (is_closer && lx->last_unmatched)
    return arena_printf(ps->arena, "unmatched %s", token_text(ps, loc));
  if (la == YYTRANSLATE('=') && lx->last_first_on_line &&
      (expects(x, YYSYMBOL_EQ) || expects(x, YYSYMBOL_IDENT)))
    return "expected a name before '='";
  if (la == YYTRANSLATE('=') && expects(x, YYSYMBOL_EQ)) {
    const OpenBracket *open = innermost_open(lx, la);
    if (lx->prev_kind == TOK_IDENT && !lx->prev_first_on_line && open && open->kind == '(' &&
        expects_char(x, ','))
      return arena_printf(ps->arena, "keyword arguments are not supported; pass %s by "
                          "position", token_text(ps, lx->prev_loc));
    if (lx->prev_kind == TOK_IDENT && lx->prev_first_on_line) {
      /* The name starts a new statement: the previous one is unfinished. */
      const char *closing = closer_message(ps, x, la);
      if (closing) {
        *at_token = AT_PREVIOUS_LINE_END;
        return closing;
      }
      return arena_printf(ps->arena, "unexpected '=' after %s: the statement before it is "
                          "incomplete", token_text(ps, lx->prev_loc));
    }
    return "unexpected '=' in an expression; use '==' to compare";
  }
  if (is_reserved(la) && expects(x, YYSYMBOL_IDENT) && !expects(x, YYSYMBOL_INT))
    return arena_printf(ps->arena, "%s is a reserved word and cannot be used as a name",
                        token_text(ps, loc));
  *at_token = 0;
  if (expects(x, YYSYMBOL_INT))
    return operand_message(ps, x, la);
  if (expects_char(x, '*'))
    return after_operand_message(ps, x, la, loc);
  if (x->n == 2 && expects_char(x, '=') && expects_char(x, ':')) {
    const char *msg = name_then_what(ps, lx->prev_loc);
    if (msg[0] != 'e') /* a hint about the name itself */
      *at_token = AT_PREVIOUS;
    return msg;
  }
  DType dt;
  if (la == YYTRANSLATE('(') && expects_char(x, '[') && lx->prev_kind == TOK_IDENT &&
      dtype_from_name(arena_strndup(ps->arena, ps->src->text + lx->prev_loc.begin,
                                    lx->prev_loc.end - lx->prev_loc.begin), &dt))
    return "dimensions are written in brackets, as in 'f32[N, D]'";
  *at_token = la != YYSYMBOL_YYEOF;
  if (expects(x, YYSYMBOL_KERNEL))
    return arena_printf(ps->arena,
                        "expected a statement (a declaration, an assignment, 'kernel', "
                        "'fn' or 'import') %s", where(ps, la, loc));
  if (expects_char(x, '}') && expects(x, YYSYMBOL_IDENT))
    return arena_printf(ps->arena, "expected an assignment or '}' %s", where(ps, la, loc));
  *at_token = 0;
  if (la == YYTRANSLATE(',') && expects_char(x, '{') && !innermost_open(lx, la))
    return "several outputs are written in parentheses, as in '-> (y: f32[N], z)'";
  const char *msg = NULL;
  if (expects(x, YYSYMBOL_IDENT) || expects(x, YYSYMBOL_STRING))
    msg = name_expected_message(ps);
  if (!msg)
    msg = closer_message(ps, x, la);
  return msg ? msg : listed(ps, x, la, loc);
}

/* Where the caret goes: at the unexpected token, or just after the previous
 * token when the unexpected one is on a later line (or is the end). */
static TeLoc error_place(const LexState *lx, yysymbol_kind_t la, TeLoc loc, int at_token) {
  if (at_token == AT_PREVIOUS)
    return lx->prev_loc;
  if (at_token == AT_PREVIOUS_LINE_END) {
    TeLoc end = {lx->prev2_end, lx->prev2_end};
    return end;
  }
  if (at_token || lx->prev_kind == 0)
    return loc;
  if (la == YYSYMBOL_YYEOF || lx->last_first_on_line) {
    TeLoc after = {lx->prev_loc.end, lx->prev_loc.end};
    return after;
  }
  return loc;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, void *scanner, ParseState *ps) {
  (void)scanner;
  if (ps->lex->last_is_bad)
    return 0; /* the scanner has reported this token already */
  Expected x;
  x.n = yypcontext_expected_tokens(ctx, x.syms, YYNTOKENS);
  if (x.n < 0)
    x.n = 0;
  yysymbol_kind_t la = yypcontext_token(ctx);
  TeLoc loc = *yypcontext_location(ctx);
  int at_token;
  const char *msg = syntax_message(ps, &x, la, loc, &at_token);
  perror_at(ps, error_place(ps->lex, la, loc, at_token), "%s", msg);
  return 0;
}

AstFile *parse_file(Arena *a, DiagList *diags, const SourceFile *src) {
  LexState lx;
  memset(&lx, 0, sizeof lx);
  lx.arena = a;
  lx.diags = diags;
  lx.src = src;
  ParseState ps;
  memset(&ps, 0, sizeof ps);
  ps.arena = a;
  ps.diags = diags;
  ps.src = src;
  ps.lex = &lx;
  yyscan_t scanner;
  if (lexer_open(&lx, &scanner))
    internal_error("cannot start the scanner");
  te_yyparse(scanner, &ps);
  lexer_close(scanner);
  AstFile *f = ARENA_NEW(a, AstFile);
  f->source = src;
  f->nstmts = ps.stmts.len;
  f->stmts = ARENA_ARRAY(a, Stmt *, f->nstmts ? f->nstmts : 1);
  for (int i = 0; i < f->nstmts; i++)
    f->stmts[i] = ps.stmts.items[i];
  f->broken = (const char **)ps.broken.items;
  f->nbroken = ps.broken.len;
  f->broken_unnamed = ps.broken_unnamed;
  f->broken_import = ps.broken_import;
  return f;
}
