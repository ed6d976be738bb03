#include "benchmark/gemm_gpu.h"

#include <cmath>
#include <cstring>
#include <functional>

#include <fmt/format.h>

#include "benchmark/blaslt_api.h"
#include "util/dynamic_library.h"
#include "benchmark/gemm_data.h"
#include "platform/device_table.h"
#include "util/strings.h"

namespace primus::benchmark {
namespace {

// Runs its function when it goes out of scope (descriptor and event cleanup).
class Cleanup {
 public:
  explicit Cleanup(std::function<void()> action) : action_(std::move(action)) {}
  ~Cleanup() {
    if (action_) action_();
  }
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;

 private:
  std::function<void()> action_;
};

struct BlasLtCalls {
  BlasLtCreate create = nullptr;
  BlasLtDestroy destroy = nullptr;
  BlasLtMatmulDescCreate desc_create = nullptr;
  BlasLtMatmulDescDestroy desc_destroy = nullptr;
  BlasLtMatmulDescSetAttribute desc_set = nullptr;
  BlasLtMatrixLayoutCreate layout_create = nullptr;
  BlasLtMatrixLayoutDestroy layout_destroy = nullptr;
  BlasLtPreferenceCreate preference_create = nullptr;
  BlasLtPreferenceDestroy preference_destroy = nullptr;
  BlasLtPreferenceSetAttribute preference_set = nullptr;
  BlasLtAlgoGetHeuristic heuristic = nullptr;
  BlasLtMatmul matmul = nullptr;
  BlasLtGetStatusString status_string = nullptr;  // optional
};

// The library's data types for one benchmark dtype.
struct MatmulTypes {
  int a = 0, b = 0, d = 0, compute = 0;
  GemmDtype output = GemmDtype::kFp32;  // how to read D back
  Fp8Encoding fp8 = Fp8Encoding::kOcp;
};

class BlasLtGemmEngine : public GemmEngine {
 public:
  // `gpu`: the detected GPU at this PCI address, if any; else `by_name`,
  // the device-table entry matched by the runtime's device name.
  BlasLtGemmEngine(const BlasLtDialect& dialect, GpuApi runtime, DynamicLibrary library, BlasLtCalls calls,
                   int device, std::string device_name, std::string bus_id, const platform::GpuInfo* gpu,
                   const platform::KnownDevice* by_name)
      : dialect_(dialect),
        runtime_(std::move(runtime)),
        library_(std::move(library)),
        calls_(calls),
        device_(device),
        device_name_(std::move(device_name)),
        bus_id_(std::move(bus_id)),
        known_(gpu ? gpu->known : by_name),
        known_by_name_(!gpu && by_name),
        arch_(gpu ? gpu->arch : by_name ? std::string(by_name->arch) : "") {}

  ~BlasLtGemmEngine() override {
    if (handle_) calls_.destroy(handle_);
    runtime_.DestroyStream(stream_);
  }

  Status Initialize() {
    if (Status status = runtime_.SetDevice(device_); !status.ok()) return status;
    if (Status status = Check(calls_.create(&handle_), "Create"); !status.ok()) return status;
    auto stream = runtime_.CreateStream();
    if (!stream.ok()) return stream.error();
    stream_ = *stream;
    auto workspace = DeviceBuffer::Allocate(runtime_, kBlasLtWorkspaceBytes);
    if (!workspace.ok()) return workspace.error();
    workspace_ = std::move(*workspace);
    return Status::Ok();
  }

  std::string LibraryVersion() const {
    if (auto version = reinterpret_cast<CublasLtGetVersion>(library_.Find("cublasLtGetVersion"))) {
      size_t v = version();
      return fmt::format("{} {}.{}.{}", dialect_.what, v / 10000, (v / 100) % 100, v % 100);
    }
    if (auto version = reinterpret_cast<int (*)(void*, int*)>(library_.Find("hipblasLtGetVersion"))) {
      int v = 0;
      if (version(handle_, &v) == 0) return fmt::format("{} {}.{}.{}", dialect_.what, v / 100000, (v / 100) % 1000, v % 100);
    }
    return dialect_.what;
  }

