/* The ROCm probe: AMD GPUs from the KFD topology and the PCI bus, usable when /dev/kfd and the render
 * node are accessible and HIP lists them; free memory from ROCm SMI. Every GPU seen is listed, and the
 * ones that cannot be used say why and what to do. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/fs.h"
#include "discover/amd_hip.h"
#include "discover/amd_ids.h"
#include "discover/amd_kfd.h"
#include "discover/amd_smi.h"
#include "discover/capability.h"
#include "discover/pci.h"
#include "discover/probes.h"

#define FIX_GROUPS "add the user to the render and video groups (sudo usermod -aG render,video $USER) and log in again"
#define FIX_INSTALL_HIP "install ROCm (the hip-runtime-amd package) or set TB_HIP_LIB to the path of libamdhip64.so"

/* One AMD GPU as the sources see it; any of the pointers may be NULL. */
typedef struct amd_gpu {
  const tb_kfd_gpu *kfd;
  const tb_pci_device *pci;
  const tb_hip_device *hip;
  const tb_smi_device *smi;
  char bus_id[16];
  char label[160]; /* "AMD Instinct MI300X (gfx942) at 0000:05:00.0", for reasons */
  char reason[768];
  char fix[320];
} amd_gpu;

typedef struct amd_probe {
  tb_device_list *list;
  tb_kfd_topology kfd;
  tb_pci_device *pci;
  size_t pci_count;
  int kfd_errno; /* access(/dev/kfd, R_OK|W_OK): 0, ENOENT, EACCES ... */
  tb_hip_info hip;
  tb_smi_info smi;
  char driver_version[64];
  amd_gpu *gpus;
  size_t gpu_count;
} amd_probe;

/* snprintf into a fixed buffer; a sentence longer than the buffer is cut, which is acceptable here. */
static void put(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
}

static bool hip_claimed(const amd_probe *p, const tb_hip_device *h) {
  for (size_t j = 0; j < p->gpu_count; j++)
    if (p->gpus[j].hip == h) return true;
  return false;
}

/* The HIP device at this bus id that no GPU has claimed yet (partitions share a bus id). */
static const tb_hip_device *hip_by_bus(const amd_probe *p, const char *bus_id) {
  for (int i = 0; bus_id[0] && i < p->hip.count; i++)
    if (strcmp(p->hip.devices[i].bus_id, bus_id) == 0 && !hip_claimed(p, &p->hip.devices[i])) return &p->hip.devices[i];
  return NULL;
}

static const tb_pci_device *pci_by_bus(const amd_probe *p, const char *bus_id) {
  for (size_t i = 0; bus_id[0] && i < p->pci_count; i++)
    if (strcmp(p->pci[i].bus_id, bus_id) == 0) return &p->pci[i];
  return NULL;
}

static uint32_t pci_device_id(const amd_gpu *g) {
  if (g->kfd && g->kfd->device_id) return g->kfd->device_id;
  return g->pci ? g->pci->device : 0;
}

static const char *gpu_name(const amd_gpu *g, char *buf, size_t cap) {
  const char *known = tb_amd_product_name(pci_device_id(g));
  if (known) return known;
  if (g->hip && g->hip->name[0]) return g->hip->name;
  if (g->kfd && g->kfd->gfx[0]) {
    snprintf(buf, cap, "AMD GPU %s", g->kfd->gfx);
    return buf;
  }
  return "AMD GPU";
}

static void make_label(amd_gpu *g) {
  char buf[64], where[48];
  const char *name = gpu_name(g, buf, sizeof buf);
  const char *gfx = g->kfd ? g->kfd->gfx : "";
  if (g->bus_id[0])
    snprintf(where, sizeof where, "at %s", g->bus_id);
  else
    snprintf(where, sizeof where, "at KFD node %u", g->kfd ? g->kfd->node : 0u);
  if (gfx[0] && !strstr(name, gfx))
    snprintf(g->label, sizeof g->label, "%s (%s) %s", name, gfx, where);
  else
    snprintf(g->label, sizeof g->label, "%s %s", name, where);
}

