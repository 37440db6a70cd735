/* The NVIDIA probe (tb_probe_cuda): the PCI bus and the driver (libcuda, NVML) seen together, so that
 * every NVIDIA GPU is listed, usable or not, with the reason and the fix when not. The bus says what
 * is installed, the driver says what can be used; a GPU the driver does not list stays in the list
 * as "pci:<bus id>" with the first thing that stands in its way. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/fs.h"
#include "discover/capability.h"
#include "discover/nvidia_cuda.h"
#include "discover/nvidia_nvml.h"
#include "discover/nvidia_order.h"
#include "discover/nvidia_pci.h"
#include "discover/probes.h"

static const char *const fix_no_driver =
    "install the NVIDIA driver (the nvidia-driver package) and load it with `modprobe nvidia`; `dmesg | grep -i nvrm` "
    "says why it did not bind";
static const char *const fix_nouveau =
    "install the NVIDIA driver and blacklist nouveau: CUDA needs the nvidia kernel driver";
static const char *const fix_vfio =
    "unbind the GPU from vfio-pci and bind it to nvidia if this host, not a virtual machine, should use it";
static const char *const fix_other_driver = "bind the GPU to the nvidia kernel driver (install the NVIDIA driver)";
static const char *const fix_no_libcuda =
    "install the NVIDIA driver (the nvidia-driver package, which provides libcuda.so.1) or set TB_CUDA_LIB to the path "
    "of libcuda.so.1";
static const char *const fix_env_libcuda =
    "set TB_CUDA_LIB to the path of the driver's libcuda.so.1, or unset it to search the loader path";
static const char *const fix_bad_libcuda =
    "point TB_CUDA_LIB at the NVIDIA driver's libcuda.so.1 (not another library), or reinstall the NVIDIA driver";
static const char *const fix_node_missing =
    "load the nvidia kernel module and create its device nodes (`nvidia-modprobe` or `modprobe nvidia`); in a "
    "container, pass the GPU in (docker run --gpus all)";
static const char *const fix_node_access =
    "add the user to the video group (`usermod -aG video $USER`, then log in again) or check the device node "
    "permissions (`ls -l /dev/nvidia*`)";
static const char *const fix_bad_value =
    "upgrade or reinstall the NVIDIA driver; if it persists, report it with the output of `tb doctor --json`";
static const char *const fix_visible_devices = "unset CUDA_VISIBLE_DEVICES or add this GPU to it";
static const char *const fix_unlisted =
    "run `nvidia-smi` and check `dmesg | grep -i nvrm` for errors on this GPU (it may need a reset or have fallen off "
    "the bus)";

typedef struct nv_cause {
  char text[640];
  const char *fix;
} nv_cause;

typedef struct nv_probe {
  tb_device_list *list;
  tb_nv_pci_gpu *bus;
  size_t bus_count;
  tb_cuda_info cuda;
  tb_nvml *nvml;
  bool nvml_tried;
  char kernel_version[64];
  char nvml_version[96];
  char cuda_api[16];        /* "12.4" */
  const char *driver_version;
  int ctl_errno;            /* access to /dev/nvidiactl; -1 until checked */
  nv_cause first;           /* the first reason a GPU is unusable, for the summary */
  bool have_first;
} nv_probe;

static tb_nv_pci_gpu *find_bus(nv_probe *p, const char *bus_id) {
  if (!bus_id[0]) return NULL;
  for (size_t i = 0; i < p->bus_count; i++)
    if (strcmp(p->bus[i].pci.bus_id, bus_id) == 0) return &p->bus[i];
  return NULL;
}

static void set_cause(nv_cause *c, const char *fix, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_cause(nv_cause *c, const char *fix, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->text, sizeof c->text, fmt, ap);
  va_end(ap);
  c->fix = fix;
}

static void mark_unusable(nv_probe *p, tb_device_info *d, const nv_cause *c) {
  if (d->pci_bus_id[0])
    tb_dev_unusable(p->list, d, c->fix, "NVIDIA GPU at %s present but %s", d->pci_bus_id, c->text);
  else
    tb_dev_unusable(p->list, d, c->fix, "NVIDIA GPU %s present but %s", d->device, c->text);
  if (!p->have_first) {
    p->first = *c;
    p->have_first = true;
  }
}

