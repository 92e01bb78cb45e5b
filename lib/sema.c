/* sema.c — placeholder created by H3 so the tree builds; H2 owns and
 * replaces this file. */
#include "compile.h"

Module *sema_and_lower(Compilation *c, AstFile *main) {
  internal_error("sema_and_lower: not implemented");
}
