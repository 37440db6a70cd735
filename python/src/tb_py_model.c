/* tensorbridge._tb.Model and Prepared: loading, inspection, preparation, and runs with the GIL released. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tb_py.h"

/* ---- Model -------------------------------------------------------------------------------------- */

static PyObject *model_wrap(tb_model *model) {
  tb_py_model *self = PyObject_New(tb_py_model, &tb_py_model_type);
  if (!self) {
    tb_model_destroy(model);
    return NULL;
  }
  self->model = model;
  self->busy = 0;
  tb_py_live_add(TB_PY_LIVE_MODEL, 1);
  return (PyObject *)self;
}

static PyObject *model_load(PyTypeObject *type, PyObject *path_obj) {
  (void)type;
  PyObject *path = NULL;
  if (!PyUnicode_FSConverter(path_obj, &path)) return NULL;
  tb_model *model = NULL;
  tb_status st;
  const char *p = PyBytes_AS_STRING(path);
  Py_BEGIN_ALLOW_THREADS
  st = tb_model_load(p, &model);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st != TB_OK) return tb_py_raise(st);
  return model_wrap(model);
}

static PyObject *model_load_bytes(PyTypeObject *type, PyObject *args) {
  (void)type;
  Py_buffer data;
  const char *base_dir = NULL;
  if (!PyArg_ParseTuple(args, "y*|z", &data, &base_dir)) return NULL;
  tb_model *model = NULL;
  tb_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tb_model_load_memory(data.buf, (size_t)data.len, base_dir, &model);
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&data);
  if (st != TB_OK) return tb_py_raise(st);
  return model_wrap(model);
}

static void model_close_handle(tb_py_model *self) {
  if (self->model) {
    tb_model_destroy(self->model);
    self->model = NULL;
    tb_py_live_add(TB_PY_LIVE_MODEL, -1);
  }
}

static void model_dealloc(tb_py_model *self) {
  model_close_handle(self);
  PyObject_Free(self);
}

static tb_model *open_model(tb_py_model *self) {
  if (!self->model) tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "model: this Model was closed; load it again with tensorbridge.load");
  return self->model;
}

static PyObject *model_close(tb_py_model *self, PyObject *unused) {
  (void)unused;
  if (self->busy) return tb_py_busy_error("Model.close()");
  model_close_handle(self);
  Py_RETURN_NONE;
}

