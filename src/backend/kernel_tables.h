/* Internal: every kernel each backend declares, by index, without a device (for the operator listing,
 * tb_op_info_get). The OpenCL, Vulkan and CUDA tables are static: what a device finally runs is decided per node
 * at prepare (a kernel may refuse a node's types, a driver may fail to build it). */
#ifndef TB_BACKEND_KERNEL_TABLES_H
#define TB_BACKEND_KERNEL_TABLES_H
#include <stddef.h>
#include "backend/kernel.h"

size_t tb_cpu_kernel_count(void);
const tb_kernel *tb_cpu_kernel_at(size_t i); /* NULL past the end */
size_t tb_cl_kernel_count(void);
const tb_kernel *tb_cl_kernel_at(size_t i);
size_t tb_vk_kernel_table_count(void);
const tb_kernel *tb_vk_kernel_at(size_t i);
size_t tb_cuda_kernel_count(void);
const tb_kernel *tb_cuda_kernel_at(size_t i);

#endif
