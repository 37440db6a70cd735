/* The public loading half of the model API: tb_model_load (the file mapped read-only, or read when
 * smaller than a page), tb_model_load_memory, graph inputs/outputs, properties, the SHA-256, and the
 * model's reference count. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/error.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "model/model_impl.h"
#include "model/weights.h"

static const char *const prop_keys[TB_MODEL_PROP_COUNT] = {
    "producer", "producer_version", "ir_version", "opset", "nodes", "initializers", "weight_bytes", "graph_name"};

static tb_model *model_new(void) {
  tb_model *model = calloc(1, sizeof *model);
  if (!model) return NULL;
  model->ir = tb_ir_model_new();
  if (!model->ir) {
    free(model);
    return NULL;
  }
  atomic_init(&model->refs, 1);
  pthread_mutex_init(&model->sha_lock, NULL);
  return model;
}

static void model_free(tb_model *model) {
  tb_weights_unregister(model->ir);
  tb_ir_model_destroy(model->ir);
  tb_onnx_mappings_release(&model->external);
  tb_arena_free(&model->strings);
  pthread_mutex_destroy(&model->sha_lock);
  free(model->path);
  free(model);
}

tb_model *tb_model_retain(tb_model *model) {
  if (model) atomic_fetch_add(&model->refs, 1);
  return model;
}

void tb_model_destroy(tb_model *model) {
  if (!model) return;
  if (atomic_fetch_sub(&model->refs, 1) == 1) model_free(model);
}

static void cache_properties(tb_model *model) {
  const tb_ir_model *m = model->ir;
  const tb_graph *g = m->graph;
  size_t initializers = 0;
  uint64_t weight_bytes = 0;
  for (size_t i = 0; i < g->n_values; i++)
    if (g->values[i].is_initializer && g->values[i].constant) {
      initializers++;
      weight_bytes += g->values[i].constant->nbytes;
    }
  tb_arena *a = &model->strings;
  model->props[0] = m->producer_name ? m->producer_name : "";
  model->props[1] = m->producer_version ? m->producer_version : "";
  model->props[2] = tb_arena_printf(a, "%" PRId64, m->ir_version);
  model->props[3] = tb_arena_printf(a, "%" PRId64, tb_ir_model_opset(m, ""));
  model->props[4] = tb_arena_printf(a, "%zu", g->n_nodes);
  model->props[5] = tb_arena_printf(a, "%zu", initializers);
  model->props[6] = tb_arena_printf(a, "%" PRIu64, weight_bytes);
  model->props[7] = g->name ? g->name : "";
  if (!tb_onnx_read_metadata(m->file, m->file_size, a, &model->meta_keys, &model->meta_values, &model->n_meta))
    a->failed = true;
}

/* Parse model->ir->file; on failure the model is freed. */
static tb_status finish_load(tb_model *model, const char *label, const char *base_dir, tb_model **out_model) {
  tb_onnx_read_options options = {.label = label, .base_dir = base_dir, .external = &model->external};
  tb_status st = tb_onnx_read_model(model->ir, model->ir->file, model->ir->file_size, &options);
  if (st == TB_OK) {
    tb_weights_drop_owner(model->ir); /* the pages parsing mapped in: nothing needs them until prepare */
    cache_properties(model);
    if (model->strings.failed) st = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", label);
  }
  if (st != TB_OK) {
    model_free(model);
    return st;
  }
  *out_model = model;
  return TB_OK;
}

static char *folder_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  return strndup(path, (size_t)(slash - path));
}

