/* libFuzzer harness for the ONNX reader: every input is loaded as a model (tb_model_load_memory) and as a
 * lone TensorProto (the conformance .pb reader). A load may succeed or fail, but a failure must be one of
 * the reader's documented statuses with a sentence; anything else, a crash, a leak or a sanitizer report
 * is a finding. Built by tests/fuzz/CMakeLists.txt (TB_FUZZ=ON, clang); run by scripts/fuzz.sh. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <tensorbridge/model.h>
#include "ir/ir.h"
#include "model/onnx/onnx_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_status(tb_status st) {
  if (st == TB_OK) return;
  if (st != TB_ERR_MODEL && st != TB_ERR_UNSUPPORTED && st != TB_ERR_OUT_OF_MEMORY) __builtin_trap();
  if (strlen(tb_last_error()) < 10) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tb_model *model = NULL;
  tb_status st = tb_model_load_memory(data, size, NULL, &model);
  check_status(st);
  if (st == TB_OK) {
    for (size_t i = 0; i < tb_model_input_count(model); i++) {
      tb_model_io io = {.size = sizeof io};
      if (tb_model_input(model, i, &io) != TB_OK || !io.name) __builtin_trap();
    }
    for (size_t i = 0; i < tb_model_output_count(model); i++) {
      tb_model_io io = {.size = sizeof io};
      if (tb_model_output(model, i, &io) != TB_OK || !io.name) __builtin_trap();
    }
    if (!tb_model_property(model, "weight_bytes")) __builtin_trap();
    tb_model_destroy(model);
  }
  tb_ir_model *holder = tb_ir_model_new();
  if (!holder) return 0;
  tb_ir_tensor *t;
  st = tb_onnx_read_tensor(holder, data, size, "fuzz.pb", &t);
  check_status(st);
  if (st == TB_OK && t->nbytes) {
    uint8_t sum = 0;
    const uint8_t *p = t->data;
    for (size_t i = 0; i < t->nbytes; i++) sum ^= p[i]; /* every byte must be readable */
    if (sum == 0 && t->nbytes == SIZE_MAX) __builtin_trap(); /* keeps the loop */
  }
  tb_ir_model_destroy(holder);
  return 0;
}
