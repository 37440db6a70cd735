/* The CPython extension tensorbridge._tb: shared declarations of its object types and helpers. The module
 * is a thin layer over include/tensorbridge; the Pythonic API is written in python/tensorbridge/. */
#ifndef TB_PY_H
#define TB_PY_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <tensorbridge/tensorbridge.h>

/* A tb_backend handle; NULL after close(). `busy` counts calls using it with the GIL released, during
 * which close() is refused. */
typedef struct {
  PyObject_HEAD
  tb_backend *backend;
  int busy;
} tb_py_backend;

/* A tb_tensor with the buffer protocol and DLPack export. `owner` keeps imported memory alive when the
 * tensor wraps a Python buffer (NULL otherwise: the library owns the storage). */
typedef struct {
  PyObject_HEAD
  tb_tensor *tensor;
  Py_ssize_t shape[TB_MAX_DIMS];
  Py_ssize_t strides[TB_MAX_DIMS]; /* bytes */
} tb_py_tensor;

typedef struct {
  PyObject_HEAD
  tb_model *model;
  int busy; /* as tb_py_backend's */
} tb_py_model;

/* A prepared model: the graph output names (copied, so the model may go first) and a lock that keeps
 * it to one running thread at a time while the GIL is released. */
typedef struct {
  PyObject_HEAD
  tb_prepared *prepared;
  PyThread_type_lock lock;
  size_t output_count;
  char **output_names;
  PyObject *output_keys; /* tuple of str */
  tb_backend *backend;   /* the backend it was prepared on (kept alive by the prepared model); NULL once closed */
} tb_py_prepared;

extern PyTypeObject tb_py_backend_type;
extern PyTypeObject tb_py_tensor_type;
extern PyTypeObject tb_py_model_type;
extern PyTypeObject tb_py_prepared_type;
extern PyTypeObject tb_py_event_type;

/* A new Event on `backend`; NULL with an exception set. */
PyObject *tb_py_event_new(tb_backend *backend);

/* Counts of live handles made by this module, for leak tests (_tb.live_objects()). */
enum { TB_PY_LIVE_BACKEND, TB_PY_LIVE_TENSOR, TB_PY_LIVE_MODEL, TB_PY_LIVE_PREPARED, TB_PY_LIVE_IMPORT,
       TB_PY_LIVE_COUNT };
void tb_py_live_add(int which, int delta);

/* close() of a handle another thread is using with the GIL released: raises and returns NULL. */
PyObject *tb_py_busy_error(const char *what);
/* Raise the exception class for `status` with the library's sentence (tb_last_error()); returns NULL. */
PyObject *tb_py_raise(tb_status status);
/* Raise the exception class for `status` with a sentence made here; returns NULL. */
PyObject *tb_py_raise_msg(tb_status status, const char *fmt, ...);

/* The module's CPU backend for wrapping host memory (made on first use). NULL with an exception set. */
tb_backend *tb_py_cpu_backend(void);

/* A new Python Tensor owning `tensor` (destroys it on failure). */
PyObject *tb_py_tensor_wrap(tb_tensor *tensor);
/* A tb_tensor for any Python value: a Tensor (a new view sharing it), an object with the buffer protocol
 * (NumPy arrays: wrapped without a copy) or with __dlpack__ (PyTorch, CuPy, JAX: zero-copy on the CPU).
 * `what` names the value in messages ("input 'x'"). The caller destroys the result. NULL with an
 * exception set. */
tb_tensor *tb_py_tensor_import(PyObject *value, const char *what);
/* The same, with the backend that DLPack objects in device memory are imported on, in place: *device, read
 * after the producer's __dlpack__ returns (a slot another thread may clear). `exact`: every device object goes
 * on *device, and the library refuses one of another device with its sentence (prepared.run); else *device
 * is used for objects of its own device only. Without one (device or *device NULL, or not exact and another
 * device), a kDLCUDA / kDLROCM object is imported on a backend opened for its device, cuda:N / rocm:N. The
 * stream handshake is DLPack's: __dlpack__(stream=1) for CUDA (the legacy default stream, on which the
 * backend's blocking copies run), stream=0 for ROCm (the null stream), no stream for host memory. */
tb_tensor *tb_py_tensor_import_on(PyObject *value, const char *what, tb_backend *const *device, bool exact);
/* Load NumPy's C API (at module init); -1 with an exception when NumPy cannot be imported. */
int tb_py_numpy_init(void);
/* A NumPy array of a Tensor: a view of host memory (the Tensor is its base), else of a copy on the CPU. */
PyObject *tb_py_tensor_numpy(PyObject *tensor);
/* tb_dtype from a name ("f32", "float32"), with an exception on failure. */
int tb_py_parse_dtype(PyObject *name, tb_dtype *out);

/* A str from library JSON text *json, which is freed (status: of the call that made it). */
PyObject *tb_py_json_result(tb_status status, char **json);

/* Method tables of the module functions in the other files. */
extern PyMethodDef tb_py_device_methods[];
extern PyMethodDef tb_py_checkpoint_methods[];
extern PyMethodDef tb_py_validate_methods[];
extern PyMethodDef tb_py_table_methods[];
#endif