/* /dev/nvidiactl and /dev/nvidiaN of a GPU bound to the nvidia driver; false when both can be opened. */
static bool node_problem(nv_probe *p, const tb_nv_pci_gpu *g, nv_cause *c) {
  if (g->minor < 0) return false;
  if (p->ctl_errno < 0) {
    p->ctl_errno = tb_nv_node_access("/dev/nvidiactl");
    tb_report_check(p->list, TB_BACKEND_CUDA, p->ctl_errno == 0, "/dev/nvidiactl", "%s",
                    p->ctl_errno == 0 ? "read-write access" : strerror(p->ctl_errno));
  }
  char node[32];
  int err = p->ctl_errno;
  if (err == 0) {
    snprintf(node, sizeof node, "/dev/nvidia%d", g->minor);
    err = tb_nv_node_access(node);
    tb_report_check(p->list, TB_BACKEND_CUDA, err == 0, node, "%s: %s", g->pci.bus_id,
                    err == 0 ? "read-write access" : strerror(err));
  } else {
    snprintf(node, sizeof node, "/dev/nvidiactl");
  }
  if (err == 0) return false;
  if (err == ENOENT)
    set_cause(c, fix_node_missing, "%s does not exist", node);
  else
    set_cause(c, fix_node_access, "%s is not accessible (%s)", node, strerror(err));
  return true;
}

/* Why the driver does not list a GPU that the bus shows: the first obstacle, in the order a person
 * would fix them. */
static void bus_cause(nv_probe *p, const tb_nv_pci_gpu *g, nv_cause *c) {
  const char *drv = g->pci.driver;
  const tb_cuda_info *cu = &p->cuda;
  if (!drv[0]) {
    set_cause(c, fix_no_driver, "no kernel driver is bound to it");
  } else if (strcmp(drv, "nouveau") == 0) {
    set_cause(c, fix_nouveau, "it is bound to nouveau, which has no CUDA, instead of the nvidia driver");
  } else if (strcmp(drv, "vfio-pci") == 0) {
    set_cause(c, fix_vfio, "it is bound to vfio-pci (reserved for a virtual machine), not to the nvidia driver");
  } else if (strcmp(drv, "nvidia") != 0) {
    set_cause(c, fix_other_driver, "it is bound to the %s driver, not to nvidia", drv);
  } else if (cu->state == TB_CUDA_LIB_MISSING) {
    if (cu->dl.from_env)
      set_cause(c, fix_env_libcuda, "libcuda.so.1 not found: %s (%s)", cu->dl.tried, cu->dl.error);
    else
      set_cause(c, fix_no_libcuda, "libcuda.so.1 not found in the loader path");
  } else if (cu->state == TB_CUDA_SYMBOL_MISSING) {
    set_cause(c, fix_bad_libcuda, "%s not found in %s, so it is not a usable libcuda", cu->missing, cu->dl.path);
  } else if (cu->state == TB_CUDA_STUB) {
    set_cause(c, tb_cuda_error_fix(cu->code),
              "the CUDA toolkit's stub libcuda was found at %s; it is not a driver (cuInit returned %d %s)",
              cu->dl.path, cu->code, cu->code_name);
  } else if (node_problem(p, g, c)) {
    /* cause set */
  } else if (cu->state == TB_CUDA_CALL_FAILED) {
    set_cause(c, tb_cuda_error_fix(cu->code), "%s failed with %d %s", cu->failed_call, cu->code, cu->code_name);
  } else {
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (visible)
      set_cause(c, fix_visible_devices, "libcuda lists %d device%s and not this one (CUDA_VISIBLE_DEVICES=%s)",
                cu->count, cu->count == 1 ? "" : "s", visible);
    else
      set_cause(c, fix_unlisted, "libcuda lists %d device%s and not this one", cu->count, cu->count == 1 ? "" : "s");
  }
}

static void set_architecture(nv_probe *p, tb_device_info *d, int major, int minor) {
  d->compute_major = major;
  d->compute_minor = minor;
  tb_dev_set(p->list, &d->arch_id, "sm_%d%d", major, minor);
  tb_capability_apply(p->list, d, tb_capability_nvidia(major, minor));
}

static void add_bus_properties(nv_probe *p, tb_device_info *d, const tb_nv_pci_gpu *g) {
  if (!g) return;
  tb_dev_prop(p->list, d, "pci_device_id", "0x%04x", g->pci.device);
  tb_dev_prop(p->list, d, "kernel_driver", "%s", g->pci.driver[0] ? g->pci.driver : "none");
  if (g->pci.numa_node >= 0) tb_dev_prop(p->list, d, "numa_node", "%d", g->pci.numa_node);
  if (g->minor >= 0) tb_dev_prop(p->list, d, "dev_node", "/dev/nvidia%d", g->minor);
}

