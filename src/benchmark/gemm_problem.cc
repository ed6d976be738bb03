#include "benchmark/gemm_problem.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/strings.h"

namespace primus::benchmark {

std::string_view GemmDtypeName(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kBf16: return "bf16";
    case GemmDtype::kFp16: return "fp16";
    case GemmDtype::kFp32: return "fp32";
    case GemmDtype::kTf32: return "tf32";
    case GemmDtype::kFp8: return "fp8";
  }
  return "?";
}

const std::vector<std::string>& GemmDtypeNames() {
  static const std::vector<std::string> names = {"bf16", "fp16", "fp32", "tf32", "fp8"};
  return names;
}

std::optional<GemmDtype> ParseGemmDtype(std::string_view text) {
  std::string name = ToLower(text);
  if (name == "bf16" || name == "bfloat16") return GemmDtype::kBf16;
  if (name == "fp16" || name == "f16" || name == "half" || name == "float16") return GemmDtype::kFp16;
  if (name == "fp32" || name == "f32" || name == "float" || name == "float32") return GemmDtype::kFp32;
  if (name == "tf32" || name == "xf32") return GemmDtype::kTf32;
  if (name == "fp8" || name == "f8" || name == "e4m3") return GemmDtype::kFp8;
  return std::nullopt;
}

int InputElementBytes(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kBf16:
    case GemmDtype::kFp16: return 2;
    case GemmDtype::kFp32:
    case GemmDtype::kTf32: return 4;
    case GemmDtype::kFp8: return 1;
  }
  return 4;
}

int OutputElementBytes(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kBf16:
    case GemmDtype::kFp16:
    case GemmDtype::kFp8: return 2;
    case GemmDtype::kFp32:
    case GemmDtype::kTf32: return 4;
  }
  return 4;
}

std::string GemmShape::Describe() const {
  return fmt::format("{}{}x{}x{} {}{}", name.empty() ? "" : name + " ", m, n, k, trans_a ? 'T' : 'N', trans_b ? 'T' : 'N');
}

int64_t RowsOfA(const GemmShape& s) { return s.trans_a ? s.k : s.m; }
int64_t ColsOfA(const GemmShape& s) { return s.trans_a ? s.m : s.k; }
int64_t RowsOfB(const GemmShape& s) { return s.trans_b ? s.n : s.k; }
int64_t ColsOfB(const GemmShape& s) { return s.trans_b ? s.k : s.n; }

double GemmFlops(const GemmShape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

int64_t GemmMinimumBytes(const GemmShape& s, GemmDtype input, GemmDtype output) {
  return (s.m * s.k + s.k * s.n) * InputElementBytes(input) + s.m * s.n * OutputElementBytes(output);
}

double ArithmeticIntensity(const GemmShape& s, GemmDtype input, GemmDtype output) {
  return GemmFlops(s) / static_cast<double>(GemmMinimumBytes(s, input, output));
}

double Tflops(const GemmShape& s, double seconds) { return seconds > 0 ? GemmFlops(s) / seconds / 1e12 : 0; }

double BandwidthGBs(int64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0;
}

int RotationSets(int64_t set_bytes, int64_t cache_bytes, int64_t budget_bytes) {
  if (set_bytes <= 0) return 1;
  int64_t wanted = std::max<int64_t>(2, (2 * cache_bytes + set_bytes - 1) / set_bytes);
  int64_t fitting = budget_bytes / set_bytes;
  return static_cast<int>(std::max<int64_t>(1, std::min(wanted, fitting)));
}

std::vector<int64_t> SweepSizes(int64_t top) {
  std::vector<int64_t> sizes;
  int64_t size = 256;
  while (size > top && size > 1) size /= 2;
  for (; size <= top; size *= 2) sizes.push_back(size);
  if (sizes.empty() || sizes.back() != top) sizes.push_back(top);
  return sizes;
}

}  // namespace primus::benchmark
