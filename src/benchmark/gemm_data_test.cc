#include "benchmark/gemm_data.h"

#include <gtest/gtest.h>

#include <cstring>

#include "benchmark/minifloat.h"

namespace primus::benchmark {
namespace {

// D = op(A) op(B) by the definition, in float, column-major.
std::vector<float> NaiveProduct(const GemmOperands& o) {
  const GemmShape& s = o.shape;
  std::vector<float> a = OperandAsFloats(o.a, o.grid), b = OperandAsFloats(o.b, o.grid);
  std::vector<float> d(static_cast<size_t>(s.m * s.n), 0);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < s.k; ++k) {
        float x = s.trans_a ? a[static_cast<size_t>(k + i * s.k)] : a[static_cast<size_t>(i + k * s.m)];
        float y = s.trans_b ? b[static_cast<size_t>(j + k * s.n)] : b[static_cast<size_t>(k + j * s.k)];
        sum += static_cast<double>(x) * y;
      }
      d[static_cast<size_t>(i + j * s.m)] = static_cast<float>(sum);
    }
  }
  return d;
}

TEST(GemmDataTest, ExactProductPassesInEveryLayout) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      GemmOperands operands = MakeOperands({13, 7, 19, ta, tb}, GemmDtype::kFp32, 3);
      std::vector<float> d = NaiveProduct(operands);
      GemmCheck check = CheckProduct(operands, d.data(), GemmDtype::kFp32);
      EXPECT_TRUE(check.passed) << check.first_wrong;
      EXPECT_EQ(check.mode, "full");
      EXPECT_EQ(check.checked, 13 * 7);
    }
  }
}

TEST(GemmDataTest, OneWrongEntryIsFoundAndNamed) {
  GemmOperands operands = MakeOperands({16, 16, 16, false, false}, GemmDtype::kFp32, 5);
  std::vector<float> d = NaiveProduct(operands);
  d[3 + 5 * 16] += 0.5f;
  GemmCheck check = CheckProduct(operands, d.data(), GemmDtype::kFp32);
  EXPECT_FALSE(check.passed);
  EXPECT_EQ(check.wrong, 1);
  EXPECT_NE(check.first_wrong.find("D[3,5]"), std::string::npos) << check.first_wrong;
}

TEST(GemmDataTest, TransposedResultIsWrong) {
  GemmOperands operands = MakeOperands({8, 8, 8, false, false}, GemmDtype::kFp32, 9);
  GemmOperands swapped = operands;
  swapped.shape.trans_a = true;  // the same bytes read the other way
  std::vector<float> d = NaiveProduct(swapped);
  EXPECT_FALSE(CheckProduct(operands, d.data(), GemmDtype::kFp32).passed);
}

TEST(GemmDataTest, LargeProblemsAreSampledAtTheCorners) {
  GemmOperands operands = MakeOperands({600, 600, 600, false, false}, GemmDtype::kBf16, 1);
  std::vector<uint16_t> d(600 * 600, 0);  // all zero: wrong almost everywhere
  GemmCheck check = CheckProduct(operands, d.data(), GemmDtype::kBf16);
  EXPECT_EQ(check.mode, "sampled");
  EXPECT_EQ(check.checked, kSampledEntries);
  EXPECT_FALSE(check.passed);
  EXPECT_NE(check.first_wrong.find("D[0,0]"), std::string::npos) << check.first_wrong;
}

TEST(GemmDataTest, EncodedOperandsDecodeToTheGrid) {
  std::vector<int8_t> multipliers = {-64, -1, 0, 1, 63, 64};
  ValueGrid grid = GridFor(GemmDtype::kBf16);
  std::vector<uint8_t> bytes = EncodeOperand(multipliers, grid, GemmDtype::kBf16);
  ASSERT_EQ(bytes.size(), multipliers.size() * 2);
  for (size_t i = 0; i < multipliers.size(); ++i) {
    uint16_t code;
    std::memcpy(&code, bytes.data() + 2 * i, 2);
    EXPECT_EQ(Bfloat16ToFloat(code), multipliers[i] * grid.step);
  }
  ValueGrid fp8 = GridFor(GemmDtype::kFp8);
  for (Fp8Encoding encoding : {Fp8Encoding::kOcp, Fp8Encoding::kFnuz}) {
    std::vector<int8_t> small = {-16, -3, 0, 5, 16};
    std::vector<uint8_t> codes = EncodeOperand(small, fp8, GemmDtype::kFp8, encoding);
    const MinifloatFormat& format = encoding == Fp8Encoding::kOcp ? kFp8E4M3Format : kFp8E4M3FnuzFormat;
    for (size_t i = 0; i < small.size(); ++i) EXPECT_EQ(DecodeMinifloat(codes[i], format), small[i] * fp8.step);
  }
}

TEST(GemmDataTest, OperandsAreDeterministicPerSeed) {
  EXPECT_EQ(MakeOperands({5, 5, 5}, GemmDtype::kFp16, 1).a, MakeOperands({5, 5, 5}, GemmDtype::kFp16, 1).a);
  EXPECT_NE(MakeOperands({5, 5, 5}, GemmDtype::kFp16, 1).a, MakeOperands({5, 5, 5}, GemmDtype::kFp16, 2).a);
}

}  // namespace
}  // namespace primus::benchmark
