/* Internal: cuDNN 9, NVIDIA's DNN library, as one dlopen symbol table. Optional: the CUDA backend runs
 * convolutions through it where it is installed (backend/cuda/cuda_dnn.c), its own kernels where not.
 * Only the graph ("backend") API is used: in cuDNN 9 the legacy convolution calls (cudnnConvolutionForward,
 * cudnnFindConvolutionForwardAlgorithm...) are marked deprecated, and the graph API is the one that fuses
 * a bias and an activation into the convolution. Its whole surface is eight calls over typed attributes,
 * declared here with the C ABI and the values of cudnn_graph.h (cuDNN 9.0 to 9.19 agree on every value
 * used), so no cuDNN header is needed to build.
 *
 * Search order (the first that loads wins; the library then stays loaded for the process, core/dl.c):
 *   1. TB_CUDNN_LIB, a path: when set, only it is tried, and a value that does not load is an error;
 *   2. libcudnn.so.9 through the loader path (ldconfig, LD_LIBRARY_PATH);
 *   3. the NVIDIA pip wheels (where PyTorch users have cuDNN): in each site-packages folder,
 *      nvidia/cudnn/lib/libcudnn.so.9 (nvidia-cudnn-cu12 and -cu13); the folders as
 *      runtime/nvidia_lib_search.h finds them.
 * libcudnn.so.9 loads its sub-libraries (libcudnn_graph, _engines_*, _cnn...) from its own folder. */
#ifndef TB_RUNTIME_CUDNN_API_H
#define TB_RUNTIME_CUDNN_API_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/status.h>
#include "runtime/nvidia_cuda_api.h"

typedef int tb_cudnn_status;
typedef struct tb_cudnn_context *tb_cudnn_handle;
typedef void *tb_cudnn_desc; /* cudnnBackendDescriptor_t */

enum {
  /* cudnnStatus_t: 0, else a category (1000s) plus a detail */
  TB_CUDNN_STATUS_SUCCESS = 0,
  TB_CUDNN_STATUS_BAD_PARAM = 2000,
  TB_CUDNN_STATUS_NOT_SUPPORTED = 3000,
  TB_CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED = 4003,
  TB_CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED = 4004,
  /* cudnnBackendDescriptorType_t */
  TB_CUDNN_POINTWISE_DESCRIPTOR = 0,
  TB_CUDNN_CONVOLUTION_DESCRIPTOR = 1,
  TB_CUDNN_ENGINE_DESCRIPTOR = 2,
  TB_CUDNN_ENGINECFG_DESCRIPTOR = 3,
  TB_CUDNN_ENGINEHEUR_DESCRIPTOR = 4,
  TB_CUDNN_EXECUTION_PLAN_DESCRIPTOR = 5,
  TB_CUDNN_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR = 10,
  TB_CUDNN_OPERATION_POINTWISE_DESCRIPTOR = 13,
  TB_CUDNN_OPERATIONGRAPH_DESCRIPTOR = 15,
  TB_CUDNN_VARIANT_PACK_DESCRIPTOR = 16,
  TB_CUDNN_TENSOR_DESCRIPTOR = 17,
  /* cudnnBackendAttributeType_t */
  TB_CUDNN_TYPE_HANDLE = 0,
  TB_CUDNN_TYPE_DATA_TYPE = 1,
  TB_CUDNN_TYPE_BOOLEAN = 2,
  TB_CUDNN_TYPE_INT64 = 3,
  TB_CUDNN_TYPE_FLOAT = 4,
  TB_CUDNN_TYPE_VOID_PTR = 6,
  TB_CUDNN_TYPE_CONVOLUTION_MODE = 7,
  TB_CUDNN_TYPE_HEUR_MODE = 8,
  TB_CUDNN_TYPE_NUMERICAL_NOTE = 11,
  TB_CUDNN_TYPE_POINTWISE_MODE = 14,
  TB_CUDNN_TYPE_BACKEND_DESCRIPTOR = 15,
  /* cudnnBackendAttributeName_t */
  TB_CUDNN_ATTR_POINTWISE_MODE = 0,
  TB_CUDNN_ATTR_POINTWISE_MATH_PREC = 1,
  TB_CUDNN_ATTR_CONVOLUTION_COMP_TYPE = 100,
  TB_CUDNN_ATTR_CONVOLUTION_CONV_MODE = 101,
  TB_CUDNN_ATTR_CONVOLUTION_DILATIONS = 102,
  TB_CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES = 103,
  TB_CUDNN_ATTR_CONVOLUTION_POST_PADDINGS = 104,
  TB_CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS = 105,
  TB_CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS = 106,
  TB_CUDNN_ATTR_ENGINEHEUR_MODE = 200,
  TB_CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201,
  TB_CUDNN_ATTR_ENGINEHEUR_RESULTS = 202,
  TB_CUDNN_ATTR_ENGINECFG_ENGINE = 300,
  TB_CUDNN_ATTR_EXECUTION_PLAN_HANDLE = 400,
  TB_CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401,
  TB_CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402,
  TB_CUDNN_ATTR_ENGINE_NUMERICAL_NOTE = 603,
  TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA = 700,
  TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA = 701,
  TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC = 702,
  TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W = 703,
  TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X = 704,
  TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y = 705,
  TB_CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR = 750,
  TB_CUDNN_ATTR_OPERATION_POINTWISE_XDESC = 751,
  TB_CUDNN_ATTR_OPERATION_POINTWISE_BDESC = 752,
  TB_CUDNN_ATTR_OPERATION_POINTWISE_YDESC = 753,
  TB_CUDNN_ATTR_OPERATIONGRAPH_HANDLE = 800,
  TB_CUDNN_ATTR_OPERATIONGRAPH_OPS = 801,
  TB_CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT = 900,
  TB_CUDNN_ATTR_TENSOR_DATA_TYPE = 901,
  TB_CUDNN_ATTR_TENSOR_DIMENSIONS = 902,
  TB_CUDNN_ATTR_TENSOR_STRIDES = 903,
  TB_CUDNN_ATTR_TENSOR_UNIQUE_ID = 906,
  TB_CUDNN_ATTR_TENSOR_IS_VIRTUAL = 907,
  TB_CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000,
  TB_CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS = 1001,
  TB_CUDNN_ATTR_VARIANT_PACK_WORKSPACE = 1003,
  /* values */
  TB_CUDNN_DATA_FLOAT = 0,
  TB_CUDNN_DATA_HALF = 2,
  TB_CUDNN_DATA_BFLOAT16 = 9,
  TB_CUDNN_DATA_FP8_E4M3 = 12,
  /* cudnnBackendNumericalNote_t: what an engine does to the numbers */
  TB_CUDNN_NUMERICAL_NOTE_TENSOR_CORE = 0,
  TB_CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS = 1,
  TB_CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION = 2,
  TB_CUDNN_NUMERICAL_NOTE_TYPE_COUNT_MAX = 16, /* room for every note an engine lists (cuDNN 9 has 10 kinds) */
  TB_CUDNN_CROSS_CORRELATION = 1,
  TB_CUDNN_POINTWISE_ADD = 0,
  TB_CUDNN_POINTWISE_MUL = 1,
  TB_CUDNN_POINTWISE_RELU_FWD = 100,
  TB_CUDNN_HEUR_MODE_FALLBACK = 2,
  TB_CUDNN_HEUR_MODE_A = 3,
};