/* [(name, dtype, dims, has_shape)] with dims entries an int, a symbolic name (str) or None. */
static PyObject *io_list(tb_py_model *self, bool outputs) {
  tb_model *m = open_model(self);
  if (!m) return NULL;
  size_t n = outputs ? tb_model_output_count(m) : tb_model_input_count(m);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    tb_model_io io = {.size = sizeof io};
    tb_status st = outputs ? tb_model_output(m, i, &io) : tb_model_input(m, i, &io);
    if (st != TB_OK) {
      Py_DECREF(list);
      return tb_py_raise(st);
    }
    PyObject *dims = PyTuple_New((Py_ssize_t)io.ndim);
    for (size_t d = 0; dims && d < io.ndim; d++) {
      PyObject *v;
      if (io.dims[d] >= 0)
        v = PyLong_FromLongLong(io.dims[d]);
      else if (io.dim_names[d] && io.dim_names[d][0])
        v = PyUnicode_FromString(io.dim_names[d]);
      else
        v = Py_NewRef(Py_None);
      if (!v) {
        Py_CLEAR(dims);
        break;
      }
      PyTuple_SET_ITEM(dims, (Py_ssize_t)d, v);
    }
    PyObject *item = dims ? Py_BuildValue("(ssNN)", io.name, tb_dtype_name(io.dtype), dims, PyBool_FromLong(io.has_shape)) : NULL;
    if (!item) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject *model_inputs(tb_py_model *self, PyObject *unused) {
  (void)unused;
  return io_list(self, false);
}

static PyObject *model_outputs(tb_py_model *self, PyObject *unused) {
  (void)unused;
  return io_list(self, true);
}

static PyObject *model_property(tb_py_model *self, PyObject *key) {
  tb_model *m = open_model(self);
  const char *k = m ? PyUnicode_AsUTF8(key) : NULL;
  if (!k) return NULL;
  const char *v = tb_model_property(m, k);
  if (!v) Py_RETURN_NONE;
  return PyUnicode_FromString(v);
}

static PyObject *model_sha256(tb_py_model *self, PyObject *unused) {
  (void)unused;
  tb_model *m = open_model(self);
  return m ? PyUnicode_FromString(tb_model_sha256(m)) : NULL;
}

static PyObject *model_export_weights(tb_py_model *self, PyObject *path_obj) {
  tb_model *m = open_model(self);
  PyObject *path = NULL;
  if (!m || !PyUnicode_FSConverter(path_obj, &path)) return NULL;
  tb_status st = tb_model_export_weights(m, PyBytes_AS_STRING(path));
  Py_DECREF(path);
  if (st != TB_OK) return tb_py_raise(st);
  Py_RETURN_NONE;
}

static PyObject *model_override_weights(tb_py_model *self, PyObject *args) {
  PyObject *path_obj, *path = NULL;
  int allow_narrowing = 0;
  if (!PyArg_ParseTuple(args, "O|p", &path_obj, &allow_narrowing)) return NULL;
  tb_model *m = open_model(self);
  if (!m || !PyUnicode_FSConverter(path_obj, &path)) return NULL;
  size_t replaced = 0;
  tb_status st = tb_model_override_weights(m, PyBytes_AS_STRING(path), allow_narrowing != 0, &replaced);
  Py_DECREF(path);
  if (st != TB_OK) return tb_py_raise(st);
  return PyLong_FromSize_t(replaced);
}

static void free_names(char **names, size_t n) {
  for (size_t i = 0; names && i < n; i++) free(names[i]);
  free(names);
}

static PyObject *prepared_wrap(tb_prepared *prepared, tb_model *model, tb_backend *backend) {
  size_t n = tb_model_output_count(model);
  char **names = calloc(n ? n : 1, sizeof *names);
  PyObject *keys = PyTuple_New((Py_ssize_t)n);
  PyThread_type_lock lock = PyThread_allocate_lock();
  for (size_t i = 0; names && keys && i < n; i++) {
    tb_model_io io = {.size = sizeof io};
    PyObject *key = NULL;
    if (tb_model_output(model, i, &io) == TB_OK && (names[i] = strdup(io.name)) != NULL) key = PyUnicode_FromString(io.name);
    if (!key) {
      Py_CLEAR(keys);
      break;
    }
    PyTuple_SET_ITEM(keys, (Py_ssize_t)i, key);
  }
  tb_py_prepared *self = names && keys && lock ? PyObject_New(tb_py_prepared, &tb_py_prepared_type) : NULL;
  if (!self) {
    tb_prepared_destroy(prepared);
    free_names(names, n);
    Py_XDECREF(keys);
    if (lock) PyThread_free_lock(lock);
    return PyErr_Occurred() ? NULL : PyErr_NoMemory();
  }
  self->prepared = prepared;
  self->backend = backend;
  self->lock = lock;
  self->output_count = n;
  self->output_names = names;
  self->output_keys = keys;
  tb_py_live_add(TB_PY_LIVE_PREPARED, 1);
  return (PyObject *)self;
}

static PyObject *model_prepare(tb_py_model *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"backend", "level", "precision", "threads", "dims", "cpu_fallback", "conv_algo", "device_only", NULL};
  PyObject *backend_obj, *dims = NULL;
  const char *level_name = "O2", *precision_name = "auto", *conv_algo_name = "default";
  int threads = 0, cpu_fallback = 0, device_only = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!|ssiOpsp", kwlist, &tb_py_backend_type, &backend_obj, &level_name,
                                   &precision_name, &threads, &dims, &cpu_fallback, &conv_algo_name, &device_only))
    return NULL;
  if (dims == Py_None) dims = NULL;
  if (dims && !PyDict_Check(dims))
    return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "dims: expected {name: size}, e.g. {'batch': 8}, got a %s", Py_TYPE(dims)->tp_name);
  tb_model *m = open_model(self);
  tb_backend *backend = ((tb_py_backend *)backend_obj)->backend;
  if (!m) return NULL;
  if (!backend) return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "backend: this Backend was closed; create a new tensorbridge.Backend");
  if (threads < 0)
    return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "threads: %d is negative; pass None for the backend's default or a count >= 1", threads);
  tb_prepare_options opt = {.size = sizeof opt, .threads = threads, .cpu_fallback = cpu_fallback != 0, .device_only = device_only != 0};
  tb_status st = tb_opt_level_parse(level_name, &opt.level);
  if (st == TB_OK) st = tb_precision_parse(precision_name, &opt.precision);
  if (st == TB_OK) st = tb_conv_algo_parse(conv_algo_name, &opt.conv_algo);
  if (st != TB_OK) return tb_py_raise(st);
  Py_ssize_t nd = dims ? PyDict_Size(dims) : 0;
  const char *dim_names[64];
  int64_t dim_values[64];
  if (nd > 64) return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "dims: %zd entries, at most 64", nd);
  Py_ssize_t pos = 0, i = 0;
  PyObject *k, *v;
  while (dims && PyDict_Next(dims, &pos, &k, &v)) {
    dim_names[i] = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
    dim_values[i] = PyLong_Check(v) ? PyLong_AsLongLong(v) : -1;
    if (!dim_names[i] || PyErr_Occurred() || !PyLong_Check(v))
      return PyErr_Occurred() ? NULL
                              : tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "dims: expected {name: size} with str names and int sizes, e.g. {'batch': 8}");
    i++;
  }
  opt.dim_count = (size_t)nd;
  opt.dim_names = dim_names;
  opt.dim_values = dim_values;
  tb_prepared *prepared = NULL;
  tb_py_backend *backend_self = (tb_py_backend *)backend_obj;
  self->busy++;
  backend_self->busy++;
  Py_BEGIN_ALLOW_THREADS
  st = tb_model_prepare(m, backend, &opt, &prepared, NULL);
  Py_END_ALLOW_THREADS
  self->busy--;
  backend_self->busy--;
  if (st != TB_OK) return tb_py_raise(st);
  return prepared_wrap(prepared, m, backend);
}

