/* api.c — the public library interface (tecc.h) over a Compilation.
 *
 * A tecc_result owns one arena; the compilation, its outputs, the
 * diagnostics list and every string handed out live in it until
 * tecc_result_free().  Nothing here prints or exits. */
#include "tecc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pipeline.h"

struct tecc_result {
  Arena *arena;
  Compilation comp;
  int ok;
  int io_error;
  tecc_diagnostic *diags; /* errors and warnings, each followed by its notes */
  size_t ndiags;
  const char *formatted[2]; /* format_diagnostics(plain = 0, 1), cached */
  const char *dump;         /* opts.dump_after output */
  const char **files;       /* paths of the files read, for -MD */
  size_t nfiles;
};

void tecc_options_init(tecc_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->emit = TECC_EMIT_CU;
  opts->opt_level = 2;
}

/* --- results ------------------------------------------------------------ */

static tecc_result *result_new(const tecc_options *opts) {
  tecc_options defaults;
  if (!opts) {
    tecc_options_init(&defaults);
    opts = &defaults;
  }
  tecc_result *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->arena = arena_new();
  compilation_init(&r->comp, r->arena, opts, ".");
  return r;
}

static void add_diagnostic(tecc_result *r, const Diag *d, tecc_severity sev) {
  tecc_diagnostic *out = &r->diags[r->ndiags++];
  out->severity = sev;
  out->message = d->message;
  out->file = d->range.file ? d->range.file->name : NULL;
  if (d->range.file)
    source_line_col(d->range.file, d->range.begin, &out->line, &out->column);
}

static size_t count_diagnostics(const DiagList *list) {
  size_t n = 0;
  for (int i = 0; i < list->items.len; i++)
    for (const Diag *d = list->items.items[i]; d; d = d->next_note)
      n++;
  return n;
}

/* Flattens the DiagList: each diagnostic, then its notes. */
static void collect_diagnostics(tecc_result *r) {
  const DiagList *list = &r->comp.diags;
  r->diags = ARENA_ARRAY(r->arena, tecc_diagnostic, count_diagnostics(list) + 1);
  for (int i = 0; i < list->items.len; i++) {
    const Diag *d = list->items.items[i];
    add_diagnostic(r, d, d->severity);
    for (const Diag *n = d->next_note; n; n = n->next_note)
      add_diagnostic(r, n, TECC_NOTE);
  }
}

/* Files with a path (the main file first, then imports); built-in sources
 * such as the prelude have none. */
static void collect_files(tecc_result *r) {
  const PtrVec *files = &r->comp.files;
  r->files = ARENA_ARRAY(r->arena, const char *, files->len + 1);
  for (int i = 0; i < files->len; i++) {
    const SourceFile *f = files->items[i];
    if (f->path)
      r->files[r->nfiles++] = f->path;
  }
}

static tecc_result *finish(tecc_result *r) {
  r->ok = r->ok && !diag_has_errors(&r->comp.diags);
  collect_diagnostics(r);
  collect_files(r);
  r->dump = buf_cstr(&r->comp.debug_dump);
  return r;
}

/* --- compiling ---------------------------------------------------------- */

/* Options a caller of the library may get wrong (the command checks them
 * before): each is a position-less error. */
static int options_valid(tecc_result *r) {
  const tecc_options *o = &r->comp.opts;
  DiagList *d = &r->comp.diags;
  if (o->opt_level < 0 || o->opt_level > 2)
    diag_error(d, (SrcRange){0}, "invalid optimization level %d (0, 1 or 2)", o->opt_level);
  if ((unsigned)o->emit > TECC_EMIT_JSON)
    diag_error(d, (SrcRange){0}, "invalid emit kind %d", (int)o->emit);
  for (size_t i = 0; i < o->n_defines; i++)
    if (o->defines[i].value < 0)
      diag_error(d, (SrcRange){0}, "size variable '%s' bound to %lld: sizes are non-negative",
                 o->defines[i].name, (long long)o->defines[i].value);
  return !diag_has_errors(d);
}

static void run_pipeline(tecc_result *r, SourceFile *main) {
  r->ok = options_valid(r) && compile_pipeline(&r->comp, main);
}

/* The directory part of `path` ("." when there is none). */
static const char *dir_of(Arena *a, const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return ".";
  if (slash == path)
    return "/";
  return arena_strndup(a, path, (size_t)(slash - path));
}

static int is_stdin(const char *filename) {
  return strcmp(filename, "-") == 0;
}

tecc_result *tecc_compile_string(const char *filename, const char *source,
                                 size_t len, const tecc_options *opts) {
  if (!filename)
    filename = "-";
  int from_stdin = is_stdin(filename);
  tecc_result *r = result_new(opts);
  if (!r)
    return NULL;
  if (!from_stdin)
    r->comp.main_dir = dir_of(r->arena, filename);
  if (len >= UINT32_MAX) {
    diag_error(&r->comp.diags, (SrcRange){0}, "'%s' is too large (%zu bytes)",
               from_stdin ? "<stdin>" : filename, len);
    r->io_error = 1;
    return finish(r);
  }
  SourceFile *main =
      compilation_add_source(&r->comp, from_stdin ? "<stdin>" : filename,
                             from_stdin ? "-" : filename, source ? source : "", len);
  run_pipeline(r, main);
  return finish(r);
}

tecc_result *tecc_compile_file(const char *path, const tecc_options *opts) {
  tecc_result *r = result_new(opts);
  if (!r)
    return NULL;
  r->comp.main_dir = dir_of(r->arena, path);
  SourceFile *main = compilation_load(&r->comp, path, path);
  if (!main) {
    diag_error(&r->comp.diags, (SrcRange){0}, "cannot read '%s': %s", path,
               strerror(errno));
    r->io_error = 1;
    return finish(r);
  }
  run_pipeline(r, main);
  return finish(r);
}

/* --- accessors ---------------------------------------------------------- */

int tecc_result_ok(const tecc_result *r) { return r->ok; }

int tecc_result_io_error(const tecc_result *r) { return r->io_error; }

const char *tecc_result_output(const tecc_result *r) {
  return r->ok ? r->comp.output : NULL;
}

const char *tecc_result_header(const tecc_result *r) {
  return r->ok ? r->comp.header : NULL;
}

const char *tecc_result_explanation(const tecc_result *r) {
  return r->comp.explanation;
}

const char *tecc_result_dump(const tecc_result *r) {
  return r->dump;
}

size_t tecc_result_num_diagnostics(const tecc_result *r) { return r->ndiags; }

const tecc_diagnostic *tecc_result_diagnostic(const tecc_result *r, size_t i) {
  return i < r->ndiags ? &r->diags[i] : NULL;
}

const char *tecc_result_format_diagnostics(tecc_result *r, int plain) {
  plain = plain != 0;
  if (!r->formatted[plain])
    r->formatted[plain] = diag_format_all(&r->comp.diags, plain);
  return r->formatted[plain];
}

size_t tecc_result_num_files(const tecc_result *r) { return r->nfiles; }

const char *tecc_result_file(const tecc_result *r, size_t i) {
  return i < r->nfiles ? r->files[i] : NULL;
}

void tecc_result_free(tecc_result *r) {
  if (!r)
    return;
  arena_free(r->arena);
  free(r);
}
