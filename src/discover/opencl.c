/* The OpenCL probe: every platform and device the ICD loader (libOpenCL.so.1) reports, numbered
 * "opencl:N" across platforms, with name, vendor, type, compute units, memory, fp16/fp64, versions,
 * PCI bus id and UUID where the driver exposes them. Only info queries: no context is created. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/dl.h"
#include "core/uuid.h"
#include "runtime/opencl_api.h"
#include "runtime/opencl_loader.h"
#include "runtime/opencl_query.h"
#include "discover/pci.h"
#include "discover/probes.h"

#define CL_BACKEND TB_BACKEND_OPENCL
#define CL_MAX_PLATFORMS 64u
#define CL_MAX_DEVICES 256u
#define CL_ICD_FIX "install an OpenCL ICD, e.g. pocl-opencl-icd, or your GPU vendor's OpenCL driver"

typedef struct cl_probe {
  tb_device_list *list;
  tb_cl_api api;
  char first_error[256]; /* the first platform-level failure, for the summary when no device is found */
} cl_probe;

typedef struct cl_platform_text {
  unsigned index;
  char *name, *vendor, *version;
} cl_platform_text;

static tb_cl_object as_device(tb_cl_device_id id) { return (tb_cl_object){.platform = NULL, .device = id}; }
static tb_cl_object as_platform(tb_cl_platform_id id) { return (tb_cl_object){.platform = id, .device = NULL}; }

static void note_device_ids_error(cl_probe *p, const char *platform, const char *code) {
  if (!p->first_error[0])
    snprintf(p->first_error, sizeof p->first_error, "clGetDeviceIDs on platform '%s' failed with %s", platform, code);
}

/* "NVIDIA", "AMD", "Intel" when the vendor string says so, else the string as the driver gave it. */
static const char *vendor_short(const char *vendor) {
  static const struct { const char *needle, *name; } known[] = {
      {"NVIDIA", "NVIDIA"}, {"Advanced Micro Devices", "AMD"}, {"AuthenticAMD", "AMD"}, {"AMD", "AMD"},
      {"GenuineIntel", "Intel"}, {"Intel", "Intel"}, {"ARM", "ARM"}, {"Qualcomm", "Qualcomm"}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strstr(vendor, known[i].needle)) return known[i].name;
  return vendor;
}

static tb_device_type device_type(tb_cl_bitfield type, bool unified) {
  if (type & TB_CL_DEVICE_TYPE_CPU) return TB_DEVICE_CPU;
  if (type & TB_CL_DEVICE_TYPE_GPU) return unified ? TB_DEVICE_INTEGRATED_GPU : TB_DEVICE_DISCRETE_GPU;
  return TB_DEVICE_OTHER;
}

static bool pci_in_range(uint32_t domain, uint32_t bus, uint32_t dev, uint32_t fn) {
  return domain <= 0xffffu && bus <= 0xffu && dev <= 0x1fu && fn <= 7u;
}

/* The PCI bus id through cl_khr_pci_bus_info, or the NVIDIA or AMD attribute queries. */
static void read_pci(cl_probe *p, tb_device_info *dev, tb_cl_device_id id, const char *exts) {
  tb_cl_object obj = as_device(id);
  uint32_t domain = 0, bus = 0, slot = 0, fn = 0;
  const char *via = NULL;
  if (tb_cl_has_extension(exts, "cl_khr_pci_bus_info")) {
    tb_cl_device_pci_bus_info_khr info;
    if (tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_PCI_BUS_INFO_KHR, &info, sizeof info) == TB_CL_SUCCESS) {
      domain = info.pci_domain, bus = info.pci_bus, slot = info.pci_device, fn = info.pci_function;
      via = "cl_khr_pci_bus_info";
    }
  }
  if (!via && tb_cl_has_extension(exts, "cl_nv_device_attribute_query")) {
    tb_cl_uint nv_bus, nv_slot, nv_domain = 0;
    if (tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_PCI_BUS_ID_NV, &nv_bus, sizeof nv_bus) == TB_CL_SUCCESS &&
        tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_PCI_SLOT_ID_NV, &nv_slot, sizeof nv_slot) == TB_CL_SUCCESS) {
      tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_PCI_DOMAIN_ID_NV, &nv_domain, sizeof nv_domain); /* newer drivers */
      domain = nv_domain, bus = nv_bus, slot = nv_slot >> 3, fn = nv_slot & 7u;
      via = "cl_nv_device_attribute_query";
    }
  }
  if (!via && tb_cl_has_extension(exts, "cl_amd_device_attribute_query")) {
    tb_cl_device_topology_amd topo;
    if (tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_TOPOLOGY_AMD, &topo, sizeof topo) == TB_CL_SUCCESS &&
        topo.raw.type == TB_CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD) {
      bus = (unsigned char)topo.pcie.bus, slot = (unsigned char)topo.pcie.device, fn = (unsigned char)topo.pcie.function;
      via = "cl_amd_device_attribute_query";
    }
  }
  if (!via) return;
  if (!pci_in_range(domain, bus, slot, fn)) {
    tb_report_check(p->list, CL_BACKEND, false, dev->device, "PCI location from %s out of range: domain %u bus %u device %u function %u",
                    via, domain, bus, slot, fn);
    return;
  }
  char bus_id[32];
  tb_pci_format(domain, bus, slot, fn, bus_id, sizeof bus_id);
  tb_dev_set(p->list, &dev->pci_bus_id, "%s", bus_id);
  tb_dev_prop(p->list, dev, "pci_source", "%s", via);
}

