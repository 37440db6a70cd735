/* Element-wise metrics of a result against a reference: max abs and rel error, cosine similarity, f32 ULP
 * distance, elements outside atol * max(1, max|ref|) + rtol*|ref|, NaN/Inf counts. Values are compared as
 * doubles (converted exactly from every dtype but i64 beyond 2^53). The definitions are in docs/validation.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "tools/validate_impl.h"

uint64_t tb_tbv_ulp_distance(float a, float b) {
  uint32_t ua, ub;
  memcpy(&ua, &a, 4);
  memcpy(&ub, &b, 4);
  /* Map sign-magnitude bit patterns onto a line where adjacent floats are adjacent integers. */
  int64_t ia = ua & 0x80000000u ? -(int64_t)(ua & 0x7fffffffu) : (int64_t)ua;
  int64_t ib = ub & 0x80000000u ? -(int64_t)(ub & 0x7fffffffu) : (int64_t)ub;
  return (uint64_t)(ia > ib ? ia - ib : ib - ia);
}

void *tb_tbv_host_copy(const tb_tensor *t) {
  size_t n = tb_tensor_nbytes(t);
  void *p = malloc(n ? n : 1);
  if (!p) {
    tb_error(TB_ERR_OUT_OF_MEMORY, "validation: out of memory copying %zu bytes", n);
    return NULL;
  }
  if (n && tb_tensor_copy_to_host(t, p, n) != TB_OK) {
    free(p);
    return NULL;
  }
  return p;
}

static void count_special(double v, int64_t *nan, int64_t *inf) {
  if (isnan(v)) (*nan)++;
  else if (isinf(v)) (*inf)++;
}

tb_status tb_tbv_compare_host(tb_dtype dtype, const void *got, const void *ref, int64_t n, double rtol, double atol,
                           tb_output_metrics *out) {
  size_t size = out->size;
  const char *name = out->name;
  memset(out, 0, sizeof *out);
  out->size = size;
  out->name = name;
  out->dtype = dtype;
  out->numel = n;
  out->shape_matches = true;
  out->cosine = 1;
  double *g = malloc((size_t)(n ? n : 1) * sizeof *g), *r = malloc((size_t)(n ? n : 1) * sizeof *r);
  if (!g || !r) {
    free(g);
    free(r);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "validation: out of memory for %lld elements", (long long)n);
  }
  tb_status st = tb_convert(dtype, got, TB_DTYPE_F64, g, (size_t)n, false);
  if (st == TB_OK) st = tb_convert(dtype, ref, TB_DTYPE_F64, r, (size_t)n, false);
  /* atol is in units of the output's scale: an element near 0 that comes out of a sum of terms of size
   * 400 carries the rounding of those terms, so it is judged against the output's largest magnitude */
  double scale = 1;
  for (int64_t i = 0; i < n && st == TB_OK; i++)
    if (isfinite(r[i]) && fabs(r[i]) > scale) scale = fabs(r[i]);
  atol *= scale;
  double dot = 0, gg = 0, rr = 0;
  for (int64_t i = 0; i < n && st == TB_OK; i++) {
    count_special(g[i], &out->nan_got, &out->inf_got);
    count_special(r[i], &out->nan_ref, &out->inf_ref);
    if (!isfinite(g[i]) || !isfinite(r[i])) {
      bool same = (isnan(g[i]) && isnan(r[i])) || (isinf(g[i]) && g[i] == r[i]);
      if (!same) out->mismatches++;
      continue;
    }
    double d = fabs(g[i] - r[i]);
    if (d > out->max_abs_error) out->max_abs_error = d;
    if (r[i] != 0 && d / fabs(r[i]) > out->max_rel_error) out->max_rel_error = d / fabs(r[i]);
    if (d > atol + rtol * fabs(r[i])) out->mismatches++;
    dot += g[i] * r[i];
    gg += g[i] * g[i];
    rr += r[i] * r[i];
    if (dtype == TB_DTYPE_F32) {
      uint64_t u = tb_tbv_ulp_distance(((const float *)got)[i], ((const float *)ref)[i]);
      if (u > out->max_ulp) out->max_ulp = u;
    }
  }
  if (gg > 0 && rr > 0) out->cosine = dot / (sqrt(gg) * sqrt(rr));
  else if (gg > 0 || rr > 0) out->cosine = 0;
  out->passed = st == TB_OK && out->mismatches == 0;
  free(g);
  free(r);
  return st;
}

static bool same_shape(const tb_tensor *a, const tb_tensor *b) {
  if (tb_tensor_dtype(a) != tb_tensor_dtype(b) || tb_tensor_ndim(a) != tb_tensor_ndim(b)) return false;
  return memcmp(tb_tensor_shape(a), tb_tensor_shape(b), tb_tensor_ndim(a) * sizeof(int64_t)) == 0;
}

tb_status tb_compare_tensors(const tb_tensor *got, const tb_tensor *ref, double rtol, double atol, tb_output_metrics *out) {
  if (!got || !ref || !out || out->size < sizeof *out)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_compare_tensors: got, ref and out must not be NULL and out->size must be sizeof(tb_output_metrics)");
  if (!(rtol >= 0) || !(atol >= 0))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_compare_tensors: rtol %g and atol %g must be >= 0", rtol, atol);
  out->name = NULL;
  if (!same_shape(got, ref)) {
    memset(out, 0, sizeof *out);
    out->size = sizeof *out;
    out->dtype = tb_tensor_dtype(ref);
    out->numel = tb_tensor_numel(ref);
    out->mismatches = out->numel;
    return TB_OK;
  }
  void *g = tb_tbv_host_copy(got);
  void *r = g ? tb_tbv_host_copy(ref) : NULL;
  tb_status st = g && r ? tb_tbv_compare_host(tb_tensor_dtype(ref), g, r, tb_tensor_numel(ref), rtol, atol, out) : TB_ERR_OUT_OF_MEMORY;
  if (!g || !r) {
    char why[512];
    snprintf(why, sizeof why, "%s", tb_last_error());
    st = tb_error(TB_ERR_IO, "tb_compare_tensors: could not read a tensor back: %s", why);
  }
  free(g);
  free(r);
  return st;
}
