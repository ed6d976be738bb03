#include "benchmark/gemm_cpu.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "util/dynamic_library.h"
#include "benchmark/gemm_data.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::benchmark {
namespace {

// cblas.h (OpenBLAS, 32-bit integers: Debian's libopenblas0)
constexpr int kCblasColMajor = 102;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;
using SgemmFunction = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                               int);
using ConfigFunction = const char* (*)();
using ThreadsFunction = int (*)();

int64_t MemoryAvailableBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return int64_t{4} << 30;
}

class CpuGemmEngine : public GemmEngine {
 public:
  CpuGemmEngine(DynamicLibrary library, SgemmFunction sgemm, std::string cpu_model)
      : library_(std::move(library)), sgemm_(sgemm), cpu_model_(std::move(cpu_model)) {}

  Result<GemmResult> Run(const GemmShape& shape, GemmDtype requested, const GemmRunOptions& settings) override {
    GemmResult result;
    result.shape = shape;
    result.dtype_requested = std::string(GemmDtypeName(requested));
    result.dtype_used = "fp32";
    int threads = 0;
    if (auto get_threads = reinterpret_cast<ThreadsFunction>(library_.Find("openblas_get_num_threads"))) threads = get_threads();
    std::string config;
    if (auto get_config = reinterpret_cast<ConfigFunction>(library_.Find("openblas_get_config"))) config = get_config();
    config = std::string(Trim(config));
    result.library = config.empty() ? "OpenBLAS (" + library_.path() + ")"
                                    : (config.starts_with("OpenBLAS") ? config : "OpenBLAS " + config);
    result.device = fmt::format("cpu: {}{}", cpu_model_.empty() ? "unknown model" : cpu_model_,
                                threads > 0 ? fmt::format(", {} threads", threads) : "");
    if (requested != GemmDtype::kFp32) {
      result.note = fmt::format("{} asked: the CPU path computes fp32 (OpenBLAS cblas_sgemm{})", GemmDtypeName(requested),
                                library_.Find("cblas_sbgemm") ? "" : "; this OpenBLAS has no bf16 GEMM");
    }
    result.algorithm = "cblas_sgemm";
    if (settings.tune) {
      result.note += std::string(result.note.empty() ? "" : "; ") + "--tune has nothing to choose on the CPU (one OpenBLAS kernel)";
    }

    GemmOperands operands = MakeOperands(shape, GemmDtype::kFp32, settings.seed);
    std::vector<float> a = OperandAsFloats(operands.a, operands.grid);
    std::vector<float> b = OperandAsFloats(operands.b, operands.grid);
    int64_t set_bytes = static_cast<int64_t>((a.size() + b.size()) * sizeof(float)) + shape.m * shape.n * 4;
    int sets = RotationSets(set_bytes, LastLevelCacheBytes(), MemoryAvailableBytes() / 4);
    if (sets < 2) {
      return UnavailableError(fmt::format("{} needs {} MiB per buffer set and two sets do not fit in a quarter of the "
                                          "available memory", shape.Describe(), set_bytes >> 20),
                              "choose a smaller -M/-N/-K");
    }
    result.rotation_sets = sets;
    result.rotation_bytes = set_bytes * sets;
    struct Set {
      std::vector<float> a, b, d;
    };
    std::vector<Set> buffers(static_cast<size_t>(sets));
    for (Set& set : buffers) {
      set.a = a;
      set.b = b;
      set.d.assign(static_cast<size_t>(shape.m * shape.n), 0.0f);
    }
    auto gemm = [&](Set& set) {
      sgemm_(kCblasColMajor, shape.trans_a ? kCblasTrans : kCblasNoTrans, shape.trans_b ? kCblasTrans : kCblasNoTrans,
             static_cast<int>(shape.m), static_cast<int>(shape.n), static_cast<int>(shape.k), 1.0f, set.a.data(),
             static_cast<int>(RowsOfA(shape)), set.b.data(), static_cast<int>(RowsOfB(shape)), 0.0f, set.d.data(),
             static_cast<int>(shape.m));
    };
    using Clock = std::chrono::steady_clock;
    auto seconds_since = [](Clock::time_point start) {
      return std::chrono::duration<double>(Clock::now() - start).count();
    };

    BufferRotation rotation(sets);
    auto step = [&]() -> double {
      Set& set = buffers[static_cast<size_t>(rotation.Next())];
      auto start = Clock::now();
      gemm(set);
      return seconds_since(start);
    };
    double warm_seconds = 0;
    for (int i = 0; i < settings.warmup; ++i) warm_seconds += step();
    int iters = settings.iters;
    if (iters <= 0) {
      double per_iteration = settings.warmup > 0 ? warm_seconds / settings.warmup : step();
      iters = IterationsFor(settings.duration_s, per_iteration);
    }
    std::vector<double> times_ms;
    times_ms.reserve(static_cast<size_t>(iters));
    for (int i = 0; i < iters; ++i) times_ms.push_back(step() * 1e3);
    result.timing = SummarizeTimes(times_ms);
    DeriveRates(GemmDtype::kFp32, &result);

    std::fill(buffers[0].d.begin(), buffers[0].d.end(), 0.0f);
    gemm(buffers[0]);
    result.check = CheckProduct(operands, buffers[0].d.data(), GemmDtype::kFp32);
    return result;
  }

 private:
  DynamicLibrary library_;
  SgemmFunction sgemm_;
  std::string cpu_model_;
};

}  // namespace

int IterationsFor(double duration_s, double seconds_per_iteration) {
  if (seconds_per_iteration <= 0) return 1;
  double count = duration_s / seconds_per_iteration;
  return static_cast<int>(std::clamp(count, 1.0, 1e6));
}

int64_t LastLevelCacheBytes(const std::string& sysfs_cpu) {
  int best_level = -1;
  int64_t best_bytes = 0;
  for (int index = 0; index < 16; ++index) {
    std::string dir = fmt::format("{}/cpu0/cache/index{}", sysfs_cpu, index);
    auto level = ReadFile(dir + "/level");
    auto size = ReadFile(dir + "/size");
    if (!level.ok() || !size.ok()) continue;
    auto level_number = ParseInt(Trim(*level));
    std::string text(Trim(*size));
    int64_t multiplier = 1;
    if (!text.empty() && (text.back() == 'K' || text.back() == 'M' || text.back() == 'G')) {
      multiplier = text.back() == 'K' ? 1024 : text.back() == 'M' ? 1024 * 1024 : 1024 * 1024 * 1024;
      text.pop_back();
    }
    auto bytes = ParseInt(text);
    if (!level_number || !bytes) continue;
    if (*level_number > best_level || (*level_number == best_level && *bytes * multiplier > best_bytes)) {
      best_level = static_cast<int>(*level_number);
      best_bytes = *bytes * multiplier;
    }
  }
  return best_bytes > 0 ? best_bytes : int64_t{32} << 20;
}

Result<std::unique_ptr<GemmEngine>> OpenCpuGemmEngine(const std::string& cpu_model) {
  auto library = DynamicLibrary::Open({"libopenblas.so.0", "libopenblas.so"}, "OpenBLAS",
                                      "install Debian's libopenblas0-pthread (scripts/setup.sh does), or put "
                                      "libopenblas.so.0 on LD_LIBRARY_PATH");
  if (!library.ok()) return library.error();
  SgemmFunction sgemm = nullptr;
  if (Status loaded = library->Load("cblas_sgemm", &sgemm); !loaded.ok()) return loaded.error();
  return std::unique_ptr<GemmEngine>(new CpuGemmEngine(std::move(*library), sgemm, cpu_model));
}

}  // namespace primus::benchmark
