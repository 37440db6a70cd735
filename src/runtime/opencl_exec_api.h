/* Internal: the OpenCL types, constants and entry points the OpenCL backend needs beyond the probe's
 * info queries (runtime/opencl_api.h): contexts, queues, buffers, copies. Declared here so no
 * OpenCL SDK is needed to build; values are those of the Khronos cl.h (checked against it in
 * tests/unit/test_opencl_memory_api.c when the header is installed). */
#ifndef TB_RUNTIME_OPENCL_EXEC_API_H
#define TB_RUNTIME_OPENCL_EXEC_API_H
#include <stddef.h>
#include <stdint.h>
/* relative, so tests/fakes/fake_opencl.c can include this header without src/ on its include path */
#include "opencl_api.h"

typedef struct tb_cl_context_st *tb_cl_context;
typedef struct tb_cl_command_queue_st *tb_cl_command_queue;
typedef struct tb_cl_mem_st *tb_cl_mem;
typedef struct tb_cl_event_st *tb_cl_event;
typedef struct tb_cl_program_st *tb_cl_program;
typedef struct tb_cl_kernel_st *tb_cl_kernel;
typedef void (*tb_cl_build_notify)(tb_cl_program program, void *user_data);
typedef intptr_t tb_cl_context_properties;
typedef tb_cl_bitfield tb_cl_queue_properties;
typedef tb_cl_bitfield tb_cl_command_queue_properties;
typedef tb_cl_bitfield tb_cl_mem_flags;
typedef void (*tb_cl_context_notify)(const char *errinfo, const void *private_info, size_t cb, void *user_data);

#define TB_CL_TRUE 1u

/* Error codes the backend treats specially */
#define TB_CL_DEVICE_NOT_AVAILABLE (-2)
#define TB_CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)
#define TB_CL_OUT_OF_RESOURCES (-5)
#define TB_CL_OUT_OF_HOST_MEMORY (-6)
#define TB_CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (-14)
#define TB_CL_INVALID_BUFFER_SIZE (-61)
#define TB_CL_BUILD_PROGRAM_FAILURE (-11)
#define TB_CL_INVALID_BINARY (-42)

/* Programs: clGetProgramInfo, clGetProgramBuildInfo */
#define TB_CL_PROGRAM_BINARY_SIZES 0x1165u
#define TB_CL_PROGRAM_BINARIES 0x1166u
#define TB_CL_PROGRAM_BUILD_LOG 0x1183u

/* clGetDeviceInfo */
#define TB_CL_DEVICE_MEM_BASE_ADDR_ALIGN 0x1019u
#define TB_CL_DEVICE_PLATFORM 0x1031u

/* clCreateContext */
#define TB_CL_CONTEXT_PLATFORM 0x1084

/* clCreateBuffer */
#define TB_CL_MEM_READ_WRITE (1u << 0)

/* Events: clGetEventInfo, clGetEventProfilingInfo, clGetCommandQueueInfo */
#define TB_CL_EVENT_COMMAND_EXECUTION_STATUS 0x11D3u
#define TB_CL_COMPLETE 0
#define TB_CL_PROFILING_COMMAND_END 0x1283u
#define TB_CL_QUEUE_PROPERTIES 0x1093u
#define TB_CL_QUEUE_PROFILING_ENABLE (1u << 1)

/* Entry points: name, return type, arguments, optional (absent from old loaders: 1.1 has no
 * clEnqueueFillBuffer nor clEnqueueMarkerWithWaitList (events then fail naming it), 1.x none of the 2.0 queue call, and 3.0 loaders may drop the deprecated one).
 * The program and kernel calls are optional too: without them the backend still moves memory and every
 * node runs on the CPU (find_kernel says why). */
