/* Letting go of constants' original bytes (model/weights.h, model/exec_release.h): large unaligned
 * initializers stay in the mapped file instead of being copied at load; the file's pages are registered
 * and dropped; a constant every reader consumed (packed) has its executor copy returned, and values still
 * match; a constant another node reads stays; bytes come back when a node's state is made again; a model
 * prepared twice still gives the right values. Checked through the counters (bytes dropped / restored),
 * never through RSS. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include "model/params.h"
#include "core/convert_features.h"
#include "model/exec_release.h"
#include "model/weights.h"
#include "backend/tensor/tensor_impl.h"
#include "test_engine_util.h"
#include "test_onnx_pbw.h"

enum { M = 8, K = 64, N = 256 }; /* W is 64 x 256 floats: 64 KiB (16 pages), large enough to be read in place */

static tb_backend *cpu_backend(void) {
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &b));
  return b;
}

static void ready(tb_graph *g) {
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g));
  TB_ASSERT_OK(tb_graph_infer(g));
}

static float w_at(int i) { return (float)((i * 37) % 23 - 11) * 0.125f; }
static float x_at(int i) { return (float)((i * 13) % 17 - 8) * 0.25f; }

static void fill(float *w, float *x) {
  for (int i = 0; i < K * N; i++) w[i] = w_at(i);
  for (int i = 0; i < M * K; i++) x[i] = x_at(i);
}

static void matmul_ref(const float *x, const float *w, float *y) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++) s += (double)x[i * K + k] * w[k * N + j];
      y[i * N + j] = (float)s;
    }
}

static void expect_close(const tb_tensor *t, const float *want, size_t n) {
  assert_int_equal(tb_tensor_numel(t), n);
  float *got = malloc(n * sizeof *got);
  assert_non_null(got);
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, got, n * sizeof *got));
  for (size_t i = 0; i < n; i++)
    if (fabsf(got[i] - want[i]) > 1e-4f * fmaxf(1.0f, fabsf(want[i])))
      fail_msg("element %zu: got %g, expected %g", i, (double)got[i], (double)want[i]);
  free(got);
}

/* y = MatMul(x, W) (and r = Relu(W) when shared), W's data moved to an unaligned address so the executor
 * makes its own copy, as it does for unaligned raw_data in a mapped file. */
typedef struct mm_graph {
  tb_ir_model *m;
  tb_graph *g;
  unsigned char *unaligned; /* W's bytes at +1 */
  int w;
  size_t step;              /* the MatMul node */
  float wv[K * N], xv[M * K];
} mm_graph;

static void build(mm_graph *t, bool shared) {
  fill(t->wv, t->xv);
  t->m = tbt_ir_model(13);
  t->g = tb_graph_new(t->m, NULL, "mm");
  int64_t x_dims[2] = {M, K}, w_dims[2] = {K, N};
  tbt_input(t->g, "x", TB_DTYPE_F32, 2, x_dims, NULL);
  t->w = tbt_const_f32(t->g, "W", 2, w_dims, t->wv);
  tbt_node(t->g, "MatMul", "mm", "x,W", "y");
  tbt_output(t->g, "y");
  if (shared) {
    tbt_node(t->g, "Relu", "relu", "W", "r");
    tbt_output(t->g, "r");
  }
  ready(t->g);
  t->unaligned = malloc(sizeof t->wv + 1);
  assert_non_null(t->unaligned);
  memcpy(t->unaligned + 1, t->wv, sizeof t->wv);
  ((tb_ir_tensor *)t->g->values[t->w].constant)->data = t->unaligned + 1;
  t->step = (size_t)tbt_node_pos(t->g, "mm");
}

static void destroy(mm_graph *t) {
  tb_ir_model_destroy(t->m);
  free(t->unaligned);
}

/* What a packing kernel's prepare() does, said after the fact for the MatMul node. */
static void consume_w(tb_exec *e, mm_graph *t) {
  tb_kernel_ctx kc = {.graph = t->g, .node = &t->g->nodes[t->step], .n_inputs = 2, .exec = e};
  (void)tbt_kernel_bind(&kc, t->g, &t->g->nodes[t->step], NULL);
  tb_kernel_constant_consumed(&kc, 1);
  tb_exec_release_consumed(e, t->step);
}

static tb_exec *prepared_exec(mm_graph *t, tb_backend *cpu) {
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)t->g)); /* what prepare does */
  TB_ASSERT_OK(tb_exec_create(t->g, cpu, 2, tb_convert_features(), 1, &e));
  TB_ASSERT_OK(tb_exec_place(e, NULL, NULL, false));
  assert_non_null(e->cache[t->step].state); /* the level-2 MatMul packed the constant W */
  return e;
}

