/* Internal: the OpenCL backend's native events (cl_event.c), the ops' event_* entries. */
#ifndef TB_BACKEND_OPENCL_CL_EVENT_H
#define TB_BACKEND_OPENCL_CL_EVENT_H
#include <stdbool.h>
#include <tensorbridge/status.h>

tb_status tb_cl_event_create(void *state, void **out_event);
tb_status tb_cl_event_record(void *state, void *event);
tb_status tb_cl_event_synchronize(void *state, void *event);
tb_status tb_cl_event_query(void *state, void *event, bool *done);
tb_status tb_cl_event_elapsed_ms(void *state, void *start, void *end, double *ms, bool *measured);
void tb_cl_event_destroy(void *state, void *event);

#endif
