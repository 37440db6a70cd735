/* Internal: a prepared model, shared by prepare.c (making it) and run.c (running it). */
#ifndef TB_MODEL_PREPARED_H
#define TB_MODEL_PREPARED_H
#include <tensorbridge/model.h>
#include "core/arena.h"
#include "model/engine.h"
#include "model/model_impl.h"

struct tb_prepared {
  tb_model *model;       /* a reference: the copy's constants and symbols live in it */
  tb_graph *graph;       /* the prepared copy of the model's graph */
  tb_backend *backend;   /* the backend outputs are returned on (a storage reference keeps it alive) */
  tb_backend *cpu;       /* the backend the executor computes on (the same when `backend` is the CPU) */
  tb_exec *exec;
  struct tb_routes *routes; /* the other routes to the backend's hardware (routes.h), NULL on the CPU backend */
  tb_dim_bindings dims;  /* bound at prepare (names and values in the arena) */
  tb_prepare_result result;
  tb_arena arena;        /* result strings and arrays */
  size_t bf16_rejected;  /* nodes with a bf16 kernel that kept fp32 (the warning's reason) */
  tb_node_profile *profile;   /* tb_prepared_profile's entries, remade per call */
  char (*profile_text)[3][96]; /* per entry: the op type with its domain, the kernel's description, the graph */
  void *stream;          /* the model's own stream on the backend (ops->stream_create), NULL where it has none */
  struct tb_replay *replay; /* graph replay (replay.h), NULL when ruled out at prepare */
  struct tb_event *timer[2]; /* device events at the start and end of each run (tb_prepared_device_ms), or NULL */
  double device_ms;      /* the last run's device time, when device_ms_known */
  bool device_ms_known;
};

/* run.c: bind the model's stream to this thread for the backend (returns what was bound), and restore it. */
void *tb_prepared_bind_stream(tb_prepared *p);
void tb_prepared_unbind_stream(tb_prepared *p, void *before);

#endif
