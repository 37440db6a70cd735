/* Internal: reading TB_* environment variables, and the log. */
#ifndef TB_CORE_ENV_H
#define TB_CORE_ENV_H
#include <stdbool.h>

/* The value of an environment variable, or NULL when unset or empty. */
const char *tb_env(const char *name);

typedef enum tb_log_level { TB_LOG_OFF = 0, TB_LOG_ERROR, TB_LOG_WARN, TB_LOG_INFO, TB_LOG_DEBUG } tb_log_level;

/* Log to stderr when TB_LOG is at least `level` (TB_LOG=off|error|warn|info|debug, default warn).
 * An unknown TB_LOG value is reported once per process, as a warning naming the valid values. */
void tb_log(tb_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A warning logged at TB_LOG_WARN once per process for each `key` (a path, a variable and its value). */
void tb_warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The warning for an environment variable whose value is not used (invalid, missing file...): logged at
 * TB_LOG_WARN once per process for each variable and value, as "<name>=<value> <the formatted rest>";
 * the rest says why and what the valid values are, and that the default applies. A later different
 * value of the same variable is warned about again. */
void tb_env_warn(const char *name, const char *value, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
