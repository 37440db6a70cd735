/* `tb ops [OP] [--json]`: every operator the library defines (domain, name), the opsets where its
 * definitions start, its first input's dtypes, and the kernels that compute it: the CPU's by level (O0
 * reference, O2 fast, O3 reduced precision, with the CPU features each needs) and the OpenCL and Vulkan
 * tables' (tb_op_info_get, tb_op_kernel_get). OP shows one operator with each of its kernels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "args.h"
#include "common.h"
#include "json_out.h"
#include "table.h"

static const char help[] =
    "Usage: tb ops [OP] [--json]\n"
    "\n"
    "List every operator TensorBridge runs: its domain and name, the opsets where its definitions\n"
    "start, the dtypes its first input takes, and which backends have a kernel for it from which level:\n"
    "the CPU's reference kernels run at every level, its fast kernels from O2, its bf16 kernels at O3\n"
    "(or O2 with --precision bf16); OpenCL and Vulkan kernels run at every level on the device (a kernel\n"
    "may still refuse a node's types at prepare: the node then runs on the CPU). OP (a name such as Conv,\n"
    "or domain.name such as tb.FusedConv; any case) shows that operator and each of its kernels.\n"
    "\n"
    "Options:\n"
    "  --json      print the operators as JSON (keys in docs/json.md)\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit codes: 0; 2 for a usage error or an operator that TensorBridge does not define.\n";

typedef struct op_entry {
  tb_op_info info;
  tb_op_kernel kernels[32];
  size_t kernel_count;
} op_entry;

static int load(size_t index, op_entry *e) {
  e->info.size = sizeof e->info;
  tb_status st = tb_op_info_get(index, &e->info);
  e->kernel_count = 0;
  for (size_t k = 0; st == TB_OK && k < e->info.kernel_count && k < sizeof e->kernels / sizeof e->kernels[0]; k++) {
    e->kernels[k].size = sizeof e->kernels[k];
    st = tb_op_kernel_get(index, k, &e->kernels[k]);
    e->kernel_count += st == TB_OK;
  }
  if (st == TB_OK) return TBC_EXIT_OK;
  tbc_error("%s", tb_last_error());
  return tbc_exit_for_status(st);
}

static void full_name(const tb_op_info *info, char *buf, size_t cap) {
  snprintf(buf, cap, "%s%s%s", info->domain, info->domain[0] ? "." : "", info->name);
}

static bool matches(const tb_op_info *info, const char *filter) {
  char full[160];
  full_name(info, full, sizeof full);
  return strcasecmp(info->name, filter) == 0 || strcasecmp(full, filter) == 0;
}

static void opsets_text(const tb_op_info *info, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < info->opset_count && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%d", i ? "," : "", info->opsets[i]);
}

static void dtypes_text(tb_dtype_set set, char *buf, size_t cap) {
  size_t len = 0;
  snprintf(buf, cap, "-");
  for (int d = 0; d < TB_DTYPE_COUNT && len < cap; d++)
    if (set & TB_DTYPE_BIT(d)) len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? "," : "", tb_dtype_name((tb_dtype)d));
}

/* The CPU column: "O0 reference, O2 fast, O3 bf16": each level and kind once; "(not on this CPU)" after
 * one none of whose variants this CPU can run. */
static void cpu_text(const op_entry *e, char *buf, size_t cap) {
  size_t len = 0;
  snprintf(buf, cap, "-");
  for (size_t i = 0; i < e->kernel_count && len < cap; i++) {
    const tb_op_kernel *k = &e->kernels[i];
    if (k->backend != TB_BACKEND_CPU) continue;
    bool shown = false, usable = false;
    for (size_t j = 0; j < e->kernel_count; j++) {
      const tb_op_kernel *o = &e->kernels[j];
      if (o->backend != TB_BACKEND_CPU || o->level != k->level || strcmp(o->kind, k->kind) != 0) continue;
      if (j < i) shown = true;
      usable |= o->usable;
    }
    if (shown) continue;
    len += (size_t)snprintf(buf + len, cap - len, "%s%s %s%s", len ? ", " : "", tb_opt_level_name(k->level), k->kind,
                            usable ? "" : " (not on this CPU)");
  }
}

static const char *device_text(const op_entry *e, tb_backend_kind backend) {
  for (size_t i = 0; i < e->kernel_count; i++)
    if (e->kernels[i].backend == backend) return "yes";
  return "-";
}

