/* Operators: what the library can run, read from its own tables (the operator definitions and each
 * backend's kernel table), for `tb ops` and for programs that check a model's operators before loading it.
 *
 *   tb_op_info_count / tb_op_info_get   every operator (domain, name), sorted by domain then name, with the
 *                                       opsets where its definitions start and its first input's dtypes
 *   tb_op_kernel_get                    the kernels that compute it: per backend, the lowest level that
 *                                       runs each, and the CPU features it needs
 *
 * The OpenCL and Vulkan kernels are listed as their backends declare them, without a device: on a device,
 * a kernel may still refuse a node's types or attributes at prepare, and the node then runs on the CPU
 * (tb_prepare_result lists it). Backends without model kernels (CUDA, ROCm, XPU, TPU) have no entries. */
#ifndef TENSORBRIDGE_OPS_H
#define TENSORBRIDGE_OPS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "device.h"
#include "dtype.h"
#include "export.h"
#include "policy.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TB_OP_MAX_OPSETS 16

typedef struct tb_op_info {
  size_t size;                 /* sizeof(tb_op_info), set by the caller */
  const char *domain;          /* "" for ONNX, "tb" for the fused operators O1's passes make */
  const char *name;            /* "Conv" */
  size_t opset_count;
  int opsets[TB_OP_MAX_OPSETS]; /* the opset versions where its definitions start, ascending ("since") */
  tb_dtype_set input_dtypes;   /* the first input's dtypes the newest definition accepts (its own inference
                                  decides, with the attributes' defaults); 0 when it has no input */
  size_t kernel_count;         /* for tb_op_kernel_get */
  bool fast_cpu_kernel;        /* a CPU kernel above the reference (O2 or O3) exists, usable here or not */
} tb_op_info;

typedef struct tb_op_kernel {
  size_t size;                 /* sizeof(tb_op_kernel), set by the caller */
  tb_backend_kind backend;     /* TB_BACKEND_CPU, TB_BACKEND_OPENCL or TB_BACKEND_VULKAN */
  tb_opt_level level;          /* the lowest level that runs it: O0 for references and device kernels, O2 for
                                  fast fp32 kernels, O3 for reduced precision (also O2 with bf16 asked for) */
  const char *kind;            /* "reference", "fast", "device", or the reduced precision ("bf16") */
  char cpu_features[96];       /* what a CPU kernel needs, "avx512f,fma"; "" when portable or a device kernel */
  bool usable;                 /* CPU kernels: this CPU has the features (after TB_CPU_FEATURES); device
                                  kernels: true (the device decides per node at prepare) */
} tb_op_kernel;

/* The number of operators (distinct domain and name). */
TB_API size_t tb_op_info_count(void);
/* Operator `index` (< tb_op_info_count()) into *info, whose size field the caller sets. Strings are static.
 * TB_ERR_INVALID_ARGUMENT for a NULL or too small info, or an index out of range. */
TB_API tb_status tb_op_info_get(size_t index, tb_op_info *info);
/* Kernel `kernel_index` (< info.kernel_count) of operator `op_index`: the CPU's first (by level), then
 * OpenCL's, then Vulkan's; one entry per backend for device kernels, one per level and feature set for
 * the CPU's. */
TB_API tb_status tb_op_kernel_get(size_t op_index, size_t kernel_index, tb_op_kernel *kernel);

#ifdef __cplusplus
}
#endif
#endif
