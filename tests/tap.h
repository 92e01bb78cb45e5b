/* tap.h — a small TAP producer for C tests (placeholder; filled in by H3). */
#ifndef TECC_TAP_H
#define TECC_TAP_H
#endif