static PyMethodDef model_methods[] = {
    {"load", (PyCFunction)model_load, METH_O | METH_CLASS, "load(path): tb_model_load."},
    {"load_bytes", (PyCFunction)model_load_bytes, METH_VARARGS | METH_CLASS, "load_bytes(data, base_dir=None)."},
    {"close", (PyCFunction)model_close, METH_NOARGS, "Destroy the handle (prepared models stay valid)."},
    {"inputs", (PyCFunction)model_inputs, METH_NOARGS, "[(name, dtype, dims, has_shape)] of the graph inputs."},
    {"outputs", (PyCFunction)model_outputs, METH_NOARGS, "[(name, dtype, dims, has_shape)] of the graph outputs."},
    {"property", (PyCFunction)model_property, METH_O, "tb_model_property (None when unknown)."},
    {"sha256", (PyCFunction)model_sha256, METH_NOARGS, "SHA-256 of the model file."},
    {"export_weights", (PyCFunction)model_export_weights, METH_O, "tb_model_export_weights(path)."},
    {"override_weights", (PyCFunction)model_override_weights, METH_VARARGS, "override_weights(path, allow_narrowing)."},
    {"prepare", (PyCFunction)(void (*)(void))model_prepare, METH_VARARGS | METH_KEYWORDS,
     "prepare(backend, level, precision, threads, dims, cpu_fallback, conv_algo, device_only) -> Prepared."},
    {NULL, NULL, 0, NULL}};

PyTypeObject tb_py_model_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tensorbridge._tb.Model",
    .tp_basicsize = sizeof(tb_py_model),
    .tp_dealloc = (destructor)model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tb_model handle.",
    .tp_methods = model_methods,
};

/* ---- Prepared ----------------------------------------------------------------------------------- */

static void prepared_close_handle(tb_py_prepared *self) {
  if (self->prepared) {
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK); /* a run on another thread finishes first */
    Py_END_ALLOW_THREADS
    tb_prepared_destroy(self->prepared);
    self->prepared = NULL;
    self->backend = NULL;
    PyThread_release_lock(self->lock);
    tb_py_live_add(TB_PY_LIVE_PREPARED, -1);
  }
}

static void prepared_dealloc(tb_py_prepared *self) {
  prepared_close_handle(self);
  free_names(self->output_names, self->output_count);
  Py_XDECREF(self->output_keys);
  if (self->lock) PyThread_free_lock(self->lock);
  PyObject_Free(self);
}

