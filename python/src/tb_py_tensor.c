/* tensorbridge._tb.Tensor: a tb_tensor seen from Python through the buffer protocol (NumPy views it without a
 * copy) and DLPack (export and import), and the import of any array-like value as a tb_tensor. */
#include <stdlib.h>
#include <string.h>
#include "tb_py.h"
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

int tb_py_numpy_init(void) {
  import_array1(-1);
  return 0;
}

/* DLPack before 1.0 (the "dltensor" capsule), for producers and consumers that do not speak 1.x. */
typedef struct tb_py_dlpack_legacy {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct tb_py_dlpack_legacy *self);
} tb_py_dlpack_legacy;

static int is_finalizing(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/* ---- Tensor objects ----------------------------------------------------------------------------- */

PyObject *tb_py_tensor_wrap(tb_tensor *tensor) {
  tb_py_tensor *self = PyObject_New(tb_py_tensor, &tb_py_tensor_type);
  if (!self) {
    tb_tensor_destroy(tensor);
    return NULL;
  }
  self->tensor = tensor;
  size_t ndim = tb_tensor_ndim(tensor), item = tb_dtype_size(tb_tensor_dtype(tensor));
  const int64_t *shape = tb_tensor_shape(tensor), *strides = tb_tensor_strides(tensor);
  for (size_t i = 0; i < ndim; i++) {
    self->shape[i] = (Py_ssize_t)shape[i];
    self->strides[i] = (Py_ssize_t)(strides[i] * (int64_t)item);
  }
  tb_py_live_add(TB_PY_LIVE_TENSOR, 1);
  return (PyObject *)self;
}

static void tensor_dealloc(tb_py_tensor *self) {
  tb_tensor_destroy(self->tensor);
  tb_py_live_add(TB_PY_LIVE_TENSOR, -1);
  PyObject_Free(self);
}

static const char *buffer_format(tb_dtype d) {
  switch (d) {
    case TB_DTYPE_F64: return "d";
    case TB_DTYPE_F32: return "f";
    case TB_DTYPE_F16: return "e";
    case TB_DTYPE_I64: return "q";
    case TB_DTYPE_I32: return "i";
    case TB_DTYPE_I16: return "h";
    case TB_DTYPE_I8: return "b";
    case TB_DTYPE_U8: return "B";
    case TB_DTYPE_BOOL: return "?";
    default: return NULL;
  }
}

static int tensor_getbuffer(tb_py_tensor *self, Py_buffer *view, int flags) {
  tb_tensor *t = self->tensor;
  void *data = tb_tensor_host_data(t);
  const char *fmt = buffer_format(tb_tensor_dtype(t));
  const char *device = tb_backend_device(tb_tensor_backend(t))->device;
  view->obj = NULL;
  if (!data) {
    tb_py_raise_msg(TB_ERR_UNSUPPORTED, "tensor on %s: its memory is not host memory; copy it with .cpu() or .numpy() first",
                    device);
    return -1;
  }
  if (!fmt) {
    tb_py_raise_msg(TB_ERR_UNSUPPORTED,
                    "tensor of dtype %s: the buffer protocol (NumPy) has no such type; exchange it through DLPack "
                    "(torch.from_dlpack(tensor)) instead",
                    tb_dtype_name(tb_tensor_dtype(t)));
    return -1;
  }
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !tb_tensor_is_contiguous(t)) {
    PyErr_SetString(PyExc_BufferError, "tensor: a strided view needs a consumer that accepts strides");
    return -1;
  }
  view->buf = data;
  view->obj = (PyObject *)self;
  Py_INCREF(self);
  view->len = (Py_ssize_t)tb_tensor_nbytes(t);
  view->itemsize = (Py_ssize_t)tb_dtype_size(tb_tensor_dtype(t));
  view->readonly = 0;
  view->format = (flags & PyBUF_FORMAT) ? (char *)fmt : NULL;
  view->ndim = (int)tb_tensor_ndim(t);
  view->shape = (flags & PyBUF_ND) ? self->shape : NULL;
  view->strides = (flags & PyBUF_STRIDES) ? self->strides : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  return 0;
}

static PyBufferProcs tensor_buffer = {(getbufferproc)tensor_getbuffer, NULL};

/* ---- DLPack export ------------------------------------------------------------------------------ */

static void versioned_capsule_free(PyObject *capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (m && m->deleter) m->deleter(m);
  }
}

static void legacy_export_delete(tb_py_dlpack_legacy *self) {
  DLManagedTensorVersioned *m = self->manager_ctx;
  if (m->deleter) m->deleter(m);
  free(self);
}

