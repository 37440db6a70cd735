/* Reading the AMD KFD topology: nodes/N/properties ("key value" lines written by the kernel's
 * kfd_topology.c), nodes/N/{name,gpu_id} and nodes/N/mem_banks/M/properties. CPU nodes (simd_count 0)
 * are counted and skipped; every value that does not parse is reported with its file and text. */
#include "discover/amd_kfd.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/fs.h"
#include "discover/pci.h"

/* Memory heap types of a mem bank (kernel: HSA_MEM_HEAP_TYPE_* in include/uapi/linux/kfd_sysfs.h,
 * formerly drivers/gpu/drm/amd/amdkfd/kfd_topology.h; the thunk's HSA_HEAPTYPE_* in ROCT-Thunk-Interface
 * include/hsakmttypes.h has the same values): 0 system, 1 frame buffer public (CPU-visible VRAM),
 * 2 frame buffer private (CPU-invisible VRAM), 3 GDS, 4 LDS, 5 scratch. ROCr counts 1 and 2 as the
 * device's local memory. */
#define KFD_HEAP_FB_PUBLIC 1u
#define KFD_HEAP_FB_PRIVATE 2u

bool tb_amd_gfx_name(uint64_t version, char *out, size_t cap) {
  uint64_t major = version / 10000, minor = (version / 100) % 100, stepping = version % 100;
  if (cap) out[0] = '\0';
  if (major == 0 || major > 99 || minor > 15 || stepping > 15) return false;
  int n = snprintf(out, cap, "gfx%u%x%x", (unsigned)major, (unsigned)minor, (unsigned)stepping);
  return n > 0 && (size_t)n < cap;
}

typedef enum { KV_OK, KV_MISSING, KV_BAD } kv_result;

/* Look up `key` in a properties text and parse it as a number. On KV_BAD, `raw` holds the text. */
static kv_result kv_number(const char *text, const char *key, uint64_t *out, char *raw, size_t raw_cap) {
  char value[96];
  if (!tb_kv_find(text, key, value, sizeof value)) return KV_MISSING;
  if (tb_parse_u64(value, out)) return KV_OK;
  snprintf(raw, raw_cap, "%s", value);
  return KV_BAD;
}

static void set_problem(tb_kfd_gpu *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_problem(tb_kfd_gpu *g, const char *fmt, ...) {
  if (g->broken) return; /* keep the first problem: it is the one to fix first */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g->problem, sizeof g->problem, fmt, ap);
  va_end(ap);
  g->broken = true;
}

/* A numeric property that must be present. Returns true when *out was set. */
static bool need_number(tb_kfd_gpu *g, const char *file, const char *text, const char *key, uint64_t *out) {
  char raw[96];
  switch (kv_number(text, key, out, raw, sizeof raw)) {
    case KV_OK: return true;
    case KV_BAD: set_problem(g, "%s: %s '%s' is not a number", file, key, raw); return false;
    default: set_problem(g, "%s has no %s line (file truncated?)", file, key); return false;
  }
}

/* A numeric property that may be absent (older kernels); garbage is still a problem. */
static bool want_number(tb_kfd_gpu *g, const char *file, const char *text, const char *key, uint64_t *out) {
  char raw[96];
  switch (kv_number(text, key, out, raw, sizeof raw)) {
    case KV_OK: return true;
    case KV_BAD: set_problem(g, "%s: %s '%s' is not a number", file, key, raw); return false;
    default: return false;
  }
}

static int compare_unsigned(const void *a, const void *b) {
  unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
  return x < y ? -1 : x > y;
}

/* The numeric entries of a directory ("0", "1", "10"), sorted as numbers. Caller frees *out. */
static bool numbered_entries(const char *dir, unsigned **out, size_t *count) {
  char **names;
  size_t n;
  *out = NULL;
  *count = 0;
  if (!tb_fs_list(dir, &names, &n)) return true;
  unsigned *nums = n ? calloc(n, sizeof *nums) : NULL;
  if (n && !nums) {
    tb_fs_free_names(names, n);
    return false;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t v;
    if (names[i][0] >= '0' && names[i][0] <= '9' && tb_parse_u64(names[i], &v) && v < 1000000) nums[k++] = (unsigned)v;
  }
  tb_fs_free_names(names, n);
  if (k) qsort(nums, k, sizeof *nums, compare_unsigned);
  *out = nums;
  *count = k;
  return true;
}

/* Sum the frame-buffer banks of nodes/N/mem_banks. */
static bool read_mem_banks(tb_kfd_gpu *g, const char *node_dir) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/mem_banks", node_dir);
  unsigned *banks;
  size_t count;
  if (!numbered_entries(dir, &banks, &count)) return false;
  uint64_t total = 0;
  for (size_t i = 0; i < count; i++) {
    char file[600], text[1024];
    snprintf(file, sizeof file, "%s/%u/properties", dir, banks[i]);
    if (!tb_fs_read(file, text, sizeof text)) {
      set_problem(g, "%s is missing, unreadable or empty", file);
      continue;
    }
    uint64_t heap, size;
    if (!need_number(g, file, text, "heap_type", &heap) || !need_number(g, file, text, "size_in_bytes", &size)) continue;
    g->mem_banks++;
    if (heap != KFD_HEAP_FB_PUBLIC && heap != KFD_HEAP_FB_PRIVATE) continue;
    if (total + size < total) {
      set_problem(g, "%s: size_in_bytes %llu makes the node's memory overflow 64 bits", file, (unsigned long long)size);
      continue;
    }
    total += size;
    g->memory_known = true;
  }
  free(banks);
  g->memory_total = total;
  if (g->broken) g->memory_known = false;
  return true;
}

