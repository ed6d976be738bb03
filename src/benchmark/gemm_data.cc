#include "benchmark/gemm_data.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "benchmark/minifloat.h"

namespace primus::benchmark {
namespace {

// xorshift64*: fast, deterministic, good enough for test data.
struct Random {
  uint64_t state;
  explicit Random(uint64_t seed) : state(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
  }
};

std::vector<int8_t> RandomMultipliers(int64_t count, int kmax, Random& random) {
  std::vector<int8_t> values(static_cast<size_t>(count));
  uint64_t span = static_cast<uint64_t>(2 * kmax + 1);
  for (int8_t& value : values) value = static_cast<int8_t>(static_cast<int64_t>((random.Next() >> 32) % span) - kmax);
  return values;
}

int MultiplierOfA(const GemmOperands& o, int64_t i, int64_t k) {
  return o.shape.trans_a ? o.a[static_cast<size_t>(k + i * o.shape.k)] : o.a[static_cast<size_t>(i + k * o.shape.m)];
}
int MultiplierOfB(const GemmOperands& o, int64_t k, int64_t j) {
  return o.shape.trans_b ? o.b[static_cast<size_t>(j + k * o.shape.n)] : o.b[static_cast<size_t>(k + j * o.shape.k)];
}

}  // namespace

ValueGrid GridFor(GemmDtype dtype) {
  if (dtype == GemmDtype::kFp8) return {1.0 / 16, 16};
  return {1.0 / 64, 64};
}

GemmOperands MakeOperands(const GemmShape& shape, GemmDtype dtype, uint64_t seed) {
  GemmOperands operands;
  operands.shape = shape;
  operands.grid = GridFor(dtype);
  Random random(seed);
  operands.a = RandomMultipliers(RowsOfA(shape) * ColsOfA(shape), operands.grid.kmax, random);
  operands.b = RandomMultipliers(RowsOfB(shape) * ColsOfB(shape), operands.grid.kmax, random);
  return operands;
}

std::vector<uint8_t> EncodeOperand(const std::vector<int8_t>& multipliers, const ValueGrid& grid, GemmDtype dtype,
                                   Fp8Encoding fp8) {
  int width = InputElementBytes(dtype);
  // One code per possible multiplier, then a table lookup per element.
  std::vector<uint32_t> codes(static_cast<size_t>(2 * grid.kmax + 1));
  for (int k = -grid.kmax; k <= grid.kmax; ++k) {
    double value = k * grid.step;
    uint32_t code = 0;
    switch (dtype) {
      case GemmDtype::kBf16: code = EncodeMinifloat(value, kBfloat16Format); break;
      case GemmDtype::kFp16: code = EncodeMinifloat(value, kHalfFormat); break;
      case GemmDtype::kFp8:
        code = EncodeMinifloat(value, fp8 == Fp8Encoding::kFnuz ? kFp8E4M3FnuzFormat : kFp8E4M3Format);
        break;
      case GemmDtype::kFp32:
      case GemmDtype::kTf32: {
        float f = static_cast<float>(value);
        std::memcpy(&code, &f, sizeof(code));
        break;
      }
    }
    codes[static_cast<size_t>(k + grid.kmax)] = code;
  }
  std::vector<uint8_t> bytes(multipliers.size() * static_cast<size_t>(width));
  uint8_t* out = bytes.data();
  for (int8_t multiplier : multipliers) {
    uint32_t code = codes[static_cast<size_t>(multiplier + grid.kmax)];
    std::memcpy(out, &code, static_cast<size_t>(width));  // little-endian: the low bytes
    out += width;
  }
  return bytes;
}

std::vector<float> OperandAsFloats(const std::vector<int8_t>& multipliers, const ValueGrid& grid) {
  std::vector<float> values(multipliers.size());
  for (size_t i = 0; i < multipliers.size(); ++i) values[i] = static_cast<float>(multipliers[i] * grid.step);
  return values;
}

double OutputElement(const void* d, int64_t index, GemmDtype output_dtype) {
  const uint8_t* bytes = static_cast<const uint8_t*>(d);
  if (OutputElementBytes(output_dtype) == 4) {
    float value;
    std::memcpy(&value, bytes + index * 4, sizeof(value));
    return value;
  }
  uint16_t code;
  std::memcpy(&code, bytes + index * 2, sizeof(code));
  return DecodeMinifloat(code, output_dtype == GemmDtype::kFp16 ? kHalfFormat : kBfloat16Format);
}

double CheckTolerance(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kFp32: return 1e-4;
    case GemmDtype::kTf32: return 1e-3;
    case GemmDtype::kFp16: return 5e-3;
    case GemmDtype::kBf16:
    case GemmDtype::kFp8: return 1e-2;
  }
  return 1e-2;
}

