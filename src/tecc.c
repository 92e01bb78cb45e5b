/* tecc.c — the command (placeholder; filled in by H3). */
#include <stdio.h>
#include "tecc.h"

int main(void) {
  fputs("tecc: not implemented yet\n", stderr);
  return 2;
}
