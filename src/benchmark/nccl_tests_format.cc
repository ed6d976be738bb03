#include "benchmark/nccl_tests_format.h"

#include <cstdarg>
#include <cstdint>
#include <cstdio>

namespace primus::benchmark {
namespace {

std::string Printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* format, ...) {
  char buffer[2048];
  va_list args;
  va_start(args, format);
  int written = std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return std::string(buffer, written < 0 ? 0 : std::min<size_t>(static_cast<size_t>(written), sizeof(buffer) - 1));
}

std::string Half(const CommHalf& half) {
  std::string out = Printf("  %7s  %6s  %6s", FloatField(half.time_us, 7).c_str(), FloatField(half.algbw, 6).c_str(),
                           FloatField(half.busbw, 6).c_str());
  return out + (half.wrong < 0 ? std::string("    N/A") : Printf("  %6g", static_cast<double>(half.wrong)));
}

nlohmann::ordered_json HalfJson(const CommHalf& half) {
  return {{"time", half.time_us},
          {"alg_bw", half.algbw},
          {"bus_bw", half.busbw},
          {"nwrong", half.wrong < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(half.wrong)}};
}

}  // namespace

std::string FloatField(double value, int width) {
  int power = 0;
  for (uint64_t val = 1; value >= static_cast<double>(val); val *= 10) power++;
  if (power < width - 2) return Printf("%*.2f", width, value);
  if (power < width - 1) return Printf("%*.1f", width, value);
  if (power < width + 1) return Printf("%*.0f", width, value);
  if (width >= 7) return Printf("%*.1e", width, value);
  return Printf("%*.0e", width, value);
}

std::string FormatRankLine(const RankLine& line) {
  return Printf("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s\n", line.rank, 0, line.pid, line.host.c_str(),
                line.device.index, line.device.bus.c_str(), line.device.name.c_str());
}

std::string FormatSectionHeader(Collective op, const std::string& backend, const CommRequest& request,
                                const std::vector<RankLine>& ranks) {
  std::string program(ProgramName(op));
  std::string out = "# primus-cli " PRIMUS_VERSION " benchmark comm: " + backend + "\n";
  out += "# Collective test starting: " + program + "\n";
  out += Printf("# nThread %d nGpus %d minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d agg iters: %d "
                "validation: %d graph: %d\n",
                1, 1, request.min_bytes, request.max_bytes,
                request.step_factor > 1 ? request.step_factor : request.step_bytes,
                request.step_factor > 1 ? "factor" : "bytes", request.warmup, request.iters, 1, request.check, 0);
  out += "#\n# Using devices\n";
  for (const RankLine& line : ranks) out += FormatRankLine(line);
  out += "#\n";
  out += Printf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "", "",
                "", "");
  out += Printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size", "count", "type",
                "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", 0, "");
  out += Printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)", "(elements)", "", "",
                "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, "");
  return out;
}

std::string FormatRow(const CommRow& row) {
  std::string root = Printf("%6i", row.root);
  return Printf("%12zu  %12zu  %8s  %6s  %6s", row.bytes, row.count, row.type.c_str(), row.redop.c_str(), root.c_str()) +
         Half(row.out_of_place) + Half(row.in_place) + "\n";
}

std::string FormatSectionFooter(const CommSection& section) {
  std::string out = Printf("# %-20s : %lld %s\n", "Out of bounds values", static_cast<long long>(section.errors),
                           section.errors ? "FAILED" : "OK");
  out += Printf("# %-20s : %g %s\n", "Avg bus bandwidth", section.average_busbw, "");
  if (section.slowest.rank >= 0) {
    out += Printf("# %-20s : %d on %s (pid %d): %.2f us per iteration, %.1f%% above the mean rank\n", "Slowest rank",
                  section.slowest.rank, section.slowest.host.c_str(), section.slowest.pid, section.slowest.mean_us,
                  section.slowest.percent_above);
  }
  out += "#\n# Collective test concluded: " + std::string(ProgramName(section.op)) + "\n#\n\n";
  return out;
}

nlohmann::ordered_json SectionJson(const CommSection& section) {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const CommRow& row : section.rows) {
    results.push_back({{"size", row.bytes},
                       {"count", row.count},
                       {"type", row.type},
                       {"redop", row.redop},
                       {"root", row.root},
                       {"out_of_place", HalfJson(row.out_of_place)},
                       {"in_place", HalfJson(row.in_place)}});
  }
  nlohmann::ordered_json slowest = nullptr;
  if (section.slowest.rank >= 0) {
    slowest = {{"rank", section.slowest.rank},
               {"host", section.slowest.host},
               {"pid", section.slowest.pid},
               {"mean_time_us", section.slowest.mean_us},
               {"percent_above_mean", section.slowest.percent_above}};
  }
  return {{"name", std::string(ProgramName(section.op))},
          {"collective", std::string(CollectiveName(section.op))},
          {"results", results},
          {"out_of_bounds", {{"count", section.errors}, {"okay", section.errors == 0}}},
          {"average_bus_bandwidth", {{"bandwidth", section.average_busbw}, {"okay", "unchecked"}}},
          {"slowest_rank", slowest}};
}

nlohmann::ordered_json CommReportJson(const std::string& backend, const CommRequest& request,
                                      const std::vector<RankLine>& ranks, const std::vector<CommSection>& sections) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const RankLine& line : ranks) {
    devices.push_back({{"rank", line.rank},
                       {"group", 0},
                       {"pid", line.pid},
                       {"hostname", line.host},
                       {"device", line.device.index},
                       {"device_hex", line.device.bus},
                       {"device_info", line.device.name}});
  }
  nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
  for (const CommSection& section : sections) collectives.push_back(SectionJson(section));
  nlohmann::ordered_json config = {{"nthreads", 1},
                                   {"ngpus", 1},
                                   {"minimum_bytes", request.min_bytes},
                                   {"maximum_bytes", request.max_bytes}};
  if (request.step_factor > 1) config["step_factor"] = request.step_factor;
  else config["step_bytes"] = request.step_bytes;
  config["warmup_iters"] = request.warmup;
  config["iterations"] = request.iters;
  config["aggregated_iterations"] = 1;
  config["validation"] = request.check;
  config["graph"] = 0;
  config["datatype"] = std::string(DataTypeName(request.type));
  return {{"version", 1},
          {"tool", "primus-cli benchmark comm"},
          {"primus_version", PRIMUS_VERSION},
          {"backend", backend},
          {"config", config},
          {"devices", devices},
          {"collectives", collectives}};
}

}  // namespace primus::benchmark
