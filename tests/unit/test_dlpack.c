/* DLPack on the CPU backend: export read by a consumer written here (through strides and byte_offset)
 * that calls the deleter, storage kept alive by an export after its tensors are gone, the dtype codes,
 * zero-copy import of a tensor made here with a counting deleter, read-only imports, and every bad
 * field rejected by name with the managed tensor left to its owner. */
#include "test_tensor_util.h"

/* The consumer: reads element (i, j) of a 2-d f32 DLTensor the way any framework would. */
static float consumer_read(const DLTensor *dl, int64_t i, int64_t j) {
  const char *base = (const char *)dl->data + dl->byte_offset;
  int64_t e = dl->strides ? i * dl->strides[0] + j * dl->strides[1] : i * dl->shape[1] + j;
  float v;
  memcpy(&v, base + e * (int64_t)sizeof(float), sizeof v);
  return v;
}

static tb_tensor *iota_4x6(tb_backend *b) {
  const int64_t shape[] = {4, 6};
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 2, shape, &t));
  float v[24];
  for (int i = 0; i < 24; i++) v[i] = (float)i;
  TB_ASSERT_OK(tb_tensor_copy_from_host(t, v, sizeof v));
  return t;
}

static void export_read_by_consumer(void **state) {
  tb_backend *b = *state;
  tb_tensor *base = iota_4x6(b), *s = NULL;
  const int64_t shape[] = {2, 3}, strides[] = {6, 1};
  TB_ASSERT_OK(tb_tensor_view(base, 2, shape, strides, 8, &s));
  DLManagedTensorVersioned *m = NULL;
  TB_ASSERT_OK(tb_tensor_to_dlpack(s, &m));
  assert_int_equal(m->version.major, 1);
  assert_int_equal(m->version.minor, 1);
  assert_int_equal(m->flags, 0);
  assert_non_null(m->deleter);
  const DLTensor *dl = &m->dl_tensor;
  assert_int_equal(dl->device.device_type, kDLCPU);
  assert_int_equal(dl->device.device_id, 0);
  assert_int_equal(dl->ndim, 2);
  assert_int_equal(dl->dtype.code, kDLFloat);
  assert_int_equal(dl->dtype.bits, 32);
  assert_int_equal(dl->dtype.lanes, 1);
  assert_int_equal(dl->shape[0], 2);
  assert_int_equal(dl->shape[1], 3);
  assert_int_equal(dl->strides[0], 6);
  assert_int_equal(dl->strides[1], 1);
  assert_int_equal(dl->byte_offset, 32);
  /* Zero-copy: the same memory the tensor uses. */
  assert_ptr_equal((char *)dl->data + dl->byte_offset, tb_tensor_host_data(s));
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) assert_true(consumer_read(dl, i, j) == (float)(8 + i * 6 + j));
  /* Writes by the tensor are seen by the consumer. */
  float minus = -1;
  TB_ASSERT_OK(tb_tensor_fill(s, &minus));
  assert_true(consumer_read(dl, 1, 2) == -1.0f);
  m->deleter(m);
  tb_tensor_destroy(s);
  tb_tensor_destroy(base);
  tb_memory_stats st = {.size = sizeof st};
  TB_ASSERT_OK(tb_backend_memory_stats(b, &st));
  assert_int_equal(st.allocated, 0);
}

static void export_outlives_tensor(void **state) {
  tb_backend *b = *state;
  tb_tensor *t = iota_4x6(b);
  DLManagedTensorVersioned *m = NULL;
  TB_ASSERT_OK(tb_tensor_to_dlpack(t, &m));
  tb_tensor_destroy(t);
  tb_memory_stats st = {.size = sizeof st};
  TB_ASSERT_OK(tb_backend_memory_stats(b, &st));
  assert_int_equal(st.allocated, 512); /* 96 bytes rounded to the allocator's 512-byte class */
  assert_int_equal(st.num_frees, 0);
  /* Under ASan this read proves the data is still alive. */
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 6; j++) assert_true(consumer_read(&m->dl_tensor, i, j) == (float)(i * 6 + j));
  /* The backend cannot move while the export holds its memory. */
  assert_int_equal(tb_backend_set_device(b, 0), TB_OK); /* same device: nothing to do */
  m->deleter(m);
  TB_ASSERT_OK(tb_backend_memory_stats(b, &st));
  assert_int_equal(st.allocated, 0);
  assert_int_equal(st.num_frees, 1);
}

