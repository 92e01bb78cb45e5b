/* lower.c — placeholder created by H3 so the tree builds; H2 owns and
 * replaces this file. */
#include "compile.h"
