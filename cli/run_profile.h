/* `tb run --profile`: the per-node profile of a prepared model as text (by operator, then the slowest
 * nodes) or as a JSON array. */
#ifndef TBC_RUN_PROFILE_H
#define TBC_RUN_PROFILE_H
#include <tensorbridge/tensorbridge.h>
#include "common.h"
#include "json_out.h"

/* Print the profile; TBC_EXIT_FAILURE when there is none (profiling was not on). */
int tbc_profile_text(tb_prepared *prepared, size_t top);
/* Append the per-node array (or null) to b. */
void tbc_profile_json(tbc_buf *b, tb_prepared *prepared);

#endif
