/* backend.h — temporary: the back end's headers in one include, until the
 * emitters include what they use. */
#ifndef TECC_BACKEND_H
#define TECC_BACKEND_H

#include "emit_cu.h"
#include "emit_dumps.h"
#include "emit_header.h"
#include "fuse.h"

#endif
