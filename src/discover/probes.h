/* Internal: one probe per backend, each in its own file. A probe is cheap and side-effect free: it
 * adds every device it sees to the list, usable or not (with a reason and a fix when not), and
 * records what it tried in the backend's report. It never fails as a whole. */
#ifndef TB_DISCOVER_PROBES_H
#define TB_DISCOVER_PROBES_H
#include "discover/devlist.h"

void tb_probe_cpu(tb_device_list *list);    /* cpu.c */
void tb_probe_cuda(tb_device_list *list);   /* nvidia.c */
void tb_probe_rocm(tb_device_list *list);   /* amd.c */
void tb_probe_xpu(tb_device_list *list);    /* intel.c */
void tb_probe_tpu(tb_device_list *list);    /* tpu.c */
void tb_probe_vulkan(tb_device_list *list); /* vulkan.c */
void tb_probe_opencl(tb_device_list *list); /* opencl.c */

#endif
