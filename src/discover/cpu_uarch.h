/* Internal: the x86 microarchitecture table, cpuid (vendor, display family, model, stepping) to a
 * name such as "Sapphire Rapids" or "Zen 5". Each row names the document its ids come from. */
#ifndef TB_DISCOVER_CPU_UARCH_H
#define TB_DISCOVER_CPU_UARCH_H
#include <stddef.h>

typedef struct tb_cpu_uarch {
  const char *vendor_id; /* "GenuineIntel", "AuthenticAMD", "HygonGenuine" */
  unsigned family;       /* display family (base + extended) */
  unsigned model_lo, model_hi;       /* display model range, inclusive */
  unsigned stepping_lo, stepping_hi; /* inclusive; 0..15 when the stepping does not matter */
  const char *name;
  const char *source;
} tb_cpu_uarch;

/* The row for this CPU, or NULL when the table does not know it. */
const tb_cpu_uarch *tb_cpu_uarch_lookup(const char *vendor_id, unsigned family, unsigned model, unsigned stepping);

size_t tb_cpu_uarch_count(void);
const tb_cpu_uarch *tb_cpu_uarch_at(size_t i);

#endif
