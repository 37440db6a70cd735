/* Internal: the device-memory ops that the CUDA, HIP and Level Zero backends share. Each vendor fills a
 * small table (tb_devmem_vendor) with its driver calls; the shared ops (tb_devmem_alloc ... memory_info)
 * check ranges and fill patterns, skip empty transfers and call the table. A vendor's state starts with a
 * tb_devmem_state, so the shared ops find the table and the device's label ("cuda:0") in it. */
#ifndef TB_BACKEND_DEVMEM_OPS_H
#define TB_BACKEND_DEVMEM_OPS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/backend_impl.h"

typedef enum tb_devmem_direction {
  TB_DEVMEM_HOST_TO_DEVICE = 1,
  TB_DEVMEM_DEVICE_TO_HOST = 2,
  TB_DEVMEM_DEVICE_TO_DEVICE = 3,
} tb_devmem_direction;

/* One vendor's driver calls. Addresses are device (or, for one side of a host copy, host) addresses as
 * integers. Every call that fails returns its status with the sentence already set (tb_devmem_call_failed). */
typedef struct tb_devmem_vendor {
  size_t alignment;      /* of every allocation, in bytes */
  bool fill_any_pattern; /* fill takes 1-, 2-, 4- and 8-byte patterns at any address; else 1/2/4 aligned */
  tb_status (*alloc)(void *state, size_t bytes, uintptr_t *out);
  void (*free)(void *state, uintptr_t address);
  /* `offset` is the device-side offset of the transfer (the destination's for device to device). */
  tb_status (*copy)(void *state, tb_devmem_direction direction, uintptr_t dst, uintptr_t src, size_t bytes,
                    size_t offset);
  tb_status (*fill)(void *state, uintptr_t at, const unsigned char *pattern, size_t pattern_size, size_t bytes,
                    size_t offset);
  tb_status (*synchronize)(void *state);
  tb_status (*memory_info)(void *state, uint64_t *free_bytes, uint64_t *total_bytes);
  /* The code as the sentence shows it ("700 CUDA_ERROR_ILLEGAL_ADDRESS"), and whether it means out of memory. */
  void (*error_name)(const void *state, int64_t code, char *out, size_t size);
  bool (*out_of_memory)(int64_t code);
  /* Whether [address, address + bytes) is one allocation's memory on this device (managed: managed memory),
   * asked of the driver's pointer attributes; NULL when the vendor cannot wrap foreign memory (then
   * `foreign_refusal` says why, for the sentence). */
  tb_status (*check_foreign)(void *state, uintptr_t address, size_t bytes, bool managed);
  const char *foreign_refusal;
} tb_devmem_vendor;

typedef struct tb_devmem_state {
  const tb_devmem_vendor *vendor;
  char label[64]; /* the device, "cuda:0" */
} tb_devmem_state;

/* A failed driver call: "<label>: <call>[ <what>] failed with <code and name><then>", TB_ERR_OUT_OF_MEMORY
 * when the vendor's table says the code means that, else TB_ERR_DRIVER. */
tb_status tb_devmem_call_failed(const tb_devmem_state *s, const char *call, const char *what, int64_t code,
                                const char *then);

/* The shared ops, for a vendor's tb_backend_ops table (TB_DEVMEM_OPS sets all of them). */
size_t tb_devmem_alignment(void *state);
tb_status tb_devmem_alloc(void *state, size_t bytes, tb_devmem *out);
void tb_devmem_free(void *state, tb_devmem mem);
tb_status tb_devmem_write(void *state, tb_devmem dst, size_t dst_offset, const void *src, size_t bytes);
tb_status tb_devmem_read(void *state, tb_devmem src, size_t src_offset, void *dst, size_t bytes);
tb_status tb_devmem_copy(void *state, tb_devmem dst, size_t dst_offset, tb_devmem src, size_t src_offset,
                         size_t bytes);
tb_status tb_devmem_fill(void *state, tb_devmem dst, size_t offset, const void *pattern, size_t pattern_size,
                         size_t bytes);
tb_status tb_devmem_synchronize(void *state);
tb_status tb_devmem_memory_info(void *state, uint64_t *free_bytes, uint64_t *total_bytes);
tb_status tb_devmem_wrap_foreign(void *state, uintptr_t address, size_t bytes, bool managed, tb_devmem *out);

/* The memory members of a vendor's tb_backend_ops initializer. */
#define TB_DEVMEM_OPS                                                                                          \
  .alignment = tb_devmem_alignment, .alloc = tb_devmem_alloc, .free = tb_devmem_free, .write = tb_devmem_write, \
  .read = tb_devmem_read, .copy = tb_devmem_copy, .fill = tb_devmem_fill, .synchronize = tb_devmem_synchronize, \
  .memory_info = tb_devmem_memory_info, .wrap_foreign = tb_devmem_wrap_foreign

#endif
