/* The soak's cases: each model is loaded once; every symbolic dim (batch) takes each value 1..--max-dim in turn
 * (fixed dims stay as declared), the inputs are random from a seed per (model, value), and the reference is the
 * CPU backend at O0 on those inputs, computed here once per shape. */
#include <stdio.h>
#include <string.h>
#include "soak.h"

static void model_name(const char *path, char *out, size_t size) {
  const char *slash = strrchr(path, '/');
  snprintf(out, size, "%s", slash ? slash + 1 : path);
  size_t len = strlen(out);
  if (len > 5 && strcmp(out + len - 5, ".onnx") == 0) out[len - 5] = '\0';
}

/* Collects the symbolic dims' names ("batch"; "?" for an unnamed unknown dim) into m->symbolic; returns
 * whether the model has any. */
static bool find_symbolic(soak_model *m) {
  m->symbolic[0] = '\0';
  for (size_t i = 0; i < m->input_count; i++) {
    tb_model_io io = {.size = sizeof io};
    if (tb_model_input(m->model, i, &io) != TB_OK) continue;
    for (size_t d = 0; d < io.ndim; d++) {
      if (io.dims[d] >= 0) continue;
      const char *name = io.dim_names[d][0] ? io.dim_names[d] : "?";
      if (strstr(m->symbolic, name)) continue;
      size_t len = strlen(m->symbolic);
      snprintf(m->symbolic + len, sizeof m->symbolic - len, "%s%s", len ? "," : "", name);
    }
  }
  return m->symbolic[0] != '\0';
}

static int make_inputs(soak_model *m, size_t model_index, soak_case *c, tb_backend *cpu) {
  for (size_t i = 0; i < m->input_count; i++) {
    tb_model_io io = {.size = sizeof io};
    tb_status st = tb_model_input(m->model, i, &io);
    if (st != TB_OK) {
      fprintf(stderr, "tb_soak: %s: input %zu: %s\n", m->path, i, tb_last_error());
      return SOAK_EXIT_SETUP;
    }
    int64_t shape[TB_MAX_DIMS];
    for (size_t d = 0; d < io.ndim; d++) shape[d] = io.dims[d] >= 0 ? io.dims[d] : c->dim_value;
    m->input_names[i] = io.name;
    st = tb_tensor_create(cpu, io.dtype, io.ndim, shape, &c->inputs[i]);
    if (st == TB_OK) st = tb_tensor_fill_random(c->inputs[i], 1000 * model_index + (uint64_t)c->dim_value, i);
    if (st != TB_OK) {
      fprintf(stderr, "tb_soak: %s: cannot make input '%s': %s\n", m->path, io.name, tb_last_error());
      return SOAK_EXIT_SETUP;
    }
  }
  return 0;
}

static int compute_reference(soak_model *m, tb_prepared *p, soak_case *c) {
  tb_status st = tb_prepared_run(p, m->input_count, m->input_names, c->inputs, m->output_count, NULL, c->reference);
  if (st != TB_OK) {
    if (m->symbolic[0])
      fprintf(stderr, "tb_soak: %s: the CPU O0 reference failed with %s=%lld: %s\n", m->path, m->symbolic,
              (long long)c->dim_value, tb_last_error());
    else
      fprintf(stderr, "tb_soak: %s: the CPU O0 reference failed: %s\n", m->path, tb_last_error());
    return SOAK_EXIT_SETUP;
  }
  return 0;
}

static int load_one(const soak_options *o, tb_backend *cpu, soak_model *m, size_t index) {
  m->path = o->models[index];
  model_name(m->path, m->name, sizeof m->name);
  if (tb_model_load(m->path, &m->model) != TB_OK) {
    fprintf(stderr, "tb_soak: cannot load model %s: %s\n", m->path, tb_last_error());
    return SOAK_EXIT_SETUP;
  }
  m->input_count = tb_model_input_count(m->model);
  m->output_count = tb_model_output_count(m->model);
  if (m->input_count > SOAK_MAX_IO || m->output_count > SOAK_MAX_IO) {
    fprintf(stderr, "tb_soak: %s has %zu inputs and %zu outputs; the soak takes up to %d of each\n", m->path,
            m->input_count, m->output_count, SOAK_MAX_IO);
    return SOAK_EXIT_SETUP;
  }
  for (size_t i = 0; i < m->output_count; i++) {
    tb_model_io io = {.size = sizeof io};
    if (tb_model_output(m->model, i, &io) != TB_OK) {
      fprintf(stderr, "tb_soak: %s: output %zu: %s\n", m->path, i, tb_last_error());
      return SOAK_EXIT_SETUP;
    }
    m->output_names[i] = io.name;
  }
  m->case_count = find_symbolic(m) ? (size_t)o->max_dim : 1;
  tb_prepare_options po = {.size = sizeof po, .level = TB_LEVEL_O0, .precision = TB_PRECISION_FP32};
  tb_prepared *reference = NULL;
  if (tb_model_prepare(m->model, cpu, &po, &reference, NULL) != TB_OK) {
    fprintf(stderr, "tb_soak: cannot prepare %s on the CPU at O0 for the reference: %s\n", m->path, tb_last_error());
    return SOAK_EXIT_SETUP;
  }
  int rc = 0;
  for (size_t c = 0; c < m->case_count && rc == 0; c++) {
    m->cases[c].dim_value = m->symbolic[0] ? (int64_t)c + 1 : 0;
    rc = make_inputs(m, index, &m->cases[c], cpu);
    if (rc == 0) rc = compute_reference(m, reference, &m->cases[c]);
  }
  tb_prepared_destroy(reference);
  return rc;
}

int soak_models_load(const soak_options *o, tb_backend *cpu, soak_model *models) {
  for (size_t i = 0; i < o->model_count; i++) {
    int rc = load_one(o, cpu, &models[i], i);
    if (rc != 0) return rc;
  }
  return 0;
}

void soak_models_destroy(soak_model *models, size_t count) {
  for (size_t i = 0; i < count; i++) {
    for (size_t c = 0; c < models[i].case_count; c++) {
      for (size_t k = 0; k < SOAK_MAX_IO; k++) {
        tb_tensor_destroy(models[i].cases[c].inputs[k]);
        tb_tensor_destroy(models[i].cases[c].reference[k]);
      }
    }
    tb_model_destroy(models[i].model);
  }
}
