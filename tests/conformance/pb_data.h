/* The conformance runner's own reading of ONNX test data: a serialized TensorProto file (input_K.pb,
 * output_K.pb) into packed little-endian bytes, and the few facts about a model.onnx the report needs
 * (node op types, the kind of each graph input and output).
 *
 * This is deliberately independent of the library's ONNX reader: the references and inputs are decoded
 * by other code than the one under test, so a reader bug cannot hide itself by reading the model and its
 * expected outputs the same wrong way. Only what onnx.proto's TensorProto needs for the test data is
 * handled; anything else is an error with the field named. */
#ifndef TB_CONFORMANCE_PB_DATA_H
#define TB_CONFORMANCE_PB_DATA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/dtype.h>
#include <tensorbridge/tensor.h>

/* ONNX TensorProto.DataType numbers (onnx.proto). */
enum {
  PB_ONNX_FLOAT = 1, PB_ONNX_UINT8 = 2, PB_ONNX_INT8 = 3, PB_ONNX_UINT16 = 4, PB_ONNX_INT16 = 5,
  PB_ONNX_INT32 = 6, PB_ONNX_INT64 = 7, PB_ONNX_STRING = 8, PB_ONNX_BOOL = 9, PB_ONNX_FLOAT16 = 10,
  PB_ONNX_DOUBLE = 11, PB_ONNX_UINT32 = 12, PB_ONNX_UINT64 = 13, PB_ONNX_COMPLEX64 = 14,
  PB_ONNX_COMPLEX128 = 15, PB_ONNX_BFLOAT16 = 16, PB_ONNX_FLOAT8E4M3FN = 17, PB_ONNX_FLOAT8E4M3FNUZ = 18,
  PB_ONNX_FLOAT8E5M2 = 19, PB_ONNX_FLOAT8E5M2FNUZ = 20
};

typedef struct pb_tensor {
  char name[256];
  int onnx_type;     /* TensorProto.data_type */
  bool has_dtype;    /* false when onnx_type has no tb_dtype (strings, unsigned 16-64 bit, complex) */
  tb_dtype dtype;
  size_t ndim;
  int64_t dims[TB_MAX_DIMS];
  int64_t numel;
  void *data;        /* packed little-endian, numel * tb_dtype_size(dtype) bytes; malloc'd */
  size_t nbytes;
} pb_tensor;

/* The name of an ONNX data type ("FLOAT", "STRING", ...). */
const char *pb_onnx_type_name(int onnx_type);

/* Read a TensorProto file. Returns true, or false with a sentence in err. A tensor whose type has no
 * tb_dtype is returned with has_dtype false and no data (the caller skips the test with that reason),
 * except UINT16, whose 2-byte elements are kept: ONNX's tests store bfloat16 values as UINT16 bits, and
 * pb_tensor_as_bf16 reads them so when the model declares bf16. */
bool pb_tensor_read(const char *path, pb_tensor *out, char *err, size_t err_cap);
void pb_tensor_free(pb_tensor *t);
/* A UINT16 tensor read as the bf16 bits it holds; false for any other type. */
bool pb_tensor_as_bf16(pb_tensor *t);

/* What the report needs from a model.onnx. */
#define PB_MAX_IO 64
typedef enum pb_value_kind { PB_KIND_TENSOR = 0, PB_KIND_SEQUENCE, PB_KIND_MAP, PB_KIND_OPTIONAL, PB_KIND_SPARSE,
                             PB_KIND_OTHER } pb_value_kind;

typedef struct pb_model_info {
  size_t node_count;         /* nodes of the main graph */
  char first_op[128];        /* op_type of the first node, "" when there is none */
  char ops[512];             /* distinct op types, comma-separated (cut when long) */
  size_t input_count;        /* graph inputs that are not initializers */
  char input_names[PB_MAX_IO][128];
  pb_value_kind input_kinds[PB_MAX_IO];
  size_t output_count;
  pb_value_kind output_kinds[PB_MAX_IO];
} pb_model_info;

bool pb_model_info_read(const char *path, pb_model_info *out, char *err, size_t err_cap);
const char *pb_kind_name(pb_value_kind kind);

#endif