  Result<GemmResult> Run(const GemmShape& shape, GemmDtype requested, const GemmRunOptions& settings) override {
    auto types = TypesFor(requested, shape);
    if (!types.ok()) return types.error();
    GemmResult result;
    result.shape = shape;
    result.dtype_requested = std::string(GemmDtypeName(requested));
    result.dtype_used = result.dtype_requested;
    result.device = device_name_.empty() ? std::string(dialect_.what == "cuBLASLt" ? "NVIDIA GPU" : "AMD GPU") : device_name_;
    result.device_id = bus_id_;
    result.library = LibraryVersion() + " on " + runtime_.Describe();
    result.peak_tflops = PeakTflops(known_, requested);
    if (requested == GemmDtype::kFp8) {
      result.note = fmt::format("fp8 = E4M3{} in, bf16 out", types->fp8 == Fp8Encoding::kFnuz ? " (fnuz)" : "");
    }
    if (known_by_name_ && result.peak_tflops > 0) {
      result.note += std::string(result.note.empty() ? "" : "; ") + "peak of the " + std::string(known_->product) +
                     " (matched by the device name: the GPU was not found in sysfs)";
    }
    if (result.peak_tflops == 0) {
      result.note += std::string(result.note.empty() ? "" : "; ") +
                     (known_ ? "the device table has no peak for " + result.dtype_requested : "device not in the device table: no peak");
    }

    // Descriptors (destroyed at the end of this call whatever happens).
    void* desc = nullptr;
    void *a_layout = nullptr, *b_layout = nullptr, *d_layout = nullptr, *preference = nullptr;
    Cleanup cleanup([&] {
      if (desc) calls_.desc_destroy(desc);
      for (void* layout : {a_layout, b_layout, d_layout}) {
        if (layout) calls_.layout_destroy(layout);
      }
      if (preference) calls_.preference_destroy(preference);
    });
    int32_t op_a = shape.trans_a ? dialect_.op_t : dialect_.op_n;
    int32_t op_b = shape.trans_b ? dialect_.op_t : dialect_.op_n;
    uint64_t workspace_bytes = kBlasLtWorkspaceBytes;
    for (Status status : {Check(calls_.desc_create(&desc, types->compute, dialect_.r_32f), "MatmulDescCreate"),
                          Check(calls_.desc_set(desc, dialect_.desc_transa, &op_a, sizeof(op_a)), "MatmulDescSetAttribute(TRANSA)"),
                          Check(calls_.desc_set(desc, dialect_.desc_transb, &op_b, sizeof(op_b)), "MatmulDescSetAttribute(TRANSB)"),
                          Check(calls_.layout_create(&a_layout, types->a, RowsOfA(shape), ColsOfA(shape), RowsOfA(shape)),
                                "MatrixLayoutCreate(A)"),
                          Check(calls_.layout_create(&b_layout, types->b, RowsOfB(shape), ColsOfB(shape), RowsOfB(shape)),
                                "MatrixLayoutCreate(B)"),
                          Check(calls_.layout_create(&d_layout, types->d, shape.m, shape.n, shape.m), "MatrixLayoutCreate(D)"),
                          Check(calls_.preference_create(&preference), "MatmulPreferenceCreate"),
                          Check(calls_.preference_set(preference, dialect_.pref_max_workspace_bytes, &workspace_bytes,
                                                      sizeof(workspace_bytes)),
                                "MatmulPreferenceSetAttribute")}) {
      if (!status.ok()) return status.error();
    }

    int requested_count = settings.tune ? kTuneCandidates : 1;
    std::vector<uint8_t> heuristics(dialect_.heuristic_result_bytes * static_cast<size_t>(requested_count), 0);
    int returned = 0;
    if (Status status = Check(calls_.heuristic(handle_, desc, a_layout, b_layout, d_layout, d_layout, preference,
                                               requested_count, heuristics.data(), &returned),
                              "MatmulAlgoGetHeuristic");
        !status.ok()) {
      return TaskError(status.error().message + " for " + result.dtype_requested + " " + shape.Describe(),
                       "this dtype or layout may be unsupported on this GPU; try another --dtype or --trans-a/--trans-b");
    }
    std::vector<const void*> algorithms;
    for (int i = 0; i < returned; ++i) {
      const uint8_t* entry = heuristics.data() + static_cast<size_t>(i) * dialect_.heuristic_result_bytes;
      int32_t state = 0;
      std::memcpy(&state, entry + dialect_.heuristic_state_offset, sizeof(state));
      if (state == 0) algorithms.push_back(entry);
    }
    if (algorithms.empty()) {
      return TaskError(fmt::format("{} has no algorithm for {} {} on {}", dialect_.what, result.dtype_requested,
                                   shape.Describe(), result.device),
                       "try another --dtype or layout (--trans-a/--trans-b)");
    }

    // Operands: the same data in every buffer set.
    GemmOperands operands = MakeOperands(shape, requested, settings.seed);
    std::vector<uint8_t> a_bytes = EncodeOperand(operands.a, operands.grid, requested, types->fp8);
    std::vector<uint8_t> b_bytes = EncodeOperand(operands.b, operands.grid, requested, types->fp8);
    size_t d_bytes = static_cast<size_t>(shape.m * shape.n) * static_cast<size_t>(OutputElementBytes(requested));
    int64_t set_bytes = static_cast<int64_t>(a_bytes.size() + b_bytes.size() + d_bytes);
    auto memory = runtime_.MemoryInfo();
    if (!memory.ok()) return memory.error();
    int sets = RotationSets(set_bytes, kGpuCacheBytes, static_cast<int64_t>(memory->first / 2));
    if (sets < 2) {
      return TaskError(fmt::format("{} {} needs {} MiB per buffer set; two sets do not fit in half of the {} MiB free",
                                   result.dtype_requested, shape.Describe(), set_bytes >> 20, memory->first >> 20),
                       "choose a smaller -M/-N/-K");
    }
    result.rotation_sets = sets;
    result.rotation_bytes = set_bytes * sets;
    struct Set {
      DeviceBuffer a, b, d;
    };
    std::vector<Set> buffers;
    for (int i = 0; i < sets; ++i) {
      Set set;
      for (auto [buffer, bytes] : {std::pair{&set.a, a_bytes.size()}, std::pair{&set.b, b_bytes.size()}, std::pair{&set.d, d_bytes}}) {
        auto allocated = DeviceBuffer::Allocate(runtime_, bytes);
        if (!allocated.ok()) return allocated.error();
        *buffer = std::move(*allocated);
      }
      for (Status status : {runtime_.CopyToDevice(set.a.get(), a_bytes.data(), a_bytes.size()),
                            runtime_.CopyToDevice(set.b.get(), b_bytes.data(), b_bytes.size()),
                            runtime_.Memset(set.d.get(), 0, d_bytes)}) {
        if (!status.ok()) return status.error();
      }
      buffers.push_back(std::move(set));
    }

    const float alpha = 1.0f, beta = 0.0f;
    BufferRotation rotation(sets);  // consecutive iterations never share a set
    auto matmul = [&](const void* algorithm) -> Status {
      Set& set = buffers[static_cast<size_t>(rotation.Next())];
      return Check(calls_.matmul(handle_, desc, &alpha, set.a.get(), a_layout, set.b.get(), b_layout, &beta, set.d.get(),
                                 d_layout, set.d.get(), d_layout, algorithm, workspace_.get(), workspace_.bytes(),
                                 stream_),
                   "Matmul");
    };

    std::vector<GpuEvent> events;
    Cleanup destroy_events([&] {
      for (GpuEvent event : events) runtime_.DestroyEvent(event);
    });
    auto make_events = [&](size_t count) -> Status {
      while (events.size() < count) {
        auto event = runtime_.CreateEvent();
        if (!event.ok()) return event.error();
        events.push_back(*event);
      }
      return Status::Ok();
    };
    // Mean milliseconds of `count` back-to-back iterations of `algorithm`.
    auto time_batch = [&](const void* algorithm, int count) -> Result<double> {
      if (Status status = make_events(2); !status.ok()) return status.error();
      if (Status status = runtime_.RecordEvent(events[0], stream_); !status.ok()) return status.error();
      for (int i = 0; i < count; ++i) {
        if (Status status = matmul(algorithm); !status.ok()) return status.error();
      }
      if (Status status = runtime_.RecordEvent(events[1], stream_); !status.ok()) return status.error();
      if (Status status = runtime_.SynchronizeEvent(events[1]); !status.ok()) return status.error();
      auto ms = runtime_.ElapsedMs(events[0], events[1]);
      if (!ms.ok()) return ms.error();
      return static_cast<double>(*ms) / std::max(count, 1);
    };

    size_t chosen = 0;
    if (settings.tune && algorithms.size() > 1) {
      double best = INFINITY;
      for (size_t i = 0; i < algorithms.size(); ++i) {
        if (!time_batch(algorithms[i], 2).ok()) continue;  // a candidate that fails to run is skipped
        auto ms = time_batch(algorithms[i], 10);
        if (!ms.ok()) continue;
        result.candidates.push_back({static_cast<int>(i), *ms});
        if (*ms < best) {
          best = *ms;
          chosen = i;
        }
      }
      if (result.candidates.empty()) return TaskError(dialect_.what + ": none of the candidate algorithms ran");
      result.algorithm = fmt::format("tuned: heuristic #{} of {}", chosen, algorithms.size());
    } else {
      result.algorithm = fmt::format("heuristic #0 of {}", algorithms.size());
    }
    const void* algorithm = algorithms[chosen];

    double warm_ms = 0;
    if (settings.warmup > 0) {
      auto ms = time_batch(algorithm, settings.warmup);
      if (!ms.ok()) return ms.error();
      warm_ms = *ms;
    }
    int iters = settings.iters;
    if (iters <= 0) {
      if (warm_ms <= 0) {
        auto ms = time_batch(algorithm, 1);
        if (!ms.ok()) return ms.error();
        warm_ms = *ms;
      }
      iters = IterationsFor(settings.duration_s, warm_ms / 1e3);
    }

    // One event between iterations (or between batches of them beyond 1000).
    int batch = std::max(1, (iters + 999) / 1000);
    int intervals = (iters + batch - 1) / batch;
    if (Status status = make_events(static_cast<size_t>(intervals) + 1); !status.ok()) return status.error();
    if (Status status = runtime_.RecordEvent(events[0], stream_); !status.ok()) return status.error();
    for (int i = 0, recorded = 1; i < iters; ++i) {
      if (Status status = matmul(algorithm); !status.ok()) return status.error();
      if ((i + 1) % batch == 0 || i + 1 == iters) {
        if (Status status = runtime_.RecordEvent(events[static_cast<size_t>(recorded++)], stream_); !status.ok()) {
          return status.error();
        }
      }
    }
    if (Status status = runtime_.SynchronizeEvent(events[static_cast<size_t>(intervals)]); !status.ok()) return status.error();
    std::vector<double> times_ms;
    for (int i = 0; i < intervals; ++i) {
      auto ms = runtime_.ElapsedMs(events[static_cast<size_t>(i)], events[static_cast<size_t>(i) + 1]);
      if (!ms.ok()) return ms.error();
      int in_interval = std::min(batch, iters - i * batch);
      times_ms.push_back(static_cast<double>(*ms) / in_interval);
    }
    auto total = runtime_.ElapsedMs(events[0], events[static_cast<size_t>(intervals)]);
    if (!total.ok()) return total.error();
    result.timing = SummarizeTimes(times_ms);
    result.timing.iterations = iters;
    result.timing.mean_ms = static_cast<double>(*total) / iters;
    DeriveRates(requested, &result);

    // The check: one more product into set 0, read back, compared with the exact one.
    rotation.Restart();
    if (Status status = runtime_.Memset(buffers[0].d.get(), 0, d_bytes); !status.ok()) return status.error();
    if (Status status = matmul(algorithm); !status.ok()) return status.error();
    if (Status status = runtime_.SynchronizeStream(stream_); !status.ok()) return status.error();
    std::vector<uint8_t> d_host(d_bytes);
    if (Status status = runtime_.CopyToHost(d_host.data(), buffers[0].d.get(), d_bytes); !status.ok()) return status.error();
    result.check = CheckProduct(operands, d_host.data(), types->output);
    return result;
  }

