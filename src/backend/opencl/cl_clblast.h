/* Internal: CLBlast (libclblast.so.1, opened with dlopen when first wanted) for the GEMMs of MatMul, Gemm
 * and the fused ops. TB_CLBLAST=off uses the project's own tiled kernel instead; TB_CLBLAST_LIB names
 * the library file. */
#ifndef TB_BACKEND_OPENCL_CL_CLBLAST_H
#define TB_BACKEND_OPENCL_CL_CLBLAST_H
#include <stdbool.h>
#include <stddef.h>
#include "backend/opencl/cl_device.h"

/* True when GEMMs should go through CLBlast now (TB_CLBLAST unset, on or 1, and the library loads); else
 * false with the reason in why: TB_CLBLAST off or 0, a TB_CLBLAST value that is none of these (a warning,
 * logged once), or the library missing (logged once at info level). */
bool tb_clblast_available(char *why, size_t cap);

/* False (and an info line in the log) when CLBlast's temporary buffers for an m x n x k product would not fit
 * the device memory left or the host memory the process can still take: the built-in kernel runs instead,
 * which needs none (drivers such as PoCL abort inside CLBlast's calls when host memory runs out). */
bool tb_clblast_fits(tb_cl_device *dev, size_t m, size_t n, size_t k);

/* Row-major C = alpha op(A) op(B) + beta C on the device's queue (offsets and leading dimensions in
 * elements). Errors name the device, `who` and CLBlast's status code. */
tb_status tb_clblast_sgemm(tb_cl_device *dev, const char *who, bool ta, bool tb, size_t m, size_t n, size_t k, float alpha,
                           tb_cl_mem a, size_t a_off, size_t lda, tb_cl_mem b, size_t b_off, size_t ldb, float beta,
                           tb_cl_mem c, size_t c_off, size_t ldc);

/* CLBlastSgemm calls made so far in this process (tests check which GEMM path ran). */
unsigned long tb_clblast_calls(void);

/* Drop CLBlast's compiled kernels for every context (before a context CLBlast ran on is released, so a
 * later context at the same address never meets stale programs). */
void tb_clblast_forget(tb_cl_device *dev);

#endif
