/* api.c — the library interface of tecc.h: results, diagnostics with
 * positions, formatting, the files list, dumps, I/O errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "tecc.h"

static const char good[] = "x: f32[N, D]\ny = sum(exp(x - max(x, -1)), -1)\n";
static const char bad[] = "x: f32[N]\ny = (x +\n";
static const char unused_input[] = "x: f32[N]\nz: f32[N]\ny = x\n";

static tecc_options opts_for(tecc_emit emit) {
  tecc_options o;
  tecc_options_init(&o);
  o.emit = emit;
  return o;
}

static void test_defaults(void) {
  tecc_options o;
  memset(&o, 0xff, sizeof o);
  tecc_options_init(&o);
  is_int(o.emit, TECC_EMIT_CU, "defaults: emit .cu + .h");
  is_int(o.opt_level, 2, "defaults: -O2");
  ok(o.arch == NULL && o.kernel_name == NULL && o.n_defines == 0 &&
         o.n_include_dirs == 0 && !o.werror && !o.no_warnings && !o.explain,
     "defaults: everything else off");
}

static void test_good(void) {
  tecc_options o = opts_for(TECC_EMIT_AST);
  tecc_result *r = tecc_compile_string("dir/softmax.te", good, strlen(good), &o);
  ok(tecc_result_ok(r), "a valid program compiles");
  ok(!tecc_result_io_error(r), "no I/O error");
  ok(tecc_result_output(r) && *tecc_result_output(r), "--emit=ast gives a dump");
  is_int((int64_t)tecc_result_num_diagnostics(r), 0, "no diagnostics");
  is_string(tecc_result_format_diagnostics(r, 0), "", "formatted diagnostics: empty");
  is_int((int64_t)tecc_result_num_files(r), 1, "one file read");
  is_string(tecc_result_file(r, 0), "dir/softmax.te", "the main file first");
  ok(tecc_result_file(r, 1) == NULL, "files past the end: NULL");
  ok(tecc_result_header(r) == NULL, "no header for a dump");
  is_string(tecc_result_dump(r), "", "no debugging dump unless asked");
  tecc_result *again = tecc_compile_string("dir/softmax.te", good, strlen(good), &o);
  is_string(tecc_result_output(again), tecc_result_output(r), "deterministic output");
  tecc_result_free(again);
  tecc_result_free(r);
}

static void test_errors(void) {
  tecc_options o = opts_for(TECC_EMIT_IR);
  tecc_result *r = tecc_compile_string("bad.te", bad, strlen(bad), &o);
  ok(!tecc_result_ok(r), "a syntax error fails");
  ok(!tecc_result_io_error(r), "a syntax error is no I/O error");
  ok(tecc_result_output(r) == NULL, "no output after errors");
  ok(tecc_result_num_diagnostics(r) >= 1, "at least one diagnostic");
  const tecc_diagnostic *d = tecc_result_diagnostic(r, 0);
  ok(d && d->severity == TECC_ERROR, "the first is an error");
  is_string(d ? d->file : NULL, "bad.te", "it names the file");
  ok(d && d->line >= 2 && d->column >= 1, "it has a line and a column");
  ok(d && d->message && !strstr(d->message, "error:"), "the message has no 'error:' prefix");
  const char *text = tecc_result_format_diagnostics(r, 0);
  ok(strncmp(text, "bad.te:", 7) == 0, "formatted: FILE:LINE:COL first");
  ok(strstr(text, "|") != NULL, "formatted: with the source line");
  const char *plain = tecc_result_format_diagnostics(r, 1);
  ok(strstr(plain, "|") == NULL && strncmp(plain, "bad.te:", 7) == 0,
     "plain: no source line");
  ok(tecc_result_diagnostic(r, tecc_result_num_diagnostics(r)) == NULL,
     "diagnostics past the end: NULL");
  tecc_result_free(r);
}

static void test_io_error(void) {
  tecc_options o = opts_for(TECC_EMIT_AST);
  tecc_result *r = tecc_compile_file("no/such/file.te", &o);
  ok(!tecc_result_ok(r) && tecc_result_io_error(r), "a missing file is an I/O error");
  is_int((int64_t)tecc_result_num_diagnostics(r), 1, "one diagnostic");
  const tecc_diagnostic *d = tecc_result_diagnostic(r, 0);
  ok(d && d->line == 0 && d->column == 0, "with no position");
  ok(d && strstr(d->message, "no/such/file.te") && strstr(d->message, "No such file"),
     "it names the file and the reason");
  ok(strncmp(tecc_result_format_diagnostics(r, 0), "tecc: error: ", 13) == 0,
     "formatted with the tecc: prefix");
  tecc_result_free(r);
  r = tecc_compile_file(".", &o);
  ok(tecc_result_io_error(r), "a directory is an I/O error");
  tecc_result_free(r);
}

static void test_files(void) {
  char dir[] = "/tmp/tecc-api.XXXXXX";
  if (!mkdtemp(dir)) {
    skip("temporary directory");
    return;
  }
  char main_path[64], main_te[] = "good.te";
  snprintf(main_path, sizeof main_path, "%s/%s", dir, main_te);
  FILE *f = fopen(main_path, "w");
  fputs(good, f);
  fclose(f);
  tecc_options o = opts_for(TECC_EMIT_AST);
  tecc_result *r = tecc_compile_file(main_path, &o);
  ok(tecc_result_ok(r), "compile_file of a valid file");
  is_string(tecc_result_file(r, 0), main_path, "files: the path as given");
  tecc_options ir = opts_for(TECC_EMIT_IR);
  tecc_result *s = tecc_compile_string(main_path, good, strlen(good), &ir);
  tecc_result *t = tecc_compile_file(main_path, &ir);
  is_string(tecc_result_output(t), tecc_result_output(s), "compile_file = compile_string");
  tecc_result_free(s);
  tecc_result_free(t);
  tecc_result_free(r);
  unlink(main_path);
  rmdir(dir);
}

static void test_stdin_name(void) {
  tecc_options o = opts_for(TECC_EMIT_AST);
  tecc_result *r = tecc_compile_string("-", bad, strlen(bad), &o);
  const tecc_diagnostic *d = tecc_result_diagnostic(r, 0);
  is_string(d ? d->file : NULL, "<stdin>", "standard input is <stdin> in diagnostics");
  tecc_result_free(r);
}

static void test_warnings(void) {
  tecc_options o = opts_for(TECC_EMIT_IR);
  tecc_result *r = tecc_compile_string("w.te", unused_input, strlen(unused_input), &o);
  const tecc_diagnostic *d = tecc_result_diagnostic(r, 0);
  ok(tecc_result_ok(r) && d && d->severity == TECC_WARNING,
     "an unused input: a warning, and success");
  tecc_result_free(r);
  o.werror = 1;
  r = tecc_compile_string("w.te", unused_input, strlen(unused_input), &o);
  d = tecc_result_diagnostic(r, 0);
  ok(!tecc_result_ok(r) && d && d->severity == TECC_ERROR, "-Werror: an error");
  tecc_result_free(r);
  o.werror = 0;
  o.no_warnings = 1;
  r = tecc_compile_string("w.te", unused_input, strlen(unused_input), &o);
  ok(tecc_result_ok(r) && tecc_result_num_diagnostics(r) == 0, "-w: no diagnostics");
  tecc_result_free(r);
}

static void test_dump_after(void) {
  tecc_options o = opts_for(TECC_EMIT_IR);
  o.dump_after = "all";
  tecc_result *r = tecc_compile_string("d.te", good, strlen(good), &o);
  const char *dump = tecc_result_dump(r);
  ok(strstr(dump, "=== after parse ===") && strstr(dump, "=== after sema ===") &&
         strstr(dump, "=== after opt ==="),
     "dump_after=all: the IR after each pass");
  tecc_result_free(r);
  o.dump_after = "opt";
  r = tecc_compile_string("d.te", good, strlen(good), &o);
  dump = tecc_result_dump(r);
  ok(!strstr(dump, "after sema") && strstr(dump, "=== after opt ===\n"),
     "dump_after=opt: that pass only");
  tecc_result_free(r);
}

static void test_bad_options(void) {
  tecc_options o = opts_for(TECC_EMIT_AST);
  o.opt_level = 3;
  tecc_result *r = tecc_compile_string("o.te", good, strlen(good), &o);
  ok(!tecc_result_ok(r) && tecc_result_num_diagnostics(r) == 1,
     "opt_level 3: an error");
  tecc_result_free(r);
  tecc_define bad_define = {"N", -1};
  o = opts_for(TECC_EMIT_AST);
  o.defines = &bad_define;
  o.n_defines = 1;
  r = tecc_compile_string("o.te", good, strlen(good), &o);
  ok(!tecc_result_ok(r), "a negative -D value: an error");
  tecc_result_free(r);
}

int main(void) {
  plan(44);
  test_defaults();
  test_good();
  test_errors();
  test_io_error();
  test_files();
  test_stdin_name();
  test_warnings();
  test_dump_after();
  test_bad_options();
  tecc_result_free(NULL);
  ok(1, "tecc_result_free(NULL) is harmless");
  return exit_status();
}
