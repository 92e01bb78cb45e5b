/* diag.h — source files and diagnostics (doc/language.md §11).
 *
 * Positions are byte ranges into a SourceFile; line and column are computed
 * only when a diagnostic is formatted.  Diagnostics are collected in a
 * DiagList owned by the compilation's arena; the library never prints. */
#ifndef TECC_DIAG_H
#define TECC_DIAG_H

#include <stdarg.h>
#include <stdint.h>
#include "arena.h"
#include "tecc.h"

typedef struct SourceFile {
  const char *name; /* as given: "model.te", "lib/act.te", "<stdin>" */
  const char *path; /* path used to open it (for -MD) */
  const char *text; /* NUL-terminated copy */
  uint32_t len;
  int id;           /* index in the compilation's file list */
} SourceFile;

/* A half-open byte range [begin, end) of one file.  file == NULL: none. */
typedef struct SrcRange {
  const SourceFile *file;
  uint32_t begin, end;
} SrcRange;

typedef struct Diag {
  tecc_severity severity;
  SrcRange range;
  const char *message;
  struct Diag *next_note; /* notes attached to this diagnostic */
} Diag;

enum { DIAG_ERROR_LIMIT = 20 };

typedef struct DiagList {
  Arena *arena;
  PtrVec items;     /* Diag*, errors and warnings, in report order */
  int n_errors;
  int werror, no_warnings;
  int limit_hit;    /* "too many errors" was added; further errors dropped */
} DiagList;

void diag_init(DiagList *d, Arena *a, int werror, int no_warnings);
/* Reports an error/warning; returns it so notes can be attached, or NULL
 * when it was dropped (hidden warning, past the error limit). */
Diag *diag_error(DiagList *d, SrcRange r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
Diag *diag_warning(DiagList *d, SrcRange r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds a note to `parent` (no-op when parent is NULL). */
void diag_note(DiagList *d, Diag *parent, SrcRange r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int diag_has_errors(const DiagList *d);

/* 1-based line and column of a byte offset; tabs advance to the next
 * multiple of 8 for the column. */
void source_line_col(const SourceFile *f, uint32_t off, int *line, int *col);

/* The same for many offsets: counts lines from the previous query, so
 * offsets in (roughly) increasing order cost time linear in the file. */
typedef struct LineCursor {
  const SourceFile *file;
  uint32_t off;
  int line;
} LineCursor;
void line_cursor_init(LineCursor *c, const SourceFile *f);
void line_cursor_get(LineCursor *c, const SourceFile *f, uint32_t off, int *line, int *col);

/* doc/language.md §11 text of every diagnostic and its notes. */
const char *diag_format_all(const DiagList *d, int plain);

SrcRange range_join(SrcRange a, SrcRange b);

#endif
