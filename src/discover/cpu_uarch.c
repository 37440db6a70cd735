/* The x86 microarchitecture table: cpuid family/model (and stepping where one model number covers
 * several generations) to a microarchitecture name, one row per range with its source. */
#include "discover/cpu_uarch.h"
#include <string.h>

#define INTEL "GenuineIntel"
#define AMD "AuthenticAMD"
#define HYGON "HygonGenuine"
#define ANY_STEPPING 0, 15

/* Intel model numbers: Linux arch/x86/include/asm/intel-family.h (the INTEL_* / INTEL_FAM6_* name is
 * given per row). AMD ranges: Linux arch/x86/kernel/cpu/amd.c, bsp_init_amd(), where each family
 * and model range sets X86_FEATURE_ZEN1..ZEN5. */
static const tb_cpu_uarch rows[] = {
    /* Intel client */
    {INTEL, 6, 0x4e, 0x4e, ANY_STEPPING, "Skylake", "intel-family.h INTEL_SKYLAKE_L (0x4E)"},
    {INTEL, 6, 0x5e, 0x5e, ANY_STEPPING, "Skylake", "intel-family.h INTEL_SKYLAKE (0x5E)"},
    {INTEL, 6, 0x8e, 0x8e, ANY_STEPPING, "Kaby Lake / Coffee Lake", "intel-family.h INTEL_KABYLAKE_L (0x8E)"},
    {INTEL, 6, 0x9e, 0x9e, ANY_STEPPING, "Kaby Lake / Coffee Lake", "intel-family.h INTEL_KABYLAKE (0x9E)"},
    {INTEL, 6, 0xa5, 0xa6, ANY_STEPPING, "Comet Lake", "intel-family.h INTEL_COMETLAKE (0xA5), INTEL_COMETLAKE_L (0xA6)"},
    {INTEL, 6, 0x7d, 0x7e, ANY_STEPPING, "Ice Lake", "intel-family.h INTEL_ICELAKE (0x7D), INTEL_ICELAKE_L (0x7E)"},
    {INTEL, 6, 0x8c, 0x8d, ANY_STEPPING, "Tiger Lake", "intel-family.h INTEL_TIGERLAKE_L (0x8C), INTEL_TIGERLAKE (0x8D)"},
    {INTEL, 6, 0xa7, 0xa7, ANY_STEPPING, "Rocket Lake", "intel-family.h INTEL_ROCKETLAKE (0xA7)"},
    {INTEL, 6, 0x97, 0x97, ANY_STEPPING, "Alder Lake", "intel-family.h INTEL_ALDERLAKE (0x97)"},
    {INTEL, 6, 0x9a, 0x9a, ANY_STEPPING, "Alder Lake", "intel-family.h INTEL_ALDERLAKE_L (0x9A)"},
    {INTEL, 6, 0xbe, 0xbe, ANY_STEPPING, "Alder Lake-N", "intel-family.h INTEL_ATOM_GRACEMONT (0xBE)"},
    {INTEL, 6, 0xb7, 0xb7, ANY_STEPPING, "Raptor Lake", "intel-family.h INTEL_RAPTORLAKE (0xB7)"},
    {INTEL, 6, 0xba, 0xba, ANY_STEPPING, "Raptor Lake", "intel-family.h INTEL_RAPTORLAKE_P (0xBA)"},
    {INTEL, 6, 0xbf, 0xbf, ANY_STEPPING, "Raptor Lake", "intel-family.h INTEL_RAPTORLAKE_S (0xBF)"},
    {INTEL, 6, 0xaa, 0xaa, ANY_STEPPING, "Meteor Lake", "intel-family.h INTEL_METEORLAKE_L (0xAA)"},
    {INTEL, 6, 0xac, 0xac, ANY_STEPPING, "Meteor Lake", "intel-family.h INTEL_METEORLAKE (0xAC)"},
    {INTEL, 6, 0xb5, 0xb5, ANY_STEPPING, "Arrow Lake", "intel-family.h INTEL_ARROWLAKE_U (0xB5)"},
    {INTEL, 6, 0xc5, 0xc6, ANY_STEPPING, "Arrow Lake", "intel-family.h INTEL_ARROWLAKE_H (0xC5), INTEL_ARROWLAKE (0xC6)"},
    {INTEL, 6, 0xbd, 0xbd, ANY_STEPPING, "Lunar Lake", "intel-family.h INTEL_LUNARLAKE_M (0xBD)"},
    /* Intel server: model 0x55 is three generations told apart by stepping (Intel Xeon Scalable
     * specification updates: Skylake-SP H0/M0/U0 = 2-4, Cascade Lake B0/B1/L1/R1 = 5-7, Cooper Lake
     * A1 = 11; intel-family.h INTEL_SKYLAKE_X). */
    {INTEL, 6, 0x55, 0x55, 0, 4, "Skylake-SP", "intel-family.h INTEL_SKYLAKE_X (0x55), steppings 0-4"},
    {INTEL, 6, 0x55, 0x55, 5, 7, "Cascade Lake", "intel-family.h INTEL_SKYLAKE_X (0x55), steppings 5-7"},
    {INTEL, 6, 0x55, 0x55, 10, 11, "Cooper Lake", "intel-family.h INTEL_SKYLAKE_X (0x55), steppings 10-11"},
    {INTEL, 6, 0x6a, 0x6a, ANY_STEPPING, "Ice Lake-SP", "intel-family.h INTEL_ICELAKE_X (0x6A)"},
    {INTEL, 6, 0x6c, 0x6c, ANY_STEPPING, "Ice Lake-SP", "intel-family.h INTEL_ICELAKE_D (0x6C)"},
    {INTEL, 6, 0x8f, 0x8f, ANY_STEPPING, "Sapphire Rapids", "intel-family.h INTEL_SAPPHIRERAPIDS_X (0x8F)"},
    {INTEL, 6, 0xcf, 0xcf, ANY_STEPPING, "Emerald Rapids", "intel-family.h INTEL_EMERALDRAPIDS_X (0xCF)"},
    {INTEL, 6, 0xad, 0xae, ANY_STEPPING, "Granite Rapids", "intel-family.h INTEL_GRANITERAPIDS_X (0xAD), INTEL_GRANITERAPIDS_D (0xAE)"},
    {INTEL, 6, 0xaf, 0xaf, ANY_STEPPING, "Sierra Forest", "intel-family.h INTEL_ATOM_CRESTMONT_X (0xAF)"},
    /* AMD family 17h */
    {AMD, 0x17, 0x00, 0x2f, ANY_STEPPING, "Zen", "amd.c bsp_init_amd: family 17h models 00h-2Fh -> ZEN1"},
    {AMD, 0x17, 0x50, 0x5f, ANY_STEPPING, "Zen", "amd.c bsp_init_amd: family 17h models 50h-5Fh -> ZEN1"},
    {AMD, 0x17, 0x30, 0x4f, ANY_STEPPING, "Zen 2", "amd.c bsp_init_amd: family 17h models 30h-4Fh -> ZEN2"},
    {AMD, 0x17, 0x60, 0x7f, ANY_STEPPING, "Zen 2", "amd.c bsp_init_amd: family 17h models 60h-7Fh -> ZEN2"},
    {AMD, 0x17, 0x90, 0x91, ANY_STEPPING, "Zen 2", "amd.c bsp_init_amd: family 17h models 90h-91h -> ZEN2"},
    {AMD, 0x17, 0xa0, 0xaf, ANY_STEPPING, "Zen 2", "amd.c bsp_init_amd: family 17h models A0h-AFh -> ZEN2"},
    /* AMD family 19h */
    {AMD, 0x19, 0x00, 0x0f, ANY_STEPPING, "Zen 3", "amd.c bsp_init_amd: family 19h models 00h-0Fh -> ZEN3"},
    {AMD, 0x19, 0x20, 0x5f, ANY_STEPPING, "Zen 3", "amd.c bsp_init_amd: family 19h models 20h-5Fh -> ZEN3"},
    {AMD, 0x19, 0x10, 0x1f, ANY_STEPPING, "Zen 4", "amd.c bsp_init_amd: family 19h models 10h-1Fh -> ZEN4"},
    {AMD, 0x19, 0x60, 0xaf, ANY_STEPPING, "Zen 4", "amd.c bsp_init_amd: family 19h models 60h-AFh -> ZEN4"},
    /* AMD family 1Ah */
    {AMD, 0x1a, 0x00, 0x2f, ANY_STEPPING, "Zen 5", "amd.c bsp_init_amd: family 1Ah models 00h-2Fh -> ZEN5"},
    {AMD, 0x1a, 0x40, 0x4f, ANY_STEPPING, "Zen 5", "amd.c bsp_init_amd: family 1Ah models 40h-4Fh -> ZEN5"},
    {AMD, 0x1a, 0x60, 0x7f, ANY_STEPPING, "Zen 5", "amd.c bsp_init_amd: family 1Ah models 60h-7Fh -> ZEN5"},
    /* Hygon Dhyana is AMD Zen licensed (Linux arch/x86/kernel/cpu/hygon.c, family 18h). */
    {HYGON, 0x18, 0x00, 0xff, ANY_STEPPING, "Zen (Hygon Dhyana)", "hygon.c: family 18h is the Zen-based Dhyana"},
};

const tb_cpu_uarch *tb_cpu_uarch_lookup(const char *vendor_id, unsigned family, unsigned model, unsigned stepping) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const tb_cpu_uarch *r = &rows[i];
    if (strcmp(r->vendor_id, vendor_id) == 0 && r->family == family && model >= r->model_lo && model <= r->model_hi &&
        stepping >= r->stepping_lo && stepping <= r->stepping_hi)
      return r;
  }
  return NULL;
}

size_t tb_cpu_uarch_count(void) { return sizeof rows / sizeof rows[0]; }

const tb_cpu_uarch *tb_cpu_uarch_at(size_t i) { return i < tb_cpu_uarch_count() ? &rows[i] : NULL; }
