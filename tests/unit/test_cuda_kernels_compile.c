/* CTest's cuda_kernels_compile: every embedded CUDA kernel (src/backend/cuda/kernels/) compiles with the real
 * NVRTC, found as the library finds it (TB_NVRTC_LIB, libnvrtc.so.13 / .12, the pip wheels), into a cubin
 * for sm_80, sm_90 and sm_100 that holds each kernel by name; PTX for an architecture newer than NVRTC
 * knows, with an entry for each kernel; and a source that does not compile gives NVRTC's log in the error.
 * No GPU is needed. Where NVRTC cannot be found the test exits 77 (skipped) and says why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/cuda_compile.h"
#include "backend/cuda/cuda_module.h"
#include "runtime/nvrtc_api.h"
#include "test_util.h"

static tb_nvrtc_api nvrtc;

/* Whether `name` is a whole NUL-terminated string of the image (an ELF string table entry). */
static bool has_symbol(const tb_cuda_image *img, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i + n + 1 < img->size; i++)
    if (img->data[i] == '\0' && memcmp(img->data + i + 1, name, n) == 0 && img->data[i + n + 1] == '\0') return true;
  return false;
}

static size_t kernel_count(void) {
  size_t n = 0;
  while (tb_cuda_kernel_names[n]) n++;
  return n;
}

/* The names generated at build time are the source's kernels, all of them. */
static void the_name_list_matches_the_source(void **state) {
  (void)state;
  const char *src = (const char *)tb_cuda_kernel_source;
  assert_int_equal(strlen(src), tb_cuda_kernel_source_len);
  size_t in_source = 0;
  for (const char *p = strstr(src, "extern \"C\" __global__ void "); p; p = strstr(p + 1, "extern \"C\" __global__ void "))
    in_source++;
  assert_int_equal(kernel_count(), in_source);
  assert_true(in_source >= 50);
  for (size_t i = 0; tb_cuda_kernel_names[i]; i++) assert_int_equal(strncmp(tb_cuda_kernel_names[i], "tb_cu_", 6), 0);
}

static void compile_cubin(int major, int minor) {
  tb_cuda_target t;
  char who[32];
  snprintf(who, sizeof who, "sm_%d%d", major, minor);
  TB_ASSERT_OK(tb_cuda_target_for(&nvrtc, who, major, minor, &t));
  assert_int_equal(t.kind, TB_CUDA_IMAGE_CUBIN);
  assert_int_equal(t.code_arch, major * 10 + minor);
  tb_cuda_image img;
  TB_ASSERT_OK(tb_cuda_compile(&nvrtc, who, "tb_kernels.cu", (const char *)tb_cuda_kernel_source, tb_cuda_kernel_source_len,
                               &t, &img));
  assert_int_equal(img.kind, TB_CUDA_IMAGE_CUBIN);
  assert_true(img.size > 1024);
  assert_memory_equal(img.data, "\x7f" "ELF", 4);
  for (size_t i = 0; tb_cuda_kernel_names[i]; i++)
    if (!has_symbol(&img, tb_cuda_kernel_names[i])) fail_msg("%s: the cubin has no kernel %s", who, tb_cuda_kernel_names[i]);
  print_message("%s: %zu kernels, cubin of %zu bytes (NVRTC %d.%d)\n", who, kernel_count(), img.size, nvrtc.major, nvrtc.minor);
  free(img.data);
}

static void cubin_for_sm_80(void **state) {
  (void)state;
  compile_cubin(8, 0);
}
static void cubin_for_sm_90(void **state) {
  (void)state;
  compile_cubin(9, 0);
}
static void cubin_for_sm_100(void **state) {
  (void)state;
  compile_cubin(10, 0);
}

/* A GPU newer than NVRTC: PTX for the newest architecture it knows, every kernel an entry of it. */
static void ptx_for_a_newer_gpu(void **state) {
  (void)state;
  tb_cuda_target t;
  TB_ASSERT_OK(tb_cuda_target_for(&nvrtc, "sm_990", 99, 0, &t));
  assert_int_equal(t.kind, TB_CUDA_IMAGE_PTX);
  assert_true(t.code_arch >= 90 && t.code_arch < 990);
  tb_cuda_image img;
  TB_ASSERT_OK(tb_cuda_compile(&nvrtc, "sm_990", "tb_kernels.cu", (const char *)tb_cuda_kernel_source,
                               tb_cuda_kernel_source_len, &t, &img));
  assert_int_equal(img.kind, TB_CUDA_IMAGE_PTX);
  assert_int_equal(img.data[img.size - 1], '\0');
  assert_int_equal(strlen((const char *)img.data) + 1, img.size);
  char target[32];
  snprintf(target, sizeof target, ".target sm_%d", t.code_arch);
  TB_ASSERT_CONTAINS((const char *)img.data, target);
  for (size_t i = 0; tb_cuda_kernel_names[i]; i++) {
    char entry[160];
    snprintf(entry, sizeof entry, ".entry %s(", tb_cuda_kernel_names[i]);
    if (!strstr((const char *)img.data, entry)) fail_msg("the PTX has no %s", entry);
  }
  free(img.data);
}

static void a_broken_source_gives_the_log(void **state) {
  (void)state;
  tb_cuda_target t;
  TB_ASSERT_OK(tb_cuda_target_for(&nvrtc, "sm_90", 9, 0, &t));
  const char *src = "extern \"C\" __global__ void tb_cu_broken(float *y) {\n  y[0] = tb_undefined_thing;\n}\n";
  tb_cuda_image img;
  assert_int_equal(tb_cuda_compile(&nvrtc, "cuda:0", "tb_kernels.cu", src, strlen(src), &t, &img), TB_ERR_DRIVER);
  assert_null(img.data);
  const char *e = tb_last_error();
  TB_ASSERT_CONTAINS(e, "could not compile the CUDA kernels (tb_kernels.cu) for sm_90 with --gpu-architecture=sm_90");
  TB_ASSERT_CONTAINS(e, "nvrtcCompileProgram returned 6 NVRTC_ERROR_COMPILATION; the log begins: tb_kernels.cu(2): error:");
  TB_ASSERT_CONTAINS(e, "tb_undefined_thing");
}

int main(void) {
  /* TB_NVRTC_LIB, when the run sets it, chooses the NVRTC to test (CTest leaves it unset). */
  if (tb_nvrtc_open(&nvrtc, "cuda_kernels_compile") != TB_OK) {
    printf("skipped: %s\n", tb_last_error());
    return 77;
  }
  printf("NVRTC %d.%d from %s\n", nvrtc.major, nvrtc.minor, nvrtc.path);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_name_list_matches_the_source),
      cmocka_unit_test(cubin_for_sm_80),
      cmocka_unit_test(cubin_for_sm_90),
      cmocka_unit_test(cubin_for_sm_100),
      cmocka_unit_test(ptx_for_a_newer_gpu),
      cmocka_unit_test(a_broken_source_gives_the_log),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
