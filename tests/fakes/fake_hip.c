/* A fake HIP runtime (libamdhip64.so) for the ROCm probe's tests. Behaviour is read from the
 * environment at every call, so one test process can switch it:
 *   FAKE_HIP_MODE    ok (default) | error (hipInit returns 35 hipErrorInsufficientDriver)
 *                    | no_device (hipGetDeviceCount returns 100 hipErrorNoDevice)
 *                    | count_error (hipGetDeviceCount returns 999 hipErrorUnknown)
 *   FAKE_HIP_DEVICES mi300x (default: the 8 GPUs of tests/fixtures/mi300x, in KFD order)
 *                    | mi300x_first4 (only the first 4, as with HIP_VISIBLE_DEVICES=0,1,2,3)
 * Memory for the HIP backend (see fake_devmem.h), on the calling thread's current device (hipSetDevice,
 * per thread, 0 until set, as in HIP):
 *   FAKE_HIP_MEM_CAPACITY bytes per device (default 1G; K/M/G suffixes): hipMalloc beyond it returns 2
 *                         hipErrorOutOfMemory; hipMemGetInfo reports it as the total
 *   FAKE_HIP_FAIL         set_device (hipSetDevice) | alloc (hipMalloc) | copy (hipMemcpy) | fill (hipMemset*)
 *                         | sync (hipDeviceSynchronize) | info (hipMemGetInfo) fail with FAKE_HIP_FAIL_CODE
 *                         (default 700 hipErrorIllegalAddress)
 * Events (hipEvent*, on the calling thread's device): an event completes when recorded;
 * hipEventElapsedTime gives 0.5 ms per record made between the two events' records.
 * FAKE_HIP_EVENT=not_ready_once makes the first hipEventQuery after each record answer 600
 * hipErrorNotReady; FAKE_HIP_FAIL=record makes hipEventRecord fail with FAKE_HIP_FAIL_CODE.
 * fake_hip_event_calls("hipEventQuery") counts the calls, fake_hip_live_events() the events alive.
 * Another library's memory: hipMallocManaged marks its allocation managed; hipPointerGetAttributes (ROCm 6
 * layout and numbers) and hipMemGetAddressRange answer for pointers inside an allocation, 1
 * hipErrorInvalidValue for any other; fake_hip_alloc_on(device, bytes, managed) makes one for a test.
 * The fake_hip_* functions at the end let tests read the counts. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_devmem.h"
#include "fake_once.h"

FAKE_ONCE("FAKE_LOADED_HIP", "fake_hip")

enum {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorInvalidMemcpyDirection = 21,
  hipErrorInsufficientDriver = 35,
  hipErrorNoDevice = 100,
  hipErrorInvalidDevice = 101,
  hipErrorIllegalAddress = 700,
  hipErrorUnknown = 999
};

static const char *const mi300x_buses[] = {"0000:05:00.0", "0000:26:00.0", "0000:46:00.0", "0000:65:00.0",
                                           "0000:85:00.0", "0000:a6:00.0", "0000:c6:00.0", "0000:e5:00.0"};

static int env_is(const char *name, const char *value) {
  const char *v = getenv(name);
  return v && strcmp(v, value) == 0;
}

static int device_count(void) { return env_is("FAKE_HIP_DEVICES", "mi300x_first4") ? 4 : 8; }

static int bad_device(int device) { return device < 0 || device >= device_count(); }

const char *hipGetErrorName(int error);
int hipInit(unsigned int flags);
int hipGetDeviceCount(int *count);
int hipDeviceGet(int *device, int ordinal);
int hipDeviceGetName(char *name, int len, int device);
int hipDeviceGetPCIBusId(char *bus_id, int len, int device);
int hipDeviceTotalMem(size_t *bytes, int device);
int hipDeviceGetAttribute(int *value, int attribute, int device);
int hipRuntimeGetVersion(int *version);
int hipDriverGetVersion(int *version);

const char *hipGetErrorName(int error) {
  switch (error) {
    case hipSuccess: return "hipSuccess";
    case hipErrorInvalidValue: return "hipErrorInvalidValue";
    case hipErrorInsufficientDriver: return "hipErrorInsufficientDriver";
    case hipErrorNoDevice: return "hipErrorNoDevice";
    case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
    case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
    case hipErrorInvalidMemcpyDirection: return "hipErrorInvalidMemcpyDirection";
    case hipErrorIllegalAddress: return "hipErrorIllegalAddress";
    case 600: return "hipErrorNotReady";
    default: return "hipErrorUnknown";
  }
}

int hipInit(unsigned int flags) {
  if (flags != 0) return hipErrorInvalidValue;
  return env_is("FAKE_HIP_MODE", "error") ? hipErrorInsufficientDriver : hipSuccess;
}

int hipGetDeviceCount(int *count) {
  if (!count) return hipErrorInvalidValue;
  *count = 0;
  if (env_is("FAKE_HIP_MODE", "no_device")) return hipErrorNoDevice;
  if (env_is("FAKE_HIP_MODE", "count_error")) return hipErrorUnknown;
  *count = device_count();
  return hipSuccess;
}

int hipDeviceGet(int *device, int ordinal) {
  if (!device) return hipErrorInvalidValue;
  if (bad_device(ordinal)) return hipErrorInvalidDevice;
  *device = ordinal;
  return hipSuccess;
}

int hipDeviceGetName(char *name, int len, int device) {
  if (!name || len <= 0) return hipErrorInvalidValue;
  if (bad_device(device)) return hipErrorInvalidDevice;
  snprintf(name, (size_t)len, "AMD Instinct MI300X");
  return hipSuccess;
}

int hipDeviceGetPCIBusId(char *bus_id, int len, int device) {
  if (!bus_id || len <= 0) return hipErrorInvalidValue;
  if (bad_device(device)) return hipErrorInvalidDevice;
  snprintf(bus_id, (size_t)len, "%s", mi300x_buses[device]);
  return hipSuccess;
}

int hipDeviceTotalMem(size_t *bytes, int device) {
  if (!bytes) return hipErrorInvalidValue;
  if (bad_device(device)) return hipErrorInvalidDevice;
  *bytes = (size_t)206158430208ull;
  return hipSuccess;
}

/* hipDeviceAttributeClockRate 5, hipDeviceAttributeIntegrated 16, hipDeviceAttributeMultiprocessorCount 63. */
int hipDeviceGetAttribute(int *value, int attribute, int device) {
  if (!value) return hipErrorInvalidValue;
  if (bad_device(device)) return hipErrorInvalidDevice;
  switch (attribute) {
    case 5: *value = 2100000; return hipSuccess;
    case 16: *value = 0; return hipSuccess;
    case 63: *value = 304; return hipSuccess;
    default: return hipErrorInvalidValue;
  }
}

