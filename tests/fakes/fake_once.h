/* A load-once guard for the fake runtimes: a real vendor runtime breaks when it is loaded a second time
 * in one process (HIP's LLVM aborts with "Option registered more than once"), so each fake aborts the
 * same way when its constructor runs twice in one process, i.e. when it was unloaded and loaded again.
 * A static flag would be reset by the reload, so the mark lives in the environment: FAKE_LOADED_<NAME>
 * holds the process id of the first load. A child process (another id) loads afresh. tests/CMakeLists.txt
 * defines the variables (empty) for every test, so setting one replaces a value and never grows the
 * environment while probe threads read it. */
#ifndef TB_FAKE_ONCE_H
#define TB_FAKE_ONCE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fake_once_check(const char *var, const char *library) {
  char pid[24];
  snprintf(pid, sizeof pid, "%ld", (long)getpid());
  const char *seen = getenv(var);
  if (seen && strcmp(seen, pid) == 0) {
    fprintf(stderr, "%s: loaded a second time in process %s: it was unloaded (dlclose) in between\n", library, pid);
    abort();
  }
  setenv(var, pid, 1);
}

/* One constructor per fake: FAKE_ONCE("FAKE_LOADED_CUDA", "fake_cuda") at file scope. */
#define FAKE_ONCE(var, library) \
  __attribute__((constructor)) static void fake_once_constructor(void) { fake_once_check(var, library); }

#endif
