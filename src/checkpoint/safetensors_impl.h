/* Internal: the safetensors reader's state, the dtype names of the format, and the raw writer the public
 * writer, records and weight export share. */
#ifndef TB_CHECKPOINT_SAFETENSORS_IMPL_H
#define TB_CHECKPOINT_SAFETENSORS_IMPL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/checkpoint.h>

typedef struct tb_st_entry {
  char *name;
  tb_dtype dtype;
  size_t ndim;
  int64_t shape[TB_MAX_DIMS];
  uint64_t begin, end; /* relative to the data region */
} tb_st_entry;

struct tb_safetensors {
  char *label;                 /* the path, for messages */
  const unsigned char *bytes;  /* the whole file */
  size_t size;
  void *mapping;               /* munmap(mapping, size) on close when non-NULL */
  uint64_t data_start;         /* 8 + header length */
  tb_st_entry *entries;        /* sorted by offset */
  size_t n;
  size_t *by_name;             /* entry indices sorted by name */
  char **meta_keys, **meta_values; /* sorted by key */
  size_t n_meta;
};

/* "F32" etc. for a dtype; NULL out of range. */
const char *tb_st_dtype_name(tb_dtype dtype);
/* The dtype of a format name; false when the name is not one of ours. */
bool tb_st_dtype_parse(const char *name, tb_dtype *out);
/* The position the Python package sorts by (descending) before names. */
int tb_st_dtype_rank(tb_dtype dtype);

/* One tensor to write: host bytes, or a tensor copied out while writing. */
typedef struct tb_st_item {
  const char *name;
  tb_dtype dtype;
  size_t ndim;
  const int64_t *shape;
  const void *data;          /* packed bytes, or NULL to take them from `tensor` */
  const tb_tensor *tensor;
  size_t nbytes;
} tb_st_item;

tb_status tb_st_write_items(const char *path, size_t n, const tb_st_item *items, size_t n_meta,
                            const char *const *keys, const char *const *values);
/* Entry index by name, or -1. */
long tb_st_lookup(const tb_safetensors *st, const char *name);

#endif
