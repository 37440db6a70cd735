/* The parse functions of the elementwise operators with attributes (ew_params.h); Cast's is in cast.c. */
#include <float.h>
#include <string.h>
#include "ops/elementwise/ew_params.h"

/* Up to three float attributes (name NULL: unused) into alpha, beta, gamma, with their defaults. */
static tb_status floats3(const tb_graph *g, const tb_node *n, tb_act_params *p, const char *a, float da, const char *b,
                         float db, const char *c, float dc) {
  p->alpha = da;
  p->beta = db;
  p->gamma = dc;
  tb_status st = TB_OK;
  if (a) st = tb_attr_float(g, n, a, da, &p->alpha);
  if (st == TB_OK && b) st = tb_attr_float(g, n, b, db, &p->beta);
  if (st == TB_OK && c) st = tb_attr_float(g, n, c, dc, &p->gamma);
  return st;
}

tb_status tb_leakyrelu_parse(const tb_graph *g, const tb_node *n, void *params) {
  return floats3(g, n, params, "alpha", 0.01f, NULL, 0, NULL, 0);
}

tb_status tb_hardsigmoid_parse(const tb_graph *g, const tb_node *n, void *params) {
  return floats3(g, n, params, "alpha", 0.2f, "beta", 0.5f, NULL, 0);
}

tb_status tb_alpha1_parse(const tb_graph *g, const tb_node *n, void *params) {
  return floats3(g, n, params, "alpha", 1.0f, NULL, 0, NULL, 0);
}

tb_status tb_selu_parse(const tb_graph *g, const tb_node *n, void *params) {
  return floats3(g, n, params, "alpha", 1.67326319217681884765625f, NULL, 0, "gamma", 1.05070102214813232421875f);
}

tb_status tb_shrink_parse(const tb_graph *g, const tb_node *n, void *params) {
  return floats3(g, n, params, "bias", 0.0f, "lambd", 0.5f, NULL, 0);
}

tb_status tb_clip_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_clip_params *p = params;
  if (n->opset >= 11) return TB_OK;
  p->attr_form = true;
  tb_status st = tb_attr_float(g, n, "min", -FLT_MAX, &p->min);
  if (st == TB_OK) st = tb_attr_float(g, n, "max", FLT_MAX, &p->max);
  return st;
}

tb_status tb_mod_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_mod_params *p = params;
  int64_t fmod;
  tb_status st = tb_attr_int(g, n, "fmod", 0, &fmod);
  if (st != TB_OK) return st;
  if (fmod != 0 && fmod != 1)
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute 'fmod' is %lld; it must be 0 or 1", (long long)fmod);
  p->fmod = fmod == 1;
  return TB_OK;
}

tb_status tb_bitshift_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_bitshift_params *p = params;
  const char *dir;
  tb_status st = tb_attr_string(g, n, "direction", NULL, &dir);
  if (st != TB_OK) return st;
  if (!dir) return tb_node_error(g, n, TB_ERR_MODEL, "attribute 'direction' is required (LEFT or RIGHT)");
  if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute 'direction' is \"%s\"; it must be LEFT or RIGHT", dir);
  p->left = strcmp(dir, "LEFT") == 0;
  return TB_OK;
}

tb_status tb_isinf_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_isinf_params *p = params;
  int64_t neg, pos;
  tb_status st = tb_attr_int(g, n, "detect_negative", 1, &neg);
  if (st == TB_OK) st = tb_attr_int(g, n, "detect_positive", 1, &pos);
  if (st != TB_OK) return st;
  p->detect_negative = neg != 0;
  p->detect_positive = pos != 0;
  return TB_OK;
}

tb_status tb_binary_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_binary_params *p = params;
  if (n->opset >= 7) return TB_OK;
  p->legacy = true;
  int64_t broadcast;
  tb_status st = tb_attr_int(g, n, "broadcast", 0, &broadcast);
  if (st != TB_OK) return st;
  p->broadcast = broadcast != 0;
  p->has_axis = tb_node_attr(n, "axis") != NULL;
  return tb_attr_int(g, n, "axis", 0, &p->axis);
}
