/* Module functions over validation: tb_validate and tb_validate_replay, reports as JSON. */
#include <stdlib.h>
#include "tb_py.h"

/* The str items of a sequence (None: zero items) as UTF-8 pointers kept alive by *keep. */
static int str_list(PyObject *obj, const char *what, const char ***out, size_t *n, PyObject **keep) {
  *out = NULL;
  *n = 0;
  *keep = NULL;
  if (obj == Py_None) return 0;
  *keep = PySequence_Fast(obj, what);
  if (!*keep) return -1;
  *n = (size_t)PySequence_Fast_GET_SIZE(*keep);
  *out = calloc(*n + 1, sizeof **out);
  if (!*out) {
    PyErr_NoMemory();
    return -1;
  }
  for (size_t i = 0; i < *n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(*keep, (Py_ssize_t)i);
    (*out)[i] = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
    if (!(*out)[i]) {
      if (!PyErr_Occurred()) tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "%s: item %zu is a %s, expected str", what, i, Py_TYPE(item)->tp_name);
      return -1;
    }
  }
  return 0;
}

static PyObject *py_validate(PyObject *self, PyObject *args, PyObject *kwds) {
  (void)self;
  static char *kwlist[] = {"model", "backends", "levels", "precision", "inputs", "seed", "dims", "localize", "rtol", "atol", NULL};
  PyObject *model_obj, *backends_obj = Py_None, *levels_obj = Py_None, *inputs_obj = Py_None, *dims_obj = Py_None;
  PyObject *rtol_obj = Py_None, *atol_obj = Py_None;
  const char *precision = "auto";
  unsigned long long seed = 0;
  int localize = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!|OOsOKOpOO", kwlist, &tb_py_model_type, &model_obj, &backends_obj,
                                   &levels_obj, &precision, &inputs_obj, &seed, &dims_obj, &localize, &rtol_obj, &atol_obj))
    return NULL;
  tb_model *model = ((tb_py_model *)model_obj)->model;
  if (!model) return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "model: this Model was closed; load it again with tensorbridge.load");
  tb_validate_options opt = {.size = sizeof opt, .seed = seed, .localize = localize != 0};
  PyObject *keep_backends = NULL, *keep_levels = NULL, *keep_inputs = NULL, *keep_dims = NULL, *out = NULL;
  const char **backends = NULL, **level_names = NULL, **input_names = NULL, **dim_names = NULL;
  tb_opt_level *levels = NULL;
  tb_tensor **inputs = NULL;
  int64_t *dim_values = NULL;
  size_t nb = 0, nl = 0, ni = 0, nd = 0, imported = 0;
  tb_status st = tb_precision_parse(precision, &opt.precision);
  if (st != TB_OK) {
    tb_py_raise(st);
    goto done;
  }
  if (str_list(backends_obj, "backends", &backends, &nb, &keep_backends) < 0 ||
      str_list(levels_obj, "levels", &level_names, &nl, &keep_levels) < 0)
    goto done;
  levels = calloc(nl + 1, sizeof *levels);
  if (!levels) goto nomem;
  for (size_t i = 0; i < nl; i++) {
    st = tb_opt_level_parse(level_names[i], &levels[i]);
    if (st != TB_OK) {
      tb_py_raise(st);
      goto done;
    }
  }
  if (inputs_obj != Py_None) {
    if (!PyDict_Check(inputs_obj)) {
      tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "inputs: expected a dict {name: array}, got a %s", Py_TYPE(inputs_obj)->tp_name);
      goto done;
    }
    PyObject *keys = PyDict_Keys(inputs_obj);
    int bad = !keys || str_list(keys, "inputs", &input_names, &ni, &keep_inputs) < 0;
    Py_XDECREF(keys);
    if (bad) goto done;
    inputs = calloc(ni + 1, sizeof *inputs);
    if (!inputs) goto nomem;
    for (; imported < ni; imported++) {
      char what[160];
      snprintf(what, sizeof what, "input '%s'", input_names[imported]);
      if (!(inputs[imported] = tb_py_tensor_import(PyDict_GetItemString(inputs_obj, input_names[imported]), what))) goto done;
    }
  }
  if (dims_obj != Py_None) {
    if (!PyDict_Check(dims_obj)) {
      tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "dims: expected {name: size}, e.g. {'batch': 2}");
      goto done;
    }
    PyObject *keys = PyDict_Keys(dims_obj);
    int bad = !keys || str_list(keys, "dims", &dim_names, &nd, &keep_dims) < 0;
    Py_XDECREF(keys);
    if (bad) goto done;
    dim_values = calloc(nd + 1, sizeof *dim_values);
    if (!dim_values) goto nomem;
    for (size_t i = 0; i < nd; i++) {
      dim_values[i] = PyLong_AsLongLong(PyDict_GetItemString(dims_obj, dim_names[i]));
      if (dim_values[i] == -1 && PyErr_Occurred()) goto done;
    }
  }
  if ((rtol_obj == Py_None) != (atol_obj == Py_None)) {
    tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "rtol/atol: give both to override the tolerance table, or neither");
    goto done;
  }
  if (rtol_obj != Py_None) {
    opt.override_tolerance = true;
    opt.rtol = PyFloat_AsDouble(rtol_obj);
    opt.atol = PyFloat_AsDouble(atol_obj);
    if (PyErr_Occurred()) goto done;
  }
  opt.backend_count = nb;
  opt.backends = backends;
  opt.level_count = nl;
  opt.levels = nl ? levels : NULL;
  opt.input_count = ni;
  opt.input_names = input_names;
  opt.inputs = inputs;
  opt.dim_count = nd;
  opt.dim_names = dim_names;
  opt.dim_values = dim_values;
  tb_validation_report *report = NULL;
  ((tb_py_model *)model_obj)->busy++;
  Py_BEGIN_ALLOW_THREADS
  st = tb_validate(model, &opt, &report);
  Py_END_ALLOW_THREADS
  ((tb_py_model *)model_obj)->busy--;
  if (st != TB_OK) {
    tb_py_raise(st);
    goto done;
  }
  char *json = NULL;
  out = tb_py_json_result(tb_validation_report_to_json(report, &json), &json);
  tb_validation_report_destroy(report);
  goto done;
