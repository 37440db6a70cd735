/* The computing fakes of the CUDA libraries as the CUDA tests use them: fake_cublaslt's and fake_cudnn's recorded
 * state, the switches that load them, and the host bytes behind one of fake_cuda's device pointers. */
#ifndef TB_TEST_CUDA_FAKES_H
#define TB_TEST_CUDA_FAKES_H
#include <stdint.h>
#include <stdlib.h>
#include "../fakes/fake_cublaslt.h"
#include "../fakes/fake_cudnn.h"
#include "test_cuda_util.h"

static inline const fake_cublaslt_state *blas_fake(void) {
  return ((const fake_cublaslt_state *(*)(void))tcu_symbol("fake_cublaslt", "fake_cublaslt_state_get"))();
}

/* cuBLASLt: the computing fake (the own kernel no longer asked for). */
static inline void use_fake_cublaslt(void) {
  unsetenv("TB_CUDA_GEMM");
  setenv("TB_CUBLASLT_LIB", tbt_fake("fake_cublaslt"), 1);
}

static inline const fake_cudnn_state *cudnn(void) {
  return ((const fake_cudnn_state *(*)(void))tcu_symbol("fake_cudnn", "fake_cudnn_state_get"))();
}

static inline void use_fake_cudnn(void) { setenv("TB_CUDNN_LIB", tbt_fake("fake_cudnn"), 1); }

/* The bytes behind one of fake_cuda's device pointers (a host address tagged 0xd1ce in its top 16 bits). */
static inline const void *host_bytes(const void *device) {
  return (const void *)(uintptr_t)((uint64_t)(uintptr_t)device & 0x0000ffffffffffffull);
}

#endif
