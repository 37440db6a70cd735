/* Internal: the argument checks every backend's memory ops make (ranges inside an allocation, fill
 * patterns), and the fill that goes through a host buffer for patterns a driver cannot set. */
#ifndef TB_BACKEND_DEVMEM_CHECK_H
#define TB_BACKEND_DEVMEM_CHECK_H
#include <stdbool.h>
#include <stddef.h>
#include "backend/backend_impl.h"

/* True when [offset, offset + bytes) lies inside the allocation (without overflow). */
bool tb_devmem_in_range(tb_devmem mem, size_t offset, size_t bytes);
/* TB_ERR_INVALID_ARGUMENT: "<label>: <what> of N bytes at offset O lies outside an allocation of S bytes". */
tb_status tb_devmem_range_error(const char *label, const char *what, size_t offset, size_t bytes, size_t size);
/* Both checks at once: TB_OK, or the range error for `what`. */
tb_status tb_devmem_check(const char *label, const char *what, tb_devmem mem, size_t offset, size_t bytes);
/* A fill pattern of 1, 2, 4 or 8 bytes (not NULL) and a byte count that is a multiple of it. */
tb_status tb_fill_check(const char *label, const void *pattern, size_t pattern_size, size_t bytes);

typedef tb_status (*tb_devmem_write_fn)(void *state, tb_devmem dst, size_t dst_offset, const void *src, size_t bytes);
/* Fill by writing a host buffer of the repeated pattern in chunks of at most 1 MiB through `write`. */
tb_status tb_fill_through_host(const char *label, tb_devmem_write_fn write, void *state, tb_devmem dst, size_t offset,
                               const void *pattern, size_t pattern_size, size_t bytes);

#endif
