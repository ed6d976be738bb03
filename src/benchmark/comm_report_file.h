// --output-file of `benchmark rccl` (and `benchmark comm`'s report in the
// same shape): one row per collective and size, from the JSON report rank 0
// writes, with the settings (backend, ranks, type, iterations, check) and
// the slowest rank of each collective listed above the table.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "benchmark/report_file.h"

namespace primus::benchmark {

ReportDocument CommReportDocument(const nlohmann::json& report, const std::string& title, const std::string& cluster);

}  // namespace primus::benchmark
