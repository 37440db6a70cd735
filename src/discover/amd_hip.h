/* Internal: asking the HIP runtime (libamdhip64.so, opened with dlopen) which AMD GPUs it can use, with
 * name, PCI bus id, memory and compute units of each. No context is created and no device is set. */
#ifndef TB_DISCOVER_AMD_HIP_H
#define TB_DISCOVER_AMD_HIP_H
#include <stdbool.h>
#include <stdint.h>
#include "core/dl.h"
#include "discover/devlist.h"

typedef struct tb_hip_device {
  int ordinal;           /* the HIP device index: "rocm:<ordinal>" */
  char name[256];        /* hipDeviceGetName, "" when it failed */
  char bus_id[16];       /* normalized "0000:05:00.0", "" when unknown */
  bool total_known;
  uint64_t total_mem;    /* hipDeviceTotalMem */
  int compute_units;     /* hipDeviceAttributeMultiprocessorCount; 0 unknown */
  int integrated;        /* hipDeviceAttributeIntegrated: 1 APU, 0 discrete, -1 unknown */
  int clock_khz;         /* hipDeviceAttributeClockRate; 0 unknown */
} tb_hip_device;

typedef enum tb_hip_state {
  TB_HIP_NOT_OPENED,  /* not opened: no AMD GPU in sysfs (KFD topology or PCI bus) to ask about */
  TB_HIP_NOT_FOUND,   /* the library could not be loaded */
  TB_HIP_BAD_LIBRARY, /* loaded, but a required symbol is missing */
  TB_HIP_ERROR,       /* hipInit or hipGetDeviceCount failed */
  TB_HIP_OK
} tb_hip_state;

typedef struct tb_hip_info {
  tb_hip_state state;
  tb_dl_result dl;
  char missing_symbol[128];
  const char *failed_call;  /* "hipInit" or "hipGetDeviceCount" when state is TB_HIP_ERROR */
  int error;                /* the hipError_t it returned */
  char error_name[64];      /* "hipErrorNoDevice" */
  char runtime_version[32]; /* "6.2.41134", "" unknown */
  char driver_version[32];
  int count;
  tb_hip_device *devices;
} tb_hip_info;

/* Open HIP and list its devices; every step is recorded as a check of the ROCm report. Call it only
 * when sysfs shows an AMD GPU: the runtime stays loaded once opened (core/dl.c). false only when host
 * memory runs out. */
bool tb_hip_query(tb_device_list *list, tb_hip_info *out);
void tb_hip_free(tb_hip_info *info);

#endif