static void packed_copy_released_values_match(void **state) {
  (void)state;
  mm_graph t;
  build(&t, false);
  tb_backend *cpu = cpu_backend();
  tb_weights_stats before, after;
  tb_weights_stats_get(&before);
  tb_exec *e = prepared_exec(&t, cpu);
  consume_w(e, &t);
  tb_weights_stats_get(&after);
  /* W released once (by the kernel itself during prepare, or by the call above: never twice) */
  assert_int_equal(after.constants_released - before.constants_released, 1);
  assert_true(after.copy_bytes_dropped - before.copy_bytes_dropped >= 4 * 4096);
  const float *copy = tb_tensor_host_data(e->consts[t.w]);
  assert_true((uintptr_t)copy % 4 == 0);
  assert_true(copy[K * N / 2] == 0.0f); /* a middle page was returned: it reads as zeros */
  assert_true(t.wv[K * N / 2] != 0.0f);

  float y[M * N];
  matmul_ref(t.xv, t.wv, y);
  int64_t xs[2] = {M, K};
  tb_tensor *x = tbt_f32(cpu, 2, xs, t.xv), *out = NULL;
  for (int run = 0; run < 2; run++) {
    TB_ASSERT_OK(tb_exec_run(e, &x, &out));
    expect_close(out, y, M * N); /* from the packed weights */
    tb_tensor_destroy(out);
  }
  /* the node's state made again: W's bytes are copied back from the model */
  tb_exec_restore_consumed(e, t.step);
  tb_weights_stats_get(&before);
  assert_int_equal(before.copy_bytes_restored - after.copy_bytes_restored, sizeof t.wv);
  assert_memory_equal(tb_tensor_host_data(e->consts[t.w]), t.wv, sizeof t.wv);
  tb_exec_restore_consumed(e, t.step); /* twice: nothing more to bring back */
  tb_weights_stats_get(&after);
  assert_int_equal(after.copy_bytes_restored, before.copy_bytes_restored);
  tb_tensor_destroy(x);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  destroy(&t);
}

static void constant_read_by_another_node_stays(void **state) {
  (void)state;
  mm_graph t;
  build(&t, true);
  tb_backend *cpu = cpu_backend();
  tb_weights_stats before, after;
  tb_weights_stats_get(&before);
  tb_exec *e = prepared_exec(&t, cpu);
  consume_w(e, &t); /* MatMul packed W, but Relu reads it at run time */
  tb_weights_stats_get(&after);
  assert_int_equal(after.constants_released, before.constants_released);
  assert_int_equal(after.copy_bytes_dropped, before.copy_bytes_dropped);
  assert_memory_equal(tb_tensor_host_data(e->consts[t.w]), t.wv, sizeof t.wv);
  float y[M * N], r[K * N];
  matmul_ref(t.xv, t.wv, y);
  for (int i = 0; i < K * N; i++) r[i] = fmaxf(t.wv[i], 0.0f);
  int64_t xs[2] = {M, K};
  tb_tensor *x = tbt_f32(cpu, 2, xs, t.xv), *out[2] = {NULL, NULL};
  TB_ASSERT_OK(tb_exec_run(e, &x, out));
  expect_close(out[0], y, M * N);
  expect_close(out[1], r, K * N);
  tb_tensor_destroy(out[0]);
  tb_tensor_destroy(out[1]);
  tb_tensor_destroy(x);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  destroy(&t);
}

static void consumption_outside_prepare_is_ignored(void **state) {
  (void)state;
  mm_graph t;
  build(&t, false);
  tb_backend *cpu = cpu_backend();
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)t.g)); /* what prepare does */
  TB_ASSERT_OK(tb_exec_create(t.g, cpu, 0, tb_convert_features(), 1, &e)); /* O0: no kernel packs */
  TB_ASSERT_OK(tb_exec_place(e, NULL, NULL, false));
  tb_weights_stats before, after;
  tb_weights_stats_get(&before);
  tb_tensor *fake_out = NULL;
  tb_kernel_ctx in_run = {.graph = t.g, .node = &t.g->nodes[t.step], .n_inputs = 2, .exec = e, .outputs = &fake_out};
  (void)tbt_kernel_bind(&in_run, t.g, &t.g->nodes[t.step], NULL);
  tb_kernel_constant_consumed(&in_run, 1);      /* run(), not prepare(): ignored */
  tb_kernel_ctx no_exec = {.graph = t.g, .node = &t.g->nodes[t.step], .n_inputs = 2};
  (void)tbt_kernel_bind(&no_exec, t.g, &t.g->nodes[t.step], NULL);
  tb_kernel_constant_consumed(&no_exec, 1);     /* a kernel test's own context: ignored */
  tb_kernel_ctx other = {.graph = t.g, .node = &t.g->nodes[t.step], .n_inputs = 2, .exec = e};
  (void)tbt_kernel_bind(&other, t.g, &t.g->nodes[t.step], NULL);
  tb_kernel_constant_consumed(&other, 7);       /* no input 7 */
  tb_kernel_constant_consumed(&other, 0);       /* x is a graph input, not a constant */
  tb_kernel_constant_consumed(NULL, 1);
  tb_exec_release_consumed(e, t.step);
  tb_weights_stats_get(&after);
  assert_int_equal(after.constants_released, before.constants_released);
  assert_int_equal(after.copy_bytes_dropped, before.copy_bytes_dropped);
  float y[M * N];
  matmul_ref(t.xv, t.wv, y);
  int64_t xs[2] = {M, K};
  tb_tensor *x = tbt_f32(cpu, 2, xs, t.xv), *out = NULL;
  TB_ASSERT_OK(tb_exec_run(e, &x, &out)); /* the reference MatMul reads W: it must be intact */
  expect_close(out, y, M * N);
  tb_tensor_destroy(out);
  tb_tensor_destroy(x);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  destroy(&t);
}