/* HIP 6.2.41134: major * 10000000 + minor * 100000 + patch. */
int hipRuntimeGetVersion(int *version) {
  if (!version) return hipErrorInvalidValue;
  *version = 60241134;
  return hipSuccess;
}

int hipDriverGetVersion(int *version) {
  if (!version) return hipErrorInvalidValue;
  *version = 60241134;
  return hipSuccess;
}

/* ---- Memory ------------------------------------------------------------------------------------- */

static fake_heap heap = FAKE_HEAP_INIT;
static __thread int current_device;
static unsigned long long set_device_calls, memset_calls[5];

static int failing(const char *what) { return env_is("FAKE_HIP_FAIL", what); }

static int fail_code(void) {
  const char *code = getenv("FAKE_HIP_FAIL_CODE");
  return code && *code ? atoi(code) : hipErrorIllegalAddress;
}

static uint64_t capacity(void) { return fake_capacity("FAKE_HIP_MEM_CAPACITY", 1ull << 30); }

int hipSetDevice(int device);
int hipGetDevice(int *device);
int hipMalloc(void **ptr, size_t bytes);
int hipFree(void *ptr);
int hipMemcpy(void *dst, const void *src, size_t bytes, int kind);
int hipMemset(void *dst, int value, size_t bytes);
int hipMemsetD16(void *dst, unsigned short value, size_t count);
int hipMemsetD32(void *dst, int value, size_t count);
int hipDeviceSynchronize(void);
int hipMemGetInfo(size_t *free_bytes, size_t *total_bytes);

