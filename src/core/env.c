/* Environment variables, the stderr log controlled by TB_LOG, and the once-per-process warnings about
 * variables whose values are not used. */
#include "core/env.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *tb_env(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}

/* The (variable, value) pairs already warned about; a few per process at most. */
enum { MAX_WARNED = 64, MAX_WARNED_TEXT = 256 };
static char warned[MAX_WARNED][MAX_WARNED_TEXT];
static size_t n_warned;
static pthread_mutex_t warned_lock = PTHREAD_MUTEX_INITIALIZER;

/* True the first time for name=value in this process (also when the table is full: better twice than never). */
static bool first_warning(const char *name, const char *value) {
  char key[MAX_WARNED_TEXT];
  snprintf(key, sizeof key, "%s=%s", name, value);
  bool first = true;
  pthread_mutex_lock(&warned_lock);
  for (size_t i = 0; i < n_warned && first; i++) first = strcmp(warned[i], key) != 0;
  if (first && n_warned < MAX_WARNED) memcpy(warned[n_warned++], key, sizeof key);
  pthread_mutex_unlock(&warned_lock);
  return first;
}

static tb_log_level current_level(void) {
  static const struct { const char *name; tb_log_level level; } names[] = {
      {"off", TB_LOG_OFF}, {"none", TB_LOG_OFF}, {"error", TB_LOG_ERROR}, {"warn", TB_LOG_WARN},
      {"warning", TB_LOG_WARN}, {"info", TB_LOG_INFO}, {"debug", TB_LOG_DEBUG}};
  const char *v = tb_env("TB_LOG");
  if (!v) return TB_LOG_WARN;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcasecmp(v, names[i].name) == 0) return names[i].level;
  if (first_warning("TB_LOG", v))
    fprintf(stderr, "tensorbridge: warning: TB_LOG=%s is not a log level; use off, error, warn, info or debug "
                    "(warn applies)\n", v);
  return TB_LOG_WARN;
}

__attribute__((format(printf, 3, 0))) static void vlog(tb_log_level level, const char *prefix, const char *fmt,
                                                     va_list ap) {
  static const char *const tags[] = {"", "error", "warning", "info", "debug"};
  /* one fprintf per line, so that lines from several threads do not interleave */
  char text[4096];
  vsnprintf(text, sizeof text, fmt, ap);
  fprintf(stderr, "tensorbridge: %s: %s%s\n", tags[level], prefix, text);
}

void tb_log(tb_log_level level, const char *fmt, ...) {
  if (level == TB_LOG_OFF || level > current_level()) return;
  va_list ap;
  va_start(ap, fmt);
  vlog(level, "", fmt, ap);
  va_end(ap);
}

void tb_warn_once(const char *key, const char *fmt, ...) {
  if (TB_LOG_WARN > current_level() || !first_warning("", key)) return;
  va_list ap;
  va_start(ap, fmt);
  vlog(TB_LOG_WARN, "", fmt, ap);
  va_end(ap);
}

void tb_env_warn(const char *name, const char *value, const char *fmt, ...) {
  if (TB_LOG_WARN > current_level() || !first_warning(name, value ? value : "")) return;
  char prefix[MAX_WARNED_TEXT + 8];
  snprintf(prefix, sizeof prefix, "%s=%s ", name, value ? value : "");
  va_list ap;
  va_start(ap, fmt);
  vlog(TB_LOG_WARN, prefix, fmt, ap);
  va_end(ap);
}
