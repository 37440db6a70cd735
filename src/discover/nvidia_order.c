/* CUDA's ordinals without cuInit. CUDA numbers GPUs fastest first (CUDA_DEVICE_ORDER=FASTEST_FIRST,
 * the default) with ties in PCI bus order, or in PCI bus order outright (PCI_BUS_ID); on a machine
 * whose GPUs are all alike both orders are the bus order. CUDA_VISIBLE_DEVICES then picks and reorders
 * by index into that order or by UUID (a unique prefix of "GPU-..."). Anything else is left to cuInit. */
#include "discover/nvidia_order.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The inputs of CUDA's speed ranking, and more: when these agree the ranking is a tie everywhere. */
static bool same_model(const tb_cuda_gpu *a, const tb_cuda_gpu *b) {
  return strcmp(a->name, b->name) == 0 && a->cc_major == b->cc_major && a->cc_minor == b->cc_minor &&
         a->sm_count == b->sm_count && a->clock_khz == b->clock_khz && a->memory_clock_khz == b->memory_clock_khz &&
         a->bus_width_bits == b->bus_width_bits && a->memory_total == b->memory_total;
}

static bool order_known(const tb_cuda_gpu *gpus, int count, const char *order, char *why, size_t cap) {
  if (order && strcmp(order, "PCI_BUS_ID") == 0) return true;
  if (order && order[0] && strcmp(order, "FASTEST_FIRST") != 0) {
    snprintf(why, cap, "CUDA_DEVICE_ORDER=%.64s is neither FASTEST_FIRST nor PCI_BUS_ID", order);
    return false;
  }
  for (int i = 1; i < count; i++)
    if (!same_model(&gpus[0], &gpus[i])) {
      snprintf(why, cap,
               "the GPUs differ (%s at %s, %s at %s) and CUDA numbers them fastest first; set "
               "CUDA_DEVICE_ORDER=PCI_BUS_ID for bus order",
               gpus[0].name, gpus[0].bus_id, gpus[i].name, gpus[i].bus_id);
      return false;
    }
  return true;
}

/* The GPU one CUDA_VISIBLE_DEVICES entry names, or -1 (with why). */
static int resolve(const tb_cuda_gpu *gpus, int count, const char *entry, size_t len, char *why, size_t cap) {
  size_t digits = strspn(entry, "0123456789");
  if (len > 0 && digits >= len) {
    long index = len <= 6 ? strtol(entry, NULL, 10) : -1;
    if (index >= 0 && index < count) return (int)index;
    snprintf(why, cap, "CUDA_VISIBLE_DEVICES names index %.*s, and there are %d GPUs", (int)(len > 32 ? 32 : len),
             entry, count);
    return -1;
  }
  if (len > 4 && strncasecmp(entry, "GPU-", 4) == 0) {
    int found = -1;
    for (int i = 0; i < count; i++)
      if (strlen(gpus[i].uuid) >= len && strncasecmp(gpus[i].uuid, entry, len) == 0) {
        if (found >= 0) {
          snprintf(why, cap, "CUDA_VISIBLE_DEVICES entry %.*s matches more than one GPU", (int)(len > 48 ? 48 : len),
                   entry);
          return -1;
        }
        found = i;
      }
    if (found < 0)
      snprintf(why, cap, "CUDA_VISIBLE_DEVICES entry %.*s matches no GPU's UUID", (int)(len > 48 ? 48 : len), entry);
    return found;
  }
  snprintf(why, cap, "CUDA_VISIBLE_DEVICES entry \"%.*s\" is not a GPU index or GPU- UUID (MIG and other forms need the driver)",
           (int)(len > 48 ? 48 : len), entry);
  return -1;
}

bool tb_nv_cuda_order(tb_cuda_gpu *gpus, int *count, const char *order, const char *visible, char *why, size_t cap) {
  if (cap) why[0] = '\0';
  int n = *count;
  if (!order_known(gpus, n, order, why, cap)) return false;
  if (!visible) return true;
  if (!visible[0]) {
    snprintf(why, cap, "CUDA_VISIBLE_DEVICES is empty");
    return false;
  }
  int picked[64];
  int k = 0;
  for (const char *p = visible;; p++) {
    size_t len = strcspn(p, ",");
    if (k == (int)(sizeof picked / sizeof picked[0])) {
      snprintf(why, cap, "CUDA_VISIBLE_DEVICES names more than %d entries", k);
      return false;
    }
    int at = resolve(gpus, n, p, len, why, cap);
    if (at < 0) return false;
    for (int j = 0; j < k; j++)
      if (picked[j] == at) {
        snprintf(why, cap, "CUDA_VISIBLE_DEVICES names %s twice", gpus[at].bus_id);
        return false;
      }
    picked[k++] = at;
    p += len;
    if (!*p) break;
  }
  tb_cuda_gpu *sorted = malloc((size_t)k * sizeof *sorted);
  if (!sorted) {
    snprintf(why, cap, "out of host memory");
    return false;
  }
  for (int j = 0; j < k; j++) sorted[j] = gpus[picked[j]];
  memcpy(gpus, sorted, (size_t)k * sizeof *sorted);
  free(sorted);
  *count = k;
  return true;
}
