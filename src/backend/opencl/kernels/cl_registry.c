/* The OpenCL backend's find_kernel: the first kernel of the families registered for (domain, op) that
 * accepts the node's input types; NULL sends the node to the CPU, with the reason logged at debug level. The shared
 * control-flow kernels (If, Loop, Scan) are one of the families. */
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/control/control_kernels.h"
#include "backend/kernel_tables.h"
#include "backend/opencl/kernels/cl_ops.h"
#include "core/env.h"

/* If, Loop and Scan: the control-flow kernels every backend shares (backend/control/), so their bodies stay here. */
static const cl_family control = {tb_control_kernels, TB_CONTROL_KERNEL_COUNT};

static const cl_family *const families[] = {&tb_cl_family_elementwise, &tb_cl_family_tensor, &tb_cl_family_gemm, &tb_cl_family_nn,
                                             &tb_cl_family_lstm, &control};

const tb_kernel *tb_cl_find(const tb_kernel_query *q, const char **why) {
  bool named = false;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (size_t i = 0; i < families[f]->count; i++) {
      const tb_kernel *k = &families[f]->kernels[i];
      if (strcmp(k->name, q->op_type) != 0 || strcmp(k->domain, q->domain) != 0) continue;
      named = true;
      if (tb_kernel_matches(k, q)) return k;
    }
  if (named && strcmp(q->op_type, "LSTM") == 0) {
    *why = "the OpenCL LSTM takes float32 with layout 0 and default activations, without sequence_lens, peepholes, clip or "
           "input_forget";
    return NULL;
  }
  *why = named ? "the OpenCL kernel does not take these input types or attributes (float32 / float16 data only)"
               : "no OpenCL kernel for this op";
  return NULL;
}

const tb_kernel *tb_cl_find_kernel(void *state, const tb_kernel_query *q);
const tb_kernel *tb_cl_find_kernel(void *state, const tb_kernel_query *q) {
  tb_cl_device *dev = state;
  if (!dev || !q || !q->op_type) return NULL;
  if (!dev->rt.cl.clBuildProgram || !dev->rt.cl.clCreateKernel || !dev->rt.cl.clEnqueueNDRangeKernel) {
    tb_log(TB_LOG_INFO, "%s: %s lacks the OpenCL program calls; %s runs on the CPU", dev->label, dev->rt.path, q->op_type);
    return NULL;
  }
  const char *why = NULL;
  const tb_kernel *k = tb_cl_find(q, &why);
  if (!k) tb_log(TB_LOG_DEBUG, "%s: %s (%s) runs on the CPU: %s", dev->label, q->name && q->name[0] ? q->name : "?", q->op_type, why);
  return k;
}

size_t tb_cl_kernel_count(void) {
  size_t n = 0;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) n += families[f]->count;
  return n;
}

const tb_kernel *tb_cl_kernel_at(size_t i) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    if (i < families[f]->count) return &families[f]->kernels[i];
    i -= families[f]->count;
  }
  return NULL;
}
