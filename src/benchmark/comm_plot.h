// --plot of `benchmark comm`: bus bandwidth against size, one line per
// collective and mode, drawn from the JSON report rank 0 writes (so the
// launching task draws it, on the node and in the directory where the user
// typed the command).
#pragma once

#include <nlohmann/json.hpp>

#include "util/svg_chart.h"

namespace primus::benchmark {

PlotSpec BusBandwidthPlot(const nlohmann::json& report);

}  // namespace primus::benchmark
