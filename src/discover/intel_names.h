/* Internal: product names of Intel GPUs by PCI device id, for GPUs that Level Zero does not name (no runtime
 * installed, no driver bound). Architecture never comes from here: it comes from the capability table. */
#ifndef TB_DISCOVER_INTEL_NAMES_H
#define TB_DISCOVER_INTEL_NAMES_H
#include <stdint.h>

/* "Intel Data Center GPU Max 1550" for 0x0bd5; NULL for an id not in the table. */
const char *tb_intel_gpu_name(uint16_t device_id);

#endif
