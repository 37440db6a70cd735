/* Internal: an opened OpenCL device: the runtime, the cl_device_id found again from discovery's
 * numbering, its context and in-order queue, and the limits the memory ops need. */
#ifndef TB_BACKEND_OPENCL_CL_DEVICE_H
#define TB_BACKEND_OPENCL_CL_DEVICE_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <tensorbridge/device.h>
#include <tensorbridge/status.h>
#include "runtime/opencl_exec_loader.h"

typedef struct tb_cl_device {
  tb_cl_runtime rt;
  tb_cl_platform_id platform;
  tb_cl_device_id id;
  tb_cl_context context;
  tb_cl_command_queue queue;
  char label[192];         /* "opencl:0 (pthread-skylake-avx512-AMD EPYC)", for messages */
  int version_major;       /* CL_DEVICE_VERSION, e.g. 3.0 */
  int version_minor;
  tb_cl_ulong global_mem;  /* CL_DEVICE_GLOBAL_MEM_SIZE */
  tb_cl_ulong max_alloc;   /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
  size_t alignment;        /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes */
  bool amd_free_memory;    /* cl_amd_device_attribute_query: CL_DEVICE_GLOBAL_FREE_MEMORY_AMD */
  bool fill;               /* clEnqueueFillBuffer usable (OpenCL 1.2+ and exported) */
  bool host_memory;        /* a CPU device or unified host memory (PoCL): buffers are host memory, which
                              the driver takes lazily and, when the host has none left, asserts on */
  _Atomic(uint64_t) live_bytes; /* bytes in buffers this backend holds: drivers allocate lazily (PoCL,
                                   NVIDIA), so clCreateBuffer alone does not refuse more than the device has */
  /* Model execution (cl_program.c, kernels/): */
  char device_name[128];   /* CL_DEVICE_NAME and CL_DRIVER_VERSION, for the program cache key */
  char driver_version[96];
  size_t max_work_group;   /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  bool fp16;               /* cl_khr_fp16 */
  bool lock_made;
  pthread_mutex_t program_lock; /* guards program and used_clblast */
  tb_cl_program program;   /* the kernels' program, built (or loaded from the disk cache) on first use */
  bool used_clblast;       /* CLBlast ran on this context: its cache is cleared when the context goes */
  /* The queue after a command on it failed for lack of memory or resources, or a CLBlast call failed:
   * its state is unknown (PoCL can leave it waiting forever), so nothing is enqueued on it again and
   * neither synchronize nor close calls clFinish on it (cl_queue.c). */
  _Atomic(int) queue_failed; /* 0, or the code that broke it */
  char queue_failed_why[320];
} tb_cl_device;

/* Find the device discovery numbered `info->index` (opencl:N across platforms), check it still has the
 * name discovery saw, and create a context and an in-order queue on it. On failure everything made
 * is released and the message names the device, the call and its code. */
tb_status tb_cl_device_open(const tb_device_info *info, tb_cl_device *dev);
/* Release the queue, the context and the runtime handle. */
void tb_cl_device_close(tb_cl_device *dev);

/* Record a failed OpenCL call as this thread's error: "<label>: <call> (<detail>) failed with -5
 * CL_OUT_OF_RESOURCES; <fix>", with a status chosen by the code (TB_ERR_OUT_OF_MEMORY for the
 * out-of-memory codes, TB_ERR_UNAVAILABLE for CL_DEVICE_NOT_AVAILABLE, else TB_ERR_DRIVER). */
tb_status tb_cl_fail(const tb_cl_device *dev, const char *call, const char *detail, tb_cl_int code);
/* tb_cl_fail for a call on the queue (an enqueue, a wait, clFinish): out of host memory, after which the
 * queue's state is unknown, marks it failed, once, with the sentence (and a warning in the log). CLBlast
 * marks it also for its out-of-resources failures (tb_cl_queue_mark_failed). */
tb_status tb_cl_queue_fail(tb_cl_device *dev, const char *call, const char *detail, tb_cl_int code);
/* TB_OK while the queue works; else TB_ERR_DRIVER (out of memory: TB_ERR_OUT_OF_MEMORY) naming what broke
 * it and the fix (destroy the backend, free memory, create it again). Every use of the queue checks it. */
tb_status tb_cl_queue_check(const tb_cl_device *dev, const char *what);
/* Mark the queue failed with the sentence tb_last_error() holds now (the first failure wins); code 0 is
 * recorded as -1. */
void tb_cl_queue_mark_failed(tb_cl_device *dev, tb_cl_int code);

/* "-11 CL_BUILD_PROGRAM_FAILURE": the probe's names plus the program and kernel codes. */
void tb_cl_exec_code_text(tb_cl_int code, char *out, size_t cap);

#endif