static void add_driver_device(nv_probe *p, const tb_cuda_gpu *g) {
  tb_device_info *d = tb_devlist_add(p->list, TB_BACKEND_CUDA);
  if (!d) return;
  tb_nv_pci_gpu *bus = find_bus(p, g->bus_id);
  if (bus) bus->listed = true;
  const tb_nv_model *model = bus ? tb_nv_model_lookup(bus->pci.device) : NULL;
  if (g->name[0])
    tb_dev_set(p->list, &d->name, "%s", g->name);
  else if (model)
    tb_dev_set(p->list, &d->name, "%s", model->name);
  else
    tb_dev_set(p->list, &d->name, "NVIDIA GPU");
  d->vendor = "NVIDIA";
  d->type = g->integrated ? TB_DEVICE_INTEGRATED_GPU : TB_DEVICE_DISCRETE_GPU;
  tb_dev_set(p->list, &d->pci_bus_id, "%s", g->bus_id);
  tb_dev_set(p->list, &d->uuid, "%s", g->uuid);
  tb_dev_set(p->list, &d->driver_version, "%s", p->driver_version);
  d->memory_total = g->memory_total;
  d->memory_total_known = g->memory_total_known;
  d->compute_units = g->sm_count;
  if (p->cuda_api[0]) tb_dev_prop(p->list, d, "cuda_driver_api", "%s", p->cuda_api);
  if (g->sm_count) tb_dev_prop(p->list, d, "sm_count", "%d", g->sm_count);
  if (g->clock_khz) tb_dev_prop(p->list, d, "clock_mhz", "%d", g->clock_khz / 1000);
  if (g->memory_clock_khz) tb_dev_prop(p->list, d, "memory_clock_mhz", "%d", g->memory_clock_khz / 1000);
  if (g->bus_width_bits) tb_dev_prop(p->list, d, "memory_bus_width_bits", "%d", g->bus_width_bits);
  if (g->l2_bytes) tb_dev_prop(p->list, d, "l2_cache_bytes", "%d", g->l2_bytes);
  tb_dev_prop(p->list, d, "libcuda", "%s", p->cuda.dl.path);
  add_bus_properties(p, d, bus);

  nv_cause c;
  if (g->problem[0]) {
    tb_capability_apply(p->list, d, NULL);
    set_cause(&c, fix_bad_value, "%s", g->problem);
    mark_unusable(p, d, &c);
    return;
  }
  set_architecture(p, d, g->cc_major, g->cc_minor);
  d->usable = true;
  if (bus && node_problem(p, bus, &c)) mark_unusable(p, d, &c);
}

static void add_bus_device(nv_probe *p, const tb_nv_pci_gpu *g) {
  tb_device_info *d = tb_devlist_add_unindexed(p->list, TB_BACKEND_CUDA, g->pci.bus_id);
  if (!d) return;
  const tb_nv_model *model = tb_nv_model_lookup(g->pci.device);
  if (model)
    tb_dev_set(p->list, &d->name, "%s", model->name);
  else
    tb_dev_set(p->list, &d->name, "NVIDIA GPU 0x%04x", g->pci.device);
  d->vendor = "NVIDIA";
  d->type = TB_DEVICE_DISCRETE_GPU;
  if (strcmp(g->pci.driver, "nvidia") == 0 && p->driver_version[0])
    tb_dev_set(p->list, &d->driver_version, "%s", p->driver_version);
  add_bus_properties(p, d, g);
  if (model)
    set_architecture(p, d, model->cc_major, model->cc_minor);
  else
    tb_capability_apply(p->list, d, NULL);
  nv_cause c;
  bus_cause(p, g, &c);
  mark_unusable(p, d, &c);
}

/* Free and total memory of every CUDA device from one source, so that "free/total" compares like with
 * like: NVML when it answers for the device (both figures; CUDA's cuDeviceTotalMem counts memory NVML
 * does not, e.g. 79.6 against 79.2 GiB on an H100), else libcuda's total alone (its free figure needs a
 * context, which discovery does not create). The property memory_source says which. */
static void add_memory(nv_probe *p) {
  for (size_t i = 0; i < p->list->count; i++) {
    tb_device_info *d = p->list->devices[i];
    if (d->backend != TB_BACKEND_CUDA) continue;
    uint64_t total = 0, free_bytes = 0;
    if (p->nvml && d->pci_bus_id[0] && tb_nvml_memory(p->nvml, p->list, d->pci_bus_id, &total, &free_bytes)) {
      d->memory_total = total;
      d->memory_total_known = true;
      d->memory_free = free_bytes;
      d->memory_free_known = true;
      tb_dev_prop(p->list, d, "memory_source", "NVML");
    } else if (d->memory_total_known) {
      tb_dev_prop(p->list, d, "memory_source", "libcuda (free memory unknown without NVML)");
    }
  }
}

