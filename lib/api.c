/* api.c — lib/tecc.h (placeholder; filled in by H3). */
#include "tecc.h"
