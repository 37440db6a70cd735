/* Device memory for the fake runtimes (fake_cuda, fake_hip, fake_ze): host memory behind "device pointers"
 * that are not host addresses. A device pointer is the host address with FAKE_DEVICE_TAG in its top bits,
 * a non-canonical address on x86-64 and AArch64, so a library that dereferences one crashes at once (and
 * ASan names the place) instead of silently working. Each heap has a capacity to run out of (per owner,
 * the device an allocation was made on) and counts what is live. Header-only: each fake has its own heap. */
#ifndef FAKE_DEVMEM_H
#define FAKE_DEVMEM_H
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_DEVICE_TAG 0xd1ce000000000000ull
#define FAKE_DEVICE_ALIGN 4096u

typedef struct fake_block {
  uint64_t dev;          /* the device pointer handed out */
  unsigned char *host;   /* where the bytes live */
  size_t size;
  int owner;             /* the device it was allocated on */
  int managed;           /* managed (unified) memory: cuMemAllocManaged / hipMallocManaged */
  struct fake_block *next;
} fake_block;

typedef struct fake_heap {
  pthread_mutex_t lock;
  fake_block *blocks;
  int live;
  unsigned long long allocs, frees;
} fake_heap;

#define FAKE_HEAP_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0}

enum { FAKE_ALLOC_OK = 0, FAKE_ALLOC_FULL = 1, FAKE_ALLOC_HOST_FAILED = 2 };

/* Capacity in bytes from an environment variable (decimal, optional K/M/G suffix), else `fallback`. */
static inline uint64_t fake_capacity(const char *env, uint64_t fallback) {
  const char *v = getenv(env);
  if (!v || !*v) return fallback;
  char *end = NULL;
  unsigned long long n = strtoull(v, &end, 10);
  if (end && (*end == 'K' || *end == 'k')) n <<= 10;
  if (end && (*end == 'M' || *end == 'm')) n <<= 20;
  if (end && (*end == 'G' || *end == 'g')) n <<= 30;
  return n;
}

static inline int fake_is_device_pointer(uint64_t p) { return (p & 0xffff000000000000ull) == FAKE_DEVICE_TAG; }

/* Bytes allocated on `owner` (-1: on every device). */
static inline uint64_t fake_used(fake_heap *h, int owner) {
  uint64_t used = 0;
  pthread_mutex_lock(&h->lock);
  for (fake_block *b = h->blocks; b; b = b->next)
    if (owner < 0 || b->owner == owner) used += b->size;
  pthread_mutex_unlock(&h->lock);
  return used;
}

/* Allocations live on `owner` (-1: on every device). */
static inline int fake_live(fake_heap *h, int owner) {
  int n = 0;
  pthread_mutex_lock(&h->lock);
  for (fake_block *b = h->blocks; b; b = b->next)
    if (owner < 0 || b->owner == owner) n++;
  pthread_mutex_unlock(&h->lock);
  return n;
}

static inline int fake_alloc(fake_heap *h, size_t size, uint64_t capacity, int owner, uint64_t *dev) {
  uint64_t used = fake_used(h, owner);
  if (size > capacity || used > capacity - size) return FAKE_ALLOC_FULL;
  fake_block *b = calloc(1, sizeof *b);
  size_t rounded = (size + FAKE_DEVICE_ALIGN - 1) / FAKE_DEVICE_ALIGN * FAKE_DEVICE_ALIGN;
  void *host = rounded >= size ? aligned_alloc(FAKE_DEVICE_ALIGN, rounded) : NULL;
  if (!b || !host) {
    free(host);
    free(b);
    return FAKE_ALLOC_HOST_FAILED;
  }
  memset(host, 0xa5, size); /* device memory starts as garbage, not zeros */
  b->host = host;
  b->size = size;
  b->owner = owner;
  b->dev = (uint64_t)(uintptr_t)host | FAKE_DEVICE_TAG;
  pthread_mutex_lock(&h->lock);
  b->next = h->blocks;
  h->blocks = b;
  h->live++;
  h->allocs++;
  pthread_mutex_unlock(&h->lock);
  *dev = b->dev;
  return FAKE_ALLOC_OK;
}

/* 0, or -1 when `dev` is not the start of a live allocation. */
static inline int fake_release(fake_heap *h, uint64_t dev) {
  pthread_mutex_lock(&h->lock);
  for (fake_block **p = &h->blocks; *p; p = &(*p)->next) {
    fake_block *b = *p;
    if (b->dev != dev) continue;
    *p = b->next;
    h->live--;
    h->frees++;
    pthread_mutex_unlock(&h->lock);
    free(b->host);
    free(b);
    return 0;
  }
  pthread_mutex_unlock(&h->lock);
  return -1;
}

/* The host bytes behind [dev, dev + bytes), or NULL when that range is not inside one live allocation. */
static inline unsigned char *fake_resolve(fake_heap *h, uint64_t dev, size_t bytes) {
  unsigned char *host = NULL;
  pthread_mutex_lock(&h->lock);
  for (fake_block *b = h->blocks; b; b = b->next)
    if (dev >= b->dev && dev - b->dev <= b->size && bytes <= b->size - (dev - b->dev)) {
      host = b->host + (dev - b->dev);
      break;
    }
  pthread_mutex_unlock(&h->lock);
  return host;
}

/* The owner of the allocation holding `dev`, or -1. */
static inline int fake_owner(fake_heap *h, uint64_t dev) {
  int owner = -1;
  pthread_mutex_lock(&h->lock);
  for (fake_block *b = h->blocks; b; b = b->next)
    if (dev >= b->dev && dev - b->dev < b->size) owner = b->owner;
  pthread_mutex_unlock(&h->lock);
  return owner;
}

/* The allocation holding `dev`: 0 and its start, size, owner and managed flag, or -1 when there is none. */
static inline int fake_find(fake_heap *h, uint64_t dev, uint64_t *start, size_t *size, int *owner, int *managed) {
  int found = -1;
  pthread_mutex_lock(&h->lock);
  for (fake_block *b = h->blocks; b; b = b->next)
    if (dev >= b->dev && dev - b->dev < b->size) {
      *start = b->dev;
      *size = b->size;
      *owner = b->owner;
      *managed = b->managed;
      found = 0;
      break;
    }
  pthread_mutex_unlock(&h->lock);
  return found;
}

/* Mark the allocation starting at `dev` as managed memory. */
static inline void fake_set_managed(fake_heap *h, uint64_t dev) {
  pthread_mutex_lock(&h->lock);
  for (fake_block *b = h->blocks; b; b = b->next)
    if (b->dev == dev) b->managed = 1;
  pthread_mutex_unlock(&h->lock);
}

/* Fill `count` elements of `width` bytes with the value's low bytes (little-endian). */
static inline void fake_fill(unsigned char *dst, const void *pattern, size_t width, size_t count) {
  for (size_t i = 0; i < count; i++) memcpy(dst + i * width, pattern, width);
}

#endif
