/* Device lists built by hand for the selection and policy tests, so they do not depend on the probes:
 * each machine is made with the same internal builder the probes use (src/discover/devlist.h). */
#ifndef TB_TEST_SELECT_HELPERS_H
#define TB_TEST_SELECT_HELPERS_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "discover/devlist.h"
#include "test_util.h"

#define GIB ((uint64_t)1 << 30)
/* cmocka 1.1 has no assert_double_equal. */
#define SEL_ASSERT_NEAR(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static inline tb_device_info *sel_add(tb_device_list *l, tb_backend_kind backend, const char *name, const char *vendor,
                               const char *arch, tb_device_type type, int major, int minor, uint64_t mem_gib, int units,
                               const char *pci) {
  tb_device_info *d = tb_devlist_add(l, backend);
  assert_non_null(d);
  tb_dev_set(l, &d->name, "%s", name);
  tb_dev_set(l, &d->vendor, "%s", vendor);
  tb_dev_set(l, &d->architecture, "%s", arch);
  if (pci) tb_dev_set(l, &d->pci_bus_id, "%s", pci);
  d->type = type;
  d->compute_major = major;
  d->compute_minor = minor;
  d->memory_total = mem_gib * GIB;
  d->memory_total_known = mem_gib > 0;
  d->compute_units = units;
  d->usable = true;
  tb_report_set(l, backend, NULL, "%s", ""); /* probed; finish writes the summary */
  return d;
}

/* The native CPU device as the CPU probe reports it on this machine. */
static inline tb_device_info *sel_add_cpu(tb_device_list *l) {
  tb_device_info *d = sel_add(l, TB_BACKEND_CPU, "AMD EPYC 9B45", "AMD", "Zen 5", TB_DEVICE_CPU, 0, 0, 16, 4, NULL);
  d->dtypes = TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F64) | TB_DTYPE_BIT(TB_DTYPE_BF16);
  d->features = TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_AVX512F) |
                TB_FEATURE_BIT(TB_FEATURE_AVX512BF16);
  return d;
}

static inline tb_device_info *sel_add_h100(tb_device_list *l, const char *pci) {
  tb_device_info *d = sel_add(l, TB_BACKEND_CUDA, "NVIDIA H100 80GB HBM3", "NVIDIA", "Hopper", TB_DEVICE_DISCRETE_GPU,
                              9, 0, 80, 132, pci);
  d->dtypes = TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F16) | TB_DTYPE_BIT(TB_DTYPE_BF16) |
              TB_DTYPE_BIT(TB_DTYPE_FP8_E4M3FN);
  d->features = TB_FEATURE_BIT(TB_FEATURE_TENSOR_CORES) | TB_FEATURE_BIT(TB_FEATURE_TF32);
  return d;
}

/* An NVIDIA GPU on the bus with no driver, as the CUDA probe reports it. */
static inline tb_device_info *sel_add_nvidia_no_driver(tb_device_list *l, const char *pci) {
  tb_device_info *d = tb_devlist_add_unindexed(l, TB_BACKEND_CUDA, pci);
  assert_non_null(d);
  tb_dev_set(l, &d->name, "NVIDIA GPU 10de:2330");
  tb_dev_set(l, &d->vendor, "NVIDIA");
  d->type = TB_DEVICE_DISCRETE_GPU;
  tb_dev_unusable(l, d, "install the NVIDIA driver (nvidia-driver package) or set TB_CUDA_LIB to the path of libcuda.so.1",
                  "NVIDIA GPU at %s present but libcuda.so.1 not found in the loader path", pci);
  tb_report_set(l, TB_BACKEND_CUDA, "install the NVIDIA driver (nvidia-driver package)", "libcuda.so.1 not found");
  return d;
}

static inline tb_device_list *sel_finish(tb_device_list *l) {
  tb_devlist_finish(l);
  assert_false(l->arena.failed);
  return l;
}

static inline const tb_candidate *sel_candidate(const tb_selection *sel, const char *device) {
  for (size_t i = 0; i < tb_selection_candidate_count(sel); i++) {
    const tb_candidate *c = tb_selection_candidate(sel, i);
    if (strcmp(c->device->device, device) == 0) return c;
  }
  fail_msg("no candidate %s", device);
  return NULL;
}

static inline tb_selection *sel_select_ok(const tb_device_list *l, const char *request) {
  tb_selection *sel = NULL;
  TB_ASSERT_OK(tb_select(l, request, &sel));
  assert_non_null(sel);
  return sel;
}

#endif