static void read_uuid(cl_probe *p, tb_device_info *dev, tb_cl_device_id id, const char *exts) {
  if (!tb_cl_has_extension(exts, "cl_khr_device_uuid")) return;
  unsigned char bytes[TB_CL_UUID_SIZE_KHR];
  char text[40];
  if (tb_cl_scalar(&p->api, as_device(id), TB_CL_DEVICE_UUID_KHR, bytes, sizeof bytes) == TB_CL_SUCCESS) {
    tb_uuid_text(bytes, text, sizeof text);
    if (text[0]) tb_dev_set(p->list, &dev->uuid, "%s", text);
  }
  if (tb_cl_scalar(&p->api, as_device(id), TB_CL_DRIVER_UUID_KHR, bytes, sizeof bytes) == TB_CL_SUCCESS) {
    tb_uuid_text(bytes, text, sizeof text);
    if (text[0]) tb_dev_prop(p->list, dev, "driver_uuid", "%s", text);
  }
}

/* Global memory, and free memory where AMD's extension reports it (in KiB). */
static void read_memory(cl_probe *p, tb_device_info *dev, tb_cl_device_id id, const char *exts) {
  tb_cl_object obj = as_device(id);
  tb_cl_ulong total = 0, max_alloc = 0;
  char code[96];
  tb_cl_int err = tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_GLOBAL_MEM_SIZE, &total, sizeof total);
  if (err == TB_CL_SUCCESS && total > 0) {
    dev->memory_total = total;
    dev->memory_total_known = true;
  } else {
    tb_cl_code_text(err, code, sizeof code);
    tb_report_check(p->list, CL_BACKEND, false, "clGetDeviceInfo(CL_DEVICE_GLOBAL_MEM_SIZE)", "%s: %s", dev->device,
                    err == TB_CL_SUCCESS ? "0 bytes" : code);
  }
  if (tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_MAX_MEM_ALLOC_SIZE, &max_alloc, sizeof max_alloc) == TB_CL_SUCCESS)
    tb_dev_prop(p->list, dev, "max_alloc_bytes", "%llu", (unsigned long long)max_alloc);
  if (tb_cl_has_extension(exts, "cl_amd_device_attribute_query")) {
    size_t free_kib[2];
    if (tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, free_kib, sizeof free_kib) == TB_CL_SUCCESS &&
        free_kib[0] <= UINT64_MAX / 1024u) {
      dev->memory_free = (uint64_t)free_kib[0] * 1024u;
      dev->memory_free_known = true;
    }
  }
}

/* Optional string facts as properties (skipped when the driver cannot answer). */
static void string_prop(cl_probe *p, tb_device_info *dev, tb_cl_object obj, tb_cl_uint param, const char *key) {
  char *text = NULL;
  if (tb_cl_string(&p->api, obj, param, &text) == TB_CL_SUCCESS && text[0]) tb_dev_prop(p->list, dev, key, "%s", text);
  free(text);
}

static void uint_prop(cl_probe *p, tb_device_info *dev, tb_cl_object obj, tb_cl_uint param, const char *key) {
  tb_cl_uint v;
  if (tb_cl_scalar(&p->api, obj, param, &v, sizeof v) == TB_CL_SUCCESS) tb_dev_prop(p->list, dev, key, "%u", v);
}