static bool add_gpu(amd_probe *p, size_t *cap, const tb_kfd_gpu *kfd, const tb_pci_device *pci, const tb_hip_device *hip,
                    const char *bus_id) {
  if (p->gpu_count == *cap) {
    size_t ncap = *cap ? *cap * 2 : 8;
    amd_gpu *grown = realloc(p->gpus, ncap * sizeof *grown);
    if (!grown) return false;
    p->gpus = grown;
    *cap = ncap;
  }
  amd_gpu *g = &p->gpus[p->gpu_count++];
  memset(g, 0, sizeof *g);
  g->kfd = kfd;
  g->pci = pci;
  g->hip = hip;
  snprintf(g->bus_id, sizeof g->bus_id, "%s", bus_id ? bus_id : "");
  g->smi = tb_smi_find(&p->smi, g->bus_id);
  make_label(g);
  return true;
}

/* Every GPU once: KFD nodes first, then PCI functions no KFD node claims, then HIP devices neither has. */
static bool collect(amd_probe *p) {
  size_t cap = 0;
  for (size_t i = 0; i < p->kfd.gpu_count; i++) {
    const tb_kfd_gpu *k = &p->kfd.gpus[i];
    if (!add_gpu(p, &cap, k, pci_by_bus(p, k->bus_id), hip_by_bus(p, k->bus_id), k->bus_id)) return false;
  }
  for (size_t i = 0; i < p->pci_count; i++) {
    bool claimed = false;
    for (size_t j = 0; j < p->gpu_count && !claimed; j++) claimed = p->gpus[j].pci == &p->pci[i];
    if (!claimed && !add_gpu(p, &cap, NULL, &p->pci[i], hip_by_bus(p, p->pci[i].bus_id), p->pci[i].bus_id))
      return false;
  }
  for (int i = 0; i < p->hip.count; i++) {
    if (!hip_claimed(p, &p->hip.devices[i])) {
      tb_report_check(p->list, TB_BACKEND_ROCM, false, "HIP device without KFD node", "%d at %s", i,
                      p->hip.devices[i].bus_id[0] ? p->hip.devices[i].bus_id : "?");
      if (!add_gpu(p, &cap, NULL, NULL, &p->hip.devices[i], p->hip.devices[i].bus_id)) return false;
    }
  }
  return true;
}

/* A GPU the bus shows but the KFD does not. */
static void explain_no_kfd(const amd_probe *p, amd_gpu *g) {
  const char *driver = g->pci ? g->pci->driver : "";
  if (driver[0] && strcmp(driver, "amdgpu") != 0) {
    put(g->reason, sizeof g->reason, "%s is bound to the %s driver, not amdgpu (no /dev/kfd)", g->label, driver);
    put(g->fix, sizeof g->fix, "unbind it from %s and load amdgpu (sudo modprobe amdgpu), or use it inside the VM it is passed to", driver);
  } else if (!p->kfd.present) {
    put(g->reason, sizeof g->reason, "%s present but amdgpu kernel driver not loaded (no /dev/kfd)", g->label);
    put(g->fix, sizeof g->fix, "load the amdgpu driver (sudo modprobe amdgpu); if it is missing, install amdgpu-dkms from ROCm");
  } else {
    put(g->reason, sizeof g->reason,
             "%s is driven by amdgpu but has no KFD compute node (the GPU is not supported for compute, or KFD failed to initialise it)",
             g->label);
    put(g->fix, sizeof g->fix, "check dmesg for amdgpu and kfd errors; update the amdgpu driver (amdgpu-dkms)");
  }
}

static bool explain_device_node(amd_gpu *g, const char *node, int err) {
  if (err == 0) return false;
  if (err == ENOENT) {
    put(g->reason, sizeof g->reason, "%s present but %s is missing (the amdgpu compute device node; a container needs it passed in)",
             g->label, node);
    put(g->fix, sizeof g->fix, "in a container add --device=/dev/kfd --device=/dev/dri; otherwise reload amdgpu (sudo modprobe amdgpu) and check dmesg");
  } else {
    put(g->reason, sizeof g->reason, "%s present but %s not accessible (%s)", g->label, node, strerror(err));
    put(g->fix, sizeof g->fix, "%s", FIX_GROUPS);
  }
  return true;
}

