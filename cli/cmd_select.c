/* `tb select [REQUEST]`: the device a request picks, as one line a script can use; --explain says why
 * and what happened to every other candidate; --json gives the same as data. */
#include <stdio.h>
#include <string.h>
#include "args.h"
#include "common.h"

static const char help[] =
    "Usage: tb select [REQUEST] [--explain | --json]\n"
    "\n"
    "Print the device that REQUEST picks, as one line such as 'cuda:0', so scripts can use it:\n"
    "  DEVICE=$(tb select) || exit\n"
    "REQUEST is 'auto', a backend name or alias (cpu, cuda, nvidia, rocm, amd, hip, xpu, intel,\n"
    "level_zero, tpu, xla, vulkan, opencl), or one device (cuda:1). Without REQUEST, the TB_BACKEND\n"
    "environment variable is used, or 'auto' when it is unset or empty. A named backend is never\n"
    "replaced by another: when it has nothing usable, tb select fails and says why.\n"
    "\n"
    "Options:\n"
    "  --explain   print the decision: the request, where it came from, and every candidate with\n"
    "              its rank and verdict\n"
    "  --json      print the selection as JSON (keys in docs/json.md)\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit codes: 0 a device was selected, 1 discovery failed, 2 usage error or unknown\n"
    "backend/device name (also from TB_BACKEND), 3 the requested backend or device is unavailable.\n";

static int print_selection(const tb_selection *selection, bool explain, bool json) {
  if (json) {
    char *text = NULL;
    tb_status status = tb_selection_to_json(selection, &text);
    if (status != TB_OK) {
      tbc_error("%s", tb_last_error());
      return tbc_exit_for_status(status);
    }
    printf("%s\n", text);
    tb_free(text);
    return TBC_EXIT_OK;
  }
  if (explain) {
    const char *text = tb_selection_explain(selection);
    printf("%s", text ? text : "");
    if (!text || !text[0] || text[strlen(text) - 1] != '\n') fputc('\n', stdout);
    return TBC_EXIT_OK;
  }
  const tb_device_info *device = tb_selection_device(selection);
  if (!device) {
    tbc_error("the selection has no device (a bug in TensorBridge; please report it)");
    return TBC_EXIT_FAILURE;
  }
  printf("%s\n", device->device);
  return TBC_EXIT_OK;
}

int tbc_cmd_select(int argc, char **argv) {
  bool explain = false, json = false;
  const tbc_option options[] = {{"--explain", &explain}, {"--json", &json}, {NULL, NULL}};
  tbc_args args;
  int code = tbc_parse_args("select", argc, argv, options, 1, &args);
  if (code != TBC_EXIT_OK) return code;
  if (args.help) {
    fputs(help, stdout);
    return TBC_EXIT_OK;
  }
  if (explain && json) {
    tbc_error("'tb select' takes --explain or --json, not both; see 'tb select --help'");
    return TBC_EXIT_USAGE;
  }
  tb_device_list *list = NULL;
  code = tbc_discover(&list);
  if (code != TBC_EXIT_OK) return code;
  tb_selection *selection = NULL;
  tb_status status = tb_select(list, args.positional_count ? args.positional[0] : NULL, &selection);
  if (status != TB_OK) {
    tbc_error("%s", tb_last_error());
    code = tbc_exit_for_status(status);
  } else {
    code = print_selection(selection, explain, json);
    tb_selection_destroy(selection);
  }
  tb_device_list_destroy(list);
  return code;
}
