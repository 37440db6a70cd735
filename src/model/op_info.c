/* tb_op_info_get / tb_op_kernel_get (include/tensorbridge/ops.h): the operators of the definitions table
 * (src/ops), sorted by domain and name, with their opsets, their first input's dtypes from their own
 * inference (ops/op_probe.h), and the kernels of the CPU, OpenCL and Vulkan tables (backend/kernel_tables.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/ops.h>
#include "backend/kernel_tables.h"
#include "core/convert_features.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "ops/op.h"
#include "ops/op_probe.h"

enum { MAX_KERNELS = 32 };

/* The first definition of each (domain, name), sorted; built once. */
static const tb_op_def **ops_index;
static size_t ops_count;
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static bool same_op(const tb_op_def *a, const char *domain, const char *name) {
  return strcmp(a->domain, domain) == 0 && strcmp(a->name, name) == 0;
}

static int by_domain_then_name(const void *pa, const void *pb) {
  const tb_op_def *a = *(const tb_op_def *const *)pa, *b = *(const tb_op_def *const *)pb;
  int c = strcmp(a->domain, b->domain);
  return c ? c : strcmp(a->name, b->name);
}

static void build_index(void) {
  size_t n = tb_op_count();
  ops_index = calloc(n ? n : 1, sizeof *ops_index);
  if (!ops_index) return;
  for (size_t i = 0; i < n; i++) {
    const tb_op_def *d = tb_op_at(i);
    bool seen = false;
    for (size_t j = 0; j < ops_count && !seen; j++) seen = same_op(ops_index[j], d->domain, d->name);
    if (!seen) ops_index[ops_count++] = d;
  }
  qsort(ops_index, ops_count, sizeof *ops_index, by_domain_then_name);
}

static const tb_op_def *op_at(size_t index) {
  pthread_once(&index_once, build_index);
  return index < ops_count ? ops_index[index] : NULL;
}

size_t tb_op_info_count(void) {
  pthread_once(&index_once, build_index);
  return ops_count;
}

/* The lowest optimization level that runs kernels of this level (model/levels.c has the rule). */
static tb_opt_level first_opt_level(tb_kernel_level level) {
  return level == TB_KERNEL_REFERENCE ? TB_LEVEL_O0 : level == TB_KERNEL_FAST ? TB_LEVEL_O2 : TB_LEVEL_O3;
}

/* The kernels of the CPU table for the op: one per (level, features, precision), by level. */
static size_t cpu_kernels(const tb_op_def *op, tb_op_kernel *out, size_t n) {
  static const tb_kernel_level levels[] = {TB_KERNEL_REFERENCE, TB_KERNEL_FAST, TB_KERNEL_REDUCED};
  uint64_t here = tb_convert_features();
  for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
    tb_kernel_level level = levels[l];
    for (size_t i = 0; i < tb_cpu_kernel_count(); i++) {
      const tb_kernel *k = tb_cpu_kernel_at(i);
      if (k->level != level || !same_op(op, k->domain, k->name)) continue;
      const char *kind = level == TB_KERNEL_REFERENCE ? "reference" : k->precision ? k->precision : "fast";
      char features[96] = "";
      if (k->cpu_features) tb_cpu_features_format(k->cpu_features, features, sizeof features);
      bool dup = false;
      for (size_t j = 0; j < n && !dup; j++)
        dup = out[j].level == first_opt_level(level) && strcmp(out[j].kind, kind) == 0 && strcmp(out[j].cpu_features, features) == 0;
      if (dup || n == MAX_KERNELS) continue;
      out[n] = (tb_op_kernel){.size = sizeof out[n], .backend = TB_BACKEND_CPU, .level = first_opt_level(level),
                              .kind = kind, .usable = (k->cpu_features & ~here) == 0};
      memcpy(out[n].cpu_features, features, sizeof features);
      n++;
    }
  }
  return n;
}

