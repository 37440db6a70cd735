/* Internal: the separable MaxPool plane of the AVX2 path (vec_pool_avx2.c), used by vec_pool.c: each
 * input row's horizontal maxima computed once into a ring of kernel-height rows, then a vertical max per
 * output row. Any kernel, stride and padding (no dilation). */
#ifndef TB_CPU_KERNELS_FAST_VEC_POOL_AVX2_H
#define TB_CPU_KERNELS_FAST_VEC_POOL_AVX2_H
#include <stddef.h>
#include <stdint.h>

/* The largest kernel height and width this path takes. */
enum { VEC_MAXPOOL_AVX2_MAX_KERNEL = 64 };

/* One NCHW plane's geometry: input h x w, output oh x ow, kernel kh x kw, strides sh, sw, leading pads
 * pt (rows) and pl (columns); the trailing pads are implied by oh and ow. */
typedef struct vec_maxpool_geom {
  int64_t h, w, oh, ow, kh, kw, sh, sw, pt, pl;
} vec_maxpool_geom;

/* Output row oh of the plane by the caller's tap-by-tap loop (the rows this path hands back). */
typedef void (*vec_maxpool_redo_fn)(const void *ctx, const float *x, int64_t oh, float *y_row);

/* Floats of scratch one call of tb_vec_maxpool_plane_avx2 needs. */
size_t tb_vec_maxpool_avx2_scratch(const vec_maxpool_geom *g);
/* y (oh x ow) = MaxPool of the plane x (h x w), with the reference's result: the first tap in window order
 * holding the maximum (ties such as -0 and +0 included). An output row that reads an input row holding a
 * NaN, or no input row, goes to redo(ctx, x, oh, y row), which follows the reference's NaN rule. Only
 * when the CPU has AVX2. */
void tb_vec_maxpool_plane_avx2(const vec_maxpool_geom *g, const float *x, float *y, float *scratch,
                               vec_maxpool_redo_fn redo, const void *ctx);

#endif