tb_status tb_model_load(const char *path, tb_model **out_model) {
  if (out_model) *out_model = NULL;
  if (!path || !out_model) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_model_load: path and out_model are required");
  int fd;
  struct stat st;
  tb_status opened = tb_fs_open_regular(path, "model", &fd, &st);
  if (opened != TB_OK) return opened;
  size_t size = (size_t)st.st_size;
  if (size == 0) {
    close(fd);
    return tb_error(TB_ERR_MODEL, "%s: the file is empty", path);
  }
  tb_model *model = model_new();
  if (!model || !(model->path = strdup(path)) || !(model->ir->dir = folder_of(path))) {
    close(fd);
    if (model) model_free(model);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
  }
  long page = sysconf(_SC_PAGESIZE);
  if (page > 0 && size < (size_t)page) { /* a page would be mostly empty: read it */
    unsigned char *buf = malloc(size);
    size_t got = 0;
    while (buf && got < size) {
      ssize_t n = read(fd, buf + got, size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += (size_t)n;
    }
    close(fd);
    if (!buf || got != size) {
      free(buf);
      model_free(model);
      return tb_error(buf ? TB_ERR_IO : TB_ERR_OUT_OF_MEMORY, "%s: could not read its %zu bytes", path, size);
    }
    if (!tb_ir_model_own(model->ir, buf)) {
      model_free(model);
      return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
    }
    model->ir->file = buf;
  } else {
    void *addr = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (addr == MAP_FAILED) {
      model_free(model);
      return tb_error(TB_ERR_IO, "%s: cannot map its %zu bytes: %s", path, size, strerror(e));
    }
    /* Small pages: parsing touches a header before each tensor and, with huge pages, each touch would map
     * 2 MiB of the page cache into the process. The pages may be dropped: the file has them. */
    madvise(addr, size, MADV_NOHUGEPAGE);
    model->ir->mapping = addr;
    model->ir->file = addr;
    tb_weights_register(model->ir, addr, size);
  }
  model->ir->file_size = size;
  return finish_load(model, path, model->ir->dir, out_model);
}

tb_status tb_model_load_memory(const void *data, size_t size, const char *base_dir, tb_model **out_model) {
  if (out_model) *out_model = NULL;
  if (!out_model || (!data && size))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_model_load_memory: data and out_model are required");
  if (size == 0) return tb_error(TB_ERR_MODEL, "model in memory: the buffer is empty");
  tb_model *model = model_new();
  unsigned char *copy = model ? malloc(size) : NULL;
  if (!copy || !tb_ir_model_own(model->ir, copy) || (base_dir && !(model->ir->dir = strdup(base_dir)))) {
    if (model) model_free(model);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "model in memory: no host memory for a copy of its %zu bytes", size);
  }
  memcpy(copy, data, size);
  model->ir->file = copy;
  model->ir->file_size = size;
  return finish_load(model, "model in memory", base_dir, out_model);
}

/* ---- Inputs, outputs, properties -------------------------------------------------------------- */

size_t tb_model_input_count(const tb_model *model) { return model ? model->ir->graph->n_inputs : 0; }

size_t tb_model_output_count(const tb_model *model) { return model ? model->ir->graph->n_outputs : 0; }

static tb_status describe(const tb_model *model, const int *list, size_t count, size_t i, const char *what,
                          tb_model_io *out) {
  if (!model || !out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_model_%s: model and out are required", what);
  if (out->size < sizeof *out)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_model_%s: out->size is %zu, set it to sizeof(tb_model_io) = %zu", what,
                    out->size, sizeof *out);
  if (i >= count)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_model_%s: index %zu is out of range (the model has %zu)", what, i,
                    count);
  const tb_graph *g = model->ir->graph;
  const tb_value *v = &g->values[list[i]];
  size_t size = out->size;
  memset(out, 0, sizeof *out);
  out->size = size;
  out->name = v->name;
  out->dtype = v->type.has_dtype ? v->type.dtype : TB_DTYPE_COUNT; /* COUNT: the model does not say */
  out->has_shape = v->type.has_shape;
  out->ndim = v->type.has_shape ? v->type.ndim : 0;
  for (size_t d = 0; d < out->ndim; d++) {
    const tb_dim *dim = &v->type.dims[d];
    out->dims[d] = dim->value >= 0 ? dim->value : -1;
    out->dim_names[d] = "";
    if (dim->value < 0 && dim->symbol >= 0 && (size_t)dim->symbol < model->ir->n_symbols)
      out->dim_names[d] = model->ir->symbols[dim->symbol];
  }
  return TB_OK;
}

tb_status tb_model_input(const tb_model *model, size_t i, tb_model_io *out) {
  return describe(model, model ? model->ir->graph->inputs : NULL, tb_model_input_count(model), i, "input", out);
}

tb_status tb_model_output(const tb_model *model, size_t i, tb_model_io *out) {
  return describe(model, model ? model->ir->graph->outputs : NULL, tb_model_output_count(model), i, "output", out);
}

const char *tb_model_property(const tb_model *model, const char *key) {
  if (!model || !key) return NULL;
  for (size_t i = 0; i < TB_MODEL_PROP_COUNT; i++)
    if (!strcmp(prop_keys[i], key)) return model->props[i];
  if (!strncmp(key, "metadata.", 9))
    for (size_t i = 0; i < model->n_meta; i++)
      if (!strcmp(model->meta_keys[i], key + 9)) return model->meta_values[i];
  return NULL;
}

const char *tb_model_sha256(const tb_model *model) {
  if (!model) return NULL;
  tb_model *m = (tb_model *)model; /* the cache is filled once, under the lock */
  pthread_mutex_lock(&m->sha_lock);
  if (!m->sha256[0]) {
    tb_sha256_hex(m->ir->file, m->ir->file_size, m->sha256);
    tb_weights_drop_owner(m->ir); /* hashing read every page of the file: none needs to stay */
  }
  pthread_mutex_unlock(&m->sha_lock);
  return m->sha256;
}
