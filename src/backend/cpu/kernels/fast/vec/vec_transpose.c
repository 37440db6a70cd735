/* Level-2 Transpose of any 1, 2, 4 or 8-byte element type as a blocked copy. The permutation is first
 * simplified: output dims of size 1 are dropped and neighbouring output dims that are also neighbours, in
 * the same order, in the input are merged (NCHW -> NHWC becomes [N, HW, C] reading [N, C, HW]). Then:
 * - the output's innermost dim is contiguous in the input (the attention's [B, S, H, D] -> [B, H, S, D]):
 *   one memcpy per output row;
 * - else a 2-D transpose between the output's innermost dim and the dim the input holds contiguously, per
 *   index of the remaining (outer) dims, in 16 x 16 tiles: on AVX-512 a full tile of 4-byte elements is 16
 *   vector loads, a register transpose and 16 vector stores; other tiles are typed scalar copies.
 * Tiles (and rows) are split over ctx->pool. The reference (tensor/transpose.c) walks every element with
 * its index arithmetic. */
#include <string.h>
#include "backend/cpu/kernels/fast/vec/vec_kernel.h"
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"
#if defined(__x86_64__)
#include "backend/cpu/kernels/fast/vec/transpose_avx512.h"
#endif

enum { TILE = 16 };

typedef struct tr_job {
  const unsigned char *src;
  unsigned char *dst;
  size_t elem;
  size_t n_outer; /* the outer loops, outermost first: size, source and destination strides (elements) */
  int64_t odim[TB_MAX_DIMS], osrc[TB_MAX_DIMS], odst[TB_MAX_DIMS];
  int64_t a, sa;  /* the output's innermost dim: size and source stride (destination stride 1) */
  int64_t b, db;  /* the dim read contiguously (source stride 1): size and destination stride; 1 and 0 in
                   * the row case */
  int64_t b_tiles;
  bool avx512;
} tr_job;

/* dst[i * db + j] = src[j * sa + i] for i in [0, nb), j in [0, a), blocked along j. */
#define TILE_COPY(T)                                                                    \
  static void tile_##T(const T *src, T *dst, int64_t nb, int64_t a, int64_t sa, int64_t db) { \
    for (int64_t j0 = 0; j0 < a; j0 += TILE) {                                          \
      int64_t j1 = a - j0 < TILE ? a : j0 + TILE;                                       \
      for (int64_t i = 0; i < nb; i++)                                                  \
        for (int64_t j = j0; j < j1; j++) dst[i * db + j] = src[j * sa + i];           \
    }                                                                                   \
  }
TILE_COPY(uint8_t)
TILE_COPY(uint16_t)
TILE_COPY(uint32_t)
TILE_COPY(uint64_t)

#if defined(__x86_64__)
/* 4-byte elements, nb == 16: full 16 x 16 tiles in registers, the ragged end of a by tile_uint32_t. */
__attribute__((target("avx512f"))) static void tile16_avx512(const float *src, float *dst, int64_t a, int64_t sa,
                                                             int64_t db) {
  int64_t j0 = 0;
  for (; j0 + TILE <= a; j0 += TILE) {
    __m512 r[16];
    for (int k = 0; k < 16; k++) r[k] = _mm512_loadu_ps(src + (j0 + k) * sa);
    tb_transpose16_ps(r);
    for (int k = 0; k < 16; k++) _mm512_storeu_ps(dst + k * db + j0, r[k]);
  }
  if (j0 < a) tile_uint32_t((const uint32_t *)(const void *)(src + j0 * sa), (uint32_t *)(void *)(dst + j0), TILE, a - j0, sa, db);
}
#endif

static void tile_any(const tr_job *j, const unsigned char *s, unsigned char *d, int64_t nb) {
#if defined(__x86_64__)
  if (j->avx512 && j->elem == 4 && nb == TILE) {
    tile16_avx512((const float *)(const void *)s, (float *)(void *)d, j->a, j->sa, j->db);
    return;
  }
#endif
  switch (j->elem) {
    case 1: tile_uint8_t(s, d, nb, j->a, j->sa, j->db); break;
    case 2: tile_uint16_t((const uint16_t *)(const void *)s, (uint16_t *)(void *)d, nb, j->a, j->sa, j->db); break;
    case 4: tile_uint32_t((const uint32_t *)(const void *)s, (uint32_t *)(void *)d, nb, j->a, j->sa, j->db); break;
    default: tile_uint64_t((const uint64_t *)(const void *)s, (uint64_t *)(void *)d, nb, j->a, j->sa, j->db); break;
  }
}

