/* tensorbridge._tb.Backend: a tb_backend handle with its memory calls, scopes and device facts. */
#include "tb_py.h"

static PyObject *backend_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"request", NULL};
  PyObject *request = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O", kwlist, &request)) return NULL;
  const char *req = NULL;
  if (request != Py_None) {
    if (!PyUnicode_Check(request))
      return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT,
                             "request: expected a string such as 'auto', 'cpu' or 'opencl:0', got a %s",
                             Py_TYPE(request)->tp_name);
    req = PyUnicode_AsUTF8(request);
    if (!req) return NULL;
  }
  tb_backend *backend = NULL;
  tb_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tb_backend_create(req, &backend);
  Py_END_ALLOW_THREADS
  if (st != TB_OK) return tb_py_raise(st);
  tb_py_backend *self = (tb_py_backend *)type->tp_alloc(type, 0);
  if (!self) {
    tb_backend_destroy(backend);
    return NULL;
  }
  self->backend = backend;
  self->busy = 0;
  tb_py_live_add(TB_PY_LIVE_BACKEND, 1);
  return (PyObject *)self;
}

static void backend_close_handle(tb_py_backend *self) {
  if (self->backend) {
    tb_backend_destroy(self->backend);
    self->backend = NULL;
    tb_py_live_add(TB_PY_LIVE_BACKEND, -1);
  }
}

static void backend_dealloc(tb_py_backend *self) {
  backend_close_handle(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The open handle, or NULL with TB_ERR_INVALID_ARGUMENT raised. */
static tb_backend *open_handle(tb_py_backend *self) {
  if (!self->backend)
    tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "backend: this Backend was closed; create a new tensorbridge.Backend");
  return self->backend;
}

static PyObject *backend_close(tb_py_backend *self, PyObject *unused) {
  (void)unused;
  if (self->busy) return tb_py_busy_error("Backend.close()");
  backend_close_handle(self);
  Py_RETURN_NONE;
}

static PyObject *backend_device_json(tb_py_backend *self, PyObject *unused) {
  (void)unused;
  tb_backend *b = open_handle(self);
  if (!b) return NULL;
  char *json = NULL;
  return tb_py_json_result(tb_device_info_to_json(tb_backend_device(b), &json), &json);
}

static PyObject *backend_memory_stats_json(tb_py_backend *self, PyObject *unused) {
  (void)unused;
  tb_backend *b = open_handle(self);
  if (!b) return NULL;
  tb_memory_stats stats = {.size = sizeof stats};
  tb_status st = tb_backend_memory_stats(b, &stats);
  if (st != TB_OK) return tb_py_raise(st);
  char *json = NULL;
  return tb_py_json_result(tb_memory_stats_to_json(&stats, &json), &json);
}

/* Methods that take the handle and return a status, with the GIL released (they may wait on a device). */
#define TB_PY_BACKEND_CALL(fn, call)                                   \
  static PyObject *fn(tb_py_backend *self, PyObject *unused) {         \
    (void)unused;                                                      \
    tb_backend *b = open_handle(self);                                 \
    if (!b) return NULL;                                               \
    tb_status st;                                                      \
    self->busy++;                                                      \
    Py_BEGIN_ALLOW_THREADS                                             \
    st = call(b);                                                      \
    Py_END_ALLOW_THREADS                                               \
    self->busy--;                                                      \
    if (st != TB_OK) return tb_py_raise(st);                           \
    Py_RETURN_NONE;                                                    \
  }
TB_PY_BACKEND_CALL(backend_empty_cache, tb_backend_empty_cache)
TB_PY_BACKEND_CALL(backend_reset_peak, tb_backend_reset_peak_memory)
TB_PY_BACKEND_CALL(backend_synchronize, tb_backend_synchronize)
TB_PY_BACKEND_CALL(backend_scope_begin, tb_backend_scope_begin)
TB_PY_BACKEND_CALL(backend_scope_end, tb_backend_scope_end)

static PyObject *backend_set_memory_fraction(tb_py_backend *self, PyObject *arg) {
  tb_backend *b = open_handle(self);
  if (!b) return NULL;
  double f = PyFloat_AsDouble(arg);
  if (f == -1.0 && PyErr_Occurred()) return NULL;
  tb_status st = tb_backend_set_memory_fraction(b, f);
  if (st != TB_OK) return tb_py_raise(st);
  Py_RETURN_NONE;
}

static PyObject *backend_set_device(tb_py_backend *self, PyObject *arg) {
  tb_backend *b = open_handle(self);
  if (!b) return NULL;
  long index = PyLong_AsLong(arg);
  if (index == -1 && PyErr_Occurred()) return NULL;
  tb_status st = tb_backend_set_device(b, (int)index);
  if (st != TB_OK) return tb_py_raise(st);
  Py_RETURN_NONE;
}

static PyObject *backend_empty(tb_py_backend *self, PyObject *args) {
  PyObject *dtype_name, *shape_obj;
  if (!PyArg_ParseTuple(args, "OO", &dtype_name, &shape_obj)) return NULL;
  tb_backend *b = open_handle(self);
  tb_dtype dtype;
  if (!b || tb_py_parse_dtype(dtype_name, &dtype) < 0) return NULL;
  PyObject *seq = PySequence_Fast(shape_obj, "shape: expected a sequence of ints");
  if (!seq) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > TB_MAX_DIMS) {
    Py_DECREF(seq);
    return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "shape: %zd dimensions, at most %d are supported", n, TB_MAX_DIMS);
  }
  int64_t shape[TB_MAX_DIMS];
  for (Py_ssize_t i = 0; i < n; i++) {
    shape[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    if (shape[i] == -1 && PyErr_Occurred()) {
      Py_DECREF(seq);
      return NULL;
    }
  }
  Py_DECREF(seq);
  tb_tensor *t = NULL;
  tb_status st = tb_tensor_create(b, dtype, (size_t)n, shape, &t);
  if (st != TB_OK) return tb_py_raise(st);
  return tb_py_tensor_wrap(t);
}

