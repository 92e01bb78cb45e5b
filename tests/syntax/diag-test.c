/* diag-test.c — unit tests of lib/diag.c: the gcc-style layout, columns
 * with tabs, CRLF and UTF-8, notes, warnings under -Werror and -w, the
 * error limit, and diagnostics without a position. */
#include <string.h>

#include "diag.h"
#include "tap.h"

static SourceFile source(const char *name, const char *text) {
  SourceFile f = {name, name, text, (uint32_t)strlen(text), 0};
  return f;
}

static SrcRange at(const SourceFile *f, const char *needle, uint32_t len) {
  const char *p = strstr(f->text, needle);
  SrcRange r = {f, (uint32_t)(p - f->text), (uint32_t)(p - f->text) + len};
  return r;
}

static void test_layout(Arena *a) {
  SourceFile f = source("m.te", "x: f32[N]\ny = foo(x\n");
  DiagList d;
  diag_init(&d, a, 0, 0);
  diag_error(&d, at(&f, "foo", 3), "bad %s", "call");
  is_string(diag_format_all(&d, 0),
            "m.te:2:5: error: bad call\n"
            "    2 | y = foo(x\n"
            "      |     ^~~\n",
            "error with source line and caret");
  is_string(diag_format_all(&d, 1), "m.te:2:5: error: bad call\n", "plain layout");
  is_int(diag_has_errors(&d), 1, "has errors");
}

static void test_columns(void) {
  SourceFile f = source("t.te", "a\r\n\ty =\t$\n\xe2\x86\x92 b");
  int line, col;
  source_line_col(&f, (uint32_t)(strchr(f.text, '$') - f.text), &line, &col);
  ok(line == 2 && col == 17, "tab stops of 8: line %d col %d", line, col);
  source_line_col(&f, (uint32_t)(strchr(f.text, 'b') - f.text), &line, &col);
  ok(line == 3 && col == 3, "a UTF-8 sequence is one column: line %d col %d", line, col);
  source_line_col(&f, 1, &line, &col);
  ok(line == 1 && col == 2, "the CR of a CRLF: line %d col %d", line, col);
  source_line_col(&f, 9999, &line, &col);
  ok(line == 3 && col == 4, "offsets past the end are clamped: line %d col %d", line, col);
}

static void test_tab_caret(Arena *a) {
  SourceFile f = source("t.te", "a\r\n\ty =\t$\r\n");
  DiagList d;
  diag_init(&d, a, 0, 0);
  diag_error(&d, at(&f, "y =\t$", 5), "tabs");
  is_string(diag_format_all(&d, 0),
            "t.te:2:9: error: tabs\n"
            "    2 |         y =     $\n"
            "      |         ^~~~~~~~~\n",
            "tabs expand in the line and under the caret; the CR is dropped");
}

static void test_multiline_range(Arena *a) {
  SourceFile f = source("r.te", "y = (a +\n     b)\n");
  DiagList d;
  diag_init(&d, a, 0, 0);
  SrcRange r = {&f, 4, (uint32_t)f.len - 1};
  diag_error(&d, r, "spans lines");
  is_string(diag_format_all(&d, 0),
            "r.te:1:5: error: spans lines\n"
            "    1 | y = (a +\n"
            "      |     ^~~~\n",
            "a range over several lines is underlined on its first line");
}

static void test_notes(Arena *a) {
  SourceFile f = source("n.te", "fn f(x) = x + 1\ny = f(2)\n");
  DiagList d;
  diag_init(&d, a, 0, 0);
  Diag *g = diag_error(&d, at(&f, "f(2)", 4), "outer");
  diag_note(&d, g, at(&f, "x + 1", 5), "in expansion of '%s'", "f");
  diag_note(&d, g, (SrcRange){NULL, 0, 0}, "no position");
  diag_note(&d, NULL, at(&f, "x", 1), "dropped: no parent");
  is_string(diag_format_all(&d, 0),
            "n.te:2:5: error: outer\n"
            "    2 | y = f(2)\n"
            "      |     ^~~~\n"
            "n.te:1:11: note: in expansion of 'f'\n"
            "    1 | fn f(x) = x + 1\n"
            "      |           ^~~~~\n"
            "tecc: note: no position\n",
            "notes follow their diagnostic with their own excerpt");
}

