/* DLPack in device memory, zero-copy, on the CUDA and HIP backends over the fake runtimes (recorded 8x H100
 * and 8x MI300X machines): a device pointer the fake hands out (as PyTorch's allocator would) is imported
 * with tb_tensor_from_dlpack_on and read and written through the backend in place; the producer's deleter
 * runs exactly once, when the last view goes; a device id that is not the backend's, a pointer of another
 * device, a managed pointer (and a non-managed one said to be managed), a host pointer, a tensor reaching
 * past its allocation and a device type of another backend are each refused with the sentence that says
 * what differs, leaving the managed tensor to its owner; device tensors export as kDLCUDA / kDLROCM with
 * the device index, keeping their storage until the consumer's deleter; Level Zero refuses to wrap. */
#include "backend/backend_impl.h"
#include "test_gpumem_helpers.h"
#include "test_tensor_util.h"

#define DEVICE_TAG 0xd1ce000000000000ull /* tests/fakes/fake_devmem.h: a device pointer is the host address
                                            with this tag in its top bits */

typedef struct vendor {
  const char *name, *fixture, *lib_var, *fake, *lib_var2, *fake2;
  const char *backend; /* device 1 of the machine */
  int dl_type;
  const char *dl_name, *other_dl_name;
  int other_dl_type;
  const char *not_allocated, *another_device;
} vendor;

static const vendor vendors[] = {
    {"cuda", "h100x8", "TB_CUDA_LIB", "fake_cuda", "TB_NVML_LIB", "fake_nvml", "cuda:1", kDLCUDA, "kDLCUDA",
     "kDLROCM", kDLROCM, "is not memory that CUDA allocated", "is memory of CUDA device 3, not of this backend's device 1"},
    {"hip", "mi300x", "TB_HIP_LIB", "fake_hip", "TB_ROCM_SMI_LIB", "fake_rocm_smi", "rocm:1", kDLROCM, "kDLROCM",
     "kDLCUDA", kDLCUDA, "is not memory that HIP allocated", "is memory of HIP device 3, not of this backend's device 1"},
};

static unsigned long long (*alloc_on)(int device, size_t bytes, int managed);
static int (*free_on)(unsigned long long ptr);

static tb_backend *open_vendor(const vendor *v) {
  tbt_clear_env();
  tbt_no_vendor_libs();
  tbt_use_fixture(v->fixture);
  setenv(v->lib_var, tbt_fake(v->fake), 1);
  setenv(v->lib_var2, tbt_fake(v->fake2), 1);
  char sym[64];
  snprintf(sym, sizeof sym, "%s_alloc_on", v->fake);
  alloc_on = (unsigned long long (*)(int, size_t, int))gpumem_fake_symbol(v->fake, sym);
  snprintf(sym, sizeof sym, "%s_free", v->fake);
  free_on = (int (*)(unsigned long long))gpumem_fake_symbol(v->fake, sym);
  tb_backend *b = NULL;
  tb_status st = tb_backend_create(v->backend, &b);
  if (st != TB_OK) fail_msg("tb_backend_create(%s): %s: %s", v->backend, tb_status_str(st), tb_last_error());
  return b;
}

/* The host bytes behind a fake device pointer: what the producer's kernels would have written. */
static float *host_view(unsigned long long device_pointer) {
  assert_true((device_pointer & 0xffff000000000000ull) == DEVICE_TAG);
  return (float *)(uintptr_t)(device_pointer & ~DEVICE_TAG);
}

/* A producer: a 2-d f32 tensor over device memory it allocated, a deleter that counts and frees. */
typedef struct producer {
  DLManagedTensorVersioned managed;
  int64_t shape[2], strides[2];
  unsigned long long memory;
  int deleted;
} producer;

static void producer_deleter(DLManagedTensorVersioned *self) {
  producer *p = self->manager_ctx;
  p->deleted++;
  free_on(p->memory);
}

