/* tecc.h — the tecc compiler as a library.
 *
 * Everything the `tecc` command does is available here: compile a source
 * string or a file with options, receive the outputs as strings and the
 * diagnostics as a list.  The library never prints and never exits.
 *
 * Ownership: a tecc_result owns every string it returns; they live until
 * tecc_result_free().  Options are only read during the call.
 */
#ifndef TECC_H
#define TECC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TECC_VERSION_STRING "0.1.0"

typedef enum tecc_emit {
  TECC_EMIT_CU = 0, /* .cu source and .h header */
  TECC_EMIT_HEADER, /* the .h alone */
  TECC_EMIT_AST,
  TECC_EMIT_IR, /* after optimization */
  TECC_EMIT_FUSED,
  TECC_EMIT_PLAN,
  TECC_EMIT_DOT,
  TECC_EMIT_JSON
} tecc_emit;

typedef struct tecc_define {
  const char *name;
  int64_t value;
} tecc_define;

typedef struct tecc_options {
  tecc_emit emit;
  int opt_level;               /* 0, 1 or 2 (default 2) */
  const char *kernel_name;     /* --name: the implicit kernel's name, or NULL */
  const char *const *include_dirs; /* -I, searched in order */
  size_t n_include_dirs;
  const tecc_define *defines;  /* -D NAME=VALUE */
  size_t n_defines;
  const char *arch;            /* "sm_90" when NULL */
  const char *header_name;     /* file name the .cu includes; "<base>.h" when NULL */
  int werror;                  /* -Werror */
  int no_warnings;             /* -w */
  int explain;                 /* --explain: fill the explanation text */
  const char *dump_after;      /* debugging: comma-separated pass names
                                  (parse, sema, lower, opt, fuse, schedule or
                                  "all") after which what the pass produced
                                  is dumped into tecc_result_dump(); NULL:
                                  none */
} tecc_options;

/* Fills *opts with the defaults (emit .cu+.h, -O2, sm_90). */
void tecc_options_init(tecc_options *opts);

typedef enum tecc_severity { TECC_NOTE, TECC_WARNING, TECC_ERROR } tecc_severity;

typedef struct tecc_diagnostic {
  tecc_severity severity;
  const char *file;    /* as named to the compiler; "<stdin>" for stdin */
  int line, column;    /* from 1; 0 when the diagnostic has no position */
  const char *message; /* without "error: " and without position */
} tecc_diagnostic;

typedef struct tecc_result tecc_result;

/* Compiles `len` bytes of `source`.  `filename` names it in diagnostics and
 * gives the implicit kernel's name and the directory imports are relative
 * to; "-" means standard input (kernel name "kernel").  Never returns NULL
 * unless out of memory. */
tecc_result *tecc_compile_string(const char *filename, const char *source,
                                 size_t len, const tecc_options *opts);
/* Reads and compiles a file.  An unreadable file is an error diagnostic
 * with no position, and tecc_result_io_error() is set. */
tecc_result *tecc_compile_file(const char *path, const tecc_options *opts);

int tecc_result_ok(const tecc_result *r);       /* 1 when no errors */
int tecc_result_io_error(const tecc_result *r); /* 1 when the input could not be read */

/* The main output: .cu text for TECC_EMIT_CU, else the dump asked for.
 * NULL when the compilation failed. */
const char *tecc_result_output(const tecc_result *r);
/* The .h text (TECC_EMIT_CU and TECC_EMIT_HEADER), else NULL. */
const char *tecc_result_header(const tecc_result *r);
/* The --explain text, or NULL. */
const char *tecc_result_explanation(const tecc_result *r);
/* The dumps asked for by opts.dump_after ("" when none). */
const char *tecc_result_dump(const tecc_result *r);

size_t tecc_result_num_diagnostics(const tecc_result *r);
const tecc_diagnostic *tecc_result_diagnostic(const tecc_result *r, size_t i);
/* All diagnostics formatted as doc/language.md §11 says (with source line and
 * caret unless `plain`); "" when there are none. */
const char *tecc_result_format_diagnostics(tecc_result *r, int plain);

/* Every file read: the main file first, then each imported file once. */
size_t tecc_result_num_files(const tecc_result *r);
const char *tecc_result_file(const tecc_result *r, size_t i);

void tecc_result_free(tecc_result *r);

#ifdef __cplusplus
}
#endif
#endif
