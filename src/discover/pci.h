/* Internal: the PCI bus as /sys/bus/pci/devices shows it (under TB_FSROOT), and bus-id spelling. */
#ifndef TB_DISCOVER_PCI_H
#define TB_DISCOVER_PCI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TB_PCI_VENDOR_NVIDIA 0x10deu
#define TB_PCI_VENDOR_AMD 0x1002u
#define TB_PCI_VENDOR_INTEL 0x8086u
#define TB_PCI_VENDOR_GOOGLE 0x1ae0u

typedef struct tb_pci_device {
  char bus_id[16];        /* normalized "0000:3b:00.0" */
  uint16_t vendor, device;
  uint16_t subsystem_vendor, subsystem_device;
  uint32_t class_code;    /* 24 bits: 0x030000 VGA, 0x030200 3D, 0x120000 accelerator */
  uint8_t revision;
  char driver[64];        /* bound kernel driver ("nvidia", "amdgpu", "i915", "xe", "vfio-pci"), "" when none */
  int numa_node;          /* -1 when unknown */
} tb_pci_device;

/* All devices of `vendor` (0 for all) whose class (24-bit, masked by class_mask) equals class_value
 * (class_mask 0 for any class), sorted by bus id. The caller frees *out with free(). A missing
 * /sys/bus/pci is not an error: zero devices. Entries with unreadable or malformed vendor/device
 * files are skipped. false only on memory failure. */
bool tb_pci_scan(uint16_t vendor, uint32_t class_mask, uint32_t class_value, tb_pci_device **out, size_t *count);

/* False when /sys/bus/pci/devices is missing or empty, as in containers that hide sysfs: then the bus
 * cannot tell that a vendor's runtime has nothing to find, and probes open it anyway. */
bool tb_pci_bus_visible(void);

/* True for display controllers (class 0x03xxxx) and processing accelerators (0x12xxxx). */
bool tb_pci_is_display_or_accel(uint32_t class_code);

/* Normalize a bus id from any spelling ("00000000:3B:00.0", "3b:00.0", "0000:3b:00.0") into
 * "0000:3b:00.0"; false when it does not parse. */
bool tb_pci_normalize(const char *in, char *out, size_t cap);
/* Format domain/bus/device/function numbers into the normalized form. */
void tb_pci_format(uint32_t domain, uint32_t bus, uint32_t dev, uint32_t fn, char *out, size_t cap);

#endif
