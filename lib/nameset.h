/* nameset.h — the identifiers in use in one generated kernel.
 *
 * fresh() gives the first of `want`, `want_`, `want__`, ... that is not
 * taken, and takes it.  Lookups hash, and each `want` remembers the last
 * name it got, so a kernel that asks for one name in many passes stays
 * linear.  All memory is the compilation's arena. */
#ifndef TECC_NAMESET_H
#define TECC_NAMESET_H

#include "arena.h"

typedef struct NameSet {
  Arena *a;
  PtrVec order;        /* const char*: taken names, in order */
  const char **names;  /* open addressing over `order` */
  int cap;
  const char **hint_want, **hint_got; /* want -> the last name it got */
  int hint_cap, hint_len;
} NameSet;

void nameset_init(NameSet *s, Arena *a);
int nameset_has(const NameSet *s, const char *name);
void nameset_add(NameSet *s, const char *name);
const char *nameset_fresh(NameSet *s, const char *want);
/* Forget every name taken after nameset_mark() returned `mark`. */
int nameset_mark(const NameSet *s);
void nameset_truncate(NameSet *s, int mark);

#endif
