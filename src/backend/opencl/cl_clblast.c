/* CLBlast for the OpenCL backend's GEMMs: whether to use it (TB_CLBLAST), whether its temporary buffers
 * fit, and the calls through its symbol table (runtime/clblast_api.h). */
#include "backend/opencl/cl_clblast.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "core/env.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "runtime/clblast_api.h"

static _Atomic(unsigned long) calls;
/* CLBlast's kernel and tuning caches are one per process: CLBlastClearCache (a device closing) must not run
 * while another thread's CLBlastSgemm reads them (ASan caught that in the soak test), so GEMMs share this
 * lock and clearing takes it alone. */
static pthread_rwlock_t cache_lock = PTHREAD_RWLOCK_INITIALIZER;

unsigned long tb_clblast_calls(void) { return atomic_load(&calls); }

bool tb_clblast_available(char *why, size_t cap) {
  const char *mode = tb_env("TB_CLBLAST");
  if (mode && (strcmp(mode, "off") == 0 || strcmp(mode, "0") == 0)) {
    snprintf(why, cap, "TB_CLBLAST=%s", mode);
    return false;
  }
  if (mode && strcmp(mode, "on") != 0 && strcmp(mode, "1") != 0) {
    /* a typo must not silently pick one of the two: the built-in kernel runs and the log says why */
    snprintf(why, cap, "TB_CLBLAST='%.100s' is not one of on, 1, off, 0; the built-in GEMM runs", mode);
    static atomic_bool warned;
    if (!atomic_exchange(&warned, true)) tb_log(TB_LOG_WARN, "OpenCL: %s", why);
    return false;
  }
  return tb_clblast_api_open(why, cap) != NULL;
}

bool tb_clblast_fits(tb_cl_device *dev, size_t m, size_t n, size_t k) {
  /* CLBlast's indirect GEMM copies A, B and C into padded temporary buffers: about their sizes again */
  double need = 4.0 * ((double)m * (double)k + (double)k * (double)n + (double)m * (double)n) * 1.25 + (double)(16u << 20);
  uint64_t room = 0, global = dev->global_mem, live = atomic_load(&dev->live_bytes);
  const char *short_of = NULL;
  if (global && (double)live + need > (double)global) short_of = "device memory (CL_DEVICE_GLOBAL_MEM_SIZE)";
  else if (tb_host_memory_room(&room) && need > (double)room) short_of = "host memory (MemAvailable, RLIMIT_AS)";
  if (!short_of) return true;
  tb_log(TB_LOG_INFO, "%s: a %zux%zux%zu GEMM runs on the built-in kernel: CLBlast's temporary buffers (about %.0f bytes) "
         "do not fit the %s left", dev->label, m, n, k, need, short_of);
  return false;
}

tb_status tb_clblast_sgemm(tb_cl_device *dev, const char *who, bool ta, bool tb, size_t m, size_t n, size_t k, float alpha,
                           tb_cl_mem a, size_t a_off, size_t lda, tb_cl_mem b, size_t b_off, size_t ldb, float beta,
                           tb_cl_mem c, size_t c_off, size_t ldc) {
  const tb_clblast_api *lib = tb_clblast_api_loaded();
  if (!lib) return tb_error(TB_ERR_INTERNAL, "%s: %s: CLBlast used before it was loaded", dev->label, who);
  tb_status s = tb_cl_queue_check(dev, who);
  if (s != TB_OK) return s;
  pthread_mutex_lock(&dev->program_lock);
  dev->used_clblast = true;
  pthread_mutex_unlock(&dev->program_lock);
  tb_cl_command_queue queue = dev->queue;
  atomic_fetch_add(&calls, 1);
  pthread_rwlock_rdlock(&cache_lock);
  int st = lib->CLBlastSgemm(TB_CLBLAST_ROW_MAJOR, ta ? TB_CLBLAST_TRANS : TB_CLBLAST_NO_TRANS,
                             tb ? TB_CLBLAST_TRANS : TB_CLBLAST_NO_TRANS, m, n, k, alpha, a, a_off, lda, b, b_off, ldb, beta, c,
                             c_off, ldc, &queue, NULL);
  pthread_rwlock_unlock(&cache_lock);
  if (st == 0) return TB_OK;
  /* out of memory, CLBlast may have enqueued part of its work (and its temporary buffers' copies) before
   * failing: the queue is not used again, and not waited for at close */
  if (st < 0 && st > -100) {
    char detail[160];
    snprintf(detail, sizeof detail, "CLBlastSgemm %zux%zux%zu for %s", m, n, k, who);
    s = tb_cl_fail(dev, "CLBlastSgemm", detail, st);
  } else {
    s = tb_error(TB_ERR_DRIVER, "%s: %s: CLBlastSgemm (%zux%zux%zu) returned CLBlast status %d; set TB_CLBLAST=off to use "
                 "the built-in GEMM, or update libclblast1", dev->label, who, m, n, k, st);
  }
  if (st == TB_CL_OUT_OF_HOST_MEMORY || st == TB_CL_OUT_OF_RESOURCES || st == TB_CL_MEM_OBJECT_ALLOCATION_FAILURE)
    tb_cl_queue_mark_failed(dev, st);
  return s;
}

void tb_clblast_forget(tb_cl_device *dev) {
  const tb_clblast_api *lib = tb_clblast_api_loaded();
  if (dev->used_clblast && lib) {
    pthread_rwlock_wrlock(&cache_lock);
    lib->CLBlastClearCache();
    pthread_rwlock_unlock(&cache_lock);
  }
  dev->used_clblast = false;
}