/* One entry for a device backend whose table has a kernel for the op. */
static size_t device_kernel(const tb_op_def *op, tb_backend_kind backend, size_t count,
                            const tb_kernel *(*at)(size_t), tb_op_kernel *out, size_t n) {
  for (size_t i = 0; i < count && n < MAX_KERNELS; i++) {
    const tb_kernel *k = at(i);
    if (!same_op(op, k->domain, k->name)) continue;
    out[n] = (tb_op_kernel){.size = sizeof out[n], .backend = backend, .level = first_opt_level(k->level), .kind = "device",
                            .usable = true};
    return n + 1;
  }
  return n;
}

static size_t kernels_of(const tb_op_def *op, tb_op_kernel *out) {
  size_t n = cpu_kernels(op, out, 0);
  n = device_kernel(op, TB_BACKEND_OPENCL, tb_cl_kernel_count(), tb_cl_kernel_at, out, n);
  n = device_kernel(op, TB_BACKEND_VULKAN, tb_vk_kernel_table_count(), tb_vk_kernel_at, out, n);
  return device_kernel(op, TB_BACKEND_CUDA, tb_cuda_kernel_count(), tb_cuda_kernel_at, out, n);
}

tb_status tb_op_info_get(size_t index, tb_op_info *info) {
  static const char fn[] = "tb_op_info_get";
  if (!info || info->size < sizeof *info)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: info must not be NULL and its size must be set to sizeof(tb_op_info) (%zu, got %zu)",
                    fn, sizeof *info, info ? info->size : 0);
  const tb_op_def *op = op_at(index);
  if (!op) {
    if (!ops_index) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for the operator index", fn);
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: index %zu is out of range; there are %zu operators", fn, index, ops_count);
  }
  memset(info, 0, sizeof *info);
  info->size = sizeof *info;
  info->domain = op->domain;
  info->name = op->name;
  const tb_op_def *newest = op;
  for (size_t i = 0; i < tb_op_count(); i++) {
    const tb_op_def *d = tb_op_at(i);
    if (!same_op(d, op->domain, op->name)) continue;
    if (d->since_version > newest->since_version) newest = d;
    size_t at = info->opset_count;
    while (at > 0 && info->opsets[at - 1] > d->since_version) at--;
    if (info->opset_count == TB_OP_MAX_OPSETS || (at > 0 && info->opsets[at - 1] == d->since_version)) continue;
    memmove(&info->opsets[at + 1], &info->opsets[at], (info->opset_count - at) * sizeof info->opsets[0]);
    info->opsets[at] = d->since_version;
    info->opset_count++;
  }
  info->input_dtypes = tb_op_input_dtypes(newest);
  tb_op_kernel kernels[MAX_KERNELS];
  info->kernel_count = kernels_of(op, kernels);
  for (size_t i = 0; i < info->kernel_count; i++)
    info->fast_cpu_kernel |= kernels[i].backend == TB_BACKEND_CPU && kernels[i].level > TB_LEVEL_O0;
  return TB_OK;
}

tb_status tb_op_kernel_get(size_t op_index, size_t kernel_index, tb_op_kernel *kernel) {
  static const char fn[] = "tb_op_kernel_get";
  if (!kernel || kernel->size < sizeof *kernel)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: kernel must not be NULL and its size must be set to sizeof(tb_op_kernel) (%zu, got %zu)",
                    fn, sizeof *kernel, kernel ? kernel->size : 0);
  const tb_op_def *op = op_at(op_index);
  if (!op) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: operator index %zu is out of range; there are %zu operators", fn, op_index, ops_count);
  tb_op_kernel kernels[MAX_KERNELS];
  size_t n = kernels_of(op, kernels);
  if (kernel_index >= n)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: kernel index %zu is out of range; %s%s%s has %zu kernel%s", fn, kernel_index,
                    op->domain, op->domain[0] ? "." : "", op->name, n, n == 1 ? "" : "s");
  *kernel = kernels[kernel_index];
  return TB_OK;
}
