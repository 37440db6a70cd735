/* Sliding-window geometry for Conv, ConvTranspose and the pools: the window attributes parsed once
 * (tb_window_parse) and resolved for a shape (see window.h). */
#include "ops/nn/window.h"
#include <stdio.h>
#include <string.h>
#include "core/error.h"

tb_status tb_nn_parse_list(const tb_graph *g, const tb_node *n, const char *name, size_t cap, int64_t min, int64_t *out,
                           size_t *count) {
  const int64_t *v = NULL;
  size_t c = 0;
  tb_status st = tb_attr_ints(g, n, name, &v, &c);
  *count = 0;
  if (st != TB_OK) return st;
  if (c > cap)
    return tb_node_error(g, n, TB_ERR_UNSUPPORTED, "attribute %s has %zu values; at most %zu are supported", name, c, cap);
  for (size_t i = 0; i < c; i++) {
    if (v[i] < min)
      return tb_node_error(g, n, TB_ERR_MODEL, "attribute %s[%zu] is %lld; it must be >= %lld", name, i, (long long)v[i],
                           (long long)min);
    out[i] = v[i];
  }
  *count = c;
  return TB_OK;
}

tb_status tb_window_parse(const tb_graph *g, const tb_node *n, bool with_ceil, tb_window_params *w) {
  tb_status st = tb_nn_parse_list(g, n, "kernel_shape", TB_MAX_DIMS, 1, w->kernel, &w->n_kernel);
  if (st == TB_OK) st = tb_nn_parse_list(g, n, "strides", TB_MAX_DIMS, 1, w->strides, &w->n_strides);
  if (st == TB_OK) st = tb_nn_parse_list(g, n, "dilations", TB_MAX_DIMS, 1, w->dilations, &w->n_dilations);
  if (st == TB_OK) st = tb_nn_parse_list(g, n, "pads", 2 * TB_MAX_DIMS, 0, w->pads, &w->n_pads);
  const char *ap = NULL;
  if (st == TB_OK) st = tb_attr_string(g, n, "auto_pad", "NOTSET", &ap);
  if (st != TB_OK) return st;
  if (strcmp(ap, "NOTSET") == 0 || ap[0] == '\0') w->auto_pad = TB_AUTO_PAD_NOTSET;
  else if (strcmp(ap, "VALID") == 0) w->auto_pad = TB_AUTO_PAD_VALID;
  else if (strcmp(ap, "SAME_UPPER") == 0) w->auto_pad = TB_AUTO_PAD_SAME_UPPER;
  else if (strcmp(ap, "SAME_LOWER") == 0) w->auto_pad = TB_AUTO_PAD_SAME_LOWER;
  else
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute auto_pad is '%s'; it must be NOTSET, VALID, SAME_UPPER or SAME_LOWER",
                         ap);
  if (w->auto_pad != TB_AUTO_PAD_NOTSET) memset(w->pads, 0, sizeof w->pads);
  if (with_ceil) {
    int64_t c = 0;
    st = tb_attr_int(g, n, "ceil_mode", 0, &c);
    if (st != TB_OK) return st;
    w->ceil_mode = c != 0;
  }
  return TB_OK;
}

/* A given list must have `want` entries. */
static tb_status check_count(const char *name, size_t count, size_t want) {
  if (count == 0 || count == want) return TB_OK;
  return tb_error(TB_ERR_MODEL, "attribute %s has %zu values; it needs %zu", name, count, want);
}

static tb_status bad(const char *what, long long value, const char *need) {
  return tb_error(TB_ERR_MODEL, "attribute %s is %lld; %s", what, value, need);
}

tb_status tb_nn_window_init(const tb_window_params *p, size_t n, const int64_t *kernel, nn_window *w) {
  memset(w, 0, sizeof *w);
  w->n = n;
  if (n > TB_MAX_DIMS) return bad("(spatial rank)", (long long)n, "at most 8 axes are supported");
  if (p->n_kernel == 0 && !kernel) return tb_error(TB_ERR_MODEL, "attribute kernel_shape is required");
  tb_status st = check_count("kernel_shape", p->n_kernel, n);
  if (st == TB_OK) st = check_count("strides", p->n_strides, n);
  if (st == TB_OK) st = check_count("dilations", p->n_dilations, n);
  if (st == TB_OK) st = check_count("pads", p->n_pads, 2 * n);
  if (st != TB_OK) return st;
  for (size_t i = 0; i < n; i++) {
    if (p->n_kernel) {
      w->kernel[i] = p->kernel[i];
      if (kernel && kernel[i] >= 0 && kernel[i] != p->kernel[i]) {
        char what[64];
        snprintf(what, sizeof what, "kernel_shape[%zu]", i);
        return bad(what, (long long)p->kernel[i], "it differs from the weight's spatial size");
      }
    } else {
      w->kernel[i] = kernel[i] < 0 ? -1 : kernel[i];
    }
    w->stride[i] = p->n_strides ? p->strides[i] : 1;
    w->dilation[i] = p->n_dilations ? p->dilations[i] : 1;
    w->pad_begin[i] = p->n_pads ? p->pads[i] : 0;
    w->pad_end[i] = p->n_pads ? p->pads[n + i] : 0;
  }
  w->auto_pad = p->auto_pad;
  w->ceil_mode = p->ceil_mode;
  return TB_OK;
}

/* (k - 1) * d + 1, checked. */
static tb_status dilated(const nn_window *w, size_t i, int64_t *out) {
  int64_t dk;
  if (__builtin_mul_overflow(w->kernel[i] - 1, w->dilation[i], &dk) || __builtin_add_overflow(dk, 1, &dk)) {
    char what[64];
    snprintf(what, sizeof what, "dilations[%zu]", i);
    return bad(what, (long long)w->dilation[i], "the dilated kernel size overflows");
  }
  *out = dk;
  return TB_OK;
}

