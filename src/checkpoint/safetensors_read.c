/* The safetensors reader: map the file, check the 8-byte header length, parse the JSON header with cJSON
 * and check every entry (dtype, shape, offsets covering the data region exactly, names unique, metadata a
 * map of strings) before anything is handed out. docs/checkpoints.md lists the rules. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "checkpoint/safetensors_impl.h"
#include "core/error.h"
#include "core/regular_file.h"

static const struct {
  const char *name;
  tb_dtype dtype;
  int rank; /* the Python package's Dtype order */
} dtypes[] = {
    {"F64", TB_DTYPE_F64, 19},          {"F32", TB_DTYPE_F32, 17},     {"F16", TB_DTYPE_F16, 13},
    {"BF16", TB_DTYPE_BF16, 14},        {"F8_E4M3", TB_DTYPE_FP8_E4M3FN, 7}, {"F8_E5M2", TB_DTYPE_FP8_E5M2, 6},
    {"I64", TB_DTYPE_I64, 20},          {"I32", TB_DTYPE_I32, 15},     {"I16", TB_DTYPE_I16, 11},
    {"I8", TB_DTYPE_I8, 5},             {"U8", TB_DTYPE_U8, 4},        {"BOOL", TB_DTYPE_BOOL, 0},
};
#define DTYPE_COUNT (sizeof dtypes / sizeof dtypes[0])

/* Valid in the format, absent here. */
static const char *const foreign_dtypes[] = {"F4", "F6_E2M3", "F6_E3M2", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ",
                                             "U16", "U32", "U64", "C64"};

const char *tb_st_dtype_name(tb_dtype dtype) {
  for (size_t i = 0; i < DTYPE_COUNT; i++)
    if (dtypes[i].dtype == dtype) return dtypes[i].name;
  return NULL;
}

bool tb_st_dtype_parse(const char *name, tb_dtype *out) {
  for (size_t i = 0; i < DTYPE_COUNT; i++)
    if (strcmp(dtypes[i].name, name) == 0) {
      *out = dtypes[i].dtype;
      return true;
    }
  return false;
}

int tb_st_dtype_rank(tb_dtype dtype) {
  for (size_t i = 0; i < DTYPE_COUNT; i++)
    if (dtypes[i].dtype == dtype) return dtypes[i].rank;
  return -1;
}

/* ---- parsing ----------------------------------------------------------------------------------- */

#define MAX_EXACT ((double)9007199254740992.0) /* 2^53: the largest integer a cJSON number holds exactly */

static bool valid_utf8(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (!len || i + len > n || (len == 2 && c < 0xC2)) return false;
    uint32_t cp = len == 1 ? c : c & (0x7Fu >> len);
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3Fu);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return false;
    i += len;
  }
  return true;
}

/* A JSON number that is a whole number in [0, 2^53]. */
static bool whole(const cJSON *item, uint64_t *out) {
  if (!cJSON_IsNumber(item)) return false;
  double v = item->valuedouble;
  if (!(v >= 0) || v > MAX_EXACT || (double)(uint64_t)v != v) return false;
  *out = (uint64_t)v;
  return true;
}

