/* emit_header.h — the generated C header (emit_header.c; abi.md §1, §2,
 * §4), and the entry points' C names that the .cu shares with it. */
#ifndef TECC_EMIT_HEADER_H
#define TECC_EMIT_HEADER_H

#include "compile.h"

const char *emit_header(Compilation *c, Module *m);

#endif
