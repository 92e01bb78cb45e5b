/* compile.c — one compilation: its sources, and the pipeline.
 *
 * compile_pipeline() is the one place that lists the passes, in order
 * (design.md "Pipeline").  Each pass reports user errors in c->diags and
 * the pipeline stops after the first pass that reported any. */
#include "compile.h"
#include "backend.h"
#include "lower.h"
#include "sema.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* --- sources ------------------------------------------------------------ */

SourceFile *compilation_add_source(Compilation *c, const char *name,
                                   const char *path, const char *text,
                                   size_t len) {
  if (len >= UINT32_MAX)
    internal_error("source '%s' is too large (%zu bytes)", name, len);
  SourceFile *f = ARENA_NEW(c->arena, SourceFile);
  f->name = arena_strdup(c->arena, name);
  f->path = path ? arena_strdup(c->arena, path) : NULL;
  f->text = arena_strndup(c->arena, text, len);
  f->len = (uint32_t)len;
  f->id = c->files.len;
  vec_push(c->arena, &c->files, f);
  return f;
}

/* Two paths name the same file when they are equal or share an inode. */
static int same_file(const char *a, const char *b) {
  if (strcmp(a, b) == 0)
    return 1;
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

static SourceFile *find_loaded(Compilation *c, const char *path) {
  for (int i = 0; i < c->files.len; i++) {
    SourceFile *f = c->files.items[i];
    if (f->path && same_file(f->path, path))
      return f;
  }
  return NULL;
}

/* Reads all of `fp` into a malloc'ed buffer; NULL with errno set on a read
 * error or when the file does not fit a SourceFile. */
static char *read_all(FILE *fp, size_t *len_out) {
  size_t len = 0, cap = 4096;
  char *buf = malloc(cap);
  if (!buf)
    internal_error("out of memory");
  for (;;) {
    len += fread(buf + len, 1, cap - len, fp);
    if (ferror(fp)) {
      int saved = errno;
      free(buf);
      errno = saved ? saved : EIO;
      return NULL;
    }
    if (feof(fp))
      break;
    if (cap >= UINT32_MAX / 2) {
      free(buf);
      errno = EFBIG;
      return NULL;
    }
    cap *= 2;
    char *grown = realloc(buf, cap);
    if (!grown)
      internal_error("out of memory");
    buf = grown;
  }
  *len_out = len;
  return buf;
}

SourceFile *compilation_load(Compilation *c, const char *path, const char *name) {
  SourceFile *f = find_loaded(c, path);
  if (f)
    return f;
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return NULL;
  size_t len = 0;
  char *text = read_all(fp, &len);
  int saved = errno;
  fclose(fp);
  if (!text) {
    errno = saved;
    return NULL;
  }
  f = compilation_add_source(c, name, path, text, len);
  free(text);
  return f;
}

/* --- setup -------------------------------------------------------------- */

static const char *dup_or_null(Arena *a, const char *s) {
  return s ? arena_strdup(a, s) : NULL;
}

/* The options live only during the call that gave them; the compilation
 * keeps its own copy of every string. */
static void copy_options(Arena *a, tecc_options *dst, const tecc_options *src) {
  *dst = *src;
  dst->kernel_name = dup_or_null(a, src->kernel_name);
  dst->arch = arena_strdup(a, src->arch ? src->arch : "sm_90");
  dst->header_name = dup_or_null(a, src->header_name);
  dst->dump_after = dup_or_null(a, src->dump_after);
  const char **dirs = ARENA_ARRAY(a, const char *, src->n_include_dirs + 1);
  for (size_t i = 0; i < src->n_include_dirs; i++)
    dirs[i] = arena_strdup(a, src->include_dirs[i]);
  dst->include_dirs = dirs;
  tecc_define *defs = ARENA_ARRAY(a, tecc_define, src->n_defines + 1);
  for (size_t i = 0; i < src->n_defines; i++) {
    defs[i].name = arena_strdup(a, src->defines[i].name ? src->defines[i].name : "");
    defs[i].value = src->defines[i].value;
  }
  dst->defines = defs;
}

void compilation_init(Compilation *c, Arena *a, const tecc_options *opts,
                      const char *main_dir) {
  memset(c, 0, sizeof *c);
  c->arena = a;
  copy_options(a, &c->opts, opts);
  diag_init(&c->diags, a, opts->werror, opts->no_warnings);
  c->main_dir = arena_strdup(a, main_dir ? main_dir : ".");
  buf_init(&c->debug_dump, a);
}

/* --- debugging dumps (QBE's -d) ----------------------------------------- */

static int wants_dump(const Compilation *c, const char *pass) {
  const char *list = c->opts.dump_after;
  if (!list)
    return 0;
  size_t n = strlen(pass);
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if ((len == n && strncmp(p, pass, n) == 0) || (len == 3 && strncmp(p, "all", 3) == 0))
      return 1;
    p += len;
    p += *p == ',';
  }
  return 0;
}

