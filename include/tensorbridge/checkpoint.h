/* Checkpoints: safetensors files read and written, run records (inputs, outputs and the facts of a run in
 * one safetensors file) and a model's initializers exported to and overridden from safetensors.
 *
 * The format (docs/checkpoints.md): 8 bytes little-endian N, N bytes of JSON header, then the data region.
 * The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to
 * the data region) and may hold "__metadata__": a map of strings to strings. Every field is checked on
 * open; a malformed file is TB_ERR_MODEL (TB_ERR_UNSUPPORTED for a valid dtype this library lacks, TB_ERR_IO
 * when the file cannot be read) with the tensor or field and the value in tb_last_error(). */
#ifndef TENSORBRIDGE_CHECKPOINT_H
#define TENSORBRIDGE_CHECKPOINT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend.h"
#include "dtype.h"
#include "export.h"
#include "model.h"
#include "policy.h"
#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- safetensors: reading ---------------------------------------------------------------------- */

/* Headers longer than this are refused (the Python package's own limit). */
#define TB_SAFETENSORS_MAX_HEADER ((uint64_t)100000000)

typedef struct tb_safetensors tb_safetensors;

/* One tensor entry of an open file. Strings and data are owned by the reader. */
typedef struct tb_safetensors_info {
  size_t size;          /* sizeof(tb_safetensors_info), set by the caller */
  const char *name;
  tb_dtype dtype;
  size_t ndim;
  int64_t shape[TB_MAX_DIMS];
  uint64_t data_offset; /* from the start of the file */
  uint64_t nbytes;      /* end - begin */
} tb_safetensors_info;

/* Map and check a file. Tensors are listed in the order of their data offsets. */
TB_API tb_status tb_safetensors_open(const char *path, tb_safetensors **out_st);
/* The same over bytes in memory, which are NOT copied and must outlive the reader. `label` names the
 * source in messages (NULL: "<memory>"). */
TB_API tb_status tb_safetensors_open_memory(const void *data, size_t size, const char *label,
                                            tb_safetensors **out_st);
TB_API void tb_safetensors_close(tb_safetensors *st);

TB_API size_t tb_safetensors_count(const tb_safetensors *st);
/* The i-th name, NULL when i is out of range. */
TB_API const char *tb_safetensors_name(const tb_safetensors *st, size_t i);
TB_API tb_status tb_safetensors_info_at(const tb_safetensors *st, size_t i, tb_safetensors_info *out);
/* TB_ERR_NOT_FOUND naming the tensor and the file when absent. */
TB_API tb_status tb_safetensors_find(const tb_safetensors *st, const char *name, tb_safetensors_info *out);
/* The packed little-endian bytes of a tensor inside the mapping (zero-copy; owned by the reader). */
TB_API tb_status tb_safetensors_data(const tb_safetensors *st, const char *name, const void **out_data,
                                     size_t *out_bytes);
/* A new contiguous tensor on `backend` holding a copy of the named tensor. */
TB_API tb_status tb_safetensors_read(const tb_safetensors *st, const char *name, tb_backend *backend,
                                     tb_tensor **out_tensor);

/* "__metadata__": the value of `key`, NULL when absent. Entries are sorted by key. */
TB_API const char *tb_safetensors_metadata(const tb_safetensors *st, const char *key);
TB_API size_t tb_safetensors_metadata_count(const tb_safetensors *st);
TB_API tb_status tb_safetensors_metadata_at(const tb_safetensors *st, size_t i, const char **out_key,
                                            const char **out_value);

/* ---- safetensors: writing ---------------------------------------------------------------------- */

/* Write n tensors (any backend, any strides; copied out packed) and n_meta metadata pairs (n_meta 0:
 * no "__metadata__"). The header is written as the Python package writes it: "__metadata__" first, then
 * the tensors ordered by dtype (largest first, as the Python package's Dtype enum sorts), then by name, compact
 * JSON, padded with spaces to a multiple of 8 bytes; the data follows
 * in the same order. Names must be unique and non-empty; metadata keys unique. The file is written to a
 * temporary name and renamed, so a failure leaves no partial file. */
TB_API tb_status tb_safetensors_write(const char *path, size_t n, const char *const *names,
                                      const tb_tensor *const *tensors, size_t n_meta,
                                      const char *const *meta_keys, const char *const *meta_values);

/* ---- Run records ------------------------------------------------------------------------------- */

#define TB_RECORD_VERSION "1"

