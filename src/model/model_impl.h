/* Internal: what a public tb_model is — the IR the reader built, plus what the loader keeps for it
 * (external-data mappings, cached property strings, the file's SHA-256). The engine's prepare/run code
 * includes this to reach model->ir; keep it small.
 *
 * Lifetime: a model is reference counted. tb_model_load gives the caller one reference; a prepared
 * model takes its own with tb_model_retain and drops it with tb_model_destroy, so the caller may destroy
 * the model first (model.h's promise). The last tb_model_destroy frees everything. */
#ifndef TB_MODEL_MODEL_IMPL_H
#define TB_MODEL_MODEL_IMPL_H
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <tensorbridge/model.h>
#include "core/arena.h"
#include "ir/ir.h"
#include "model/onnx/onnx_reader.h"

enum { TB_MODEL_PROP_COUNT = 8 };

struct tb_model {
  tb_ir_model *ir;            /* owns the graph, the constants and the mapped file */
  atomic_int refs;            /* tb_model_retain / tb_model_destroy */
  char *path;                 /* the file loaded; NULL when loaded from memory */
  tb_onnx_mappings external;  /* external-data files mapped for the constants (unmapped on destroy) */
  tb_arena strings;           /* cached property strings and io dim names */
  const char *props[TB_MODEL_PROP_COUNT]; /* values of tb_model_property, in model.c's key order */
  const char **meta_keys, **meta_values;  /* metadata_props ("metadata.KEY" properties) */
  size_t n_meta;
  pthread_mutex_t sha_lock;   /* tb_model_sha256 is computed once, on first use */
  char sha256[65];            /* "" until computed */
};

/* Take a reference (for a prepared model); returns model. Thread-safe. */
tb_model *tb_model_retain(tb_model *model);

#endif
