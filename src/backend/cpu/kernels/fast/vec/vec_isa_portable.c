/* The portable table of the vectorised fp32 loops (vec_ops.h): 4-lane GNU C vectors at the baseline
 * instruction set, for CPUs without AVX2 and FMA (and for TB_CPU_FEATURES=-avx2). */
#include <string.h>
#include "backend/cpu/kernels/fast/vec/vec_portable_prims.h"
#define VEC_TABLE tb_vec_ops_portable
#define VEC_TABLE_NAME "portable"
#include "backend/cpu/kernels/fast/vec/vec_loops.h"