/* Tasks: (outer index, tile along b); in the row case one task per output row. */
static void tr_tasks(void *arg, size_t begin, size_t end) {
  const tr_job *j = arg;
  for (size_t t = begin; t < end; t++) {
    int64_t rest = (int64_t)t / j->b_tiles, tile = (int64_t)t % j->b_tiles, so = 0, dof = 0;
    for (size_t k = j->n_outer; k-- > 0;) {
      int64_t i = rest % j->odim[k];
      rest /= j->odim[k];
      so += i * j->osrc[k];
      dof += i * j->odst[k];
    }
    int64_t i0 = tile * TILE, nb = j->b - i0 < TILE ? j->b - i0 : TILE;
    const unsigned char *s = j->src + (size_t)(so + i0) * j->elem;
    unsigned char *d = j->dst + (size_t)(dof + i0 * j->db) * j->elem;
    if (j->sa == 1)
      memcpy(d, s, (size_t)j->a * j->elem);
    else
      tile_any(j, s, d, nb);
  }
}

static tb_status transpose_run(tb_kernel_ctx *ctx, const vec_ops *ops) {
  tb_status st;
  const tb_transpose_params *tp = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  const tb_tensor *x;
  const unsigned char *src;
  if ((st = tb_tk_input(ctx, 0, &x, &src)) != TB_OK) return st;
  size_t r = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  if ((tp->has_perm && tp->n_perm != r) || (elem != 1 && elem != 2 && elem != 4 && elem != 8)) return tb_vec_fallback(ctx);
  const int64_t *in_shape = tb_tensor_shape(x);
  int64_t perm[TB_MAX_DIMS], out_shape[TB_MAX_DIMS], in_st[TB_MAX_DIMS];
  bool seen[TB_MAX_DIMS] = {false};
  for (size_t d = 0; d < r; d++) {
    perm[d] = tp->has_perm ? tp->perm[d] : (int64_t)(r - 1 - d);
    if (perm[d] < 0 || (size_t)perm[d] >= r || seen[perm[d]]) return tb_vec_fallback(ctx); /* its error */
    seen[perm[d]] = true;
    out_shape[d] = in_shape[perm[d]];
  }
  tb_tensor *y;
  unsigned char *dst;
  if ((st = tb_tk_output(ctx, 0, tb_tensor_dtype(x), r, out_shape, &y, &dst)) != TB_OK) return st;
  int64_t numel = tb_tensor_numel(x);
  if (numel == 0) return TB_OK;
  /* the simplified output: dims (size > 1) with their source strides, merged where contiguous */
  tb_shape_strides(r, in_shape, in_st);
  int64_t dim[TB_MAX_DIMS], sst[TB_MAX_DIMS], dstr[TB_MAX_DIMS];
  size_t nd = 0;
  for (size_t d = 0; d < r; d++) {
    int64_t n = out_shape[d], s = in_st[perm[d]];
    if (n == 1) continue;
    if (nd > 0 && sst[nd - 1] == s * n) {
      dim[nd - 1] *= n;
      sst[nd - 1] = s;
    } else {
      dim[nd] = n;
      sst[nd++] = s;
    }
  }
  if (nd == 0 || (nd == 1 && sst[0] == 1)) {
    memcpy(dst, src, (size_t)numel * elem);
    return TB_OK;
  }
  dstr[nd - 1] = 1;
  for (size_t d = nd - 1; d-- > 0;) dstr[d] = dstr[d + 1] * dim[d + 1];
  tr_job j = {.src = src, .dst = dst, .elem = elem, .a = dim[nd - 1], .sa = sst[nd - 1], .b = 1, .db = 0, .b_tiles = 1,
              .avx512 = ops == &tb_vec_ops_avx512};
  size_t bdim = nd - 1; /* the row case: no b */
  if (j.sa != 1) {
    for (size_t d = 0; d + 1 < nd; d++)
      if (sst[d] == 1) bdim = d;
    if (bdim == nd - 1) return tb_vec_fallback(ctx); /* cannot happen: some dim has source stride 1 */
    j.b = dim[bdim];
    j.db = dstr[bdim];
    j.b_tiles = (j.b + TILE - 1) / TILE;
  }
  int64_t tasks = j.b_tiles;
  for (size_t d = 0; d + 1 < nd; d++) {
    if (d == bdim) continue;
    j.odim[j.n_outer] = dim[d];
    j.osrc[j.n_outer] = sst[d];
    j.odst[j.n_outer++] = dstr[d];
    tasks *= dim[d];
  }
  tb_vec_parallel(ctx, (size_t)tasks, numel, tr_tasks, &j);
  return TB_OK;
}

/* Any dtype of 1, 2, 4 or 8 bytes, with the node's parsed permutation. */
static bool transpose_accepts(const tb_kernel_query *q) {
  if (q->n_inputs < 1 || !q->in || !q->in[0] || !q->in[0]->has_dtype || !q->params) return false;
  size_t elem = tb_dtype_size(q->in[0]->dtype);
  return elem == 1 || elem == 2 || elem == 4 || elem == 8;
}

VEC_KERNELS(transpose, "", "Transpose", transpose_accepts, transpose_run)
