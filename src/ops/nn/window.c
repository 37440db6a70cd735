/* Sliding-window geometry for Conv, ConvTranspose and the pools (see window.h). */
#include "ops/nn/window.h"
#include <stdio.h>
#include <string.h>
#include "core/error.h"

static tb_status bad(const tb_graph *g, const tb_node *node, const char *what, long long value, const char *need) {
  char label[160];
  return tb_error(TB_ERR_MODEL, "%s: attribute %s is %lld; %s", tb_node_label(g, node, label, sizeof label), what, value,
                  need);
}

/* An int list of exactly `want` entries, or absent (then every entry is dflt). */
static tb_status read_list(const tb_graph *g, const tb_node *node, const char *name, size_t want, int64_t dflt,
                           int64_t min, int64_t *out) {
  const int64_t *v = NULL;
  size_t count = 0;
  tb_status st = tb_attr_ints(g, node, name, &v, &count);
  if (st != TB_OK) return st;
  if (count != 0 && count != want) {
    char label[160];
    return tb_error(TB_ERR_MODEL, "%s: attribute %s has %zu values; it needs %zu", tb_node_label(g, node, label, sizeof label),
                    name, count, want);
  }
  for (size_t i = 0; i < want; i++) {
    out[i] = count ? v[i] : dflt;
    if (out[i] < min) {
      char what[64];
      snprintf(what, sizeof what, "%s[%zu]", name, i);
      return bad(g, node, what, (long long)out[i], min == 0 ? "it must be >= 0" : "it must be >= 1");
    }
  }
  return TB_OK;
}

tb_status tb_nn_window_read(const tb_graph *g, const tb_node *node, size_t n, const int64_t *kernel, bool with_ceil,
                         nn_window *w) {
  memset(w, 0, sizeof *w);
  w->n = n;
  if (n > TB_MAX_DIMS) return bad(g, node, "(spatial rank)", (long long)n, "at most 8 axes are supported");
  const int64_t *ks = NULL;
  size_t nks = 0;
  tb_status st = tb_attr_ints(g, node, "kernel_shape", &ks, &nks);
  if (st != TB_OK) return st;
  if (nks == 0 && !kernel) {
    char label[160];
    return tb_error(TB_ERR_MODEL, "%s: attribute kernel_shape is required", tb_node_label(g, node, label, sizeof label));
  }
  if (nks) {
    st = read_list(g, node, "kernel_shape", n, 1, 1, w->kernel);
    if (st != TB_OK) return st;
    for (size_t i = 0; kernel && i < n; i++)
      if (kernel[i] >= 0 && kernel[i] != w->kernel[i]) {
        char what[64];
        snprintf(what, sizeof what, "kernel_shape[%zu]", i);
        return bad(g, node, what, (long long)w->kernel[i], "it differs from the weight's spatial size");
      }
  } else {
    for (size_t i = 0; i < n; i++) w->kernel[i] = kernel[i] < 0 ? -1 : kernel[i];
  }
  int64_t pads[2 * TB_MAX_DIMS];
  st = read_list(g, node, "strides", n, 1, 1, w->stride);
  if (st == TB_OK) st = read_list(g, node, "dilations", n, 1, 1, w->dilation);
  if (st == TB_OK) st = read_list(g, node, "pads", 2 * n, 0, 0, pads);
  if (st != TB_OK) return st;
  for (size_t i = 0; i < n; i++) {
    w->pad_begin[i] = pads[i];
    w->pad_end[i] = pads[n + i];
  }
  const char *ap = NULL;
  st = tb_attr_string(g, node, "auto_pad", "NOTSET", &ap);
  if (st != TB_OK) return st;
  if (strcmp(ap, "NOTSET") == 0 || ap[0] == '\0') w->auto_pad = NN_PAD_NOTSET;
  else if (strcmp(ap, "VALID") == 0) w->auto_pad = NN_PAD_VALID;
  else if (strcmp(ap, "SAME_UPPER") == 0) w->auto_pad = NN_PAD_SAME_UPPER;
  else if (strcmp(ap, "SAME_LOWER") == 0) w->auto_pad = NN_PAD_SAME_LOWER;
  else {
    char label[160];
    return tb_error(TB_ERR_MODEL, "%s: attribute auto_pad is '%s'; it must be NOTSET, VALID, SAME_UPPER or SAME_LOWER",
                    tb_node_label(g, node, label, sizeof label), ap);
  }
  if (w->auto_pad != NN_PAD_NOTSET)
    for (size_t i = 0; i < n; i++) w->pad_begin[i] = w->pad_end[i] = 0;
  if (with_ceil) {
    int64_t c = 0;
    st = tb_attr_int(g, node, "ceil_mode", 0, &c);
    if (st != TB_OK) return st;
    w->ceil_mode = c != 0;
  }
  return TB_OK;
}

/* (k - 1) * d + 1, checked. */
static tb_status dilated(const tb_graph *g, const tb_node *node, const nn_window *w, size_t i, int64_t *out) {
  int64_t dk;
  if (__builtin_mul_overflow(w->kernel[i] - 1, w->dilation[i], &dk) || __builtin_add_overflow(dk, 1, &dk)) {
    char what[64];
    snprintf(what, sizeof what, "dilations[%zu]", i);
    return bad(g, node, what, (long long)w->dilation[i], "the dilated kernel size overflows");
  }
  *out = dk;
  return TB_OK;
}