/* Fill the GPU fields of one node whose properties say simd_count > 0 (or could not say). */
static bool read_gpu(tb_kfd_gpu *g, const char *node_dir, const char *file, const char *text, bool have_text) {
  char path[600];
  snprintf(path, sizeof path, "%s/name", node_dir);
  if (!tb_fs_read(path, g->name, sizeof g->name)) g->name[0] = '\0';
  if (!have_text) {
    set_problem(g, "%s is missing, unreadable or empty", file);
    return true;
  }
  uint64_t v;
  uint64_t location = 0, domain = 0;
  bool have_location = need_number(g, file, text, "location_id", &location);
  want_number(g, file, text, "domain", &domain);
  if (have_location) {
    if (location > 0xffff || domain > 0xffff)
      set_problem(g, "%s: location_id %llu / domain %llu is not a PCI location", file, (unsigned long long)location,
                  (unsigned long long)domain);
    else
      tb_pci_format((uint32_t)domain, (uint32_t)(location >> 8), (uint32_t)(location >> 3) & 0x1f, (uint32_t)location & 7,
                    g->bus_id, sizeof g->bus_id);
  }
  if (want_number(g, file, text, "vendor_id", &v)) g->vendor_id = (uint32_t)v;
  if (want_number(g, file, text, "device_id", &v)) g->device_id = (uint32_t)v;
  if (want_number(g, file, text, "drm_render_minor", &v) && v < 1u << 20) {
    g->has_render_minor = true;
    g->render_minor = (uint32_t)v;
  }
  want_number(g, file, text, "cpu_cores_count", &g->cpu_cores);
  want_number(g, file, text, "capability", &g->capability);
  want_number(g, file, text, "unique_id", &g->unique_id);
  want_number(g, file, text, "num_xcc", &g->num_xcc);
  want_number(g, file, text, "max_engine_clk_fcompute", &g->max_clock_mhz);
  if (need_number(g, file, text, "gfx_target_version", &g->gfx_version)) {
    if (tb_amd_gfx_name(g->gfx_version, g->gfx, sizeof g->gfx)) {
      g->gfx_major = (int)(g->gfx_version / 10000);
      g->gfx_minor = (int)(g->gfx_version / 100 % 100);
      g->gfx_stepping = (int)(g->gfx_version % 100);
    } else {
      set_problem(g, "%s: gfx_target_version %llu is not a gfx target (expected major*10000+minor*100+stepping, e.g. 90402)",
                  file, (unsigned long long)g->gfx_version);
    }
  }
  if (need_number(g, file, text, "simd_per_cu", &g->simd_per_cu)) {
    if (g->simd_per_cu == 0)
      set_problem(g, "%s: simd_per_cu is 0 on a node with %llu SIMDs", file, (unsigned long long)g->simd_count);
    else if (g->simd_count / g->simd_per_cu > 1000000)
      set_problem(g, "%s: simd_count %llu is not plausible", file, (unsigned long long)g->simd_count);
    else
      g->compute_units = (int)(g->simd_count / g->simd_per_cu);
  }
  return read_mem_banks(g, node_dir);
}

/* One node: adds a GPU entry to *t unless it is a CPU node. */
static bool read_node(tb_kfd_topology *t, unsigned node, size_t *cap) {
  char node_dir[256], file[300], text[8192];
  snprintf(node_dir, sizeof node_dir, "%s/%u", TB_KFD_NODES_DIR, node);
  snprintf(file, sizeof file, "%s/properties", node_dir);
  t->nodes++;
  bool have_text = tb_fs_read(file, text, sizeof text);
  uint64_t gpu_id = 0;
  char path[320];
  snprintf(path, sizeof path, "%s/gpu_id", node_dir);
  bool have_gpu_id = tb_fs_read_u64(path, &gpu_id);

  tb_kfd_gpu probe = {.node = node};
  uint64_t simd = 0;
  bool simd_ok = have_text && need_number(&probe, file, text, "simd_count", &simd);
  if (simd_ok && simd == 0) {
    t->cpu_nodes++;
    return true;
  }
  /* simd_count unreadable: a node whose gpu_id is 0 is a CPU node all the same. */
  if (!simd_ok && have_gpu_id && gpu_id == 0) {
    t->cpu_nodes++;
    return true;
  }
  if (t->gpu_count == *cap) {
    size_t ncap = *cap ? *cap * 2 : 8;
    tb_kfd_gpu *grown = realloc(t->gpus, ncap * sizeof *grown);
    if (!grown) return false;
    t->gpus = grown;
    *cap = ncap;
  }
  tb_kfd_gpu *g = &t->gpus[t->gpu_count++];
  *g = probe;
  g->simd_count = simd;
  g->gpu_id = have_gpu_id && gpu_id <= UINT32_MAX ? (uint32_t)gpu_id : 0;
  return read_gpu(g, node_dir, file, text, have_text);
}

bool tb_kfd_read(tb_kfd_topology *t) {
  memset(t, 0, sizeof *t);
  if (!tb_fs_exists(TB_KFD_NODES_DIR)) return true;
  t->present = true;
  unsigned *nodes;
  size_t count, cap = 0;
  if (!numbered_entries(TB_KFD_NODES_DIR, &nodes, &count)) return false;
  bool ok = true;
  for (size_t i = 0; i < count && ok; i++) ok = read_node(t, nodes[i], &cap);
  free(nodes);
  if (!ok) tb_kfd_free(t);
  return ok;
}

void tb_kfd_free(tb_kfd_topology *t) {
  free(t->gpus);
  memset(t, 0, sizeof *t);
}