static void explain_hip(const amd_probe *p, amd_gpu *g) {
  const tb_hip_info *h = &p->hip;
  const char *gfx = g->kfd && g->kfd->gfx[0] ? g->kfd->gfx : "this GPU";
  switch (h->state) {
    case TB_HIP_NOT_FOUND:
      if (h->dl.from_env) {
        put(g->reason, sizeof g->reason, "%s present but %s could not be loaded: %s", g->label, h->dl.tried, h->dl.error);
        put(g->fix, sizeof g->fix, "set TB_HIP_LIB to the path of libamdhip64.so, or unset it to search the loader path");
      } else {
        put(g->reason, sizeof g->reason, "%s present but libamdhip64.so not found (tried %s)", g->label, h->dl.tried);
        put(g->fix, sizeof g->fix, "%s", FIX_INSTALL_HIP);
      }
      return;
    case TB_HIP_BAD_LIBRARY:
      put(g->reason, sizeof g->reason, "%s present but %s lacks %s (HIP older than ROCm 5?)", g->label, h->dl.path,
               h->missing_symbol);
      put(g->fix, sizeof g->fix, "install ROCm 5 or newer (hip-runtime-amd), or point TB_HIP_LIB at a current libamdhip64.so");
      return;
    case TB_HIP_ERROR:
      put(g->reason, sizeof g->reason, "%s present but %s failed with %d (%s)", g->label, h->failed_call, h->error,
               h->error_name);
      if (h->error == 35)
        put(g->fix, sizeof g->fix, "the amdgpu kernel driver is older than this ROCm runtime: install the amdgpu-dkms of the same ROCm release");
      else if (h->error == 100)
        put(g->fix, sizeof g->fix, "check HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES, and that this ROCm release supports %s", gfx);
      else
        put(g->fix, sizeof g->fix, "check dmesg for amdgpu errors and that this ROCm release supports %s", gfx);
      return;
    case TB_HIP_NOT_OPENED:
    case TB_HIP_OK:
      break;
  }
  if (!g->hip) {
    put(g->reason, sizeof g->reason,
             "%s is not among the %d device%s HIP lists (hidden by HIP_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES, or %s not supported by this ROCm release)",
             g->label, h->count, h->count == 1 ? "" : "s", gfx);
    put(g->fix, sizeof g->fix, "unset HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES, or install a ROCm release that supports %s", gfx);
  }
}

/* Why a GPU cannot be used, in order of what to fix first; reason stays "" when it can. */
static void explain(const amd_probe *p, amd_gpu *g) {
  if (g->kfd && g->kfd->broken) {
    put(g->reason, sizeof g->reason, "%s: its KFD topology cannot be read: %s", g->label, g->kfd->problem);
    put(g->fix, sizeof g->fix, "check dmesg for amdgpu errors and update the amdgpu driver; if it persists, report the file's content");
    return;
  }
  if (!g->kfd && !g->hip) {
    explain_no_kfd(p, g);
    return;
  }
  if (g->kfd) {
    if (explain_device_node(g, "/dev/kfd", p->kfd_errno)) return;
    if (g->kfd->has_render_minor) {
      char node[48];
      snprintf(node, sizeof node, "/dev/dri/renderD%u", g->kfd->render_minor);
      int err = tb_fs_access(node, R_OK | W_OK);
      tb_report_check(p->list, TB_BACKEND_ROCM, err == 0, node, "%s", err ? strerror(err) : "read/write OK");
      if (explain_device_node(g, node, err)) return;
    }
  }
  explain_hip(p, g);
}