static void set_capabilities(cl_probe *p, tb_device_info *dev, tb_cl_device_id id, const char *exts, bool unified) {
  tb_cl_object obj = as_device(id);
  char *profile = NULL;
  tb_cl_string(&p->api, obj, TB_CL_DEVICE_PROFILE, &profile);
  bool embedded = profile && strstr(profile, "EMBEDDED_PROFILE");
  free(profile);
  tb_cl_ulong fp64_config = 0;
  tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_DOUBLE_FP_CONFIG, &fp64_config, sizeof fp64_config);
  bool fp64 = tb_cl_has_extension(exts, "cl_khr_fp64") || fp64_config != 0;
  dev->dtypes = TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_I32) | TB_DTYPE_BIT(TB_DTYPE_I16) |
                TB_DTYPE_BIT(TB_DTYPE_I8) | TB_DTYPE_BIT(TB_DTYPE_U8) | TB_DTYPE_BIT(TB_DTYPE_BOOL);
  if (!embedded || tb_cl_has_extension(exts, "cles_khr_int64")) dev->dtypes |= TB_DTYPE_BIT(TB_DTYPE_I64);
  if (tb_cl_has_extension(exts, "cl_khr_fp16")) dev->dtypes |= TB_DTYPE_BIT(TB_DTYPE_F16);
  if (fp64) {
    dev->dtypes |= TB_DTYPE_BIT(TB_DTYPE_F64);
    dev->features |= TB_FEATURE_BIT(TB_FEATURE_FP64);
  }
  if (unified) dev->features |= TB_FEATURE_BIT(TB_FEATURE_UNIFIED_MEMORY);
  if (tb_cl_has_extension(exts, "cl_khr_subgroups") || tb_cl_has_extension(exts, "cl_intel_subgroups"))
    dev->features |= TB_FEATURE_BIT(TB_FEATURE_SUBGROUPS);
  tb_dev_set(p->list, &dev->capability_source, "OpenCL device query");
}

/* Name and type; a device that cannot answer them is listed but unusable. */
static void read_identity(cl_probe *p, tb_device_info *dev, tb_cl_device_id id, const cl_platform_text *plat, bool *unified) {
  tb_cl_object obj = as_device(id);
  char code[96], fix[320];
  snprintf(fix, sizeof fix, "check the driver of platform '%s' with `clinfo`; update or reinstall it", plat->name);
  char *name = NULL;
  tb_cl_int err = tb_cl_string(&p->api, obj, TB_CL_DEVICE_NAME, &name);
  tb_dev_set(p->list, &dev->name, "%s", err == TB_CL_SUCCESS && name[0] ? name : "unnamed OpenCL device");
  free(name);
  if (err != TB_CL_SUCCESS) {
    tb_cl_code_text(err, code, sizeof code);
    tb_dev_unusable(p->list, dev, fix, "OpenCL device %s of platform '%s': clGetDeviceInfo(CL_DEVICE_NAME) failed with %s",
                    dev->device, plat->name, code);
  }
  tb_cl_bool host_unified = 0;
  tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_HOST_UNIFIED_MEMORY, &host_unified, sizeof host_unified);
  *unified = host_unified != 0;
  tb_cl_bitfield type = 0;
  err = tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_TYPE, &type, sizeof type);
  dev->type = device_type(type, *unified);
  tb_dev_prop(p->list, dev, "cl_device_type", "0x%llx", (unsigned long long)type);
  if (err != TB_CL_SUCCESS && dev->usable) {
    tb_cl_code_text(err, code, sizeof code);
    tb_dev_unusable(p->list, dev, fix, "OpenCL device %s (%s): clGetDeviceInfo(CL_DEVICE_TYPE) failed with %s",
                    dev->device, dev->name, code);
  }
}