static void shape_text(const tb_st_entry *e, char *buf, size_t cap) {
  size_t used = (size_t)snprintf(buf, cap, "[");
  for (size_t i = 0; i < e->ndim && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", i ? ", " : "", (long long)e->shape[i]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
}

static tb_status parse_entry(tb_safetensors *st, const cJSON *obj, tb_st_entry *e) {
  const char *f = st->label, *name = e->name;
  if (!cJSON_IsObject(obj)) return tb_error(TB_ERR_MODEL, "%s: tensor '%.200s' is not a JSON object in the header", f, name);
  const cJSON *dt = cJSON_GetObjectItemCaseSensitive(obj, "dtype");
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(obj, "shape");
  const cJSON *offs = cJSON_GetObjectItemCaseSensitive(obj, "data_offsets");
  if (!cJSON_IsString(dt)) return tb_error(TB_ERR_MODEL, "%s: tensor '%.200s' has no \"dtype\" string", f, name);
  if (!cJSON_IsArray(shape)) return tb_error(TB_ERR_MODEL, "%s: tensor '%.200s' has no \"shape\" array", f, name);
  if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2)
    return tb_error(TB_ERR_MODEL, "%s: tensor '%.200s' has no \"data_offsets\" array of two numbers", f, name);
  if (!tb_st_dtype_parse(dt->valuestring, &e->dtype)) {
    for (size_t i = 0; i < sizeof foreign_dtypes / sizeof foreign_dtypes[0]; i++)
      if (strcmp(dt->valuestring, foreign_dtypes[i]) == 0)
        return tb_error(TB_ERR_UNSUPPORTED,
                        "%s: tensor '%.200s' has dtype %s, which safetensors allows but TensorBridge does not support "
                        "(supported: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I64 I32 I16 I8 U8 BOOL)",
                        f, name, foreign_dtypes[i]);
    return tb_error(TB_ERR_UNSUPPORTED,
                    "%s: tensor '%.200s' has dtype '%.40s', which is not a safetensors dtype TensorBridge knows "
                    "(supported: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I64 I32 I16 I8 U8 BOOL)",
                    f, name, dt->valuestring);
  }
  int nd = cJSON_GetArraySize(shape);
  if (nd > TB_MAX_DIMS)
    return tb_error(TB_ERR_UNSUPPORTED, "%s: tensor '%.200s' has %d dimensions; TensorBridge handles at most %d", f,
                    name, nd, TB_MAX_DIMS);
  e->ndim = (size_t)nd;
  uint64_t numel = 1;
  bool overflow = false;
  const cJSON *d;
  size_t k = 0;
  cJSON_ArrayForEach(d, shape) {
    uint64_t v;
    if (!whole(d, &v))
      return tb_error(TB_ERR_MODEL, "%s: tensor '%.200s' shape entry %zu is %s; it must be a whole number in [0, 2^53]",
                      f, name, k, cJSON_IsNumber(d) ? (d->valuedouble < 0 ? "negative" : "not a whole number in range")
                                                    : "not a number");
    e->shape[k++] = (int64_t)v;
    if (!overflow && __builtin_mul_overflow(numel, v, &numel)) overflow = true;
  }
  uint64_t nbytes = 0;
  if (overflow || __builtin_mul_overflow(numel, (uint64_t)tb_dtype_size(e->dtype), &nbytes)) {
    char s[256];
    shape_text(e, s, sizeof s);
    return tb_error(TB_ERR_MODEL, "%s: tensor '%.200s' shape %s of %s overflows 64 bits when its bytes are counted", f,
                    name, s, dt->valuestring);
  }
  if (!whole(cJSON_GetArrayItem(offs, 0), &e->begin) || !whole(cJSON_GetArrayItem(offs, 1), &e->end))
    return tb_error(TB_ERR_MODEL, "%s: tensor '%.200s' data_offsets are not two whole numbers in [0, 2^53]", f, name);
  uint64_t data_size = st->size - st->data_start;
  if (e->end < e->begin)
    return tb_error(TB_ERR_MODEL, "%s: tensor '%.200s' data_offsets [%llu, %llu] end before they begin", f, name,
                    (unsigned long long)e->begin, (unsigned long long)e->end);
  if (e->end > data_size)
    return tb_error(TB_ERR_MODEL,
                    "%s: tensor '%.200s' data_offsets [%llu, %llu] go beyond the data region of %llu bytes (out of range)",
                    f, name, (unsigned long long)e->begin, (unsigned long long)e->end, (unsigned long long)data_size);
  if (e->end - e->begin != nbytes) {
    char s[256];
    shape_text(e, s, sizeof s);
    return tb_error(TB_ERR_MODEL, "%s: tensor '%.200s' data_offsets [%llu, %llu] hold %llu bytes but shape %s of %s needs %llu",
                    f, name, (unsigned long long)e->begin, (unsigned long long)e->end,
                    (unsigned long long)(e->end - e->begin), s, dt->valuestring, (unsigned long long)nbytes);
  }
  return TB_OK;
}

