/* Internal: compiling CUDA C with NVRTC for one GPU architecture, with no device needed (the module cache,
 * cuda_module.c, loads what this makes; the test cuda_kernels_compile runs it for sm_80, sm_90, sm_100).
 * A cubin when NVRTC can generate code for the architecture itself; else PTX for the newest architecture
 * NVRTC knows below it, which the driver compiles (JIT) for the GPU when the module loads. */
#ifndef TB_BACKEND_CUDA_COMPILE_H
#define TB_BACKEND_CUDA_COMPILE_H
#include <stddef.h>
#include <tensorbridge/status.h>
#include "runtime/nvrtc_api.h"

typedef enum tb_cuda_image_kind { TB_CUDA_IMAGE_CUBIN = 1, TB_CUDA_IMAGE_PTX = 2 } tb_cuda_image_kind;

typedef struct tb_cuda_target {
  int arch;                /* the GPU's compute capability as major * 10 + minor: 90 for sm_90 */
  int code_arch;           /* what NVRTC generates for: arch for a cubin, else the PTX's virtual arch */
  tb_cuda_image_kind kind;
  char option[48];         /* "--gpu-architecture=sm_90" or "--gpu-architecture=compute_89" */
} tb_cuda_target;

/* The target for a GPU of compute capability major.minor, from the architectures NVRTC supports
 * (nvrtcGetSupportedArchs). TB_ERR_UNSUPPORTED when NVRTC knows none at or below it (an old GPU, a new
 * NVRTC), TB_ERR_INVALID_ARGUMENT for a compute capability that is not one; `who` leads the sentence. */
tb_status tb_cuda_target_for(const tb_nvrtc_api *nvrtc, const char *who, int major, int minor, tb_cuda_target *out);

/* A compiled image: a cubin, or PTX ending in its NUL (cuModuleLoadData wants both so). */
typedef struct tb_cuda_image {
  tb_cuda_image_kind kind;
  unsigned char *data; /* malloc'd; the caller frees */
  size_t size;
} tb_cuda_image;

/* The options every compile passes besides the architecture (they are part of the cache key). */
extern const char *const tb_cuda_compile_options[];
extern const int tb_cuda_compile_option_count;

/* Compile `len` bytes of CUDA C, named `name` in NVRTC's log ("tb_kernels.cu"), for the target. A failed
 * compile is TB_ERR_DRIVER naming NVRTC's version, the architecture, the result code and the first lines of
 * NVRTC's log; out of memory is TB_ERR_OUT_OF_MEMORY. */
tb_status tb_cuda_compile(const tb_nvrtc_api *nvrtc, const char *who, const char *name, const char *source, size_t len,
                          const tb_cuda_target *target, tb_cuda_image *out);

#endif