tb_status tb_nn_window_out(nn_window *w, size_t i, int64_t in, int64_t *out) {
  *out = -1;
  if (in < 0 || w->kernel[i] < 0) return TB_OK;
  int64_t dk, s = w->stride[i];
  tb_status st = dilated(w, i, &dk);
  if (st != TB_OK) return st;
  if (w->auto_pad == TB_AUTO_PAD_SAME_UPPER || w->auto_pad == TB_AUTO_PAD_SAME_LOWER) {
    int64_t o = in / s + (in % s != 0), total;
    /* total = max(0, (o - 1) * s + dk - in); each term is bounded by in + dk, which fits. */
    if (__builtin_mul_overflow(o > 0 ? o - 1 : 0, s, &total) || __builtin_add_overflow(total, dk, &total))
      return bad("strides", (long long)s, "the padding overflows");
    total = total - in > 0 ? total - in : 0;
    int64_t small = total / 2;
    w->pad_begin[i] = w->auto_pad == TB_AUTO_PAD_SAME_UPPER ? small : total - small;
    w->pad_end[i] = total - w->pad_begin[i];
    *out = o;
    return TB_OK;
  }
  int64_t padded;
  if (__builtin_add_overflow(in, w->pad_begin[i], &padded) || __builtin_add_overflow(padded, w->pad_end[i], &padded))
    return bad("pads", (long long)w->pad_end[i], "the padded input size overflows");
  if (dk > padded)
    return tb_error(TB_ERR_MODEL, "the kernel (dilated size %lld on spatial axis %zu) is larger than the padded input (%lld)",
                    (long long)dk, i, (long long)padded);
  int64_t span = padded - dk;
  int64_t o = span / s + 1;
  if (w->ceil_mode && span % s != 0) {
    o++;
    /* The last window must start inside the input or its begin padding (as PyTorch and ONNX Runtime). */
    if ((o - 1) * s >= in + w->pad_begin[i]) o--;
  }
  *out = o;
  return TB_OK;
}

tb_status tb_nn_window_init_transpose(const tb_conv_params *p, nn_window *w) {
  tb_status st = check_count("output_padding", p->n_output_padding, w->n);
  if (st != TB_OK) return st;
  for (size_t i = 0; i < w->n; i++) {
    w->output_padding[i] = p->n_output_padding ? p->output_padding[i] : 0;
    if (w->output_padding[i] >= w->stride[i] && w->output_padding[i] >= w->dilation[i]) {
      char what[64];
      snprintf(what, sizeof what, "output_padding[%zu]", i);
      return bad(what, (long long)w->output_padding[i], "it must be smaller than the stride or the dilation");
    }
  }
  return TB_OK;
}

tb_status tb_nn_window_out_transpose(nn_window *w, size_t i, int64_t in, int64_t want, int64_t *out) {
  *out = -1;
  if (in < 0 || w->kernel[i] < 0) return TB_OK;
  int64_t dk, full;
  tb_status st = dilated(w, i, &dk);
  if (st != TB_OK) return st;
  /* full = s * (in - 1) + output_padding + dk: the output before any padding is removed. */
  if (__builtin_mul_overflow(w->stride[i], in > 0 ? in - 1 : 0, &full) ||
      __builtin_add_overflow(full, w->output_padding[i], &full) || __builtin_add_overflow(full, dk, &full))
    return bad("strides", (long long)w->stride[i], "the output size overflows");
  if (want < 0 && (w->auto_pad == TB_AUTO_PAD_SAME_UPPER || w->auto_pad == TB_AUTO_PAD_SAME_LOWER)) {
    if (__builtin_mul_overflow(in, w->stride[i], &want)) return bad("strides", (long long)w->stride[i], "the output size overflows");
  }
  if (want >= 0) {
    int64_t total = full - want;
    if (total < 0) {
      /* A requested size beyond the full output extends it at the end with zeros (bias only), like
       * output_padding (ONNX's test_convtranspose_output_shape). */
      w->pad_begin[i] = 0;
      w->pad_end[i] = total;
    } else {
      int64_t small = total / 2;
      w->pad_begin[i] = w->auto_pad == TB_AUTO_PAD_SAME_UPPER ? small : total - small;
      w->pad_end[i] = total - w->pad_begin[i];
    }
    *out = want;
    return TB_OK;
  }
  if (w->auto_pad == TB_AUTO_PAD_VALID) w->pad_begin[i] = w->pad_end[i] = 0;
  int64_t o;
  if (__builtin_sub_overflow(full, w->pad_begin[i], &o) || __builtin_sub_overflow(o, w->pad_end[i], &o) || o < 0)
    return tb_error(TB_ERR_MODEL, "pads on spatial axis %zu (%lld + %lld) exceed the output size %lld", i,
                    (long long)w->pad_begin[i], (long long)w->pad_end[i], (long long)full);
  *out = o;
  return TB_OK;
}

tb_status tb_nn_conv_output_shape(const tb_conv_params *p, size_t rank, const int64_t **spatial, size_t *count) {
  const int64_t *v = p->output_shape;
  size_t c = p->n_output_shape;
  /* output_shape may list the spatial dims, or all of them (N and C first). */
  if (c == rank) v += 2, c -= 2;
  *spatial = v;
  *count = c;
  if (c != 0 && c + 2 != rank) return tb_error(TB_ERR_MODEL, "attribute output_shape has %zu values; it needs %zu", p->n_output_shape, rank - 2);
  return TB_OK;
}
