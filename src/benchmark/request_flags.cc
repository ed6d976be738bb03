#include "benchmark/request_flags.h"

#include "util/strings.h"

namespace primus::benchmark {

Result<DeviceChoice> ParseDeviceChoice(const std::string& value) {
  std::string device = ToLower(value);
  if (device == "auto") return DeviceChoice::kAuto;
  if (device == "cpu") return DeviceChoice::kCpu;
  if (device == "gpu") return DeviceChoice::kGpu;
  return UsageError("unknown --device '" + value + "'" + DidYouMean(device, {"auto", "cpu", "gpu"}),
                    "choose auto, cpu or gpu");
}

}  // namespace primus::benchmark
