/* The load benchmark on TensorBridge: tb_model_load and the weight bytes it reports. */
#include <stdio.h>
#include <tensorbridge/tensorbridge.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  tb_model *m = NULL;
  if (tb_model_load(argv[1], &m) != TB_OK) {
    fprintf(stderr, "%s\n", tb_last_error());
    return 1;
  }
  printf("tensorbridge: %s weight bytes\n", tb_model_property(m, "weight_bytes"));
  tb_model_destroy(m);
  return 0;
}