int hipSetDevice(int device) {
  if (bad_device(device)) return hipErrorInvalidDevice;
  if (failing("set_device")) return fail_code();
  __atomic_add_fetch(&set_device_calls, 1, __ATOMIC_RELAXED);
  current_device = device;
  return hipSuccess;
}

int hipGetDevice(int *device) {
  if (!device) return hipErrorInvalidValue;
  *device = current_device;
  return hipSuccess;
}

int hipMalloc(void **ptr, size_t bytes) {
  if (!ptr) return hipErrorInvalidValue;
  *ptr = NULL;
  if (bytes == 0) return hipSuccess; /* HIP hands out NULL for 0 bytes */
  if (failing("alloc")) return fail_code();
  uint64_t dev = 0;
  if (fake_alloc(&heap, bytes, capacity(), current_device, &dev) != FAKE_ALLOC_OK) return hipErrorOutOfMemory;
  *ptr = (void *)(uintptr_t)dev;
  return hipSuccess;
}

int hipFree(void *ptr) {
  if (!ptr) return hipSuccess;
  return fake_release(&heap, (uint64_t)(uintptr_t)ptr) == 0 ? hipSuccess : hipErrorInvalidValue;
}

/* The bytes behind a pointer the kind says is on the device (NULL when it is not), or the host pointer
 * itself when the kind says host (NULL when it is in fact a device pointer). */
static unsigned char *side(const void *p, int on_device, size_t bytes) {
  uint64_t v = (uint64_t)(uintptr_t)p;
  if (!p) return NULL;
  if (on_device) return fake_resolve(&heap, v, bytes);
  return fake_is_device_pointer(v) ? NULL : (unsigned char *)(uintptr_t)v;
}

int hipMemcpy(void *dst, const void *src, size_t bytes, int kind) {
  if (kind < 1 || kind > 3) return hipErrorInvalidMemcpyDirection;
  if (failing("copy")) return fail_code();
  if (bytes == 0) return hipSuccess;
  unsigned char *d = side(dst, kind != 2, bytes), *s = side(src, kind != 1, bytes);
  if (!d || !s) return hipErrorInvalidValue;
  memmove(d, s, bytes);
  return hipSuccess;
}

static int memset_n(void *dst, const void *value, size_t width, size_t count) {
  if (failing("fill")) return fail_code();
  uint64_t v = (uint64_t)(uintptr_t)dst;
  if (v % width != 0) return hipErrorInvalidValue;
  unsigned char *d = fake_resolve(&heap, v, count * width);
  if (!d) return hipErrorInvalidValue;
  fake_fill(d, value, width, count);
  __atomic_add_fetch(&memset_calls[width], 1, __ATOMIC_RELAXED);
  return hipSuccess;
}

int hipMemset(void *dst, int value, size_t bytes) {
  unsigned char b = (unsigned char)value;
  return memset_n(dst, &b, 1, bytes);
}

int hipMemsetD16(void *dst, unsigned short value, size_t count) { return memset_n(dst, &value, 2, count); }

int hipMemsetD32(void *dst, int value, size_t count) { return memset_n(dst, &value, 4, count); }

int hipDeviceSynchronize(void) { return failing("sync") ? fail_code() : hipSuccess; }

int hipMemGetInfo(size_t *free_bytes, size_t *total_bytes) {
  if (!free_bytes || !total_bytes) return hipErrorInvalidValue;
  if (failing("info")) return fail_code();
  uint64_t cap = capacity(), used = fake_used(&heap, current_device);
  *total_bytes = (size_t)cap;
  *free_bytes = (size_t)(used < cap ? cap - used : 0);
  return hipSuccess;
}

