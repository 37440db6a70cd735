/* Internal: the CUDA backend's open state, shared by its memory ops (cuda_memory.c), its events
 * (cuda_event.c), its kernels' module (cuda_module.c) and their launches (cuda_launch.c). */
#ifndef TB_BACKEND_CUDA_STATE_H
#define TB_BACKEND_CUDA_STATE_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/backend_impl.h"
#include "backend/devmem_ops.h"
#include "runtime/nvidia_cuda_api.h"

typedef struct cuda_state {
  tb_devmem_state base; /* first: the shared ops' table and the label, "cuda:0" */
  tb_cuda_api api;
  void *lib;
  tb_cu_device device;
  tb_cu_context ctx;
  tb_cu_stream stream;
  pthread_mutex_t module_lock; /* guards module: loaded on first use (cuda_module.c), unloaded at close */
  tb_cu_module module;
  int sm_count; /* multiprocessors (attribute 16), read at open: sizes the launch grids (cuda_launch.c) */
  pthread_mutex_t dnn_lock; /* guards dnn and dnn_tried: cuDNN's handle, opened on the first convolution
                               (kernels/cuda_conv_dnn.c), destroyed at close */
  struct tb_cuda_dnn *dnn;  /* NULL: cuDNN absent or unusable (convolutions run on the own kernels) */
  bool dnn_tried;
} cuda_state;

/* Native events on the backend's stream (cuda_event.c); the ops' event_* entries. */
tb_status tb_cuda_event_create(void *state, void **out_event);
tb_status tb_cuda_event_record(void *state, void *event);
tb_status tb_cuda_event_synchronize(void *state, void *event);
tb_status tb_cuda_event_query(void *state, void *event, bool *done);
tb_status tb_cuda_event_elapsed_ms(void *state, void *start, void *end, double *ms, bool *measured);
void tb_cuda_event_destroy(void *state, void *event);

/* Device memory another library allocated, checked with the driver's pointer attributes (cuda_foreign.c);
 * the vendor table's check_foreign. */
tb_status tb_cuda_check_foreign(void *state, uintptr_t address, size_t bytes, bool managed);

#endif