static PyObject *backend_random(tb_py_backend *self, PyObject *args) {
  PyObject *dtype_name, *shape_obj;
  unsigned long long seed;
  Py_ssize_t index;
  if (!PyArg_ParseTuple(args, "OOKn", &dtype_name, &shape_obj, &seed, &index)) return NULL;
  PyObject *empty_args = Py_BuildValue("(OO)", dtype_name, shape_obj);
  if (!empty_args) return NULL;
  PyObject *t = backend_empty(self, empty_args);
  Py_DECREF(empty_args);
  if (!t) return NULL;
  tb_status st = tb_tensor_fill_random(((tb_py_tensor *)t)->tensor, seed, (size_t)index);
  if (st != TB_OK) {
    Py_DECREF(t);
    return tb_py_raise(st);
  }
  return t;
}

static PyObject *backend_copy_in(tb_py_backend *self, PyObject *value) {
  tb_backend *b = open_handle(self);
  if (!b) return NULL;
  tb_tensor *src = tb_py_tensor_import_on(value, "value", &self->backend, false); /* a copy: from any device */
  if (!src) return NULL;
  tb_tensor *dst = NULL;
  tb_status st = tb_tensor_create(b, tb_tensor_dtype(src), tb_tensor_ndim(src), tb_tensor_shape(src), &dst);
  if (st == TB_OK) {
    self->busy++;
    Py_BEGIN_ALLOW_THREADS
    st = tb_tensor_copy(dst, src);
    Py_END_ALLOW_THREADS
    self->busy--;
  }
  tb_tensor_destroy(src);
  if (st != TB_OK) {
    tb_tensor_destroy(dst);
    return tb_py_raise(st);
  }
  return tb_py_tensor_wrap(dst);
}

static PyObject *backend_event(tb_py_backend *self, PyObject *unused) {
  (void)unused;
  tb_backend *b = open_handle(self);
  return b ? tb_py_event_new(b) : NULL;
}

static PyObject *backend_get_closed(tb_py_backend *self, void *unused) {
  (void)unused;
  return PyBool_FromLong(self->backend == NULL);
}

static PyObject *backend_get_kind(tb_py_backend *self, void *unused) {
  (void)unused;
  tb_backend *b = open_handle(self);
  return b ? PyUnicode_FromString(tb_backend_name(tb_backend_kind_of(b))) : NULL;
}

static PyMethodDef backend_methods[] = {
    {"close", (PyCFunction)backend_close, METH_NOARGS, "Destroy the handle (tensors made on it stay valid)."},
    {"device_json", (PyCFunction)backend_device_json, METH_NOARGS, "The device as JSON."},
    {"memory_stats_json", (PyCFunction)backend_memory_stats_json, METH_NOARGS, "Memory statistics as JSON."},
    {"empty_cache", (PyCFunction)backend_empty_cache, METH_NOARGS, "tb_backend_empty_cache."},
    {"reset_peak_memory", (PyCFunction)backend_reset_peak, METH_NOARGS, "tb_backend_reset_peak_memory."},
    {"synchronize", (PyCFunction)backend_synchronize, METH_NOARGS, "tb_backend_synchronize."},
    {"scope_begin", (PyCFunction)backend_scope_begin, METH_NOARGS, "tb_backend_scope_begin."},
    {"scope_end", (PyCFunction)backend_scope_end, METH_NOARGS, "tb_backend_scope_end."},
    {"set_memory_fraction", (PyCFunction)backend_set_memory_fraction, METH_O, "tb_backend_set_memory_fraction."},
    {"set_device", (PyCFunction)backend_set_device, METH_O, "tb_backend_set_device."},
    {"empty", (PyCFunction)backend_empty, METH_VARARGS, "empty(dtype, shape): a new tensor, contents undefined."},
    {"random", (PyCFunction)backend_random, METH_VARARGS, "random(dtype, shape, seed, index): tb_tensor_fill_random."},
    {"copy_in", (PyCFunction)backend_copy_in, METH_O, "A copy of an array or DLPack object on this backend."},
    {"event", (PyCFunction)backend_event, METH_NOARGS, "A new Event on this backend (tb_event_create)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef backend_getset[] = {
    {"closed", (getter)backend_get_closed, NULL, "Whether close() was called.", NULL},
    {"kind", (getter)backend_get_kind, NULL, "The backend's name.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject tb_py_backend_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tensorbridge._tb.Backend",
    .tp_basicsize = sizeof(tb_py_backend),
    .tp_dealloc = (destructor)backend_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tb_backend handle.",
    .tp_methods = backend_methods,
    .tp_getset = backend_getset,
    .tp_new = backend_new,
};
