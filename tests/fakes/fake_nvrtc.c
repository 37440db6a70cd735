/* A fake NVRTC for tests: exports the nvrtc* calls the CUDA backend uses, with the real C ABI (nvrtcResult
 * is int, nvrtcProgram a pointer), and "compiles" CUDA C into an image that the fake libcuda
 * (fake_cuda.c) loads:
 *   "FAKE-CUBIN sm_XY\n" or "FAKE-PTX compute_XY\n", then "entry <name>\n" for every
 *   `extern "C" __global__ void <name>(` of the source, ending with a NUL (as real PTX does).
 * It checks what the real one checks: one --gpu-architecture=sm_XY or compute_XY option naming a
 * supported architecture (else 5 NVRTC_ERROR_INVALID_OPTION, with the real log line), and a source with an
 * `#error` line fails to compile (6 NVRTC_ERROR_COMPILATION) with a log in NVRTC's format naming the file
 * and line. The environment chooses the rest at call time:
 *   FAKE_NVRTC_VERSION  "major.minor" (default 13.0)
 *   FAKE_NVRTC_ARCHS    the supported architectures, comma-separated (default 75,80,86,87,89,90,100,103,120)
 *   FAKE_NVRTC_FAIL     create (nvrtcCreateProgram returns 1 NVRTC_ERROR_OUT_OF_MEMORY) | compile
 *                       (nvrtcCompileProgram returns FAKE_NVRTC_FAIL_CODE, default 6, with a log) | image
 *                       (nvrtcGetCUBINSize / nvrtcGetPTXSize return 11 NVRTC_ERROR_INTERNAL_ERROR)
 * fake_nvrtc_compiles() counts successful compiles; fake_nvrtc_live_programs() the programs not destroyed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_once.h"

FAKE_ONCE("FAKE_LOADED_NVRTC", "fake_nvrtc")

typedef int nvrtcResult;

enum {
  SUCCESS = 0,
  OUT_OF_MEMORY = 1,
  INVALID_INPUT = 3,
  INVALID_PROGRAM = 4,
  INVALID_OPTION = 5,
  COMPILATION = 6,
  INTERNAL_ERROR = 11,
};

typedef struct program {
  char *source, *name;
  char *log;
  char *image;
  size_t image_size;
  int cubin;
} program;

static int compiles, live_programs;

static const char *env_or(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return v && *v ? v : fallback;
}

static int failing(const char *what) { return strcmp(env_or("FAKE_NVRTC_FAIL", ""), what) == 0; }

const char *nvrtcGetErrorString(nvrtcResult r) {
  switch (r) {
    case SUCCESS: return "NVRTC_SUCCESS";
    case OUT_OF_MEMORY: return "NVRTC_ERROR_OUT_OF_MEMORY";
    case INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
    case INVALID_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
    case INVALID_OPTION: return "NVRTC_ERROR_INVALID_OPTION";
    case COMPILATION: return "NVRTC_ERROR_COMPILATION";
    case INTERNAL_ERROR: return "NVRTC_ERROR_INTERNAL_ERROR";
    default: return "NVRTC_ERROR unknown";
  }
}

nvrtcResult nvrtcVersion(int *major, int *minor) {
  if (!major || !minor) return INVALID_INPUT;
  if (sscanf(env_or("FAKE_NVRTC_VERSION", "13.0"), "%d.%d", major, minor) != 2) return INTERNAL_ERROR;
  return SUCCESS;
}

static int archs(int *out, int cap) {
  const char *list = env_or("FAKE_NVRTC_ARCHS", "75,80,86,87,89,90,100,103,120");
  int n = 0;
  for (const char *p = list; *p && n < cap;) {
    out[n++] = atoi(p);
    p += strcspn(p, ",");
    if (*p) p++;
  }
  return n;
}

nvrtcResult nvrtcGetNumSupportedArchs(int *count) {
  int all[64];
  if (!count) return INVALID_INPUT;
  *count = archs(all, 64);
  return SUCCESS;
}

nvrtcResult nvrtcGetSupportedArchs(int *out) {
  int all[64];
  if (!out) return INVALID_INPUT;
  int n = archs(all, 64);
  memcpy(out, all, (size_t)n * sizeof *out);
  return SUCCESS;
}

nvrtcResult nvrtcCreateProgram(program **prog, const char *src, const char *name, int num_headers,
                               const char *const *headers, const char *const *include_names) {
  (void)headers;
  (void)include_names;
  if (!prog || !src || num_headers < 0) return INVALID_INPUT;
  if (failing("create")) return OUT_OF_MEMORY;
  program *p = calloc(1, sizeof *p);
  if (!p) return OUT_OF_MEMORY;
  p->source = strdup(src);
  p->name = strdup(name ? name : "default_program");
  __atomic_add_fetch(&live_programs, 1, __ATOMIC_RELAXED);
  *prog = p;
  return SUCCESS;
}

nvrtcResult nvrtcDestroyProgram(program **prog) {
  if (!prog || !*prog) return INVALID_PROGRAM;
  program *p = *prog;
  free(p->source);
  free(p->name);
  free(p->log);
  free(p->image);
  free(p);
  *prog = NULL;
  __atomic_sub_fetch(&live_programs, 1, __ATOMIC_RELAXED);
  return SUCCESS;
}

static void set_log(program *p, const char *text) {
  free(p->log);
  p->log = strdup(text);
}

/* The architecture option: 1 for sm_XY, 0 for compute_XY, -1 when absent, repeated or not supported. */
static int arch_option(int n, const char *const *options, int *arch) {
  int found = -1, count = 0;
  for (int i = 0; i < n; i++) {
    const char *o = options[i];
    const char *prefix = "--gpu-architecture=";
    if (strncmp(o, prefix, strlen(prefix)) != 0) continue;
    o += strlen(prefix);
    count++;
    if (strncmp(o, "sm_", 3) == 0) {
      found = 1;
      *arch = atoi(o + 3);
    } else if (strncmp(o, "compute_", 8) == 0) {
      found = 0;
      *arch = atoi(o + 8);
    }
  }
  if (count != 1 || found < 0) return -1;
  int all[64], k = archs(all, 64);
  for (int i = 0; i < k; i++)
    if (all[i] == *arch) return found;
  return -1;
}

