/* The ONNX reader on models built byte by byte: every field it reads (graph, nodes, value infos,
 * every tensor data field, attributes with subgraphs, opset imports), the public io/property calls,
 * and each structural check with the message it gives. */
#include <string.h>
#include "model/model_impl.h"
#include "test_onnx_pbw.h"
#include "test_util.h"

enum { FLOAT = 1, UINT8 = 2, INT8 = 3, INT16 = 5, INT32 = 6, INT64 = 7, STRING = 8, BOOL = 9, FLOAT16 = 10,
       DOUBLE = 11, COMPLEX64 = 14, BFLOAT16 = 16 };

/* A graph "main": input x float[N,3], node relu1 Relu x -> y, output y float[N,3]; `extra` appended. */
static pbw relu_graph(pbw *extra) {
  pbw g = {0};
  int64_t dims[2] = {-1, 3};
  pbw_node(&g, "relu1", "Relu", "x", "y", NULL);
  pbw_str(&g, 2, "main");
  pbw_value_info(&g, 11, "x", FLOAT, dims, 2);
  pbw_value_info(&g, 12, "y", FLOAT, dims, 2);
  if (extra) {
    pbw_raw(&g, extra->data, extra->len);
    free(extra->data);
    memset(extra, 0, sizeof *extra);
  }
  return g;
}

static tb_status load(pbw *model, tb_model **out) {
  tb_status st = tb_model_load_memory(model->data, model->len, NULL, out);
  free(model->data);
  memset(model, 0, sizeof *model);
  return st;
}

/* Load a relu model with `extra` graph fields; expect status and a message containing each needle. */
static void expect_graph_error(pbw *extra, tb_status want, const char *needle1, const char *needle2) {
  pbw g = relu_graph(extra);
  pbw m = pbw_model(&g);
  tb_model *model = (tb_model *)0x1;
  tb_status st = load(&m, &model);
  if (st != want) fail_msg("want %s, got %s: %s", tb_status_str(want), tb_status_str(st), tb_last_error());
  assert_null(model);
  TB_ASSERT_CONTAINS(tb_last_error(), "model in memory: graph 'main'");
  TB_ASSERT_CONTAINS(tb_last_error(), needle1);
  if (needle2) TB_ASSERT_CONTAINS(tb_last_error(), needle2);
}

static void test_relu_model_io_and_properties(void **state) {
  (void)state;
  pbw g = relu_graph(NULL), m = pbw_model(&g), kv = {0};
  pbw_str(&kv, 1, "author");
  pbw_str(&kv, 2, "tests");
  pbw_msg(&m, 14, &kv);
  tb_model *model;
  TB_ASSERT_OK(load(&m, &model));
  assert_string_equal(tb_model_property(model, "metadata.author"), "tests");
  assert_null(tb_model_property(model, "metadata.license"));
  assert_int_equal(tb_model_input_count(model), 1);
  assert_int_equal(tb_model_output_count(model), 1);
  tb_model_io io = {.size = sizeof io};
  TB_ASSERT_OK(tb_model_input(model, 0, &io));
  assert_string_equal(io.name, "x");
  assert_int_equal(io.dtype, TB_DTYPE_F32);
  assert_true(io.has_shape);
  assert_int_equal(io.ndim, 2);
  assert_int_equal(io.dims[0], -1);
  assert_string_equal(io.dim_names[0], "N");
  assert_int_equal(io.dims[1], 3);
  assert_string_equal(io.dim_names[1], "");
  TB_ASSERT_OK(tb_model_output(model, 0, &io));
  assert_string_equal(io.name, "y");
  assert_int_equal(tb_model_input(model, 1, &io), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "index 1 is out of range");
  tb_model_io small = {.size = 8};
  assert_int_equal(tb_model_input(model, 0, &small), TB_ERR_INVALID_ARGUMENT);

  assert_string_equal(tb_model_property(model, "producer"), "pbw");
  assert_string_equal(tb_model_property(model, "producer_version"), "1.0");
  assert_string_equal(tb_model_property(model, "ir_version"), "8");
  assert_string_equal(tb_model_property(model, "opset"), "17");
  assert_string_equal(tb_model_property(model, "nodes"), "1");
  assert_string_equal(tb_model_property(model, "initializers"), "0");
  assert_string_equal(tb_model_property(model, "weight_bytes"), "0");
  assert_string_equal(tb_model_property(model, "graph_name"), "main");
  assert_null(tb_model_property(model, "colour"));
  assert_int_equal(strlen(tb_model_sha256(model)), 64);

  const tb_graph *gr = model->ir->graph;
  assert_int_equal(gr->n_nodes, 1);
  assert_string_equal(gr->nodes[0].name, "relu1");
  assert_string_equal(gr->nodes[0].op_type, "Relu");
  assert_string_equal(gr->nodes[0].domain, "");
  assert_int_equal(gr->nodes[0].opset, 17);
  assert_string_equal(gr->values[gr->nodes[0].inputs[0]].name, "x");
  assert_string_equal(gr->values[gr->nodes[0].outputs[0]].name, "y");
  assert_int_equal(gr->values[gr->nodes[0].outputs[0]].producer, 0);
  assert_true(gr->values[gr->inputs[0]].is_input);
  assert_true(gr->values[gr->outputs[0]].is_output);
  assert_int_equal(model->ir->n_opsets, 1);
  tb_model_destroy(model);
}

