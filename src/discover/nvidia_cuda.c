/* libcuda through dlopen (the symbol table is in nvidia_cuda_api.h): cuInit, and the per-device attribute
 * queries of the NVIDIA probe. Only queries that need no context are made (no cuCtxCreate, no primary context retain). */
#include "discover/nvidia_cuda.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/uuid.h"
#include "runtime/nvidia_cuda_api.h"
#include "discover/pci.h"

/* CUdevice_attribute values read here (numbers from the CUDA driver API's cuda.h). */
enum tb_cu_attribute {
  TB_CU_ATTR_CLOCK_RATE = 13,              /* kHz */
  TB_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
  TB_CU_ATTR_INTEGRATED = 18,
  TB_CU_ATTR_MEMORY_CLOCK_RATE = 36,       /* kHz */
  TB_CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37, /* bits */
  TB_CU_ATTR_L2_CACHE_SIZE = 38,           /* bytes */
  TB_CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  TB_CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
};

static void error_name(const tb_cuda_api *api, tb_cu_result code, char *out, size_t cap) {
  tb_cuda_api_error_name(api, code, out, cap);
}

/* Printable text only: a driver's bytes end up in JSON and terminals. */
static void sanitize(char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f) *s = '?';
}

/* NVIDIA's form: "GPU-" and the UUID, as nvidia-smi -L shows it. */
static void format_uuid(const tb_cu_uuid *u, char *out, size_t cap) {
  char text[TB_UUID_TEXT_SIZE];
  tb_uuid_format(u->bytes, text);
  snprintf(out, cap, "GPU-%s", text);
}

typedef struct attr_query {
  tb_device_list *list;
  const tb_cuda_api *api;
  tb_cu_device handle;
  int ordinal;
} attr_query;

/* Read one attribute; false (with a check naming the attribute, the code and its name) on error. */
static bool read_attr(const attr_query *q, int attribute, const char *attr_name, int *value) {
  int v = 0;
  tb_cu_result r = q->api->cuDeviceGetAttribute(&v, attribute, q->handle);
  if (r != TB_CUDA_SUCCESS) {
    char name[64];
    error_name(q->api, r, name, sizeof name);
    tb_report_check(q->list, TB_BACKEND_CUDA, false, "cuDeviceGetAttribute", "cuda:%d %s (%d): %d %s", q->ordinal,
                    attr_name, attribute, r, name);
    return false;
  }
  *value = v;
  return true;
}

/* A non-essential attribute: kept only when it is in [lo, hi], otherwise 0 and a check. */
static int read_ranged(const attr_query *q, int attribute, const char *attr_name, int lo, int hi) {
  int v = 0;
  if (!read_attr(q, attribute, attr_name, &v)) return 0;
  if (v < lo || v > hi) {
    tb_report_check(q->list, TB_BACKEND_CUDA, false, "cuDeviceGetAttribute",
                    "cuda:%d %s (%d) = %d is out of range, ignored", q->ordinal, attr_name, attribute, v);
    return 0;
  }
  return v;
}

