/* compile.c — the pipeline (placeholder; filled in by H3). */
#include "compile.h"