/* One initializer per data field, each checked value by value. */
static void test_tensor_data_fields(void **state) {
  (void)state;
  pbw extra = {0}, t = {0};
  int64_t d3[1] = {3}, d2[1] = {2};
  pbw_tensor_head(&t, "f", FLOAT, d3, 1);
  float fv[3] = {1.5f, -2.0f, 3.25f};
  pbw_packed_floats(&t, 4, fv, 3);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "i8", INT8, d3, 1);
  pbw_int(&t, 5, -128); /* unpacked int32_data */
  pbw_int(&t, 5, 0);
  pbw_int(&t, 5, 127);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "h", FLOAT16, d2, 1);
  int64_t hv[2] = {0x3c00, 0xc000}; /* 1.0, -2.0 */
  pbw_packed_ints(&t, 5, hv, 2);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "bf", BFLOAT16, d2, 1);
  int64_t bv[2] = {0x3f80, 0x4000};
  pbw_packed_ints(&t, 5, bv, 2);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "b", BOOL, d2, 1);
  int64_t boolv[2] = {1, 0};
  pbw_packed_ints(&t, 5, boolv, 2);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "u8", UINT8, d2, 1);
  int64_t u8v[2] = {255, 7};
  pbw_packed_ints(&t, 5, u8v, 2);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "i16", INT16, d2, 1);
  int64_t i16v[2] = {-32768, 32767};
  pbw_packed_ints(&t, 5, i16v, 2);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "i32", INT32, d2, 1);
  int64_t i32v[2] = {-5, 2147483647};
  pbw_packed_ints(&t, 5, i32v, 2);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "i64", INT64, d2, 1);
  int64_t i64v[2] = {INT64_MIN, 42};
  pbw_packed_ints(&t, 7, i64v, 2);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "d", DOUBLE, d2, 1);
  double dv[2] = {0.1, -1e300};
  pbw_bytes(&t, 10, dv, sizeof dv);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "raw", FLOAT, d2, 1);
  float rv[2] = {7.0f, 8.0f};
  pbw_bytes(&t, 9, rv, sizeof rv);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "scalar", INT64, NULL, 0);
  pbw_int(&t, 7, 9);
  pbw_msg(&extra, 5, &t);
  int64_t zero[2] = {0, 4};
  pbw_tensor_head(&t, "empty", FLOAT, zero, 2);
  pbw_msg(&extra, 5, &t);
  pbw_value_info(&extra, 11, "f", FLOAT, d3, 1); /* an initializer that is also an input: a default */

  pbw g = relu_graph(&extra), m = pbw_model(&g);
  tb_model *model;
  TB_ASSERT_OK(load(&m, &model));
  const tb_graph *gr = model->ir->graph;
  assert_int_equal(tb_model_input_count(model), 1); /* "f" is not listed: it has a default */
  assert_string_equal(tb_model_property(model, "initializers"), "13");
  assert_string_equal(tb_model_property(model, "weight_bytes"), "87");