static void legacy_capsule_free(PyObject *capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    tb_py_dlpack_legacy *m = PyCapsule_GetPointer(capsule, "dltensor");
    if (m && m->deleter) m->deleter(m);
  }
}

/* The consumer's side of DLPack's stream rule for a device tensor: `stream` is where it will use the memory
 * (CUDA: None or 1 the legacy default stream, 2 the per-thread one, a handle; ROCm: None or 0 the null stream,
 * a handle; -1: it asks for no synchronization). The library's device calls all block and run on the
 * default stream, so the backend is synchronized once unless the consumer said -1; the values DLPack
 * forbids (CUDA 0, ROCm 1 and 2) are refused. A dl_device other than the tensor's is refused (no copies).
 * -1 with an exception on failure. */
static int export_handshake(tb_tensor *t, const DLDevice *device, PyObject *stream, PyObject *dl_device) {
  if (dl_device != Py_None) {
    int type = -1, id = -1;
    if (!PyArg_ParseTuple(dl_device, "ii", &type, &id)) return -1;
    if (type != (int)device->device_type || id != device->device_id) {
      tb_py_raise_msg(TB_ERR_UNSUPPORTED,
                      "__dlpack__(dl_device=(%d, %d)): the tensor is DLPack device (%d, %d) and is exported in place, "
                      "never copied; copy it with .cpu() or on a backend of that device first",
                      type, id, (int)device->device_type, (int)device->device_id);
      return -1;
    }
  }
  int kind = (int)device->device_type;
  if (kind == kDLCPU) return 0;
  long s = stream == Py_None ? (kind == kDLROCM ? 0 : 1) : PyLong_AsLong(stream);
  if (s == -1 && PyErr_Occurred()) return -1;
  if ((kind != kDLROCM && s == 0) || (kind == kDLROCM && (s == 1 || s == 2)) || s < -1) {
    tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT,
                    "__dlpack__(stream=%ld): DLPack does not allow that stream for %s memory; pass None, %s, a stream "
                    "handle, or -1 for no synchronization",
                    s, kind == kDLROCM ? "ROCm" : "CUDA", kind == kDLROCM ? "0 (the null stream)" : "1 (the legacy default stream), 2 (per-thread)");
    return -1;
  }
  if (s == -1) return 0;
  tb_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tb_backend_synchronize(tb_tensor_backend(t));
  Py_END_ALLOW_THREADS
  if (st != TB_OK) {
    tb_py_raise(st);
    return -1;
  }
  return 0;
}

static PyObject *tensor_dlpack(tb_py_tensor *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOOO", kwlist, &stream, &max_version, &dl_device, &copy))
    return NULL;
  if (copy == Py_True) return tb_py_raise_msg(TB_ERR_UNSUPPORTED, "__dlpack__(copy=True): this tensor is shared, never copied; pass copy=None or False");
  long major = 0;
  if (max_version != Py_None) {
    PyObject *first = PySequence_GetItem(max_version, 0);
    if (!first) return NULL;
    major = PyLong_AsLong(first);
    Py_DECREF(first);
    if (major == -1 && PyErr_Occurred()) return NULL;
  }
  DLManagedTensorVersioned *m = NULL;
  tb_status st = tb_tensor_to_dlpack(self->tensor, &m);
  if (st != TB_OK) return tb_py_raise(st);
  if (export_handshake(self->tensor, &m->dl_tensor.device, stream, dl_device) < 0) {
    m->deleter(m);
    return NULL;
  }
  if (major >= 1) {
    PyObject *cap = PyCapsule_New(m, "dltensor_versioned", versioned_capsule_free);
    if (!cap) m->deleter(m);
    return cap;
  }
  tb_py_dlpack_legacy *legacy = malloc(sizeof *legacy);
  if (!legacy) {
    m->deleter(m);
    return PyErr_NoMemory();
  }
  legacy->dl_tensor = m->dl_tensor;
  legacy->manager_ctx = m;
  legacy->deleter = legacy_export_delete;
  PyObject *cap = PyCapsule_New(legacy, "dltensor", legacy_capsule_free);
  if (!cap) legacy_export_delete(legacy);
  return cap;
}

/* The device __dlpack__ exports as (kDLCPU, kDLCUDA, kDLROCM...); kDLExtDev for a backend whose memory
 * DLPack cannot point at (its __dlpack__ raises). */
