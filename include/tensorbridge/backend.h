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
 * TB_BACKEND or auto). Runs discovery itself. Fails as tb_select fails. */
TB_API tb_status tb_backend_create(const char *request, tb_backend **out_backend);
/* Create a backend on device `index` of `kind` (0 for the first). */
TB_API tb_status tb_backend_create_kind(tb_backend_kind kind, int index, tb_backend **out_backend);
TB_API void tb_backend_destroy(tb_backend *backend);

/* The device this backend runs on; owned by the backend. */
TB_API const tb_device_info *tb_backend_device(const tb_backend *backend);
TB_API tb_backend_kind tb_backend_kind_of(const tb_backend *backend);

/* The seeds' conveniences, each running discovery. */
/* Backends with at least one usable device, in selection order. *out_count <= capacity. */
TB_API tb_status tb_backend_list_available(tb_backend_kind *out_kinds, size_t capacity, size_t *out_count);
/* The backend `auto` picks. */
TB_API tb_status tb_backend_detect_best(tb_backend_kind *out_kind);
/* true when the backend has a usable device. A probe that fails counts as unavailable. */
TB_API bool tb_backend_is_available(tb_backend_kind kind);

#ifdef __cplusplus
}
#endif
#endif
