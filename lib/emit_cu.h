/* emit_cu.h — the generated .cu (emit_cu.c; abi.md §1): the runtime
 * pieces it uses, one CUDA kernel per group and variant, and the host
 * entry points.  The string lives in the compilation's arena. */
#ifndef TECC_EMIT_CU_H
#define TECC_EMIT_CU_H

#include "compile.h"
#include "groups.h"

/* It includes header_file_name(c) (emit_header.h). */
const char *emit_cu(Compilation *c, Module *m, FusionPlan *p);

/* The embedded runtime/tecc_runtime.cuh (runtime_embed.c, built). */
extern const char tecc_runtime_cuh[];

#endif
