/* Internal: looking up the public enums' names without touching the thread's error text, for callers
 * that make their own sentence (or none) when a name means nothing. */
#ifndef TB_CORE_NAMES_H
#define TB_CORE_NAMES_H
#include <stdbool.h>
#include <tensorbridge/device.h>

/* A backend name or alias ("cuda", "nvidia"; any case), or "auto" (*out_is_auto). false when it is neither;
 * *out_kind is set only for a backend. */
bool tb_backend_lookup(const char *name, tb_backend_kind *out_kind, bool *out_is_auto);

#endif
