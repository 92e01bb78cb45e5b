/* arena.h — one arena per compilation.
 *
 * Every AST node, IR value, string and diagnostic of a compilation is
 * allocated here and freed at once by arena_free().  Nothing is freed by
 * hand.  Allocation failure is fatal (internal_error). */
#ifndef TECC_ARENA_H
#define TECC_ARENA_H

#include <stdarg.h>
#include <stddef.h>

typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size); /* zeroed, aligned for any type */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *arena_vprintf(Arena *a, const char *fmt, va_list ap);

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

/* A growable string in the arena (emitters and dumps). */
typedef struct Buf {
  Arena *arena;
  char *data;
  size_t len, cap;
} Buf;

void buf_init(Buf *b, Arena *a);
void buf_puts(Buf *b, const char *s);
void buf_putn(Buf *b, const char *s, size_t n);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(Buf *b, const char *fmt, va_list ap);
const char *buf_cstr(Buf *b); /* NUL-terminated; valid while the arena lives */

/* A growable array of pointers in the arena. */
typedef struct PtrVec {
  void **items;
  int len, cap;
} PtrVec;

void vec_push(Arena *a, PtrVec *v, void *item);
int vec_contains(const PtrVec *v, const void *item);

/* Compiler bugs: print where and abort.  Never used for user errors. */
_Noreturn void internal_error_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define internal_error(...) internal_error_at(__FILE__, __LINE__, __VA_ARGS__)
#define unreachable() internal_error_at(__FILE__, __LINE__, "unreachable")

#endif