static void probe_device(cl_probe *p, const cl_platform_text *plat, tb_cl_device_id id) {
  tb_device_info *dev = tb_devlist_add(p->list, CL_BACKEND);
  if (!dev) return;
  tb_cl_object obj = as_device(id);
  dev->usable = true;
  bool unified = false;
  read_identity(p, dev, id, plat, &unified);

  char *vendor = NULL, *exts = NULL;
  if (tb_cl_string(&p->api, obj, TB_CL_DEVICE_VENDOR, &vendor) == TB_CL_SUCCESS && vendor[0]) {
    tb_dev_set(p->list, &dev->vendor, "%s", vendor_short(vendor));
    tb_dev_prop(p->list, dev, "vendor_string", "%s", vendor);
  }
  free(vendor);
  char code[96];
  tb_cl_int err = tb_cl_string(&p->api, obj, TB_CL_DEVICE_EXTENSIONS, &exts);
  if (err != TB_CL_SUCCESS) {
    tb_cl_code_text(err, code, sizeof code);
    tb_report_check(p->list, CL_BACKEND, false, "clGetDeviceInfo(CL_DEVICE_EXTENSIONS)", "%s: %s", dev->device, code);
  }
  const char *ext_list = exts ? exts : "";

  tb_cl_uint units = 0;
  if (tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_MAX_COMPUTE_UNITS, &units, sizeof units) == TB_CL_SUCCESS)
    dev->compute_units = units > 0x7fffffffu ? 0x7fffffff : (int)units;
  read_memory(p, dev, id, ext_list);
  set_capabilities(p, dev, id, ext_list, unified);
  if (dev->type == TB_DEVICE_CPU || dev->type == TB_DEVICE_INTEGRATED_GPU) tb_dev_set(p->list, &dev->memory_type, "system");
  read_pci(p, dev, id, ext_list);
  read_uuid(p, dev, id, ext_list);

  char *driver = NULL;
  if (tb_cl_string(&p->api, obj, TB_CL_DRIVER_VERSION, &driver) == TB_CL_SUCCESS && driver[0]) {
    tb_dev_set(p->list, &dev->driver_version, "%s", driver);
    tb_dev_prop(p->list, dev, "driver_version", "%s", driver);
  }
  free(driver);
  string_prop(p, dev, obj, TB_CL_DEVICE_OPENCL_C_VERSION, "opencl_c_version");
  string_prop(p, dev, obj, TB_CL_DEVICE_VERSION, "device_version");
  uint_prop(p, dev, obj, TB_CL_DEVICE_MAX_CLOCK_FREQUENCY, "max_clock_mhz");
  tb_cl_uint vendor_id = 0;
  if (tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_VENDOR_ID, &vendor_id, sizeof vendor_id) == TB_CL_SUCCESS)
    tb_dev_prop(p->list, dev, "vendor_id", "0x%04x", vendor_id);
  tb_cl_ulong local_mem = 0;
  if (tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_LOCAL_MEM_SIZE, &local_mem, sizeof local_mem) == TB_CL_SUCCESS)
    tb_dev_prop(p->list, dev, "local_mem_bytes", "%llu", (unsigned long long)local_mem);
  size_t wg = 0;
  if (tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_MAX_WORK_GROUP_SIZE, &wg, sizeof wg) == TB_CL_SUCCESS)
    tb_dev_prop(p->list, dev, "max_work_group_size", "%zu", wg);
  tb_dev_prop(p->list, dev, "platform_index", "%u", plat->index);
  tb_dev_prop(p->list, dev, "platform_name", "%s", plat->name);
  tb_dev_prop(p->list, dev, "platform_vendor", "%s", plat->vendor);
  tb_dev_prop(p->list, dev, "platform_version", "%s", plat->version);
  tb_dev_prop(p->list, dev, "fp16", "%s", tb_cl_has_extension(ext_list, "cl_khr_fp16") ? "yes" : "no");
  tb_dev_prop(p->list, dev, "fp64", "%s", (dev->features & TB_FEATURE_BIT(TB_FEATURE_FP64)) ? "yes" : "no");
  free(exts);

  tb_cl_bool available = 1;
  if (tb_cl_scalar(&p->api, obj, TB_CL_DEVICE_AVAILABLE, &available, sizeof available) == TB_CL_SUCCESS && !available && dev->usable)
    tb_dev_unusable(p->list, dev, "check the device and its driver with `clinfo`; another process may hold it exclusively or it is in a failed state",
                    "OpenCL reports %s (%s) as not available (CL_DEVICE_AVAILABLE is false)", dev->name, dev->device);
  tb_report_check(p->list, CL_BACKEND, dev->usable, dev->device, "%s (%s, platform '%s')", dev->name,
                  tb_device_type_name(dev->type), plat->name);
}