static int print_table(const op_entry *entries, size_t count, bool detailed) {
  static const char *const headers[] = {"OPERATOR", "OPSETS", "INPUT DTYPES", "CPU", "OPENCL", "VULKAN", "CUDA"};
  tbc_table *table = tbc_table_new(7, headers);
  bool ok = table != NULL;
  for (size_t i = 0; i < count && ok; i++) {
    const op_entry *e = &entries[i];
    char name[160], opsets[128], dtypes[160], cpu[256];
    full_name(&e->info, name, sizeof name);
    opsets_text(&e->info, opsets, sizeof opsets);
    dtypes_text(e->info.input_dtypes, dtypes, sizeof dtypes);
    cpu_text(e, cpu, sizeof cpu);
    const char *cells[] = {name,   opsets, dtypes, cpu, device_text(e, TB_BACKEND_OPENCL), device_text(e, TB_BACKEND_VULKAN),
                           device_text(e, TB_BACKEND_CUDA)};
    ok = tbc_table_row(table, cells);
    for (size_t k = 0; k < e->kernel_count && ok && detailed; k++) {
      const tb_op_kernel *kn = &e->kernels[k];
      char line[256];
      bool portable = kn->backend == TB_BACKEND_CPU && !kn->cpu_features[0];
      snprintf(line, sizeof line, "  kernel: %s %s %s (%s)", tb_backend_name(kn->backend), tb_opt_level_name(kn->level),
               kn->kind, portable ? "portable C" : kn->cpu_features[0] ? kn->cpu_features : "on the device");
      if (!kn->usable) snprintf(line + strlen(line), sizeof line - strlen(line), ": not on this CPU");
      ok = tbc_table_note(table, line);
    }
  }
  if (ok) tbc_table_print(table, stdout);
  tbc_table_free(table);
  if (!ok) {
    tbc_error("out of memory printing the operator table");
    return TBC_EXIT_FAILURE;
  }
  if (!detailed) {
    size_t reference = 0, cuda = 0;
    for (size_t i = 0; i < count; i++) {
      bool cpu_reference = false;
      for (size_t k = 0; k < entries[i].kernel_count; k++)
        cpu_reference |= entries[i].kernels[k].backend == TB_BACKEND_CPU && entries[i].kernels[k].level == TB_LEVEL_O0;
      reference += cpu_reference;
      cuda += cpu_reference && strcmp(device_text(&entries[i], TB_BACKEND_CUDA), "yes") == 0;
    }
    printf("%zu operators\n%zu of the %zu operators the CPU reference runs have a CUDA kernel\n", count, cuda, reference);
  }
  return TBC_EXIT_OK;
}

static int print_json(const op_entry *entries, size_t count) {
  tbc_buf b = {0};
  tbc_buf_add(&b, "{\"operators\": [");
  for (size_t i = 0; i < count; i++) {
    const op_entry *e = &entries[i];
    tbc_buf_add(&b, i ? ", {" : "{");
    bool first = true;
    tbc_json_key(&b, &first, "domain");
    tbc_json_string(&b, e->info.domain);
    tbc_json_key(&b, &first, "name");
    tbc_json_string(&b, e->info.name);
    tbc_json_key(&b, &first, "opsets");
    tbc_buf_add(&b, "[");
    for (size_t s = 0; s < e->info.opset_count; s++) tbc_buf_addf(&b, "%s%d", s ? ", " : "", e->info.opsets[s]);
    tbc_buf_add(&b, "]");
    tbc_json_key(&b, &first, "input_dtypes");
    tbc_buf_add(&b, "[");
    for (int d = 0, n = 0; d < TB_DTYPE_COUNT; d++)
      if (e->info.input_dtypes & TB_DTYPE_BIT(d)) {
        tbc_buf_add(&b, n++ ? ", " : "");
        tbc_json_string(&b, tb_dtype_name((tb_dtype)d));
      }
    tbc_buf_add(&b, "]");
    tbc_json_key(&b, &first, "fast_cpu_kernel");
    tbc_buf_add(&b, e->info.fast_cpu_kernel ? "true" : "false");
    tbc_json_key(&b, &first, "kernels");
    tbc_buf_add(&b, "[");
    for (size_t k = 0; k < e->kernel_count; k++) {
      const tb_op_kernel *kn = &e->kernels[k];
      bool kfirst = true;
      tbc_buf_add(&b, k ? ", {" : "{");
      tbc_json_key(&b, &kfirst, "backend");
      tbc_json_string(&b, tb_backend_name(kn->backend));
      tbc_json_key(&b, &kfirst, "level");
      tbc_json_string(&b, tb_opt_level_name(kn->level));
      tbc_json_key(&b, &kfirst, "kind");
      tbc_json_string(&b, kn->kind);
      tbc_json_key(&b, &kfirst, "cpu_features");
      tbc_json_string(&b, kn->cpu_features);
      tbc_json_key(&b, &kfirst, "usable");
      tbc_buf_add(&b, kn->usable ? "true" : "false");
      tbc_buf_add(&b, "}");
    }
    tbc_buf_add(&b, "]}");
  }
  tbc_buf_add(&b, "]}");
  int code = TBC_EXIT_OK;
  if (b.failed) {
    tbc_error("out of memory writing the operators as JSON");
    code = TBC_EXIT_FAILURE;
  } else {
    printf("%s\n", b.data);
  }
  tbc_buf_free(&b);
  return code;
}

int tbc_cmd_ops(int argc, char **argv) {
  bool json = false;
  const tbc_option options[] = {{"--json", &json}, {NULL, NULL}};
  tbc_args args;
  int code = tbc_parse_args("ops", argc, argv, options, 1, &args);
  if (code != TBC_EXIT_OK) return code;
  if (args.help) {
    fputs(help, stdout);
    return TBC_EXIT_OK;
  }
  const char *filter = args.positional_count ? args.positional[0] : NULL;
  size_t total = tb_op_info_count();
  op_entry *entries = calloc(total ? total : 1, sizeof *entries);
  if (!entries) {
    tbc_error("out of memory listing %zu operators", total);
    return TBC_EXIT_FAILURE;
  }
  size_t count = 0;
  for (size_t i = 0; i < total && code == TBC_EXIT_OK; i++) {
    code = load(i, &entries[count]);
    if (code == TBC_EXIT_OK && (!filter || matches(&entries[count].info, filter))) count++;
  }
  if (code == TBC_EXIT_OK && filter && count == 0) {
    tbc_error("TensorBridge defines no operator '%s' (in any domain); 'tb ops' lists the %zu it runs", filter, total);
    code = TBC_EXIT_USAGE;
  } else if (code == TBC_EXIT_OK) {
    code = json ? print_json(entries, count) : print_table(entries, count, filter != NULL);
  }
  free(entries);
  return code;
}