#define CONST(name) gr->values[tb_graph_find(gr, name)].constant
  const tb_ir_tensor *c = CONST("f");
  assert_non_null(c);
  assert_true(gr->values[tb_graph_find(gr, "f")].is_input);
  assert_int_equal(c->dtype, TB_DTYPE_F32);
  assert_int_equal(c->ndim, 1);
  assert_int_equal(c->dims[0], 3);
  assert_memory_equal(c->data, fv, sizeof fv);
  int8_t i8[3] = {-128, 0, 127};
  assert_memory_equal(CONST("i8")->data, i8, 3);
  uint16_t h[2] = {0x3c00, 0xc000};
  assert_int_equal(CONST("h")->dtype, TB_DTYPE_F16);
  assert_memory_equal(CONST("h")->data, h, 4);
  uint16_t bf[2] = {0x3f80, 0x4000};
  assert_int_equal(CONST("bf")->dtype, TB_DTYPE_BF16);
  assert_memory_equal(CONST("bf")->data, bf, 4);
  uint8_t b[2] = {1, 0};
  assert_memory_equal(CONST("b")->data, b, 2);
  uint8_t u8[2] = {255, 7};
  assert_memory_equal(CONST("u8")->data, u8, 2);
  int16_t i16[2] = {-32768, 32767};
  assert_memory_equal(CONST("i16")->data, i16, 4);
  int32_t i32[2] = {-5, 2147483647};
  assert_memory_equal(CONST("i32")->data, i32, 8);
  assert_memory_equal(CONST("i64")->data, i64v, 16);
  assert_memory_equal(CONST("d")->data, dv, 16);
  assert_memory_equal(CONST("raw")->data, rv, 8);
  assert_int_equal(CONST("scalar")->ndim, 0);
  assert_int_equal(*(const int64_t *)CONST("scalar")->data, 9);
  assert_int_equal(CONST("empty")->nbytes, 0);
  assert_int_equal(CONST("empty")->dims[1], 4);
  assert_int_equal(tb_ir_tensor_numel(CONST("f")), 3);
#undef CONST
  tb_model_destroy(model);
}

