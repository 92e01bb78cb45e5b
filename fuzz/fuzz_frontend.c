/* fuzz_frontend.c — libFuzzer harness over the front end.
 *
 * Each input is compiled twice through the public API: with --emit=ast
 * (scanner, parser, AST dump) and with --emit=ir (sema, lowering and the
 * optimizer too), and the diagnostics are formatted both ways.  The
 * library must return errors, never crash, exit or leak (ASan, UBSan and
 * LeakSanitizer watch).  Build and run: fuzz/run.sh or `make fuzz`. */
#include <stddef.h>
#include <stdint.h>

#include "tecc.h"

static void compile(const uint8_t *data, size_t size, tecc_emit emit) {
  tecc_options opts;
  tecc_options_init(&opts);
  opts.emit = emit;
  tecc_result *r = tecc_compile_string("fuzz.te", (const char *)data, size, &opts);
  if (!r)
    return;
  (void)tecc_result_format_diagnostics(r, 0);
  (void)tecc_result_format_diagnostics(r, 1);
  for (size_t i = 0; i < tecc_result_num_diagnostics(r); i++)
    (void)tecc_result_diagnostic(r, i);
  (void)tecc_result_output(r);
  tecc_result_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  compile(data, size, TECC_EMIT_AST);
  compile(data, size, TECC_EMIT_IR);
  return 0;
}
