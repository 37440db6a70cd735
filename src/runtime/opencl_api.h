/* Internal: the few OpenCL types, constants and entry points the OpenCL probe uses, declared here so
 * that no OpenCL SDK is needed to build. Values are those of the Khronos headers (cl.h, cl_ext.h);
 * tests/unit/test_opencl_api.c checks them against the system headers when those are installed. */
#ifndef TB_RUNTIME_OPENCL_API_H
#define TB_RUNTIME_OPENCL_API_H
#include <stddef.h>
#include <stdint.h>

typedef int32_t tb_cl_int;
typedef uint32_t tb_cl_uint;
typedef uint64_t tb_cl_ulong;
typedef tb_cl_uint tb_cl_bool;
typedef tb_cl_ulong tb_cl_bitfield;
typedef struct tb_cl_platform_st *tb_cl_platform_id;
typedef struct tb_cl_device_st *tb_cl_device_id;

#define TB_CL_SUCCESS 0
#define TB_CL_DEVICE_NOT_FOUND (-1)
#define TB_CL_INVALID_VALUE (-30)
#define TB_CL_PLATFORM_NOT_FOUND_KHR (-1001)

/* clGetPlatformInfo */
#define TB_CL_PLATFORM_PROFILE 0x0900u
#define TB_CL_PLATFORM_VERSION 0x0901u
#define TB_CL_PLATFORM_NAME 0x0902u
#define TB_CL_PLATFORM_VENDOR 0x0903u

/* Device types (a bitfield) */
#define TB_CL_DEVICE_TYPE_DEFAULT (1u << 0)
#define TB_CL_DEVICE_TYPE_CPU (1u << 1)
#define TB_CL_DEVICE_TYPE_GPU (1u << 2)
#define TB_CL_DEVICE_TYPE_ACCELERATOR (1u << 3)
#define TB_CL_DEVICE_TYPE_CUSTOM (1u << 4)
#define TB_CL_DEVICE_TYPE_ALL 0xFFFFFFFFu

/* clGetDeviceInfo */
#define TB_CL_DEVICE_TYPE 0x1000u
#define TB_CL_DEVICE_VENDOR_ID 0x1001u
#define TB_CL_DEVICE_MAX_COMPUTE_UNITS 0x1002u
#define TB_CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004u
#define TB_CL_DEVICE_MAX_CLOCK_FREQUENCY 0x100Cu
#define TB_CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010u
#define TB_CL_DEVICE_GLOBAL_MEM_SIZE 0x101Fu
#define TB_CL_DEVICE_LOCAL_MEM_SIZE 0x1023u
#define TB_CL_DEVICE_AVAILABLE 0x1027u
#define TB_CL_DEVICE_NAME 0x102Bu
#define TB_CL_DEVICE_VENDOR 0x102Cu
#define TB_CL_DRIVER_VERSION 0x102Du
#define TB_CL_DEVICE_PROFILE 0x102Eu
#define TB_CL_DEVICE_VERSION 0x102Fu
#define TB_CL_DEVICE_EXTENSIONS 0x1030u
#define TB_CL_DEVICE_DOUBLE_FP_CONFIG 0x1032u
#define TB_CL_DEVICE_HOST_UNIFIED_MEMORY 0x1035u
#define TB_CL_DEVICE_OPENCL_C_VERSION 0x103Du

/* cl_khr_device_uuid */
#define TB_CL_DEVICE_UUID_KHR 0x106Au
#define TB_CL_DRIVER_UUID_KHR 0x106Bu
#define TB_CL_UUID_SIZE_KHR 16

/* cl_khr_pci_bus_info */
#define TB_CL_DEVICE_PCI_BUS_INFO_KHR 0x410Fu
typedef struct tb_cl_device_pci_bus_info_khr {
  tb_cl_uint pci_domain;
  tb_cl_uint pci_bus;
  tb_cl_uint pci_device;
  tb_cl_uint pci_function;
} tb_cl_device_pci_bus_info_khr;

/* cl_nv_device_attribute_query */
#define TB_CL_DEVICE_PCI_BUS_ID_NV 0x4008u
#define TB_CL_DEVICE_PCI_SLOT_ID_NV 0x4009u
#define TB_CL_DEVICE_PCI_DOMAIN_ID_NV 0x400Au

/* cl_amd_device_attribute_query */
#define TB_CL_DEVICE_TOPOLOGY_AMD 0x4037u
#define TB_CL_DEVICE_BOARD_NAME_AMD 0x4038u
#define TB_CL_DEVICE_GLOBAL_FREE_MEMORY_AMD 0x4039u
#define TB_CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD 1u
/* cl_device_topology_amd: a 24-byte union; for PCIe, bus/device/function are the last three bytes. */
typedef union tb_cl_device_topology_amd {
  struct {
    tb_cl_uint type;
    tb_cl_uint data[5];
  } raw;
  struct {
    tb_cl_uint type;
    signed char unused[17];
    signed char bus;
    signed char device;
    signed char function;
  } pcie;
} tb_cl_device_topology_amd;

/* The entry points, resolved from the ICD loader by name. */
#define TB_CL_SYMBOLS(X)                                                                              \
  X(clGetPlatformIDs, tb_cl_int, (tb_cl_uint, tb_cl_platform_id *, tb_cl_uint *))                     \
  X(clGetPlatformInfo, tb_cl_int, (tb_cl_platform_id, tb_cl_uint, size_t, void *, size_t *))          \
  X(clGetDeviceIDs, tb_cl_int, (tb_cl_platform_id, tb_cl_bitfield, tb_cl_uint, tb_cl_device_id *, tb_cl_uint *)) \
  X(clGetDeviceInfo, tb_cl_int, (tb_cl_device_id, tb_cl_uint, size_t, void *, size_t *))

typedef struct tb_cl_api {
#define TB_CL_FIELD(name, ret, args) ret(*name) args;
  TB_CL_SYMBOLS(TB_CL_FIELD)
#undef TB_CL_FIELD
} tb_cl_api;

/* "CL_DEVICE_NOT_FOUND", "CL_PLATFORM_NOT_FOUND_KHR", ...; "unknown OpenCL error" otherwise. */
const char *tb_cl_error_name(tb_cl_int code);

#endif