static void test_warnings(Arena *a) {
  SourceFile f = source("w.te", "x: f32\n");
  DiagList d;
  diag_init(&d, a, 0, 0);
  ok(diag_warning(&d, at(&f, "x", 1), "unused input") != NULL, "a warning is kept");
  is_string(diag_format_all(&d, 1), "w.te:1:1: warning: unused input\n", "warning layout");
  is_int(diag_has_errors(&d), 0, "a warning is not an error");

  diag_init(&d, a, 1, 0);
  Diag *g = diag_warning(&d, at(&f, "x", 1), "unused input");
  ok(g && g->severity == TECC_ERROR, "-Werror: the warning is an error");
  is_string(diag_format_all(&d, 1), "w.te:1:1: error: unused input\n",
            "-Werror keeps the message");
  is_int(diag_has_errors(&d), 1, "-Werror counts it");

  diag_init(&d, a, 1, 1);
  ok(diag_warning(&d, at(&f, "x", 1), "unused input") == NULL, "-w hides warnings");
  is_string(diag_format_all(&d, 0), "", "nothing is printed under -w");
  is_int(diag_has_errors(&d), 0, "-w -Werror: no error");
}

static void test_limit(Arena *a) {
  DiagList d;
  diag_init(&d, a, 0, 0);
  SrcRange none = {NULL, 0, 0};
  int kept = 0;
  for (int i = 0; i < 25; i++)
    kept += diag_error(&d, none, "error %d", i) != NULL;
  is_int(kept, DIAG_ERROR_LIMIT, "20 errors are kept");
  ok(diag_warning(&d, none, "late warning") == NULL, "nothing is kept past the limit");
  is_int(d.items.len, DIAG_ERROR_LIMIT + 1, "one diagnostic says so");
  const char *text = diag_format_all(&d, 0);
  const char *last = strstr(text, "tecc: error: error 19\n");
  is_string(last, "tecc: error: error 19\ntecc: error: too many errors emitted, stopping now\n",
            "the limit message comes last, without a position");
}

static void test_gutter(Arena *a) {
  Buf b;
  buf_init(&b, a);
  for (int i = 1; i < 123456; i++)
    buf_puts(&b, "\n");
  buf_puts(&b, "y = $\n");
  SourceFile f = source("g.te", buf_cstr(&b));
  DiagList d;
  diag_init(&d, a, 0, 0);
  diag_error(&d, at(&f, "$", 1), "far");
  is_string(diag_format_all(&d, 0),
            "g.te:123456:5: error: far\n"
            "123456 | y = $\n"
            "       |     ^\n",
            "the gutter widens for long files");
}

/* Line numbers against a naive count, for every offset of a text with
 * newlines at all positions modulo 8, forwards and backwards. */
static void test_line_counts(void) {
  char text[300];
  for (int i = 0; i < 299; i++)
    text[i] = (i * 7 + i / 3) % 5 == 0 ? '\n' : (i % 11 == 0 ? '\t' : 'a' + i % 26);
  text[299] = '\0';
  SourceFile f = source("c.te", text);
  LineCursor cur;
  line_cursor_init(&cur, &f);
  int bad = 0, line, col, cline, ccol;
  for (uint32_t pass = 0; pass < 2; pass++)
    for (uint32_t k = 0; k <= f.len; k++) {
      uint32_t off = pass == 0 ? k : f.len - k;
      int want = 1;
      for (uint32_t i = 0; i < off; i++)
        want += text[i] == '\n';
      source_line_col(&f, off, &line, &col);
      line_cursor_get(&cur, &f, off, &cline, &ccol);
      bad += line != want || cline != want || ccol != col;
    }
  is_int(bad, 0, "line numbers of every offset, directly and through a cursor");
}

static void test_join(void) {
  SourceFile f = source("j.te", "abcdef");
  SrcRange a = {&f, 1, 2}, b = {&f, 4, 6}, none = {NULL, 0, 0};
  SrcRange r = range_join(a, b);
  ok(r.begin == 1 && r.end == 6, "range_join covers both");
  r = range_join(none, b);
  ok(r.file == &f && r.begin == 4, "range_join with no position gives the other");
}

int main(void) {
  plan(27);
  Arena *a = arena_new();
  test_layout(a);
  test_columns();
  test_tab_caret(a);
  test_multiline_range(a);
  test_notes(a);
  test_warnings(a);
  test_limit(a);
  test_gutter(a);
  test_line_counts();
  test_join();
  arena_free(a);
  return exit_status();
}
