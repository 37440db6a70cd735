/* Internal: the Level Zero backend's open state, shared by its memory ops (ze_memory.c) and its events
 * (ze_event.c). */
#ifndef TB_BACKEND_ZE_STATE_H
#define TB_BACKEND_ZE_STATE_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "backend/backend_impl.h"
#include "backend/devmem_ops.h"
#include "runtime/intel_ze_api.h"
#include "discover/intel_zes.h"

typedef struct ze_state {
  tb_devmem_state base; /* first: the shared ops' table and the label, "xpu:0" */
  ze_api api;
  void *lib;
  void *driver, *device, *context, *list;
  pthread_mutex_t lock; /* guards the command list */
  uint64_t total;
  bool total_known;
  tb_ze_device sysman_key; /* bus id and tile of the device, to find it in Sysman */
  char library[512];
} ze_state;

/* Native events signalled from the immediate command list (ze_event.c); the ops' event_* entries.
 * Elapsed time is left to the generic layer's host time stamps. */
tb_status tb_ze_event_create(void *state, void **out_event);
tb_status tb_ze_event_record(void *state, void *event);
tb_status tb_ze_event_synchronize(void *state, void *event);
tb_status tb_ze_event_query(void *state, void *event, bool *done);
void tb_ze_event_destroy(void *state, void *event);

#endif
