/* Internal: the CPU features tb_convert may use: what the CPU has and the OS enabled (cpuid and
 * XCR0, read once per process), less what TB_CPU_FEATURES removes (read on every call, so a program
 * or a test can change it between calls). */
#ifndef TB_CORE_CONVERT_FEATURES_H
#define TB_CORE_CONVERT_FEATURES_H
#include <stdint.h>

/* TB_FEATURE_BIT set for each CPU feature present; 0 on a CPU that is not x86. */
uint64_t tb_convert_hardware_features(void);
/* The hardware features after the TB_CPU_FEATURES mask (unknown items are ignored here; the CPU
 * probe reports them in `tb doctor`). */
uint64_t tb_convert_features(void);

#endif
