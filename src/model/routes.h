/* Internal: the other routes to the hardware of a prepared model's device. When the device backend has no
 * kernel for a node (or cannot build it), another backend that reaches the same physical device (Vulkan or
 * OpenCL for a CUDA, ROCm or Level Zero GPU; the native backend for a Vulkan or OpenCL device) may have
 * one, and the node runs there before it falls back to the CPU. Discovery runs once, when the first node
 * needs a route; a route's backend is opened when a node first asks it for a kernel, and kept (shared by
 * every node of the prepared model) until tb_routes_destroy. The rule for "the same device" is in
 * docs/engine.md ("Routes to the same device"). */
#ifndef TB_MODEL_ROUTES_H
#define TB_MODEL_ROUTES_H
#include <stddef.h>
#include <tensorbridge/backend.h>
#include <tensorbridge/device.h>

typedef struct tb_routes tb_routes;

/* The routes of `device` (a device backend), found later. NULL on out of memory. */
tb_routes *tb_routes_create(tb_backend *device);
/* Closes the backends it opened (tensors still alive on them keep them open until they go). */
void tb_routes_destroy(tb_routes *routes);

/* The other usable devices of `list` that are the hardware of list's entry for `device` (same
 * physical_id: equal PCI bus id or UUID), of another backend, not a CPU implementation of Vulkan or
 * OpenCL; native backends first, then Vulkan, then OpenCL (each by index). Up to `cap` into out; returns
 * how many there are. */
size_t tb_routes_match(const tb_device_list *list, const char *device, const tb_device_info **out, size_t cap);

/* How many routes there are (discovery runs at the first call). */
size_t tb_routes_count(tb_routes *routes);
/* Route i's device ("vulkan:0"). */
const char *tb_routes_device(const tb_routes *routes, size_t i);
/* Why route i is the same hardware: "the same GPU (PCI 0000:1a:00.0)", "the same GPU (UUID 8c0f...)". */
const char *tb_routes_identity(const tb_routes *routes, size_t i);
/* Route i's backend, opened now on first use; NULL when it cannot be opened, and then *why_not says why
 * (owned by routes). */
tb_backend *tb_routes_backend(tb_routes *routes, size_t i, const char **why_not);
/* "the GPU", "the TPU", "the device": what the prepared model's device is. */
const char *tb_routes_noun(const tb_routes *routes);

/* TEST ONLY (tests/unit/test_routes.c): from now on in this process, the devices `a` and `b` ("opencl:0",
 * "vulkan:0") are routes to one device, whatever discovery says (e.g. PoCL and lavapipe, which have no PCI
 * bus id, stand in for a GPU's two routes). NULL, NULL forgets every declared pair. Not thread-safe. */
void tb_routes_test_declare_same(const char *a, const char *b);

#endif
