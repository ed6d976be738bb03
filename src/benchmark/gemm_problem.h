// One GEMM problem and the arithmetic every GEMM report shares: the data
// types the benchmark knows, element sizes, FLOPs (2*M*N*K), the bytes a
// GEMM must move at least (A and B read once, D written once), arithmetic
// intensity, TFLOPS and bandwidth from a time, and how many buffer sets to
// rotate through so that no iteration finds its operands in the cache.
//
// Layout follows BLAS (and hipblaslt-bench): column-major; --trans-a means A
// is stored K x M and used transposed, --trans-b that B is stored N x K.
// D = op(A)[M x K] * op(B)[K x N] with alpha 1 and beta 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace primus::benchmark {

// bf16/fp16: 16-bit in and out, fp32 accumulate. fp32: IEEE single. tf32:
// fp32 data, TF32 tensor-core math. fp8: E4M3 in, bf16 out.
enum class GemmDtype { kBf16, kFp16, kFp32, kTf32, kFp8 };

std::string_view GemmDtypeName(GemmDtype dtype);
std::optional<GemmDtype> ParseGemmDtype(std::string_view text);  // bf16|fp16|fp32|tf32|fp8 (and a few aliases)
const std::vector<std::string>& GemmDtypeNames();
int InputElementBytes(GemmDtype dtype);   // A and B
int OutputElementBytes(GemmDtype dtype);  // D

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  std::string name = "";         // "" or what it is, e.g. "attn_qkv.fwd" (model-shaped sweeps)
  std::string Describe() const;  // "8192x8192x8192 NN", "attn_qkv.fwd 12288x2048x4096 TN"
};

// Column-major storage of the operands.
int64_t RowsOfA(const GemmShape& shape);  // trans_a ? K : M  (= lda)
int64_t ColsOfA(const GemmShape& shape);
int64_t RowsOfB(const GemmShape& shape);  // trans_b ? N : K  (= ldb)
int64_t ColsOfB(const GemmShape& shape);

double GemmFlops(const GemmShape& shape);  // 2*M*N*K
// A and B read once and D written once: the least any implementation moves.
int64_t GemmMinimumBytes(const GemmShape& shape, GemmDtype input, GemmDtype output);
double ArithmeticIntensity(const GemmShape& shape, GemmDtype input, GemmDtype output);  // FLOPs per byte

double Tflops(const GemmShape& shape, double seconds);
double BandwidthGBs(int64_t bytes, double seconds);  // 1e9 bytes per second

// Buffer sets (A, B, D) to cycle through: enough that one cycle touches at
// least twice `cache_bytes`, at least 2 (so consecutive iterations never
// share operands), and no more than fit in `budget_bytes`. Returns 1 only
// when two sets do not fit: the caller reports that rotation was impossible.
int RotationSets(int64_t set_bytes, int64_t cache_bytes, int64_t budget_bytes);

// The order in which iterations take the buffer sets: one after the other,
// wrapping around, so consecutive iterations never share operands (given
// two sets or more) and every set is used equally. Both GEMM engines draw
// their iterations' sets from it.
class BufferRotation {
 public:
  explicit BufferRotation(int sets) : sets_(sets > 0 ? sets : 1) {}
  int Next() {
    int set = next_;
    next_ = (next_ + 1) % sets_;
    return set;
  }
  void Restart() { next_ = 0; }

 private:
  int sets_;
  int next_ = 0;
};

// The square sizes of --sweep: powers of two from min(256, top) up to top,
// and top itself when it is not a power of two.
std::vector<int64_t> SweepSizes(int64_t top);

}  // namespace primus::benchmark
