/* tap.c — a small TAP producer for C tests (placeholder; filled in by H3). */
#include "tap.h"
