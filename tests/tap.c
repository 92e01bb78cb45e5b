/* tap.c — the TAP producer of tap.h. */
#include "tap.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int planned = -1, run, failed;

void plan(int n) {
  planned = n;
  printf("1..%d\n", n);
  fflush(stdout);
}

_Noreturn void skip_all(const char *reason) {
  printf("1..0 # SKIP %s\n", reason);
  fflush(stdout);
  exit(0);
}

static void put_lines(const char *prefix, const char *text) {
  for (const char *line = text; *line;) {
    size_t n = strcspn(line, "\n");
    printf("%s%.*s\n", prefix, (int)n, line);
    line += n + (line[n] == '\n');
  }
}

static int vreport(int cond, const char *fmt, va_list ap) {
  run++;
  if (!cond)
    failed++;
  printf("%sok %d - ", cond ? "" : "not ", run);
  char name[1024];
  vsnprintf(name, sizeof name, fmt, ap);
  name[strcspn(name, "\n")] = '\0'; /* a newline would end the TAP line */
  printf("%s\n", name);
  fflush(stdout);
  return cond;
}

int ok(int cond, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(cond, fmt, ap);
  va_end(ap);
  return cond;
}

int is_int(int64_t got, int64_t want, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int cond = vreport(got == want, fmt, ap);
  va_end(ap);
  if (!cond)
    diag("got %" PRId64 ", want %" PRId64, got, want);
  return cond;
}

int is_string(const char *got, const char *want, const char *fmt, ...) {
  int same = got && want ? strcmp(got, want) == 0 : got == want;
  va_list ap;
  va_start(ap, fmt);
  vreport(same, fmt, ap);
  va_end(ap);
  if (!same) {
    diag("got:");
    put_lines("#   ", got ? got : "(null)");
    diag("want:");
    put_lines("#   ", want ? want : "(null)");
  }
  return same;
}

void skip(const char *reason) {
  run++;
  printf("ok %d # SKIP %s\n", run, reason);
  fflush(stdout);
}

void diag(const char *fmt, ...) {
  char text[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  put_lines("# ", text);
  fflush(stdout);
}

int exit_status(void) {
  if (planned >= 0 && run != planned)
    diag("planned %d tests, ran %d", planned, run);
  return failed || (planned >= 0 && run != planned);
}

int done_testing(void) {
  plan(run);
  return exit_status();
}