/* rows x cols elements at `byte_offset` into an allocation of `bytes` on `device`, made by the fake. */
static void producer_init(producer *p, int dl_type, int dl_id, int device, size_t bytes, int managed, int64_t rows,
                          int64_t cols, uint64_t byte_offset) {
  memset(p, 0, sizeof *p);
  p->memory = alloc_on(device, bytes, managed);
  assert_true(p->memory != 0);
  p->shape[0] = rows;
  p->shape[1] = cols;
  p->managed.version.major = DLPACK_MAJOR_VERSION;
  p->managed.version.minor = DLPACK_MINOR_VERSION;
  p->managed.manager_ctx = p;
  p->managed.deleter = producer_deleter;
  DLTensor *dl = &p->managed.dl_tensor;
  dl->data = (void *)(uintptr_t)p->memory;
  dl->device.device_type = (DLDeviceType)dl_type;
  dl->device.device_id = dl_id;
  dl->ndim = 2;
  dl->dtype = (DLDataType){kDLFloat, 32, 1};
  dl->shape = p->shape;
  dl->byte_offset = byte_offset;
}

/* An import: the producer's bytes read through the backend, a write through the backend seen by the
 * producer in place, strides and byte_offset honoured, and the deleter run once when the last view goes. */
static void imports_device_memory_in_place(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof vendors / sizeof vendors[0]; k++) {
    const vendor *v = &vendors[k];
    tb_backend *b = open_vendor(v);
    producer p;
    producer_init(&p, v->dl_type, 1, 1, 4096, 0, 3, 4, 256);
    p.strides[0] = 8; /* every other group of 4 floats: rows 8 floats apart */
    p.strides[1] = 1;
    p.managed.dl_tensor.strides = p.strides;
    float *bytes = host_view(p.memory) + 64; /* byte_offset 256 */
    for (int i = 0; i < 24; i++) bytes[i] = (float)i + 0.5f;
    tb_tensor *t = NULL;
    TB_ASSERT_OK(tb_tensor_from_dlpack_on(b, &p.managed, &t));
    assert_ptr_equal(tb_tensor_backend(t), b);
    assert_null(tb_tensor_host_data(t)); /* device memory: the host cannot address it */
    assert_false(tb_tensor_is_contiguous(t));
    float got[12];
    TB_ASSERT_OK(tb_tensor_copy_to_host(t, got, sizeof got));
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) assert_true(got[i * 4 + j] == (float)(i * 8 + j) + 0.5f);
    /* Zero-copy: a write through the backend lands in the producer's memory, between-rows bytes kept. */
    float minus[12];
    for (int i = 0; i < 12; i++) minus[i] = -(float)i;
    TB_ASSERT_OK(tb_tensor_copy_from_host(t, minus, sizeof minus));
    assert_true(bytes[8 + 3] == -7.0f);
    assert_true(bytes[4] == 4.5f);
    /* A contiguous row as a view, filled by the device's own fill. */
    tb_tensor *row = NULL;
    const int64_t rshape[1] = {4};
    TB_ASSERT_OK(tb_tensor_view(t, 1, rshape, NULL, 16, &row));
    float seven = 7.0f;
    TB_ASSERT_OK(tb_tensor_fill(row, &seven));
    for (int j = 0; j < 4; j++) assert_true(bytes[16 + j] == 7.0f);
    /* Not in the backend's allocator: nothing allocated, nothing reserved. */
    tb_memory_stats s = {.size = sizeof s};
    TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
    assert_int_equal(s.allocated, 0);
    assert_int_equal(s.num_allocs, 0);
    tb_tensor_destroy(t);
    assert_int_equal(p.deleted, 0); /* the view still uses it */
    tb_tensor_destroy(row);
    assert_int_equal(p.deleted, 1);
    tb_backend_destroy(b);
  }
}

/* Export of a device tensor: kDLCUDA / kDLROCM, the device index, the device pointer of the tensor's bytes;
 * the storage outlives the tensor until the consumer's deleter; importing the export again on the same
 * backend shares the same memory. */