static PyObject *tensor_dlpack_device(tb_py_tensor *self, PyObject *unused) {
  (void)unused;
  tb_backend *b = tb_tensor_backend(self->tensor);
  if (tb_tensor_host_data(self->tensor) || tb_backend_kind_of(b) == TB_BACKEND_CPU) return Py_BuildValue("(ii)", kDLCPU, 0);
  DLManagedTensorVersioned *m = NULL;
  if (tb_tensor_to_dlpack(self->tensor, &m) != TB_OK) return Py_BuildValue("(ii)", kDLExtDev, tb_backend_device(b)->index);
  DLDevice d = m->dl_tensor.device;
  m->deleter(m);
  return Py_BuildValue("(ii)", (int)d.device_type, (int)d.device_id);
}

/* ---- Import ------------------------------------------------------------------------------------- */

/* A Python buffer lent to the library as a DLPack tensor; released by the deleter. */
typedef struct {
  DLManagedTensorVersioned managed;
  Py_buffer view;
  int64_t shape[TB_MAX_DIMS];
  int64_t strides[TB_MAX_DIMS];
} buffer_import;

static void buffer_import_delete(DLManagedTensorVersioned *m) {
  buffer_import *b = (buffer_import *)m;
  if (!is_finalizing()) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyBuffer_Release(&b->view);
    tb_py_live_add(TB_PY_LIVE_IMPORT, -1);
    PyGILState_Release(g);
  }
  free(b);
}

/* The dtype of a buffer format ("<f", "d", "?"), or -1 with an exception naming it. */
static int dtype_of_format(const char *fmt, Py_ssize_t itemsize, const char *what, tb_dtype *out) {
  const char *f = fmt ? fmt : "B";
  if (*f == '@' || *f == '=' || *f == '<') f++;
  if (*f && !f[1]) {
    switch (*f) {
      case 'd': *out = TB_DTYPE_F64; return 0;
      case 'f': *out = TB_DTYPE_F32; return 0;
      case 'e': *out = TB_DTYPE_F16; return 0;
      case '?': *out = TB_DTYPE_BOOL; return 0;
      case 'B': if (itemsize == 1) { *out = TB_DTYPE_U8; return 0; } break;
      case 'b': case 'h': case 'i': case 'l': case 'q':
        if (itemsize == 1) *out = TB_DTYPE_I8;
        else if (itemsize == 2) *out = TB_DTYPE_I16;
        else if (itemsize == 4) *out = TB_DTYPE_I32;
        else if (itemsize == 8) *out = TB_DTYPE_I64;
        else break;
        return 0;
      default: break;
    }
  }
  tb_py_raise_msg(TB_ERR_UNSUPPORTED,
                  "%s: element format '%s' (%zd bytes) has no TensorBridge dtype; use float64/32/16, int64/32/16/8, "
                  "uint8 or bool (numpy: arr.astype(numpy.float32))",
                  what, fmt ? fmt : "B", itemsize);
  return -1;
}

/* A packed copy of a buffer on the CPU backend (read-only or oddly strided memory). */
static tb_tensor *import_buffer_copy(Py_buffer *view, tb_dtype dtype, const int64_t *shape) {
  tb_backend *cpu = tb_py_cpu_backend();
  if (!cpu) return NULL;
  tb_tensor *t = NULL;
  tb_status st = tb_tensor_create(cpu, dtype, (size_t)view->ndim, shape, &t);
  if (st != TB_OK) {
    tb_py_raise(st);
    return NULL;
  }
  if (PyBuffer_ToContiguous(tb_tensor_host_data(t), view, view->len, 'C') < 0) {
    tb_tensor_destroy(t);
    return NULL;
  }
  return t;
}

/* A NumPy array lent to the library without the buffer protocol's bookkeeping; the deleter drops it. */
typedef struct {
  DLManagedTensorVersioned managed;
  PyObject *array;
  int64_t shape[TB_MAX_DIMS];
  int64_t strides[TB_MAX_DIMS];
} array_import;

static void array_import_delete(DLManagedTensorVersioned *m) {
  array_import *a = (array_import *)m;
  if (!is_finalizing()) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(a->array);
    tb_py_live_add(TB_PY_LIVE_IMPORT, -1);
    PyGILState_Release(g);
  }
  free(a);
}

/* The dtype of a NumPy array's elements when TensorBridge has it; -1 otherwise. */
static int array_dtype(PyArrayObject *a, tb_dtype *out) {
  char kind = PyArray_DESCR(a)->kind;
  npy_intp size = PyArray_ITEMSIZE(a);
  if (kind == 'f') *out = size == 8 ? TB_DTYPE_F64 : size == 4 ? TB_DTYPE_F32 : size == 2 ? TB_DTYPE_F16 : TB_DTYPE_COUNT;
  else if (kind == 'i') *out = size == 8 ? TB_DTYPE_I64 : size == 4 ? TB_DTYPE_I32 : size == 2 ? TB_DTYPE_I16 : size == 1 ? TB_DTYPE_I8 : TB_DTYPE_COUNT;
  else if (kind == 'u' && size == 1) *out = TB_DTYPE_U8;
  else if (kind == 'b' && size == 1) *out = TB_DTYPE_BOOL;
  else return -1;
  return *out == TB_DTYPE_COUNT ? -1 : 0;
}

