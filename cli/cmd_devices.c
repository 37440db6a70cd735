/* `tb devices`: one table line per device, usable or not, with why and what to do for the unusable
 * ones, then the backends that found nothing with their summaries. --json prints the library's
 * rendering of the whole list. */
#include <stdio.h>
#include "args.h"
#include "common.h"
#include "format.h"
#include "table.h"

static const char help[] =
    "Usage: tb devices [--json] [--all]\n"
    "\n"
    "List every device of this machine, usable or not: one line per device with its DEVICE string\n"
    "(what `tb select` and TB_BACKEND accept), NAME, TYPE, ARCH (architecture), MEMORY (free/total\n"
    "where known, '-' where not) and USABLE. An unusable device has two more lines: why, and the fix.\n"
    "Then one line per backend that found no device, with what it found instead.\n"
    "\n"
    "Options:\n"
    "  --json      print the device list as JSON (keys in docs/json.md)\n"
    "  --all       add the columns VENDOR, DRIVER, PCI and ROUTES, and a line for every backend\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit codes: 0 success, 1 discovery failed, 2 usage error.\n";

static int print_json(const tb_device_list *list) {
  char *json = NULL;
  tb_status status = tb_device_list_to_json(list, &json);
  if (status != TB_OK) {
    tbc_error("%s", tb_last_error());
    return tbc_exit_for_status(status);
  }
  printf("%s\n", json);
  tb_free(json);
  return TBC_EXIT_OK;
}

/* The row of one device, and its why/fix notes when it is unusable. */
static bool add_device(tbc_table *table, const tb_device_info *d, bool all) {
  char memory[64];
  tbc_format_memory(d, memory, sizeof memory);
  const char *usable = d->usable ? "yes" : "no";
  const char *type = tb_device_type_name(d->type);
  const char *arch = tbc_or_dash(d->architecture);
  bool ok;
  if (all) {
    const char *cells[] = {d->device, tbc_or_dash(d->name), tbc_or_dash(d->vendor), type, arch, memory,
                           tbc_or_dash(d->driver_version), tbc_or_dash(d->pci_bus_id), tbc_or_dash(d->routes), usable};
    ok = tbc_table_row(table, cells);
  } else {
    const char *cells[] = {d->device, tbc_or_dash(d->name), type, arch, memory, usable};
    ok = tbc_table_row(table, cells);
  }
  if (ok && !d->usable) {
    char note[2048];
    snprintf(note, sizeof note, "  why: %s", d->reason[0] ? d->reason : "the backend gave no reason");
    ok = tbc_table_note(table, note);
    if (ok && d->fix[0]) {
      snprintf(note, sizeof note, "  fix: %s", d->fix);
      ok = tbc_table_note(table, note);
    }
  }
  return ok;
}

static int print_table(const tb_device_list *list, bool all) {
  static const char *const headers[] = {"DEVICE", "NAME", "TYPE", "ARCH", "MEMORY", "USABLE"};
  static const char *const all_headers[] = {"DEVICE", "NAME",   "VENDOR", "TYPE",   "ARCH",
                                            "MEMORY", "DRIVER", "PCI",    "ROUTES", "USABLE"};
  tbc_table *table = all ? tbc_table_new(10, all_headers) : tbc_table_new(6, headers);
  bool ok = table != NULL;
  for (size_t i = 0; ok && i < tb_device_list_count(list); i++) ok = add_device(table, tb_device_list_get(list, i), all);
  if (!ok) {
    tbc_table_free(table);
    tbc_error("out of memory while building the device table");
    return TBC_EXIT_FAILURE;
  }
  tbc_table_print(table, stdout);
  tbc_table_free(table);

  bool heading = false;
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    const tb_backend_report *r = tb_device_list_report(list, (tb_backend_kind)k);
    if (!r || (r->device_count > 0 && !all)) continue;
    if (!heading) fputc('\n', stdout);
    heading = true;
    printf("%s: %s\n", tb_backend_name((tb_backend_kind)k), tbc_or_dash(r->summary));
  }
  return TBC_EXIT_OK;
}

int tbc_cmd_devices(int argc, char **argv) {
  bool json = false, all = false;
  const tbc_option options[] = {{"--json", &json}, {"--all", &all}, {NULL, NULL}};
  tbc_args args;
  int code = tbc_parse_args("devices", argc, argv, options, 0, &args);
  if (code != TBC_EXIT_OK) return code;
  if (args.help) {
    fputs(help, stdout);
    return TBC_EXIT_OK;
  }
  tb_device_list *list = NULL;
  code = tbc_discover(&list);
  if (code != TBC_EXIT_OK) return code;
  code = json ? print_json(list) : print_table(list, all);
  tb_device_list_destroy(list);
  return code;
}
