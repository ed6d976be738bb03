// The job view (docs/monitor.md, "The job's view") in Prometheus's text
// exposition format, version 0.0.4: what `GET /metrics` on the metrics port
// answers. Series are named and labelled as the table in docs/monitor.md says;
// each family has its HELP and TYPE lines, label values are escaped, and a
// series whose value the view lacks (unknown, or not a number) is left out
// rather than written as 0. Families with no series are left out entirely.
//
// Rendering is one pass over the view with one output buffer: a 64-node job of
// 8 GPUs per node renders in under a millisecond (bench/metrics_latency.cc).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace primus::telemetry {

// The Content-Type that goes with RenderPrometheusText's output.
inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// `view`: a job view or one node's view (the same shape). Anything missing or
// of the wrong type is skipped, never an error: a partial view gives the
// series it has.
std::string RenderPrometheusText(const nlohmann::json& view);

// A label value as the format writes it: backslash, double quote and newline
// escaped (the quotes around it are the caller's).
std::string EscapeLabelValue(std::string_view value);

}  // namespace primus::telemetry
