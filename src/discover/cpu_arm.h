/* Internal: /proc/cpuinfo fields, and the aarch64 CPU's identity and vector features. The parsers are
 * portable (tests run them on x86 with recorded files); only the probe's getauxval call is guarded
 * by #if defined(__aarch64__). */
#ifndef TB_DISCOVER_CPU_ARM_H
#define TB_DISCOVER_CPU_ARM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "discover/devlist.h"

/* The value of the first "key<tabs> : value" line of /proc/cpuinfo text; false when absent. */
bool tb_cpuinfo_field(const char *text, const char *key, char *out, size_t cap);

typedef struct tb_cpu_arm_ident {
  unsigned implementer, part, variant, revision;
  bool has_ids;          /* "CPU implementer" and "CPU part" were there and were numbers */
  char model_name[128];  /* "model name" when the kernel writes one; "" otherwise */
  char flags[2048];      /* the "Features" line */
} tb_cpu_arm_ident;

/* The first processor of an aarch64 /proc/cpuinfo. false when it has neither ids nor Features. */
bool tb_cpu_arm_parse_cpuinfo(const char *text, tb_cpu_arm_ident *out);

/* tb_feature bits from a "Features" line: asimd -> neon, sve -> sve, sme -> sme (whole words). */
uint64_t tb_cpu_arm_features_from_flags(const char *flags);
/* tb_feature bits from AT_HWCAP / AT_HWCAP2 (Linux arch/arm64/include/uapi/asm/hwcap.h). */
uint64_t tb_cpu_arm_features_from_hwcap(unsigned long hwcap, unsigned long hwcap2);

/* "ARM", "NVIDIA", "Ampere", ... from the implementer code; NULL when not known. */
const char *tb_cpu_arm_vendor(unsigned implementer);
/* "Neoverse V2", ... from implementer and part; NULL when not known. */
const char *tb_cpu_arm_core(unsigned implementer, unsigned part);

/* Describe an aarch64 CPU into dev: vendor, name, arch_id, architecture and *features, from the
 * /proc/cpuinfo text (may be NULL) and the hwcaps (when have_hwcap; else the Features line). The
 * probe calls it on aarch64 with getauxval(AT_HWCAP/AT_HWCAP2); tests call it anywhere. */
void tb_cpu_arm_describe(tb_device_list *list, tb_device_info *dev, const char *cpuinfo, bool have_hwcap,
                         unsigned long hwcap, unsigned long hwcap2, uint64_t *features);

#endif