static void dump_text(Compilation *c, const char *pass, const char *text) {
  buf_printf(&c->debug_dump, "=== after %s ===\n%s", pass, text);
}

void compilation_dump_after(Compilation *c, const char *pass, const Module *m) {
  if (m && wants_dump(c, pass))
    dump_text(c, pass, ir_dump(c->arena, m));
}

/* --- the pipeline ------------------------------------------------------- */

static const char *const emit_names[] = {
    [TECC_EMIT_CU] = "cu",       [TECC_EMIT_HEADER] = "header",
    [TECC_EMIT_AST] = "ast",     [TECC_EMIT_IR] = "ir",
    [TECC_EMIT_FUSED] = "fused", [TECC_EMIT_PLAN] = "plan",
    [TECC_EMIT_DOT] = "dot",     [TECC_EMIT_JSON] = "json",
};

static const char *emit_name(tecc_emit e) {
  if ((unsigned)e < sizeof emit_names / sizeof emit_names[0])
    return emit_names[e];
  return "?";
}

static int failed(const Compilation *c) {
  return diag_has_errors(&c->diags);
}

/* Fusion, tile selection and the emitters (lib/backend.h, H4) plug in
 * here: they fill c->output, c->header and c->explanation for the emit
 * kinds that need code generation. */
static int generate_code(Compilation *c, Module *m) {
  if (backend_generate(c, m))
    return 1;
  diag_error(&c->diags, (SrcRange){0},
             "code generation is not implemented for --emit=%s",
             emit_name(c->opts.emit));
  return 0;
}

int compile_pipeline(Compilation *c, SourceFile *main) {
  AstFile *ast = parse_file(c->arena, &c->diags, main);
  if (wants_dump(c, "parse"))
    dump_text(c, "parse", ast_dump(c->arena, ast));
  if (failed(c))
    return 0;
  if (c->opts.emit == TECC_EMIT_AST) {
    c->output = ast_dump(c->arena, ast);
    return 1;
  }

  TypedProgram *checked = sema_check(c, ast);
  if (!checked || failed(c))
    return 0;
  Module *m = lower_program(c, checked);
  compilation_dump_after(c, "sema", m);

  optimize_module(c, m); /* at every -O level: -O0 only turns fusion off */
  compilation_dump_after(c, "opt", m);
  if (failed(c))
    return 0;
  c->module = m;
  if (c->opts.emit == TECC_EMIT_IR) {
    c->output = ir_dump(c->arena, m);
    return 1;
  }
  if (c->stop_at_ir)
    return 1;

  return generate_code(c, m) && !failed(c);
}

Module *compile_to_ir(Compilation *c, SourceFile *main) {
  c->stop_at_ir = 1;
  int ok = compile_pipeline(c, main);
  c->stop_at_ir = 0;
  return ok ? c->module : NULL;
}
