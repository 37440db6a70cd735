/* Internal: a chunked string arena. Objects that hand out many strings (the device list, a selection)
 * own one arena and free it whole. Allocation failure returns NULL and sets `failed`. */
#ifndef TB_CORE_ARENA_H
#define TB_CORE_ARENA_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct tb_arena_chunk tb_arena_chunk;
typedef struct tb_arena {
  tb_arena_chunk *head;
  bool failed;
} tb_arena;

void *tb_arena_alloc(tb_arena *arena, size_t bytes);
/* A copy of s (NULL gives ""). On failure returns "" (static) and sets arena->failed. */
const char *tb_arena_strdup(tb_arena *arena, const char *s);
const char *tb_arena_printf(tb_arena *arena, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *tb_arena_vprintf(tb_arena *arena, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void tb_arena_free(tb_arena *arena);

#endif
