// Flags that `benchmark gemm` and `benchmark comm` share, parsed one way so
// both tasks accept the same spellings and give the same errors: --device
// (which engine runs the benchmark) and --plot (an SVG file to draw).
#pragma once

#include <string>

#include "util/error.h"

namespace primus::benchmark {

enum class DeviceChoice { kAuto, kCpu, kGpu };

// "auto" | "cpu" | "gpu", any case; a usage error suggests the nearest.
Result<DeviceChoice> ParseDeviceChoice(const std::string& value);

// --plot's value must name an .svg file; `example` is the hint's example
// ("--plot tflops.svg").
Status CheckSvgPlotPath(const std::string& value, const std::string& example);

}  // namespace primus::benchmark
