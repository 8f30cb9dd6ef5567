/* A stand-in for libnvidia-ml.so.1 with two fixed GPUs, for the HTTP server's GPU gauges on
 * machines without an NVIDIA driver (tests/http/test_gpu_metrics.py loads it through
 * $LPX_NVML_LIBRARY). Only the entries the server uses; GPU 1 supports no power reading, as
 * some boards do not. */
#include <stdio.h>
#include <string.h>

typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned gpu, memory;
} nvmlUtilization_t;
typedef struct nvmlDevice_st* nvmlDevice_t;

enum { kSuccess = 0, kNotSupported = 3, kInvalidArgument = 2 };
static int initialised = 0;
static struct nvmlDevice_st {
  int index;
} devices[2] = {{0}, {1}};

int nvmlInit_v2(void) { initialised = 1; return kSuccess; }
int nvmlShutdown(void) { initialised = 0; return kSuccess; }
int nvmlDeviceGetCount_v2(unsigned* count) { *count = 2; return initialised ? kSuccess : 1; }

int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  if (index >= 2) return kInvalidArgument;
  *device = &devices[index];
  return kSuccess;
}

int nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned length) {
  snprintf(name, length, "Fake H200 \"%d\"", d->index);  /* a quote, to be escaped */
  return kSuccess;
}

int nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned length) {
  snprintf(uuid, length, "GPU-fake-%d", d->index);
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  m->total = 150ull << 30;
  m->used = (unsigned long long)(10 + d->index) << 30;
  m->free = m->total - m->used;
  return kSuccess;
}

int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  u->gpu = 42 + (unsigned)d->index;
  u->memory = 7;
  return kSuccess;
}

int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned* celsius) {
  if (sensor != 0) return kInvalidArgument;
  *celsius = 55 + (unsigned)d->index;
  return kSuccess;
}

int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* milliwatts) {
  if (d->index == 1) return kNotSupported;
  *milliwatts = 312500;
  return kSuccess;
}

int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned* mhz) {
  (void)d;
  if (type != 1) return kInvalidArgument; /* NVML_CLOCK_SM */
  *mhz = 1980;
  return kSuccess;
}

int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long* reasons) {
  *reasons = d->index == 0 ? 0x4ull /* sw_power_cap */ : 0x0ull;
  return kSuccess;
}