#define TB_CL_EXEC_SYMBOLS(X)                                                                                  \
  X(clCreateContext, tb_cl_context,                                                                            \
    (const tb_cl_context_properties *, tb_cl_uint, const tb_cl_device_id *, tb_cl_context_notify, void *, tb_cl_int *), false) \
  X(clReleaseContext, tb_cl_int, (tb_cl_context), false)                                                       \
  X(clCreateCommandQueue, tb_cl_command_queue, (tb_cl_context, tb_cl_device_id, tb_cl_command_queue_properties, tb_cl_int *), true) \
  X(clCreateCommandQueueWithProperties, tb_cl_command_queue,                                                   \
    (tb_cl_context, tb_cl_device_id, const tb_cl_queue_properties *, tb_cl_int *), true)                      \
  X(clReleaseCommandQueue, tb_cl_int, (tb_cl_command_queue), false)                                            \
  X(clCreateBuffer, tb_cl_mem, (tb_cl_context, tb_cl_mem_flags, size_t, void *, tb_cl_int *), false)           \
  X(clReleaseMemObject, tb_cl_int, (tb_cl_mem), false)                                                         \
  X(clEnqueueWriteBuffer, tb_cl_int,                                                                           \
    (tb_cl_command_queue, tb_cl_mem, tb_cl_bool, size_t, size_t, const void *, tb_cl_uint, const tb_cl_event *, tb_cl_event *), false) \
  X(clEnqueueReadBuffer, tb_cl_int,                                                                            \
    (tb_cl_command_queue, tb_cl_mem, tb_cl_bool, size_t, size_t, void *, tb_cl_uint, const tb_cl_event *, tb_cl_event *), false) \
  X(clEnqueueCopyBuffer, tb_cl_int,                                                                            \
    (tb_cl_command_queue, tb_cl_mem, tb_cl_mem, size_t, size_t, size_t, tb_cl_uint, const tb_cl_event *, tb_cl_event *), false) \
  X(clEnqueueFillBuffer, tb_cl_int,                                                                            \
    (tb_cl_command_queue, tb_cl_mem, const void *, size_t, size_t, size_t, tb_cl_uint, const tb_cl_event *, tb_cl_event *), true) \
  X(clWaitForEvents, tb_cl_int, (tb_cl_uint, const tb_cl_event *), false)                                      \
  X(clReleaseEvent, tb_cl_int, (tb_cl_event), false)                                                           \
  X(clFinish, tb_cl_int, (tb_cl_command_queue), false)                                                       \
  X(clEnqueueMarkerWithWaitList, tb_cl_int, (tb_cl_command_queue, tb_cl_uint, const tb_cl_event *, tb_cl_event *), true) \
  X(clGetEventInfo, tb_cl_int, (tb_cl_event, tb_cl_uint, size_t, void *, size_t *), true)                    \
  X(clGetEventProfilingInfo, tb_cl_int, (tb_cl_event, tb_cl_uint, size_t, void *, size_t *), true)           \
  X(clGetCommandQueueInfo, tb_cl_int, (tb_cl_command_queue, tb_cl_uint, size_t, void *, size_t *), true)        \
  X(clCreateProgramWithSource, tb_cl_program, (tb_cl_context, tb_cl_uint, const char **, const size_t *, tb_cl_int *), true) \
  X(clCreateProgramWithBinary, tb_cl_program,                                                                 \
    (tb_cl_context, tb_cl_uint, const tb_cl_device_id *, const size_t *, const unsigned char **, tb_cl_int *, tb_cl_int *), true) \
  X(clBuildProgram, tb_cl_int, (tb_cl_program, tb_cl_uint, const tb_cl_device_id *, const char *, tb_cl_build_notify, void *), true) \
  X(clGetProgramBuildInfo, tb_cl_int, (tb_cl_program, tb_cl_device_id, tb_cl_uint, size_t, void *, size_t *), true) \
  X(clGetProgramInfo, tb_cl_int, (tb_cl_program, tb_cl_uint, size_t, void *, size_t *), true)                \
  X(clReleaseProgram, tb_cl_int, (tb_cl_program), true)                                                        \
  X(clCreateKernel, tb_cl_kernel, (tb_cl_program, const char *, tb_cl_int *), true)                           \
  X(clReleaseKernel, tb_cl_int, (tb_cl_kernel), true)                                                          \
  X(clSetKernelArg, tb_cl_int, (tb_cl_kernel, tb_cl_uint, size_t, const void *), true)                         \
  X(clEnqueueNDRangeKernel, tb_cl_int,                                                                         \
    (tb_cl_command_queue, tb_cl_kernel, tb_cl_uint, const size_t *, const size_t *, const size_t *, tb_cl_uint, const tb_cl_event *, tb_cl_event *), true)

typedef struct tb_cl_exec_api {
#define TB_CL_EXEC_FIELD(name, ret, args, optional) ret(*name) args;
  TB_CL_EXEC_SYMBOLS(TB_CL_EXEC_FIELD)
#undef TB_CL_EXEC_FIELD
} tb_cl_exec_api;

#endif
