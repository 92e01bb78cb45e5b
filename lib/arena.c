/* arena.c — bump allocation in chunks; everything freed at once. */
#include "arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

typedef struct Chunk {
  struct Chunk *next;
  size_t used, size;
  _Alignas(max_align_t) unsigned char data[];
} Chunk;

struct Arena {
  Chunk *head;
  size_t total; /* the bytes of its chunks */
};

enum { CHUNK_MIN = 64 * 1024, HUGE_PAGE = 2 * 1024 * 1024, CHUNK_MAX = 16 * 1024 * 1024 };

/* A chunk of at least `size` bytes of data.  From 2 MiB on, whole 2 MiB
 * pages, aligned, which Linux may back with huge pages (madvise): the
 * front end of a program of 10,000 statements (tests/perf_frontend.sh)
 * took 78 MB in 19,000 faults of 4 KiB pages, half its CPU time in the
 * kernel. */
static Chunk *chunk_new(Arena *a, size_t size) {
  size_t bytes = sizeof(Chunk) + size;
  void *p = NULL;
  if (bytes >= HUGE_PAGE) {
    bytes = (bytes + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
    if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
      p = NULL;
#ifdef MADV_HUGEPAGE
    if (p)
      madvise(p, bytes, MADV_HUGEPAGE); /* advice: nothing to do where it is refused */
#endif
  } else {
    p = malloc(bytes);
  }
  if (!p)
    internal_error("out of memory (%zu bytes)", size);
  Chunk *c = p;
  c->next = NULL;
  c->used = 0;
  c->size = bytes - sizeof(Chunk);
  a->total += bytes;
  return c;
}

/* The data bytes of the arena's next chunk: as many as it holds already
 * (so a large compilation takes few chunks), from CHUNK_MIN to CHUNK_MAX. */
static size_t next_chunk_size(const Arena *a) {
  size_t grow = a->total < CHUNK_MIN ? CHUNK_MIN : a->total > CHUNK_MAX ? CHUNK_MAX : a->total;
  return grow - sizeof(Chunk);
}

Arena *arena_new(void) {
  Arena *a = malloc(sizeof *a);
  if (!a)
    internal_error("out of memory");
  a->total = 0;
  a->head = chunk_new(a, CHUNK_MIN - sizeof(Chunk));
  return a;
}

void arena_free(Arena *a) {
  if (!a)
    return;
  for (Chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  free(a);
}

void *arena_alloc(Arena *a, size_t size) {
  const size_t align = _Alignof(max_align_t);
  size = (size + align - 1) & ~(align - 1);
  if (size == 0)
    size = align;
  Chunk *c = a->head;
  if (c->size - c->used < size) {
    /* A big request gets a chunk of its own behind the current one, so
     * the space left in the current chunk is not wasted. */
    const size_t grow = next_chunk_size(a);
    Chunk *fresh = chunk_new(a, size > grow ? size : grow);
    if (size > grow) {
      fresh->next = c->next;
      c->next = fresh;
      c = fresh;
    } else {
      fresh->next = c;
      a->head = c = fresh;
    }
  }
  void *p = c->data + c->used;
  c->used += size;
  memset(p, 0, size);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *arena_strdup(Arena *a, const char *s) {
  return arena_strndup(a, s, strlen(s));
}

char *arena_vprintf(Arena *a, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0)
    internal_error("bad format '%s'", fmt);
  char *p = arena_alloc(a, (size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  return p;
}

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = arena_vprintf(a, fmt, ap);
  va_end(ap);
  return p;
}

void buf_init(Buf *b, Arena *a) {
  b->arena = a;
  b->data = NULL;
  b->len = b->cap = 0;
}

static void buf_reserve(Buf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap)
    return;
  size_t cap = b->cap ? b->cap * 2 : 256;
  while (cap < b->len + extra + 1)
    cap *= 2;
  char *data = arena_alloc(b->arena, cap);
  if (b->len)
    memcpy(data, b->data, b->len);
  b->data = data;
  b->cap = cap;
}

void buf_putn(Buf *b, const char *s, size_t n) {
  buf_reserve(b, n);
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void buf_puts(Buf *b, const char *s) { buf_putn(b, s, strlen(s)); }

/* Formats into the room left and again only when the text did not fit:
 * the dumps and emitters print mostly short pieces into a large buffer. */
void buf_vprintf(Buf *b, const char *fmt, va_list ap) {
  size_t room = b->cap - b->len;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap2);
  va_end(ap2);
  if (n < 0)
    internal_error("bad format '%s'", fmt);
  if ((size_t)n >= room) {
    buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  }
  b->len += (size_t)n;
}

void buf_printf(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(b, fmt, ap);
  va_end(ap);
}

const char *buf_cstr(Buf *b) {
  if (!b->data)
    buf_reserve(b, 0);
  b->data[b->len] = '\0';
  return b->data;
}

void vec_push(Arena *a, PtrVec *v, void *item) {
  if (v->len == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    void **items = ARENA_ARRAY(a, void *, cap);
    if (v->len)
      memcpy(items, v->items, sizeof(void *) * (size_t)v->len);
    v->items = items;
    v->cap = cap;
  }
  v->items[v->len++] = item;
}

int vec_contains(const PtrVec *v, const void *item) {
  for (int i = 0; i < v->len; i++)
    if (v->items[i] == item)
      return 1;
  return 0;
}

void internal_error_at(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tecc: internal compiler error at %s:%d: ", file, line);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nplease report this bug with the input that caused it\n");
  va_end(ap);
  abort();
}
