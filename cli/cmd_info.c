/* `tb info [BACKEND|DEVICE]`: every field the library knows about each device of a backend, of one
 * device, or of all devices; --capabilities prints the architecture capability table instead, and
 * --memory the memory statistics of each device (info_memory.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "common.h"
#include "format.h"
#include "info_memory.h"
#include "json_out.h"
#include "table.h"

static const char help[] =
    "Usage: tb info [BACKEND|DEVICE] [--json]\n"
    "       tb info --capabilities [--json]\n"
    "       tb info --memory [BACKEND|DEVICE] [--json]\n"
    "\n"
    "Print everything known about the devices of BACKEND (cpu, cuda, rocm, xpu, tpu, vulkan, opencl,\n"
    "or an alias: nvidia, amd, hip, intel, level_zero, xla), about one DEVICE (cuda:0, cpu, vulkan:1,\n"
    "pci:0000:3b:00.0), or about every device when none is named: each field of the device info,\n"
    "the dtypes with native arithmetic, the features, the backend's properties and the other routes\n"
    "to the same hardware. A backend that found no device prints what it found instead.\n"
    "\n"
    "Options:\n"
    "  --json          print a JSON array of device objects (keys in docs/json.md)\n"
    "  --capabilities  print the capability table: for each architecture id, the memory type, dtypes\n"
    "                  and features, then its matrix unit and the documents the row comes from\n"
    "  --memory        create a backend on each usable device of BACKEND (every usable device when\n"
    "                  none is named; a DEVICE named alone is tried even when unusable) and print its\n"
    "                  memory: allocated, requested, reserved, peaks, allocation counts, the driver's\n"
    "                  free and total memory (or \"unknown\") and the limit; with --json an array of\n"
    "                  {\"device\", \"memory\"} objects, or {\"device\", \"error\", \"status\"} for a\n"
    "                  device whose backend cannot be created (docs/memory.md)\n"
    "  -h, --help      show this help\n"
    "\n"
    "Exit codes: 0 success, 1 discovery failed, 2 usage error or unknown backend/device name,\n"
    "3 (--memory) no device of the request could be used.\n";

/* ---- one device, for people ------------------------------------------------------------------ */

static void field(const char *key, const char *value) { printf("  %-19s %s\n", key, tbc_or_dash(value)); }

static void memory_field(const char *key, bool known, uint64_t bytes) {
  char text[96], size[32];
  if (known) {
    tbc_format_bytes(bytes, size, sizeof size);
    snprintf(text, sizeof text, "%s (%llu bytes)", size, (unsigned long long)bytes);
  } else {
    snprintf(text, sizeof text, "unknown");
  }
  field(key, text);
}

static void print_device(const tb_device_info *d) {
  char text[2048];
  printf("%s: %s\n", d->device, tbc_or_dash(d->name));
  field("backend:", tb_backend_name(d->backend));
  if (d->index >= 0)
    snprintf(text, sizeof text, "%d", d->index);
  else
    snprintf(text, sizeof text, "none (seen on the bus only)");
  field("index:", text);
  field("name:", d->name);
  field("vendor:", d->vendor);
  field("type:", tb_device_type_name(d->type));
  field("architecture:", d->architecture);
  field("arch id:", d->arch_id);
  if (d->compute_major || d->compute_minor)
    snprintf(text, sizeof text, "%d.%d", d->compute_major, d->compute_minor);
  else
    snprintf(text, sizeof text, "-");
  field("compute capability:", text);
  if (d->compute_units > 0)
    snprintf(text, sizeof text, "%d", d->compute_units);
  else
    snprintf(text, sizeof text, "unknown");
  field("compute units:", text);
  memory_field("memory total:", d->memory_total_known, d->memory_total);
  memory_field("memory free:", d->memory_free_known, d->memory_free);
  field("memory type:", d->memory_type);
  field("driver version:", d->driver_version);
  field("pci bus id:", d->pci_bus_id);
  field("uuid:", d->uuid);
  field("usable:", d->usable ? "yes" : "no");
  if (!d->usable) {
    field("reason:", d->reason);
    field("fix:", d->fix);
  }
  tbc_format_dtypes(d->dtypes, " ", text, sizeof text);
  field("dtypes:", text);
  tbc_format_features(d->features, " ", text, sizeof text);
  field("features:", text);
  field("capability source:", d->capability_source);
  snprintf(text, sizeof text, "%d", d->physical_id);
  field("physical id:", text);
  field("routes:", d->routes);
  if (d->property_count == 0) {
    field("properties:", "-");
    return;
  }
  printf("  properties:\n");
  for (size_t i = 0; i < d->property_count; i++)
    printf("    %s: %s\n", d->properties[i].key, d->properties[i].value);
}

/* ---- selection of the devices to show --------------------------------------------------------- */

