/* Internal: the ONNX reader's entry points — a ModelProto into a tb_ir_model, and one serialized
 * TensorProto (the test_data_set_N/input_K.pb files) into a tb_ir_tensor.
 *
 * Every length, count, offset and index read is checked against the bytes there are; a malformed file is
 * TB_ERR_MODEL (TB_ERR_UNSUPPORTED for valid features we lack) with the field or node named in
 * tb_last_error(). Constants point into the given bytes when they can be used as they are (raw_data
 * aligned for its dtype, or 64 KiB and more even when unaligned: read such data with memcpy or copy it,
 * never through a typed pointer), so those bytes must outlive the model. */
#ifndef TB_MODEL_ONNX_READER_H
#define TB_MODEL_ONNX_READER_H
#include <stdbool.h>
#include <stddef.h>
#include <tensorbridge/status.h>
#include "ir/ir.h"

/* Files mapped for external data: one mapping per file, shared by the tensors in it. */
typedef struct tb_onnx_mapping {
  char *path;   /* the resolved real path */
  void *addr;   /* NULL for an empty file */
  size_t size;
} tb_onnx_mapping;

typedef struct tb_onnx_mappings {
  tb_onnx_mapping *items;
  size_t count, cap;
} tb_onnx_mappings;

/* Unmap and free every mapping; the list is left empty (safe to call twice). */
void tb_onnx_mappings_release(tb_onnx_mappings *maps);

typedef struct tb_onnx_read_options {
  const char *label;          /* the file's name for messages ("model.onnx"); NULL gives "model" */
  const char *base_dir;       /* folder external data is confined to; NULL refuses external data */
  tb_onnx_mappings *external; /* where external-data mappings are recorded (required when base_dir set) */
} tb_onnx_read_options;

/* Parse the ModelProto in data[0, size) into m: m->graph (with subgraphs), ir_version, producer,
 * opset imports, symbols. m must be new (no graph yet); m->file/m->mapping are the caller's business.
 * On failure m is left partly filled: destroy it. */
tb_status tb_onnx_read_model(tb_ir_model *m, const void *data, size_t size, const tb_onnx_read_options *options);

/* The model's metadata_props (key/value pairs) from an already loaded ModelProto in data[0, size):
 * strings copied into arena, *keys / *values arrays of *count entries (NULL when none). Malformed
 * entries are skipped. false on OOM. */
bool tb_onnx_read_metadata(const void *data, size_t size, tb_arena *arena, const char ***keys, const char ***values,
                           size_t *count);

/* Parse one serialized TensorProto in data[0, size) into a tensor owned by m (m may be a bare
 * tb_ir_model_new() with no graph). data must outlive m (raw_data may be used in place). External
 * data is refused. `label` names the source in messages. */
tb_status tb_onnx_read_tensor(tb_ir_model *m, const void *data, size_t size, const char *label,
                              tb_ir_tensor **out);

/* Read the file at path (a test_data_set .pb file) into a tensor owned by m; the file's bytes are
 * kept by m. TB_ERR_IO when it cannot be read; TB_ERR_MODEL when it is not a valid TensorProto. */
tb_status tb_onnx_read_tensor_file(tb_ir_model *m, const char *path, tb_ir_tensor **out);

#endif