static void set_properties(const amd_probe *p, const amd_gpu *g, tb_device_info *d) {
  tb_device_list *list = p->list;
  if (g->kfd) {
    const tb_kfd_gpu *k = g->kfd;
    tb_dev_prop(list, d, "kfd_node", "%u", k->node);
    if (k->gpu_id) tb_dev_prop(list, d, "kfd_gpu_id", "%u", k->gpu_id);
    if (k->gfx_version) tb_dev_prop(list, d, "gfx_target_version", "%llu", (unsigned long long)k->gfx_version);
    if (k->simd_count) tb_dev_prop(list, d, "simd_count", "%llu", (unsigned long long)k->simd_count);
    if (k->num_xcc) tb_dev_prop(list, d, "num_xcc", "%llu", (unsigned long long)k->num_xcc);
    if (k->max_clock_mhz) tb_dev_prop(list, d, "max_clock_mhz", "%llu", (unsigned long long)k->max_clock_mhz);
    if (k->has_render_minor) tb_dev_prop(list, d, "render_node", "/dev/dri/renderD%u", k->render_minor);
    if (k->name[0]) tb_dev_prop(list, d, "kfd_name", "%s", k->name);
    tb_dev_prop(list, d, "coherent_host_access", "%s", (k->capability & TB_KFD_CAP_COHERENT_HOST_ACCESS) ? "yes" : "no");
  }
  uint32_t id = pci_device_id(g);
  if (id) tb_dev_prop(list, d, "pci_device_id", "0x%04x", id);
  if (g->pci) {
    tb_dev_prop(list, d, "pci_class", "0x%06x", g->pci->class_code);
    if (g->pci->numa_node >= 0) tb_dev_prop(list, d, "numa_node", "%d", g->pci->numa_node);
    if (g->pci->driver[0]) tb_dev_prop(list, d, "kernel_driver", "%s", g->pci->driver);
  }
  if (g->hip) {
    tb_dev_prop(list, d, "hip_ordinal", "%d", g->hip->ordinal);
    if (g->hip->name[0]) tb_dev_prop(list, d, "hip_name", "%s", g->hip->name);
    if (g->hip->clock_khz) tb_dev_prop(list, d, "clock_khz", "%d", g->hip->clock_khz);
  }
  if (p->hip.runtime_version[0]) tb_dev_prop(list, d, "hip_runtime_version", "%s", p->hip.runtime_version);
}

static void fill(const amd_probe *p, const amd_gpu *g, tb_device_info *d) {
  tb_device_list *list = p->list;
  char buf[64];
  const tb_kfd_gpu *k = g->kfd;
  const char *gfx = k ? k->gfx : "";
  tb_dev_set(list, &d->name, "%s", gpu_name(g, buf, sizeof buf));
  tb_dev_set(list, &d->vendor, "AMD");
  bool apu = (g->hip && g->hip->integrated == 1) || tb_amd_is_apu(pci_device_id(g), gfx, k ? k->cpu_cores : 0);
  d->type = apu ? TB_DEVICE_INTEGRATED_GPU : TB_DEVICE_DISCRETE_GPU;
  if (apu) d->features |= TB_FEATURE_BIT(TB_FEATURE_UNIFIED_MEMORY);
  const char *memory_type = tb_amd_memory_type(pci_device_id(g));
  if (memory_type) tb_dev_set(list, &d->memory_type, "%s", memory_type);
  if (gfx[0]) {
    tb_dev_set(list, &d->arch_id, "%s", gfx);
    d->compute_major = k->gfx_major;
    d->compute_minor = k->gfx_minor;
  }
  d->compute_units = k && k->compute_units ? k->compute_units : (g->hip ? g->hip->compute_units : 0);
  if (k && k->memory_known) {
    d->memory_total = k->memory_total;
    d->memory_total_known = true;
  } else if (g->hip && g->hip->total_known) {
    d->memory_total = g->hip->total_mem;
    d->memory_total_known = true;
  } else if (g->smi && g->smi->memory_known) {
    d->memory_total = g->smi->total;
    d->memory_total_known = true;
  }
  if (g->smi && g->smi->memory_known) {
    d->memory_free = g->smi->total - g->smi->used;
    d->memory_free_known = true;
  }
  if (p->driver_version[0]) tb_dev_set(list, &d->driver_version, "%s", p->driver_version);
  if (g->bus_id[0]) tb_dev_set(list, &d->pci_bus_id, "%s", g->bus_id);
  if (k && k->unique_id) tb_dev_set(list, &d->uuid, "%016llx", (unsigned long long)k->unique_id);
  tb_capability_apply(list, d, gfx[0] ? tb_capability_amd(gfx) : NULL);
  set_properties(p, g, d);
}