static void test_tensor_errors(void **state) {
  (void)state;
  pbw extra = {0}, t = {0};
  int64_t d3[1] = {3};
  uint8_t ten[10] = {0};

  pbw_tensor_head(&t, "w", FLOAT, d3, 1);
  pbw_bytes(&t, 9, ten, 10);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'w': raw_data has 10 bytes, 12 expected for float[3]", NULL);

  pbw_tensor_head(&t, "w", 99, d3, 1);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'w'", "data_type 99 is not an ONNX element type");

  pbw_tensor_head(&t, "c", COMPLEX64, d3, 1);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_UNSUPPORTED, "initializer 'c'", "complex64");

  pbw_tensor_head(&t, "s", STRING, d3, 1);
  pbw_str(&t, 6, "a");
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_UNSUPPORTED, "initializer 's'", "string");

  int64_t neg[2] = {2, -2};
  pbw_tensor_head(&t, "n", FLOAT, neg, 2);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'n'", "dims[1] = -2 is negative");

  int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 4};
  pbw_tensor_head(&t, "big", FLOAT, huge, 3);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'big'", "more bytes than can be addressed");

  int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  pbw_tensor_head(&t, "r9", FLOAT, nine, 9);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_UNSUPPORTED, "initializer 'r9'", "rank 9");

  pbw_tensor_head(&t, "fd", FLOAT, d3, 1);
  float two[2] = {1, 2};
  pbw_packed_floats(&t, 4, two, 2);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'fd'", "float_data has 2 elements, 3 expected for float[3]");

  pbw_tensor_head(&t, "i8", INT8, d3, 1);
  int64_t big8[3] = {1, 300, 2};
  pbw_packed_ints(&t, 5, big8, 3);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'i8'", "int32_data[1] = 300 is out of range for int8");

  pbw_tensor_head(&t, "wrong", FLOAT, d3, 1);
  pbw_packed_ints(&t, 7, big8, 3);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'wrong'", "int64_data cannot hold a float tensor");

  pbw_tensor_head(&t, "two", FLOAT, d3, 1);
  float three[3] = {1, 2, 3};
  pbw_packed_floats(&t, 4, three, 3);
  pbw_bytes(&t, 9, three, sizeof three);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'two'", "more than one field");

  pbw_tensor_head(&t, "nodata", FLOAT, d3, 1);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'nodata'", "has no data for float[3]");

  pbw_tensor_head(&t, "notype", 0, d3, 1);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'notype'", "has no data_type");

  pbw seg = {0};
  pbw_int(&seg, 1, 0);
  pbw_int(&seg, 2, 3);
  pbw_tensor_head(&t, "seg", FLOAT, d3, 1);
  pbw_msg(&t, 3, &seg);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_UNSUPPORTED, "initializer 'seg'", "segmented");

  pbw kv = {0};
  pbw_str(&kv, 1, "location");
  pbw_str(&kv, 2, "weights.bin");
  pbw_tensor_head(&t, "ext", FLOAT, d3, 1);
  pbw_msg(&t, 13, &kv);
  pbw_int(&t, 14, 1);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'ext'", "loaded from memory without a folder");

  pbw_tensor_head(&t, "w", FLOAT, d3, 1);
  pbw_packed_floats(&t, 4, three, 3);
  pbw_msg(&extra, 5, &t);
  pbw_tensor_head(&t, "w", FLOAT, d3, 1);
  pbw_packed_floats(&t, 4, three, 3);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer 'w' is given twice", NULL);

  pbw_tensor_head(&t, NULL, FLOAT, d3, 1);
  pbw_packed_floats(&t, 4, three, 3);
  pbw_msg(&extra, 5, &t);
  expect_graph_error(&extra, TB_ERR_MODEL, "initializer #0 has no name", NULL);

  pbw sparse = {0};
  pbw_tensor_head(&t, "sp", FLOAT, d3, 1);
  pbw_packed_floats(&t, 4, three, 3);
  pbw_msg(&sparse, 1, &t);
  pbw_msg(&extra, 15, &sparse);
  expect_graph_error(&extra, TB_ERR_UNSUPPORTED, "sparse_initializer 'sp' is not supported", NULL);
}

