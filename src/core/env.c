/* Environment variables and the stderr log controlled by TB_LOG. */
#include "core/env.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

const char *tb_env(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}

static tb_log_level current_level(void) {
  static const struct { const char *name; tb_log_level level; } names[] = {
      {"off", TB_LOG_OFF}, {"none", TB_LOG_OFF}, {"error", TB_LOG_ERROR}, {"warn", TB_LOG_WARN},
      {"warning", TB_LOG_WARN}, {"info", TB_LOG_INFO}, {"debug", TB_LOG_DEBUG}};
  static _Thread_local int warned;
  const char *v = tb_env("TB_LOG");
  if (!v) return TB_LOG_WARN;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcasecmp(v, names[i].name) == 0) return names[i].level;
  if (!warned) {
    warned = 1;
    fprintf(stderr, "tensorbridge: warning: TB_LOG=%s is not a log level; use off, error, warn, info or debug\n", v);
  }
  return TB_LOG_WARN;
}

void tb_log(tb_log_level level, const char *fmt, ...) {
  if (level == TB_LOG_OFF || level > current_level()) return;
  static const char *const tags[] = {"", "error", "warning", "info", "debug"};
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tensorbridge: %s: ", tags[level]);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}