static PyObject *prepared_close(tb_py_prepared *self, PyObject *unused) {
  (void)unused;
  prepared_close_handle(self);
  Py_RETURN_NONE;
}

static PyObject *closed_error(void) {
  return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "prepared model: it was closed; prepare the model again");
}

/* The feeds of one run, imported: names point into the dict's keys, which `keys` keeps alive. */
typedef struct {
  size_t n;
  PyObject **keys;
  const char **names;
  tb_tensor **tensors;
  PyObject *small_keys[8];
  const char *small_names[8];
  tb_tensor *small_tensors[8];
} feeds;

static void feeds_clear(feeds *f) {
  for (size_t i = 0; i < f->n; i++) {
    tb_tensor_destroy(f->tensors[i]);
    Py_XDECREF(f->keys[i]);
  }
  if (f->keys != f->small_keys) {
    PyMem_Free(f->keys);
    PyMem_Free(f->names);
    PyMem_Free(f->tensors);
  }
  f->n = 0;
}

static int feeds_import(feeds *f, PyObject *dict, tb_backend *const *device) {
  f->n = 0;
  f->keys = f->small_keys;
  f->names = f->small_names;
  f->tensors = f->small_tensors;
  if (!PyDict_Check(dict)) {
    tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "inputs: expected a dict {name: array}, got a %s", Py_TYPE(dict)->tp_name);
    return -1;
  }
  Py_ssize_t count = PyDict_GET_SIZE(dict);
  if (count > 8) {
    f->keys = PyMem_Calloc((size_t)count, sizeof *f->keys);
    f->names = PyMem_Calloc((size_t)count, sizeof *f->names);
    f->tensors = PyMem_Calloc((size_t)count, sizeof *f->tensors);
    if (!f->keys || !f->names || !f->tensors) {
      PyMem_Free(f->keys);
      PyMem_Free(f->names);
      PyMem_Free(f->tensors);
      f->keys = f->small_keys;
      PyErr_NoMemory();
      return -1;
    }
  }
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(dict, &pos, &k, &v) && (Py_ssize_t)f->n < count) {
    const char *name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
    if (!name) {
      if (!PyErr_Occurred())
        tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "inputs: a key is a %s; input names are str", Py_TYPE(k)->tp_name);
      feeds_clear(f);
      return -1;
    }
    char what[160];
    snprintf(what, sizeof what, "input '%s'", name);
    tb_tensor *t = tb_py_tensor_import_on(v, what, device, true);
    if (!t) {
      feeds_clear(f);
      return -1;
    }
    f->keys[f->n] = Py_NewRef(k);
    f->names[f->n] = name;
    f->tensors[f->n] = t;
    f->n++;
  }
  return 0;
}

/* Output names requested: NULL (every graph output) or a sequence of str. */
typedef struct {
  size_t n;
  const char **names; /* NULL: the graph outputs */
  PyObject *keys;     /* a tuple or list of str */
} wanted;

static int wanted_parse(tb_py_prepared *self, PyObject *names, wanted *w) {
  if (names == Py_None) {
    w->n = self->output_count;
    w->names = NULL;
    w->keys = Py_NewRef(self->output_keys);
    return 0;
  }
  w->keys = PySequence_Fast(names, "outputs: expected a list of output names");
  if (!w->keys) return -1;
  w->n = (size_t)PySequence_Fast_GET_SIZE(w->keys);
  w->names = PyMem_Calloc(w->n ? w->n : 1, sizeof *w->names);
  if (!w->names) {
    Py_CLEAR(w->keys);
    PyErr_NoMemory();
    return -1;
  }
  for (size_t i = 0; i < w->n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(w->keys, (Py_ssize_t)i);
    w->names[i] = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
    if (!w->names[i]) {
      if (!PyErr_Occurred()) tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "outputs[%zu]: a %s; output names are str", i, Py_TYPE(item)->tp_name);
      PyMem_Free(w->names);
      Py_CLEAR(w->keys);
      return -1;
    }
  }
  return 0;
}

static void wanted_clear(wanted *w) {
  PyMem_Free(w->names);
  Py_CLEAR(w->keys);
}

