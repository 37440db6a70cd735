/* The OpenCL backend's local declarations (src/runtime/opencl_exec_api.h) against the Khronos headers
 * when the system has them, and how OpenCL codes become statuses and sentences (cl_error.c). */
#include <string.h>
#include "backend/opencl/cl_device.h"
#include "test_util.h"

#if __has_include(<CL/cl.h>)
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#define HAVE_CL_HEADERS 1
_Static_assert(TB_CL_DEVICE_NOT_AVAILABLE == CL_DEVICE_NOT_AVAILABLE && TB_CL_OUT_OF_RESOURCES == CL_OUT_OF_RESOURCES &&
                   TB_CL_MEM_OBJECT_ALLOCATION_FAILURE == CL_MEM_OBJECT_ALLOCATION_FAILURE &&
                   TB_CL_OUT_OF_HOST_MEMORY == CL_OUT_OF_HOST_MEMORY && TB_CL_INVALID_BUFFER_SIZE == CL_INVALID_BUFFER_SIZE,
               "error codes");
_Static_assert(TB_CL_DEVICE_MEM_BASE_ADDR_ALIGN == CL_DEVICE_MEM_BASE_ADDR_ALIGN && TB_CL_DEVICE_PLATFORM == CL_DEVICE_PLATFORM &&
                   TB_CL_CONTEXT_PLATFORM == CL_CONTEXT_PLATFORM && TB_CL_MEM_READ_WRITE == CL_MEM_READ_WRITE &&
                   TB_CL_TRUE == CL_TRUE,
               "constants");
_Static_assert(sizeof(tb_cl_context_properties) == sizeof(cl_context_properties) &&
                   sizeof(tb_cl_queue_properties) == sizeof(cl_queue_properties) &&
                   sizeof(tb_cl_mem_flags) == sizeof(cl_mem_flags) && sizeof(tb_cl_bool) == sizeof(cl_bool) &&
                   sizeof(tb_cl_command_queue_properties) == sizeof(cl_command_queue_properties),
               "type sizes");
#else
#define HAVE_CL_HEADERS 0
#endif

static void constants_match_khronos(void **state) {
  (void)state;
  if (!HAVE_CL_HEADERS) skip(); /* checked at compile time above when <CL/cl.h> is installed (opencl-headers) */
  assert_int_equal(TB_CL_CONTEXT_PLATFORM, 0x1084);
}

static void codes_become_statuses_and_sentences(void **state) {
  (void)state;
  tb_cl_device dev;
  memset(&dev, 0, sizeof dev);
  strcpy(dev.label, "opencl:3 (gfx942)");
  const struct {
    tb_cl_int code;
    tb_status status;
    const char *text, *fix;
  } cases[] = {
      {-4, TB_ERR_OUT_OF_MEMORY, "-4 CL_MEM_OBJECT_ALLOCATION_FAILURE", "free device memory"},
      {-5, TB_ERR_OUT_OF_MEMORY, "-5 CL_OUT_OF_RESOURCES", "free device memory"},
      {-6, TB_ERR_OUT_OF_MEMORY, "-6 CL_OUT_OF_HOST_MEMORY", "free host memory"},
      {-61, TB_ERR_OUT_OF_MEMORY, "-61 CL_INVALID_BUFFER_SIZE", "maximum single allocation"},
      {-2, TB_ERR_UNAVAILABLE, "-2 CL_DEVICE_NOT_AVAILABLE", "another process may hold the device"},
      {-1001, TB_ERR_UNAVAILABLE, "-1001 CL_PLATFORM_NOT_FOUND_KHR", "install an OpenCL ICD"},
      {-36, TB_ERR_DRIVER, "-36 CL_INVALID_COMMAND_QUEUE", "check the OpenCL driver with `clinfo`"},
      {-9999, TB_ERR_DRIVER, "-9999 unknown OpenCL error", "update or reinstall it"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(tb_cl_fail(&dev, "clEnqueueReadBuffer", "8 bytes at offset 0", cases[i].code), cases[i].status);
    TB_ASSERT_CONTAINS(tb_last_error(), "opencl:3 (gfx942): clEnqueueReadBuffer (8 bytes at offset 0) failed with ");
    TB_ASSERT_CONTAINS(tb_last_error(), cases[i].text);
    TB_ASSERT_CONTAINS(tb_last_error(), cases[i].fix);
  }
  assert_int_equal(tb_cl_fail(&dev, "clFinish", "", -36), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "opencl:3 (gfx942): clFinish failed with -36");
  assert_int_equal(tb_cl_fail(NULL, "clFinish", NULL, -5), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "OpenCL device: clFinish failed with -5 CL_OUT_OF_RESOURCES");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(constants_match_khronos),
      cmocka_unit_test(codes_become_statuses_and_sentences),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