nomem:
  PyErr_NoMemory();
done:
  for (size_t i = 0; inputs && i < imported; i++) tb_tensor_destroy(inputs[i]);
  free(inputs);
  free(levels);
  free(dim_values);
  free(backends);
  free(level_names);
  free(input_names);
  free(dim_names);
  Py_XDECREF(keep_backends);
  Py_XDECREF(keep_levels);
  Py_XDECREF(keep_inputs);
  Py_XDECREF(keep_dims);
  return out;
}

static PyObject *py_validate_replay(PyObject *self, PyObject *args) {
  (void)self;
  const char *record, *model_path = NULL, *backend = NULL;
  if (!PyArg_ParseTuple(args, "s|zz", &record, &model_path, &backend)) return NULL;
  tb_validation_report *report = NULL;
  tb_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tb_validate_replay(record, model_path, backend, &report);
  Py_END_ALLOW_THREADS
  if (st != TB_OK) return tb_py_raise(st);
  char *json = NULL;
  PyObject *out = tb_py_json_result(tb_validation_report_to_json(report, &json), &json);
  tb_validation_report_destroy(report);
  return out;
}

PyMethodDef tb_py_validate_methods[] = {
    {"validate", (PyCFunction)(void (*)(void))py_validate, METH_VARARGS | METH_KEYWORDS, "tb_validate; the report as JSON."},
    {"validate_replay", py_validate_replay, METH_VARARGS, "tb_validate_replay(record, model_path, backend) as JSON."},
    {NULL, NULL, 0, NULL}};
