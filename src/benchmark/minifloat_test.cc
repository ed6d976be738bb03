#include "benchmark/minifloat.h"

#include <gtest/gtest.h>

#include <cmath>

namespace primus::benchmark {
namespace {

TEST(MinifloatTest, KnownCodes) {
  EXPECT_EQ(FloatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBfloat16(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // the smallest subnormal
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);                    // overflow: infinity
  EXPECT_EQ(EncodeMinifloat(1.0, kFp8E4M3Format), 0x38u);
  EXPECT_EQ(EncodeMinifloat(448.0, kFp8E4M3Format), 0x7eu);
  EXPECT_EQ(EncodeMinifloat(1000.0, kFp8E4M3Format), 0x7eu);  // saturates: no infinity
  EXPECT_EQ(EncodeMinifloat(-0.5, kFp8E4M3Format), 0xb0u);
  EXPECT_EQ(EncodeMinifloat(1.0, kFp8E4M3FnuzFormat), 0x40u);
  EXPECT_EQ(EncodeMinifloat(240.0, kFp8E4M3FnuzFormat), 0x7fu);
  EXPECT_EQ(EncodeMinifloat(-0.0, kFp8E4M3FnuzFormat), 0x00u);  // no negative zero
  EXPECT_TRUE(std::isnan(DecodeMinifloat(0x80, kFp8E4M3FnuzFormat)));
  EXPECT_TRUE(std::isnan(DecodeMinifloat(0x7f, kFp8E4M3Format)));
}

TEST(MinifloatTest, TiesRoundToEven) {
  // 1 + 2^-8 lies halfway between bf16 1.0 (0x3f80) and 1+2^-7 (0x3f81): even wins.
  EXPECT_EQ(FloatToBfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3*2^-8 lies between 0x3f81 and 0x3f82: even (0x3f82) wins.
  EXPECT_EQ(FloatToBfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
}

// Every finite code decodes to a value that encodes back to the same code.
void ExpectRoundTrip(const MinifloatFormat& format, int width) {
  for (uint32_t code = 0; code < (1u << width); ++code) {
    double value = DecodeMinifloat(code, format);
    if (std::isnan(value)) continue;
    if (code == (1u << (width - 1)) && !format.fnuz) {
      EXPECT_EQ(EncodeMinifloat(value, format), code) << "negative zero";
      continue;
    }
    ASSERT_EQ(EncodeMinifloat(value, format), code) << "code " << code << " value " << value;
  }
}

TEST(MinifloatTest, EveryCodeRoundTrips) {
  ExpectRoundTrip(kHalfFormat, 16);
  ExpectRoundTrip(kBfloat16Format, 16);
  ExpectRoundTrip(kFp8E4M3Format, 8);
  ExpectRoundTrip(kFp8E4M3FnuzFormat, 8);
}

}  // namespace
}  // namespace primus::benchmark
