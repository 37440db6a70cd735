/* Describing an x86 CPU: cpuid (or TB_CPUID_FILE) decoded into identity, the microarchitecture from
 * the table in cpu_uarch.c, the features the OS enabled, and the AMX permission from the kernel. */
#include "discover/cpu_x86.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/env.h"
#include "core/fs.h"
#include "discover/cpu_amx.h"
#include "discover/cpu_arm.h"
#include "core/cpuid.h"
#include "core/cpu_features.h"
#include "discover/cpu_uarch.h"

#define AMX_BITS \
  (TB_FEATURE_BIT(TB_FEATURE_AMX_TILE) | TB_FEATURE_BIT(TB_FEATURE_AMX_BF16) | TB_FEATURE_BIT(TB_FEATURE_AMX_INT8))
#define AMX_CHECK "arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)"

/* Fill the dump from TB_CPUID_FILE when it is set and valid, else from the instruction. */
static bool load_dump(tb_device_list *list, tb_cpuid_dump *dump, bool *recorded) {
  const char *file = tb_env("TB_CPUID_FILE");
  *recorded = false;
  if (file) {
    tb_cpuid_error err;
    if (tb_cpuid_load_file(file, dump, &err)) {
      tb_report_check(list, TB_BACKEND_CPU, true, "TB_CPUID_FILE", "%s: %zu recorded leaves, used instead of the cpuid instruction",
                      file, dump->count);
      *recorded = true;
      return true;
    }
    if (err.line > 0)
      tb_report_check(list, TB_BACKEND_CPU, false, "TB_CPUID_FILE", "%s line %d: %s; the file is ignored", file, err.line, err.message);
    else
      tb_report_check(list, TB_BACKEND_CPU, false, "TB_CPUID_FILE", "%s: %s; the file is ignored", file, err.message);
    char where[32] = "";
    if (err.line > 0) snprintf(where, sizeof where, "line %d: ", err.line);
    tb_env_warn("TB_CPUID_FILE", file, "cannot be used (%s%s); it must name a cpuid dump (docs/cpu.md): the cpuid "
                "instruction is used instead", where, err.message);
  }
  if (!tb_cpuid_read_host(dump)) return false;
  tb_report_check(list, TB_BACKEND_CPU, true, "cpuid instruction", "highest leaf 0x%x", dump->leaves[0].regs[TB_EAX]);
  return true;
}

/* The brand string, else /proc/cpuinfo "model name", else the vendor with family and model. */
static void choose_name(const tb_cpu_ident *id, const char *vendor, char *out, size_t cap) {
  if (id->brand[0]) {
    snprintf(out, cap, "%s", id->brand);
    return;
  }
  enum { CPUINFO_HEAD = 64 * 1024 };
  char *text = malloc(CPUINFO_HEAD);
  bool found = text && tb_fs_read("/proc/cpuinfo", text, CPUINFO_HEAD) && tb_cpuinfo_field(text, "model name", out, cap) && out[0];
  free(text);
  if (!found) snprintf(out, cap, "%s CPU family %u model %u", vendor[0] ? vendor : "x86", id->family, id->model);
}

static void set_amx_denied(tb_device_list *list, tb_device_info *dev, uint64_t *features, const char *why) {
  *features &= ~AMX_BITS;
  tb_dev_prop(list, dev, "amx_permission", "denied: %s", why);
}