/* The summary when neither the bus nor the driver shows a GPU. */
static void report_none(nv_probe *p) {
  const tb_cuda_info *cu = &p->cuda;
  const char *none = "no NVIDIA GPU found: no NVIDIA display, 3D or accelerator function on the PCI bus";
  switch (cu->state) {
    case TB_CUDA_LIB_MISSING:
      /* No hardware: nothing to fix, so no fix (`tb doctor` would otherwise list it as a to-do). */
      tb_report_set(p->list, TB_BACKEND_CUDA, NULL, "%s, and libcuda.so.1 not found", none);
      break;
    case TB_CUDA_SYMBOL_MISSING:
      tb_report_set(p->list, TB_BACKEND_CUDA, fix_bad_libcuda, "%s, and %s not found in %s", none, cu->missing,
                    cu->dl.path);
      break;
    case TB_CUDA_STUB:
      tb_report_set(p->list, TB_BACKEND_CUDA, tb_cuda_error_fix(cu->code),
                    "%s, and the libcuda at %s is the CUDA toolkit's stub, not a driver (cuInit returned %d %s)", none,
                    cu->dl.path, cu->code, cu->code_name);
      break;
    case TB_CUDA_CALL_FAILED:
      tb_report_set(p->list, TB_BACKEND_CUDA, tb_cuda_error_fix(cu->code), "%s, and %s failed with %d %s", none,
                    cu->failed_call, cu->code, cu->code_name);
      break;
    case TB_CUDA_NOT_OPENED:
      tb_report_set(p->list, TB_BACKEND_CUDA, NULL, "%s, and no NVIDIA kernel driver (/proc/driver/nvidia)", none);
      break;
    case TB_CUDA_READY:
      tb_report_set(p->list, TB_BACKEND_CUDA, tb_cuda_error_fix(TB_CUDA_ERROR_NO_DEVICE),
                    "%s, and libcuda at %s (CUDA %s) lists no device", none, cu->dl.path, p->cuda_api);
      break;
  }
}

static void report(nv_probe *p) {
  size_t found = 0, usable = 0;
  for (size_t i = 0; i < p->list->count; i++) {
    const tb_device_info *d = p->list->devices[i];
    if (d->backend != TB_BACKEND_CUDA) continue;
    found++;
    if (d->usable) usable++;
  }
  const char *s = found == 1 ? "" : "s";
  if (found == 0)
    report_none(p);
  else if (usable == found)
    tb_report_set(p->list, TB_BACKEND_CUDA, NULL, "%zu NVIDIA GPU%s usable (driver %s, CUDA %s)", found, s,
                  p->driver_version, p->cuda_api);
  else
    tb_report_set(p->list, TB_BACKEND_CUDA, p->first.fix, "%zu NVIDIA GPU%s found, %zu usable: %s", found, s, usable,
                  p->have_first ? p->first.text : "see the reasons of each device");
}

static void read_versions(nv_probe *p) {
  if (tb_nv_kernel_version(p->kernel_version, sizeof p->kernel_version))
    tb_report_check(p->list, TB_BACKEND_CUDA, true, "/proc/driver/nvidia/version", "kernel module %s",
                    p->kernel_version);
  else if (tb_fs_exists("/proc/driver/nvidia/version"))
    tb_report_check(p->list, TB_BACKEND_CUDA, false, "/proc/driver/nvidia/version", "empty or holds no version number");
  else
    tb_report_check(p->list, TB_BACKEND_CUDA, false, "/proc/driver/nvidia/version",
                    "absent: the nvidia kernel module is not loaded");
  int v = p->cuda.driver_version;
  if (v > 0) snprintf(p->cuda_api, sizeof p->cuda_api, "%d.%d", v / 1000, (v % 1000) / 10);
  if (p->nvml_version[0])
    p->driver_version = p->nvml_version;
  else if (p->kernel_version[0])
    p->driver_version = p->kernel_version;
  else
    p->driver_version = p->cuda_api;
}

static void open_nvml(nv_probe *p) {
  if (p->nvml_tried) return;
  p->nvml_tried = true;
  p->nvml = tb_nvml_open(p->list, p->nvml_version, sizeof p->nvml_version);
}

