/* A fake HIP runtime (libamdhip64.so) for the ROCm probe's tests. Behaviour is read from the
 * environment at every call, so one test process can switch it:
 *   FAKE_HIP_MODE    ok (default) | error (hipInit returns 35 hipErrorInsufficientDriver)
 *                    | no_device (hipGetDeviceCount returns 100 hipErrorNoDevice)
 *                    | count_error (hipGetDeviceCount returns 999 hipErrorUnknown)
 *   FAKE_HIP_DEVICES mi300x (default: the 8 GPUs of tests/fixtures/mi300x, in KFD order)
 *                    | mi300x_first4 (only the first 4, as with HIP_VISIBLE_DEVICES=0,1,2,3) */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorInsufficientDriver = 35,
  hipErrorNoDevice = 100,
  hipErrorInvalidDevice = 101,
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