/* AMX counts only once the kernel lets this process use the tile state. */
static void settle_amx(tb_device_list *list, tb_device_info *dev, const tb_cpu_ident *id, const tb_cpuid_dump *dump,
                       bool recorded, uint64_t *features) {
  char buf[32];
  if (!(id->cpuid_features & AMX_BITS)) {
    tb_dev_prop(list, dev, "amx_permission", "not supported by this CPU");
    return;
  }
  if (!(id->features & AMX_BITS)) {
    set_amx_denied(list, dev, features, "the OS has not enabled the AMX tile state (XCR0 bits 17 and 18 clear)");
    tb_report_check(list, TB_BACKEND_CPU, false, "AMX tile state in XCR0",
                    "XCR0 is 0x%llx without bits 17-18: the kernel does not support AMX (Linux 5.16 or newer does); AMX not used",
                    (unsigned long long)id->xcr0);
    return;
  }
  if (recorded) {
    if (dump->amx == TB_AMX_RECORD_GRANTED) {
      tb_dev_prop(list, dev, "amx_permission", "granted");
      tb_report_check(list, TB_BACKEND_CPU, true, AMX_CHECK, "granted (recorded in TB_CPUID_FILE; not requested)");
    } else {
      const char *why = dump->amx == TB_AMX_RECORD_NONE ? "TB_CPUID_FILE has no amx_permission line"
                        : dump->amx_errno[0]           ? dump->amx_errno
                                                       : "recorded in TB_CPUID_FILE without an errno";
      set_amx_denied(list, dev, features, why);
      tb_report_check(list, TB_BACKEND_CPU, false, AMX_CHECK, "denied: %s (recorded; not requested); AMX not used", why);
    }
    return;
  }
  int err = tb_amx_request_permission();
  if (err == 0) {
    tb_dev_prop(list, dev, "amx_permission", "granted");
    tb_report_check(list, TB_BACKEND_CPU, true, AMX_CHECK, "granted");
    return;
  }
  const char *name = tb_errno_name(err, buf, sizeof buf);
  set_amx_denied(list, dev, features, name);
  tb_report_check(list, TB_BACKEND_CPU, false, AMX_CHECK, "failed with %s: the kernel refused the AMX tile state; AMX not used", name);
}

bool tb_cpu_x86_describe(tb_device_list *list, tb_device_info *dev, uint64_t *features) {
  tb_cpuid_dump *dump = malloc(sizeof *dump);
  if (!dump) {
    list->arena.failed = true;
    return false;
  }
  bool recorded;
  if (!load_dump(list, dump, &recorded)) {
    free(dump);
    return false;
  }
  tb_cpu_ident id;
  tb_cpuid_decode(dump, &id);
  const char *vendor = tb_cpu_vendor_name(id.vendor_id);
  char name[128], names[256];
  choose_name(&id, vendor, name, sizeof name);
  tb_dev_set(list, &dev->vendor, "%s", vendor);
  tb_dev_set(list, &dev->name, "%s", name);
  tb_dev_set(list, &dev->arch_id, "x86_64 family %u model %u stepping %u", id.family, id.model, id.stepping);
  const tb_cpu_uarch *row = tb_cpu_uarch_lookup(id.vendor_id, id.family, id.model, id.stepping);
  if (row) {
    tb_dev_set(list, &dev->architecture, "%s", row->name);
    tb_dev_prop(list, dev, "architecture_source", "%s", row->source);
  } else {
    tb_dev_prop(list, dev, "architecture_note", "%s family 0x%x model 0x%x stepping %u is not in TensorBridge's microarchitecture table",
                id.vendor_id[0] ? id.vendor_id : "(no vendor id)", id.family, id.model, id.stepping);
  }
  tb_dev_set(list, &dev->capability_source, "cpuid");
  if (recorded) tb_dev_prop(list, dev, "cpuid_source", "TB_CPUID_FILE=%s", tb_env("TB_CPUID_FILE"));
  else tb_dev_prop(list, dev, "cpuid_source", "cpuid instruction");
  if (id.has_xcr0) tb_dev_prop(list, dev, "xcr0", "0x%llx", (unsigned long long)id.xcr0);
  uint64_t disabled = id.cpuid_features & ~id.features;
  if (disabled) {
    tb_cpu_features_format(disabled, names, sizeof names);
    tb_dev_prop(list, dev, "features_disabled_by_os", "%s", names);
  }
  *features = id.features;
  settle_amx(list, dev, &id, dump, recorded, features);
  free(dump);
  return true;
}
