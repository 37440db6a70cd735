/* The table of the control-flow kernels every backend registers (control_kernels.h). */
#include "backend/control/control_kernels.h"

const tb_kernel tb_control_kernels[TB_CONTROL_KERNEL_COUNT] = {
    {.domain = "", .name = "If", .level = TB_KERNEL_REFERENCE, .run = tb_control_run_if},
    {.domain = "", .name = "Loop", .level = TB_KERNEL_REFERENCE, .run = tb_control_run_loop},
    {.domain = "", .name = "Scan", .level = TB_KERNEL_REFERENCE, .run = tb_control_run_scan},
};
