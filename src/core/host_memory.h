/* Internal: how much more host memory this process can take now: the smaller of MemAvailable
 * (/proc/meminfo) and what its address-space limit (RLIMIT_AS) leaves above its current size
 * (/proc/self/statm), both read under TB_FSROOT. */
#ifndef TB_CORE_HOST_MEMORY_H
#define TB_CORE_HOST_MEMORY_H
#include <stdbool.h>
#include <stdint.h>

/* false when neither figure is known (then *bytes is UINT64_MAX). */
bool tb_host_memory_room(uint64_t *bytes);

#endif
