/* runtime.c — the pieces of the embedded runtime a generated file uses
 * (runtime.h). */
#include "runtime.h"

#include <ctype.h>
#include <string.h>

enum { MAX_PIECES = 64, MAX_NAMES = 32 };

typedef struct Piece {
  const char *text;  /* from its marker line (excluded) to the next marker */
  size_t len;
  const char *names[MAX_NAMES], *needs[MAX_NAMES];
  int nnames, nneeds;
  int used;
} Piece;

typedef struct RuntimeFile {
  const char *prologue, *epilogue;
  size_t prologue_len;
  Piece pieces[MAX_PIECES];
  int npieces;
} RuntimeFile;

static const char PIECE[] = "/* @piece ", END[] = "/* @end */";

static const char *line_end(const char *p) {
  const char *e = strchr(p, '\n');
  return e ? e + 1 : p + strlen(p);
}

/* The words of a marker line, into names until "@needs", then needs. */
static void read_marker(Arena *a, Piece *pc, const char *p, const char *end) {
  int in_needs = 0;
  p += sizeof PIECE - 1;
  while (p < end) {
    while (p < end && isspace((unsigned char)*p))
      p++;
    const char *w = p;
    while (p < end && !isspace((unsigned char)*p))
      p++;
    if (p == w || strncmp(w, "*/", 2) == 0)
      break;
    if (strncmp(w, "@needs", (size_t)(p - w)) == 0 && p - w == 6) {
      in_needs = 1;
      continue;
    }
    if ((in_needs ? pc->nneeds : pc->nnames) >= MAX_NAMES)
      internal_error("runtime: a piece names more than %d words", MAX_NAMES);
    const char *word = arena_strndup(a, w, (size_t)(p - w));
    if (in_needs)
      pc->needs[pc->nneeds++] = word;
    else
      pc->names[pc->nnames++] = word;
  }
}

static void split_file(Arena *a, RuntimeFile *f, const char *text) {
  memset(f, 0, sizeof *f);
  const char *p = strstr(text, PIECE), *end = strstr(text, END);
  if (!p || !end || end < p)
    internal_error("runtime: a file without @piece and @end markers");
  f->prologue = text;
  f->prologue_len = (size_t)(p - text);
  while (p < end) {
    if (f->npieces == MAX_PIECES)
      internal_error("runtime: more than %d pieces", MAX_PIECES);
    Piece *pc = &f->pieces[f->npieces++];
    const char *body = line_end(p);
    read_marker(a, pc, p, body);
    const char *next = strstr(body, PIECE);
    if (!next || next > end)
      next = end;
    pc->text = body;
    pc->len = (size_t)(next - body);
    p = next;
  }
  f->epilogue = line_end(end);
}

static int names_word(const Piece *pc, const char *w, size_t n) {
  for (int i = 0; i < pc->nnames; i++)
    if (strlen(pc->names[i]) == n && strncmp(pc->names[i], w, n) == 0)
      return 1;
  return 0;
}

/* Marks the pieces that define `w`; 1 when one was not marked before. */
static int use(RuntimeFile *files, int nfiles, const char *w, size_t n) {
  int grew = 0;
  for (int f = 0; f < nfiles; f++)
    for (int i = 0; i < files[f].npieces; i++) {
      Piece *pc = &files[f].pieces[i];
      if (!pc->used && names_word(pc, w, n)) {
        pc->used = 1;
        grew = 1;
      }
    }
  return grew;
}

static void use_named_in(RuntimeFile *files, int nfiles, const char *code) {
  for (const char *p = strstr(code, "tecc::"); p; p = strstr(p, "tecc::")) {
    p += 6;
    const char *w = p;
    while (isalnum((unsigned char)*p) || *p == '_')
      p++;
    use(files, nfiles, w, (size_t)(p - w));
  }
}

/* What the used pieces need, until nothing more is marked. */
static void use_needs(RuntimeFile *files, int nfiles) {
  for (int grew = 1; grew;) {
    grew = 0;
    for (int f = 0; f < nfiles; f++)
      for (int i = 0; i < files[f].npieces; i++) {
        const Piece *pc = &files[f].pieces[i];
        for (int j = 0; pc->used && j < pc->nneeds; j++)
          grew |= use(files, nfiles, pc->needs[j], strlen(pc->needs[j]));
      }
  }
}

static void put_file(Buf *b, const RuntimeFile *f) {
  int any = 0;
  for (int i = 0; i < f->npieces; i++)
    any |= f->pieces[i].used;
  if (!any)
    return;
  buf_printf(b, "%.*s", (int)f->prologue_len, f->prologue);
  for (int i = 0; i < f->npieces; i++)
    if (f->pieces[i].used)
      buf_printf(b, "%.*s", (int)f->pieces[i].len, f->pieces[i].text);
  buf_puts(b, f->epilogue);
}

const char *runtime_for(Arena *a, const char *code) {
  RuntimeFile *files = ARENA_ARRAY(a, RuntimeFile, 2);
  split_file(a, &files[0], tecc_runtime_cuh);
  split_file(a, &files[1], tecc_rows_cuh);
  use_named_in(files, 2, code);
  use_needs(files, 2);
  Buf b;
  buf_init(&b, a);
  put_file(&b, &files[0]);
  put_file(&b, &files[1]);
  return buf_cstr(&b);
}
