// The run report as one self-contained HTML page (`analyze run --html
// FILE`): inline CSS and inline SVG charts, no script, no font or file from
// elsewhere, so it opens anywhere, offline, and can be mailed or attached to
// an issue. Sections: the summary; loss and throughput; step time per rank;
// CPU and GPU utilization per node; attempts, restarts and failures on a
// timeline; the configuration and the environment with their origins. A
// section without data says so in one line.
//
// Every string from the run (a configuration value, a host, a log line) is
// escaped; series longer than kMaxSeriesPoints are downsampled, so a run of
// any length gives a page of bounded size.
#pragma once

#include <string>

#include "analyze/run_report.h"

namespace primus::analyze {

std::string RenderRunReportHtml(const RunReport& report);

}  // namespace primus::analyze
