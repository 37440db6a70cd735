/* Internal: how tensors use their backend's memory and keep the backend alive.
 *
 * A backend handle is reference-counted: the caller's reference (dropped by tb_backend_destroy) and one
 * per tensor storage, so memory handed out by the backend (including storage kept alive by a DLPack
 * export after its tensors are gone) never outlives the allocator it came from. The live tensor and
 * storage counts let tb_backend_set_device refuse while memory is in use. */
#ifndef TB_BACKEND_REFS_H
#define TB_BACKEND_REFS_H
#include <stddef.h>
#include "backend/allocator.h"
#include "backend/backend_impl.h"

/* A storage starts using the backend: takes a reference and, when bytes > 0, a block from the caching
 * allocator (*out_block NULL when bytes == 0). Serialised with tb_backend_set_device. */
tb_status tb_backend_storage_acquire(tb_backend *backend, size_t bytes, tb_block **out_block);
/* The storage is gone: frees its block (NULL allowed) and drops the reference, which may free the
 * backend when the caller has already destroyed it. */
void tb_backend_storage_release(tb_backend *backend, tb_block *block);
/* A tensor (base or view) is created / destroyed on the backend. */
void tb_backend_tensor_added(tb_backend *backend);
void tb_backend_tensor_removed(tb_backend *backend);
size_t tb_backend_live_tensors(const tb_backend *backend);
size_t tb_backend_live_storages(const tb_backend *backend);

#endif