static const DLDataType dl_types[TB_DTYPE_COUNT] = {
    [TB_DTYPE_F64] = {kDLFloat, 64, 1}, [TB_DTYPE_F32] = {kDLFloat, 32, 1}, [TB_DTYPE_F16] = {kDLFloat, 16, 1},
    [TB_DTYPE_I64] = {kDLInt, 64, 1},   [TB_DTYPE_I32] = {kDLInt, 32, 1},   [TB_DTYPE_I16] = {kDLInt, 16, 1},
    [TB_DTYPE_I8] = {kDLInt, 8, 1},     [TB_DTYPE_U8] = {kDLUInt, 8, 1},    [TB_DTYPE_BOOL] = {kDLBool, 8, 1}};

/* A writable, aligned, native-order NumPy array with non-negative strides, wrapped in place; NULL without
 * an exception when the array needs the general path. */
static tb_tensor *import_array_fast(PyObject *value, tb_backend *cpu, int *failed) {
  PyArrayObject *a = (PyArrayObject *)value;
  tb_dtype dtype;
  int ndim = PyArray_NDIM(a);
  *failed = 0;
  if (ndim > TB_MAX_DIMS || !PyArray_ISWRITEABLE(a) || !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a) ||
      array_dtype(a, &dtype) < 0)
    return NULL;
  npy_intp item = PyArray_ITEMSIZE(a);
  array_import *w = malloc(sizeof *w);
  if (!w) {
    *failed = 1;
    PyErr_NoMemory();
    return NULL;
  }
  for (int i = 0; i < ndim; i++) {
    npy_intp st = PyArray_STRIDE(a, i);
    if (st < 0 || st % item) {
      free(w);
      return NULL;
    }
    w->shape[i] = PyArray_DIM(a, i);
    w->strides[i] = st / item;
  }
  w->managed = (DLManagedTensorVersioned){.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION},
                                          .deleter = array_import_delete,
                                          .dl_tensor = {.data = PyArray_DATA(a), .device = {kDLCPU, 0}, .ndim = ndim,
                                                        .dtype = dl_types[dtype], .shape = w->shape,
                                                        .strides = w->strides}};
  tb_tensor *t = NULL;
  tb_status st = tb_tensor_from_dlpack(cpu, &w->managed, &t);
  if (st != TB_OK) {
    free(w);
    *failed = 1;
    tb_py_raise(st);
    return NULL;
  }
  w->array = Py_NewRef(value);
  tb_py_live_add(TB_PY_LIVE_IMPORT, 1);
  return t;
}

static tb_tensor *import_buffer(PyObject *value, const char *what) {
  tb_backend *cpu = tb_py_cpu_backend();
  if (!cpu) return NULL;
  buffer_import *b = calloc(1, sizeof *b);
  if (!b) return (tb_tensor *)PyErr_NoMemory();
  if (PyObject_GetBuffer(value, &b->view, PyBUF_RECORDS_RO) < 0) {
    free(b);
    return NULL;
  }
  tb_dtype dtype;
  tb_tensor *t = NULL;
  if (b->view.ndim > TB_MAX_DIMS) {
    tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "%s: %d dimensions, at most %d are supported", what, b->view.ndim, TB_MAX_DIMS);
    goto fail;
  }
  if (dtype_of_format(b->view.format, b->view.itemsize, what, &dtype) < 0) goto fail;
  bool packable = !b->view.readonly;
  for (int i = 0; i < b->view.ndim; i++) {
    b->shape[i] = b->view.shape ? b->view.shape[i] : (int64_t)(b->view.len / b->view.itemsize);
    Py_ssize_t s = b->view.strides ? b->view.strides[i] : b->view.itemsize;
    if (s < 0 || s % b->view.itemsize) packable = false;
    b->strides[i] = s / b->view.itemsize;
  }
  if (!packable) {
    t = import_buffer_copy(&b->view, dtype, b->shape);
    goto fail; /* the copy does not need the buffer */
  }
  b->managed.version.major = DLPACK_MAJOR_VERSION;
  b->managed.version.minor = DLPACK_MINOR_VERSION;
  b->managed.deleter = buffer_import_delete;
  b->managed.dl_tensor.data = b->view.buf;
  b->managed.dl_tensor.device.device_type = kDLCPU;
  b->managed.dl_tensor.ndim = b->view.ndim;
  b->managed.dl_tensor.shape = b->shape;
  b->managed.dl_tensor.strides = b->strides;
  b->managed.dl_tensor.dtype = dl_types[dtype];
  tb_status st = tb_tensor_from_dlpack(cpu, &b->managed, &t);
  if (st != TB_OK) {
    tb_py_raise(st);
    goto fail;
  }
  tb_py_live_add(TB_PY_LIVE_IMPORT, 1);
  return t; /* the library owns b now */
