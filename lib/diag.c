/* diag.c — collecting and formatting diagnostics (doc/language.md §11).
 *
 * Diagnostics are kept in report order.  Formatting follows gcc:
 *   FILE:LINE:COL: error: MESSAGE
 *       3 | y = foo(x
 *         |         ^~~
 * Columns are display columns: a tab advances to the next multiple of 8 and
 * the continuation bytes of a UTF-8 sequence take no room. */
#include "diag.h"

#include <stdio.h>
#include <string.h>

enum { TAB_WIDTH = 8, GUTTER_MIN = 5 };

static const char TOO_MANY_ERRORS[] = "too many errors emitted, stopping now";

void diag_init(DiagList *d, Arena *a, int werror, int no_warnings) {
  memset(d, 0, sizeof *d);
  d->arena = a;
  d->werror = werror;
  d->no_warnings = no_warnings;
}

static Diag *diag_new(DiagList *d, tecc_severity sev, SrcRange r, const char *msg) {
  Diag *g = ARENA_NEW(d->arena, Diag);
  g->severity = sev;
  g->range = r;
  g->message = msg;
  return g;
}

/* Adds an error unless the limit was reached; the 21st error becomes the
 * one position-less "too many errors" diagnostic. */
static Diag *add_error(DiagList *d, SrcRange r, const char *msg) {
  if (d->limit_hit)
    return NULL;
  if (d->n_errors >= DIAG_ERROR_LIMIT) {
    d->limit_hit = 1;
    SrcRange none = {NULL, 0, 0};
    vec_push(d->arena, &d->items, diag_new(d, TECC_ERROR, none, TOO_MANY_ERRORS));
    return NULL;
  }
  Diag *g = diag_new(d, TECC_ERROR, r, msg);
  vec_push(d->arena, &d->items, g);
  d->n_errors++;
  return g;
}

Diag *diag_error(DiagList *d, SrcRange r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *msg = arena_vprintf(d->arena, fmt, ap);
  va_end(ap);
  return add_error(d, r, msg);
}

Diag *diag_warning(DiagList *d, SrcRange r, const char *fmt, ...) {
  if (d->no_warnings || d->limit_hit)
    return NULL;
  va_list ap;
  va_start(ap, fmt);
  const char *msg = arena_vprintf(d->arena, fmt, ap);
  va_end(ap);
  if (d->werror)
    return add_error(d, r, msg);
  Diag *g = diag_new(d, TECC_WARNING, r, msg);
  vec_push(d->arena, &d->items, g);
  return g;
}

void diag_note(DiagList *d, Diag *parent, SrcRange r, const char *fmt, ...) {
  if (!parent)
    return;
  va_list ap;
  va_start(ap, fmt);
  const char *msg = arena_vprintf(d->arena, fmt, ap);
  va_end(ap);
  Diag *note = diag_new(d, TECC_NOTE, r, msg);
  Diag *last = parent;
  while (last->next_note)
    last = last->next_note;
  last->next_note = note;
}

int diag_has_errors(const DiagList *d) { return d->n_errors > 0; }

SrcRange range_join(SrcRange a, SrcRange b) {
  if (!a.file)
    return b;
  if (!b.file || b.file != a.file)
    return a;
  SrcRange r = a;
  if (b.begin < r.begin)
    r.begin = b.begin;
  if (b.end > r.end)
    r.end = b.end;
  return r;
}

/* ---- positions ---------------------------------------------------------- */

static uint32_t clamp_offset(const SourceFile *f, uint32_t off) {
  return off > f->len ? f->len : off;
}

static uint32_t line_start(const SourceFile *f, uint32_t off) {
  while (off > 0 && f->text[off - 1] != '\n')
    off--;
  return off;
}

/* End of the line holding `start`, without its LF and a CR before it. */
static uint32_t line_end(const SourceFile *f, uint32_t start) {
  const char *nl = memchr(f->text + start, '\n', f->len - start);
  uint32_t end = nl ? (uint32_t)(nl - f->text) : f->len;
  if (end > start && f->text[end - 1] == '\r')
    end--;
  return end;
}

static int is_utf8_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

/* The display column reached after the bytes [from, to) of a line,
 * starting at display column `col` (1-based). */
static int advance_column(const SourceFile *f, uint32_t from, uint32_t to, int col) {
  for (uint32_t i = from; i < to; i++) {
    unsigned char c = (unsigned char)f->text[i];
    if (c == '\t')
      col = ((col - 1) / TAB_WIDTH + 1) * TAB_WIDTH + 1;
    else if (!is_utf8_continuation(c))
      col++;
  }
  return col;
}