GemmCheck CheckProduct(const GemmOperands& o, const void* d, GemmDtype output_dtype, uint64_t sample_seed) {
  GemmCheck check;
  check.performed = true;
  check.tolerance = CheckTolerance(output_dtype);
  const GemmShape& s = o.shape;
  double scale = o.grid.step * o.grid.step;
  auto compare = [&](int64_t i, int64_t j, int64_t exact, int64_t magnitude) {
    double expected = static_cast<double>(exact) * scale;
    double got = OutputElement(d, i + j * s.m, output_dtype);
    double reference = std::max(static_cast<double>(magnitude) * scale, scale);
    double error = std::isfinite(got) ? std::fabs(got - expected) / reference : INFINITY;
    ++check.checked;
    if (error > check.max_error || std::isnan(error)) check.max_error = error;
    if (!(error <= check.tolerance)) {
      if (check.wrong == 0) check.first_wrong = fmt::format("D[{},{}] = {}, expected {}", i, j, got, expected);
      ++check.wrong;
    }
  };
  if (static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) <= static_cast<double>(kFullCheckLimit)) {
    check.mode = "full";
    std::vector<int64_t> exact(static_cast<size_t>(s.m)), magnitude(static_cast<size_t>(s.m));
    for (int64_t j = 0; j < s.n; ++j) {
      std::fill(exact.begin(), exact.end(), 0);
      std::fill(magnitude.begin(), magnitude.end(), 0);
      for (int64_t k = 0; k < s.k; ++k) {
        int b = MultiplierOfB(o, k, j);
        if (b == 0) continue;
        for (int64_t i = 0; i < s.m; ++i) {
          int product = MultiplierOfA(o, i, k) * b;
          exact[static_cast<size_t>(i)] += product;
          magnitude[static_cast<size_t>(i)] += product < 0 ? -product : product;
        }
      }
      for (int64_t i = 0; i < s.m; ++i) compare(i, j, exact[static_cast<size_t>(i)], magnitude[static_cast<size_t>(i)]);
    }
  } else {
    check.mode = "sampled";
    Random random(sample_seed);
    for (int sample = 0; sample < kSampledEntries; ++sample) {
      // The corners first (where layout mistakes show), then random entries.
      int64_t i = sample == 0 || sample == 2 ? 0 : sample == 1 || sample == 3 ? s.m - 1
                                                                              : static_cast<int64_t>(random.Next() % static_cast<uint64_t>(s.m));
      int64_t j = sample == 0 || sample == 1 ? 0 : sample == 2 || sample == 3 ? s.n - 1
                                                                              : static_cast<int64_t>(random.Next() % static_cast<uint64_t>(s.n));
      int64_t exact = 0, magnitude = 0;
      for (int64_t k = 0; k < s.k; ++k) {
        int product = MultiplierOfA(o, i, k) * MultiplierOfB(o, k, j);
        exact += product;
        magnitude += product < 0 ? -product : product;
      }
      compare(i, j, exact, magnitude);
    }
  }
  check.passed = check.wrong == 0;
  return check;
}

}  // namespace primus::benchmark
