/* Internal: reading TB_* environment variables, and the log. */
#ifndef TB_CORE_ENV_H
#define TB_CORE_ENV_H
#include <stdbool.h>

/* The value of an environment variable, or NULL when unset or empty. */
const char *tb_env(const char *name);

typedef enum tb_log_level { TB_LOG_OFF = 0, TB_LOG_ERROR, TB_LOG_WARN, TB_LOG_INFO, TB_LOG_DEBUG } tb_log_level;

/* Log to stderr when TB_LOG is at least `level` (TB_LOG=off|error|warn|info|debug, default warn).
 * An unknown TB_LOG value is reported once, as a warning naming the valid values. */
void tb_log(tb_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
