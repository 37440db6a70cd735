/* Discovery: every accelerator on the machine and the CPU, usable or not, and why not.
 *
 * tb_discover() probes each backend cheaply: it reads /sys and /dev, and opens vendor runtimes with
 * dlopen to ask for device properties; it never creates a compute context and never loads a TPU
 * runtime. The list it returns owns every string and array reachable from it; they stay valid until
 * tb_device_list_destroy(). */
#ifndef TENSORBRIDGE_DEVICE_H
#define TENSORBRIDGE_DEVICE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dtype.h"
#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The backends. The order here is only an identifier; selection order is in policy.h. */
typedef enum tb_backend_kind {
  TB_BACKEND_CPU = 0,
  TB_BACKEND_CUDA,   /* NVIDIA through libcuda (names: cuda, nvidia) */
  TB_BACKEND_ROCM,   /* AMD through HIP (names: rocm, amd, hip) */
  TB_BACKEND_XPU,    /* Intel GPUs through Level Zero (names: xpu, intel, level_zero) */
  TB_BACKEND_TPU,    /* Google TPU through libtpu (names: tpu, xla) */
  TB_BACKEND_VULKAN, /* any Vulkan device */
  TB_BACKEND_OPENCL, /* any OpenCL device */
  TB_BACKEND_COUNT
} tb_backend_kind;

/* "cpu", "cuda", "rocm", "xpu", "tpu", "vulkan", "opencl"; "?" out of range. */
TB_API const char *tb_backend_name(tb_backend_kind kind);

/* Parse a backend name or alias, case-insensitive. "auto" sets *out_is_auto and leaves *out_kind
 * untouched. An unknown name is TB_ERR_NOT_FOUND with a message listing the valid names.
 * out_is_auto may be NULL, in which case "auto" is TB_ERR_INVALID_ARGUMENT. */
TB_API tb_status tb_backend_parse(const char *name, tb_backend_kind *out_kind, bool *out_is_auto);

typedef enum tb_device_type {
  TB_DEVICE_CPU = 0,
  TB_DEVICE_DISCRETE_GPU,
  TB_DEVICE_INTEGRATED_GPU,
  TB_DEVICE_VIRTUAL_GPU,
  TB_DEVICE_TPU,
  TB_DEVICE_OTHER
} tb_device_type;

/* "cpu", "discrete_gpu", "integrated_gpu", "virtual_gpu", "tpu", "other". */
TB_API const char *tb_device_type_name(tb_device_type type);

/* Hardware features, as bits of a uint64_t. CPU instruction sets first, then accelerator units. */
typedef enum tb_feature {
  TB_FEATURE_SSE4_2 = 0,
  TB_FEATURE_AVX2,
  TB_FEATURE_FMA,
  TB_FEATURE_F16C,
  TB_FEATURE_AVX512F,
  TB_FEATURE_AVX512BW,
  TB_FEATURE_AVX512VL,
  TB_FEATURE_AVX512VNNI,
  TB_FEATURE_AVX512BF16,
  TB_FEATURE_AVX512FP16,
  TB_FEATURE_AMX_TILE,
  TB_FEATURE_AMX_BF16,
  TB_FEATURE_AMX_INT8,
  TB_FEATURE_NEON,
  TB_FEATURE_SVE,
  TB_FEATURE_SME,
  TB_FEATURE_TENSOR_CORES,  /* NVIDIA matrix units */
  TB_FEATURE_MATRIX_CORES,  /* AMD CDNA MFMA / RDNA WMMA units */
  TB_FEATURE_XMX,           /* Intel Xe matrix extensions */
  TB_FEATURE_MXU,           /* TPU matrix units */
  TB_FEATURE_TF32,
  TB_FEATURE_FLASH_ATTENTION, /* fused attention kernels exist for this architecture */
  TB_FEATURE_COOPERATIVE_MATRIX, /* Vulkan VK_KHR_cooperative_matrix / VK_NV_cooperative_matrix */
  TB_FEATURE_SUBGROUPS,
  TB_FEATURE_UNIFIED_MEMORY,
  TB_FEATURE_FP64,
  TB_FEATURE_COUNT
} tb_feature;
#define TB_FEATURE_BIT(f) ((uint64_t)1u << (unsigned)(f))

/* "avx512f", "amx_bf16", "tensor_cores", ...; "?" out of range. */
TB_API const char *tb_feature_name(tb_feature feature);
/* Parse a feature name (case-insensitive). Unknown is TB_ERR_NOT_FOUND with the valid names. */
TB_API tb_status tb_feature_parse(const char *name, tb_feature *out);

/* A backend-specific fact as text, e.g. {"sm_count", "132"}. */
typedef struct tb_property {
  const char *key;
  const char *value;
} tb_property;

/* One device as one backend sees it. Strings are never NULL ("" when unknown).
 * `size` is sizeof(tb_device_info) in the library that filled it: fields are only ever added at the
 * end, so a caller built against an older header reads what it knows. */
