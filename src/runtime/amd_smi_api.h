/* Internal: ROCm SMI's entry points (librocm_smi64.so, or TB_ROCM_SMI_LIB) as one dlopen symbol table for
 * the ROCm probe, with the prototypes and enum values of rocm_smi_lib's include/rocm_smi/rocm_smi.h, so no
 * ROCm SDK is needed to build. */
#ifndef TB_RUNTIME_AMD_SMI_API_H
#define TB_RUNTIME_AMD_SMI_API_H
#include <stddef.h>
#include <stdint.h>
#include "core/dl.h"

enum { TB_RSMI_STATUS_SUCCESS = 0, TB_RSMI_MEM_TYPE_VRAM = 0, TB_RSMI_SW_COMP_DRIVER = 0 };

typedef uint32_t (*tb_rsmi_init_fn)(uint64_t flags);
typedef uint32_t (*tb_rsmi_shut_down_fn)(void);
typedef uint32_t (*tb_rsmi_count_fn)(uint32_t *count);
typedef uint32_t (*tb_rsmi_pci_id_fn)(uint32_t index, uint64_t *bdfid);
typedef uint32_t (*tb_rsmi_memory_fn)(uint32_t index, int memory_type, uint64_t *bytes);
typedef uint32_t (*tb_rsmi_version_str_fn)(int component, char *text, uint32_t len);

/* X(symbol, type, optional) */
#define TB_RSMI_SYMBOLS(X)                               \
  X(rsmi_init, tb_rsmi_init_fn, false)                   \
  X(rsmi_shut_down, tb_rsmi_shut_down_fn, false)         \
  X(rsmi_num_monitor_devices, tb_rsmi_count_fn, false)   \
  X(rsmi_dev_pci_id_get, tb_rsmi_pci_id_fn, false)       \
  X(rsmi_dev_memory_total_get, tb_rsmi_memory_fn, false) \
  X(rsmi_dev_memory_usage_get, tb_rsmi_memory_fn, false) \
  X(rsmi_version_str_get, tb_rsmi_version_str_fn, true)

typedef struct tb_rsmi_api {
#define TB_RSMI_FIELD(name, type, optional) type name;
  TB_RSMI_SYMBOLS(TB_RSMI_FIELD)
#undef TB_RSMI_FIELD
} tb_rsmi_api;

/* Open ROCm SMI and resolve the table. NULL when the library is missing (`missing` is "", *dl says why) or
 * lacks an entry point (named in `missing`; the table is zeroed). */
void *tb_rsmi_api_open(tb_rsmi_api *api, tb_dl_result *dl, char *missing, size_t cap);

/* "RSMI_STATUS_INIT_ERROR" for 8; "RSMI_STATUS_?" for unknown codes. */
const char *tb_smi_status_name(uint32_t status);

#endif
