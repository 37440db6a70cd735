/* A fake ROCm SMI (librocm_smi64.so) for the ROCm probe's tests: the 8 GPUs of tests/fixtures/mi300x in
 * reverse order (so the probe must match by PCI bus id), each with 192 GiB of VRAM of which the GPU at
 * KFD position i (0-based, bus order) uses i+1 GiB. Behaviour is read from the environment at every call:
 *   FAKE_RSMI_MODE  ok (default) | init_error (rsmi_init returns 8 RSMI_STATUS_INIT_ERROR) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_once.h"

FAKE_ONCE("FAKE_LOADED_ROCM_SMI", "fake_rocm_smi")

enum { RSMI_STATUS_SUCCESS = 0, RSMI_STATUS_INVALID_ARGS = 1, RSMI_STATUS_NOT_SUPPORTED = 2, RSMI_STATUS_INIT_ERROR = 8 };

static const unsigned buses[] = {0x05, 0x26, 0x46, 0x65, 0x85, 0xa6, 0xc6, 0xe5};
#define COUNT 8u
#define VRAM 206158430208ull

uint32_t rsmi_init(uint64_t flags);
uint32_t rsmi_shut_down(void);
uint32_t rsmi_num_monitor_devices(uint32_t *count);
uint32_t rsmi_dev_pci_id_get(uint32_t index, uint64_t *bdfid);
uint32_t rsmi_dev_memory_total_get(uint32_t index, int memory_type, uint64_t *bytes);
uint32_t rsmi_dev_memory_usage_get(uint32_t index, int memory_type, uint64_t *bytes);
uint32_t rsmi_version_str_get(int component, char *text, uint32_t len);

/* SMI index i is KFD position COUNT-1-i. */
static unsigned kfd_position(uint32_t index) { return COUNT - 1u - index; }

uint32_t rsmi_init(uint64_t flags) {
  (void)flags;
  const char *mode = getenv("FAKE_RSMI_MODE");
  return mode && strcmp(mode, "init_error") == 0 ? RSMI_STATUS_INIT_ERROR : RSMI_STATUS_SUCCESS;
}

uint32_t rsmi_shut_down(void) { return RSMI_STATUS_SUCCESS; }

uint32_t rsmi_num_monitor_devices(uint32_t *count) {
  if (!count) return RSMI_STATUS_INVALID_ARGS;
  *count = COUNT;
  return RSMI_STATUS_SUCCESS;
}

uint32_t rsmi_dev_pci_id_get(uint32_t index, uint64_t *bdfid) {
  if (!bdfid || index >= COUNT) return RSMI_STATUS_INVALID_ARGS;
  *bdfid = (uint64_t)buses[kfd_position(index)] << 8;
  return RSMI_STATUS_SUCCESS;
}

uint32_t rsmi_dev_memory_total_get(uint32_t index, int memory_type, uint64_t *bytes) {
  if (!bytes || index >= COUNT) return RSMI_STATUS_INVALID_ARGS;
  if (memory_type != 0) return RSMI_STATUS_NOT_SUPPORTED;
  *bytes = VRAM;
  return RSMI_STATUS_SUCCESS;
}

uint32_t rsmi_dev_memory_usage_get(uint32_t index, int memory_type, uint64_t *bytes) {
  if (!bytes || index >= COUNT) return RSMI_STATUS_INVALID_ARGS;
  if (memory_type != 0) return RSMI_STATUS_NOT_SUPPORTED;
  *bytes = ((uint64_t)kfd_position(index) + 1u) << 30;
  return RSMI_STATUS_SUCCESS;
}

uint32_t rsmi_version_str_get(int component, char *text, uint32_t len) {
  if (component != 0 || !text || len == 0) return RSMI_STATUS_INVALID_ARGS;
  snprintf(text, len, "6.8.5");
  return RSMI_STATUS_SUCCESS;
}
