/* tap.h — a small TAP producer for the C tests (run by tap-driver.sh).
 *
 *   plan(3);
 *   ok(x > 0, "x is positive");
 *   is_int(f(2), 4, "f doubles");
 *   is_string(name, "softmax", "kernel name");
 *   return exit_status();
 *
 * Failures print the values compared as TAP diagnostics ("# ..."). */
#ifndef TECC_TAP_H
#define TECC_TAP_H

#include <stdint.h>

/* Announces the number of tests. */
void plan(int n);
/* Prints "1..0 # SKIP reason" and exits 0: the whole file is skipped. */
_Noreturn void skip_all(const char *reason);
/* One test point; returns cond so callers can add detail on failure. */
int ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int is_int(int64_t got, int64_t want, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* NULL equals only NULL. */
int is_string(const char *got, const char *want, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A test point that is skipped, counted as passed. */
void skip(const char *reason);
/* A "# " comment line (each line of the message is prefixed). */
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 0 when every planned test ran and passed, else 1. */
int exit_status(void);
/* For a test that does not know its count in advance: prints the plan
 * ("1..N", N the tests run) after them, then returns exit_status(). */
int done_testing(void);

#endif
