/* Backends: a handle on one device through one API. This backends carry the device and its
 * description; memory and execution are added behind the same handle. */
#ifndef TENSORBRIDGE_BACKEND_H
#define TENSORBRIDGE_BACKEND_H
#include <stdbool.h>
#include <stddef.h>
#include "device.h"
#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_backend tb_backend;

/* Create a backend from a request as tb_select takes it ("auto", "cuda", "cuda:1", "cpu", NULL for
 * TB_BACKEND or auto). Runs discovery itself and keeps the device list inside the handle. Fails as
 * tb_discover or tb_select fails; *out_backend is NULL then. */
TB_API tb_status tb_backend_create(const char *request, tb_backend **out_backend);
/* Create a backend on device `index` of `kind` (0 for the first): the same as the request
 * "<kind>:<index>". A kind out of range or a negative index is TB_ERR_INVALID_ARGUMENT. */
TB_API tb_status tb_backend_create_kind(tb_backend_kind kind, int index, tb_backend **out_backend);
/* Frees the handle and the device info it owns. NULL is allowed. */
TB_API void tb_backend_destroy(tb_backend *backend);

/* The device this backend runs on; owned by the backend, valid until tb_backend_destroy. NULL for NULL. */
TB_API const tb_device_info *tb_backend_device(const tb_backend *backend);
/* The backend's kind; TB_BACKEND_COUNT for NULL. */
TB_API tb_backend_kind tb_backend_kind_of(const tb_backend *backend);

/* The seeds' conveniences, each running discovery. */
/* Backends with at least one usable device, in the order `auto` ranks their best device (backends
 * auto passes over, such as a CPU-only Vulkan driver, follow in the default order). A capacity of
 * TB_BACKEND_COUNT is always enough; a smaller one that does not fit is TB_ERR_INVALID_ARGUMENT with
 * *out_count set to the number needed. out_kinds may be NULL when capacity is 0. */
TB_API tb_status tb_backend_list_available(tb_backend_kind *out_kinds, size_t capacity, size_t *out_count);
/* The backend `auto` picks (TB_BACKEND is not consulted; tb_backend_create(NULL) does consult it).
 * TB_ERR_UNAVAILABLE when nothing is usable. */
TB_API tb_status tb_backend_detect_best(tb_backend_kind *out_kind);
/* true when the backend has a usable device. A probe that fails counts as unavailable. */
TB_API bool tb_backend_is_available(tb_backend_kind kind);

#ifdef __cplusplus
}
#endif
#endif
