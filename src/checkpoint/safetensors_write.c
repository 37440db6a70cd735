/* The safetensors writer: the header laid out byte for byte as the Python package writes it ("__metadata__"
 * first, tensors ordered by dtype as its Dtype enum sorts, largest first, then by name; compact JSON with
 * serde_json's escapes; spaces to a multiple of 8), then the data in the same order, written to a temporary
 * file that is renamed over the target. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "checkpoint/safetensors_impl.h"
#include "core/error.h"

typedef struct buf {
  char *data;
  size_t len, cap;
  bool failed;
} buf;

static void put(buf *b, const char *s, size_t n) {
  if (b->failed) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
      b->failed = true;
      return;
    }
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

/* A JSON string as serde_json writes it: \" \\ \b \f \n \r \t, other controls \u00XX, the rest as is. */
static void put_string(buf *b, const char *s) {
  put(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char esc[8];
    switch (*p) {
      case '"': puts_(b, "\\\""); break;
      case '\\': puts_(b, "\\\\"); break;
      case '\b': puts_(b, "\\b"); break;
      case '\f': puts_(b, "\\f"); break;
      case '\n': puts_(b, "\\n"); break;
      case '\r': puts_(b, "\\r"); break;
      case '\t': puts_(b, "\\t"); break;
      default:
        if (*p < 0x20) {
          snprintf(esc, sizeof esc, "\\u%04x", *p);
          puts_(b, esc);
        } else {
          put(b, (const char *)p, 1);
        }
    }
  }
  put(b, "\"", 1);
}

static bool utf8_ok(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    size_t len = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : (*p & 0xF8) == 0xF0 ? 4 : 0;
    if (!len) return false;
    for (size_t k = 1; k < len; k++)
      if ((p[k] & 0xC0) != 0x80) return false;
    p += len;
  }
  return true;
}

static int item_order(const tb_st_item *items, size_t a, size_t b) {
  const tb_st_item *x = &items[a], *y = &items[b];
  int rx = tb_st_dtype_rank(x->dtype), ry = tb_st_dtype_rank(y->dtype);
  if (rx != ry) return ry - rx; /* larger rank first */
  return strcmp(x->name, y->name);
}

static tb_status check_items(const char *path, size_t n, const tb_st_item *items, size_t n_meta,
                             const char *const *keys, const char *const *values) {
  for (size_t i = 0; i < n; i++) {
    const tb_st_item *it = &items[i];
    if (!it->name || !*it->name)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor %zu has no name (names must be non-empty)", path, i);
    if (!utf8_ok(it->name))
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor name '%.200s' is not valid UTF-8", path, it->name);
    if (strcmp(it->name, "__metadata__") == 0)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: a tensor may not be named \"__metadata__\"", path);
    if (!tb_st_dtype_name(it->dtype))
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor '%.200s' has dtype %d, out of range", path, it->name,
                      (int)it->dtype);
    if (!it->data && !it->tensor && it->nbytes)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor '%.200s' has no data", path, it->name);
    for (size_t j = 0; j < i; j++)
      if (strcmp(items[j].name, it->name) == 0)
        return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor name '%.200s' is given twice", path, it->name);
  }
  for (size_t i = 0; i < n_meta; i++) {
    if (!keys[i] || !values[i])
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: metadata entry %zu has a NULL key or value", path, i);
    if (!utf8_ok(keys[i]) || !utf8_ok(values[i]))
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: metadata key '%.200s' or its value is not valid UTF-8", path, keys[i]);
    for (size_t j = 0; j < i; j++)
      if (strcmp(keys[j], keys[i]) == 0)
        return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: metadata key '%.200s' is given twice", path, keys[i]);
  }
  return TB_OK;
}

