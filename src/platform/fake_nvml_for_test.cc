// A stand-in libnvidia-ml.so.1 for gpu_live_status_test: the handful of NVML
// entry points gpu_live_status.cc calls, answering for the h100-8 fixture's
// GPUs with fixed numbers (GPU i: i+1 GiB used, 10*i % busy, 300+10*i W,
// 40+i degrees C, 1980-10*i MHz SM clock; the last three for telemetry). Built as a shared library and dlopen'ed by path.
#include <cstring>
#include <string>

namespace {

const char* const kBusIds[] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                               "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
bool initialised = false;

struct Memory {
  unsigned long long total, free, used;
};
struct Utilization {
  unsigned int gpu, memory;
};
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id, compute_instance_id;
};

long Index(void* device) { return reinterpret_cast<long>(device) - 1; }

}  // namespace

extern "C" {

int nvmlInit_v2() {
  initialised = true;
  return 0;
}
int nvmlShutdown() {
  initialised = false;
  return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  std::string id = bus_id;
  if (id.size() == 16) id = id.substr(4);  // "00000000:18:00.0"
  for (long i = 0; i < 8; ++i) {
    if (initialised && id == kBusIds[i]) {
      *device = reinterpret_cast<void*>(i + 1);
      return 0;
    }
  }
  return 6;  // NVML_ERROR_NOT_FOUND
}
int nvmlDeviceGetMemoryInfo(void* device, Memory* memory) {
  memory->total = 80ull << 30;
  memory->used = (Index(device) + 1) << 30;
  memory->free = memory->total - memory->used;
  return 0;
}
int nvmlDeviceGetUtilizationRates(void* device, Utilization* rates) {
  rates->gpu = static_cast<unsigned int>(10 * Index(device));
  rates->memory = 0;
  return 0;
}
int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  *milliwatts = static_cast<unsigned int>(300000 + 10000 * Index(device));
  return 0;
}
int nvmlDeviceGetTemperature(void* device, int sensor, unsigned int* celsius) {
  if (sensor != 0) return 2;  // NVML_ERROR_INVALID_ARGUMENT: only NVML_TEMPERATURE_GPU
  *celsius = static_cast<unsigned int>(40 + Index(device));
  return 0;
}
int nvmlDeviceGetClockInfo(void* device, int clock, unsigned int* mhz) {
  if (clock != 1) return 2;  // only NVML_CLOCK_SM is answered
  *mhz = static_cast<unsigned int>(1980 - 10 * Index(device));
  return 0;
}
int nvmlDeviceGetTotalEccErrors(void* device, int error_type, int counter_type, unsigned long long* count) {
  *count = error_type == 1 ? (Index(device) == 3 ? 2 : 0) : 5;
  return counter_type == 0 ? 0 : 1;
}
int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned int* count, ProcessInfo* infos) {
  if (Index(device) != 0) {
    *count = 0;
    return 0;
  }
  if (*count < 2) {
    *count = 2;
    return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  }
  infos[0] = {1001, 2ull << 30, 0, 0};
  infos[1] = {1002, 512ull << 20, 0, 0};
  *count = 2;
  return 0;
}

}  // extern "C"