/* An image listing the source's kernels. */
static int make_image(program *p, int cubin, int arch) {
  size_t cap = 64 + strlen(p->source), len = 0;
  char *img = malloc(cap);
  if (!img) return 0;
  len += (size_t)snprintf(img, cap, cubin ? "FAKE-CUBIN sm_%d\n" : "FAKE-PTX compute_%d\n", arch);
  const char *marker = "extern \"C\" __global__ void ";
  for (const char *s = strstr(p->source, marker); s; s = strstr(s + 1, marker)) {
    const char *name = s + strlen(marker);
    size_t n = strcspn(name, "( \t\n");
    len += (size_t)snprintf(img + len, cap - len, "entry %.*s\n", (int)n, name);
  }
  p->image = img;
  p->image_size = len + 1; /* with its NUL, so that the fake libcuda can read it as text */
  p->cubin = cubin;
  return 1;
}

nvrtcResult nvrtcCompileProgram(program *p, int n, const char *const *options) {
  if (!p) return INVALID_PROGRAM;
  if (n < 0 || (n > 0 && !options)) return INVALID_INPUT;
  int arch = 0;
  int cubin = arch_option(n, options, &arch);
  if (cubin < 0) {
    set_log(p, "nvrtc: error: invalid value for --gpu-architecture (-arch)\n\n");
    return INVALID_OPTION;
  }
  if (failing("compile")) {
    set_log(p, "tb_kernels.cu(1): catastrophic error: out of memory\n\n1 catastrophic error detected in the compilation.\n");
    return atoi(env_or("FAKE_NVRTC_FAIL_CODE", "6"));
  }
  const char *err = strstr(p->source, "#error");
  if (err) {
    int line = 1;
    for (const char *c = p->source; c < err; c++) line += *c == '\n';
    const char *text = err + strlen("#error");
    while (*text == ' ') text++;
    size_t len = strcspn(text, "\n");
    char log[512];
    snprintf(log, sizeof log,
             "%s(%d): error: #error directive: %.*s\n  #error %.*s\n   ^\n\n1 error detected in the compilation of "
             "\"%s\".\n",
             p->name, line, (int)len, text, (int)len, text, p->name);
    set_log(p, log);
    return COMPILATION;
  }
  if (!make_image(p, cubin, arch)) return OUT_OF_MEMORY;
  set_log(p, "");
  __atomic_add_fetch(&compiles, 1, __ATOMIC_RELAXED);
  return SUCCESS;
}

nvrtcResult nvrtcGetProgramLogSize(program *p, size_t *size) {
  if (!p) return INVALID_PROGRAM;
  if (!size) return INVALID_INPUT;
  *size = (p->log ? strlen(p->log) : 0) + 1;
  return SUCCESS;
}

nvrtcResult nvrtcGetProgramLog(program *p, char *log) {
  if (!p) return INVALID_PROGRAM;
  if (!log) return INVALID_INPUT;
  strcpy(log, p->log ? p->log : "");
  return SUCCESS;
}

static nvrtcResult image_size(program *p, int cubin, size_t *size) {
  if (!p) return INVALID_PROGRAM;
  if (!size) return INVALID_INPUT;
  if (failing("image")) return INTERNAL_ERROR;
  if (!p->image || p->cubin != cubin) { /* NVRTC answers 0 bytes for the kind it did not make */
    *size = 0;
    return SUCCESS;
  }
  *size = p->image_size;
  return SUCCESS;
}

static nvrtcResult image(program *p, int cubin, char *out) {
  if (!p) return INVALID_PROGRAM;
  if (!out) return INVALID_INPUT;
  if (!p->image || p->cubin != cubin) return INVALID_PROGRAM;
  memcpy(out, p->image, p->image_size);
  return SUCCESS;
}

nvrtcResult nvrtcGetPTXSize(program *p, size_t *size) { return image_size(p, 0, size); }
nvrtcResult nvrtcGetPTX(program *p, char *out) { return image(p, 0, out); }

nvrtcResult nvrtcGetCUBINSize(program *p, size_t *size) { return image_size(p, 1, size); }
nvrtcResult nvrtcGetCUBIN(program *p, char *out) { return image(p, 1, out); }

int fake_nvrtc_compiles(void);
int fake_nvrtc_live_programs(void);
int fake_nvrtc_compiles(void) { return __atomic_load_n(&compiles, __ATOMIC_RELAXED); }
int fake_nvrtc_live_programs(void) { return __atomic_load_n(&live_programs, __ATOMIC_RELAXED); }
