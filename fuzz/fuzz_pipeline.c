/* fuzz_pipeline.c — libFuzzer harness over the whole pipeline.
 *
 * The front-end harness (fuzz_frontend.c) stops at the IR; this one goes
 * on: every input the front end accepts is compiled to .cu + .h at -O0,
 * -O1 and -O2, and its fused/plan/dot/json dumps are produced, with
 * --explain.  An accepted program must compile without an internal error
 * (internal_error() aborts, which libFuzzer reports as a crash), and the
 * library must never crash or leak (ASan, UBSan, LeakSanitizer).
 *
 * The first byte of an input, when it is '@', selects a -D binding: the
 * first size variable spelled "N" is bound to the value of the second byte
 * (so specialization on compile-time sizes, 0 included, is fuzzed too);
 * the rest is the program.  Build and run: fuzz/run-all.sh. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tecc.h"

/* Compiles once; returns 1 when the program was accepted. */
static int compile(const char *src, size_t size, tecc_emit emit, int level,
                   const tecc_define *def) {
  tecc_options opts;
  tecc_options_init(&opts);
  opts.emit = emit;
  opts.opt_level = level;
  opts.explain = emit == TECC_EMIT_PLAN;
  opts.no_warnings = emit != TECC_EMIT_IR;
  if (def) {
    opts.defines = def;
    opts.n_defines = 1;
  }
  tecc_result *r = tecc_compile_string("fuzz.te", src, size, &opts);
  if (!r)
    return 0;
  int ok = tecc_result_ok(r);
  (void)tecc_result_format_diagnostics(r, 1);
  const char *out = tecc_result_output(r);
  const char *hdr = tecc_result_header(r);
  /* touch every byte so that a bad string is seen by ASan here */
  volatile size_t n = (out ? strlen(out) : 0) + (hdr ? strlen(hdr) : 0);
  (void)n;
  (void)tecc_result_explanation(r);
  tecc_result_free(r);
  return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tecc_define def = {"N", 0};
  const tecc_define *dp = NULL;
  if (size >= 2 && data[0] == '@') {
    def.value = data[1];
    dp = &def;
    data += 2;
    size -= 2;
  }
  const char *src = (const char *)data;
  if (!compile(src, size, TECC_EMIT_IR, 2, dp))
    return 0;
  for (int level = 0; level <= 2; level++)
    compile(src, size, TECC_EMIT_CU, level, dp);
  compile(src, size, TECC_EMIT_FUSED, 2, dp);
  compile(src, size, TECC_EMIT_PLAN, 2, dp);
  compile(src, size, TECC_EMIT_DOT, 1, dp);
  compile(src, size, TECC_EMIT_JSON, 2, dp);
  return 0;
}
