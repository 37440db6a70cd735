/* /proc/cpuinfo fields, and aarch64 identity (implementer/part ids) and features (Features line,
 * hwcaps). Implementer and part codes: Linux arch/arm64/include/asm/cputype.h. */
#include "discover/cpu_arm.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/device.h>

#define HWCAP_ASIMD_BIT (1ul << 1)
#define HWCAP_SVE_BIT (1ul << 22)
#define HWCAP2_SME_BIT (1ul << 23)

bool tb_cpuinfo_field(const char *text, const char *key, char *out, size_t cap) {
  size_t klen = strlen(key);
  for (const char *line = text; line && *line;) {
    const char *eol = strchr(line, '\n');
    const char *end = eol ? eol : line + strlen(line);
    if ((size_t)(end - line) > klen && strncmp(line, key, klen) == 0) {
      const char *p = line + klen;
      while (p < end && (*p == ' ' || *p == '\t')) p++;
      if (p < end && *p == ':') {
        p++;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        const char *v_end = end;
        while (v_end > p && isspace((unsigned char)v_end[-1])) v_end--;
        size_t len = (size_t)(v_end - p);
        if (cap == 0) return false;
        if (len >= cap) len = cap - 1;
        memcpy(out, p, len);
        out[len] = '\0';
        return true;
      }
    }
    line = eol ? eol + 1 : NULL;
  }
  return false;
}

static bool field_number(const char *text, const char *key, unsigned *out) {
  char v[32];
  if (!tb_cpuinfo_field(text, key, v, sizeof v) || !isdigit((unsigned char)v[0])) return false;
  char *end = NULL;
  unsigned long n = strtoul(v, &end, 0);
  if (*end || n > 0xffffu) return false;
  *out = (unsigned)n;
  return true;
}

bool tb_cpu_arm_parse_cpuinfo(const char *text, tb_cpu_arm_ident *out) {
  memset(out, 0, sizeof *out);
  out->has_ids = field_number(text, "CPU implementer", &out->implementer) && field_number(text, "CPU part", &out->part);
  field_number(text, "CPU variant", &out->variant);
  field_number(text, "CPU revision", &out->revision);
  tb_cpuinfo_field(text, "model name", out->model_name, sizeof out->model_name);
  bool has_flags = tb_cpuinfo_field(text, "Features", out->flags, sizeof out->flags);
  return out->has_ids || has_flags;
}

static bool has_word(const char *flags, const char *word) {
  size_t wlen = strlen(word);
  for (const char *p = flags; (p = strstr(p, word)) != NULL; p += wlen) {
    bool starts = p == flags || isspace((unsigned char)p[-1]);
    bool ends = p[wlen] == '\0' || isspace((unsigned char)p[wlen]);
    if (starts && ends) return true;
  }
  return false;
}

uint64_t tb_cpu_arm_features_from_flags(const char *flags) {
  uint64_t f = 0;
  if (has_word(flags, "asimd")) f |= TB_FEATURE_BIT(TB_FEATURE_NEON);
  if (has_word(flags, "sve")) f |= TB_FEATURE_BIT(TB_FEATURE_SVE);
  if (has_word(flags, "sme")) f |= TB_FEATURE_BIT(TB_FEATURE_SME);
  return f;
}

uint64_t tb_cpu_arm_features_from_hwcap(unsigned long hwcap, unsigned long hwcap2) {
  uint64_t f = 0;
  if (hwcap & HWCAP_ASIMD_BIT) f |= TB_FEATURE_BIT(TB_FEATURE_NEON);
  if (hwcap & HWCAP_SVE_BIT) f |= TB_FEATURE_BIT(TB_FEATURE_SVE);
  if (hwcap2 & HWCAP2_SME_BIT) f |= TB_FEATURE_BIT(TB_FEATURE_SME);
  return f;
}

const char *tb_cpu_arm_vendor(unsigned implementer) {
  switch (implementer) {
    case 0x41: return "ARM";
    case 0x42: return "Broadcom";
    case 0x43: return "Cavium";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x4e: return "NVIDIA";
    case 0x50: return "APM";
    case 0x51: return "Qualcomm";
    case 0x61: return "Apple";
    case 0xc0: return "Ampere";
    default: return NULL;
  }
}