static void read_compute_capability(const attr_query *q, tb_cuda_gpu *g) {
  int major = 0, minor = 0;
  bool ok_major = read_attr(q, TB_CU_ATTR_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR", &major);
  bool ok_minor = read_attr(q, TB_CU_ATTR_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR", &minor);
  if (!ok_major || !ok_minor) {
    snprintf(g->problem, sizeof g->problem,
             "libcuda did not report its compute capability (cuDeviceGetAttribute %d/%d failed)",
             TB_CU_ATTR_COMPUTE_CAPABILITY_MAJOR, TB_CU_ATTR_COMPUTE_CAPABILITY_MINOR);
    return;
  }
  if (major < 1 || major > 99 || minor < 0 || minor > 9) {
    snprintf(g->problem, sizeof g->problem, "libcuda reported compute capability %d.%d, which is not a valid value",
             major, minor);
    return;
  }
  g->cc_major = major;
  g->cc_minor = minor;
}

static void read_identity(const attr_query *q, tb_cuda_gpu *g) {
  const tb_cuda_api *api = q->api;
  char name[64];
  tb_cu_result r = api->cuDeviceGetName(g->name, (int)sizeof g->name, q->handle);
  g->name[sizeof g->name - 1] = '\0';
  if (r != TB_CUDA_SUCCESS) {
    error_name(api, r, name, sizeof name);
    tb_report_check(q->list, TB_BACKEND_CUDA, false, "cuDeviceGetName", "cuda:%d: %d %s", q->ordinal, r, name);
    g->name[0] = '\0';
  }
  sanitize(g->name);

  char bus[64] = "";
  r = api->cuDeviceGetPCIBusId(bus, (int)sizeof bus, q->handle);
  bus[sizeof bus - 1] = '\0';
  if (r != TB_CUDA_SUCCESS) {
    error_name(api, r, name, sizeof name);
    tb_report_check(q->list, TB_BACKEND_CUDA, false, "cuDeviceGetPCIBusId", "cuda:%d: %d %s", q->ordinal, r, name);
  } else if (!tb_pci_normalize(bus, g->bus_id, sizeof g->bus_id)) {
    sanitize(bus);
    g->bus_id[0] = '\0';
    tb_report_check(q->list, TB_BACKEND_CUDA, false, "cuDeviceGetPCIBusId", "cuda:%d: \"%s\" is not a PCI bus id",
                    q->ordinal, bus);
  }

  tb_cu_result (*get_uuid)(tb_cu_uuid *, tb_cu_device) =
      api->cuDeviceGetUuid_v2 ? api->cuDeviceGetUuid_v2 : api->cuDeviceGetUuid;
  tb_cu_uuid uuid;
  memset(&uuid, 0, sizeof uuid);
  if (!get_uuid) {
    tb_report_check(q->list, TB_BACKEND_CUDA, false, "cuDeviceGetUuid",
                    "neither cuDeviceGetUuid_v2 nor cuDeviceGetUuid is exported");
  } else if ((r = get_uuid(&uuid, q->handle)) != TB_CUDA_SUCCESS) {
    error_name(api, r, name, sizeof name);
    tb_report_check(q->list, TB_BACKEND_CUDA, false, "cuDeviceGetUuid", "cuda:%d: %d %s", q->ordinal, r, name);
  } else {
    format_uuid(&uuid, g->uuid, sizeof g->uuid);
  }

  size_t bytes = 0;
  r = api->cuDeviceTotalMem_v2(&bytes, q->handle);
  if (r != TB_CUDA_SUCCESS) {
    error_name(api, r, name, sizeof name);
    tb_report_check(q->list, TB_BACKEND_CUDA, false, "cuDeviceTotalMem_v2", "cuda:%d: %d %s", q->ordinal, r, name);
  } else {
    g->memory_total = bytes;
    g->memory_total_known = bytes > 0;
  }
}

static void read_device(tb_device_list *list, const tb_cuda_api *api, int ordinal, tb_cuda_gpu *g) {
  tb_cu_device handle = 0;
  tb_cu_result r = api->cuDeviceGet(&handle, ordinal);
  if (r != TB_CUDA_SUCCESS) {
    char name[64];
    error_name(api, r, name, sizeof name);
    snprintf(g->problem, sizeof g->problem, "cuDeviceGet(%d) failed with %d %s", ordinal, r, name);
    tb_report_check(list, TB_BACKEND_CUDA, false, "cuDeviceGet", "cuda:%d: %d %s", ordinal, r, name);
    return;
  }
  attr_query q = {list, api, handle, ordinal};
  read_identity(&q, g);
  read_compute_capability(&q, g);
  g->sm_count = read_ranged(&q, TB_CU_ATTR_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT", 1, 1 << 20);
  g->clock_khz = read_ranged(&q, TB_CU_ATTR_CLOCK_RATE, "CLOCK_RATE", 1, 100 * 1000 * 1000);
  g->memory_clock_khz = read_ranged(&q, TB_CU_ATTR_MEMORY_CLOCK_RATE, "MEMORY_CLOCK_RATE", 1, 100 * 1000 * 1000);
  g->bus_width_bits = read_ranged(&q, TB_CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH, "GLOBAL_MEMORY_BUS_WIDTH", 1, 1 << 20);
  g->l2_bytes = read_ranged(&q, TB_CU_ATTR_L2_CACHE_SIZE, "L2_CACHE_SIZE", 1, 1 << 30);
  g->integrated = read_ranged(&q, TB_CU_ATTR_INTEGRATED, "INTEGRATED", 0, 1) == 1;
  if (g->problem[0])
    tb_report_check(list, TB_BACKEND_CUDA, false, "cuda device", "cuda:%d %s: %s", ordinal, g->name, g->problem);
  else
    tb_report_check(list, TB_BACKEND_CUDA, true, "cuda device", "cuda:%d %s, sm_%d%d, %d SMs, bus %s", ordinal, g->name,
                    g->cc_major, g->cc_minor, g->sm_count, g->bus_id[0] ? g->bus_id : "unknown");
}

static void call_failed(const tb_cuda_api *api, tb_cuda_info *out, const char *call, tb_cu_result code) {
  out->state = TB_CUDA_CALL_FAILED;
  snprintf(out->failed_call, sizeof out->failed_call, "%s", call);
  out->code = code;
  error_name(api, code, out->code_name, sizeof out->code_name);
}

/* cuInit, the driver version and the device count. false when any fails (out says which). */
static bool initialise(tb_device_list *list, const tb_cuda_api *api, tb_cuda_info *out) {
  tb_cu_result r = api->cuInit(0);
  if (r != TB_CUDA_SUCCESS) {
    call_failed(api, out, "cuInit", r);
    if (r == TB_CUDA_ERROR_STUB_LIBRARY) out->state = TB_CUDA_STUB;
    tb_report_check(list, TB_BACKEND_CUDA, false, "cuInit", "%d %s%s", r, out->code_name,
                    r == TB_CUDA_ERROR_STUB_LIBRARY ? " (the CUDA toolkit's stub library, not a driver)" : "");
    return false;
  }
  tb_report_check(list, TB_BACKEND_CUDA, true, "cuInit", "0 CUDA_SUCCESS");
  int version = 0;
  r = api->cuDriverGetVersion(&version);
  if (r != TB_CUDA_SUCCESS) {
    call_failed(api, out, "cuDriverGetVersion", r);
    tb_report_check(list, TB_BACKEND_CUDA, false, "cuDriverGetVersion", "%d %s", r, out->code_name);
    return false;
  }
  out->driver_version = version > 0 ? version : 0;
  tb_report_check(list, TB_BACKEND_CUDA, version > 0, "cuDriverGetVersion", "%d (CUDA %d.%d)", version, version / 1000,
                  (version % 1000) / 10);
  int count = 0;
  r = api->cuDeviceGetCount(&count);
  if (r != TB_CUDA_SUCCESS) {
    call_failed(api, out, "cuDeviceGetCount", r);
    tb_report_check(list, TB_BACKEND_CUDA, false, "cuDeviceGetCount", "%d %s", r, out->code_name);
    return false;
  }
  if (count < 0 || count > 4096) {
    tb_report_check(list, TB_BACKEND_CUDA, false, "cuDeviceGetCount", "%d is not a device count; taken as 0", count);
    count = 0;
  } else {
    tb_report_check(list, TB_BACKEND_CUDA, true, "cuDeviceGetCount", "%d", count);
  }
  out->count = count;
  return true;
}

/* Without cuInit: cuDriverGetVersion answers before it (the toolkit's stub answers 34 here too).
 * true when it did; the caller then lists the devices from NVML. */
static bool version_without_init(tb_device_list *list, const tb_cuda_api *api, tb_cuda_info *out) {
  int version = 0;
  if (api->cuDriverGetVersion(&version) != TB_CUDA_SUCCESS || version <= 0) return false;
  out->driver_version = version;
  tb_report_check(list, TB_BACKEND_CUDA, true, "cuDriverGetVersion", "%d (CUDA %d.%d)", version, version / 1000,
                  (version % 1000) / 10);
  tb_report_check(list, TB_BACKEND_CUDA, true, "cuInit", "not called: NVML lists the GPUs in CUDA's order");
  return true;
}

static bool query(tb_device_list *list, tb_cuda_info *out, bool lazy) {
  memset(out, 0, sizeof *out);
  tb_cuda_api api;
  void *handle = tb_cuda_api_open(&api, false, &out->dl, out->missing, sizeof out->missing);
  if (!handle && !out->missing[0]) {
    out->state = TB_CUDA_LIB_MISSING;
    tb_report_check(list, TB_BACKEND_CUDA, false, "dlopen libcuda", "%s: %s", out->dl.tried,
                    out->dl.error[0] ? out->dl.error : "not found");
    return true;
  }
  tb_report_check(list, TB_BACKEND_CUDA, true, "dlopen libcuda", "%s", out->dl.path);
  if (!handle) {
    out->state = TB_CUDA_SYMBOL_MISSING;
    tb_report_check(list, TB_BACKEND_CUDA, false, "libcuda symbols", "%s not found in %s", out->missing, out->dl.path);
    return true;
  }
  tb_report_check(list, TB_BACKEND_CUDA, true, "libcuda symbols", "all required symbols found%s",
                  api.cuDeviceGetUuid_v2 ? "" : " (no cuDeviceGetUuid_v2: using cuDeviceGetUuid)");

  if (lazy && version_without_init(list, &api, out)) {
    out->state = TB_CUDA_READY;
    return true;
  }
  out->init_called = true;
  if (!initialise(list, &api, out)) {
    return true;
  }
  out->state = TB_CUDA_READY;
  if (out->count > 0) {
    out->gpus = calloc((size_t)out->count, sizeof *out->gpus);
    if (!out->gpus) {
      out->count = 0;
      return false;
    }
  }
  for (int i = 0; i < out->count; i++) read_device(list, &api, i, &out->gpus[i]);
  /* libcuda stays loaded once cuInit has succeeded: the driver keeps process-wide state from then on,
   * a backend will open it again (the loader then hands back this same copy), and unloading an
   * initialised driver is not something NVIDIA supports. */
  return true;
}

bool tb_cuda_query(tb_device_list *list, tb_cuda_info *out) { return query(list, out, false); }

bool tb_cuda_open_without_init(tb_device_list *list, tb_cuda_info *out) { return query(list, out, true); }

void tb_cuda_info_free(tb_cuda_info *info) {
  free(info->gpus);
  info->gpus = NULL;
  info->count = 0;
}
