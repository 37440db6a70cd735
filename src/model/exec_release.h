/* Internal: the executor's side of model/weights.h — which constants every reader has consumed, dropping
 * their CPU tensors' pages, and bringing the bytes back when a node's state is made again. Called by
 * exec_place.c around a kernel's prepare() and by exec.c when the executor goes. */
#ifndef TB_MODEL_EXEC_RELEASE_H
#define TB_MODEL_EXEC_RELEASE_H
#include <stddef.h>
#include "model/exec_impl.h"

/* After node `step`'s prepare() succeeded: apply the inputs it consumed; a constant that every reader has
 * consumed has its pages dropped. Then drop the file pages of the node's other constant inputs that its
 * state was made from (safe: they are read again from the file if needed). */
void tb_exec_release_consumed(tb_exec *e, size_t step);
/* Before node `step`'s state is made again (or after its prepare() failed): its consumption no longer
 * holds; constants it had let go are copied back from the model. */
void tb_exec_restore_consumed(tb_exec *e, size_t step);
/* Drop every file page of the graph's model (the executor holds its own copies of what was unaligned;
 * the rest is read again from the file when touched). */
void tb_exec_drop_file_pages(tb_exec *e);
/* Free the bookkeeping (tb_exec_destroy). */
void tb_exec_release_free(tb_exec *e);

#endif
