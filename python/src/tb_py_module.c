/* tensorbridge._tb: module creation, the status -> exception mapping, live-handle counters and the shared
 * CPU backend that wraps host memory. */
#include <stdarg.h>
#include "tb_py.h"

static PyObject *error_classes; /* tuple indexed by tb_status, from tensorbridge._errors */
static tb_backend *cpu_backend;
static Py_ssize_t live[TB_PY_LIVE_COUNT]; /* changed only with the GIL held */

void tb_py_live_add(int which, int delta) { live[which] += delta; }

static PyObject *class_for(tb_status status) {
  Py_ssize_t n = error_classes ? PyTuple_GET_SIZE(error_classes) : 0;
  if ((Py_ssize_t)status <= 0 || (Py_ssize_t)status >= n) return n ? PyTuple_GET_ITEM(error_classes, 0) : PyExc_RuntimeError;
  return PyTuple_GET_ITEM(error_classes, (Py_ssize_t)status);
}

static PyObject *raise_text(tb_status status, const char *text) {
  PyObject *args = Py_BuildValue("(is)", (int)status, text);
  if (args) {
    PyObject *cls = class_for(status);
    PyObject *exc = PyObject_Call(cls, args, NULL);
    Py_DECREF(args);
    if (exc) {
      PyErr_SetObject(cls, exc);
      Py_DECREF(exc);
    }
  }
  return NULL;
}

PyObject *tb_py_raise(tb_status status) {
  const char *text = tb_last_error();
  return raise_text(status, text[0] ? text : tb_status_str(status));
}

PyObject *tb_py_raise_msg(tb_status status, const char *fmt, ...) {
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return raise_text(status, text);
}

PyObject *tb_py_busy_error(const char *what) {
  return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT,
                         "%s: another thread is using it (a prepare, validate or synchronize in progress); close it "
                         "after that call returns",
                         what);
}

tb_backend *tb_py_cpu_backend(void) {
  if (!cpu_backend) {
    tb_status st = tb_backend_create("cpu", &cpu_backend);
    if (st != TB_OK) {
      tb_py_raise(st);
      return NULL;
    }
  }
  return cpu_backend;
}

PyObject *tb_py_json_result(tb_status status, char **json) {
  if (status != TB_OK) return tb_py_raise(status);
  PyObject *s = PyUnicode_FromString(*json);
  tb_free(*json);
  *json = NULL;
  return s;
}

int tb_py_parse_dtype(PyObject *name, tb_dtype *out) {
  const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (!s) {
    if (!PyErr_Occurred()) tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "dtype: expected a name such as 'f32', got a %s", Py_TYPE(name)->tp_name);
    return -1;
  }
  tb_status st = tb_dtype_parse(s, out);
  if (st != TB_OK) {
    tb_py_raise(st);
    return -1;
  }
  return 0;
}

static PyObject *py_version(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(tb_version());
}

static PyObject *py_live_objects(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue("{snsnsnsnsn}", "backends", live[TB_PY_LIVE_BACKEND], "tensors", live[TB_PY_LIVE_TENSOR],
                       "models", live[TB_PY_LIVE_MODEL], "prepared", live[TB_PY_LIVE_PREPARED], "imports",
                       live[TB_PY_LIVE_IMPORT]);
}

static PyObject *py_status_name(PyObject *self, PyObject *arg) {
  (void)self;
  long v = PyLong_AsLong(arg);
  if (v == -1 && PyErr_Occurred()) return NULL;
  return PyUnicode_FromString(tb_status_str((tb_status)v));
}

static PyObject *py_dtype_size(PyObject *self, PyObject *arg) {
  (void)self;
  tb_dtype d;
  if (tb_py_parse_dtype(arg, &d) < 0) return NULL;
  return PyLong_FromSize_t(tb_dtype_size(d));
}

static PyMethodDef core_methods[] = {
    {"version", py_version, METH_NOARGS, "The C library's version."},
    {"live_objects", py_live_objects, METH_NOARGS, "Counts of live handles made by this module."},
    {"status_name", py_status_name, METH_O, "The name of a status code."},
    {"dtype_size", py_dtype_size, METH_O, "Bytes per element of a dtype name."},
    {NULL, NULL, 0, NULL}};

static void module_free(void *unused) {
  (void)unused;
  tb_backend_destroy(cpu_backend);
  cpu_backend = NULL;
  Py_CLEAR(error_classes);
}

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "tensorbridge._tb",
                                        "The C layer of tensorbridge (use the tensorbridge package).", -1,
                                        NULL, NULL, NULL, NULL, module_free};

static int add_methods(PyObject *m, PyMethodDef *defs) {
  PyObject *name = PyModule_GetNameObject(m);
  if (!name) return -1;
  for (PyMethodDef *d = defs; d->ml_name; d++) {
    PyObject *f = PyCFunction_NewEx(d, NULL, name);
    if (!f || PyModule_AddObject(m, d->ml_name, f) < 0) {
      Py_XDECREF(f);
      Py_DECREF(name);
      return -1;
    }
  }
  Py_DECREF(name);
  return 0;
}

static int add_type(PyObject *m, PyTypeObject *type, const char *name) {
  if (PyType_Ready(type) < 0) return -1;
  Py_INCREF(type);
  if (PyModule_AddObject(m, name, (PyObject *)type) < 0) {
    Py_DECREF(type);
    return -1;
  }
  return 0;
}

PyMODINIT_FUNC PyInit__tb(void) {
  PyObject *errors = PyImport_ImportModule("tensorbridge._errors");
  if (!errors) return NULL;
  error_classes = PyObject_GetAttrString(errors, "_BY_STATUS");
  Py_DECREF(errors);
  if (!error_classes) return NULL;
  if (!PyTuple_Check(error_classes)) {
    Py_CLEAR(error_classes);
    PyErr_SetString(PyExc_ImportError, "tensorbridge._errors._BY_STATUS must be a tuple");
    return NULL;
  }
  if (tb_py_numpy_init() < 0) {
    Py_CLEAR(error_classes);
    return NULL;
  }
  PyObject *m = PyModule_Create(&module_def);
  if (!m) return NULL;
  if (add_methods(m, core_methods) < 0 || add_methods(m, tb_py_device_methods) < 0 ||
      add_methods(m, tb_py_checkpoint_methods) < 0 || add_methods(m, tb_py_validate_methods) < 0 ||
      add_methods(m, tb_py_table_methods) < 0 || add_type(m, &tb_py_event_type, "Event") < 0 ||
      add_type(m, &tb_py_backend_type, "Backend") < 0 || add_type(m, &tb_py_tensor_type, "Tensor") < 0 ||
      add_type(m, &tb_py_model_type, "Model") < 0 || add_type(m, &tb_py_prepared_type, "Prepared") < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