/* How the recorded run was made. */
typedef struct tb_record_options {
  size_t size;            /* sizeof(tb_record_options) */
  const char *model_file; /* stored as given, for people; NULL: "" */
  tb_opt_level level;
  tb_precision precision;
  double rtol;            /* the tolerance a replay should compare with */
  double atol;
} tb_record_options;

/* Write a record: tensors "input/<name>" and "output/<name>", metadata tb_record_version, model_sha256,
 * model_file, device, device_name, backend, library_version, level ("O2"), precision ("fp32"), rtol,
 * atol, and "inputs" / "outputs": the names in the order given, as a JSON array. `backend` is the one
 * the run used. */
TB_API tb_status tb_record_write(const char *path, const tb_model *model, const tb_backend *backend,
                                 const tb_record_options *options, size_t n_inputs,
                                 const char *const *input_names, const tb_tensor *const *inputs,
                                 size_t n_outputs, const char *const *output_names,
                                 const tb_tensor *const *outputs);

typedef struct tb_record tb_record;

/* The facts of a record; strings owned by the record. */
typedef struct tb_record_info {
  size_t size; /* sizeof(tb_record_info), set by the caller */
  const char *version;
  const char *model_sha256;
  const char *model_file;
  const char *device;      /* "opencl:0" */
  const char *device_name;
  const char *backend;     /* "opencl" */
  const char *library_version;
  tb_opt_level level;
  tb_precision precision;
  double rtol;
  double atol;
} tb_record_info;

/* Open and check a record: a safetensors file with every metadata key above, a known version, and only
 * input/ and output/ tensors. Otherwise TB_ERR_MODEL saying what is wrong. */
TB_API tb_status tb_record_open(const char *path, tb_record **out_record);
TB_API void tb_record_close(tb_record *record);
TB_API tb_status tb_record_info_get(const tb_record *record, tb_record_info *out);
/* Any metadata value by key (NULL when absent). */
TB_API const char *tb_record_metadata(const tb_record *record, const char *key);
/* The graph input and output names, in the order they were recorded (without the "input/" prefix). */
TB_API size_t tb_record_input_count(const tb_record *record);
TB_API size_t tb_record_output_count(const tb_record *record);
TB_API const char *tb_record_input_name(const tb_record *record, size_t i);
TB_API const char *tb_record_output_name(const tb_record *record, size_t i);
/* New tensors on `backend` with the recorded values. */
TB_API tb_status tb_record_read_input(const tb_record *record, size_t i, tb_backend *backend, tb_tensor **out_tensor);
TB_API tb_status tb_record_read_output(const tb_record *record, size_t i, tb_backend *backend, tb_tensor **out_tensor);
/* TB_OK when the model's SHA-256 is the recorded one; else TB_ERR_INVALID_ARGUMENT with both hashes and
 * the recorded model file. */
TB_API tb_status tb_record_check_model(const tb_record *record, const tb_model *model);
/* The underlying reader (owned by the record). */
TB_API const tb_safetensors *tb_record_safetensors(const tb_record *record);

/* ---- Model initializers ------------------------------------------------------------------------ */

/* Every initializer of the model to a safetensors file, named as in the model, in its stored dtype
 * (metadata: model_sha256, format "tensorbridge-weights"). */
TB_API tb_status tb_model_export_weights(const tb_model *model, const char *path);

/* Replace initializers with the tensors of a safetensors file, before tb_model_prepare (prepared models
 * made earlier keep the weights they were prepared with). Each tensor must name an initializer of the main
 * graph and have its shape; a different dtype is converted when widening is lossless (fp8 -> f16/bf16/f32/
 * f64, f16/bf16 -> f32/f64, f32 -> f64, integers to wider integers) and refused otherwise unless
 * allow_narrowing (then converted as tb_convert does: floats round to nearest even, integers keep their
 * low bits); floats and integers never mix. An unknown name, a shape or dtype mismatch is
 * TB_ERR_INVALID_ARGUMENT naming the tensor, both shapes or dtypes, and the file; nothing is changed then.
 * The model owns the new data; tb_model_sha256 stays the file's. Not while another thread prepares or
 * reads the same model. out_replaced (may be NULL) receives the number of initializers replaced. */
TB_API tb_status tb_model_override_weights(tb_model *model, const char *path, bool allow_narrowing,
                                           size_t *out_replaced);

#ifdef __cplusplus
}
#endif
#endif