/* Newlines in [from, to), eight bytes at a time: in each word, a byte's
 * high bit survives the mask exactly when the byte was '\n'. */
static int count_newlines(const SourceFile *f, uint32_t from, uint32_t to) {
  const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL, newlines = 0x0a0a0a0a0a0a0a0aULL;
  const char *p = f->text;
  int n = 0;
  uint32_t i = from;
  for (; i + 8 <= to; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, sizeof w);
    w ^= newlines; /* a newline byte becomes 0 */
    uint64_t nonzero = ((w & low7) + low7) | w;
    n += __builtin_popcountll(~nonzero & ~low7);
  }
  for (; i < to; i++)
    n += p[i] == '\n';
  return n;
}

void source_line_col(const SourceFile *f, uint32_t off, int *line, int *col) {
  off = clamp_offset(f, off);
  *line = 1 + count_newlines(f, 0, off);
  *col = advance_column(f, line_start(f, off), off, 1);
}

void line_cursor_init(LineCursor *c, const SourceFile *f) {
  c->file = f;
  c->off = 0;
  c->line = 1;
}

void line_cursor_get(LineCursor *c, const SourceFile *f, uint32_t off, int *line, int *col) {
  if (c->file != f)
    line_cursor_init(c, f);
  off = clamp_offset(f, off);
  if (off >= c->off)
    c->line += count_newlines(f, c->off, off);
  else
    c->line -= count_newlines(f, off, c->off);
  c->off = off;
  *line = c->line;
  *col = advance_column(f, line_start(f, off), off, 1);
}

/* ---- formatting ------------------------------------------------------- */

static const char *severity_word(tecc_severity s) {
  switch (s) {
  case TECC_NOTE: return "note";
  case TECC_WARNING: return "warning";
  case TECC_ERROR: return "error";
  }
  unreachable();
}

/* The source line with tabs expanded and control bytes shown as spaces. */
static void put_source_line(Buf *b, const SourceFile *f, uint32_t start, uint32_t end) {
  int col = 1;
  for (uint32_t i = start; i < end; i++) {
    unsigned char c = (unsigned char)f->text[i];
    int next = advance_column(f, i, i + 1, col);
    if (c == '\t' || c < 0x20 || c == 0x7f) {
      for (; col < next; col++)
        buf_putn(b, " ", 1);
    } else {
      buf_putn(b, (const char *)&c, 1);
      col = next;
    }
  }
}

static int digit_count(int n) {
  int d = 1;
  while (n >= 10) {
    n /= 10;
    d++;
  }
  return d;
}

/* "    3 | source" and "      |   ^~~" for the first line of the range. */
static void put_excerpt(Buf *b, SrcRange r, LineCursor *cur) {
  const SourceFile *f = r.file;
  uint32_t begin = clamp_offset(f, r.begin);
  uint32_t start = line_start(f, begin);
  uint32_t end_of_line = line_end(f, start);
  uint32_t end = clamp_offset(f, r.end);
  if (end > end_of_line)
    end = end_of_line;
  if (begin > end_of_line)
    begin = end_of_line; /* a position on the CR of a CRLF */
  int line, col;
  line_cursor_get(cur, f, begin, &line, &col);
  int width = digit_count(line) > GUTTER_MIN ? digit_count(line) : GUTTER_MIN;
  buf_printf(b, "%*d | ", width, line);
  put_source_line(b, f, start, end_of_line);
  buf_printf(b, "\n%*s | %*s^", width, "", col - 1, "");
  int end_col = end > begin ? advance_column(f, begin, end, col) : col + 1;
  for (int c = col + 1; c < end_col; c++)
    buf_putn(b, "~", 1);
  buf_putn(b, "\n", 1);
}

static void put_one(Buf *b, const Diag *g, int plain, LineCursor *cur) {
  const SourceFile *f = g->range.file;
  if (!f) {
    buf_printf(b, "tecc: %s: %s\n", severity_word(g->severity), g->message);
    return;
  }
  int line, col;
  line_cursor_get(cur, f, g->range.begin, &line, &col);
  buf_printf(b, "%s:%d:%d: %s: %s\n", f->name, line, col, severity_word(g->severity),
             g->message);
  if (!plain)
    put_excerpt(b, g->range, cur);
}

const char *diag_format_all(const DiagList *d, int plain) {
  Buf b;
  buf_init(&b, d->arena);
  LineCursor cur;
  line_cursor_init(&cur, NULL);
  for (int i = 0; i < d->items.len; i++)
    for (const Diag *g = d->items.items[i]; g; g = g->next_note)
      put_one(&b, g, plain, &cur);
  return buf_cstr(&b);
}
