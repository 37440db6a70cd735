/* Text renderings of sizes, memory and feature lists for people (see format.h). */
#include "format.h"
#include <stdio.h>
#include <string.h>

static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
#define UNIT_COUNT (sizeof units / sizeof units[0])

/* The unit index for a value: the largest power of 1024 not above it, such that the value printed
 * with one decimal stays below 1024.0 (1023.99 GiB is "1.0 TiB", not "1024.0 GiB"). */
static size_t unit_for(uint64_t bytes) {
  size_t u = 0;
  double value = (double)bytes;
  while (u + 1 < UNIT_COUNT && value >= 1023.95) {
    value /= 1024.0;
    u++;
  }
  return u;
}

static double scaled(uint64_t bytes, size_t unit) {
  double value = (double)bytes;
  for (size_t i = 0; i < unit; i++) value /= 1024.0;
  return value;
}

void tbc_format_bytes(uint64_t bytes, char *buf, size_t size) {
  size_t u = unit_for(bytes);
  if (u == 0)
    snprintf(buf, size, "%llu B", (unsigned long long)bytes);
  else
    snprintf(buf, size, "%.1f %s", scaled(bytes, u), units[u]);
}

void tbc_format_memory(const tb_device_info *d, char *buf, size_t size) {
  if (d->memory_total_known && d->memory_free_known) {
    size_t u = unit_for(d->memory_total);
    if (u == 0)
      snprintf(buf, size, "%llu/%llu B", (unsigned long long)d->memory_free, (unsigned long long)d->memory_total);
    else
      snprintf(buf, size, "%.1f/%.1f %s", scaled(d->memory_free, u), scaled(d->memory_total, u), units[u]);
  } else if (d->memory_total_known) {
    tbc_format_bytes(d->memory_total, buf, size);
  } else if (d->memory_free_known) {
    char free_text[32];
    tbc_format_bytes(d->memory_free, free_text, sizeof free_text);
    snprintf(buf, size, "%s free", free_text);
  } else {
    snprintf(buf, size, "-");
  }
}

/* Append `word` to buf (with `separator` before it unless buf is empty); stops quietly when full. */
static void append(char *buf, size_t size, const char *separator, const char *word) {
  size_t len = strlen(buf);
  if (len >= size) return;
  snprintf(buf + len, size - len, "%s%s", len ? separator : "", word);
}

void tbc_format_features(uint64_t features, const char *separator, char *buf, size_t size) {
  if (size == 0) return;
  buf[0] = '\0';
  for (int f = 0; f < TB_FEATURE_COUNT; f++)
    if (features & TB_FEATURE_BIT(f)) append(buf, size, separator, tb_feature_name((tb_feature)f));
  if (!buf[0]) snprintf(buf, size, "-");
}

void tbc_format_dtypes(tb_dtype_set dtypes, const char *separator, char *buf, size_t size) {
  if (size == 0) return;
  buf[0] = '\0';
  for (int t = 0; t < TB_DTYPE_COUNT; t++)
    if (dtypes & TB_DTYPE_BIT(t)) append(buf, size, separator, tb_dtype_name((tb_dtype)t));
  if (!buf[0]) snprintf(buf, size, "-");
}

const char *tbc_or_dash(const char *s) { return s && s[0] ? s : "-"; }

const char *tbc_one_line(const char *s, char *buf, size_t size) {
  size_t o = 0;
  for (const char *p = s ? s : ""; *p && o + 3 <= size; p++) {
    if (*p == '\n' || *p == '\r') {
      buf[o++] = '\\';
      buf[o++] = *p == '\n' ? 'n' : 'r';
    } else {
      buf[o++] = *p;
    }
  }
  if (size) buf[o < size ? o : size - 1] = '\0';
  return buf;
}