static void export_dtype_codes(void **state) {
  tb_backend *b = *state;
  static const struct {
    tb_dtype dtype;
    uint8_t code, bits;
  } table[] = {
      {TB_DTYPE_F64, kDLFloat, 64},          {TB_DTYPE_F32, kDLFloat, 32},     {TB_DTYPE_F16, kDLFloat, 16},
      {TB_DTYPE_BF16, kDLBfloat, 16},        {TB_DTYPE_FP8_E4M3FN, kDLFloat8_e4m3fn, 8},
      {TB_DTYPE_FP8_E5M2, kDLFloat8_e5m2, 8}, {TB_DTYPE_I64, kDLInt, 64},       {TB_DTYPE_I32, kDLInt, 32},
      {TB_DTYPE_I16, kDLInt, 16},            {TB_DTYPE_I8, kDLInt, 8},         {TB_DTYPE_U8, kDLUInt, 8},
      {TB_DTYPE_BOOL, kDLBool, 8},
  };
  assert_int_equal(sizeof table / sizeof table[0], TB_DTYPE_COUNT);
  for (size_t i = 0; i < TB_DTYPE_COUNT; i++) {
    tb_tensor *t = NULL, *back = NULL;
    const int64_t shape[] = {3};
    TB_ASSERT_OK(tb_tensor_create(b, table[i].dtype, 1, shape, &t));
    unsigned char bytes[24];
    tbt_random_bytes(bytes, sizeof bytes, i);
    size_t n = 3 * tb_dtype_size(table[i].dtype);
    TB_ASSERT_OK(tb_tensor_copy_from_host(t, bytes, n));
    DLManagedTensorVersioned *m = NULL;
    TB_ASSERT_OK(tb_tensor_to_dlpack(t, &m));
    assert_int_equal(m->dl_tensor.dtype.code, table[i].code);
    assert_int_equal(m->dl_tensor.dtype.bits, table[i].bits);
    /* And back in: the same dtype, the same memory. */
    TB_ASSERT_OK(tb_tensor_from_dlpack(b, m, &back));
    assert_int_equal(tb_tensor_dtype(back), table[i].dtype);
    assert_ptr_equal(tb_tensor_host_data(back), tb_tensor_host_data(t));
    unsigned char out[24];
    TB_ASSERT_OK(tb_tensor_copy_to_host(back, out, n));
    assert_memory_equal(out, bytes, n);
    tb_tensor_destroy(t);
    tb_tensor_destroy(back); /* calls the export's deleter, which frees the storage */
  }
  tb_memory_stats st = {.size = sizeof st};
  TB_ASSERT_OK(tb_backend_memory_stats(b, &st));
  assert_int_equal(st.allocated, 0);
  assert_int_equal(st.num_frees, TB_DTYPE_COUNT);
}

/* A producer written here: int32 data in a buffer it owns, a deleter that counts. */
typedef struct producer {
  DLManagedTensorVersioned managed;
  int32_t data[40];
  int64_t shape[2];
  int64_t strides[2];
  int deleted;
} producer;

static void producer_deleter(DLManagedTensorVersioned *self) { ((producer *)self->manager_ctx)->deleted++; }

/* 3x4 elements with strides {8, 2}, starting one element into the buffer (byte_offset 4). */
static void producer_init(producer *p) {
  memset(p, 0, sizeof *p);
  for (int i = 0; i < 40; i++) p->data[i] = 1000 + i;
  p->shape[0] = 3;
  p->shape[1] = 4;
  p->strides[0] = 8;
  p->strides[1] = 2;
  p->managed.version.major = 1;
  p->managed.version.minor = 1;
  p->managed.manager_ctx = p;
  p->managed.deleter = producer_deleter;
  p->managed.dl_tensor.data = p->data;
  p->managed.dl_tensor.device.device_type = kDLCPU;
  p->managed.dl_tensor.ndim = 2;
  p->managed.dl_tensor.dtype.code = kDLInt;
  p->managed.dl_tensor.dtype.bits = 32;
  p->managed.dl_tensor.dtype.lanes = 1;
  p->managed.dl_tensor.shape = p->shape;
  p->managed.dl_tensor.strides = p->strides;
  p->managed.dl_tensor.byte_offset = 4;
}