static bool write_all(int fd, const void *data, size_t n) {
  const char *p = data;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

static tb_status write_data(const char *path, int fd, const tb_st_item *it) {
  if (!it->nbytes) return TB_OK;
  if (it->data) return write_all(fd, it->data, it->nbytes) ? TB_OK : tb_error(TB_ERR_IO, "%s: write failed: %s", path, strerror(errno));
  void *tmp = malloc(it->nbytes);
  if (!tmp) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: no host memory for the %zu bytes of tensor '%.200s'", path, it->nbytes, it->name);
  tb_status s = tb_tensor_copy_to_host(it->tensor, tmp, it->nbytes);
  if (s == TB_OK && !write_all(fd, tmp, it->nbytes)) s = tb_error(TB_ERR_IO, "%s: write failed: %s", path, strerror(errno));
  free(tmp);
  return s;
}

static atomic_uint tmp_counter;

tb_status tb_st_write_items(const char *path, size_t n, const tb_st_item *items, size_t n_meta,
                            const char *const *keys, const char *const *values) {
  tb_status s = check_items(path, n, items, n_meta, keys, values);
  if (s != TB_OK) return s;
  size_t *order = malloc((n ? n : 1) * sizeof *order);
  size_t *mkeys = malloc((n_meta ? n_meta : 1) * sizeof *mkeys);
  if (!order || !mkeys) {
    free(order);
    free(mkeys);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
  }
  for (size_t i = 0; i < n; i++) {
    size_t j = i;
    while (j > 0 && item_order(items, order[j - 1], i) > 0) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
  for (size_t i = 0; i < n_meta; i++) {
    size_t j = i;
    while (j > 0 && strcmp(keys[mkeys[j - 1]], keys[i]) > 0) {
      mkeys[j] = mkeys[j - 1];
      j--;
    }
    mkeys[j] = i;
  }
  buf h = {0};
  puts_(&h, "{");
  bool first = true;
  if (n_meta) {
    puts_(&h, "\"__metadata__\":{");
    for (size_t i = 0; i < n_meta; i++) {
      if (i) puts_(&h, ",");
      put_string(&h, keys[mkeys[i]]);
      puts_(&h, ":");
      put_string(&h, values[mkeys[i]]);
    }
    puts_(&h, "}");
    first = false;
  }
  uint64_t offset = 0;
  for (size_t k = 0; k < n; k++) {
    const tb_st_item *it = &items[order[k]];
    char num[64];
    if (!first) puts_(&h, ",");
    first = false;
    put_string(&h, it->name);
    puts_(&h, ":{\"dtype\":");
    put_string(&h, tb_st_dtype_name(it->dtype));
    puts_(&h, ",\"shape\":[");
    for (size_t d = 0; d < it->ndim; d++) {
      snprintf(num, sizeof num, "%s%lld", d ? "," : "", (long long)it->shape[d]);
      puts_(&h, num);
    }
    snprintf(num, sizeof num, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset,
             (unsigned long long)(offset + it->nbytes));
    puts_(&h, num);
    offset += it->nbytes;
  }
  puts_(&h, "}");
  while (!h.failed && h.len % 8) puts_(&h, " ");
  free(mkeys);
  if (h.failed) {
    free(order);
    free(h.data);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for the header", path);
  }
  size_t plen = strlen(path) + 64;
  char *tmp = malloc(plen);
  if (!tmp) {
    free(order);
    free(h.data);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
  }
  snprintf(tmp, plen, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&tmp_counter, 1u));
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    int e = errno;
    s = tb_error(e == EACCES ? TB_ERR_PERMISSION : e == ENOENT ? TB_ERR_NOT_FOUND : TB_ERR_IO,
                 "%s: cannot create the file: %s", path, strerror(e));
  } else {
    unsigned char len8[8];
    uint64_t hl = h.len;
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)(hl >> (8 * i));
    if (!write_all(fd, len8, 8) || !write_all(fd, h.data, h.len))
      s = tb_error(TB_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    for (size_t k = 0; k < n && s == TB_OK; k++) s = write_data(path, fd, &items[order[k]]);
    if (close(fd) != 0 && s == TB_OK) s = tb_error(TB_ERR_IO, "%s: write failed on close: %s", path, strerror(errno));
    if (s == TB_OK && rename(tmp, path) != 0) s = tb_error(TB_ERR_IO, "%s: cannot rename %s over it: %s", path, tmp, strerror(errno));
    if (s != TB_OK) unlink(tmp);
  }
  free(tmp);
  free(order);
  free(h.data);
  return s;
}

tb_status tb_safetensors_write(const char *path, size_t n, const char *const *names, const tb_tensor *const *tensors,
                               size_t n_meta, const char *const *meta_keys, const char *const *meta_values) {
  if (!path || (n && (!names || !tensors)) || (n_meta && (!meta_keys || !meta_values)))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_safetensors_write: path, names, tensors and the metadata arrays are required");
  tb_st_item *items = calloc(n ? n : 1, sizeof *items);
  if (!items) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
  for (size_t i = 0; i < n; i++) {
    if (!tensors[i]) {
      free(items);
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor %zu ('%.200s') is NULL", path, i, names[i] ? names[i] : "");
    }
    items[i] = (tb_st_item){.name = names[i],
                            .dtype = tb_tensor_dtype(tensors[i]),
                            .ndim = tb_tensor_ndim(tensors[i]),
                            .shape = tb_tensor_shape(tensors[i]),
                            .tensor = tensors[i],
                            .nbytes = tb_tensor_nbytes(tensors[i])};
  }
  tb_status s = tb_st_write_items(path, n, items, n_meta, meta_keys, meta_values);
  free(items);
  return s;
}
