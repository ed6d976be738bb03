#include "benchmark/gemm_result.h"

#include <algorithm>

namespace primus::benchmark {

GemmTiming SummarizeTimes(std::vector<double> times_ms) {
  GemmTiming timing;
  if (times_ms.empty()) return timing;
  std::sort(times_ms.begin(), times_ms.end());
  double total = 0;
  for (double t : times_ms) total += t;
  timing.iterations = static_cast<int>(times_ms.size());
  timing.mean_ms = total / static_cast<double>(times_ms.size());
  timing.min_ms = times_ms.front();
  timing.max_ms = times_ms.back();
  size_t middle = times_ms.size() / 2;
  timing.median_ms = times_ms.size() % 2 ? times_ms[middle] : (times_ms[middle - 1] + times_ms[middle]) / 2;
  return timing;
}

void DeriveRates(GemmDtype used, GemmResult* r) {
  double seconds = r->timing.mean_ms / 1e3;
  r->tflops = Tflops(r->shape, seconds);
  r->bandwidth_gbs = BandwidthGBs(GemmMinimumBytes(r->shape, used, used), seconds);
  r->arithmetic_intensity = ArithmeticIntensity(r->shape, used, used);
  r->percent_of_peak = r->peak_tflops > 0 ? 100.0 * r->tflops / r->peak_tflops : 0;
}

nlohmann::ordered_json GemmResultToJson(const GemmResult& r) {
  nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
  for (const GemmCandidate& c : r.candidates) candidates.push_back({{"index", c.index}, {"mean_ms", c.mean_ms}});
  return {
      {"rank", r.rank},
      {"local_rank", r.local_rank},
      {"host", r.host},
      {"device", r.device},
      {"device_id", r.device_id},
      {"library", r.library},
      {"m", r.shape.m},
      {"n", r.shape.n},
      {"k", r.shape.k},
      {"trans_a", r.shape.trans_a},
      {"trans_b", r.shape.trans_b},
      {"name", r.shape.name},
      {"dtype_requested", r.dtype_requested},
      {"dtype_used", r.dtype_used},
      {"note", r.note},
      {"rotation_sets", r.rotation_sets},
      {"rotation_bytes", r.rotation_bytes},
      {"iterations", r.timing.iterations},
      {"mean_ms", r.timing.mean_ms},
      {"min_ms", r.timing.min_ms},
      {"median_ms", r.timing.median_ms},
      {"max_ms", r.timing.max_ms},
      {"tflops", r.tflops},
      {"peak_tflops", r.peak_tflops},
      {"percent_of_peak", r.percent_of_peak},
      {"bandwidth_gbs", r.bandwidth_gbs},
      {"arithmetic_intensity", r.arithmetic_intensity},
      {"algorithm", r.algorithm},
      {"candidates", candidates},
      {"check",
       {{"performed", r.check.performed},
        {"passed", r.check.passed},
        {"mode", r.check.mode},
        {"checked", r.check.checked},
        {"wrong", r.check.wrong},
        {"max_error", r.check.max_error},
        {"tolerance", r.check.tolerance},
        {"first_wrong", r.check.first_wrong}}},
  };
}

Result<GemmResult> GemmResultFromJson(const nlohmann::json& j) {
  try {
    GemmResult r;
    r.rank = j.at("rank").get<int>();
    r.local_rank = j.at("local_rank").get<int>();
    r.host = j.at("host").get<std::string>();
    r.device = j.at("device").get<std::string>();
    r.device_id = j.at("device_id").get<std::string>();
    r.library = j.at("library").get<std::string>();
    r.shape.m = j.at("m").get<int64_t>();
    r.shape.n = j.at("n").get<int64_t>();
    r.shape.k = j.at("k").get<int64_t>();
    r.shape.trans_a = j.at("trans_a").get<bool>();
    r.shape.trans_b = j.at("trans_b").get<bool>();
    r.shape.name = j.value("name", "");
    r.dtype_requested = j.at("dtype_requested").get<std::string>();
    r.dtype_used = j.at("dtype_used").get<std::string>();
    r.note = j.at("note").get<std::string>();
    r.rotation_sets = j.at("rotation_sets").get<int>();
    r.rotation_bytes = j.at("rotation_bytes").get<int64_t>();
    r.timing.iterations = j.at("iterations").get<int>();
    r.timing.mean_ms = j.at("mean_ms").get<double>();
    r.timing.min_ms = j.at("min_ms").get<double>();
    r.timing.median_ms = j.at("median_ms").get<double>();
    r.timing.max_ms = j.at("max_ms").get<double>();
    r.tflops = j.at("tflops").get<double>();
    r.peak_tflops = j.at("peak_tflops").get<double>();
    r.percent_of_peak = j.at("percent_of_peak").get<double>();
    r.bandwidth_gbs = j.at("bandwidth_gbs").get<double>();
    r.arithmetic_intensity = j.at("arithmetic_intensity").get<double>();
    r.algorithm = j.at("algorithm").get<std::string>();
    for (const auto& c : j.at("candidates")) r.candidates.push_back({c.at("index").get<int>(), c.at("mean_ms").get<double>()});
    const auto& check = j.at("check");
    r.check.performed = check.at("performed").get<bool>();
    r.check.passed = check.at("passed").get<bool>();
    r.check.mode = check.at("mode").get<std::string>();
    r.check.checked = check.at("checked").get<int64_t>();
    r.check.wrong = check.at("wrong").get<int64_t>();
    r.check.max_error = check.at("max_error").get<double>();
    r.check.tolerance = check.at("tolerance").get<double>();
    r.check.first_wrong = check.at("first_wrong").get<std::string>();
    return r;
  } catch (const nlohmann::json::exception& error) {
    return TaskError(std::string("a GEMM result is malformed: ") + error.what());
  }
}

}  // namespace primus::benchmark