 private:
  Status Check(int status, const char* call) const {
    if (status == 0) return Status::Ok();
    const char* text = calls_.status_string ? calls_.status_string(status) : nullptr;
    return TaskError(fmt::format("{}{}: {} (status {})", dialect_.prefix, call, text ? text : "failed", status));
  }

  Result<MatmulTypes> TypesFor(GemmDtype dtype, const GemmShape& shape) const {
    MatmulTypes t;
    t.compute = dialect_.compute_32f;
    switch (dtype) {
      case GemmDtype::kBf16: t.a = t.b = t.d = dialect_.r_16bf; t.output = GemmDtype::kBf16; break;
      case GemmDtype::kFp16: t.a = t.b = t.d = dialect_.r_16f; t.output = GemmDtype::kFp16; break;
      case GemmDtype::kFp32: t.a = t.b = t.d = dialect_.r_32f; t.output = GemmDtype::kFp32; break;
      case GemmDtype::kTf32:
        t.a = t.b = t.d = dialect_.r_32f;
        t.compute = dialect_.compute_32f_fast_tf32;
        t.output = GemmDtype::kTf32;
        break;
      case GemmDtype::kFp8: {
        // MI300 (gfx942) has the fnuz variant only; NVIDIA and MI350 use OCP e4m3fn.
        bool fnuz = dialect_.r_8f_e4m3_fnuz >= 0 && arch_ == "gfx942";
        t.a = t.b = fnuz ? dialect_.r_8f_e4m3_fnuz : dialect_.r_8f_e4m3;
        t.fp8 = fnuz ? Fp8Encoding::kFnuz : Fp8Encoding::kOcp;
        t.d = dialect_.r_16bf;
        t.output = GemmDtype::kFp8;
        if (dialect_.what == "cuBLASLt" && !(shape.trans_a && !shape.trans_b)) {
          return UsageError("fp8 on cuBLASLt needs A transposed and B not (the TN layout)",
                            "add --trans-a (and drop --trans-b)");
        }
        break;
      }
    }
    return t;
  }