tb_status tb_nn_window_out(const tb_graph *g, const tb_node *node, nn_window *w, size_t i, int64_t in, int64_t *out) {
  *out = -1;
  if (in < 0 || w->kernel[i] < 0) return TB_OK;
  int64_t dk, s = w->stride[i];
  tb_status st = dilated(g, node, w, i, &dk);
  if (st != TB_OK) return st;
  if (w->auto_pad == NN_PAD_SAME_UPPER || w->auto_pad == NN_PAD_SAME_LOWER) {
    int64_t o = in / s + (in % s != 0), total;
    /* total = max(0, (o - 1) * s + dk - in); each term is bounded by in + dk, which fits. */
    if (__builtin_mul_overflow(o > 0 ? o - 1 : 0, s, &total) || __builtin_add_overflow(total, dk, &total))
      return bad(g, node, "strides", (long long)s, "the padding overflows");
    total = total - in > 0 ? total - in : 0;
    int64_t small = total / 2;
    w->pad_begin[i] = w->auto_pad == NN_PAD_SAME_UPPER ? small : total - small;
    w->pad_end[i] = total - w->pad_begin[i];
    *out = o;
    return TB_OK;
  }
  int64_t padded;
  if (__builtin_add_overflow(in, w->pad_begin[i], &padded) || __builtin_add_overflow(padded, w->pad_end[i], &padded))
    return bad(g, node, "pads", (long long)w->pad_end[i], "the padded input size overflows");
  if (dk > padded) {
    char label[160];
    return tb_error(TB_ERR_MODEL,
                    "%s: the kernel (dilated size %lld on spatial axis %zu) is larger than the padded input (%lld)",
                    tb_node_label(g, node, label, sizeof label), (long long)dk, i, (long long)padded);
  }
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

tb_status tb_nn_window_read_transpose(const tb_graph *g, const tb_node *node, nn_window *w) {
  tb_status st = read_list(g, node, "output_padding", w->n, 0, 0, w->output_padding);
  if (st != TB_OK) return st;
  for (size_t i = 0; i < w->n; i++)
    if (w->output_padding[i] >= w->stride[i] && w->output_padding[i] >= w->dilation[i]) {
      char what[64];
      snprintf(what, sizeof what, "output_padding[%zu]", i);
      return bad(g, node, what, (long long)w->output_padding[i], "it must be smaller than the stride or the dilation");
    }
  return TB_OK;
}

tb_status tb_nn_window_out_transpose(const tb_graph *g, const tb_node *node, nn_window *w, size_t i, int64_t in,
                                  int64_t want, int64_t *out) {
  *out = -1;
  if (in < 0 || w->kernel[i] < 0) return TB_OK;
  int64_t dk, full;
  tb_status st = dilated(g, node, w, i, &dk);
  if (st != TB_OK) return st;
  /* full = s * (in - 1) + output_padding + dk: the output before any padding is removed. */
  if (__builtin_mul_overflow(w->stride[i], in > 0 ? in - 1 : 0, &full) ||
      __builtin_add_overflow(full, w->output_padding[i], &full) || __builtin_add_overflow(full, dk, &full))
    return bad(g, node, "strides", (long long)w->stride[i], "the output size overflows");
  if (want < 0 && (w->auto_pad == NN_PAD_SAME_UPPER || w->auto_pad == NN_PAD_SAME_LOWER)) {
    if (__builtin_mul_overflow(in, w->stride[i], &want))
      return bad(g, node, "strides", (long long)w->stride[i], "the output size overflows");
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
      w->pad_begin[i] = w->auto_pad == NN_PAD_SAME_UPPER ? small : total - small;
      w->pad_end[i] = total - w->pad_begin[i];
    }
    *out = want;
    return TB_OK;
  }
  if (w->auto_pad == NN_PAD_VALID) w->pad_begin[i] = w->pad_end[i] = 0;
  int64_t o;
  if (__builtin_sub_overflow(full, w->pad_begin[i], &o) || __builtin_sub_overflow(o, w->pad_end[i], &o) || o < 0) {
    char label[160];
    return tb_error(TB_ERR_MODEL, "%s: pads on spatial axis %zu (%lld + %lld) exceed the output size %lld",
                    tb_node_label(g, node, label, sizeof label), i, (long long)w->pad_begin[i],
                    (long long)w->pad_end[i], (long long)full);
  }
  *out = o;
  return TB_OK;
}

tb_status tb_nn_window_output_shape(const tb_graph *g, const tb_node *node, size_t rank, const int64_t **vals,
                                    size_t *count) {
  *vals = NULL;
  *count = 0;
  tb_status st = tb_attr_ints(g, node, "output_shape", vals, count);
  if (st != TB_OK) return st;
  if (*count == rank) *vals += 2, *count -= 2;
  if (*count != 0 && rank >= 2 && *count != rank - 2) {
    char label[160];
    return tb_error(TB_ERR_MODEL, "%s: attribute output_shape has %zu values; it needs %zu (the spatial sizes) or %zu",
                    tb_node_label(g, node, label, sizeof label), *count, rank - 2, rank);
  }
  return TB_OK;
}