static tb_status parse_metadata(tb_safetensors *st, const cJSON *obj) {
  if (!cJSON_IsObject(obj))
    return tb_error(TB_ERR_MODEL, "%s: \"__metadata__\" is not a JSON object of strings", st->label);
  size_t n = (size_t)cJSON_GetArraySize(obj);
  st->meta_keys = calloc(n ? n : 1, sizeof(char *));
  st->meta_values = calloc(n ? n : 1, sizeof(char *));
  if (!st->meta_keys || !st->meta_values) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", st->label);
  const cJSON *item;
  cJSON_ArrayForEach(item, obj) {
    if (!cJSON_IsString(item))
      return tb_error(TB_ERR_MODEL, "%s: \"__metadata__\" key '%.200s' has a value that is not a string", st->label,
                      item->string);
    /* insertion sort by key: metadata is small */
    size_t at = st->n_meta;
    while (at > 0 && strcmp(st->meta_keys[at - 1], item->string) > 0) at--;
    if (at > 0 && strcmp(st->meta_keys[at - 1], item->string) == 0)
      return tb_error(TB_ERR_MODEL, "%s: \"__metadata__\" key '%.200s' appears twice", st->label, item->string);
    char *k = strdup(item->string), *v = strdup(item->valuestring);
    if (!k || !v) {
      free(k);
      free(v);
      return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", st->label);
    }
    memmove(st->meta_keys + at + 1, st->meta_keys + at, (st->n_meta - at) * sizeof(char *));
    memmove(st->meta_values + at + 1, st->meta_values + at, (st->n_meta - at) * sizeof(char *));
    st->meta_keys[at] = k;
    st->meta_values[at] = v;
    st->n_meta++;
  }
  return TB_OK;
}

static int by_offset(const void *a, const void *b) {
  const tb_st_entry *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Heap sort of entry indices by name: no global state (qsort has no context), n log n for hostile files. */
static void sift(const tb_st_entry *e, size_t *idx, size_t root, size_t n) {
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && strcmp(e[idx[child]].name, e[idx[child + 1]].name) < 0) child++;
    if (strcmp(e[idx[root]].name, e[idx[child]].name) >= 0) return;
    size_t t = idx[root];
    idx[root] = idx[child];
    idx[child] = t;
    root = child;
  }
}

static void sort_by_name(const tb_st_entry *e, size_t *idx, size_t n) {
  for (size_t i = n / 2; i-- > 0;) sift(e, idx, i, n);
  for (size_t end = n; end-- > 1;) {
    size_t t = idx[0];
    idx[0] = idx[end];
    idx[end] = t;
    sift(e, idx, 0, end);
  }
}

/* Sorted by offset, every tensor must begin where the previous one ended, from 0 to the end of the file. */
static tb_status check_layout(tb_safetensors *st) {
  const char *f = st->label;
  st->by_name = malloc((st->n ? st->n : 1) * sizeof *st->by_name);
  if (!st->by_name) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", f);
  for (size_t i = 0; i < st->n; i++) st->by_name[i] = i;
  sort_by_name(st->entries, st->by_name, st->n);
  /* cJSON keeps both members of an object with a repeated key: neighbours by name must differ. */
  for (size_t i = 1; i < st->n; i++)
    if (strcmp(st->entries[st->by_name[i - 1]].name, st->entries[st->by_name[i]].name) == 0)
      return tb_error(TB_ERR_MODEL, "%s: tensor '%.200s' appears twice in the header (duplicate name)", f,
                      st->entries[st->by_name[i]].name);
  uint64_t at = 0;
  for (size_t i = 0; i < st->n; i++) {
    const tb_st_entry *e = &st->entries[i];
    if (e->begin < at)
      return tb_error(TB_ERR_MODEL, "%s: tensor '%.200s' data_offsets [%llu, %llu] overlap tensor '%.200s' (ending at %llu)",
                      f, e->name, (unsigned long long)e->begin, (unsigned long long)e->end, st->entries[i - 1].name,
                      (unsigned long long)at);
    if (e->begin > at) {
      if (i == 0)
        return tb_error(TB_ERR_MODEL, "%s: the data region has a hole: the first tensor, '%.200s', begins at %llu, not 0",
                        f, e->name, (unsigned long long)e->begin);
      return tb_error(TB_ERR_MODEL, "%s: the data region has a hole of %llu bytes between tensor '%.200s' and tensor '%.200s'",
                      f, (unsigned long long)(e->begin - at), st->entries[i - 1].name, e->name);
    }
    at = e->end;
  }
  uint64_t data_size = st->size - st->data_start;
  if (at != data_size)
    return tb_error(TB_ERR_MODEL, "%s: the tensors cover %llu bytes of data but %llu follow the header (%llu bytes not covered)",
                    f, (unsigned long long)at, (unsigned long long)data_size, (unsigned long long)(data_size - at));
  return TB_OK;
}