/* Ask twice (count, then ids); a count that changes in between is clamped to what both calls agree on. */
static void probe_platform_devices(cl_probe *p, tb_cl_platform_id platform, const cl_platform_text *plat) {
  char code[96], what[64];
  snprintf(what, sizeof what, "clGetDeviceIDs(platform %u)", plat->index);
  tb_cl_uint count = 0;
  tb_cl_int err = p->api.clGetDeviceIDs(platform, TB_CL_DEVICE_TYPE_ALL, 0, NULL, &count);
  if (err == TB_CL_DEVICE_NOT_FOUND || (err == TB_CL_SUCCESS && count == 0)) {
    tb_report_check(p->list, CL_BACKEND, true, what, "'%s': 0 devices", plat->name);
    return;
  }
  if (err != TB_CL_SUCCESS) {
    tb_cl_code_text(err, code, sizeof code);
    tb_report_check(p->list, CL_BACKEND, false, what, "'%s': %s", plat->name, code);
    note_device_ids_error(p, plat->name, code);
    return;
  }
  tb_cl_uint asked = count > CL_MAX_DEVICES ? CL_MAX_DEVICES : count;
  tb_cl_device_id *ids = calloc(asked, sizeof *ids);
  if (!ids) {
    p->list->arena.failed = true;
    return;
  }
  tb_cl_uint second = 0;
  err = p->api.clGetDeviceIDs(platform, TB_CL_DEVICE_TYPE_ALL, asked, ids, &second);
  if (err != TB_CL_SUCCESS) {
    tb_cl_code_text(err, code, sizeof code);
    tb_report_check(p->list, CL_BACKEND, false, what, "'%s': %s on the second call", plat->name, code);
    note_device_ids_error(p, plat->name, code);
    free(ids);
    return;
  }
  tb_cl_uint use = second < asked ? second : asked;
  if (second != count)
    tb_report_check(p->list, CL_BACKEND, false, what, "'%s': device count changed from %u to %u between calls; probing %u",
                    plat->name, count, second, use);
  else if (count > asked)
    tb_report_check(p->list, CL_BACKEND, false, what, "'%s': %u devices; probing the first %u", plat->name, count, asked);
  else
    tb_report_check(p->list, CL_BACKEND, true, what, "'%s': %u device%s", plat->name, use, use == 1 ? "" : "s");
  for (tb_cl_uint i = 0; i < use; i++) {
    if (ids[i]) probe_device(p, plat, ids[i]);
    else tb_report_check(p->list, CL_BACKEND, false, what, "'%s': device id %u is NULL; skipped", plat->name, i);
  }
  free(ids);
}

static char *platform_string(cl_probe *p, tb_cl_platform_id platform, tb_cl_uint param, const char *label, unsigned index) {
  char *text = NULL;
  tb_cl_int err = tb_cl_string(&p->api, as_platform(platform), param, &text);
  if (err == TB_CL_SUCCESS) return text;
  char code[96];
  tb_cl_code_text(err, code, sizeof code);
  tb_report_check(p->list, CL_BACKEND, false, "clGetPlatformInfo", "platform %u %s: %s", index, label, code);
  char *fallback = malloc(1);
  if (fallback) fallback[0] = '\0';
  return fallback;
}

static void probe_platform(cl_probe *p, tb_cl_platform_id platform, unsigned index) {
  cl_platform_text plat = {.index = index};
  plat.name = platform_string(p, platform, TB_CL_PLATFORM_NAME, "CL_PLATFORM_NAME", index);
  plat.vendor = platform_string(p, platform, TB_CL_PLATFORM_VENDOR, "CL_PLATFORM_VENDOR", index);
  plat.version = platform_string(p, platform, TB_CL_PLATFORM_VERSION, "CL_PLATFORM_VERSION", index);
  if (plat.name && plat.vendor && plat.version) {
    tb_report_check(p->list, CL_BACKEND, true, "platform", "%u: '%s' by '%s' (%s)", index, plat.name, plat.vendor, plat.version);
    probe_platform_devices(p, platform, &plat);
  } else {
    p->list->arena.failed = true;
  }
  free(plat.name);
  free(plat.vendor);
  free(plat.version);
}

static void report_platform_error(cl_probe *p, tb_cl_int err, const char *when) {
  char code[96];
  tb_cl_code_text(err, code, sizeof code);
  tb_report_check(p->list, CL_BACKEND, false, "clGetPlatformIDs", "%s%s", code, when);
  if (err == TB_CL_PLATFORM_NOT_FOUND_KHR)
    tb_report_set(p->list, CL_BACKEND, CL_ICD_FIX,
                  "no OpenCL driver: clGetPlatformIDs returned %s (the ICD loader found no installed ICD)", code);
  else
    tb_report_set(p->list, CL_BACKEND, "check the OpenCL installation with `clinfo`; reinstall the ICD loader and the driver",
                  "clGetPlatformIDs failed with %s", code);
}

