/* The OpenCL queue's failed state: after a command failed for lack of host or device memory (or CLBlast
 * failed part-way), the queue is never used again, and no clFinish waits on it: PoCL can leave such a queue
 * with commands that never complete, and a clFinish at close then hangs the process. */
#include <stdio.h>
#include <string.h>
#include "backend/opencl/cl_device.h"
#include "core/env.h"
#include "core/error.h"

/* Out of host memory inside the driver: the queue's state is unknown (PoCL then never finishes it). Other
 * failures (out of device memory or resources, a failed copy) leave a queue that goes on. */
static bool breaks_queue(tb_cl_int code) { return code == TB_CL_OUT_OF_HOST_MEMORY; }

void tb_cl_queue_mark_failed(tb_cl_device *dev, tb_cl_int code) {
  int none = 0;
  if (!atomic_compare_exchange_strong(&dev->queue_failed, &none, code ? (int)code : -1)) return;
  tb_log(TB_LOG_WARN, "%s: the command queue is not used again after: %s", dev->label, tb_last_error());
  snprintf(dev->queue_failed_why, sizeof dev->queue_failed_why, "%s", tb_last_error());
}

tb_status tb_cl_queue_fail(tb_cl_device *dev, const char *call, const char *detail, tb_cl_int code) {
  tb_status st = tb_cl_fail(dev, call, detail, code);
  if (breaks_queue(code)) tb_cl_queue_mark_failed(dev, code);
  return st;
}

tb_status tb_cl_queue_check(const tb_cl_device *dev, const char *what) {
  int code = atomic_load(&dev->queue_failed);
  if (!code) return TB_OK;
  tb_status st = code == TB_CL_OUT_OF_HOST_MEMORY || code == TB_CL_OUT_OF_RESOURCES || code == TB_CL_MEM_OBJECT_ALLOCATION_FAILURE
                     ? TB_ERR_OUT_OF_MEMORY
                     : TB_ERR_DRIVER;
  return tb_error(st, "%s: %s refused: the device's command queue failed earlier (%s) and is not used again; destroy "
                  "this backend, free memory, and create it again", dev->label, what, dev->queue_failed_why);
}
