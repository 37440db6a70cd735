/* Module functions over safetensors files: read every tensor (with the metadata) and write a set. */
#include <stdlib.h>
#include "tb_py.h"

/* safetensors_load(path | bytes) -> ([(name, Tensor)], {key: value}); the tensors are copies on the CPU. */
static PyObject *py_safetensors_load(PyObject *self, PyObject *source) {
  (void)self;
  tb_backend *cpu = tb_py_cpu_backend();
  if (!cpu) return NULL;
  tb_safetensors *st = NULL;
  tb_status s;
  Py_buffer data = {0};
  PyObject *path = NULL;
  if (PyBytes_Check(source) || PyByteArray_Check(source) || PyMemoryView_Check(source)) {
    if (PyObject_GetBuffer(source, &data, PyBUF_SIMPLE) < 0) return NULL;
    s = tb_safetensors_open_memory(data.buf, (size_t)data.len, "<bytes>", &st);
  } else {
    if (!PyUnicode_FSConverter(source, &path)) return NULL;
    s = tb_safetensors_open(PyBytes_AS_STRING(path), &st);
  }
  Py_XDECREF(path);
  PyObject *tensors = NULL, *meta = NULL, *out = NULL;
  if (s != TB_OK) {
    tb_py_raise(s);
    goto done;
  }
  size_t n = tb_safetensors_count(st), nm = tb_safetensors_metadata_count(st);
  tensors = PyList_New((Py_ssize_t)n);
  meta = PyDict_New();
  if (!tensors || !meta) goto done;
  for (size_t i = 0; i < n; i++) {
    const char *name = tb_safetensors_name(st, i);
    tb_tensor *t = NULL;
    s = tb_safetensors_read(st, name, cpu, &t);
    if (s != TB_OK) {
      tb_py_raise(s);
      goto done;
    }
    PyObject *item = Py_BuildValue("(sN)", name, tb_py_tensor_wrap(t));
    if (!item) goto done;
    PyList_SET_ITEM(tensors, (Py_ssize_t)i, item);
  }
  for (size_t i = 0; i < nm; i++) {
    const char *k = NULL, *v = NULL;
    s = tb_safetensors_metadata_at(st, i, &k, &v);
    if (s != TB_OK) {
      tb_py_raise(s);
      goto done;
    }
    PyObject *value = PyUnicode_FromString(v);
    if (!value || PyDict_SetItemString(meta, k, value) < 0) {
      Py_XDECREF(value);
      goto done;
    }
    Py_DECREF(value);
  }
  out = PyTuple_Pack(2, tensors, meta);
done:
  Py_XDECREF(tensors);
  Py_XDECREF(meta);
  tb_safetensors_close(st);
  if (data.obj) PyBuffer_Release(&data);
  return out;
}

/* safetensors_save(path, [(name, array)], {key: value} | None) */
static PyObject *py_safetensors_save(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *path_obj, *items, *meta_obj, *path = NULL;
  if (!PyArg_ParseTuple(args, "OOO", &path_obj, &items, &meta_obj)) return NULL;
  PyObject *seq = PySequence_Fast(items, "tensors: expected a sequence of (name, array) pairs");
  if (!seq) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), nm = meta_obj == Py_None ? 0 : PyDict_Size(meta_obj);
  const char **names = calloc((size_t)n + 1, sizeof *names);
  tb_tensor **tensors = calloc((size_t)n + 1, sizeof *tensors);
  const char **keys = calloc((size_t)nm + 1, sizeof *keys), **values = calloc((size_t)nm + 1, sizeof *values);
  PyObject *out = NULL;
  Py_ssize_t imported = 0;
  if (nm < 0) goto done;
  if (!names || !tensors || !keys || !values) {
    PyErr_NoMemory();
    goto done;
  }
  for (; imported < n; imported++) {
    PyObject *pair = PySequence_Fast_GET_ITEM(seq, imported), *name_obj, *value;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyUnicode_Check(name_obj = PyTuple_GET_ITEM(pair, 0))) {
      tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "tensors[%zd]: expected a (name, array) pair with a str name", imported);
      goto done;
    }
    value = PyTuple_GET_ITEM(pair, 1);
    names[imported] = PyUnicode_AsUTF8(name_obj);
    char what[160];
    snprintf(what, sizeof what, "tensor '%s'", names[imported] ? names[imported] : "?");
    if (!names[imported] || !(tensors[imported] = tb_py_tensor_import(value, what))) goto done;
  }
  Py_ssize_t pos = 0, i = 0;
  PyObject *k, *v;
  while (nm && PyDict_Next(meta_obj, &pos, &k, &v)) {
    keys[i] = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
    values[i] = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    if (!keys[i] || !values[i]) {
      if (!PyErr_Occurred()) tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "metadata: keys and values must be str (safetensors stores text)");
      goto done;
    }
    i++;
  }
  if (!PyUnicode_FSConverter(path_obj, &path)) goto done;
  tb_status st = tb_safetensors_write(PyBytes_AS_STRING(path), (size_t)n, names, (const tb_tensor *const *)tensors,
                                      (size_t)nm, keys, values);
  if (st != TB_OK)
    tb_py_raise(st);
  else
    out = Py_NewRef(Py_None);
done:
  for (Py_ssize_t j = 0; tensors && j < imported; j++) tb_tensor_destroy(tensors[j]);
  free(names);
  free(tensors);
  free(keys);
  free(values);
  Py_XDECREF(path);
  Py_DECREF(seq);
  return out;
}

PyMethodDef tb_py_checkpoint_methods[] = {
    {"safetensors_load", py_safetensors_load, METH_O, "safetensors_load(path | bytes) -> (tensors, metadata)."},
    {"safetensors_save", py_safetensors_save, METH_VARARGS, "safetensors_save(path, [(name, array)], metadata)."},
    {NULL, NULL, 0, NULL}};