static bool from_cuinit(nv_probe *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool from_cuinit(nv_probe *p, const char *fmt, ...) {
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  tb_report_check(p->list, TB_BACKEND_CUDA, true, "device list", "from cuInit: %s", why);
  return false;
}

/* The GPUs from NVML, matched to the PCI bus and numbered as CUDA would, without cuInit (about 250 ms on
 * an H100 host). true when this decided p->cuda (libcuda is still opened, for its path and to see that
 * it is a driver, not the stub); false, with a check saying why, when only cuInit can list them. */
static bool list_from_nvml(nv_probe *p) {
  if (p->bus_count == 0) return from_cuinit(p, "the PCI bus shows no NVIDIA GPU to match NVML's list against");
  open_nvml(p);
  if (!p->nvml) return from_cuinit(p, "NVML is not available");
  tb_cuda_gpu *gpus = calloc(p->bus_count, sizeof *gpus);
  if (!gpus) {
    p->list->arena.failed = true;
    return true;
  }
  int n = 0;
  char why[512] = "";
  for (size_t i = 0; i < p->bus_count && !why[0]; i++) {
    if (strcmp(p->bus[i].pci.driver, "nvidia") != 0) continue; /* not a CUDA device: the bus reasons apply */
    if (!tb_nvml_describe(p->nvml, p->bus[i].pci.bus_id, &gpus[n++], why, sizeof why) && !why[0])
      snprintf(why, sizeof why, "NVML could not describe %s", p->bus[i].pci.bus_id);
  }
  if (!why[0] && n == 0) snprintf(why, sizeof why, "no GPU on the PCI bus is bound to the nvidia driver");
  if (!why[0] && tb_nvml_count(p->nvml) != n)
    snprintf(why, sizeof why, "NVML lists %d GPUs and the PCI bus shows %d bound to nvidia", tb_nvml_count(p->nvml), n);
  if (!why[0])
    tb_nv_cuda_order(gpus, &n, getenv("CUDA_DEVICE_ORDER"), getenv("CUDA_VISIBLE_DEVICES"), why, sizeof why);
  if (why[0]) {
    free(gpus);
    return from_cuinit(p, "%s", why);
  }
  if (!tb_cuda_open_without_init(p->list, &p->cuda)) {
    free(gpus);
    p->list->arena.failed = true;
    return true;
  }
  if (p->cuda.init_called || p->cuda.state != TB_CUDA_READY) {
    free(gpus); /* libcuda is missing or is not a working driver: the reasons read as before */
    return true;
  }
  p->cuda.gpus = gpus;
  p->cuda.count = n;
  tb_report_check(p->list, TB_BACKEND_CUDA, true, "device list", "from NVML without cuInit: %d GPU%s in CUDA's order", n,
                  n == 1 ? "" : "s");
  for (int i = 0; i < n; i++)
    tb_report_check(p->list, TB_BACKEND_CUDA, true, "nvml device", "cuda:%d %s, sm_%d%d, %d SMs, bus %s", i, gpus[i].name,
                    gpus[i].cc_major, gpus[i].cc_minor, gpus[i].sm_count, gpus[i].bus_id);
  return true;
}

void tb_probe_cuda(tb_device_list *list) {
  nv_probe p;
  memset(&p, 0, sizeof p);
  p.list = list;
  p.ctl_errno = -1;
  p.driver_version = "";
  if (!tb_nv_pci_scan(list, &p.bus, &p.bus_count)) {
    list->arena.failed = true;
    goto done;
  }
  /* libcuda and NVML are opened only when something can use them: cuInit alone costs hundreds of
   * milliseconds, and a runtime stays loaded for the life of the process once opened (core/dl.c). */
  if (p.bus_count == 0 && !tb_fs_exists("/proc/driver/nvidia") && tb_pci_bus_visible()) {
    p.cuda.state = TB_CUDA_NOT_OPENED;
    tb_report_check(list, TB_BACKEND_CUDA, true, "dlopen libcuda",
                    "not opened: no NVIDIA function on the PCI bus and no /proc/driver/nvidia");
  } else if (!list_from_nvml(&p) && !tb_cuda_query(list, &p.cuda)) {
    list->arena.failed = true;
    goto done;
  }
  if (list->arena.failed) goto done;
  if (p.bus_count > 0 || p.cuda.count > 0) open_nvml(&p);
  read_versions(&p);
  for (int i = 0; i < p.cuda.count; i++) add_driver_device(&p, &p.cuda.gpus[i]);
  for (size_t i = 0; i < p.bus_count; i++)
    if (!p.bus[i].listed) add_bus_device(&p, &p.bus[i]);
  add_memory(&p);
  report(&p);
done:
  tb_nvml_close(p.nvml);
  tb_cuda_info_free(&p.cuda);
  free(p.bus);
}