  const BlasLtDialect& dialect_;
  GpuApi runtime_;
  DynamicLibrary library_;
  BlasLtCalls calls_;
  int device_;
  std::string device_name_;
  std::string bus_id_;
  const platform::KnownDevice* known_;
  bool known_by_name_;
  std::string arch_;
  void* handle_ = nullptr;
  GpuStream stream_ = nullptr;
  DeviceBuffer workspace_;
};

}  // namespace

const platform::KnownDevice* KnownDeviceFromName(const std::string& name) {
  std::string lower = ToLower(name);
  auto has = [&](const std::string& word) { return lower.find(ToLower(word)) != std::string::npos; };
  const platform::KnownDevice* best = nullptr;
  int best_score = -1;
  for (const platform::KnownDevice& device : platform::KnownDevices()) {
    if (device.model.empty() || !has(std::string(device.model))) continue;
    std::string product(device.product);
    bool variant_named = (has("pcie") && product.find("PCIe") != std::string::npos) ||
                         (has("nvl") && product.find("NVL") != std::string::npos);
    bool variant_other = (!has("pcie") && product.find("PCIe") != std::string::npos) ||
                         (!has("nvl") && product.find("NVL") != std::string::npos);
    int score = static_cast<int>(device.model.size()) * 4 + (variant_named ? 2 : 0) + (variant_other ? 0 : 1);
    if (score > best_score) {
      best_score = score;
      best = &device;
    }
  }
  return best;
}

double PeakTflops(const platform::KnownDevice* known, GemmDtype dtype) {
  if (!known) return 0;
  switch (dtype) {
    case GemmDtype::kBf16:
    case GemmDtype::kFp16: return known->bf16_tflops;
    case GemmDtype::kFp8: return known->fp8_tflops;
    case GemmDtype::kFp32: return known->fp32_tflops;
    case GemmDtype::kTf32: return 0;
  }
  return 0;
}

Result<std::unique_ptr<GemmEngine>> OpenGpuGemmEngine(GpuVendor vendor, int device, const platform::HostInfo& host) {
  const BlasLtDialect& dialect = vendor == GpuVendor::kNvidia ? CublasLtDialect() : HipblasLtDialect();
  auto runtime = GpuApi::Open(vendor);
  if (!runtime.ok()) return runtime.error();
  auto count = runtime->DeviceCount();
  if (!count.ok()) return count.error();
  if (device < 0 || device >= *count) {
    return UnavailableError(fmt::format("GPU {} asked (LOCAL_RANK) but this process sees {} GPU(s)", device, *count),
                            "run no more workers than visible GPUs (--nproc-per-node, *_VISIBLE_DEVICES)");
  }
  auto library = DynamicLibrary::Open(dialect.libraries, dialect.what, dialect.install_hint);
  if (!library.ok()) return library.error();
  BlasLtCalls calls;
  auto load = [&](const char* suffix, auto* out) -> Status { return library->Load((dialect.prefix + suffix).c_str(), out); };
  for (Status status : {load("Create", &calls.create), load("Destroy", &calls.destroy),
                        load("MatmulDescCreate", &calls.desc_create), load("MatmulDescDestroy", &calls.desc_destroy),
                        load("MatmulDescSetAttribute", &calls.desc_set), load("MatrixLayoutCreate", &calls.layout_create),
                        load("MatrixLayoutDestroy", &calls.layout_destroy),
                        load("MatmulPreferenceCreate", &calls.preference_create),
                        load("MatmulPreferenceDestroy", &calls.preference_destroy),
                        load("MatmulPreferenceSetAttribute", &calls.preference_set),
                        load("MatmulAlgoGetHeuristic", &calls.heuristic), load("Matmul", &calls.matmul)}) {
    if (!status.ok()) return status.error();
  }
  calls.status_string = reinterpret_cast<BlasLtGetStatusString>(library->Find((dialect.prefix + "GetStatusString").c_str()));

  auto pci_bus_id = runtime->PciBusId(device);
  std::string bus_id = pci_bus_id.ok() ? NormalizePciBusId(*pci_bus_id) : "";
  std::string name = runtime->DeviceName(device);
  const platform::GpuInfo* match = nullptr;
  for (const platform::GpuInfo& gpu : host.gpus) {
    if (!bus_id.empty() && NormalizePciBusId(gpu.pci_bus_id) == bus_id) match = &gpu;
  }
  auto engine = std::make_unique<BlasLtGemmEngine>(dialect, std::move(*runtime), std::move(*library), calls, device,
                                                   name, bus_id, match, match ? nullptr : KnownDeviceFromName(name));
  if (Status status = engine->Initialize(); !status.ok()) return status.error();
  return std::unique_ptr<GemmEngine>(std::move(engine));
}

}  // namespace primus::benchmark