/* A NUL in the header, raw or written as \u0000 inside a JSON string, would cut a tensor name or a metadata
 * text short once parsed into C strings: refused, naming the byte and the string's start. */
static tb_status refuse_nul(const tb_safetensors *st, const char *text, size_t n) {
  size_t string_at = 0;
  bool in_string = false;
  for (size_t i = 0; i < n; i++) {
    size_t nul_at = SIZE_MAX;
    if (text[i] == '\0') nul_at = i;
    else if (!in_string) {
      if (text[i] == '"') in_string = true, string_at = i + 1;
    } else if (text[i] == '"') {
      in_string = false;
    } else if (text[i] == '\\' && i + 1 < n) {
      if (text[i + 1] == 'u' && i + 5 < n && strncmp(text + i + 2, "0000", 4) == 0) nul_at = i;
      i++; /* the escaped character */
    }
    if (nul_at == SIZE_MAX) continue;
    char where[260] = "";
    if (in_string)
      snprintf(where, sizeof where, ", in the string that starts '%.*s'", (int)(nul_at - string_at > 200 ? 200 : nul_at - string_at),
               text + string_at);
    return tb_error(TB_ERR_MODEL,
                    "%s: the header has a NUL character (%s) at byte %zu%s; tensor names and metadata cannot contain NUL: "
                    "remove it from the file",
                    st->label, text[nul_at] == '\0' ? "a zero byte" : "\\u0000", nul_at, where);
  }
  return TB_OK;
}