typedef struct tb_device_info {
  size_t size;
  tb_backend_kind backend;
  int index;                 /* index within the backend ("cuda:1" -> 1); -1 when seen only on the bus */
  const char *device;        /* "cuda:0", "cpu:0", or "pci:0000:3b:00.0" when no runtime sees it */
  const char *name;          /* as the driver or the hardware reports it */
  const char *vendor;        /* "NVIDIA", "AMD", "Intel", "Google", or what the API reports */
  tb_device_type type;
  const char *architecture;  /* from the capability table: "Hopper", "CDNA3", "Xe-HPC", "Zen 5" */
  const char *arch_id;       /* the id it came from: "sm_90", "gfx942", "0x0bd5", "v5e", "x86_64 6/143/8" */
  int compute_major;         /* CUDA compute capability (or gfx major); 0 when not applicable */
  int compute_minor;
  int compute_units;         /* SMs, CUs, EUs / Xe-cores, TensorCores, CPU threads; 0 when unknown */
  uint64_t memory_total;     /* bytes */
  uint64_t memory_free;      /* bytes */
  bool memory_total_known;
  bool memory_free_known;
  const char *memory_type;   /* "HBM3", "GDDR6", "DDR5", "system" ... from the capability table */
  const char *driver_version;
  const char *pci_bus_id;    /* "0000:3b:00.0" */
  const char *uuid;          /* "GPU-8c0f..." or a hex UUID */
  bool usable;               /* a backend can be created on it here, now */
  const char *reason;        /* when not usable: why, in one sentence; "" when usable */
  const char *fix;           /* when not usable: what to do; "" when nothing can be done */
  tb_dtype_set dtypes;       /* dtypes with native arithmetic on this device */
  uint64_t features;         /* TB_FEATURE_BIT(f) set for each feature present (and usable) */
  const char *capability_source; /* where the dtypes and features come from */
  int physical_id;           /* devices with equal physical_id are one piece of hardware */
  const char *routes;        /* the other device strings of the same hardware, comma-separated */
  size_t property_count;
  const tb_property *properties;
} tb_device_info;

/* Look up a property by key; NULL when absent. */
TB_API const char *tb_device_property(const tb_device_info *info, const char *key);

/* One thing discovery tried for a backend: a library, a sysfs node, a permission, a driver call. */
typedef struct tb_check {
  const char *what;   /* "dlopen libcuda.so.1", "/dev/kfd", "cuInit" */
  bool ok;
  const char *detail; /* the result: a path, an error code and its name, a count */
} tb_check;

/* What discovery found for one backend, for `tb doctor` and for error messages. */
typedef struct tb_backend_report {
  size_t size;
  tb_backend_kind backend;
  bool available;       /* at least one usable device */
  size_t device_count;  /* devices found, usable or not */
  const char *summary;  /* one line: "2 devices usable", "libcuda.so.1 not found" */
  const char *fix;      /* what to do; "" when nothing */
  size_t check_count;
  const tb_check *checks;
} tb_backend_report;

typedef struct tb_device_list tb_device_list;

/* Options for tb_discover; NULL means defaults. */
typedef struct tb_discover_options {
  size_t size;       /* sizeof(tb_discover_options) */
  uint32_t backends; /* bit (1u << kind) for each backend to probe; 0 means all */
} tb_discover_options;

TB_API tb_status tb_discover(const tb_discover_options *options, tb_device_list **out_list);
TB_API void tb_device_list_destroy(tb_device_list *list);

TB_API size_t tb_device_list_count(const tb_device_list *list);
/* The i-th device (NULL when i is out of range). Order: by backend, then by index. */
TB_API const tb_device_info *tb_device_list_get(const tb_device_list *list, size_t i);
/* A device by its string ("cuda:0", "cpu", "vulkan:1"); "cuda" means "cuda:0". */
TB_API tb_status tb_device_list_find(const tb_device_list *list, const char *device,
                                     const tb_device_info **out_info);
/* The report for one backend; never NULL for a valid kind. */
TB_API const tb_backend_report *tb_device_list_report(const tb_device_list *list, tb_backend_kind kind);

/* JSON renderings (documented keys in docs/json.md). The caller frees *out_json with tb_free(). */
TB_API tb_status tb_device_info_to_json(const tb_device_info *info, char **out_json);
TB_API tb_status tb_device_list_to_json(const tb_device_list *list, char **out_json);

/* The capability table (architecture -> dtypes and features, with the document each row comes from),
 * as docs/capabilities.md lists it; for `tb info --capabilities`. Strings are static: never freed. */
typedef struct tb_capability_row {
  size_t size;               /* set by the caller to sizeof(tb_capability_row); left unchanged */
  const char *vendor;        /* "NVIDIA", "AMD", "Intel", "Google" */
  const char *key;           /* "sm_90", "gfx942", "gfx103x", "xe-hpc", "v5e" */
  const char *architecture;  /* "Hopper", "CDNA3", "RDNA2", "Xe-HPC", "TPU v5e" */
  tb_dtype_set dtypes;       /* dtypes with native arithmetic */
  uint64_t features;         /* TB_FEATURE_BIT(f) for each feature the architecture always has */
  const char *matrix_unit;   /* "4th-gen Tensor Cores (...)", "XMX (...)", "" when none */
  const char *memory_type;   /* "HBM3", ... or "" when it varies by product */
  const char *source;        /* the public documents the row comes from */
} tb_capability_row;

TB_API size_t tb_capability_table_count(void);
/* Row i (0 <= i < count). TB_ERR_INVALID_ARGUMENT when out is NULL, out->size is smaller than
 * sizeof(tb_capability_row), or i is out of range. */
TB_API tb_status tb_capability_table_get(size_t i, tb_capability_row *out);

#ifdef __cplusplus
}
#endif
#endif
