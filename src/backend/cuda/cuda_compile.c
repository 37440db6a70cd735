/* NVRTC compiles: choosing cubin or PTX for a compute capability, the compile itself, and its log as the
 * error's detail (see cuda_compile.h). */
#include "backend/cuda/cuda_compile.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"

enum { MAX_ARCHS = 64, LOG_LINES = 4, LOG_EXCERPT = 640 };

/* No --use_fast_math: results are checked against the CPU reference, so expf, erff and division are the
 * accurate ones. */
const char *const tb_cuda_compile_options[] = {"--std=c++17"};
const int tb_cuda_compile_option_count = (int)(sizeof tb_cuda_compile_options / sizeof tb_cuda_compile_options[0]);

static void set_target(tb_cuda_target *t, int arch, int code_arch, tb_cuda_image_kind kind) {
  t->arch = arch;
  t->code_arch = code_arch;
  t->kind = kind;
  snprintf(t->option, sizeof t->option, "--gpu-architecture=%s_%d", kind == TB_CUDA_IMAGE_CUBIN ? "sm" : "compute",
           code_arch);
}

tb_status tb_cuda_target_for(const tb_nvrtc_api *nvrtc, const char *who, int major, int minor, tb_cuda_target *out) {
  memset(out, 0, sizeof *out);
  if (major < 1 || major > 99 || minor < 0 || minor > 9)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: compute capability %d.%d is not a valid one (major 1 to 99, minor 0 to 9), so no kernels can "
                    "be compiled for it; check the GPU with `nvidia-smi` and update the NVIDIA driver",
                    who, major, minor);
  int arch = major * 10 + minor;
  int count = 0, archs[MAX_ARCHS];
  bool listed = nvrtc->nvrtcGetNumSupportedArchs && nvrtc->nvrtcGetSupportedArchs &&
                nvrtc->nvrtcGetNumSupportedArchs(&count) == TB_NVRTC_SUCCESS && count > 0 && count <= MAX_ARCHS &&
                nvrtc->nvrtcGetSupportedArchs(archs) == TB_NVRTC_SUCCESS;
  bool cubin = nvrtc->nvrtcGetCUBINSize && nvrtc->nvrtcGetCUBIN;
  if (!listed) { /* an NVRTC that cannot say: ask for the GPU's own architecture */
    set_target(out, arch, arch, cubin ? TB_CUDA_IMAGE_CUBIN : TB_CUDA_IMAGE_PTX);
    return TB_OK;
  }
  int below = 0, lowest = archs[0];
  for (int i = 0; i < count; i++) {
    if (archs[i] == arch && cubin) {
      set_target(out, arch, arch, TB_CUDA_IMAGE_CUBIN);
      return TB_OK;
    }
    if (archs[i] <= arch && archs[i] > below) below = archs[i];
    if (archs[i] < lowest) lowest = archs[i];
  }
  if (below > 0) {
    set_target(out, arch, below, TB_CUDA_IMAGE_PTX);
    return TB_OK;
  }
  return tb_error(TB_ERR_UNSUPPORTED,
                  "%s: NVRTC %d.%d (%s) generates code for sm_%d and newer, and this GPU is sm_%d; point TB_NVRTC_LIB "
                  "at an older NVRTC that still supports sm_%d (CUDA 12's libnvrtc.so.12, e.g. `pip install "
                  "nvidia-cuda-nvrtc-cu12`), or run on another backend",
                  who, nvrtc->major, nvrtc->minor, nvrtc->path, lowest, arch, arch);
}

/* The first lines of NVRTC's log, joined with " / ", into buf. */
static void log_excerpt(const tb_nvrtc_api *nvrtc, tb_nvrtc_program prog, char *buf, size_t cap) {
  buf[0] = '\0';
  size_t size = 0;
  if (nvrtc->nvrtcGetProgramLogSize(prog, &size) != TB_NVRTC_SUCCESS || size <= 1) return;
  char *log = malloc(size + 1);
  if (!log) return;
  if (nvrtc->nvrtcGetProgramLog(prog, log) == TB_NVRTC_SUCCESS) {
    log[size] = '\0';
    size_t o = 0;
    int lines = 0;
    for (const char *line = log; *line && lines < LOG_LINES;) {
      while (*line == ' ' || *line == '\t') line++;
      size_t n = strcspn(line, "\n");
      while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ')) n--;
      if (n > 0) {
        int w = snprintf(buf + o, cap - o, "%s%.*s", lines ? " / " : "", (int)n, line);
        if (w < 0 || (size_t)w >= cap - o) break;
        o += (size_t)w;
        lines++;
      }
      line += strcspn(line, "\n");
      if (*line) line++;
    }
  }
  free(log);
}