static void exports_device_tensors(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof vendors / sizeof vendors[0]; k++) {
    const vendor *v = &vendors[k];
    tb_backend *b = open_vendor(v);
    const int64_t shape[2] = {4, 6};
    tb_tensor *t = NULL, *view = NULL;
    TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 2, shape, &t));
    float in[24];
    for (int i = 0; i < 24; i++) in[i] = (float)i * 2.0f;
    TB_ASSERT_OK(tb_tensor_copy_from_host(t, in, sizeof in));
    const int64_t vshape[2] = {2, 3}, vstrides[2] = {6, 1};
    TB_ASSERT_OK(tb_tensor_view(t, 2, vshape, vstrides, 7, &view));
    DLManagedTensorVersioned *m = NULL;
    TB_ASSERT_OK(tb_tensor_to_dlpack(view, &m));
    const DLTensor *dl = &m->dl_tensor;
    assert_int_equal(dl->device.device_type, v->dl_type);
    assert_int_equal(dl->device.device_id, 1);
    assert_int_equal(dl->byte_offset, 7 * sizeof(float));
    assert_int_equal((uintptr_t)dl->data % 256, 0);
    assert_int_equal(dl->strides[0], 6);
    const float *seen = host_view((unsigned long long)(uintptr_t)dl->data) + 7;
    assert_true(seen[0] == 14.0f && seen[6 + 2] == 30.0f);
    tb_tensor_destroy(view);
    tb_tensor_destroy(t);
    tb_memory_stats s = {.size = sizeof s};
    TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
    assert_int_equal(s.allocated, 512); /* kept by the export */
    /* Imported again on its own backend: the same device memory, no copy. */
    tb_tensor *back = NULL;
    TB_ASSERT_OK(tb_tensor_from_dlpack_on(b, m, &back));
    DLManagedTensorVersioned *again = NULL;
    TB_ASSERT_OK(tb_tensor_to_dlpack(back, &again));
    assert_ptr_equal((char *)again->dl_tensor.data + again->dl_tensor.byte_offset, (char *)dl->data + dl->byte_offset);
    float got[6];
    TB_ASSERT_OK(tb_tensor_copy_to_host(back, got, sizeof got));
    assert_true(got[0] == 14.0f && got[5] == 30.0f);
    again->deleter(again);
    tb_tensor_destroy(back); /* runs the first export's deleter: the block goes back to the allocator */
    TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
    assert_int_equal(s.allocated, 0);
    tb_backend_destroy(b);
  }
}

/* A refused import leaves the managed tensor to its owner: the deleter has not run. */
static void refused(tb_backend *b, producer *p, tb_status want, const char *needle) {
  tb_tensor *t = (tb_tensor *)1;
  assert_int_equal(tb_tensor_from_dlpack_on(b, &p->managed, &t), want);
  assert_null(t);
  TB_ASSERT_CONTAINS(tb_last_error(), "tb_tensor_from_dlpack_on: ");
  TB_ASSERT_CONTAINS(tb_last_error(), needle);
  assert_int_equal(p->deleted, 0);
  p->managed.deleter(&p->managed);
}