int hipMallocManaged(void **ptr, size_t bytes, unsigned int flags);
int hipPointerGetAttributes(void *attributes, const void *ptr);
int hipMemGetAddressRange(void **base, size_t *size, void *ptr);

int hipMallocManaged(void **ptr, size_t bytes, unsigned int flags) {
  int r = hipMalloc(ptr, bytes);
  if (r == hipSuccess && *ptr) fake_set_managed(&heap, (uint64_t)(uintptr_t)*ptr);
  (void)flags;
  return r;
}

/* ROCm 6's hipPointerAttribute_t and hipMemoryType (the fake's runtime is 6.2). */
typedef struct {
  int type;
  int device;
  void *devicePointer;
  void *hostPointer;
  int isManaged;
  unsigned allocationFlags;
} fake_hip_attributes;

int hipPointerGetAttributes(void *attributes, const void *ptr) {
  fake_hip_attributes *a = attributes;
  if (!a) return hipErrorInvalidValue;
  uint64_t start = 0;
  size_t size = 0;
  int owner = -1, managed = 0;
  if (fake_find(&heap, (uint64_t)(uintptr_t)ptr, &start, &size, &owner, &managed) != 0) return hipErrorInvalidValue;
  memset(a, 0, sizeof *a);
  a->type = managed ? 3 : 2; /* hipMemoryTypeManaged, hipMemoryTypeDevice */
  a->device = owner;
  a->devicePointer = (void *)(uintptr_t)ptr;
  a->isManaged = managed;
  return hipSuccess;
}

int hipMemGetAddressRange(void **base, size_t *size, void *ptr) {
  uint64_t start = 0;
  size_t bytes = 0;
  int owner = -1, managed = 0;
  if (!base || !size) return hipErrorInvalidValue;
  if (fake_find(&heap, (uint64_t)(uintptr_t)ptr, &start, &bytes, &owner, &managed) != 0) return hipErrorInvalidValue;
  *base = (void *)(uintptr_t)start;
  *size = bytes;
  return hipSuccess;
}

/* For tests: an allocation made as another library would (hipMalloc or hipMallocManaged on `device`), and
 * its release. */
unsigned long long fake_hip_alloc_on(int device, size_t bytes, int managed);
int fake_hip_free(unsigned long long ptr);

unsigned long long fake_hip_alloc_on(int device, size_t bytes, int managed) {
  int previous = current_device;
  void *p = NULL;
  if (hipSetDevice(device) != hipSuccess) return 0;
  if ((managed ? hipMallocManaged(&p, bytes, 1) : hipMalloc(&p, bytes)) != hipSuccess) p = NULL;
  current_device = previous;
  return (unsigned long long)(uintptr_t)p;
}

int fake_hip_free(unsigned long long ptr) { return fake_release(&heap, ptr); }

/* For tests. */
int fake_hip_live_allocations(int device);
unsigned long long fake_hip_bytes_in_use(int device);
int fake_hip_current_device(void);
unsigned long long fake_hip_set_device_calls(void);
unsigned long long fake_hip_memset_calls(int width);

int fake_hip_live_allocations(int device) { return fake_live(&heap, device); }
unsigned long long fake_hip_bytes_in_use(int device) { return fake_used(&heap, device); }
int fake_hip_current_device(void) { return current_device; }
unsigned long long fake_hip_set_device_calls(void) { return __atomic_load_n(&set_device_calls, __ATOMIC_RELAXED); }
unsigned long long fake_hip_memset_calls(int width) {
  return width == 1 || width == 2 || width == 4 ? __atomic_load_n(&memset_calls[width], __ATOMIC_RELAXED) : 0;
}

/* ---- Events ------------------------------------------------------------------------------------- */