fail:
  PyBuffer_Release(&b->view);
  free(b);
  return t;
}

/* A legacy DLPack tensor presented as 1.x; its deleter calls the producer's. */
typedef struct {
  DLManagedTensorVersioned managed;
  tb_py_dlpack_legacy *legacy;
} legacy_import;

static void legacy_import_delete(DLManagedTensorVersioned *m) {
  legacy_import *l = (legacy_import *)m;
  if (l->legacy->deleter) l->legacy->deleter(l->legacy);
  free(l);
}

/* Wrap `m` on `backend` (ownership passes on success); read-only memory is copied into a new tensor on the
 * same backend. */
static tb_tensor *import_managed(DLManagedTensorVersioned *m, tb_backend *backend) {
  tb_tensor *t = NULL;
  bool read_only = (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  uint64_t flags = m->flags;
  m->flags &= ~(uint64_t)DLPACK_FLAG_BITMASK_READ_ONLY; /* only read below, then copied */
  tb_status st = tb_tensor_from_dlpack_on(backend, m, &t);
  if (st != TB_OK) {
    m->flags = flags;
    tb_py_raise(st);
    return NULL;
  }
  if (read_only) {
    tb_tensor *copy = NULL;
    st = tb_tensor_create(backend, tb_tensor_dtype(t), tb_tensor_ndim(t), tb_tensor_shape(t), &copy);
    if (st == TB_OK) st = tb_tensor_copy(copy, t);
    tb_tensor_destroy(t);
    if (st != TB_OK) {
      tb_tensor_destroy(copy);
      tb_py_raise(st);
      return NULL;
    }
    t = copy;
  }
  return t;
}

static bool is_host_device(int type) { return type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost; }

/* The DLPack device types TensorBridge imports in device memory, and the backend kind for each. */
static bool device_kind(int type, tb_backend_kind *kind) {
  if (type == kDLCUDA || type == kDLCUDAManaged) *kind = TB_BACKEND_CUDA;
  else if (type == kDLROCM) *kind = TB_BACKEND_ROCM;
  else return false;
  return true;
}

/* __dlpack__(stream=..., max_version=(1, 1)), falling back to older signatures on TypeError: a producer before
 * DLPack 1.0 takes no max_version (and one older still no stream, which host memory never passes). */
static PyObject *call_dlpack(PyObject *value, PyObject *stream) {
  PyObject *method = PyObject_GetAttrString(value, "__dlpack__");
  if (!method) return NULL;
  PyObject *empty = PyTuple_New(0);
  PyObject *kwargs = stream ? Py_BuildValue("{sOs(ii)}", "stream", stream, "max_version", DLPACK_MAJOR_VERSION,
                                            DLPACK_MINOR_VERSION)
                            : Py_BuildValue("{s(ii)}", "max_version", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  PyObject *cap = NULL;
  if (empty && kwargs) {
    cap = PyObject_Call(method, empty, kwargs);
    if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      Py_DECREF(kwargs);
      kwargs = stream ? Py_BuildValue("{sO}", "stream", stream) : NULL;
      if (!stream || kwargs) cap = PyObject_Call(method, empty, kwargs);
    }
  }
  Py_XDECREF(kwargs);
  Py_XDECREF(empty);
  Py_DECREF(method);
  return cap;
}

/* The backend a device DLPack object goes on: the caller's, or one opened for the object's device (the
 * tensor keeps the library's reference to it; *opened is then destroyed by the caller). */
static tb_backend *device_backend(tb_backend *given, tb_backend_kind kind, int id, const char *what, tb_backend **opened) {
  *opened = NULL;
  if (given) return given;
  char request[32];
  snprintf(request, sizeof request, "%s:%d", kind == TB_BACKEND_CUDA ? "cuda" : "rocm", id);
  tb_backend *b = NULL;
  tb_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tb_backend_create(request, &b);
  Py_END_ALLOW_THREADS
  if (st != TB_OK) {
    char said[1024];
    snprintf(said, sizeof said, "%s", tb_last_error());
    tb_py_raise_msg(st, "%s: a DLPack tensor on %s needs the backend %s: %s", what, request, request, said);
    return NULL;
  }
  *opened = b;
  return b;
}

/* The backend in *device for an object on DLPack device (kind, id): always when `exact` (the import must go
 * there, and the library says what differs), else only when it is that device (NULL: open one for it). */
static tb_backend *pick(tb_backend *const *device, bool exact, tb_backend_kind kind, int id) {
  tb_backend *b = device ? *device : NULL;
  if (b && !exact && (tb_backend_kind_of(b) != kind || tb_backend_device(b)->index != id)) return NULL;
  return b;
}

static tb_tensor *import_dlpack(PyObject *value, const char *what, tb_backend *const *device, bool exact) {
  PyObject *dev = PyObject_CallMethod(value, "__dlpack_device__", NULL);
  if (!dev) return NULL;
  int type = 0, id = 0;
  int ok = PyArg_ParseTuple(dev, "ii", &type, &id);
  Py_DECREF(dev);
  if (!ok) return NULL;
  tb_backend_kind kind = TB_BACKEND_CPU;
  bool host = is_host_device(type);
  if (!host && !device_kind(type, &kind))
    return (tb_tensor *)tb_py_raise_msg(
        TB_ERR_UNSUPPORTED,
        "%s: a DLPack tensor on device type %d, id %d; TensorBridge imports host memory (DLPack device 1) and CUDA "
        "(2, 13) or ROCm (10) device memory: move it to the CPU first (torch: t.cpu())",
        what, type, id);
  tb_backend *given = pick(device, exact, kind, id);
  /* Without a backend of its device, one is opened now, before __dlpack__ hands the memory over: a device
   * this machine cannot open is refused with the producer's tensor untouched. */
  tb_backend *opened = NULL;
  if (!host && !given && !device_backend(NULL, kind, id, what, &opened)) return NULL;
  /* The stream the backend's work runs on (DLPack: 1 is CUDA's legacy default stream, 0 ROCm's null
   * stream); on a backend of another kind the library refuses the import, so the producer's default. */
  tb_backend_kind on_kind = given ? tb_backend_kind_of(given) : kind;
  PyObject *stream = NULL;
  if (!host && on_kind != kind) stream = Py_NewRef(Py_None);
  else if (!host) stream = PyLong_FromLong(kind == TB_BACKEND_CUDA ? 1 : 0);
  if (!host && !stream) return NULL;
  PyObject *cap = call_dlpack(value, stream);
  Py_XDECREF(stream);
  if (!cap) {
    tb_backend_destroy(opened);
    return NULL;
  }
  tb_backend *on = NULL;
  if (host) on = tb_py_cpu_backend();
  else if (opened) on = opened;
  else on = device_backend(pick(device, exact, kind, id), kind, id, what, &opened); /* re-read: __dlpack__ ran Python */
  if (!on) {
    Py_DECREF(cap);
    return NULL;
  }
  tb_tensor *t = NULL;
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    t = import_managed(m, on);
    if (t) PyCapsule_SetName(cap, "used_dltensor_versioned");
  } else if (PyCapsule_IsValid(cap, "dltensor")) {
    legacy_import *l = calloc(1, sizeof *l);
    if (!l) {
      Py_DECREF(cap);
      tb_backend_destroy(opened);
      return (tb_tensor *)PyErr_NoMemory();
    }
    l->legacy = PyCapsule_GetPointer(cap, "dltensor");
    l->managed.version.major = 1;
    l->managed.deleter = legacy_import_delete;
    l->managed.dl_tensor = l->legacy->dl_tensor;
    t = import_managed(&l->managed, on);
    if (t)
      PyCapsule_SetName(cap, "used_dltensor");
    else
      free(l);
  } else {
    tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "%s: __dlpack__() returned a %s, not a DLPack capsule", what,
                    Py_TYPE(cap)->tp_name);
  }
  /* An unconsumed capsule's destructor is the producer's code (it may run Python): not with our error set. */
  PyObject *type_, *error, *trace;
  PyErr_Fetch(&type_, &error, &trace);
  Py_DECREF(cap);
  PyErr_Restore(type_, error, trace);
  tb_backend_destroy(opened); /* the tensor's storage holds its own reference */
  return t;
}