static tb_status nvrtc_failed(const tb_nvrtc_api *nvrtc, const char *who, const char *call, const char *what,
                              tb_nvrtc_result r) {
  char name[96];
  tb_nvrtc_error_name(nvrtc, r, name, sizeof name);
  return tb_error(r == TB_NVRTC_ERROR_OUT_OF_MEMORY ? TB_ERR_OUT_OF_MEMORY : TB_ERR_DRIVER,
                  "%s: %s %s failed with %d %s (NVRTC %d.%d, %s); free host memory, or point TB_NVRTC_LIB at another "
                  "NVRTC",
                  who, call, what, r, name, nvrtc->major, nvrtc->minor, nvrtc->path);
}

/* The compiled image of a program, into *out. */
static tb_status take_image(const tb_nvrtc_api *nvrtc, const char *who, tb_nvrtc_program prog,
                            const tb_cuda_target *t, tb_cuda_image *out) {
  bool cubin = t->kind == TB_CUDA_IMAGE_CUBIN;
  const char *size_call = cubin ? "nvrtcGetCUBINSize" : "nvrtcGetPTXSize";
  size_t size = 0;
  tb_nvrtc_result r = cubin ? nvrtc->nvrtcGetCUBINSize(prog, &size) : nvrtc->nvrtcGetPTXSize(prog, &size);
  if (r != TB_NVRTC_SUCCESS) return nvrtc_failed(nvrtc, who, size_call, "of the compiled kernels", r);
  if (size == 0 || size > ((size_t)1 << 30))
    return tb_error(TB_ERR_DRIVER, "%s: %s says the compiled kernels are %zu bytes (NVRTC %d.%d, %s); point TB_NVRTC_LIB "
                    "at another NVRTC", who, size_call, size, nvrtc->major, nvrtc->minor, nvrtc->path);
  unsigned char *data = malloc(size + 1);
  if (!data) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for %zu bytes of compiled kernels", who, size);
  r = cubin ? nvrtc->nvrtcGetCUBIN(prog, (char *)data) : nvrtc->nvrtcGetPTX(prog, (char *)data);
  if (r != TB_NVRTC_SUCCESS) {
    free(data);
    return nvrtc_failed(nvrtc, who, cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX", "of the compiled kernels", r);
  }
  if (!cubin) { /* PTX is text: its size counts the NUL, and one is added when NVRTC's lacks it */
    if (data[size - 1] != '\0') data[size++] = '\0';
  }
  out->kind = t->kind;
  out->data = data;
  out->size = size;
  return TB_OK;
}

tb_status tb_cuda_compile(const tb_nvrtc_api *nvrtc, const char *who, const char *name, const char *source, size_t len,
                          const tb_cuda_target *t, tb_cuda_image *out) {
  memset(out, 0, sizeof *out);
  /* NVRTC takes the source as a C string. */
  char *text = malloc(len + 1);
  if (!text) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for %zu bytes of CUDA C", who, len);
  memcpy(text, source, len);
  text[len] = '\0';
  tb_nvrtc_program prog = NULL;
  tb_nvrtc_result r = nvrtc->nvrtcCreateProgram(&prog, text, name, 0, NULL, NULL);
  free(text);
  if (r != TB_NVRTC_SUCCESS || !prog) {
    char what[96];
    snprintf(what, sizeof what, "of %zu bytes of CUDA C (%s)", len, name);
    return nvrtc_failed(nvrtc, who, "nvrtcCreateProgram", what, r != TB_NVRTC_SUCCESS ? r : TB_NVRTC_ERROR_OUT_OF_MEMORY);
  }
  const char *options[8];
  int n = 0;
  options[n++] = t->option;
  for (int i = 0; i < tb_cuda_compile_option_count && n < 8; i++) options[n++] = tb_cuda_compile_options[i];
  r = nvrtc->nvrtcCompileProgram(prog, n, options);
  tb_status st = TB_OK;
  if (r != TB_NVRTC_SUCCESS) {
    char log[LOG_EXCERPT], code[96];
    log_excerpt(nvrtc, prog, log, sizeof log);
    tb_nvrtc_error_name(nvrtc, r, code, sizeof code);
    st = tb_error(r == TB_NVRTC_ERROR_OUT_OF_MEMORY ? TB_ERR_OUT_OF_MEMORY : TB_ERR_DRIVER,
                  "%s: NVRTC %d.%d (%s) could not compile the CUDA kernels (%s) for sm_%d with %s: nvrtcCompileProgram "
                  "returned %d %s; the log begins: %s; report this with the log, or point TB_NVRTC_LIB at another NVRTC",
                  who, nvrtc->major, nvrtc->minor, nvrtc->path, name, t->arch, t->option, r, code,
                  log[0] ? log : "(empty)");
  } else {
    st = take_image(nvrtc, who, prog, t, out);
  }
  nvrtc->nvrtcDestroyProgram(&prog);
  return st;
}