static void import_zero_copy_with_strides(void **state) {
  tb_backend *b = *state;
  producer p;
  producer_init(&p);
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_from_dlpack(b, &p.managed, &t));
  assert_ptr_equal(tb_tensor_host_data(t), &p.data[1]);
  assert_int_equal(tb_tensor_dtype(t), TB_DTYPE_I32);
  assert_int_equal(tb_tensor_ndim(t), 2);
  assert_int_equal(tb_tensor_strides(t)[0], 8);
  assert_int_equal(tb_tensor_strides(t)[1], 2);
  assert_false(tb_tensor_is_contiguous(t));
  int32_t out[12];
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, out, sizeof out));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) assert_int_equal(out[i * 4 + j], 1000 + 1 + i * 8 + j * 2);
  /* Writes land in the producer's memory. */
  int32_t in[12];
  for (int i = 0; i < 12; i++) in[i] = -i;
  TB_ASSERT_OK(tb_tensor_copy_from_host(t, in, sizeof in));
  assert_int_equal(p.data[1 + 2 * 8 + 3 * 2], -11);
  assert_int_equal(p.data[2], 1002); /* between elements: untouched */
  /* A view keeps the import alive; the deleter runs once, when the last tensor goes. */
  tb_tensor *v = NULL;
  const int64_t vshape[] = {4};
  const int64_t vstride[] = {2};
  TB_ASSERT_OK(tb_tensor_view(t, 1, vshape, vstride, 8, &v));
  tb_tensor_destroy(t);
  assert_int_equal(p.deleted, 0);
  TB_ASSERT_OK(tb_tensor_copy_to_host(v, out, 4 * sizeof(int32_t)));
  assert_int_equal(out[0], -4);
  assert_int_equal(out[3], -7);
  /* A view past the imported extent (elements 0..22 from data[1]) is rejected. */
  tb_tensor *bad = NULL;
  const int64_t big[] = {24};
  assert_int_equal(tb_tensor_view(v, 1, big, NULL, 0, &bad), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "the storage holds 23 elements");
  tb_tensor_destroy(v);
  assert_int_equal(p.deleted, 1);
  /* Imports take no memory from the allocator. */
  tb_memory_stats st = {.size = sizeof st};
  TB_ASSERT_OK(tb_backend_memory_stats(b, &st));
  assert_int_equal(st.num_allocs, 0);
}

static void import_compact_scalar_empty_and_pinned(void **state) {
  tb_backend *b = *state;
  producer p;
  producer_init(&p);
  p.managed.dl_tensor.strides = NULL; /* compact row-major */
  p.managed.dl_tensor.byte_offset = 0;
  p.managed.dl_tensor.device.device_type = kDLCUDAHost; /* pinned host memory is host memory */
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_from_dlpack(b, &p.managed, &t));
  assert_true(tb_tensor_is_contiguous(t));
  assert_int_equal(tb_tensor_strides(t)[0], 4);
  int32_t out[12];
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, out, sizeof out));
  assert_int_equal(out[11], 1011);
  tb_tensor_destroy(t);
  assert_int_equal(p.deleted, 1);

  producer_init(&p);
  p.managed.dl_tensor.ndim = 0;
  p.managed.dl_tensor.shape = NULL;
  p.managed.dl_tensor.strides = NULL;
  TB_ASSERT_OK(tb_tensor_from_dlpack(b, &p.managed, &t));
  assert_int_equal(tb_tensor_numel(t), 1);
  int32_t x = 0;
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, &x, sizeof x));
  assert_int_equal(x, 1001);
  tb_tensor_destroy(t);
  assert_int_equal(p.deleted, 1);

  producer_init(&p);
  p.shape[0] = 0;
  p.managed.dl_tensor.data = NULL;
  p.managed.dl_tensor.byte_offset = 0;
  TB_ASSERT_OK(tb_tensor_from_dlpack(b, &p.managed, &t));
  assert_int_equal(tb_tensor_numel(t), 0);
  DLManagedTensorVersioned *m = NULL;
  TB_ASSERT_OK(tb_tensor_to_dlpack(t, &m));
  assert_int_equal(m->dl_tensor.shape[0], 0);
  tb_tensor_destroy(t);
  assert_int_equal(p.deleted, 0); /* the export still refers to it */
  m->deleter(m);
  assert_int_equal(p.deleted, 1);
}

