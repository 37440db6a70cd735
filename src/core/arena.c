/* A chunked arena for strings and small arrays that live as long as their owner. */
#include "core/arena.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tb_arena_chunk {
  tb_arena_chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

enum { TB_ARENA_CHUNK = 8192 };

void *tb_arena_alloc(tb_arena *arena, size_t bytes) {
  size_t need = (bytes + 15u) & ~(size_t)15u;
  if (need < bytes) {
    arena->failed = true;
    return NULL;
  }
  tb_arena_chunk *c = arena->head;
  if (!c || c->cap - c->used < need) {
    size_t cap = need > TB_ARENA_CHUNK ? need : TB_ARENA_CHUNK;
    c = malloc(sizeof *c + cap);
    if (!c) {
      arena->failed = true;
      return NULL;
    }
    c->used = 0;
    c->cap = cap;
    c->next = arena->head;
    arena->head = c;
  }
  void *p = c->data + c->used;
  c->used += need;
  return p;
}

const char *tb_arena_strdup(tb_arena *arena, const char *s) {
  if (!s) s = "";
  size_t n = strlen(s) + 1;
  char *p = tb_arena_alloc(arena, n);
  if (!p) return "";
  memcpy(p, s, n);
  return p;
}

const char *tb_arena_vprintf(tb_arena *arena, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return "";
  char *p = tb_arena_alloc(arena, (size_t)n + 1);
  if (!p) return "";
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  return p;
}

const char *tb_arena_printf(tb_arena *arena, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *s = tb_arena_vprintf(arena, fmt, ap);
  va_end(ap);
  return s;
}

void tb_arena_free(tb_arena *arena) {
  tb_arena_chunk *c = arena->head;
  while (c) {
    tb_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  arena->head = NULL;
  arena->failed = false;
}
