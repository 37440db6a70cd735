/* The TPU probe: Google TPU chips on the PCI bus (vendor 0x1ae0), one device "tpu:N" per chip, with the
 * generation from the PCI device id, the /dev node a runtime opens, and whether libtpu is installed. Cheap:
 * libtpu is looked for on disk, never loaded, and no TPU runtime is started.
 *
 * Device ids (what we found): Cloud TPU VMs put each chip on the VM's PCI bus. The ids below are the ones
 * Google's own tools match: tpu-info (AI-Hypercomputer/cloud-accelerator-diagnostics, tpu_info/device.py)
 * and JAX (jax/_src/hardware_utils.py): 0x005e v4, 0x0062 v5p, 0x0063 v5e, 0x006f v6e, 0x0076 v7x; v2 and
 * v3 share 0x0027 and differ only in subsystem_device (0x004e v2, 0x004f v3). 0x0056 is listed by JAX as a
 * part with no public name; it is reported as an unknown Google accelerator. v2 and v3 behind the older
 * "TPU Node" architecture are not on the user VM's bus at all (the host is reached over the network), so
 * they cannot be seen here; on TPU VMs they are. v2-v4 chips are opened as /dev/accelN; v5e, v5p, v6e and
 * v7x as /dev/vfio/<IOMMU group> (bound to vfio-pci), as tpu-info's chip_path() does. A v5e VM's chip shows
 * PCI class 0xff0000 (recorded lspci); the class is not used to decide anything. Other Google functions
 * (gVNIC 0x0042, ...) are ignored. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/fs.h"
#include "discover/capability.h"
#include "discover/pci.h"
#include "discover/probes.h"
#include "discover/tpu_libtpu.h"

#define TB_TPU TB_BACKEND_TPU

typedef struct tpu_generation {
  uint16_t device_id;
  uint16_t subsystem_device; /* 0: any */
  const char *arch_id;       /* "v5e": the id shown and the capability key */
  const char *capability_alt;/* a second key to try in the capability table ("v7" for "v7x"), or NULL */
  const char *name;
  int tensorcores;           /* TensorCores per chip */
  unsigned hbm_gib;          /* HBM per chip (tpu-info's table) */
  bool vfio;                 /* opened through /dev/vfio/<group>, else /dev/accelN */
} tpu_generation;

static const tpu_generation generations[] = {
    {0x0027, 0x004e, "v2", NULL, "TPU v2", 2, 8, false},
    {0x0027, 0x004f, "v3", NULL, "TPU v3", 2, 16, false},
    {0x005e, 0, "v4", NULL, "TPU v4", 2, 32, false},
    {0x0062, 0, "v5p", NULL, "TPU v5p", 2, 95, true},
    {0x0063, 0, "v5e", NULL, "TPU v5e", 1, 16, true},
    {0x006f, 0, "v6e", "v6", "TPU v6e (Trillium)", 1, 32, true},
    {0x0076, 0, "v7x", "v7", "TPU7x (Ironwood)", 2, 192, true},
};

static const tpu_generation *find_generation(const tb_pci_device *p) {
  for (size_t i = 0; i < sizeof generations / sizeof generations[0]; i++) {
    const tpu_generation *g = &generations[i];
    if (g->device_id == p->device && (!g->subsystem_device || g->subsystem_device == p->subsystem_device)) return g;
  }
  return NULL;
}

/* A Google function that looks like an accelerator but is not in the table. */
static bool unknown_accelerator(const tb_pci_device *p) {
  uint32_t base = p->class_code >> 16;
  return p->device == 0x0027 || base == 0x12 || base == 0xff;
}

/* /dev/vfio/<IOMMU group of the function>, or /dev/vfio/<chip> when sysfs does not say; /dev/accel<chip>. */
static void device_node(const tb_pci_device *p, const tpu_generation *g, int chip, char *out, size_t cap) {
  if (!g->vfio) {
    snprintf(out, cap, "/dev/accel%d", chip);
    return;
  }
  char link[96], group[32];
  snprintf(link, sizeof link, "/sys/bus/pci/devices/%s/iommu_group", p->bus_id);
  uint64_t n;
  if (tb_fs_link_name(link, group, sizeof group) && tb_parse_u64(group, &n))
    snprintf(out, cap, "/dev/vfio/%llu", (unsigned long long)n);
  else
    snprintf(out, cap, "/dev/vfio/%d", chip);
}

typedef struct tpu_env {
  bool libtpu;
  char libtpu_path[512];
  char libtpu_tried[512];
  size_t chips;
} tpu_env;

static void mark_unusable(tb_device_list *list, tb_device_info *dev, const tb_pci_device *p, const tpu_generation *g,
                          const char *node, const tpu_env *env) {
  const char *what = g->name;
  if (!p->driver[0]) {
    tb_dev_unusable(list, dev,
                    g->vfio ? "bind the chip to vfio-pci (TPU VM images do it at boot: modprobe vfio-pci) and check dmesg"
                            : "load the TPU kernel driver that the TPU VM image ships, and check dmesg",
                    "%s chip at %s present but no kernel driver bound", what, p->bus_id);
    return;
  }
  int err = tb_fs_access(node, R_OK | W_OK);
  if (err == ENOENT) {
    tb_dev_unusable(list, dev,
                    "in a container, pass the TPU through (docker run --privileged, or --device for each /dev/vfio "
                    "or /dev/accel node); on a VM, check that the TPU driver created the node",
                    "%s chip at %s present but %s does not exist", what, p->bus_id, node);
    return;
  }
  if (err != 0) {
    tb_dev_unusable(list, dev, "give the user read-write access to the TPU's /dev node (TPU VM images do), or run the "
                               "container with --privileged",
                    "%s chip at %s present but %s is not accessible (%s)", what, p->bus_id, node, strerror(err));
    return;
  }
  if (!env->libtpu) {
    tb_dev_unusable(list, dev, "pip install libtpu (or jax[tpu]), or set TB_TPU_LIB to the path of libtpu.so",
                    "%s chip at %s present but libtpu.so not found (%s)", what, p->bus_id, env->libtpu_tried);
    return;
  }
}

