/* TensorBridge: one C interface to every machine-learning accelerator on a machine.
 *
 * Ownership, once for the whole API: an object made by tb_X_create / tb_discover / tb_select is freed
 * by the matching tb_X_destroy; pointers returned by accessors are owned by the object they came from
 * and live as long as it does; text the caller must free (JSON) comes back through a char ** and is
 * freed with tb_free(). Where a field differs, its comment says so.
 *
 * Errors: every call that can fail returns tb_status; tb_last_error() has the sentence. The library
 * never aborts or exits on anything a user, a file or a driver can cause. */
#ifndef TENSORBRIDGE_H
#define TENSORBRIDGE_H
#include "status.h"
#include "dtype.h"
#include "device.h"
#include "policy.h"
#include "backend.h"
#include "dlpack.h"
#include "tensor.h"
#include "model.h"
#include "ops.h"
#include "validate.h"
#include "checkpoint.h"
#endif
