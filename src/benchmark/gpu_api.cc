#include "benchmark/gpu_api.h"

#include <fmt/format.h>

#include <cstdio>
#include <vector>

#include "util/strings.h"

namespace primus::benchmark {
namespace {

constexpr int kMemcpyHostToDevice = 1;  // cudaMemcpyHostToDevice, hipMemcpyHostToDevice
constexpr int kMemcpyDeviceToHost = 2;
constexpr unsigned kStreamNonBlocking = 1;  // cudaStreamNonBlocking, hipStreamNonBlocking

}  // namespace

std::string NormalizePciBusId(std::string_view text) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  std::string copy(text);
  if (std::sscanf(copy.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) == 4) {
    return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
  }
  if (std::sscanf(copy.c_str(), "%x:%x.%x", &bus, &device, &function) == 3) {
    return fmt::format("0000:{:02x}:{:02x}.{:x}", bus, device, function);
  }
  return "";
}

std::string_view GpuVendorName(GpuVendor vendor) { return vendor == GpuVendor::kNvidia ? "nvidia" : "amd"; }

std::string GpuApi::Name(const char* suffix) const {
  return std::string(vendor_ == GpuVendor::kNvidia ? "cuda" : "hip") + suffix;
}

Result<GpuApi> GpuApi::Open(GpuVendor vendor) {
  auto library = vendor == GpuVendor::kNvidia
                     ? DynamicLibrary::Open({"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so",
                                             "/usr/local/cuda/lib64/libcudart.so"},
                                            "the CUDA runtime",
                                            "install the CUDA runtime (libcudart) and put its directory on LD_LIBRARY_PATH "
                                            "(a pip environment has it under site-packages/nvidia/cuda_runtime/lib)")
                     : DynamicLibrary::Open({"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so",
                                             "/opt/rocm/lib/libamdhip64.so"},
                                            "the HIP runtime", "install ROCm and put /opt/rocm/lib on LD_LIBRARY_PATH");
  if (!library.ok()) return library.error();
  GpuApi runtime(vendor, std::move(*library));
  Calls& c = runtime.calls_;
  const DynamicLibrary& l = runtime.library_;
  auto load = [&](const char* suffix, auto* out) -> Status { return l.Load(runtime.Name(suffix).c_str(), out); };
  for (Status status : {load("GetDeviceCount", &c.get_device_count), load("SetDevice", &c.set_device),
                        load("DeviceGetPCIBusId", &c.device_get_pci_bus_id), load("MemGetInfo", &c.mem_get_info),
                        load("Malloc", &c.malloc), load("Free", &c.free), load("Memcpy", &c.memcpy),
                        load("Memset", &c.memset), load("DeviceSynchronize", &c.device_synchronize),
                        load("StreamCreateWithFlags", &c.stream_create_with_flags),
                        load("StreamDestroy", &c.stream_destroy), load("StreamSynchronize", &c.stream_synchronize),
                        load("EventCreate", &c.event_create), load("EventDestroy", &c.event_destroy),
                        load("EventRecord", &c.event_record), load("EventSynchronize", &c.event_synchronize),
                        load("EventElapsedTime", &c.event_elapsed_time), load("GetErrorString", &c.get_error_string)}) {
    if (!status.ok()) return status.error();
  }
  // Versioned names first: CUDA 12's cudaGetDeviceProperties_v2, ROCm 6's R0600.
  for (const char* suffix : {"GetDeviceProperties_v2", "GetDevicePropertiesR0600", "GetDeviceProperties"}) {
    if (void* symbol = l.Find(runtime.Name(suffix).c_str())) {
      c.get_device_properties = reinterpret_cast<int (*)(void*, int)>(symbol);
      break;
    }
  }
  c.runtime_get_version = reinterpret_cast<int (*)(int*)>(l.Find(runtime.Name("RuntimeGetVersion").c_str()));
  return runtime;
}

std::string GpuApi::Describe() const {
  int version = 0;
  std::string text = vendor_ == GpuVendor::kNvidia ? "CUDA runtime" : "HIP runtime";
  if (calls_.runtime_get_version && calls_.runtime_get_version(&version) == 0 && version > 0) {
    // CUDA: 1000*major + 10*minor; HIP: 10000000*major + 100000*minor + patch.
    text += vendor_ == GpuVendor::kNvidia ? fmt::format(" {}.{}", version / 1000, (version % 1000) / 10)
                                          : fmt::format(" {}.{}", version / 10000000, (version / 100000) % 100);
  }
  return text + " (" + library_.path() + ")";
}

Status GpuApi::Check(int code, const char* call) const {
  if (code == 0) return Status::Ok();
  const char* message = calls_.get_error_string ? calls_.get_error_string(code) : nullptr;
  return TaskError(fmt::format("{}{}: {} (error {})", vendor_ == GpuVendor::kNvidia ? "cuda" : "hip", call,
                               message ? message : "unknown error", code));
}

