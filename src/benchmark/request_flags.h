// Flags that `benchmark gemm` and `benchmark comm` share, parsed one way so
// both tasks accept the same spellings and give the same errors: --device
// (which engine runs the benchmark). --plot's check is util/svg_chart.h's.
#pragma once

#include <string>

#include "util/error.h"

namespace primus::benchmark {

enum class DeviceChoice { kAuto, kCpu, kGpu };

// "auto" | "cpu" | "gpu", any case; a usage error suggests the nearest.
Result<DeviceChoice> ParseDeviceChoice(const std::string& value);

}  // namespace primus::benchmark