static void probe_platforms(cl_probe *p) {
  tb_cl_uint count = 0;
  tb_cl_int err = p->api.clGetPlatformIDs(0, NULL, &count);
  if (err != TB_CL_SUCCESS) {
    report_platform_error(p, err, "");
    return;
  }
  if (count == 0) {
    tb_report_check(p->list, CL_BACKEND, false, "clGetPlatformIDs", "0 platforms");
    tb_report_set(p->list, CL_BACKEND, CL_ICD_FIX, "no OpenCL platform: the ICD loader reports 0 platforms");
    return;
  }
  tb_cl_uint asked = count > CL_MAX_PLATFORMS ? CL_MAX_PLATFORMS : count;
  tb_cl_platform_id *ids = calloc(asked, sizeof *ids);
  if (!ids) {
    p->list->arena.failed = true;
    return;
  }
  tb_cl_uint second = 0;
  err = p->api.clGetPlatformIDs(asked, ids, &second);
  if (err != TB_CL_SUCCESS) {
    report_platform_error(p, err, " on the second call");
    free(ids);
    return;
  }
  tb_cl_uint use = second < asked ? second : asked;
  if (second != count)
    tb_report_check(p->list, CL_BACKEND, false, "clGetPlatformIDs", "platform count changed from %u to %u between calls; probing %u",
                    count, second, use);
  else
    tb_report_check(p->list, CL_BACKEND, true, "clGetPlatformIDs", "%u platform%s%s", count, count == 1 ? "" : "s",
                    count > asked ? " (probing the first 64)" : "");
  for (tb_cl_uint i = 0; i < use; i++) {
    if (ids[i]) probe_platform(p, ids[i], i);
    else tb_report_check(p->list, CL_BACKEND, false, "clGetPlatformIDs", "platform id %u is NULL; skipped", i);
  }
  free(ids);
  size_t found = 0;
  for (size_t i = 0; i < p->list->count; i++) found += p->list->devices[i]->backend == CL_BACKEND;
  if (found > 0) return;
  if (p->first_error[0])
    tb_report_set(p->list, CL_BACKEND, "check the OpenCL installation with `clinfo`; update or reinstall the driver",
                  "%u OpenCL platform%s but no device: %s", use, use == 1 ? "" : "s", p->first_error);
  else
    tb_report_set(p->list, CL_BACKEND, "install the OpenCL driver for your hardware (for the CPU: pocl-opencl-icd)",
                  "%u OpenCL platform%s but no device", use, use == 1 ? "" : "s");
}

static void *open_loader(tb_device_list *list, tb_dl_result *dl) {
  void *handle = tb_cl_loader_open(dl);
  if (handle) {
    tb_report_check(list, CL_BACKEND, true, dl->from_env ? "dlopen TB_OPENCL_LIB" : "dlopen libOpenCL.so.1", "%s", dl->path);
    return handle;
  }
  if (dl->from_env) {
    tb_report_check(list, CL_BACKEND, false, "dlopen TB_OPENCL_LIB", "%s: %s", dl->tried, dl->error);
    tb_report_set(list, CL_BACKEND, "point TB_OPENCL_LIB at an OpenCL ICD loader (libOpenCL.so.1), or unset it to search the loader path",
                  "%s could not be loaded: %s", dl->tried, dl->error);
  } else {
    tb_report_check(list, CL_BACKEND, false, "dlopen libOpenCL.so.1", "tried %s: %s", dl->tried, dl->error);
    tb_report_set(list, CL_BACKEND,
                  "install ocl-icd-libopencl1 and an ICD (e.g. pocl-opencl-icd, or your GPU vendor's OpenCL driver), "
                  "or set TB_OPENCL_LIB to the path of libOpenCL.so.1",
                  "libOpenCL.so.1 not found in the loader path");
  }
  return NULL;
}

void tb_probe_opencl(tb_device_list *list) {
  cl_probe p = {.list = list};
  tb_dl_result dl;
  void *handle = open_loader(list, &dl);
  if (!handle) return;
  char missing[128];
  if (!tb_cl_loader_resolve(handle, &p.api, missing, sizeof missing)) {
    tb_report_check(list, CL_BACKEND, false, "dlsym", "%s not found in %s", missing, dl.path);
    tb_report_set(list, CL_BACKEND,
                  dl.from_env ? "point TB_OPENCL_LIB at an OpenCL ICD loader (libOpenCL.so.1), or unset it"
                              : "reinstall ocl-icd-libopencl1: the library found is not an OpenCL ICD loader",
                  "%s not found in %s", missing, dl.path);
    return;
  }
  probe_platforms(&p);
}