/* ---- through a file: the loader, the registered mapping, prepare twice ---- */

static void value_info(pbw *g, unsigned field, const char *name, int64_t d0, int64_t d1) {
  pbw vi = {0}, type = {0}, tt = {0}, shape = {0}, dim = {0};
  pbw_str(&vi, 1, name);
  pbw_int(&tt, 1, 1); /* float */
  pbw_int(&dim, 1, d0);
  pbw_msg(&shape, 1, &dim);
  pbw_int(&dim, 1, d1);
  pbw_msg(&shape, 1, &dim);
  pbw_msg(&tt, 2, &shape);
  pbw_msg(&type, 1, &tt);
  pbw_msg(&vi, 2, &type);
  pbw_msg(g, field, &vi);
}

static void initializer(pbw *g, const char *name, size_t ndim, const int64_t *dims, const float *data, size_t n) {
  pbw t = {0};
  for (size_t i = 0; i < ndim; i++) pbw_int(&t, 1, dims[i]);
  pbw_int(&t, 2, 1);
  pbw_str(&t, 8, name);
  pbw_bytes(&t, 9, data, n * sizeof *data);
  pbw_msg(g, 5, &t);
}

/* y = MatMul(x, W) + b as ONNX bytes; `pad` characters of graph name shift where W's raw_data lands. */
static pbw onnx_model(const float *w, const float *b, size_t pad) {
  pbw g = {0}, node = {0}, add = {0}, op = {0}, model = {0};
  pbw_str(&node, 1, "x");
  pbw_str(&node, 1, "W");
  pbw_str(&node, 2, "xw");
  pbw_str(&node, 4, "MatMul");
  pbw_msg(&g, 1, &node);
  pbw_str(&add, 1, "xw");
  pbw_str(&add, 1, "b");
  pbw_str(&add, 2, "y");
  pbw_str(&add, 4, "Add");
  pbw_msg(&g, 1, &add);
  char name[64] = "g";
  for (size_t i = 1; i <= pad && i < sizeof name - 1; i++) name[i] = 'g';
  name[pad + 1 < sizeof name ? pad + 1 : sizeof name - 1] = '\0';
  pbw_str(&g, 2, name);
  int64_t wd[2] = {K, N}, bd[1] = {N};
  initializer(&g, "W", 2, wd, w, K * N);
  initializer(&g, "b", 1, bd, b, N);
  value_info(&g, 11, "x", M, K);
  value_info(&g, 12, "y", M, N);
  pbw_int(&model, 1, 8);
  pbw_int(&op, 2, 13);
  pbw_msg(&model, 8, &op);
  pbw_msg(&model, 7, &g);
  return model;
}

static size_t find(const pbw *p, const void *needle, size_t n) {
  for (size_t i = 0; i + n <= p->len; i++)
    if (!memcmp(p->data + i, needle, n)) return i;
  fail_msg("bytes not found in the model");
  return 0;
}

/* Write a model whose W starts at a file offset that is 1 mod 4 (unaligned for floats); its offset. */
static size_t write_model(const char *path, const float *w, const float *b) {
  for (size_t pad = 0; pad < 8; pad++) {
    pbw p = onnx_model(w, b, pad);
    size_t off = find(&p, w, 64);
    if (off % 4 == 1 && find(&p, b, sizeof(float) * N) % 4 != 0) {
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      assert_true(fd >= 0);
      assert_int_equal(write(fd, p.data, p.len), (ssize_t)p.len);
      close(fd);
      free(p.data);
      return off;
    }
    free(p.data);
  }
  fail_msg("no padding put W at an unaligned offset");
  return 0;
}