typedef struct target {
  bool all;                    /* every device */
  bool backend;                /* every device of `kind` */
  tb_backend_kind kind;
  const tb_device_info *one;   /* a single device */
} target;

/* Resolve NAME (a backend, an alias, "auto" for all, or a device string). */
static int resolve(const tb_device_list *list, const char *name, target *out) {
  memset(out, 0, sizeof *out);
  if (!name) {
    out->all = true;
    return TBC_EXIT_OK;
  }
  bool is_auto = false;
  tb_status status = tb_backend_parse(name, &out->kind, &is_auto);
  if (status == TB_OK) {
    out->all = is_auto;
    out->backend = !is_auto;
    return TBC_EXIT_OK;
  }
  if (!strchr(name, ':')) {
    tbc_error("%s", tb_last_error());
    return tbc_exit_for_status(status);
  }
  status = tb_device_list_find(list, name, &out->one);
  if (status != TB_OK) {
    tbc_error("%s", tb_last_error());
    return tbc_exit_for_status(status);
  }
  return TBC_EXIT_OK;
}

static bool wanted(const target *t, const tb_device_info *d) {
  return t->all || (t->backend && d->backend == t->kind) || t->one == d;
}

static int print_json(const tb_device_list *list, const target *t) {
  tbc_buf out = {0};
  tbc_buf_add(&out, "[");
  size_t shown = 0;
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (!wanted(t, d)) continue;
    char *json = NULL;
    tb_status status = tb_device_info_to_json(d, &json);
    if (status != TB_OK) {
      tbc_error("%s", tb_last_error());
      tbc_buf_free(&out);
      return tbc_exit_for_status(status);
    }
    tbc_buf_add(&out, shown++ ? ",\n" : "\n");
    tbc_buf_add(&out, json);
    tb_free(json);
  }
  tbc_buf_add(&out, shown ? "\n]" : "]");
  int code = TBC_EXIT_OK;
  if (out.failed) {
    tbc_error("out of memory while writing JSON");
    code = TBC_EXIT_FAILURE;
  } else {
    printf("%s\n", out.data);
  }
  tbc_buf_free(&out);
  return code;
}

static int print_text(const tb_device_list *list, const target *t) {
  size_t shown = 0;
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (!wanted(t, d)) continue;
    if (shown++) fputc('\n', stdout);
    print_device(d);
  }
  if (shown == 0 && t->backend) {
    const tb_backend_report *r = tb_device_list_report(list, t->kind);
    printf("%s: no devices: %s\n", tb_backend_name(t->kind), tbc_or_dash(r ? r->summary : NULL));
    if (r && r->fix[0]) printf("  fix: %s\n", r->fix);
  }
  return TBC_EXIT_OK;
}

/* ---- --memory: the usable devices of the target ------------------------------------------------- */

static int print_memory(const tb_device_list *list, const target *t, bool json) {
  size_t n = tb_device_list_count(list), count = 0;
  const tb_device_info **devices = calloc(n ? n : 1, sizeof *devices);
  if (!devices) {
    tbc_error("out of memory while listing devices");
    return TBC_EXIT_FAILURE;
  }
  for (size_t i = 0; i < n; i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (wanted(t, d) && (d->usable || t->one == d)) devices[count++] = d;
  }
  int code = TBC_EXIT_OK;
  if (count) {
    code = tbc_info_memory(devices, count, json);
  } else if (t->backend) {
    const tb_backend_report *r = tb_device_list_report(list, t->kind);
    tbc_error("%s: no usable device: %s%s%s", tb_backend_name(t->kind), tbc_or_dash(r ? r->summary : NULL),
              r && r->fix[0] ? "; fix: " : "", r && r->fix[0] ? r->fix : "");
    code = TBC_EXIT_UNAVAILABLE;
  } else {
    tbc_error("no usable device found; see 'tb doctor'");
    code = TBC_EXIT_UNAVAILABLE;
  }
  free(devices);
  return code;
}

/* ---- the capability table -------------------------------------------------------------------- */

/* Row i of the table, or an error exit code (the message printed) when the library refuses it. */
static int capability_row(size_t i, tb_capability_row *row) {
  memset(row, 0, sizeof *row);
  row->size = sizeof *row;
  tb_status status = tb_capability_table_get(i, row);
  if (status != TB_OK) {
    tbc_error("%s", tb_last_error());
    return TBC_EXIT_FAILURE; /* i < count: the library should not refuse it */
  }
  return TBC_EXIT_OK;
}

/* Append a JSON array of the names of the bits set in `bits` (count names, from name_of). */
static void json_names(tbc_buf *b, uint64_t bits, int count, const char *(*name_of)(int)) {
  tbc_buf_add(b, "[");
  for (int i = 0, n = 0; i < count; i++) {
    if (!(bits & ((uint64_t)1u << (unsigned)i))) continue;
    if (n++) tbc_buf_add(b, ",");
    tbc_json_string(b, name_of(i));
  }
  tbc_buf_add(b, "]");
}