static void read_only_import(void **state) {
  tb_backend *b = *state;
  producer p;
  producer_init(&p);
  p.managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  tb_tensor *t = NULL, *v = NULL, *dst = NULL;
  TB_ASSERT_OK(tb_tensor_from_dlpack(b, &p.managed, &t));
  int32_t out[12];
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, out, sizeof out));
  assert_int_equal(out[0], 1001);
  assert_int_equal(tb_tensor_copy_from_host(t, out, sizeof out), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "tensor is read-only (imported from DLPack with the read-only flag)");
  int32_t zero = 0;
  assert_int_equal(tb_tensor_fill(t, &zero), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "tb_tensor_fill: tensor is read-only");
  const int64_t shape[] = {3, 4};
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_I32, 2, shape, &dst));
  assert_int_equal(tb_tensor_copy(t, dst), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_OK(tb_tensor_copy(dst, t)); /* reading from it is fine */
  const int64_t one[] = {1};
  TB_ASSERT_OK(tb_tensor_view(t, 1, one, NULL, 0, &v));
  assert_int_equal(tb_tensor_fill(v, &zero), TB_ERR_INVALID_ARGUMENT);
  /* Re-exported, it stays read-only. */
  DLManagedTensorVersioned *m = NULL;
  TB_ASSERT_OK(tb_tensor_to_dlpack(v, &m));
  assert_int_equal(m->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
  m->deleter(m);
  for (int i = 0; i < 40; i++) assert_int_equal(p.data[i], 1000 + i);
  tb_tensor_destroy(v);
  tb_tensor_destroy(t);
  tb_tensor_destroy(dst);
  assert_int_equal(p.deleted, 1);
}

typedef void (*breaker)(producer *p);
static void bad_version(producer *p) { p->managed.version.major = 2; p->managed.version.minor = 0; }
static void bad_device(producer *p) { p->managed.dl_tensor.device.device_type = kDLCUDA; }
static void bad_vulkan(producer *p) { p->managed.dl_tensor.device.device_type = kDLVulkan; }
static void bad_ndim(producer *p) { p->managed.dl_tensor.ndim = 9; }
static void bad_ndim_negative(producer *p) { p->managed.dl_tensor.ndim = -1; }
static void bad_shape_null(producer *p) { p->managed.dl_tensor.shape = NULL; }
static void bad_shape(producer *p) { p->shape[1] = -2; }
static void bad_shape_overflow(producer *p) { p->shape[0] = INT64_MAX; p->shape[1] = 2; }
static void bad_stride(producer *p) { p->strides[0] = -1; }
static void bad_stride_overflow(producer *p) { p->strides[0] = INT64_MAX / 2; }
static void bad_lanes(producer *p) { p->managed.dl_tensor.dtype.lanes = 4; }
static void bad_complex(producer *p) { p->managed.dl_tensor.dtype.code = kDLComplex; p->managed.dl_tensor.dtype.bits = 64; }
static void bad_float_bits(producer *p) { p->managed.dl_tensor.dtype.code = kDLFloat; p->managed.dl_tensor.dtype.bits = 8; }
static void bad_byte_offset(producer *p) { p->managed.dl_tensor.byte_offset = 2; }
static void bad_data_null(producer *p) { p->managed.dl_tensor.data = NULL; p->managed.dl_tensor.byte_offset = 0; }

static void bad_fields_rejected_by_name(void **state) {
  tb_backend *b = *state;
  static const struct {
    breaker brk;
    tb_status status;
    const char *message;
  } cases[] = {
      {bad_version, TB_ERR_UNSUPPORTED, "managed->version is 2.0; this build reads DLPack major version 1"},
      {bad_device, TB_ERR_UNSUPPORTED, "dl_tensor.device.device_type is 2 (kDLCUDA), memory the CPU backend cannot address; import it on a backend of its device"},
      {bad_vulkan, TB_ERR_UNSUPPORTED, "dl_tensor.device.device_type is 7 (kDLVulkan)"},
      {bad_ndim, TB_ERR_INVALID_ARGUMENT, "dl_tensor.ndim is 9; it must be 0 to 8"},
      {bad_ndim_negative, TB_ERR_INVALID_ARGUMENT, "dl_tensor.ndim is -1"},
      {bad_shape_null, TB_ERR_INVALID_ARGUMENT, "dl_tensor.shape is NULL with ndim 2"},
      {bad_shape, TB_ERR_INVALID_ARGUMENT, "dl_tensor.shape[1] is -2; sizes must be >= 0"},
      {bad_shape_overflow, TB_ERR_INVALID_ARGUMENT, "shape [9223372036854775807, 2] is too large"},
      {bad_stride, TB_ERR_UNSUPPORTED, "dl_tensor.strides[0] is -1; negative strides are not supported"},
      {bad_stride_overflow, TB_ERR_INVALID_ARGUMENT, "dl_tensor.strides[0] = 4611686018427387903 with shape[0] = 3"},
      {bad_lanes, TB_ERR_INVALID_ARGUMENT, "dl_tensor.dtype.lanes is 4; only 1"},
      {bad_complex, TB_ERR_UNSUPPORTED, "dl_tensor.dtype (code 5, bits 64) is not supported"},
      {bad_float_bits, TB_ERR_UNSUPPORTED, "dl_tensor.dtype (code 2, bits 8) is not supported"},
      {bad_byte_offset, TB_ERR_INVALID_ARGUMENT, "dl_tensor.byte_offset 2 puts element 0 at"},
      {bad_data_null, TB_ERR_INVALID_ARGUMENT, "dl_tensor.data is NULL but the tensor has 12 elements"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    producer p;
    producer_init(&p);
    cases[i].brk(&p);
    tb_tensor *t = (tb_tensor *)1;
    tb_status st = tb_tensor_from_dlpack(b, &p.managed, &t);
    if (st != cases[i].status)
      fail_msg("case %zu: %s instead of %s (%s)", i, tb_status_str(st), tb_status_str(cases[i].status), tb_last_error());
    assert_null(t);
    TB_ASSERT_CONTAINS(tb_last_error(), cases[i].message);
    assert_int_equal(p.deleted, 0); /* ownership stayed with the caller */
  }
  producer p;
  producer_init(&p);
  tb_tensor *t = NULL;
  assert_int_equal(tb_tensor_from_dlpack(NULL, &p.managed, &t), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_tensor_from_dlpack(b, NULL, &t), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_tensor_from_dlpack(b, &p.managed, NULL), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_tensor_to_dlpack(NULL, NULL), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(p.deleted, 0);
  /* A minor version above ours is accepted (DLPack promises compatibility within a major version). */
  p.managed.version.minor = 7;
  TB_ASSERT_OK(tb_tensor_from_dlpack(b, &p.managed, &t));
  tb_tensor_destroy(t);
  assert_int_equal(p.deleted, 1);
  /* A NULL deleter is allowed: nothing is called. */
  producer_init(&p);
  p.managed.deleter = NULL;
  TB_ASSERT_OK(tb_tensor_from_dlpack(b, &p.managed, &t));
  tb_tensor_destroy(t);
  assert_int_equal(p.deleted, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(export_read_by_consumer, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(export_outlives_tensor, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(export_dtype_codes, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(import_zero_copy_with_strides, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(import_compact_scalar_empty_and_pinned, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(read_only_import, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(bad_fields_rejected_by_name, tbt_cpu_setup, tbt_cpu_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