tb_tensor *tb_py_tensor_import_on(PyObject *value, const char *what, tb_backend *const *device, bool exact) {
  if (PyObject_TypeCheck(value, &tb_py_tensor_type)) {
    tb_tensor *base = ((tb_py_tensor *)value)->tensor, *view = NULL;
    tb_status st = tb_tensor_view(base, tb_tensor_ndim(base), tb_tensor_shape(base), tb_tensor_strides(base),
                                  tb_tensor_offset(base), &view);
    if (st != TB_OK) tb_py_raise(st);
    return view;
  }
  if (PyArray_CheckExact(value)) {
    tb_backend *cpu = tb_py_cpu_backend();
    int failed = 0;
    tb_tensor *t = cpu ? import_array_fast(value, cpu, &failed) : NULL;
    if (t || failed || !cpu) return t;
  }
  if (PyObject_CheckBuffer(value)) return import_buffer(value, what);
  if (PyObject_HasAttrString(value, "__dlpack__")) return import_dlpack(value, what, device, exact);
  return (tb_tensor *)tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT,
                                      "%s: a %s is neither an array with the buffer protocol (NumPy) nor a DLPack "
                                      "object (PyTorch, CuPy, JAX); convert it with numpy.asarray(value)",
                                      what, Py_TYPE(value)->tp_name);
}