static void test_graph_structure_errors(void **state) {
  (void)state;
  pbw extra = {0};
  pbw_node(&extra, "bad", NULL, "x", "z", NULL);
  expect_graph_error(&extra, TB_ERR_MODEL, "node 'bad' (?): has no op_type", NULL);

  pbw vi = {0};
  pbw_msg(&extra, 11, &vi);
  expect_graph_error(&extra, TB_ERR_MODEL, "input #1 has no name", NULL);

  pbw_msg(&extra, 12, &vi);
  expect_graph_error(&extra, TB_ERR_MODEL, "output #1 has no name", NULL);

  int64_t d1[1] = {1};
  pbw_value_info(&extra, 11, "x", FLOAT, d1, 1);
  expect_graph_error(&extra, TB_ERR_MODEL, "input 'x' is declared twice", NULL);

  pbw_value_info(&extra, 11, "s", STRING, d1, 1);
  expect_graph_error(&extra, TB_ERR_UNSUPPORTED, "input 's'", "element type string");

  pbw_value_info(&extra, 11, "q", 77, d1, 1);
  expect_graph_error(&extra, TB_ERR_MODEL, "input 'q'", "elem_type 77 is not an ONNX element type");

  /* A value_info of a type we lack is not an error: the type is left unknown. */
  pbw_value_info(&extra, 13, "u16", 4, d1, 1);
  pbw g = relu_graph(&extra), m = pbw_model(&g);
  tb_model *model;
  TB_ASSERT_OK(load(&m, &model));
  const tb_graph *gr = model->ir->graph;
  assert_false(gr->values[tb_graph_find(gr, "u16")].type.has_dtype);
  tb_model_destroy(model);

  /* A truncated graph: the length of the last node runs past the end. */
  pbw_tag(&extra, 1, 2);
  pbw_uvarint(&extra, 50);
  pbw_str(&extra, 4, "Relu");
  expect_graph_error(&extra, TB_ERR_MODEL, "malformed protobuf at byte", "runs past the end");
}