static void wrong_devices_and_pointers_are_refused(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof vendors / sizeof vendors[0]; k++) {
    const vendor *v = &vendors[k];
    tb_backend *b = open_vendor(v);
    char want[256];
    producer p;
    /* The DLPack device id is not the backend's. */
    producer_init(&p, v->dl_type, 2, 1, 1024, 0, 4, 4, 0);
    snprintf(want, sizeof want, "dl_tensor.device is %s:2 but the backend is %s (device 1)", v->dl_name, v->backend);
    refused(b, &p, TB_ERR_INVALID_ARGUMENT, want);
    /* The DLPack device says 1, the driver says the pointer is device 3's. */
    producer_init(&p, v->dl_type, 1, 3, 1024, 0, 4, 4, 0);
    refused(b, &p, TB_ERR_INVALID_ARGUMENT, v->another_device);
    /* More bytes than the allocation holds. */
    producer_init(&p, v->dl_type, 1, 1, 1024, 0, 16, 17, 0);
    refused(b, &p, TB_ERR_INVALID_ARGUMENT, "reaches 1088 bytes from");
    TB_ASSERT_CONTAINS(tb_last_error(), "past the end of its allocation");
    producer_init(&p, v->dl_type, 1, 1, 1024, 0, 4, 4, 1024 - 32);
    refused(b, &p, TB_ERR_INVALID_ARGUMENT, "past the end of its allocation");
    /* Another backend's device type, and host memory. */
    producer_init(&p, v->other_dl_type, 1, 1, 1024, 0, 4, 4, 0);
    snprintf(want, sizeof want, "device_type is %d (%s) but the backend is %s, whose memory is %s", v->other_dl_type,
             v->other_dl_name, v->backend, v->dl_name);
    refused(b, &p, TB_ERR_INVALID_ARGUMENT, want);
    producer_init(&p, kDLCPU, 0, 1, 1024, 0, 4, 4, 0);
    refused(b, &p, TB_ERR_INVALID_ARGUMENT, "host memory, but the backend is");
    tb_backend_destroy(b);
  }
}

/* A pointer the runtime never handed out (host memory said to be on the device). */
static void host_pointers_are_not_device_memory(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof vendors / sizeof vendors[0]; k++) {
    const vendor *v = &vendors[k];
    tb_backend *b = open_vendor(v);
    float host[16] = {0};
    int64_t shape[1] = {16};
    DLManagedTensorVersioned m = {.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION},
                                  .dl_tensor = {.data = host, .device = {(DLDeviceType)v->dl_type, 1}, .ndim = 1,
                                                .dtype = {kDLFloat, 32, 1}, .shape = shape}};
    tb_tensor *t = NULL;
    assert_int_equal(tb_tensor_from_dlpack_on(b, &m, &t), TB_ERR_INVALID_ARGUMENT);
    assert_null(t);
    TB_ASSERT_CONTAINS(tb_last_error(), v->not_allocated);
    TB_ASSERT_CONTAINS(tb_last_error(), v->backend);
    /* An empty tensor has no memory to check: it imports without a pointer. */
    shape[0] = 0;
    m.dl_tensor.data = NULL;
    TB_ASSERT_OK(tb_tensor_from_dlpack_on(b, &m, &t));
    assert_int_equal(tb_tensor_numel(t), 0);
    tb_tensor_destroy(t);
    tb_backend_destroy(b);
  }
}

/* Managed memory: kDLCUDAManaged is checked against the driver's IS_MANAGED, may live on any device
 * (it migrates), and reads back; a plain device pointer said to be managed is refused. */
static void managed_memory(void **state) {
  (void)state;
  const vendor *v = &vendors[0];
  tb_backend *b = open_vendor(v);
  producer p;
  producer_init(&p, kDLCUDAManaged, 1, 5, 1024, 1, 2, 2, 0);
  float *bytes = host_view(p.memory);
  for (int i = 0; i < 4; i++) bytes[i] = (float)(10 + i);
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_from_dlpack_on(b, &p.managed, &t));
  float got[4];
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, got, sizeof got));
  for (int i = 0; i < 4; i++) assert_true(got[i] == (float)(10 + i));
  DLManagedTensorVersioned *m = NULL;
  TB_ASSERT_OK(tb_tensor_to_dlpack(t, &m));
  assert_int_equal(m->dl_tensor.device.device_type, kDLCUDAManaged); /* an import keeps its type */
  tb_tensor_destroy(t);
  assert_int_equal(p.deleted, 0); /* the export holds it */
  m->deleter(m);
  assert_int_equal(p.deleted, 1);
  producer_init(&p, kDLCUDAManaged, 1, 1, 1024, 0, 2, 2, 0);
  refused(b, &p, TB_ERR_INVALID_ARGUMENT, "says kDLCUDAManaged but pointer 0x");
  TB_ASSERT_CONTAINS(tb_last_error(), "is not managed memory");
  tb_backend_destroy(b);
  /* HIP: a kDLROCM tensor in managed memory is device-usable memory. */
  b = open_vendor(&vendors[1]);
  producer_init(&p, kDLROCM, 1, 6, 1024, 1, 2, 2, 0);
  host_view(p.memory)[3] = 42.0f;
  TB_ASSERT_OK(tb_tensor_from_dlpack_on(b, &p.managed, &t));
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, got, sizeof got));
  assert_true(got[3] == 42.0f);
  tb_tensor_destroy(t);
  assert_int_equal(p.deleted, 1);
  tb_backend_destroy(b);
}

