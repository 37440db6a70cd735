/* `tb info --memory`: the memory statistics of devices, read by creating a backend on each. */
#ifndef TB_CLI_INFO_MEMORY_H
#define TB_CLI_INFO_MEMORY_H
#include <stdbool.h>
#include <stddef.h>
#include <tensorbridge/tensorbridge.h>

/* Create a backend on each of devices[0..count), read its memory stats and print them (text, or with
 * `json` a JSON array of {"device", "memory"} objects, or {"device", "error", "status"} for a device whose
 * backend cannot be created). Returns 0 when at least one device worked, else the exit code for the
 * first failure (3 for a backend without memory support in this build). count must be > 0. */
int tbc_info_memory(const tb_device_info *const *devices, size_t count, bool json);

#endif
