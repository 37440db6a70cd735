/* Internal: the one table that maps an architecture id to what the hardware can do (dtypes with
 * native arithmetic, matrix units, TF32, flash-attention kernels, memory type), with where each fact
 * comes from. Device info takes dtypes and features from here, never from marketing names. */
#ifndef TB_DISCOVER_CAPABILITY_H
#define TB_DISCOVER_CAPABILITY_H
#include <stdint.h>
#include <tensorbridge/device.h>
#include "discover/devlist.h"

typedef struct tb_capability {
  const char *vendor;        /* "NVIDIA", "AMD", "Intel", "Google" */
  const char *key;           /* "sm_90", "gfx942", "xe-hpc", "v5e" */
  const char *architecture;  /* "Hopper", "CDNA3", "Xe-HPC", "TPU v5e" */
  tb_dtype_set dtypes;
  uint64_t features;
  const char *matrix_unit;   /* "4th-gen Tensor Cores", "Matrix Cores (MFMA)", "XMX", "MXU", "" */
  const char *memory_type;   /* "HBM3", "GDDR6", ... or "" when it varies by product */
  const char *source;        /* the document the row comes from */
} tb_capability;

/* Number of rows, and row i (for `tb info --capabilities` and tests). */
size_t tb_capability_count(void);
const tb_capability *tb_capability_at(size_t i);

/* Lookups by id. Each returns NULL when the id is not in the table. */
const tb_capability *tb_capability_nvidia(int cc_major, int cc_minor); /* compute capability */
const tb_capability *tb_capability_amd(const char *gfx_target);        /* "gfx942", "gfx1100" */
const tb_capability *tb_capability_intel(uint16_t pci_device_id);      /* Intel GPU PCI device id */
const tb_capability *tb_capability_tpu(const char *generation);        /* "v2" ... "v7", "v5e", "v5p" */

/* Copy architecture, dtypes, features, memory type (when the row has one) and source into the
 * device, and a "matrix_unit" property. A NULL row sets capability_source to say the id is unknown. */
void tb_capability_apply(tb_device_list *list, tb_device_info *dev, const tb_capability *row);

/* dtypes with native arithmetic on a CPU with these features (f32/f64/int always; bf16 with
 * AVX512-BF16 or AMX-BF16; f16 with AVX512-FP16; ...). */
tb_dtype_set tb_capability_cpu_dtypes(uint64_t features);

#endif
