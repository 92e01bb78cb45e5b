/* libtecc_demo.c — compile a kernel with libtecc's C API, without running
 * the tecc command, and print the header it generates.
 *
 *   libtecc_demo [--emit=ir] [WIDTH]
 *
 * Builds the source of an RMSNorm over rows of WIDTH (default 4096)
 * elements in memory, binds D=WIDTH as `tecc -D` would, compiles it with
 * tecc_compile_string(), and prints the .h (and the size of the .cu), or
 * with --emit=ir the IR dump.  Then it compiles a program with an error and
 * prints its diagnostics, both as the structured list and formatted as the
 * command prints them.  Exit status: 0 when both behaved as expected. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tecc.h>

static const char rmsnorm_source[] =
    "# rmsnorm: y = x / sqrt(mean(x^2) + eps) * w\n"
    "x: bf16[N, D]\n"
    "w: bf16[D]\n"
    "y = x * rsqrt(mean(f32(x) * f32(x), -1) + 1e-6) * w\n";

/* A broadcasting error on line 3. */
static const char bad_source[] =
    "x: f32[N, D]\n"
    "t: f32[D, N]\n"
    "y = x + t\n";

static const char *severity_name(tecc_severity s) {
  return s == TECC_ERROR ? "error" : s == TECC_WARNING ? "warning" : "note";
}

/* Compiles the RMSNorm for rows of `width`; prints the header or the dump. */
static int compile_rmsnorm(tecc_emit emit, int64_t width) {
  tecc_define d = {"D", width};
  char name[64];
  tecc_options opts;
  tecc_result *r;
  int ok;

  snprintf(name, sizeof name, "rmsnorm_%lld", (long long)width);
  tecc_options_init(&opts);
  opts.emit = emit;
  opts.kernel_name = name; /* as --name=; the source has no file name */
  opts.defines = &d;       /* as -D D=WIDTH */
  opts.n_defines = 1;
  r = tecc_compile_string("rmsnorm.te", rmsnorm_source, strlen(rmsnorm_source), &opts);
  if (!r) {
    fprintf(stderr, "out of memory\n");
    return 0;
  }
  fputs(tecc_result_format_diagnostics(r, 0), stderr);
  ok = tecc_result_ok(r);
  if (ok && emit == TECC_EMIT_CU) {
    printf("/* ---- the header (the .cu has %zu bytes) ---- */\n",
           strlen(tecc_result_output(r)));
    fputs(tecc_result_header(r), stdout);
  } else if (ok) {
    fputs(tecc_result_output(r), stdout);
  }
  tecc_result_free(r);
  return ok;
}

/* Compiles a wrong program: it must fail, with a positioned error. */
static int compile_bad(void) {
  tecc_options opts;
  tecc_result *r;
  size_t i, n;
  int positioned = 0;

  tecc_options_init(&opts);
  opts.emit = TECC_EMIT_IR;
  r = tecc_compile_string("bad.te", bad_source, strlen(bad_source), &opts);
  if (!r) return 0;
  n = tecc_result_num_diagnostics(r);
  printf("/* ---- %zu diagnostic(s) for bad.te ---- */\n", n);
  for (i = 0; i < n; i++) {
    const tecc_diagnostic *d = tecc_result_diagnostic(r, i);
    printf("%s line %d column %d %s: %s\n", d->file, d->line, d->column,
           severity_name(d->severity), d->message);
    positioned |= d->severity == TECC_ERROR && d->line == 3;
  }
  fputs(tecc_result_format_diagnostics(r, 0), stdout);
  n = !tecc_result_ok(r) && tecc_result_output(r) == NULL && positioned;
  tecc_result_free(r);
  return (int)n;
}

int main(int argc, char **argv) {
  tecc_emit emit = TECC_EMIT_CU;
  int64_t width = 4096;
  int i;

  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--emit=ir") == 0)
      emit = TECC_EMIT_IR;
    else
      width = atoll(argv[i]);
  }
  if (!compile_rmsnorm(emit, width)) {
    fprintf(stderr, "libtecc_demo: the rmsnorm did not compile\n");
    return 1;
  }
  if (!compile_bad()) {
    fprintf(stderr, "libtecc_demo: the wrong program was not reported as expected\n");
    return 1;
  }
  return 0;
}
