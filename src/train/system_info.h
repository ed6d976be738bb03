// env/system_info.json of an experiment: the facts a replay compares (GPU
// vendor, model and count; driver; Python and PyTorch versions; host) taken
// from the platform layer's detection and from the training interpreter.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "platform/host_info.h"

namespace primus::train {

// Detection only: no subprocess.
nlohmann::ordered_json DescribeSystem(const platform::HostInfo& host);
// Adds "python" and "torch" from `interpreter` without importing torch (about 60 ms).
void AddPythonVersions(const std::string& interpreter, nlohmann::ordered_json* info);

}  // namespace primus::train
