/* The OpenCL backend's native events: recording enqueues a marker on the device's in-order queue
 * (clEnqueueMarkerWithWaitList with no wait list: it completes when everything before it has), waiting
 * is clWaitForEvents, polling reads CL_EVENT_COMMAND_EXECUTION_STATUS. Elapsed time is the markers'
 * CL_PROFILING_COMMAND_END when the queue was made with profiling. Without profiling, recording also
 * waits for the marker and takes a host time stamp, as the host events of event.c do: exact, and cheap,
 * because the backend's copies all block, so only the marker itself is waited for (drivers such as PoCL
 * complete a marker on their own thread, a little after it is enqueued). An event not yet recorded holds
 * no cl_event. */
#include <stdlib.h>
#include <time.h>
#include "backend/opencl/cl_device.h"
#include "backend/opencl/cl_event.h"
#include "core/error.h"

typedef struct cl_marker {
  tb_cl_event event; /* the last marker enqueued; NULL before the first record */
  bool stamped;      /* host_ms is set for this marker */
  double host_ms;    /* CLOCK_MONOTONIC in ms when the marker was first seen complete */
} cl_marker;

static void stamp(cl_marker *m) {
  if (m->stamped) return;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  m->host_ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
  m->stamped = true;
}

static tb_status have_symbols(const tb_cl_device *dev) {
  const char *missing = !dev->rt.cl.clEnqueueMarkerWithWaitList ? "clEnqueueMarkerWithWaitList"
                        : !dev->rt.cl.clGetEventInfo            ? "clGetEventInfo"
                                                                : NULL;
  if (!missing) return TB_OK;
  return tb_error(TB_ERR_UNSUPPORTED,
                  "%s: %s does not export %s (OpenCL 1.2), which events need; install an OpenCL 1.2 or newer ICD "
                  "loader (ocl-icd-libopencl1) or point TB_OPENCL_LIB at one",
                  dev->label, dev->rt.path, missing);
}

tb_status tb_cl_event_create(void *state, void **out_event) {
  tb_cl_device *dev = state;
  tb_status st = have_symbols(dev);
  if (st != TB_OK) return st;
  cl_marker *m = calloc(1, sizeof *m);
  if (!m) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory creating an event", dev->label);
  *out_event = m;
  return TB_OK;
}

static bool queue_profiles(const tb_cl_device *dev) {
  tb_cl_bitfield props = 0;
  return dev->rt.cl.clGetCommandQueueInfo &&
         dev->rt.cl.clGetCommandQueueInfo(dev->queue, TB_CL_QUEUE_PROPERTIES, sizeof props, &props, NULL) ==
             TB_CL_SUCCESS &&
         (props & TB_CL_QUEUE_PROFILING_ENABLE);
}

tb_status tb_cl_event_record(void *state, void *event) {
  tb_cl_device *dev = state;
  cl_marker *m = event;
  tb_cl_event marker = NULL;
  tb_status s = tb_cl_queue_check(dev, "an event record");
  if (s != TB_OK) return s;
  tb_cl_int err = dev->rt.cl.clEnqueueMarkerWithWaitList(dev->queue, 0, NULL, &marker);
  if (err != TB_CL_SUCCESS) return tb_cl_queue_fail(dev, "clEnqueueMarkerWithWaitList", "", err);
  if (m->event) dev->rt.cl.clReleaseEvent(m->event);
  m->event = marker;
  m->stamped = false;
  if (queue_profiles(dev)) return TB_OK;
  return tb_cl_event_synchronize(dev, m);
}

tb_status tb_cl_event_synchronize(void *state, void *event) {
  tb_cl_device *dev = state;
  cl_marker *m = event;
  tb_status s = tb_cl_queue_check(dev, "an event wait");
  if (s != TB_OK) return s;
  tb_cl_int err = dev->rt.cl.clWaitForEvents(1, &m->event);
  if (err != TB_CL_SUCCESS) return tb_cl_queue_fail(dev, "clWaitForEvents", "the event's marker", err);
  stamp(m);
  return TB_OK;
}

tb_status tb_cl_event_query(void *state, void *event, bool *done) {
  tb_cl_device *dev = state;
  cl_marker *m = event;
  tb_cl_int status = 1; /* CL_RUNNING until the driver says otherwise */
  tb_cl_int err =
      dev->rt.cl.clGetEventInfo(m->event, TB_CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  if (err != TB_CL_SUCCESS) return tb_cl_fail(dev, "clGetEventInfo", "CL_EVENT_COMMAND_EXECUTION_STATUS", err);
  /* A negative status is the error that ended the commands before the marker. */
  if (status < 0) return tb_cl_queue_fail(dev, "the event's marker", "CL_EVENT_COMMAND_EXECUTION_STATUS", status);
  *done = status == TB_CL_COMPLETE;
  if (*done) stamp(m);
  return TB_OK;
}

/* The device's clock at the end of each marker, when the queue profiles and the driver answers;
 * otherwise *measured stays false and the host time stamps are used. */
tb_status tb_cl_event_elapsed_ms(void *state, void *start, void *end, double *ms, bool *measured) {
  tb_cl_device *dev = state;
  cl_marker *a = start, *b = end;
  tb_cl_ulong t0 = 0, t1 = 0;
  if (dev->rt.cl.clGetEventProfilingInfo && queue_profiles(dev) &&
      dev->rt.cl.clGetEventProfilingInfo(a->event, TB_CL_PROFILING_COMMAND_END, sizeof t0, &t0, NULL) == TB_CL_SUCCESS &&
      dev->rt.cl.clGetEventProfilingInfo(b->event, TB_CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == TB_CL_SUCCESS) {
    *ms = ((double)t1 - (double)t0) / 1e6;
    *measured = true;
    return TB_OK;
  }
  /* No profiling (or CL_PROFILING_INFO_NOT_AVAILABLE for markers, as some drivers answer): host stamps,
   * set at record, or at the generic layer's completion checks. */
  *measured = a->stamped && b->stamped;
  if (*measured) *ms = b->host_ms - a->host_ms;
  return TB_OK;
}

void tb_cl_event_destroy(void *state, void *event) {
  tb_cl_device *dev = state;
  cl_marker *m = event;
  if (m->event) dev->rt.cl.clReleaseEvent(m->event);
  free(m);
}
