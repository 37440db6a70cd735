/* Internal: what the NVIDIA driver's libcuda says, read through dlopen for the NVIDIA probe: whether
 * it loads, whether it is a real driver or the toolkit's stub, and each device's properties. No CUDA
 * header is needed; the few types and prototypes are declared in nvidia_cuda.c. */
#ifndef TB_DISCOVER_NVIDIA_CUDA_H
#define TB_DISCOVER_NVIDIA_CUDA_H
#include <stdbool.h>
#include <stdint.h>
#include "core/dl.h"
#include "discover/devlist.h"
#include "runtime/nvidia_cuda_api.h"

typedef enum tb_cuda_state {
  TB_CUDA_READY,          /* cuInit succeeded and the device count is known */
  TB_CUDA_LIB_MISSING,    /* the library could not be loaded */
  TB_CUDA_SYMBOL_MISSING, /* it loaded but lacks a required symbol */
  TB_CUDA_STUB,           /* the CUDA toolkit's stub: cuInit returned CUDA_ERROR_STUB_LIBRARY */
  TB_CUDA_CALL_FAILED,    /* cuInit, cuDriverGetVersion or cuDeviceGetCount returned an error */
  TB_CUDA_NOT_OPENED      /* not opened: no NVIDIA function on the PCI bus and no /proc/driver/nvidia */
} tb_cuda_state;

typedef struct tb_cuda_gpu {
  char name[256];
  char bus_id[16];           /* normalized "0000:18:00.0"; "" when the driver did not say */
  char uuid[48];             /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; "" when unknown */
  int cc_major, cc_minor;    /* compute capability; valid only when problem is "" */
  int sm_count;              /* the following are 0 when unknown or out of range */
  int clock_khz, memory_clock_khz, bus_width_bits, l2_bytes;
  bool integrated;
  uint64_t memory_total;
  bool memory_total_known;
  char problem[384];         /* why the device cannot be used; "" when it can */
} tb_cuda_gpu;

typedef struct tb_cuda_info {
  tb_cuda_state state;
  tb_dl_result dl;           /* what was loaded or tried */
  char missing[128];         /* the required symbol that is absent */
  char failed_call[32];      /* the call that failed ("cuInit") */
  int code;                  /* its CUresult */
  char code_name[64];        /* "CUDA_ERROR_NO_DEVICE", or "CUDA error 12345" when unknown */
  int driver_version;        /* 12040 for CUDA 12.4; 0 when unknown */
  bool init_called;          /* cuInit was called (always by tb_cuda_query) */
  int count;                 /* devices the driver lists */
  tb_cuda_gpu *gpus;         /* count entries */
} tb_cuda_info;

/* Load libcuda (TB_CUDA_LIB, else libcuda.so.1 then libcuda.so), call cuInit(0), and read every
 * device, recording each step as a check of the CUDA report. Never creates a context. false only
 * when host memory runs out. Free with tb_cuda_info_free. */
bool tb_cuda_query(tb_device_list *list, tb_cuda_info *out);
/* The same without cuInit when the driver answers cuDriverGetVersion: state TB_CUDA_READY, the
 * version, count 0 and init_called false; the caller lists the devices some other way (NVML). When
 * cuDriverGetVersion fails it goes on as tb_cuda_query does, so the errors read the same. */
bool tb_cuda_open_without_init(tb_device_list *list, tb_cuda_info *out);
void tb_cuda_info_free(tb_cuda_info *info);

#endif