/* One run with the GIL released and the prepared model's lock held. */
static tb_status run_unlocked(tb_py_prepared *self, const feeds *f, const wanted *w, tb_tensor **outs) {
  tb_status st;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(self->lock, WAIT_LOCK);
  st = self->prepared ? tb_prepared_run(self->prepared, f->n, f->names, f->tensors, w->n, w->names, outs)
                      : TB_ERR_INVALID_ARGUMENT;
  PyThread_release_lock(self->lock);
  Py_END_ALLOW_THREADS
  return st;
}

static PyObject *prepared_run(tb_py_prepared *self, PyObject *args) {
  PyObject *inputs, *names = Py_None;
  int as_numpy = 0;
  if (!PyArg_ParseTuple(args, "O|Op", &inputs, &names, &as_numpy)) return NULL;
  if (!self->prepared) return closed_error();
  feeds f;
  wanted w;
  if (feeds_import(&f, inputs, &self->backend) < 0) return NULL;
  if (wanted_parse(self, names, &w) < 0) {
    feeds_clear(&f);
    return NULL;
  }
  tb_tensor *small_outs[8] = {0}, **outs = w.n > 8 ? PyMem_Calloc(w.n, sizeof *outs) : small_outs;
  PyObject *result = NULL;
  if (!outs) {
    PyErr_NoMemory();
    goto done;
  }
  tb_status st = run_unlocked(self, &f, &w, outs);
  if (st != TB_OK) {
    if (!self->prepared) closed_error(); else tb_py_raise(st);
    goto done;
  }
  result = PyDict_New();
  for (size_t i = 0; i < w.n; i++) {
    PyObject *t = tb_py_tensor_wrap(outs[i]);
    outs[i] = NULL;
    if (t && as_numpy) {
      PyObject *array = tb_py_tensor_numpy(t);
      Py_SETREF(t, array);
    }
    if (!result || !t || PyDict_SetItem(result, PySequence_Fast_GET_ITEM(w.keys, (Py_ssize_t)i), t) < 0) Py_CLEAR(result);
    Py_XDECREF(t);
  }
done:
  for (size_t i = 0; outs && i < w.n; i++) tb_tensor_destroy(outs[i]);
  if (outs != small_outs) PyMem_Free(outs);
  wanted_clear(&w);
  feeds_clear(&f);
  return result;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* time_runs(inputs, warmup, iterations, synchronize): the C API called in a loop on imported inputs, each
 * run timed (and followed by a synchronize of the backend when asked); a list of milliseconds. */
static PyObject *prepared_time_runs(tb_py_prepared *self, PyObject *args) {
  PyObject *inputs, *backend_obj;
  Py_ssize_t warmup, iterations;
  if (!PyArg_ParseTuple(args, "OnnO", &inputs, &warmup, &iterations, &backend_obj)) return NULL;
  if (!self->prepared) return closed_error();
  if (warmup < 0 || iterations < 1)
    return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "warmup %zd / iterations %zd: need warmup >= 0 and iterations >= 1", warmup, iterations);
  tb_backend *sync = NULL;
  if (backend_obj != Py_None) {
    if (!PyObject_TypeCheck(backend_obj, &tb_py_backend_type) || !((tb_py_backend *)backend_obj)->backend)
      return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "synchronize: expected an open Backend or None");
    sync = ((tb_py_backend *)backend_obj)->backend;
  }
  tb_py_backend *sync_obj = sync ? (tb_py_backend *)backend_obj : NULL;
  feeds f;
  wanted w;
  if (feeds_import(&f, inputs, &self->backend) < 0) return NULL;
  if (wanted_parse(self, Py_None, &w) < 0) {
    feeds_clear(&f);
    return NULL;
  }
  double *ms = PyMem_Calloc((size_t)iterations, sizeof *ms);
  tb_tensor **outs = PyMem_Calloc(w.n ? w.n : 1, sizeof *outs);
  PyObject *result = NULL;
  tb_status st = TB_OK;
  if (!ms || !outs) {
    PyErr_NoMemory();
    goto done;
  }
  if (sync_obj) sync_obj->busy++;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(self->lock, WAIT_LOCK);
  for (Py_ssize_t r = 0; st == TB_OK && r < warmup + iterations; r++) {
    double t0 = now_ms();
    st = self->prepared ? tb_prepared_run(self->prepared, f.n, f.names, f.tensors, w.n, NULL, outs) : TB_ERR_INVALID_ARGUMENT;
    if (st == TB_OK && sync) st = tb_backend_synchronize(sync);
    double t1 = now_ms();
    for (size_t i = 0; i < w.n; i++) {
      tb_tensor_destroy(outs[i]);
      outs[i] = NULL;
    }
    if (r >= warmup) ms[r - warmup] = t1 - t0;
  }
  PyThread_release_lock(self->lock);
  Py_END_ALLOW_THREADS
  if (sync_obj) sync_obj->busy--;
  if (st != TB_OK) {
    tb_py_raise(st);
    goto done;
  }
  result = PyList_New(iterations);
  for (Py_ssize_t i = 0; result && i < iterations; i++) {
    PyObject *x = PyFloat_FromDouble(ms[i]);
    if (!x) {
      Py_CLEAR(result);
      break;
    }
    PyList_SET_ITEM(result, i, x);
  }