tb_tensor *tb_py_tensor_import(PyObject *value, const char *what) {
  return tb_py_tensor_import_on(value, what, NULL, false);
}

static PyObject *py_tensor_from(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"value", "backend", NULL};
  PyObject *value, *backend_obj = Py_None;
  (void)type;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O", kwlist, &value, &backend_obj)) return NULL;
  tb_backend *const *device = NULL;
  PyObject *handle = NULL; /* tensorbridge.Backend keeps its _tb.Backend in _h */
  if (backend_obj != Py_None && !PyObject_TypeCheck(backend_obj, &tb_py_backend_type)) {
    handle = PyObject_GetAttrString(backend_obj, "_h");
    if (!handle) PyErr_Clear();
    else if (PyObject_TypeCheck(handle, &tb_py_backend_type)) backend_obj = handle;
  }
  Py_XDECREF(handle); /* backend_obj stays alive: the wrapper holds it */
  if (backend_obj != Py_None) {
    if (!PyObject_TypeCheck(backend_obj, &tb_py_backend_type))
      return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "backend: expected a tensorbridge.Backend or None, got a %s",
                             Py_TYPE(backend_obj)->tp_name);
    device = &((tb_py_backend *)backend_obj)->backend;
    if (!*device) return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "backend: this Backend was closed; create a new tensorbridge.Backend");
  }
  tb_tensor *t = tb_py_tensor_import_on(value, "value", device, true);
  return t ? tb_py_tensor_wrap(t) : NULL;
}

/* ---- Accessors ---------------------------------------------------------------------------------- */

static PyObject *tensor_get_dtype(tb_py_tensor *self, void *unused) {
  (void)unused;
  return PyUnicode_FromString(tb_dtype_name(tb_tensor_dtype(self->tensor)));
}

static PyObject *int64_tuple(const int64_t *v, size_t n) {
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; t && i < n; i++) {
    PyObject *x = PyLong_FromLongLong(v[i]);
    if (!x) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, x);
  }
  return t;
}

static PyObject *tensor_get_shape(tb_py_tensor *self, void *unused) {
  (void)unused;
  return int64_tuple(tb_tensor_shape(self->tensor), tb_tensor_ndim(self->tensor));
}

static PyObject *tensor_get_strides(tb_py_tensor *self, void *unused) {
  (void)unused;
  return int64_tuple(tb_tensor_strides(self->tensor), tb_tensor_ndim(self->tensor));
}

static PyObject *tensor_get_nbytes(tb_py_tensor *self, void *unused) {
  (void)unused;
  return PyLong_FromSize_t(tb_tensor_nbytes(self->tensor));
}

static PyObject *tensor_get_device(tb_py_tensor *self, void *unused) {
  (void)unused;
  return PyUnicode_FromString(tb_backend_device(tb_tensor_backend(self->tensor))->device);
}

static PyObject *tensor_get_is_host(tb_py_tensor *self, void *unused) {
  (void)unused;
  return PyBool_FromLong(tb_tensor_host_data(self->tensor) != NULL);
}

static PyObject *tensor_cpu(tb_py_tensor *self, PyObject *unused) {
  (void)unused;
  tb_backend *cpu = tb_py_cpu_backend();
  if (!cpu) return NULL;
  tb_tensor *src = self->tensor, *dst = NULL;
  tb_status st = tb_tensor_create(cpu, tb_tensor_dtype(src), tb_tensor_ndim(src), tb_tensor_shape(src), &dst);
  if (st == TB_OK) {
    Py_BEGIN_ALLOW_THREADS
    st = tb_tensor_copy(dst, src);
    Py_END_ALLOW_THREADS
  }
  if (st != TB_OK) {
    tb_tensor_destroy(dst);
    return tb_py_raise(st);
  }
  return tb_py_tensor_wrap(dst);
}