static void add_chip(tb_device_list *list, const tb_pci_device *p, const tpu_generation *g, int chip, const tpu_env *env) {
  tb_device_info *dev = tb_devlist_add(list, TB_TPU);
  if (!dev) return;
  char node[64];
  device_node(p, g, chip, node, sizeof node);
  tb_dev_set(list, &dev->name, "%s", g->name);
  tb_dev_set(list, &dev->vendor, "Google");
  dev->type = TB_DEVICE_TPU;
  tb_dev_set(list, &dev->arch_id, "%s", g->arch_id);
  const tb_capability *row = tb_capability_tpu(g->arch_id);
  if (!row && g->capability_alt) row = tb_capability_tpu(g->capability_alt);
  tb_capability_apply(list, dev, row);
  tb_dev_set(list, &dev->pci_bus_id, "%s", p->bus_id);
  dev->compute_units = g->tensorcores;
  dev->memory_total = (uint64_t)g->hbm_gib << 30;
  dev->memory_total_known = true;
  tb_dev_prop(list, dev, "memory_source", "HBM per chip of TPU %s (generation table; not measured)", g->arch_id);
  tb_dev_prop(list, dev, "chip_count", "%zu", env->chips);
  tb_dev_prop(list, dev, "tensorcores", "%d", g->tensorcores);
  tb_dev_prop(list, dev, "dev_node", "%s", node);
  tb_dev_prop(list, dev, "pci_device_id", "0x%04x", p->device);
  tb_dev_prop(list, dev, "kernel_driver", "%s", p->driver[0] ? p->driver : "none");
  if (p->numa_node >= 0) tb_dev_prop(list, dev, "numa_node", "%d", p->numa_node);
  if (env->libtpu) tb_dev_prop(list, dev, "libtpu", "%s", env->libtpu_path);
  int err = tb_fs_access(node, R_OK | W_OK);
  tb_report_check(list, TB_TPU, err == 0, node, "%s chip at %s (driver %s): %s", g->name, p->bus_id,
                  p->driver[0] ? p->driver : "none", err == 0 ? "read-write" : strerror(err));
  dev->usable = true;
  mark_unusable(list, dev, p, g, node, env);
}

static void add_unknown(tb_device_list *list, const tb_pci_device *p) {
  tb_device_info *dev = tb_devlist_add_unindexed(list, TB_TPU, p->bus_id);
  if (!dev) return;
  tb_dev_set(list, &dev->name, "Google accelerator 0x%04x", p->device);
  tb_dev_set(list, &dev->vendor, "Google");
  dev->type = TB_DEVICE_TPU;
  tb_dev_set(list, &dev->arch_id, "0x%04x", p->device);
  tb_capability_apply(list, dev, NULL);
  tb_dev_prop(list, dev, "pci_device_id", "0x%04x", p->device);
  tb_dev_prop(list, dev, "pci_subsystem_device", "0x%04x", p->subsystem_device);
  tb_dev_unusable(list, dev, "update TensorBridge: this TPU generation is newer than its table",
                  "Google accelerator 0x%04x (subsystem 0x%04x) at %s is not a TPU generation TensorBridge knows",
                  p->device, p->subsystem_device, p->bus_id);
}

static void summarize(tb_device_list *list, size_t chips) {
  size_t usable = 0;
  const char *first_fix = NULL;
  size_t found = 0;
  for (size_t i = 0; i < list->count; i++) {
    const tb_device_info *d = list->devices[i];
    if (d->backend != TB_TPU) continue;
    found++;
    if (d->usable) usable++;
    else if (!first_fix && d->fix[0]) first_fix = d->fix;
  }
  if (found == 0) {
    tb_report_set(list, TB_TPU, NULL, "no TPU found");
    return;
  }
  tb_report_set(list, TB_TPU, usable ? NULL : first_fix, "%zu TPU chip%s found, %zu usable", chips ? chips : found,
                (chips ? chips : found) == 1 ? "" : "s", usable);
}

void tb_probe_tpu(tb_device_list *list) {
  tb_pci_device *pci = NULL;
  size_t n = 0;
  if (!tb_pci_scan(TB_PCI_VENDOR_GOOGLE, 0, 0, &pci, &n)) {
    list->arena.failed = true;
    return;
  }
  tpu_env env;
  memset(&env, 0, sizeof env);
  size_t others = 0;
  for (size_t i = 0; i < n; i++) {
    if (find_generation(&pci[i])) env.chips++;
    else if (!unknown_accelerator(&pci[i])) others++;
  }
  tb_report_check(list, TB_TPU, true, "/sys/bus/pci/devices", "%zu TPU chip%s (vendor 0x1ae0), %zu other Google function%s ignored",
                  env.chips, env.chips == 1 ? "" : "s", others, others == 1 ? "" : "s");
  env.libtpu = tb_libtpu_find(list, env.libtpu_path, sizeof env.libtpu_path, env.libtpu_tried, sizeof env.libtpu_tried);
  int chip = 0;
  for (size_t i = 0; i < n; i++) {
    const tpu_generation *g = find_generation(&pci[i]);
    if (g) add_chip(list, &pci[i], g, chip++, &env);
    else if (unknown_accelerator(&pci[i])) add_unknown(list, &pci[i]);
  }
  free(pci);
  summarize(list, env.chips);
}
