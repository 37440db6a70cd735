/* Module functions over the library's tables and small computations: the capability table, the tolerance
 * table, preset configurations, tensor comparison and dtype conversion. */
#include "tb_py.h"

static PyObject *names_of_bits(uint64_t bits, int count, const char *(*name)(int)) {
  PyObject *list = PyList_New(0);
  for (int i = 0; list && i < count; i++) {
    if (!(bits & ((uint64_t)1 << i))) continue;
    PyObject *s = PyUnicode_FromString(name(i));
    if (!s || PyList_Append(list, s) < 0) Py_CLEAR(list);
    Py_XDECREF(s);
  }
  return list;
}

static const char *dtype_name(int d) { return tb_dtype_name((tb_dtype)d); }
static const char *feature_name(int f) { return tb_feature_name((tb_feature)f); }

static PyObject *py_capabilities(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  size_t n = tb_capability_table_count();
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    tb_capability_row row = {.size = sizeof row};
    tb_status st = tb_capability_table_get(i, &row);
    if (st != TB_OK) {
      Py_DECREF(list);
      return tb_py_raise(st);
    }
    PyObject *item = Py_BuildValue("{sssssssNsNssssss}", "vendor", row.vendor, "key", row.key, "architecture",
                                   row.architecture, "dtypes", names_of_bits(row.dtypes, TB_DTYPE_COUNT, dtype_name),
                                   "features", names_of_bits(row.features, TB_FEATURE_COUNT, feature_name),
                                   "matrix_unit", row.matrix_unit, "memory_type", row.memory_type, "source", row.source);
    if (!item) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject *tolerance_dict(const tb_tolerance *t) {
  const char *backend = t->backend == TB_TOLERANCE_ANY ? "any" : tb_backend_name((tb_backend_kind)t->backend);
  const char *precision = t->precision == TB_TOLERANCE_ANY ? "any" : tb_precision_name((tb_precision)t->precision);
  const char *level = t->level == TB_TOLERANCE_ANY ? "any" : tb_opt_level_name((tb_opt_level)t->level);
  return Py_BuildValue("{sssssssdsdssss}", "backend", backend, "precision", precision, "level", level, "rtol", t->rtol,
                       "atol", t->atol, "source", t->source, "note", t->note);
}

static PyObject *py_tolerance_table(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  size_t n = tb_tolerance_count();
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    PyObject *item = tolerance_dict(tb_tolerance_entry(i));
    if (!item) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject *py_tolerance(PyObject *self, PyObject *args) {
  (void)self;
  const char *backend, *precision, *level;
  if (!PyArg_ParseTuple(args, "sss", &backend, &precision, &level)) return NULL;
  tb_backend_kind kind;
  tb_precision p;
  tb_opt_level l;
  bool is_auto = false;
  tb_status st = tb_backend_parse(backend, &kind, &is_auto);
  if (st == TB_OK && is_auto)
    return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "backend: 'auto' is not a backend kind here; name one (cpu, cuda, opencl, ...)");
  if (st == TB_OK) st = tb_precision_parse(precision, &p);
  if (st == TB_OK) st = tb_opt_level_parse(level, &l);
  tb_tolerance t = {.size = sizeof t};
  if (st == TB_OK) st = tb_tolerance_lookup(kind, p, l, &t);
  if (st != TB_OK) return tb_py_raise(st);
  return tolerance_dict(&t);
}

static PyObject *py_config_for_preset(PyObject *self, PyObject *args) {
  (void)self;
  const char *preset_name, *request = NULL;
  if (!PyArg_ParseTuple(args, "sz", &preset_name, &request)) return NULL;
  tb_preset preset;
  tb_status st = tb_preset_parse(preset_name, &preset);
  if (st != TB_OK) return tb_py_raise(st);
  tb_device_list *list = NULL;
  tb_selection *sel = NULL;
  PyObject *out = NULL;
  Py_BEGIN_ALLOW_THREADS
  st = tb_discover(NULL, &list);
  if (st == TB_OK) st = tb_select(list, request, &sel);
  Py_END_ALLOW_THREADS
  tb_config config = {.size = sizeof config};
  if (st == TB_OK) st = tb_config_for_preset(preset, tb_selection_device(sel), &config);
  if (st != TB_OK)
    tb_py_raise(st);
  else
    out = Py_BuildValue("{sssssssssNsNsdss}", "device", tb_selection_device(sel)->device, "preset",
                        tb_preset_name(config.preset), "level", tb_opt_level_name(config.level), "precision",
                        tb_dtype_name(config.precision), "deterministic", PyBool_FromLong(config.deterministic),
                        "validate", PyBool_FromLong(config.validate), "memory_fraction", config.memory_fraction,
                        "rationale", config.rationale);
  tb_selection_destroy(sel);
  tb_device_list_destroy(list);
  return out;
}

static PyObject *py_compare(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *got_obj, *ref_obj;
  double rtol, atol;
  if (!PyArg_ParseTuple(args, "OOdd", &got_obj, &ref_obj, &rtol, &atol)) return NULL;
  tb_tensor *got = tb_py_tensor_import(got_obj, "got");
  if (!got) return NULL;
  tb_tensor *ref = tb_py_tensor_import(ref_obj, "ref");
  if (!ref) {
    tb_tensor_destroy(got);
    return NULL;
  }
  tb_output_metrics m = {.size = sizeof m};
  tb_status st = tb_compare_tensors(got, ref, rtol, atol, &m);
  tb_tensor_destroy(got);
  tb_tensor_destroy(ref);
  if (st != TB_OK) return tb_py_raise(st);
  return Py_BuildValue("{sssLsNsdsdsdsKsLsLsLsLsLsN}", "dtype", tb_dtype_name(m.dtype), "numel", (long long)m.numel,
                       "shape_matches", PyBool_FromLong(m.shape_matches), "max_abs_error", m.max_abs_error,
                       "max_rel_error", m.max_rel_error, "cosine", m.cosine, "max_ulp", (unsigned long long)m.max_ulp,
                       "mismatches", (long long)m.mismatches, "nan_got", (long long)m.nan_got, "inf_got",
                       (long long)m.inf_got, "nan_ref", (long long)m.nan_ref, "inf_ref", (long long)m.inf_ref, "passed",
                       PyBool_FromLong(m.passed));
}

/* convert(value, dtype, saturate) -> a new contiguous CPU Tensor with tb_convert's rules. */
static PyObject *py_convert(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *value, *dtype_name;
  int saturate = 1;
  if (!PyArg_ParseTuple(args, "OO|p", &value, &dtype_name, &saturate)) return NULL;
  tb_dtype dst_dtype;
  if (tb_py_parse_dtype(dtype_name, &dst_dtype) < 0) return NULL;
  tb_backend *cpu = tb_py_cpu_backend();
  tb_tensor *src = cpu ? tb_py_tensor_import(value, "value") : NULL;
  if (!src) return NULL;
  tb_tensor *packed = NULL, *dst = NULL;
  tb_status st = tb_tensor_create(cpu, tb_tensor_dtype(src), tb_tensor_ndim(src), tb_tensor_shape(src), &packed);
  if (st == TB_OK) st = tb_tensor_copy(packed, src); /* any backend, any strides -> packed host memory */
  if (st == TB_OK) st = tb_tensor_create(cpu, dst_dtype, tb_tensor_ndim(src), tb_tensor_shape(src), &dst);
  if (st == TB_OK)
    st = tb_convert(tb_tensor_dtype(src), tb_tensor_host_data(packed), dst_dtype, tb_tensor_host_data(dst),
                    (size_t)tb_tensor_numel(src), saturate != 0);
  tb_tensor_destroy(src);
  tb_tensor_destroy(packed);
  if (st != TB_OK) {
    tb_tensor_destroy(dst);
    return tb_py_raise(st);
  }
  return tb_py_tensor_wrap(dst);
}

PyMethodDef tb_py_table_methods[] = {
    {"capabilities", py_capabilities, METH_NOARGS, "The capability table as a list of dicts."},
    {"tolerance_table", py_tolerance_table, METH_NOARGS, "The validation tolerance table as a list of dicts."},
    {"tolerance", py_tolerance, METH_VARARGS, "tolerance(backend, precision, level): tb_tolerance_lookup."},
    {"config_for_preset", py_config_for_preset, METH_VARARGS, "config_for_preset(preset, request): tb_config_for_preset."},
    {"compare", py_compare, METH_VARARGS, "compare(got, ref, rtol, atol): tb_compare_tensors as a dict."},
    {"convert", py_convert, METH_VARARGS, "convert(value, dtype, saturate=True): tb_convert into a new CPU Tensor."},
    {NULL, NULL, 0, NULL}};