static void test_model_level_errors(void **state) {
  (void)state;
  struct {
    int64_t ir_version; /* 0: left out */
    int opset;          /* 0: no opset_import */
    bool graph;
    tb_status want;
    const char *needle;
  } cases[] = {
      {0, 17, true, TB_ERR_MODEL, "has no ir_version"},
      {2, 17, true, TB_ERR_UNSUPPORTED, "ir_version 2 is outside"},
      {99, 17, true, TB_ERR_UNSUPPORTED, "ir_version 99 is outside"},
      {8, 0, true, TB_ERR_MODEL, "has no opset_import"},
      {8, -3, true, TB_ERR_MODEL, "opset_import #0: domain 'ai.onnx' has version -3"},
      {8, 17, false, TB_ERR_MODEL, "has no graph"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    pbw m = {0};
    if (cases[i].ir_version) pbw_int(&m, 1, cases[i].ir_version);
    if (cases[i].opset) {
      pbw op = {0};
      pbw_int(&op, 2, cases[i].opset);
      pbw_msg(&m, 8, &op);
    }
    if (cases[i].graph) {
      pbw g = relu_graph(NULL);
      pbw_msg(&m, 7, &g);
    }
    tb_model *model;
    assert_int_equal(load(&m, &model), cases[i].want);
    TB_ASSERT_CONTAINS(tb_last_error(), cases[i].needle);
  }
  /* Two imports of one domain ("ai.onnx" is the default domain too). */
  pbw g = relu_graph(NULL), m = pbw_model(&g), op = {0};
  pbw_str(&op, 1, "ai.onnx");
  pbw_int(&op, 2, 13);
  pbw_msg(&m, 8, &op);
  tb_model *model;
  assert_int_equal(load(&m, &model), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "lists domain 'ai.onnx' twice");
  /* A wire type that does not fit: ir_version as a string. */
  pbw bad = {0};
  pbw_str(&bad, 1, "8");
  assert_int_equal(load(&bad, &model), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "field 'ir_version' (#1) at byte 0 has wire type 2");
  assert_int_equal(tb_model_load_memory("", 0, NULL, &model), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "empty");
  assert_int_equal(tb_model_load_memory(NULL, 4, NULL, &model), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_model_load("/nonexistent/model.onnx", &model), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "/nonexistent/model.onnx");
}

/* Attributes of every kind, and subgraphs of If (GRAPH) and a made-up op holding GRAPHS. */
static pbw attr(const char *name, int type) {
  pbw a = {0};
  pbw_str(&a, 1, name);
  if (type) pbw_int(&a, 20, type);
  return a;
}

static pbw small_graph(const char *name, const char *op) {
  pbw g = {0};
  pbw_node(&g, NULL, op, "x", name, NULL); /* uses the outer scope's x */
  pbw_str(&g, 2, name);
  int64_t d[1] = {3};
  pbw_value_info(&g, 12, name, FLOAT, d, 1);
  return g;
}

static void test_attributes_and_subgraphs(void **state) {
  (void)state;
  pbw attrs = {0}, a;
  a = attr("alpha", 1);
  pbw_float(&a, 2, 0.25f);
  pbw_msg(&attrs, 5, &a);
  a = attr("axis", 2);
  pbw_int(&a, 3, -1);
  pbw_msg(&attrs, 5, &a);
  a = attr("mode", 3);
  pbw_str(&a, 4, "linear");
  pbw_msg(&attrs, 5, &a);
  a = attr("kernel_shape", 7);
  int64_t ks[2] = {3, 5};
  pbw_packed_ints(&a, 8, ks, 2);
  pbw_msg(&attrs, 5, &a);
  a = attr("pads", 7); /* unpacked ints, as some exporters write them */
  pbw_int(&a, 8, 1);
  pbw_int(&a, 8, 2);
  pbw_msg(&attrs, 5, &a);
  a = attr("scales", 6);
  float sc[2] = {0.5f, 2.0f};
  pbw_packed_floats(&a, 7, sc, 2);
  pbw_msg(&attrs, 5, &a);
  a = attr("names", 8);
  pbw_str(&a, 9, "a");
  pbw_str(&a, 9, "bc");
  pbw_msg(&attrs, 5, &a);
  a = attr("value", 4);
  pbw t = {0};
  int64_t d2[1] = {2};
  pbw_tensor_head(&t, "v", INT64, d2, 1);
  pbw_packed_ints(&t, 7, ks, 2);
  pbw_msg(&a, 5, &t);
  pbw_msg(&attrs, 5, &a);
  a = attr("untyped", 0); /* old files: type left out, taken from the value */
  pbw_int(&a, 3, 7);
  pbw_msg(&attrs, 5, &a);
  pbw extra = {0};
  pbw_node(&extra, "k", "Kitchen", "x", "k_out", &attrs);

  pbw if_attrs = {0}, then_g = small_graph("then_out", "Relu"), else_g = small_graph("else_out", "Neg");
  a = attr("then_branch", 5);
  pbw_msg(&a, 6, &then_g);
  pbw_msg(&if_attrs, 5, &a);
  a = attr("else_branch", 5);
  pbw_msg(&a, 6, &else_g);
  pbw_msg(&if_attrs, 5, &a);
  pbw_node(&extra, "if1", "If", "cond", "if_out", &if_attrs);
  pbw many = {0}, g1 = small_graph("g1", "Abs"), g2 = small_graph("g2", "Exp");
  a = attr("bodies", 10);
  pbw_msg(&a, 11, &g1);
  pbw_msg(&a, 11, &g2);
  pbw_msg(&many, 5, &a);
  pbw_node(&extra, "multi", "Multi", "x", "m_out", &many);

  pbw g = relu_graph(&extra), m = pbw_model(&g);
  tb_model *model;
  TB_ASSERT_OK(load(&m, &model));
  tb_graph *gr = model->ir->graph;
  assert_int_equal(gr->n_nodes, 4);
  const tb_node *k = &gr->nodes[1];
  assert_int_equal(k->n_attrs, 9);
  float f;
  int64_t i;
  const char *s;
  TB_ASSERT_OK(tb_attr_float(gr, k, "alpha", 0, &f));
  assert_true(f == 0.25f);
  TB_ASSERT_OK(tb_attr_int(gr, k, "axis", 0, &i));
  assert_int_equal(i, -1);
  TB_ASSERT_OK(tb_attr_int(gr, k, "untyped", 0, &i));
  assert_int_equal(i, 7);
  TB_ASSERT_OK(tb_attr_string(gr, k, "mode", "", &s));
  assert_string_equal(s, "linear");
  const int64_t *ints;
  size_t n;
  TB_ASSERT_OK(tb_attr_ints(gr, k, "kernel_shape", &ints, &n));
  assert_int_equal(n, 2);
  assert_int_equal(ints[1], 5);
  TB_ASSERT_OK(tb_attr_ints(gr, k, "pads", &ints, &n));
  assert_int_equal(n, 2);
  assert_int_equal(ints[0], 1);
  const float *floats;
  TB_ASSERT_OK(tb_attr_floats(gr, k, "scales", &floats, &n));
  assert_int_equal(n, 2);
  assert_true(floats[1] == 2.0f);
  const tb_attr *names = tb_node_attr(k, "names");
  assert_int_equal(names->type, TB_ATTR_STRINGS);
  assert_int_equal(names->count, 2);
  assert_string_equal(names->strings[1], "bc");
  const tb_ir_tensor *value;
  TB_ASSERT_OK(tb_attr_tensor(gr, k, "value", &value));
  assert_int_equal(value->dtype, TB_DTYPE_I64);
  assert_int_equal(((const int64_t *)value->data)[1], 5);

  const tb_node *iff = &gr->nodes[2];
  tb_graph *then_branch, *else_branch;
  TB_ASSERT_OK(tb_attr_graph(gr, iff, "then_branch", &then_branch));
  TB_ASSERT_OK(tb_attr_graph(gr, iff, "else_branch", &else_branch));
  assert_ptr_equal(then_branch->parent, gr);
  assert_string_equal(then_branch->name, "then_out");
  assert_string_equal(else_branch->nodes[0].op_type, "Neg");
  assert_int_equal(else_branch->n_outputs, 1);
  const tb_attr *bodies = tb_node_attr(&gr->nodes[3], "bodies");
  assert_int_equal(bodies->type, TB_ATTR_GRAPHS);
  assert_int_equal(bodies->count, 2);
  assert_string_equal(bodies->graphs[1]->nodes[0].op_type, "Exp");
  assert_ptr_equal(bodies->graphs[0]->parent, gr);
  tb_model_destroy(model);
}

static void expect_attr_error(pbw *a, tb_status want, const char *needle) {
  pbw attrs = {0}, extra = {0};
  pbw_msg(&attrs, 5, a);
  pbw_node(&extra, "conv1", "Conv", "x", "c", &attrs);
  expect_graph_error(&extra, want, "node 'conv1' (Conv): attribute", needle);
}

static void test_attribute_errors(void **state) {
  (void)state;
  pbw a = attr("kernel_shape", 99);
  expect_attr_error(&a, TB_ERR_MODEL, "'kernel_shape': type 99 is not an ONNX attribute type");
  a = attr("kernel_shape", 2);
  float f1[1] = {1};
  pbw_packed_floats(&a, 7, f1, 1);
  expect_attr_error(&a, TB_ERR_MODEL, "'kernel_shape': has type INT but holds 'floats', a FLOATS value");
  a = attr("", 2);
  expect_attr_error(&a, TB_ERR_MODEL, "has no name");
  a = attr("t", 4);
  expect_attr_error(&a, TB_ERR_MODEL, "'t': has type TENSOR but no value");
  a = attr("sp", 11);
  pbw sp = {0};
  pbw_msg(&a, 22, &sp);
  expect_attr_error(&a, TB_ERR_UNSUPPORTED, "'sp': sparse tensor attributes are not supported");
  a = attr("r", 2);
  pbw_str(&a, 21, "outer");
  expect_attr_error(&a, TB_ERR_MODEL, "ref_attr_name");
  a = attr("alpha", 1);
  pbw_int(&a, 2, 3); /* f as a varint */
  expect_attr_error(&a, TB_ERR_MODEL, "field 'f' (#2)");

  /* Two attributes with one name. */
  pbw attrs = {0}, extra = {0};
  a = attr("axis", 2);
  pbw_msg(&attrs, 5, &a);
  a = attr("axis", 2);
  pbw_msg(&attrs, 5, &a);
  pbw_node(&extra, "c2", "Concat", "x", "c", &attrs);
  expect_graph_error(&extra, TB_ERR_MODEL, "node 'c2' (Concat): attribute 'axis' is given twice", NULL);

  /* An error inside a subgraph names the path down to it, and frees what was built. */
  pbw inner = small_graph("body", "Relu"), bad = {0};
  pbw_node(&inner, "deep", NULL, "x", "y2", NULL);
  a = attr("then_branch", 5);
  pbw_msg(&a, 6, &inner);
  pbw_msg(&bad, 5, &a);
  pbw_node(&extra, "if1", "If", "cond", "o", &bad);
  expect_graph_error(&extra, TB_ERR_MODEL, "node 'if1' (If): attribute 'then_branch': graph 'body': node 'deep' (?)",
                     "has no op_type");
}

/* Subgraphs nested past the limit: an error, not a stack overflow. */
static void test_subgraph_depth_limit(void **state) {
  (void)state;
  pbw g = small_graph("leaf", "Relu");
  for (int depth = 0; depth < 40; depth++) {
    pbw a = attr("then_branch", 5), attrs = {0}, outer = {0};
    pbw_msg(&a, 6, &g);
    pbw_msg(&attrs, 5, &a);
    pbw_node(&outer, "if", "If", "c", "o", &attrs);
    pbw_str(&outer, 2, "level");
    g = outer;
  }
  pbw m = pbw_model(&g);
  tb_model *model;
  assert_int_equal(load(&m, &model), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "subgraphs nest more than 32 levels deep");
}

/* Sequence and optional value types, and a map. */
static void test_value_kinds(void **state) {
  (void)state;
  pbw extra = {0};
  const unsigned kinds[3] = {4, 9, 5};
  const char *names[3] = {"seq", "opt", "map"};
  for (int i = 0; i < 3; i++) {
    pbw tensor = {0}, inner = {0}, wrap = {0}, type = {0}, vi = {0};
    pbw_int(&tensor, 1, INT64);
    pbw_msg(&inner, 1, &tensor);
    pbw_msg(&wrap, 1, &inner);
    pbw_msg(&type, kinds[i], &wrap);
    pbw_str(&vi, 1, names[i]);
    pbw_msg(&vi, 2, &type);
    pbw_msg(&extra, 11, &vi);
  }
  pbw g = relu_graph(&extra), m = pbw_model(&g);
  tb_model *model;
  TB_ASSERT_OK(load(&m, &model));
  const tb_graph *gr = model->ir->graph;
  const tb_value_type *seq = &gr->values[tb_graph_find(gr, "seq")].type;
  assert_int_equal(seq->kind, TB_VALUE_SEQUENCE);
  assert_true(seq->has_dtype);
  assert_int_equal(seq->dtype, TB_DTYPE_I64);
  assert_int_equal(gr->values[tb_graph_find(gr, "opt")].type.kind, TB_VALUE_OPTIONAL);
  assert_int_equal(gr->values[tb_graph_find(gr, "map")].type.kind, TB_VALUE_MAP);
  assert_int_equal(tb_model_input_count(model), 4);
  tb_model_destroy(model);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_relu_model_io_and_properties),
      cmocka_unit_test(test_tensor_data_fields),
      cmocka_unit_test(test_tensor_errors),
      cmocka_unit_test(test_graph_structure_errors),
      cmocka_unit_test(test_model_level_errors),
      cmocka_unit_test(test_attributes_and_subgraphs),
      cmocka_unit_test(test_attribute_errors),
      cmocka_unit_test(test_subgraph_depth_limit),
      cmocka_unit_test(test_value_kinds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
