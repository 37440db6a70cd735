/* tensorbridge._tb.Event: a marker in a backend's stream of work (tb_event), for waiting and timing. */
#include "tb_py.h"

typedef struct {
  PyObject_HEAD
  tb_event *event;
} tb_py_event;

static void event_dealloc(tb_py_event *self) {
  tb_event_destroy(self->event);
  PyObject_Free(self);
}

PyObject *tb_py_event_new(tb_backend *backend) {
  tb_event *event = NULL;
  tb_status st = tb_event_create(backend, &event);
  if (st != TB_OK) return tb_py_raise(st);
  tb_py_event *self = PyObject_New(tb_py_event, &tb_py_event_type);
  if (!self) {
    tb_event_destroy(event);
    return NULL;
  }
  self->event = event;
  return (PyObject *)self;
}

static PyObject *event_record(tb_py_event *self, PyObject *unused) {
  (void)unused;
  tb_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tb_event_record(self->event);
  Py_END_ALLOW_THREADS
  if (st != TB_OK) return tb_py_raise(st);
  Py_RETURN_NONE;
}

static PyObject *event_synchronize(tb_py_event *self, PyObject *unused) {
  (void)unused;
  tb_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tb_event_synchronize(self->event);
  Py_END_ALLOW_THREADS
  if (st != TB_OK) return tb_py_raise(st);
  Py_RETURN_NONE;
}

static PyObject *event_query(tb_py_event *self, PyObject *unused) {
  (void)unused;
  bool done = false;
  tb_status st = tb_event_query(self->event, &done);
  if (st != TB_OK) return tb_py_raise(st);
  return PyBool_FromLong(done);
}

static PyObject *event_elapsed_ms(tb_py_event *self, PyObject *end) {
  if (!PyObject_TypeCheck(end, &tb_py_event_type))
    return tb_py_raise_msg(TB_ERR_INVALID_ARGUMENT, "end: expected an Event from Backend.event(), got a %s", Py_TYPE(end)->tp_name);
  double ms = 0;
  tb_status st = tb_event_elapsed_ms(self->event, ((tb_py_event *)end)->event, &ms);
  if (st != TB_OK) return tb_py_raise(st);
  return PyFloat_FromDouble(ms);
}

static PyMethodDef event_methods[] = {
    {"record", (PyCFunction)event_record, METH_NOARGS, "Mark the point after all work queued on the backend so far."},
    {"synchronize", (PyCFunction)event_synchronize, METH_NOARGS, "Wait until the recorded point is reached."},
    {"query", (PyCFunction)event_query, METH_NOARGS, "Whether the recorded point was reached (never blocks)."},
    {"elapsed_ms", (PyCFunction)event_elapsed_ms, METH_O, "Milliseconds from this event to `end`, both completed."},
    {NULL, NULL, 0, NULL}};

PyTypeObject tb_py_event_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tensorbridge.Event",
    .tp_basicsize = sizeof(tb_py_event),
    .tp_dealloc = (destructor)event_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A marker in a backend's stream of work (Backend.event()): record(), synchronize(), query(),\n"
              "elapsed_ms(end). It keeps its backend alive, like a tensor.",
    .tp_methods = event_methods,
};
