/* Internal: the HIP backend's open state, shared by its memory ops (hip_memory.c) and its events
 * (hip_event.c). */
#ifndef TB_BACKEND_HIP_STATE_H
#define TB_BACKEND_HIP_STATE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/backend_impl.h"
#include "backend/devmem_ops.h"
#include "runtime/amd_hip_api.h"

typedef struct hip_state {
  tb_devmem_state base; /* first: the shared ops' table and the label, "rocm:0" */
  tb_hip_api api;
  void *lib;
  int device;
} hip_state;

/* Native events on the null stream (hip_event.c); the ops' event_* entries. */
tb_status tb_hip_event_create(void *state, void **out_event);
tb_status tb_hip_event_record(void *state, void *event);
tb_status tb_hip_event_synchronize(void *state, void *event);
tb_status tb_hip_event_query(void *state, void *event, bool *done);
tb_status tb_hip_event_elapsed_ms(void *state, void *start, void *end, double *ms, bool *measured);
void tb_hip_event_destroy(void *state, void *event);

/* Device memory another library allocated, checked with the runtime's pointer attributes (hip_foreign.c);
 * the vendor table's check_foreign. */
tb_status tb_hip_check_foreign(void *state, uintptr_t address, size_t bytes, bool managed);

#endif