/* The CPU backend takes host memory only, through either call; the old call keeps refusing devices. */
static void cpu_backend_takes_host_memory_only(void **state) {
  (void)state;
  tb_backend *b = open_vendor(&vendors[0]);
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  producer p;
  producer_init(&p, kDLCUDA, 1, 1, 1024, 0, 2, 2, 0);
  refused(cpu, &p, TB_ERR_UNSUPPORTED, "device_type is 2 (kDLCUDA), memory the CPU backend cannot address");
  producer_init(&p, kDLCUDA, 1, 1, 1024, 0, 2, 2, 0);
  tb_tensor *t = NULL;
  assert_int_equal(tb_tensor_from_dlpack(b, &p.managed, &t), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "DLPack import needs a CPU backend here (device memory: tb_tensor_from_dlpack_on)");
  p.managed.deleter(&p.managed);
  float host[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  DLManagedTensorVersioned m = {.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION},
                                .dl_tensor = {.data = host, .device = {kDLCUDAHost, 0}, .ndim = 1,
                                              .dtype = {kDLFloat, 32, 1}, .shape = shape}};
  TB_ASSERT_OK(tb_tensor_from_dlpack_on(cpu, &m, &t));
  assert_ptr_equal(tb_tensor_host_data(t), host);
  tb_tensor_destroy(t);
  assert_int_equal(tb_tensor_from_dlpack_on(NULL, &m, &t), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "backend and managed must not be NULL");
  tb_backend_destroy(cpu);
  tb_backend_destroy(b);
}

/* Level Zero cannot use another context's USM pointer: a clear refusal, nothing taken over. */
static void level_zero_refuses_to_wrap(void **state) {
  (void)state;
  tbt_clear_env();
  tbt_no_vendor_libs();
  tbt_use_fixture("intel_max");
  setenv("TB_ZE_LIB", tbt_fake("fake_ze"), 1);
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create("xpu:3", &b));
  float host[4] = {0};
  int64_t shape[1] = {4};
  DLManagedTensorVersioned m = {.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION},
                                .dl_tensor = {.data = host, .device = {kDLOneAPI, 3}, .ndim = 1,
                                              .dtype = {kDLFloat, 32, 1}, .shape = shape}};
  tb_tensor *t = NULL;
  assert_int_equal(tb_tensor_from_dlpack_on(b, &m, &t), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "xpu:3: device memory that another library allocated cannot be imported");
  TB_ASSERT_CONTAINS(tb_last_error(), "SYCL / Level Zero context");
  /* Its tensors have no DLPack form that points at them either. */
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 1, shape, &t));
  DLManagedTensorVersioned *out = NULL;
  assert_int_equal(tb_tensor_to_dlpack(t, &out), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "DLPack export works for CPU, CUDA and ROCm tensors");
  tb_tensor_destroy(t);
  tb_backend_destroy(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(imports_device_memory_in_place),
      cmocka_unit_test(exports_device_tensors),
      cmocka_unit_test(wrong_devices_and_pointers_are_refused),
      cmocka_unit_test(host_pointers_are_not_device_memory),
      cmocka_unit_test(managed_memory),
      cmocka_unit_test(cpu_backend_takes_host_memory_only),
      cmocka_unit_test(level_zero_refuses_to_wrap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
