// The CUDA or HIP runtime, opened at run time: the few calls the benchmarks
// make (device selection, memory, copies, streams, events, names). The two
// runtimes have the same C API under different prefixes (cudaMalloc /
// hipMalloc, same argument lists and the same values for the constants used
// here), so one table of function pointers serves both. Every failing call
// becomes an error naming the call and the runtime's own message.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "util/dynamic_library.h"
#include "util/error.h"

namespace primus::benchmark {

enum class GpuVendor { kNvidia, kAmd };
std::string_view GpuVendorName(GpuVendor vendor);  // "nvidia" | "amd"

using GpuStream = void*;
using GpuEvent = void*;

class GpuApi {
 public:
  // libcudart.so.{13,12,11.0} or libamdhip64.so.{7,6}, through the loader's search path.
  static Result<GpuApi> Open(GpuVendor vendor);

  GpuVendor vendor() const { return vendor_; }
  std::string Describe() const;  // "CUDA runtime 13.0 (/usr/local/cuda/lib64/libcudart.so.13)"

  Result<int> DeviceCount() const;
  Status SetDevice(int device) const;
  std::string DeviceName(int device) const;          // "" when unknown
  Result<std::string> PciBusId(int device) const;    // lowercase, "0000:0c:00.0"
  Result<std::pair<size_t, size_t>> MemoryInfo() const;  // free, total bytes of the current device

  Result<void*> Malloc(size_t bytes) const;
  void Free(void* pointer) const;
  Status CopyToDevice(void* device, const void* host, size_t bytes) const;
  Status CopyToHost(void* host, const void* device, size_t bytes) const;
  Status Memset(void* device, int value, size_t bytes) const;
  // Waits for everything queued on the device, the legacy default stream
  // too: Memset and an upload from pageable memory may still be running
  // there when they return, and our streams are non-blocking (they do not
  // wait for the default stream by themselves).
  Status Synchronize() const;

  Result<GpuStream> CreateStream() const;  // non-blocking
  void DestroyStream(GpuStream stream) const;
  Status SynchronizeStream(GpuStream stream) const;
  Result<GpuEvent> CreateEvent() const;
  void DestroyEvent(GpuEvent event) const;
  Status RecordEvent(GpuEvent event, GpuStream stream) const;
  Status SynchronizeEvent(GpuEvent event) const;
  Result<float> ElapsedMs(GpuEvent start, GpuEvent end) const;

 private:
  GpuApi(GpuVendor vendor, DynamicLibrary library) : vendor_(vendor), library_(std::move(library)) {}
  Status Check(int code, const char* call) const;
  std::string Name(const char* suffix) const;  // "cuda" or "hip" + suffix

  GpuVendor vendor_;
  DynamicLibrary library_;
  struct Calls {
    int (*get_device_count)(int*) = nullptr;
    int (*set_device)(int) = nullptr;
    int (*get_device_properties)(void*, int) = nullptr;  // optional: only the name (the first field) is read
    int (*device_get_pci_bus_id)(char*, int, int) = nullptr;
    int (*mem_get_info)(size_t*, size_t*) = nullptr;
    int (*malloc)(void**, size_t) = nullptr;
    int (*free)(void*) = nullptr;
    int (*memcpy)(void*, const void*, size_t, int) = nullptr;
    int (*device_synchronize)() = nullptr;
    int (*memset)(void*, int, size_t) = nullptr;
    int (*stream_create_with_flags)(void**, unsigned) = nullptr;
    int (*stream_destroy)(void*) = nullptr;
    int (*stream_synchronize)(void*) = nullptr;
    int (*event_create)(void**) = nullptr;
    int (*event_destroy)(void*) = nullptr;
    int (*event_record)(void*, void*) = nullptr;
    int (*event_synchronize)(void*) = nullptr;
    int (*event_elapsed_time)(float*, void*, void*) = nullptr;
    const char* (*get_error_string)(int) = nullptr;
    int (*runtime_get_version)(int*) = nullptr;
  } calls_;
};

// "0000:0c:00.0" from any spelling of a PCI address: the runtimes, NVML and
// sysfs differ in the domain's width and in letter case. "" when unparsable.
std::string NormalizePciBusId(std::string_view text);

// A device allocation freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static Result<DeviceBuffer> Allocate(const GpuApi& runtime, size_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  void* get() const { return pointer_; }
  size_t bytes() const { return bytes_; }

 private:
  const GpuApi* runtime_ = nullptr;
  void* pointer_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace primus::benchmark
