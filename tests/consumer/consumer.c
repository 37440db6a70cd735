/* A user's program: discover devices, pick one, print it. */
#include <stdio.h>
#include <tensorbridge/tensorbridge.h>

int main(void) {
  tb_device_list *list = NULL;
  if (tb_discover(NULL, &list) != TB_OK) {
    fprintf(stderr, "discover failed: %s\n", tb_last_error());
    return 1;
  }
  printf("tensorbridge %s, devices: %zu\n", tb_version(), tb_device_list_count(list));
  tb_selection *sel = NULL;
  if (tb_select(list, "cpu", &sel) != TB_OK) {
    fprintf(stderr, "select failed: %s\n", tb_last_error());
    tb_device_list_destroy(list);
    return 1;
  }
  printf("selected %s\n", tb_selection_device(sel)->device);
  tb_selection_destroy(sel);
  tb_device_list_destroy(list);
  return 0;
}