const char *tb_cpu_arm_core(unsigned implementer, unsigned part) {
  static const struct { unsigned implementer, part; const char *name; } cores[] = {
      {0x41, 0xd03, "Cortex-A53"},  {0x41, 0xd07, "Cortex-A57"},  {0x41, 0xd08, "Cortex-A72"},
      {0x41, 0xd0b, "Cortex-A76"},  {0x41, 0xd0c, "Neoverse N1"}, {0x41, 0xd40, "Neoverse V1"},
      {0x41, 0xd49, "Neoverse N2"}, {0x41, 0xd4f, "Neoverse V2"}, {0x41, 0xd84, "Neoverse V3"},
      {0x41, 0xd8e, "Neoverse N3"}, {0x46, 0x001, "A64FX"},       {0x48, 0xd01, "TaiShan v110"},
      {0xc0, 0xac3, "AmpereOne"},
  };
  for (size_t i = 0; i < sizeof cores / sizeof cores[0]; i++)
    if (cores[i].implementer == implementer && cores[i].part == part) return cores[i].name;
  return NULL;
}

void tb_cpu_arm_describe(tb_device_list *list, tb_device_info *dev, const char *cpuinfo, bool have_hwcap,
                         unsigned long hwcap, unsigned long hwcap2, uint64_t *features) {
  tb_cpu_arm_ident *id = calloc(1, sizeof *id);
  if (!id) {
    list->arena.failed = true;
    return;
  }
  bool parsed = cpuinfo && tb_cpu_arm_parse_cpuinfo(cpuinfo, id);
  if (parsed)
    tb_report_check(list, TB_BACKEND_CPU, true, "/proc/cpuinfo", "implementer 0x%02x part 0x%03x, Features: %.200s",
                    id->implementer, id->part, id->flags);
  else
    tb_report_check(list, TB_BACKEND_CPU, false, "/proc/cpuinfo", "no CPU implementer, CPU part or Features lines");
  *features = have_hwcap ? tb_cpu_arm_features_from_hwcap(hwcap, hwcap2) : tb_cpu_arm_features_from_flags(id->flags);
  const char *vendor = id->has_ids ? tb_cpu_arm_vendor(id->implementer) : NULL;
  const char *core = id->has_ids ? tb_cpu_arm_core(id->implementer, id->part) : NULL;
  char vendor_text[32];
  if (vendor) snprintf(vendor_text, sizeof vendor_text, "%s", vendor);
  else if (id->has_ids) snprintf(vendor_text, sizeof vendor_text, "implementer 0x%02x", id->implementer);
  else vendor_text[0] = '\0';
  tb_dev_set(list, &dev->vendor, "%s", vendor_text);
  if (id->model_name[0]) tb_dev_set(list, &dev->name, "%s", id->model_name);
  else if (core) tb_dev_set(list, &dev->name, "%s %s", vendor_text, core);
  else if (id->has_ids) tb_dev_set(list, &dev->name, "%s part 0x%03x", vendor_text, id->part);
  else tb_dev_set(list, &dev->name, "aarch64 CPU");
  if (id->has_ids)
    tb_dev_set(list, &dev->arch_id, "aarch64 implementer 0x%02x part 0x%03x r%up%u", id->implementer, id->part, id->variant,
               id->revision);
  else
    tb_dev_set(list, &dev->arch_id, "aarch64");
  if (core)
    tb_dev_set(list, &dev->architecture, "%s", core);
  else if (id->has_ids)
    tb_dev_prop(list, dev, "architecture_note", "implementer 0x%02x part 0x%03x is not in TensorBridge's Arm core table",
                id->implementer, id->part);
  else
    tb_dev_prop(list, dev, "architecture_note", "/proc/cpuinfo has no CPU implementer and CPU part");
  tb_dev_set(list, &dev->capability_source, have_hwcap ? "hwcap" : "/proc/cpuinfo Features");
  tb_dev_prop(list, dev, "amx_permission", "not supported by this CPU");
  free(id);
}