Result<int> GpuApi::DeviceCount() const {
  int count = 0;
  int code = calls_.get_device_count(&count);
  if (code != 0) {
    Status status = Check(code, "GetDeviceCount");
    return UnavailableError(status.error().message + ": no usable GPU for this process",
                            "check the driver (nvidia-smi / amd-smi) and the *_VISIBLE_DEVICES variables, or run with "
                            "--device cpu");
  }
  return count;
}

Status GpuApi::SetDevice(int device) const { return Check(calls_.set_device(device), "SetDevice"); }

std::string GpuApi::DeviceName(int device) const {
  if (!calls_.get_device_properties) return "";
  // The name is the first field of cudaDeviceProp and hipDeviceProp_t
  // (char[256]); the structure's size differs between versions, so the
  // buffer is far larger than any of them.
  std::vector<char> properties(1 << 16, 0);
  if (calls_.get_device_properties(properties.data(), device) != 0) return "";
  properties[255] = 0;
  return properties.data();
}

Result<std::string> GpuApi::PciBusId(int device) const {
  char text[64] = {};
  if (Status status = Check(calls_.device_get_pci_bus_id(text, sizeof(text), device), "DeviceGetPCIBusId"); !status.ok()) {
    return status.error();
  }
  return NormalizePciBusId(text);
}

Result<std::pair<size_t, size_t>> GpuApi::MemoryInfo() const {
  size_t free_bytes = 0, total_bytes = 0;
  if (Status status = Check(calls_.mem_get_info(&free_bytes, &total_bytes), "MemGetInfo"); !status.ok()) {
    return status.error();
  }
  return std::make_pair(free_bytes, total_bytes);
}

Result<void*> GpuApi::Malloc(size_t bytes) const {
  void* pointer = nullptr;
  if (Status status = Check(calls_.malloc(&pointer, bytes), "Malloc"); !status.ok()) {
    return TaskError(status.error().message + fmt::format(" allocating {} MiB", bytes >> 20), "choose a smaller problem");
  }
  return pointer;
}

void GpuApi::Free(void* pointer) const {
  if (pointer) calls_.free(pointer);
}

Status GpuApi::CopyToDevice(void* device, const void* host, size_t bytes) const {
  return Check(calls_.memcpy(device, host, bytes, kMemcpyHostToDevice), "Memcpy");
}

Status GpuApi::CopyToHost(void* host, const void* device, size_t bytes) const {
  return Check(calls_.memcpy(host, device, bytes, kMemcpyDeviceToHost), "Memcpy");
}

Status GpuApi::Memset(void* device, int value, size_t bytes) const {
  return Check(calls_.memset(device, value, bytes), "Memset");
}


Status GpuApi::Synchronize() const { return Check(calls_.device_synchronize(), "DeviceSynchronize"); }

Result<GpuStream> GpuApi::CreateStream() const {
  void* stream = nullptr;
  if (Status status = Check(calls_.stream_create_with_flags(&stream, kStreamNonBlocking), "StreamCreateWithFlags");
      !status.ok()) {
    return status.error();
  }
  return stream;
}

void GpuApi::DestroyStream(GpuStream stream) const {
  if (stream) calls_.stream_destroy(stream);
}

Status GpuApi::SynchronizeStream(GpuStream stream) const {
  return Check(calls_.stream_synchronize(stream), "StreamSynchronize");
}

Result<GpuEvent> GpuApi::CreateEvent() const {
  void* event = nullptr;
  if (Status status = Check(calls_.event_create(&event), "EventCreate"); !status.ok()) return status.error();
  return event;
}

void GpuApi::DestroyEvent(GpuEvent event) const {
  if (event) calls_.event_destroy(event);
}

Status GpuApi::RecordEvent(GpuEvent event, GpuStream stream) const {
  return Check(calls_.event_record(event, stream), "EventRecord");
}

Status GpuApi::SynchronizeEvent(GpuEvent event) const {
  return Check(calls_.event_synchronize(event), "EventSynchronize");
}

Result<float> GpuApi::ElapsedMs(GpuEvent start, GpuEvent end) const {
  float ms = 0;
  if (Status status = Check(calls_.event_elapsed_time(&ms, start, end), "EventElapsedTime"); !status.ok()) {
    return status.error();
  }
  return ms;
}

Result<DeviceBuffer> DeviceBuffer::Allocate(const GpuApi& runtime, size_t bytes) {
  auto pointer = runtime.Malloc(bytes);
  if (!pointer.ok()) return pointer.error();
  DeviceBuffer buffer;
  buffer.runtime_ = &runtime;
  buffer.pointer_ = *pointer;
  buffer.bytes_ = bytes;
  return buffer;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : runtime_(other.runtime_), pointer_(std::exchange(other.pointer_, nullptr)), bytes_(other.bytes_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (runtime_ && pointer_) runtime_->Free(pointer_);
    runtime_ = other.runtime_;
    pointer_ = std::exchange(other.pointer_, nullptr);
    bytes_ = other.bytes_;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (runtime_ && pointer_) runtime_->Free(pointer_);
}

}  // namespace primus::benchmark
