/* Module functions over discovery and selection: the device list and the selection as JSON, the AMP
 * policy of a device and the ONNX Runtime providers of a request. */
#include "tb_py.h"

static PyObject *py_devices_json(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  tb_device_list *list = NULL;
  tb_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tb_discover(NULL, &list);
  Py_END_ALLOW_THREADS
  if (st != TB_OK) return tb_py_raise(st);
  char *json = NULL;
  st = tb_device_list_to_json(list, &json);
  tb_device_list_destroy(list);
  return tb_py_json_result(st, &json);
}

/* Discover, select `request` (None: TB_BACKEND or auto); the caller destroys both. */
static tb_status select_request(PyObject *request, tb_device_list **list, tb_selection **sel) {
  const char *req = NULL;
  if (request != Py_None) {
    if (!PyUnicode_Check(request)) {
      tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "request: expected a string such as 'auto', 'cpu' or 'cuda:1', got a %s",
                      Py_TYPE(request)->tp_name);
      return TB_ERR_INVALID_ARGUMENT;
    }
    req = PyUnicode_AsUTF8(request);
    if (!req) return TB_ERR_INVALID_ARGUMENT;
  }
  tb_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tb_discover(NULL, list);
  if (st == TB_OK) st = tb_select(*list, req, sel);
  Py_END_ALLOW_THREADS
  if (st != TB_OK) tb_py_raise(st);
  return st;
}

static PyObject *py_select_json(PyObject *self, PyObject *request) {
  (void)self;
  tb_device_list *list = NULL;
  tb_selection *sel = NULL;
  PyObject *out = NULL;
  if (select_request(request, &list, &sel) == TB_OK) {
    char *json = NULL;
    out = tb_py_json_result(tb_selection_to_json(sel, &json), &json);
  }
  tb_selection_destroy(sel);
  tb_device_list_destroy(list);
  return out;
}

static PyObject *py_amp_policy(PyObject *self, PyObject *request) {
  (void)self;
  tb_device_list *list = NULL;
  tb_selection *sel = NULL;
  PyObject *out = NULL;
  if (select_request(request, &list, &sel) == TB_OK) {
    const tb_device_info *dev = tb_selection_device(sel);
    tb_amp_policy policy = {.size = sizeof policy};
    tb_status st = tb_amp_policy_for_device(dev, &policy);
    if (st != TB_OK)
      tb_py_raise(st);
    else
      out = Py_BuildValue("{sssNsssNss}", "device", dev->device, "enabled", PyBool_FromLong(policy.enabled), "dtype",
                          tb_dtype_name(policy.dtype), "use_grad_scaler", PyBool_FromLong(policy.use_grad_scaler),
                          "reason", policy.reason);
  }
  tb_selection_destroy(sel);
  tb_device_list_destroy(list);
  return out;
}

static PyObject *py_ort_providers(PyObject *self, PyObject *args) {
  (void)self;
  const char *request;
  PyObject *available;
  if (!PyArg_ParseTuple(args, "sO", &request, &available)) return NULL;
  PyObject *seq = PySequence_Fast(available, "available: expected a list of provider names");
  if (!seq) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  const char **names = PyMem_Calloc((size_t)n + 1, sizeof *names);
  PyObject *out = NULL;
  if (!names) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    names[i] = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
    if (!names[i]) {
      if (!PyErr_Occurred())
        tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "available[%zd]: expected a provider name (str), got a %s", i,
                        Py_TYPE(item)->tp_name);
      goto done;
    }
  }
  const char *providers[8];
  size_t count = 0;
  tb_status st = tb_ort_providers(request, names, (size_t)n, providers, 8, &count);
  if (st != TB_OK) {
    tb_py_raise(st);
    goto done;
  }
  out = PyList_New((Py_ssize_t)count);
  for (size_t i = 0; out && i < count; i++) {
    PyObject *s = PyUnicode_FromString(providers[i]);
    if (!s) {
      Py_CLEAR(out);
      break;
    }
    PyList_SET_ITEM(out, (Py_ssize_t)i, s);
  }
done:
  PyMem_Free(names);
  Py_DECREF(seq);
  return out;
}

PyMethodDef tb_py_device_methods[] = {
    {"devices_json", py_devices_json, METH_NOARGS, "Discovery as tb_device_list_to_json writes it."},
    {"select_json", py_select_json, METH_O, "tb_select of a request (None: TB_BACKEND or auto) as JSON."},
    {"amp_policy", py_amp_policy, METH_O, "The AMP policy of the device a request selects, as a dict."},
    {"ort_providers", py_ort_providers, METH_VARARGS, "tb_ort_providers(request, available) as a list."},
    {NULL, NULL, 0, NULL}};