/* Name, return type, parameters, optional. */
#define TB_CUDNN_SYMBOLS(X)                                                                                    \
  X(cudnnGetVersion, size_t, (void), false)                                                                    \
  X(cudnnGetErrorString, const char *, (tb_cudnn_status status), false)                                        \
  X(cudnnGetLastErrorString, void, (char *message, size_t max_size), true)                                     \
  X(cudnnCreate, tb_cudnn_status, (tb_cudnn_handle * handle), false)                                           \
  X(cudnnDestroy, tb_cudnn_status, (tb_cudnn_handle handle), false)                                            \
  X(cudnnSetStream, tb_cudnn_status, (tb_cudnn_handle handle, tb_cu_stream stream), false)                     \
  X(cudnnBackendCreateDescriptor, tb_cudnn_status, (int type, tb_cudnn_desc *desc), false)                     \
  X(cudnnBackendDestroyDescriptor, tb_cudnn_status, (tb_cudnn_desc desc), false)                               \
  X(cudnnBackendFinalize, tb_cudnn_status, (tb_cudnn_desc desc), false)                                        \
  X(cudnnBackendSetAttribute, tb_cudnn_status,                                                                 \
    (tb_cudnn_desc desc, int name, int type, int64_t count, const void *elements), false)                      \
  X(cudnnBackendGetAttribute, tb_cudnn_status,                                                                 \
    (tb_cudnn_desc const desc, int name, int type, int64_t requested, int64_t *count, void *elements), false)  \
  X(cudnnBackendExecute, tb_cudnn_status, (tb_cudnn_handle handle, tb_cudnn_desc plan, tb_cudnn_desc variant_pack), \
    false)

typedef struct tb_cudnn_api {
#define TB_CUDNN_MEMBER(name, ret, params, optional) ret(*name) params;
  TB_CUDNN_SYMBOLS(TB_CUDNN_MEMBER)
#undef TB_CUDNN_MEMBER
  char path[512]; /* the file loaded */
  size_t version; /* cudnnGetVersion: major*10000 + minor*100 + patch (91900 for 9.19.0) */
} tb_cudnn_api;

/* Open cuDNN (the search order above), resolve the table, and check that it is cuDNN 9. On failure
 * TB_ERR_UNAVAILABLE with a sentence naming what was tried and what to install or set; `who` ("cuda:0")
 * leads it. */
tb_status tb_cudnn_open(tb_cudnn_api *api, const char *who);

/* "CUDNN_STATUS_NOT_SUPPORTED_SHAPE", then cuDNN's last error message when it has one, as
 * "CUDNN_STATUS_X (the message)". */
void tb_cudnn_status_name(const tb_cudnn_api *api, tb_cudnn_status status, char *out, size_t cap);

/* Test hook: the names tried through the loader path (NULL-terminated; NULL: back to libcudnn.so.9). */
void tb_cudnn_test_loader_names(const char *const *names);

#endif
