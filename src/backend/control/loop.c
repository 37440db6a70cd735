/* Loop kernel (every backend: control_kernels.h): run the body while the trip count M and the condition allow, threading the
 * loop-carried values through and collecting the scan outputs, then stack them along a new first axis.
 * As the ONNX spec writes it: without the cond input the body's condition output is ignored (a for
 * loop); without M the loop runs until the condition is false; with neither it would never end and is
 * refused. */
#include <stdlib.h>
#include "backend/control/rc_util.h"
#include "backend/control/control_kernels.h"
#include "backend/run_checks.h"
#include "ops/control/control_params.h"

typedef struct loop_state {
  size_t carried, scans;
  tb_tensor **values;    /* carried current values */
  bool *owned;           /* values[j] was made by the body (else it is the node's input) */
  tb_tensor **parts;     /* scans x cap per-iteration scan outputs, column t at parts[k * cap + t] */
  size_t count, cap;
} loop_state;

static void state_free(loop_state *s) {
  for (size_t j = 0; j < s->carried; j++)
    if (s->owned && s->owned[j]) tb_tensor_destroy(s->values[j]);
  if (s->parts) tb_rc_destroy_all(s->parts, s->scans * s->cap);
  free(s->values);
  free(s->owned);
  free(s->parts);
}

static tb_status grow(tb_kernel_ctx *ctx, loop_state *s) {
  if (s->count < s->cap) return TB_OK;
  size_t cap = s->cap ? 2 * s->cap : 16;
  tb_tensor **parts = calloc(s->scans * cap + 1, sizeof *parts);
  if (!parts) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "cannot keep %zu iterations of scan outputs", cap);
  for (size_t k = 0; k < s->scans; k++)
    for (size_t t = 0; t < s->count; t++) parts[k * cap + t] = s->parts[k * s->cap + t];
  free(s->parts);
  s->parts = parts;
  s->cap = cap;
  return TB_OK;
}

static tb_status scalar_tensor(tb_kernel_ctx *ctx, tb_dtype dtype, const void *value, tb_tensor **out) {
  tb_status st = tb_tensor_create(ctx->backend, dtype, 0, NULL, out);
  if (st == TB_OK && (st = tb_tensor_copy_from_host(*out, value, tb_dtype_size(dtype))) != TB_OK) {
    tb_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}

/* One iteration: body(i, cond, carried...) -> (cond, carried..., scans...). */
static tb_status iterate(tb_kernel_ctx *ctx, const tb_graph *body, loop_state *s, int64_t i, bool *cond) {
  size_t n_in = 2 + s->carried, n_out = body->n_outputs;
  tb_tensor **ins = calloc(n_in, sizeof *ins), **outs = calloc(n_out + 1, sizeof *outs);
  uint8_t cond_byte = *cond ? 1 : 0;
  tb_status st = ins && outs ? TB_OK : tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "cannot allocate the body's inputs");
  if (st == TB_OK) st = scalar_tensor(ctx, TB_DTYPE_I64, &i, &ins[0]);
  if (st == TB_OK) st = scalar_tensor(ctx, TB_DTYPE_BOOL, &cond_byte, &ins[1]);
  if (st == TB_OK) st = grow(ctx, s);
  for (size_t j = 0; st == TB_OK && j < s->carried; j++) ins[2 + j] = s->values[j];
  if (st == TB_OK) st = tb_rc_run_body(ctx, body, n_in, ins, n_out, outs);
  if (st == TB_OK) st = tb_rc_scalar_bool(ctx, outs[0], "the body's condition output", cond);
  if (st == TB_OK) st = tb_run_checks_now(); /* the device is idle: the first bad index stops the loop here */
  if (st == TB_OK) {
    for (size_t j = 0; j < s->carried; j++) {
      if (s->owned[j]) tb_tensor_destroy(s->values[j]);
      s->values[j] = outs[1 + j];
      s->owned[j] = true;
      outs[1 + j] = NULL;
    }
    for (size_t k = 0; k < s->scans; k++) {
      s->parts[k * s->cap + s->count] = outs[1 + s->carried + k];
      outs[1 + s->carried + k] = NULL;
    }
    s->count++;
  }
  if (ins) tb_rc_destroy_all(ins, 2); /* the carried inputs belong to the state */
  if (outs) tb_rc_destroy_all(outs, n_out);
  free(ins);
  free(outs);
  return st;
}

tb_status tb_control_run_loop(tb_kernel_ctx *ctx) {
  const tb_loop_params *p = ctx->params;
  tb_status st;
  const tb_graph *body = p->body;
  if (ctx->n_inputs < 2 || body->n_inputs != ctx->n_inputs || body->n_outputs + 1 < ctx->n_inputs)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "the body's %zu inputs and %zu outputs do not fit the node's %zu inputs",
                           body->n_inputs, body->n_outputs, ctx->n_inputs);
  tb_tensor *max_t = tb_rc_input(ctx, 0), *cond_t = tb_rc_input(ctx, 1);
  int64_t max_trips = 0;
  bool cond = true;
  if (max_t && (st = tb_rc_scalar_i64(ctx, max_t, "the trip count M", &max_trips)) != TB_OK) return st;
  if (cond_t && (st = tb_rc_scalar_bool(ctx, cond_t, "the condition", &cond)) != TB_OK) return st;
  if (!max_t && !cond_t) return tb_kernel_error(ctx, TB_ERR_MODEL, "has neither a trip count M nor a condition: it would never end");

  loop_state s = {.carried = ctx->n_inputs - 2, .scans = body->n_outputs + 1 - ctx->n_inputs};
  s.values = calloc(s.carried + 1, sizeof *s.values);
  s.owned = calloc(s.carried + 1, sizeof *s.owned);
  if (!s.values || !s.owned) st = tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "cannot allocate the loop state");
  for (size_t j = 0; st == TB_OK && j < s.carried; j++) {
    s.values[j] = tb_rc_input(ctx, 2 + j);
    if (!s.values[j]) st = tb_kernel_error(ctx, TB_ERR_MODEL, "loop-carried input %zu is empty", j);
  }
  for (int64_t i = 0; st == TB_OK && (!max_t || i < max_trips) && cond; i++) {
    bool next = cond;
    st = iterate(ctx, body, &s, i, &next);
    if (cond_t) cond = next;
  }
  for (size_t j = 0; st == TB_OK && j < s.carried && j < ctx->n_outputs; j++) st = tb_rc_output_copy(ctx, j, s.values[j]);
  for (size_t k = 0; st == TB_OK && k < s.scans && s.carried + k < ctx->n_outputs; k++) {
    const tb_value_type *declared = &body->values[body->outputs[1 + s.carried + k]].type;
    st = tb_rc_stack(ctx, s.carried + k, "a scan output", s.parts ? &s.parts[k * s.cap] : NULL, s.count, 0, false, declared);
  }
  state_free(&s);
  return st;
}

