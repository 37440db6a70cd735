/* Internal: checks a device kernel leaves for the end of the run instead of waiting for the device in its middle
 * (docs/cuda.md "No host round-trips"). A kernel that can only tell afterwards whether its input was good (Gather's
 * indices, checked by the device into a flag) adds a check to the calling thread's list while it enqueues its work;
 * the prepared run (src/model/run.c) runs the list once the model's stream is idle, its first failure the run's
 * status; a captured graph (src/model/replay.c) takes the list of its captured run and runs it after every replay.
 * The list is per thread, as the model's stream binding is. */
#ifndef TB_BACKEND_RUN_CHECKS_H
#define TB_BACKEND_RUN_CHECKS_H
#include <tensorbridge/status.h>

typedef struct tb_run_check tb_run_check;
/* A check: fn(data) after the device's work is done; free_data(data) when the check goes (run or dropped). */
typedef tb_status (*tb_run_check_fn)(void *data);

/* Add a check to this thread's list; it owns data from now on (freed with free_data even when adding fails, which
 * is TB_ERR_OUT_OF_MEMORY). */
tb_status tb_run_checks_add(tb_run_check_fn fn, void *data, void (*free_data)(void *));
/* Take this thread's list (NULL when empty), leaving it empty. */
tb_run_check *tb_run_checks_take(void);
/* Run every check of a list in the order added; the first failure's status (with its sentence), TB_OK when all pass. */
tb_status tb_run_checks_run(const tb_run_check *list);
/* Free a list (NULL: nothing). */
void tb_run_checks_free(tb_run_check *list);

#endif