static void add_devices(amd_probe *p, size_t *usable) {
  *usable = 0;
  /* Usable GPUs first, as "rocm:<HIP ordinal>" in ordinal order; then the rest, as "pci:<bus id>". */
  for (int ordinal = 0; ordinal < p->hip.count; ordinal++) {
    for (size_t i = 0; i < p->gpu_count; i++) {
      const amd_gpu *g = &p->gpus[i];
      if (g->reason[0] || !g->hip || g->hip->ordinal != ordinal) continue;
      tb_device_info *d = tb_devlist_add(p->list, TB_BACKEND_ROCM);
      if (!d) return;
      d->index = ordinal;
      tb_dev_set(p->list, &d->device, "rocm:%d", ordinal);
      d->usable = true;
      fill(p, g, d);
      (*usable)++;
    }
  }
  for (size_t i = 0; i < p->gpu_count; i++) {
    const amd_gpu *g = &p->gpus[i];
    if (!g->reason[0]) continue;
    tb_device_info *d = tb_devlist_add_unindexed(p->list, TB_BACKEND_ROCM, g->bus_id[0] ? g->bus_id : NULL);
    if (!d) return;
    if (!g->bus_id[0]) {
      tb_dev_set(p->list, &d->device, "kfd:node%u", g->kfd ? g->kfd->node : 0u);
    }
    fill(p, g, d);
    tb_dev_unusable(p->list, d, g->fix, "%s", g->reason);
  }
}

static void check_sources(amd_probe *p) {
  tb_device_list *list = p->list;
  if (!p->kfd.present)
    tb_report_check(list, TB_BACKEND_ROCM, false, TB_KFD_NODES_DIR, "missing (no amdgpu compute driver)");
  else
    tb_report_check(list, TB_BACKEND_ROCM, true, TB_KFD_NODES_DIR, "%zu nodes: %zu CPU (skipped), %zu GPU", p->kfd.nodes,
                    p->kfd.cpu_nodes, p->kfd.gpu_count);
  for (size_t i = 0; i < p->kfd.gpu_count; i++) {
    const tb_kfd_gpu *k = &p->kfd.gpus[i];
    char what[96];
    snprintf(what, sizeof what, "%s/%u", TB_KFD_NODES_DIR, k->node);
    if (k->broken)
      tb_report_check(list, TB_BACKEND_ROCM, false, what, "%s", k->problem);
    else
      tb_report_check(list, TB_BACKEND_ROCM, true, what, "%s, %d CUs, %llu bytes VRAM, PCI %s", k->gfx, k->compute_units,
                      (unsigned long long)k->memory_total, k->bus_id[0] ? k->bus_id : "?");
  }
  char buses[128] = "";
  size_t used = 0;
  for (size_t i = 0; i < p->pci_count && i < 4; i++) {
    int n = snprintf(buses + used, sizeof buses - used, "%s%s", i ? ", " : "", p->pci[i].bus_id);
    if (n > 0 && (size_t)n < sizeof buses - used) used += (size_t)n;
  }
  tb_report_check(list, TB_BACKEND_ROCM, p->pci_count > 0, "PCI vendor 0x1002 display/accelerator", "%zu found%s%s%s",
                  p->pci_count, p->pci_count ? " (" : "", buses, p->pci_count > 4 ? ", ...)" : (p->pci_count ? ")" : ""));
  p->kfd_errno = tb_fs_access("/dev/kfd", R_OK | W_OK);
  tb_report_check(list, TB_BACKEND_ROCM, p->kfd_errno == 0, "/dev/kfd", "%s",
                  p->kfd_errno == 0 ? "read/write OK" : (p->kfd_errno == ENOENT ? "missing" : strerror(p->kfd_errno)));
}

