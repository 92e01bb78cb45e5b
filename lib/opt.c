/* opt.c — placeholder created by H3 so the tree builds; H2 owns and
 * replaces this file. */
#include "compile.h"

void optimize_module(Compilation *c, Module *m) {
  internal_error("optimize_module: not implemented");
}