done:
  PyMem_Free(ms);
  PyMem_Free(outs);
  wanted_clear(&w);
  feeds_clear(&f);
  return result;
}

static PyObject *prepared_result_json(tb_py_prepared *self, PyObject *unused) {
  (void)unused;
  if (!self->prepared) return closed_error();
  char *json = NULL;
  return tb_py_json_result(tb_prepare_result_to_json(tb_prepared_result(self->prepared), &json), &json);
}

static PyObject *prepared_set_profiling(tb_py_prepared *self, PyObject *on) {
  if (!self->prepared) return closed_error();
  int flag = PyObject_IsTrue(on);
  if (flag < 0) return NULL;
  tb_status st;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(self->lock, WAIT_LOCK);
  st = tb_prepared_set_profiling(self->prepared, flag != 0);
  PyThread_release_lock(self->lock);
  Py_END_ALLOW_THREADS
  if (st != TB_OK) return tb_py_raise(st);
  Py_RETURN_NONE;
}

/* [{name, op_type, placement, kernel, runs, total_ms}] per node, in execution order. */
static PyObject *prepared_profile(tb_py_prepared *self, PyObject *unused) {
  (void)unused;
  if (!self->prepared) return closed_error();
  size_t n = 0;
  const tb_node_profile *entries = NULL;
  PyObject *list = NULL;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(self->lock, WAIT_LOCK);
  Py_END_ALLOW_THREADS
  tb_status st = tb_prepared_profile(self->prepared, &n, &entries);
  if (st != TB_OK) {
    tb_py_raise(st);
    goto done;
  }
  list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    const tb_node_profile *e = &entries[i];
    PyObject *item = Py_BuildValue("{sssssssssKsd}", "name", e->name, "op_type", e->op_type, "placement", e->placement,
                                   "kernel", e->kernel, "runs", (unsigned long long)e->runs, "total_ms", e->total_ms);
    if (!item) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
done:
  PyThread_release_lock(self->lock);
  return list;
}

static PyObject *prepared_get_output_names(tb_py_prepared *self, void *unused) {
  (void)unused;
  return Py_NewRef(self->output_keys);
}

static PyMethodDef prepared_methods[] = {
    {"run", (PyCFunction)prepared_run, METH_VARARGS, "run(inputs, outputs=None, as_numpy=False) -> {name: Tensor or numpy.ndarray}."},
    {"time_runs", (PyCFunction)prepared_time_runs, METH_VARARGS, "time_runs(inputs, warmup, iterations, sync_backend)."},
    {"result_json", (PyCFunction)prepared_result_json, METH_NOARGS, "The preparation result as JSON."},
    {"set_profiling", (PyCFunction)prepared_set_profiling, METH_O, "tb_prepared_set_profiling(on)."},
    {"profile", (PyCFunction)prepared_profile, METH_NOARGS, "Time per node since profiling was turned on."},
    {"close", (PyCFunction)prepared_close, METH_NOARGS, "Destroy the handle (waits for a run in progress)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef prepared_getset[] = {
    {"output_names", (getter)prepared_get_output_names, NULL, "The graph outputs' names.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject tb_py_prepared_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tensorbridge._tb.Prepared",
    .tp_basicsize = sizeof(tb_py_prepared),
    .tp_dealloc = (destructor)prepared_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tb_prepared handle.",
    .tp_methods = prepared_methods,
    .tp_getset = prepared_getset,
};