static bool scan_pci(amd_probe *p) {
  tb_pci_device *all;
  size_t n;
  if (!tb_pci_scan(TB_PCI_VENDOR_AMD, 0, 0, &all, &n)) return false;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (tb_pci_is_display_or_accel(all[i].class_code)) all[k++] = all[i];
  p->pci = all;
  p->pci_count = k;
  return true;
}

static void pick_driver_version(amd_probe *p) {
  char text[64];
  if (p->smi.driver_version[0])
    snprintf(p->driver_version, sizeof p->driver_version, "%s", p->smi.driver_version);
  else if (tb_fs_read("/sys/module/amdgpu/version", text, sizeof text))
    snprintf(p->driver_version, sizeof p->driver_version, "%s", text);
  else if (p->hip.driver_version[0])
    snprintf(p->driver_version, sizeof p->driver_version, "HIP %s", p->hip.driver_version);
}

static void summarize(const amd_probe *p, size_t usable) {
  tb_device_list *list = p->list;
  if (p->gpu_count == 0) {
    tb_report_set(list, TB_BACKEND_ROCM, NULL, "no AMD GPU found (%s)",
                  p->kfd.present ? "the KFD topology lists only CPU nodes" : "no KFD topology and no AMD GPU on the PCI bus");
    return;
  }
  const char *hip = p->hip.runtime_version[0] ? p->hip.runtime_version : "";
  if (usable == p->gpu_count) {
    tb_report_set(list, TB_BACKEND_ROCM, NULL, "%zu AMD GPU%s usable through HIP%s%s", usable, usable == 1 ? "" : "s",
                  hip[0] ? " " : "", hip);
    return;
  }
  const amd_gpu *first = NULL;
  for (size_t i = 0; i < p->gpu_count && !first; i++)
    if (p->gpus[i].reason[0]) first = &p->gpus[i];
  if (!first) return; /* devices could not be added: the list is out of memory */
  tb_report_set(list, TB_BACKEND_ROCM, first->fix, "%zu AMD GPU%s found, %zu usable: %s", p->gpu_count,
                p->gpu_count == 1 ? "" : "s", usable, first->reason);
}

void tb_probe_rocm(tb_device_list *list) {
  amd_probe p;
  memset(&p, 0, sizeof p);
  p.list = list;
  bool ok = tb_kfd_read(&p.kfd) && scan_pci(&p);
  if (ok) {
    check_sources(&p);
    bool any_gpu = p.kfd.gpu_count > 0 || p.pci_count > 0;
    /* HIP and ROCm SMI are opened only for an AMD GPU: loading a runtime costs time, and it stays
     * loaded for the life of the process once opened (core/dl.c). */
    bool sysfs_blind = !p.kfd.present && !tb_pci_bus_visible(); /* a container hiding sysfs: ask HIP */
    if (any_gpu || sysfs_blind)
      ok = tb_hip_query(list, &p.hip) && tb_smi_query(list, &p.smi);
    else
      tb_report_check(list, TB_BACKEND_ROCM, true, "dlopen libamdhip64.so",
                      "not opened: no AMD GPU in the KFD topology or on the PCI bus");
  }
  if (ok) {
    pick_driver_version(&p);
    ok = collect(&p);
  }
  if (ok) {
    for (size_t i = 0; i < p.gpu_count; i++) explain(&p, &p.gpus[i]);
    size_t usable = 0;
    add_devices(&p, &usable);
    summarize(&p, usable);
  } else {
    list->arena.failed = true;
  }
  free(p.gpus);
  tb_smi_free(&p.smi);
  tb_hip_free(&p.hip);
  free(p.pci);
  tb_kfd_free(&p.kfd);
}
