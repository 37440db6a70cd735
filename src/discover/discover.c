/* tb_discover: run the backends' probes at once, each on its own thread with its own device list, then
 * merge the lists in backend order and link devices that are one piece of hardware. The probes share
 * nothing but the libraries they open (core/dl.c keeps those), so the slowest one (usually a driver
 * that sets up a compiler, as lavapipe and PoCL do) sets the time, not their sum. */
#include <pthread.h>
#include <stdlib.h>
#include "core/error.h"
#include "discover/devlist.h"
#include "discover/probes.h"

typedef void (*tb_probe_fn)(tb_device_list *);

static const tb_probe_fn probes[TB_BACKEND_COUNT] = {
    [TB_BACKEND_CPU] = tb_probe_cpu,       [TB_BACKEND_CUDA] = tb_probe_cuda,
    [TB_BACKEND_ROCM] = tb_probe_rocm,     [TB_BACKEND_XPU] = tb_probe_xpu,
    [TB_BACKEND_TPU] = tb_probe_tpu,       [TB_BACKEND_VULKAN] = tb_probe_vulkan,
    [TB_BACKEND_OPENCL] = tb_probe_opencl,
};

typedef struct probe_job {
  tb_probe_fn fn;
  tb_device_list *list;
  pthread_t thread;
  bool threaded;
} probe_job;

static void *run_job(void *arg) {
  probe_job *job = arg;
  job->fn(job->list);
  return NULL;
}

/* Every probe of `mask` on its own list, each on a thread of its own but one, which runs on the calling
 * thread (as does any whose thread cannot be started). That one is the OpenCL probe when it runs: PoCL's
 * LLVM installs its own alternate signal stack on the thread that first loads it, in place of the one
 * AddressSanitizer gave the thread, and ASan then fails to unmap it when that thread exits (LLVM's is
 * heap memory), so a sanitized build would abort at the end of the probe's thread. false when out of
 * memory for a list. */
static bool run_probes(uint32_t mask, probe_job jobs[TB_BACKEND_COUNT]) {
  bool ok = true;
  int inline_job = (mask & (1u << TB_BACKEND_OPENCL)) ? TB_BACKEND_OPENCL : -1;
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    if (!(mask & (1u << k))) continue;
    jobs[k].fn = probes[k];
    jobs[k].list = tb_devlist_new();
    if (!jobs[k].list) {
      ok = false;
      continue;
    }
    if (inline_job < 0) inline_job = k;
    if (k != inline_job) jobs[k].threaded = pthread_create(&jobs[k].thread, NULL, run_job, &jobs[k]) == 0;
  }
  for (int k = 0; k < TB_BACKEND_COUNT; k++)
    if (jobs[k].list && !jobs[k].threaded) run_job(&jobs[k]);
  for (int k = 0; k < TB_BACKEND_COUNT; k++)
    if (jobs[k].threaded) pthread_join(jobs[k].thread, NULL);
  return ok;
}

tb_status tb_discover(const tb_discover_options *options, tb_device_list **out_list) {
  if (!out_list) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_discover: out_list must not be NULL");
  *out_list = NULL;
  uint32_t mask = 0;
  if (options) {
    if (options->size < sizeof(size_t) + sizeof(uint32_t))
      return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_discover: options->size is %zu; set it to sizeof(tb_discover_options)",
                      options->size);
    mask = options->backends;
    if (mask >> TB_BACKEND_COUNT)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_discover: options->backends 0x%x has bits for no backend; use (1u << TB_BACKEND_x)",
                      mask);
  }
  if (mask == 0) mask = (1u << TB_BACKEND_COUNT) - 1;
  tb_device_list *list = tb_devlist_new();
  if (!list) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_discover: out of host memory for the device list");
  probe_job jobs[TB_BACKEND_COUNT] = {0};
  if (!run_probes(mask, jobs)) list->arena.failed = true;
  for (int k = 0; k < TB_BACKEND_COUNT; k++)
    if (jobs[k].list) tb_devlist_adopt(list, jobs[k].list);
  tb_devlist_finish(list);
  if (list->arena.failed) {
    tb_device_list_destroy(list);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_discover: out of host memory while listing devices");
  }
  *out_list = list;
  return TB_OK;
}
