/* `tb info --memory`: for each device asked for, create a backend on it and print its memory statistics
 * (allocated, reserved, peak, counts, the driver's free/total, the limit), as text or as JSON built from
 * tb_memory_stats_to_json. A device whose backend cannot be created is shown with the library's message. */
#include "info_memory.h"
#include <stdio.h>
#include <string.h>
#include "common.h"
#include "format.h"
#include "json_out.h"

/* The stats of one device, or the failure to get them. */
typedef struct device_memory {
  tb_status status;
  char error[1024]; /* tb_last_error() when status != TB_OK */
  tb_memory_stats stats;
} device_memory;

static void read_memory(const tb_device_info *d, device_memory *out) {
  memset(out, 0, sizeof *out);
  out->stats.size = sizeof out->stats;
  tb_backend *backend = NULL;
  out->status = tb_backend_create(d->device, &backend);
  if (out->status == TB_OK) out->status = tb_backend_memory_stats(backend, &out->stats);
  if (out->status != TB_OK) snprintf(out->error, sizeof out->error, "%s", tb_last_error());
  tb_backend_destroy(backend);
}

/* ---- text ------------------------------------------------------------------------------------- */

static void field(const char *key, const char *value) { printf("  %-19s %s\n", key, value); }

static void bytes_field(const char *key, uint64_t bytes) {
  char text[96], size[32];
  tbc_format_bytes(bytes, size, sizeof size);
  snprintf(text, sizeof text, "%s (%llu bytes)", size, (unsigned long long)bytes);
  field(key, text);
}

static void known_bytes_field(const char *key, bool known, uint64_t bytes) {
  if (known)
    bytes_field(key, bytes);
  else
    field(key, "unknown");
}

static void count_field(const char *key, uint64_t count, uint64_t freed) {
  char text[64];
  snprintf(text, sizeof text, "%llu (%llu freed)", (unsigned long long)count, (unsigned long long)freed);
  field(key, text);
}

static void print_stats(const tb_memory_stats *s) {
  char text[96];
  bytes_field("allocated:", s->allocated);
  bytes_field("requested:", s->requested);
  bytes_field("reserved:", s->reserved);
  bytes_field("peak allocated:", s->peak_allocated);
  bytes_field("peak reserved:", s->peak_reserved);
  count_field("allocations:", s->num_allocs, s->num_frees);
  count_field("device allocations:", s->num_device_allocs, s->num_device_frees);
  snprintf(text, sizeof text, "%llu", (unsigned long long)s->num_oom_retries);
  field("oom retries:", text);
  known_bytes_field("device free:", s->device_free_known, s->device_free);
  known_bytes_field("device total:", s->device_total_known, s->device_total);
  if (s->limit)
    bytes_field("limit:", s->limit);
  else
    field("limit:", "none");
}

static void print_text(const tb_device_info *d, const device_memory *m) {
  printf("%s: %s\n", d->device, tbc_or_dash(d->name));
  if (m->status == TB_OK) {
    print_stats(&m->stats);
    return;
  }
  char text[1200];
  snprintf(text, sizeof text, "%s (%s)", m->error[0] ? m->error : "no message", tb_status_str(m->status));
  field("error:", text);
}

/* ---- JSON ------------------------------------------------------------------------------------- */

/* Append {"device": ..., "memory": {...}} or {"device": ..., "error": ..., "status": ...}. false (with
 * the library's message printed) when the stats cannot be rendered. */
static bool add_json(tbc_buf *out, const tb_device_info *d, const device_memory *m) {
  bool first = true;
  tbc_buf_add(out, "{");
  tbc_json_key(out, &first, "device");
  tbc_json_string(out, d->device);
  if (m->status != TB_OK) {
    tbc_json_key(out, &first, "error");
    tbc_json_string(out, m->error);
    tbc_json_key(out, &first, "status");
    tbc_json_string(out, tb_status_str(m->status));
    tbc_buf_add(out, "}");
    return true;
  }
  char *json = NULL;
  if (tb_memory_stats_to_json(&m->stats, &json) != TB_OK) {
    tbc_error("%s: %s", d->device, tb_last_error());
    return false;
  }
  tbc_json_key(out, &first, "memory");
  tbc_buf_add(out, json);
  tb_free(json);
  tbc_buf_add(out, "}");
  return true;
}

/* ---- both ------------------------------------------------------------------------------------- */

/* A backend without memory support in this build cannot be used here: exit 3, like an unavailable one. */
static int exit_for_failure(tb_status status) {
  return status == TB_ERR_UNSUPPORTED ? TBC_EXIT_UNAVAILABLE : tbc_exit_for_status(status);
}

int tbc_info_memory(const tb_device_info *const *devices, size_t count, bool json) {
  tbc_buf out = {0};
  size_t worked = 0;
  tb_status first_failure = TB_OK;
  bool rendered = true;
  if (json) tbc_buf_add(&out, "[");
  for (size_t i = 0; i < count && rendered; i++) {
    device_memory m;
    read_memory(devices[i], &m);
    if (m.status == TB_OK)
      worked++;
    else if (first_failure == TB_OK)
      first_failure = m.status;
    if (!json) {
      if (i) fputc('\n', stdout);
      print_text(devices[i], &m);
      continue;
    }
    tbc_buf_add(&out, i ? ",\n" : "\n");
    rendered = add_json(&out, devices[i], &m);
  }
  int code = worked ? TBC_EXIT_OK : exit_for_failure(first_failure);
  if (json) {
    tbc_buf_add(&out, count ? "\n]" : "]");
    if (!rendered) {
      code = TBC_EXIT_FAILURE;
    } else if (out.failed) {
      tbc_error("out of memory while writing JSON");
      code = TBC_EXIT_FAILURE;
    } else {
      printf("%s\n", out.data);
    }
  }
  tbc_buf_free(&out);
  return code;
}