typedef struct fake_hip_event {
  int device;
  int recorded;
  int pending_not_ready;
  unsigned long long stamp;
} fake_hip_event;

static const char *const event_call_names[] = {"hipEventCreate", "hipEventRecord", "hipEventSynchronize",
                                               "hipEventQuery", "hipEventElapsedTime", "hipEventDestroy"};
enum { EV_CREATE, EV_RECORD, EV_SYNC, EV_QUERY, EV_ELAPSED, EV_DESTROY, EV_CALLS };
static unsigned long long event_calls[EV_CALLS];
static unsigned long long event_clock;
static int live_events;

static void count_event_call(int which) { __atomic_add_fetch(&event_calls[which], 1, __ATOMIC_RELAXED); }

int hipEventCreate(fake_hip_event **event);
int hipEventRecord(fake_hip_event *event, void *stream);
int hipEventSynchronize(fake_hip_event *event);
int hipEventQuery(fake_hip_event *event);
int hipEventElapsedTime(float *ms, fake_hip_event *start, fake_hip_event *end);
int hipEventDestroy(fake_hip_event *event);

int hipEventCreate(fake_hip_event **event) {
  count_event_call(EV_CREATE);
  if (!event) return hipErrorInvalidValue;
  fake_hip_event *e = calloc(1, sizeof *e);
  if (!e) return hipErrorOutOfMemory;
  e->device = current_device;
  __atomic_add_fetch(&live_events, 1, __ATOMIC_RELAXED);
  *event = e;
  return hipSuccess;
}

int hipEventRecord(fake_hip_event *event, void *stream) {
  count_event_call(EV_RECORD);
  /* Recording on another device's stream is an error in HIP: the test sees it if the backend forgets
   * to make its device current. */
  if (!event || stream != NULL || event->device != current_device) return hipErrorInvalidValue;
  if (failing("record")) return fail_code();
  event->recorded = 1;
  event->pending_not_ready = env_is("FAKE_HIP_EVENT", "not_ready_once");
  event->stamp = __atomic_add_fetch(&event_clock, 1, __ATOMIC_RELAXED);
  return hipSuccess;
}

int hipEventSynchronize(fake_hip_event *event) {
  count_event_call(EV_SYNC);
  if (!event) return hipErrorInvalidValue;
  if (failing("sync")) return fail_code();
  event->pending_not_ready = 0;
  return hipSuccess;
}

int hipEventQuery(fake_hip_event *event) {
  count_event_call(EV_QUERY);
  if (!event) return hipErrorInvalidValue;
  if (event->pending_not_ready) {
    event->pending_not_ready = 0;
    return 600; /* hipErrorNotReady */
  }
  return hipSuccess;
}

int hipEventElapsedTime(float *ms, fake_hip_event *start, fake_hip_event *end) {
  count_event_call(EV_ELAPSED);
  if (!ms || !start || !end) return hipErrorInvalidValue;
  if (!start->recorded || !end->recorded) return 400; /* hipErrorInvalidHandle */
  if (start->pending_not_ready || end->pending_not_ready) return 600;
  *ms = 0.5f * (float)((double)end->stamp - (double)start->stamp);
  return hipSuccess;
}

int hipEventDestroy(fake_hip_event *event) {
  count_event_call(EV_DESTROY);
  if (!event) return hipErrorInvalidValue;
  free(event);
  __atomic_sub_fetch(&live_events, 1, __ATOMIC_RELAXED);
  return hipSuccess;
}

unsigned long long fake_hip_event_calls(const char *call);
int fake_hip_live_events(void);

unsigned long long fake_hip_event_calls(const char *call) {
  for (int i = 0; i < EV_CALLS; i++)
    if (strcmp(call, event_call_names[i]) == 0) return __atomic_load_n(&event_calls[i], __ATOMIC_RELAXED);
  return ~0ull;
}

int fake_hip_live_events(void) { return __atomic_load_n(&live_events, __ATOMIC_RELAXED); }
