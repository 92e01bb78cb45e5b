/* diag.c — placeholder created by H3 so the tree builds; H1 owns and
 * replaces this file. */
#include "diag.h"

void diag_init(DiagList *d, Arena *a, int werror, int no_warnings) {
  internal_error("diag_init: not implemented");
}
Diag *diag_error(DiagList *d, SrcRange r, const char *fmt, ...) {
  internal_error("diag_error: not implemented");
}
Diag *diag_warning(DiagList *d, SrcRange r, const char *fmt, ...) {
  internal_error("diag_warning: not implemented");
}
void diag_note(DiagList *d, Diag *parent, SrcRange r, const char *fmt, ...) {
  internal_error("diag_note: not implemented");
}
int diag_has_errors(const DiagList *d) {
  internal_error("diag_has_errors: not implemented");
}
void source_line_col(const SourceFile *f, uint32_t off, int *line, int *col) {
  internal_error("source_line_col: not implemented");
}
const char *diag_format_all(const DiagList *d, int plain) {
  internal_error("diag_format_all: not implemented");
}
SrcRange range_join(SrcRange a, SrcRange b) {
  internal_error("range_join: not implemented");
}
