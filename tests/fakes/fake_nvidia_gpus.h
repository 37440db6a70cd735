/* The GPUs that fake_cuda.so and fake_nvml.so pretend to drive, chosen by FAKE_CUDA_DEVICES
 * (h100x8, the default, mixed, or laptop). Bus ids match the fixture trees tests/fixtures/h100x8 and
 * tests/fixtures/laptop_intel_nvidia, so tests can check how the PCI and driver views merge. */
#ifndef FAKE_NVIDIA_GPUS_H
#define FAKE_NVIDIA_GPUS_H
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake_gpu {
  const char *name;
  const char *bus_id;          /* as libcuda spells it: upper-case hex */
  int cc_major, cc_minor, sm_count;
  int clock_khz, memory_clock_khz, bus_width_bits, l2_bytes, integrated;
  unsigned long long memory_total;
  unsigned char uuid[16];
} fake_gpu;

#define FAKE_H100(bus, last)                                                                   \
  {"NVIDIA H100 80GB HBM3", bus, 9, 0, 132, 1980000, 2619000, 5120, 52428800, 0, 85520809984ULL, \
   {0x8c, 0x0f, 0x3a, 0x51, 0x1d, 0x6e, 0x4b, 0x27, 0x9a, 0x33, 0x5e, 0x10, 0xc4, 0x7b, 0x20, last}}

static const fake_gpu fake_h100x8[] = {
    FAKE_H100("0000:18:00.0", 0x00), FAKE_H100("0000:2A:00.0", 0x01), FAKE_H100("0000:3A:00.0", 0x02),
    FAKE_H100("0000:5D:00.0", 0x03), FAKE_H100("0000:9A:00.0", 0x04), FAKE_H100("0000:AB:00.0", 0x05),
    FAKE_H100("0000:BA:00.0", 0x06), FAKE_H100("0000:DB:00.0", 0x07),
};

/* Two models on the h100x8 bus ids: SXM5 H100s (132 SMs) at the four upper bus ids and H100 PCIe
 * (114 SMs) at the four lower ones. Listed fastest first, as CUDA numbers them by default, so that
 * cuda:0 is 0000:9A:00.0 and bus order would be wrong. */
#define FAKE_H100_PCIE(bus, last)                                                                 \
  {"NVIDIA H100 PCIe", bus, 9, 0, 114, 1755000, 1593000, 5120, 52428800, 0, 85520809984ULL,       \
   {0x5b, 0x21, 0x07, 0xe2, 0x90, 0x4c, 0x4f, 0x1a, 0x86, 0x0d, 0x2c, 0x71, 0x3e, 0x58, 0x11, last}}

static const fake_gpu fake_mixed[] = {
    FAKE_H100("0000:9A:00.0", 0x04),      FAKE_H100("0000:AB:00.0", 0x05),      FAKE_H100("0000:BA:00.0", 0x06),
    FAKE_H100("0000:DB:00.0", 0x07),      FAKE_H100_PCIE("0000:18:00.0", 0x00), FAKE_H100_PCIE("0000:2A:00.0", 0x01),
    FAKE_H100_PCIE("0000:3A:00.0", 0x02), FAKE_H100_PCIE("0000:5D:00.0", 0x03),
};

static const fake_gpu fake_laptop[] = {
    {"NVIDIA GeForce RTX 4060 Laptop GPU", "0000:01:00.0", 8, 9, 24, 2370000, 8001000, 128, 33554432, 0,
     8585740288ULL, {0x3f, 0x6a, 0x91, 0x0c, 0x52, 0xd4, 0x47, 0x8e, 0xb1, 0x09, 0x7a, 0xe2, 0x64, 0x1d, 0xc8, 0x35}},
};

/* The selected set and its size. */
static inline const fake_gpu *fake_gpus(int *count) {
  const char *set = getenv("FAKE_CUDA_DEVICES");
  if (set && strcmp(set, "mixed") == 0) {
    *count = (int)(sizeof fake_mixed / sizeof fake_mixed[0]);
    return fake_mixed;
  }
  if (set && strcmp(set, "laptop") == 0) {
    *count = (int)(sizeof fake_laptop / sizeof fake_laptop[0]);
    return fake_laptop;
  }
  *count = (int)(sizeof fake_h100x8 / sizeof fake_h100x8[0]);
  return fake_h100x8;
}

/* The free memory NVML reports for GPU i: 1 GiB per GPU index plus one is in use. */
static inline unsigned long long fake_free_bytes(const fake_gpu *g, int i) {
  return g->memory_total - (unsigned long long)(i + 1) * 1073741824ULL;
}

#endif