static const char *dtype_name(int i) { return tb_dtype_name((tb_dtype)i); }
static const char *feature_name(int i) { return tb_feature_name((tb_feature)i); }

static void capability_json(tbc_buf *b, const tb_capability_row *row) {
  bool first = true;
  tbc_buf_add(b, "{");
  tbc_json_key(b, &first, "vendor");
  tbc_json_string(b, row->vendor);
  tbc_json_key(b, &first, "key");
  tbc_json_string(b, row->key);
  tbc_json_key(b, &first, "architecture");
  tbc_json_string(b, row->architecture);
  tbc_json_key(b, &first, "dtypes");
  json_names(b, row->dtypes, TB_DTYPE_COUNT, dtype_name);
  tbc_json_key(b, &first, "features");
  json_names(b, row->features, TB_FEATURE_COUNT, feature_name);
  tbc_json_key(b, &first, "matrix_unit");
  tbc_json_string(b, row->matrix_unit);
  tbc_json_key(b, &first, "memory_type");
  tbc_json_string(b, row->memory_type);
  tbc_json_key(b, &first, "source");
  tbc_json_string(b, row->source);
  tbc_buf_add(b, "}");
}

static int print_capabilities(bool json) {
  static const char *const headers[] = {"VENDOR", "KEY", "ARCHITECTURE", "MEMORY", "DTYPES", "FEATURES"};
  size_t count = tb_capability_table_count();
  tbc_table *table = json ? NULL : tbc_table_new(6, headers);
  tbc_buf out = {0};
  bool ok = json || table;
  int code = TBC_EXIT_OK;
  if (json) tbc_buf_add(&out, "[");
  for (size_t i = 0; ok && code == TBC_EXIT_OK && i < count; i++) {
    tb_capability_row row;
    code = capability_row(i, &row);
    if (code != TBC_EXIT_OK) break;
    if (json) {
      tbc_buf_add(&out, i ? ",\n" : "\n");
      capability_json(&out, &row);
      continue;
    }
    char dtypes[512], features[1024];
    tbc_format_dtypes(row.dtypes, ",", dtypes, sizeof dtypes);
    tbc_format_features(row.features, ",", features, sizeof features);
    const char *cells[] = {row.vendor, row.key, row.architecture, tbc_or_dash(row.memory_type), dtypes, features};
    char matrix_unit[512], source[2048];
    snprintf(matrix_unit, sizeof matrix_unit, "  matrix unit: %s", tbc_or_dash(row.matrix_unit));
    snprintf(source, sizeof source, "  source: %s", tbc_or_dash(row.source));
    ok = tbc_table_row(table, cells) && tbc_table_note(table, matrix_unit) && tbc_table_note(table, source);
  }
  if (json) tbc_buf_add(&out, count ? "\n]" : "]");
  if (code == TBC_EXIT_OK && (!ok || out.failed)) {
    tbc_error("out of memory while writing the capability table");
    code = TBC_EXIT_FAILURE;
  }
  if (code == TBC_EXIT_OK) {
    if (json)
      printf("%s\n", out.data);
    else
      tbc_table_print(table, stdout);
  }
  tbc_table_free(table);
  tbc_buf_free(&out);
  return code;
}

int tbc_cmd_info(int argc, char **argv) {
  bool json = false, capabilities = false, memory = false;
  const tbc_option options[] = {
      {"--json", &json}, {"--capabilities", &capabilities}, {"--memory", &memory}, {NULL, NULL}};
  tbc_args args;
  int code = tbc_parse_args("info", argc, argv, options, 1, &args);
  if (code != TBC_EXIT_OK) return code;
  if (args.help) {
    fputs(help, stdout);
    return TBC_EXIT_OK;
  }
  if (capabilities && memory) {
    tbc_error("'tb info' takes --capabilities or --memory, not both; see 'tb info --help'");
    return TBC_EXIT_USAGE;
  }
  if (capabilities) {
    if (args.positional_count) {
      tbc_error("'tb info --capabilities' takes no BACKEND or DEVICE, but got '%s'; see 'tb info --help'",
                args.positional[0]);
      return TBC_EXIT_USAGE;
    }
    return print_capabilities(json);
  }
  tb_device_list *list = NULL;
  code = tbc_discover(&list);
  if (code != TBC_EXIT_OK) return code;
  target t;
  code = resolve(list, args.positional_count ? args.positional[0] : NULL, &t);
  if (code == TBC_EXIT_OK && memory)
    code = print_memory(list, &t, json);
  else if (code == TBC_EXIT_OK)
    code = json ? print_json(list, &t) : print_text(list, &t);
  tb_device_list_destroy(list);
  return code;
}