typedef struct file_case {
  char path[64];
  float w[K * N], x[M * K], b[N];
} file_case;

static void file_case_init(file_case *c) {
  fill(c->w, c->x);
  for (int j = 0; j < N; j++) c->b[j] = (float)(j % 5) - 2.0f;
  snprintf(c->path, sizeof c->path, "/tmp/tb_memory_peak_%ld.onnx", (long)getpid());
}

static void large_unaligned_initializer_stays_in_the_file(void **state) {
  (void)state;
  file_case c;
  file_case_init(&c);
  size_t off = write_model(c.path, c.w, c.b);
  tb_weights_stats before, after;
  tb_weights_stats_get(&before);
  tb_model *model = NULL;
  TB_ASSERT_OK(tb_model_load(c.path, &model));
  tb_weights_stats_get(&after);
  const tb_graph *g = model->ir->graph;
  const tb_ir_tensor *w = g->values[tb_graph_find(g, "W")].constant, *b = g->values[tb_graph_find(g, "b")].constant;
  assert_non_null(w);
  assert_non_null(b);
  /* W (64 KiB, unaligned) is read in place from the mapping, not copied */
  assert_ptr_equal(w->data, (const unsigned char *)model->ir->file + off);
  assert_int_equal((uintptr_t)w->data % 4, 1);
  assert_true(tb_weights_file_backed(w->data, w->nbytes));
  assert_memory_equal(w->data, c.w, sizeof c.w);
  /* b (1 KiB, unaligned) is copied to an aligned block the model owns */
  assert_int_equal((uintptr_t)b->data % 4, 0);
  assert_false(tb_weights_file_backed(b->data, b->nbytes));
  assert_memory_equal(b->data, c.b, sizeof c.b);
  /* the pages parsing touched were dropped after loading (the file is over 6 pages) */
  assert_true(after.file_bytes_dropped - before.file_bytes_dropped >= 4 * 4096);
  const void *data = w->data;
  tb_model_destroy(model);
  assert_false(tb_weights_file_backed(data, 4)); /* unregistered with the model */
  unlink(c.path);
}

static void run_prepared(tb_prepared *p, tb_backend *cpu, const file_case *c) {
  float want[M * N];
  matmul_ref(c->x, c->w, want);
  for (int i = 0; i < M * N; i++) want[i] += c->b[i % N];
  int64_t xs[2] = {M, K};
  tb_tensor *x = tbt_f32(cpu, 2, xs, c->x), *y = NULL;
  const char *names[1] = {"x"};
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &x, 1, NULL, &y));
  expect_close(y, want, M * N);
  tb_tensor_destroy(y);
  tb_tensor_destroy(x);
}

static tb_prepared *prepare(tb_model *model, tb_backend *cpu, tb_opt_level level) {
  tb_prepare_options o = {.size = sizeof o, .level = level, .threads = 1};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cpu, &o, &p, NULL));
  return p;
}

/* The first prepare lets go of what it packed (file pages, its own copies); a second prepare of the same
 * model reads the bytes again from the file and gives the same values, also after the model is destroyed. */
static void model_prepared_twice_still_matches(void **state) {
  (void)state;
  file_case c;
  file_case_init(&c);
  write_model(c.path, c.w, c.b);
  tb_backend *cpu = cpu_backend();
  tb_model *model = NULL;
  TB_ASSERT_OK(tb_model_load(c.path, &model));
  tb_weights_stats before, after;
  tb_weights_stats_get(&before);
  tb_prepared *first = prepare(model, cpu, TB_LEVEL_O2);
  tb_weights_stats_get(&after);
  assert_true(after.file_bytes_dropped > before.file_bytes_dropped); /* what prepare read from the file */
  run_prepared(first, cpu, &c);
  tb_prepared *second = prepare(model, cpu, TB_LEVEL_O2), *reference = prepare(model, cpu, TB_LEVEL_O0);
  run_prepared(second, cpu, &c);
  run_prepared(reference, cpu, &c);
  tb_prepared_destroy(first);
  tb_model_destroy(model); /* the prepared models keep it (and its mapping) alive */
  run_prepared(second, cpu, &c);
  run_prepared(reference, cpu, &c);
  tb_prepared_destroy(second);
  tb_prepared_destroy(reference);
  tb_backend_destroy(cpu);
  unlink(c.path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(packed_copy_released_values_match),
      cmocka_unit_test(constant_read_by_another_node_stays),
      cmocka_unit_test(consumption_outside_prepare_is_ignored),
      cmocka_unit_test(large_unaligned_initializer_stays_in_the_file),
      cmocka_unit_test(model_prepared_twice_still_matches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
