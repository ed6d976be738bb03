// The operands of a GEMM benchmark and the check of its result. Every input
// element is k * step with a small integer k, a grid that every format
// represents exactly (bf16, fp16, fp32, tf32: step 1/64, |k| <= 64; fp8 E4M3:
// step 1/16, |k| <= 16), so the exact product is known from integer sums and
// the only error left is the library's accumulation and output rounding.
// Operands are kept as those integers (one byte each) in storage order; the
// device gets their codes in the input format.
//
// The check compares entries of D with the exact product, relative to
// sum_k |a_ik * b_kj| (the scale of the rounding errors): every entry on
// small problems (M*N*K <= kFullCheckLimit), a fixed sample of entries on
// large ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/gemm_problem.h"

namespace primus::benchmark {

inline constexpr int64_t kFullCheckLimit = int64_t{1} << 27;  // 512^3
inline constexpr int kSampledEntries = 64;

struct ValueGrid {
  double step = 1.0 / 64;
  int kmax = 64;
};
ValueGrid GridFor(GemmDtype dtype);

// FP8 E4M3 comes in two encodings: OCP e4m3fn (NVIDIA, MI350) and e4m3fnuz (MI300).
enum class Fp8Encoding { kOcp, kFnuz };

struct GemmOperands {
  GemmShape shape;
  ValueGrid grid;
  std::vector<int8_t> a;  // RowsOfA x ColsOfA, column-major
  std::vector<int8_t> b;  // RowsOfB x ColsOfB, column-major
};

// Deterministic for a seed.
GemmOperands MakeOperands(const GemmShape& shape, GemmDtype dtype, uint64_t seed);

// The operand as the device stores it: each element's code in `dtype`'s
// input format (bf16/fp16 2 bytes, fp32/tf32 4, fp8 1).
std::vector<uint8_t> EncodeOperand(const std::vector<int8_t>& multipliers, const ValueGrid& grid, GemmDtype dtype,
                                   Fp8Encoding fp8 = Fp8Encoding::kOcp);
// As floats (the CPU path).
std::vector<float> OperandAsFloats(const std::vector<int8_t>& multipliers, const ValueGrid& grid);

// One element of D (column-major M x N) in `output_dtype`'s output format
// (fp32/tf32: float; bf16, fp16 and fp8: a 16-bit code).
double OutputElement(const void* d, int64_t index, GemmDtype output_dtype);

struct GemmCheck {
  bool performed = false;
  bool passed = false;
  std::string mode;        // "full" | "sampled"
  int64_t checked = 0;     // entries compared
  int64_t wrong = 0;
  double max_error = 0;    // the largest |d - exact| / sum|a*b|
  double tolerance = 0;
  std::string first_wrong;  // "D[3,7] = 1.5, expected 2.25"
};

// The relative tolerance for results computed in `dtype` (its output rounding
// plus fp32 accumulation over long K).
double CheckTolerance(GemmDtype dtype);

// Compares D (column-major, M x N, in `output_dtype`) with the exact product.
GemmCheck CheckProduct(const GemmOperands& operands, const void* d, GemmDtype output_dtype, uint64_t sample_seed = 7);

}  // namespace primus::benchmark