static tb_status parse_header(tb_safetensors *st) {
  const char *f = st->label;
  if (st->size < 8)
    return tb_error(TB_ERR_MODEL, "%s: the file is %zu bytes, shorter than the 8-byte header length of a safetensors file",
                    f, st->size);
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = (n << 8) | st->bytes[i];
  if (n > TB_SAFETENSORS_MAX_HEADER)
    return tb_error(TB_ERR_MODEL, "%s: the header length is %llu bytes, beyond the limit of %llu", f,
                    (unsigned long long)n, (unsigned long long)TB_SAFETENSORS_MAX_HEADER);
  if (n > st->size - 8)
    return tb_error(TB_ERR_MODEL, "%s: the header length is %llu bytes but only %zu bytes follow it (truncated file?)", f,
                    (unsigned long long)n, st->size - 8);
  st->data_start = 8 + n;
  const char *text = (const char *)st->bytes + 8;
  if (!valid_utf8((const unsigned char *)text, (size_t)n))
    return tb_error(TB_ERR_MODEL, "%s: the %llu-byte header is not valid UTF-8", f, (unsigned long long)n);
  tb_status nul = refuse_nul(st, text, (size_t)n);
  if (nul != TB_OK) return nul;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, (size_t)n, &end, 0);
  if (!root) {
    size_t pos = end && end >= text ? (size_t)(end - text) : 0;
    return tb_error(TB_ERR_MODEL, "%s: the header is not valid JSON (error near byte %zu of %llu)", f, pos,
                    (unsigned long long)n);
  }
  for (const char *p = end; p < text + n; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
      cJSON_Delete(root);
      return tb_error(TB_ERR_MODEL, "%s: the header has bytes after its JSON object (at byte %zu of %llu)", f,
                      (size_t)(p - text), (unsigned long long)n);
    }
  tb_status status = TB_OK;
  if (!cJSON_IsObject(root)) status = tb_error(TB_ERR_MODEL, "%s: the header is JSON but not an object", f);
  size_t count = 0;
  const cJSON *item;
  bool seen_meta = false;
  if (status == TB_OK) cJSON_ArrayForEach(item, root) count += strcmp(item->string, "__metadata__") != 0;
  if (status == TB_OK && !(st->entries = calloc(count ? count : 1, sizeof *st->entries)))
    status = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for %zu tensor entries", f, count);
  if (status == TB_OK) {
    cJSON_ArrayForEach(item, root) {
      if (strcmp(item->string, "__metadata__") == 0) {
        if (seen_meta) status = tb_error(TB_ERR_MODEL, "%s: \"__metadata__\" appears twice in the header", f);
        else status = parse_metadata(st, item);
        seen_meta = true;
      } else {
        tb_st_entry *e = &st->entries[st->n++];
        if (!(e->name = strdup(item->string))) status = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", f);
        else status = parse_entry(st, item, e);
      }
      if (status != TB_OK) break;
    }
  }
  cJSON_Delete(root);
  if (status != TB_OK) return status;
  qsort(st->entries, st->n, sizeof *st->entries, by_offset);
  return check_layout(st);
}

/* ---- opening and closing ------------------------------------------------------------------------ */

static tb_status finish_open(tb_safetensors *st, tb_safetensors **out_st) {
  tb_status status = parse_header(st);
  if (status != TB_OK) {
    tb_safetensors_close(st);
    return status;
  }
  *out_st = st;
  return TB_OK;
}

tb_status tb_safetensors_open_memory(const void *data, size_t size, const char *label, tb_safetensors **out_st) {
  if (out_st) *out_st = NULL;
  if (!out_st || (!data && size))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_safetensors_open_memory: data and out_st are required");
  tb_safetensors *st = calloc(1, sizeof *st);
  if (!st || !(st->label = strdup(label ? label : "<memory>"))) {
    free(st);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_safetensors_open_memory: out of host memory");
  }
  st->bytes = data;
  st->size = size;
  return finish_open(st, out_st);
}

tb_status tb_safetensors_open(const char *path, tb_safetensors **out_st) {
  if (out_st) *out_st = NULL;
  if (!path || !out_st) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_safetensors_open: path and out_st are required");
  int fd;
  struct stat sb;
  tb_status opened = tb_fs_open_regular(path, "safetensors file", &fd, &sb);
  if (opened != TB_OK) return opened;
  tb_safetensors *st = calloc(1, sizeof *st);
  if (!st || !(st->label = strdup(path))) {
    free(st);
    close(fd);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
  }
  st->size = (size_t)sb.st_size;
  if (st->size > 0) {
    void *addr = mmap(NULL, st->size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    if (addr == MAP_FAILED) {
      close(fd);
      tb_safetensors_close(st);
      return tb_error(TB_ERR_IO, "%s: cannot map its %lld bytes: %s", path, (long long)sb.st_size, strerror(e));
    }
    st->mapping = addr;
    st->bytes = addr;
  } else {
    st->bytes = (const unsigned char *)"";
  }
  close(fd);
  return finish_open(st, out_st);
}

void tb_safetensors_close(tb_safetensors *st) {
  if (!st) return;
  if (st->mapping) munmap(st->mapping, st->size);
  for (size_t i = 0; i < st->n; i++) free(st->entries[i].name);
  for (size_t i = 0; i < st->n_meta; i++) {
    free(st->meta_keys[i]);
    free(st->meta_values[i]);
  }
  free(st->entries);
  free(st->by_name);
  free(st->meta_keys);
  free(st->meta_values);
  free(st->label);
  free(st);
}
