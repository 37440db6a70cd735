/* Internal: checks a device kernel leaves for later instead of waiting for the device in the middle of the run
 * (docs/cuda.md "No host round-trips"). A kernel that can only tell afterwards whether its input was good (the index
 * kernels, checked by the device into a flag; the RNNs' sequence_lens) adds a check to the calling thread's list
 * while it enqueues its work, at most one per key (its node: a Loop body of 10^4 iterations leaves one record, not
 * 10^4). The list runs at the host synchronisations of the run: the control kernels' reads of a condition
 * (tb_run_checks_now, records kept) and the end of the run (src/model/run.c, records freed); a captured graph
 * (src/model/replay.c) takes the list of its captured run and runs it after every replay. A check that finds bad
 * input is the cause of whatever else failed in the run, so its sentence wins over the run's other error. The list
 * is per thread, as the model's stream binding is. A gate stands for the checks added behind it: one read (a run-wide
 * device word every flag-setting kernel sets with its node's flag) tells whether any of them can fail, so a
 * synchronisation reads the gate and the checks behind it only when it is set; a pass that found it set runs every
 * check behind it (each resets its own flag) and then clears it. */
#ifndef TB_BACKEND_RUN_CHECKS_H
#define TB_BACKEND_RUN_CHECKS_H
#include <stdbool.h>
#include <stddef.h>
#include <tensorbridge/status.h>

typedef struct tb_run_check tb_run_check;
/* A check: fn(data, &found) once the device's work it checks is done. TB_OK when the input was good; else the status
 * and sentence, *found true when the check found bad input (the run's cause), false when it could not look (a read
 * of the device failing). free_data(data) when the check goes. */
typedef tb_status (*tb_run_check_fn)(void *data, bool *found);
/* A gate: fn(data, false, &set) reads it, fn(data, true, NULL) clears it after a pass that found it set. */
typedef tb_status (*tb_run_gate_fn)(void *data, bool clear, bool *set);

/* Add a check with this key (may be NULL: never matched) to this thread's list; it owns data from now on (freed with
 * free_data even when adding fails, which is TB_ERR_OUT_OF_MEMORY). Callers look for their key first
 * (tb_run_checks_find) and add only when it is not there. */
tb_status tb_run_checks_add(const void *key, tb_run_check_fn fn, void *data, void (*free_data)(void *));
/* Add a gate with this key (not NULL) to this thread's list, as tb_run_checks_add adds a check. */
tb_status tb_run_checks_add_gate(const void *key, tb_run_gate_fn fn, void *data, void (*free_data)(void *));
/* Add a check behind the gate with key `gate` (added to this thread's list before; NULL or not found: the check is
 * not gated), as tb_run_checks_add. */
tb_status tb_run_checks_add_behind(const void *key, const void *gate, tb_run_check_fn fn, void *data, void (*free_data)(void *));
/* The data of this thread's pending check (or gate) with this key, or NULL. */
void *tb_run_checks_find(const void *key);
/* Take this thread's list (NULL when empty), leaving it empty. */
tb_run_check *tb_run_checks_take(void);
/* Run every check of a list in the order added (those behind a gate only when it reads set, or cannot be read);
 * TB_OK when all pass, else the first failure's status with its sentence. prior: the run's status so far; a check
 * that found bad input is returned over it (with its sentence), a check that could not look leaves prior (and its
 * sentence) as they were; in a good run a first failure that found nothing (a read failing) gives way to the first
 * check that then finds bad input. Every check runs, also after the first failure (each resets its flag; only the
 * answer's sentence is kept). Gates found set are cleared at the end. */
tb_status tb_run_checks_run(const tb_run_check *list, tb_status prior);
/* Run this thread's pending checks now (the device being idle: a host synchronisation of the run), keeping them for
 * the end of the run; TB_OK or the first failure. */
tb_status tb_run_checks_now(void);
/* Free a list (NULL: nothing). */
void tb_run_checks_free(tb_run_check *list);
/* How many checks (gates not counted) this thread has added since it started (tests: one per node and run, whatever
 * the iterations). */
size_t tb_run_checks_made(void);

#endif
