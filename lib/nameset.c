/* nameset.c — hashed identifier sets for the emitters. */
#include "nameset.h"

#include <stdint.h>
#include <string.h>

static uint32_t hash_name(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* The slot holding `key`, or the empty slot where it would go. */
static int slot_of(const char **table, int cap, const char *key) {
  int i = (int)(hash_name(key) & (uint32_t)(cap - 1));
  while (table[i] && strcmp(table[i], key) != 0)
    i = (i + 1) & (cap - 1);
  return i;
}

static void rehash_names(NameSet *s, int cap) {
  s->cap = cap;
  s->names = ARENA_ARRAY(s->a, const char *, cap);
  for (int i = 0; i < s->order.len; i++) {
    const char *n = s->order.items[i];
    s->names[slot_of(s->names, cap, n)] = n;
  }
}

static void grow_hints(NameSet *s) {
  int old_cap = s->hint_cap;
  const char **want = s->hint_want, **got = s->hint_got;
  s->hint_cap = old_cap ? old_cap * 2 : 64;
  s->hint_want = ARENA_ARRAY(s->a, const char *, s->hint_cap);
  s->hint_got = ARENA_ARRAY(s->a, const char *, s->hint_cap);
  for (int i = 0; i < old_cap; i++) {
    if (!want[i])
      continue;
    int j = slot_of(s->hint_want, s->hint_cap, want[i]);
    s->hint_want[j] = want[i];
    s->hint_got[j] = got[i];
  }
}

void nameset_init(NameSet *s, Arena *a) {
  memset(s, 0, sizeof *s);
  s->a = a;
  rehash_names(s, 64);
  grow_hints(s);
}

int nameset_has(const NameSet *s, const char *name) {
  return s->names[slot_of(s->names, s->cap, name)] != NULL;
}

void nameset_add(NameSet *s, const char *name) {
  if (nameset_has(s, name))
    return;
  vec_push(s->a, &s->order, (void *)name);
  if (2 * s->order.len > s->cap)
    rehash_names(s, s->cap * 2);
  else
    s->names[slot_of(s->names, s->cap, name)] = name;
}

const char *nameset_fresh(NameSet *s, const char *want) {
  int h = slot_of(s->hint_want, s->hint_cap, want);
  /* Names are only added between truncations, so every candidate up to
   * the last one `want` got is still taken: start after it. */
  const char *name = s->hint_want[h] ? s->hint_got[h] : want;
  while (nameset_has(s, name))
    name = arena_printf(s->a, "%s_", name);
  nameset_add(s, name);
  if (!s->hint_want[h]) {
    s->hint_want[h] = want;
    if (2 * ++s->hint_len > s->hint_cap) {
      s->hint_got[h] = name;
      grow_hints(s);
      return name;
    }
  }
  s->hint_got[h] = name;
  return name;
}

int nameset_mark(const NameSet *s) { return s->order.len; }

void nameset_truncate(NameSet *s, int mark) {
  s->order.len = mark;
  rehash_names(s, s->cap);
  /* A hint may name a forgotten name now: drop them all. */
  s->hint_want = s->hint_got = NULL;
  s->hint_cap = s->hint_len = 0;
  grow_hints(s);
}
