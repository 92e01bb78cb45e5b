/* ir.c — placeholder created by H3 so the tree builds; H2 owns and
 * replaces this file. */
#include "ir.h"

const char *ir_dump(Arena *a, const Module *m) {
  internal_error("ir_dump: not implemented");
}