static PyObject *tensor_tobytes(tb_py_tensor *self, PyObject *unused) {
  (void)unused;
  size_t n = tb_tensor_nbytes(self->tensor);
  PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
  if (!out) return NULL;
  tb_status st = tb_tensor_copy_to_host(self->tensor, PyBytes_AS_STRING(out), n);
  if (st != TB_OK) {
    Py_DECREF(out);
    return tb_py_raise(st);
  }
  return out;
}

static int numpy_type(tb_dtype d) {
  switch (d) {
    case TB_DTYPE_F64: return NPY_FLOAT64;
    case TB_DTYPE_F32: return NPY_FLOAT32;
    case TB_DTYPE_F16: return NPY_FLOAT16;
    case TB_DTYPE_I64: return NPY_INT64;
    case TB_DTYPE_I32: return NPY_INT32;
    case TB_DTYPE_I16: return NPY_INT16;
    case TB_DTYPE_I8: return NPY_INT8;
    case TB_DTYPE_U8: return NPY_UINT8;
    case TB_DTYPE_BOOL: return NPY_BOOL;
    default: return -1;
  }
}

/* A NumPy array over a host tensor's memory, keeping the Tensor object alive as its base. */
static PyObject *host_array(tb_py_tensor *self) {
  int type = numpy_type(tb_tensor_dtype(self->tensor));
  if (type < 0) { /* the buffer protocol's sentence for dtypes NumPy lacks */
    Py_buffer view;
    if (tensor_getbuffer(self, &view, PyBUF_RECORDS) == 0) PyBuffer_Release(&view);
    return NULL;
  }
  PyObject *array = PyArray_NewFromDescr(&PyArray_Type, PyArray_DescrFromType(type), (int)tb_tensor_ndim(self->tensor),
                                         (npy_intp *)self->shape, (npy_intp *)self->strides,
                                         tb_tensor_host_data(self->tensor), NPY_ARRAY_WRITEABLE, NULL);
  if (!array) return NULL;
  if (PyArray_SetBaseObject((PyArrayObject *)array, Py_NewRef((PyObject *)self)) < 0) {
    Py_DECREF(array);
    return NULL;
  }
  return array;
}

PyObject *tb_py_tensor_numpy(PyObject *tensor) {
  tb_py_tensor *self = (tb_py_tensor *)tensor;
  if (tb_tensor_host_data(self->tensor)) return host_array(self);
  PyObject *host = tensor_cpu(self, NULL);
  if (!host) return NULL;
  PyObject *out = host_array((tb_py_tensor *)host);
  Py_DECREF(host);
  return out;
}

static PyObject *tensor_numpy(tb_py_tensor *self, PyObject *unused) {
  (void)unused;
  return tb_py_tensor_numpy((PyObject *)self);
}

static PyMethodDef tensor_methods[] = {
    {"numpy", (PyCFunction)tensor_numpy, METH_NOARGS, "A NumPy array: a view of host memory, else a copy."},
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_VARARGS | METH_KEYWORDS, "DLPack export in place (host, CUDA and ROCm memory), with DLPack's stream handshake."},
    {"__dlpack_device__", (PyCFunction)tensor_dlpack_device, METH_NOARGS, "(device type, id) as DLPack says."},
    {"cpu", (PyCFunction)tensor_cpu, METH_NOARGS, "A copy on the CPU backend."},
    {"tobytes", (PyCFunction)tensor_tobytes, METH_NOARGS, "The elements packed, row-major."},
    {"from_value", (PyCFunction)(void (*)(void))py_tensor_from, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "from_value(value, backend=None): wrap an array or DLPack object (device memory on `backend`)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef tensor_getset[] = {
    {"dtype", (getter)tensor_get_dtype, NULL, "The dtype's name ('f32').", NULL},
    {"shape", (getter)tensor_get_shape, NULL, "The shape.", NULL},
    {"strides", (getter)tensor_get_strides, NULL, "The strides, in elements.", NULL},
    {"nbytes", (getter)tensor_get_nbytes, NULL, "Bytes of a packed copy.", NULL},
    {"device", (getter)tensor_get_device, NULL, "The device string of its backend ('cpu:0').", NULL},
    {"is_host", (getter)tensor_get_is_host, NULL, "Whether the host can read it in place.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject tb_py_tensor_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tensorbridge._tb.Tensor",
    .tp_basicsize = sizeof(tb_py_tensor),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tb_tensor.",
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
    .tp_as_buffer = &tensor_buffer,
};
