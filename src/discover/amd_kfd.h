/* Internal: the AMD KFD topology (/sys/class/kfd/kfd/topology, under TB_FSROOT) as the ROCm probe needs
 * it: one entry per GPU node, with its gfx target, compute units, PCI location, render node and local
 * memory, or the exact file and value that could not be parsed. */
#ifndef TB_DISCOVER_AMD_KFD_H
#define TB_DISCOVER_AMD_KFD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TB_KFD_NODES_DIR "/sys/class/kfd/kfd/topology/nodes"

/* Bits of the node "capability" word (Linux drivers/gpu/drm/amd/amdkfd/kfd_topology.h, now
 * include/uapi/linux/kfd_sysfs.h): set for MI300A (app APU) and for GPUs coherently linked to the CPU. */
#define TB_KFD_CAP_COHERENT_HOST_ACCESS 0x10000000u

typedef struct tb_kfd_gpu {
  unsigned node;            /* N of nodes/N */
  bool broken;              /* a file could not be parsed; `problem` says which and why */
  char problem[320];
  uint32_t gpu_id;          /* nodes/N/gpu_id; 0 when unreadable */
  char name[64];            /* nodes/N/name ("ip discovery", "aldebaran", ...), "" when absent */
  uint64_t gfx_version;     /* gfx_target_version, e.g. 90402 */
  char gfx[16];             /* "gfx942"; "" when unknown */
  int gfx_major, gfx_minor, gfx_stepping;
  uint64_t simd_count, simd_per_cu, cpu_cores;
  int compute_units;        /* simd_count / simd_per_cu */
  uint32_t vendor_id, device_id;
  char bus_id[16];          /* "0000:05:00.0" from domain + location_id; "" when unknown */
  bool has_render_minor;
  uint32_t render_minor;    /* drm_render_minor: /dev/dri/renderD<minor> */
  bool memory_known;        /* at least one frame-buffer memory bank was found */
  uint64_t memory_total;    /* bytes in heap types 1 and 2 (public and private frame buffer) */
  size_t mem_banks;         /* banks read */
  uint64_t capability;
  uint64_t unique_id;       /* 0 when absent */
  uint64_t num_xcc;         /* 0 when absent */
  uint64_t max_clock_mhz;   /* max_engine_clk_fcompute */
} tb_kfd_gpu;

typedef struct tb_kfd_topology {
  bool present;     /* the nodes directory exists */
  size_t nodes;     /* every node, CPU nodes included */
  size_t cpu_nodes; /* nodes skipped as CPUs (simd_count 0) */
  size_t gpu_count;
  tb_kfd_gpu *gpus; /* in node order */
} tb_kfd_topology;

/* Read the topology. A missing directory is not an error (present = false). Garbage in a node's files
 * marks that GPU broken, never the whole read. false only when host memory runs out. */
bool tb_kfd_read(tb_kfd_topology *out);
void tb_kfd_free(tb_kfd_topology *topology);

/* gfx_target_version (major*10000 + minor*100 + stepping) to the target name, minor and stepping in
 * hex: 90402 -> "gfx942", 90010 -> "gfx90a", 110000 -> "gfx1100". false for 0 and for values that
 * are not a target (minor or stepping above 15, major 0 or above 99). */
bool tb_amd_gfx_name(uint64_t version, char *out, size_t cap);

#endif
