/* Internal: the OpenCL program holding the backend's kernels (the .cl files of src/backend/opencl/kernels/, embedded
 * at build time), built once per opened device on first use and kept until the device closes. Binaries
 * go to the on-disk cache (src/core/disk_cache.h, kind "opencl") under a key derived from the device name,
 * the driver version, a hash of the OpenCL C source and the build options; a later open of the same device
 * loads the binary instead of compiling. A cache entry that fails its checksum or that the driver rejects
 * is rebuilt from source and rewritten. */
#ifndef TB_BACKEND_OPENCL_CL_PROGRAM_H
#define TB_BACKEND_OPENCL_CL_PROGRAM_H
#include <stddef.h>
#include <tensorbridge/status.h>
#include "backend/opencl/cl_device.h"

/* The device's program (built or loaded on the first call). A build failure is TB_ERR_DRIVER with the
 * device, the driver's code and the start of the build log; `who` (a node label) leads the message. */
tb_status tb_cl_program_get(tb_cl_device *dev, const char *who, tb_cl_program *out);
/* A kernel object of the program (one per node: arguments are per kernel object). */
tb_status tb_cl_kernel_create(tb_cl_device *dev, const char *who, const char *name, tb_cl_kernel *out);
/* The GEMM tile edge the program is built with (-DTB_TS): 16, or less on devices with small work-groups. */
int tb_cl_program_tile(const tb_cl_device *dev);
/* Release the device's program (at close). */
void tb_cl_program_release(tb_cl_device *dev);

/* Process-wide counters, for tests and `tb` diagnostics. */
typedef struct tb_cl_program_stats {
  unsigned long source_builds;  /* programs compiled from source */
  unsigned long cache_hits;     /* programs made from a cached binary */
  unsigned long cache_rejected; /* cache entries found corrupt or refused by the driver (then rebuilt) */
  unsigned long cache_writes;   /* binaries stored */
} tb_cl_program_stats;
void tb_cl_program_stats_get(tb_cl_program_stats *out);

/* The cache key the device's program uses (for tests and docs): "<device>-<16 hex digits>". */
void tb_cl_program_cache_key(const tb_cl_device *dev, char *buf, size_t cap);

/* Test hook: build this source instead of the embedded one (NULL: back to the embedded source). */
void tb_cl_program_test_source(const char *source);

#endif
