// Narrow floating-point formats as bit patterns: IEEE half, bfloat16 and the
// two FP8 E4M3 variants (OCP "fn", used by NVIDIA and MI350; "fnuz", used by
// MI300). The benchmarks fill device buffers with these codes and check the
// results on the host, so they need exact conversions without any vendor
// header: round to nearest even, saturating where the format has no infinity.
#pragma once

#include <cstdint>

namespace primus::benchmark {

struct MinifloatFormat {
  int exponent_bits = 0;
  int mantissa_bits = 0;
  int bias = 0;
  bool has_infinity = true;  // false: overflow saturates to the largest finite value
  bool fnuz = false;         // no negative zero; the only NaN is the sign bit alone (0x80)
  bool e4m3fn = false;       // all-ones exponent and mantissa is NaN, the rest of that exponent is finite
};

inline constexpr MinifloatFormat kHalfFormat{5, 10, 15, true, false, false};
inline constexpr MinifloatFormat kBfloat16Format{8, 7, 127, true, false, false};
inline constexpr MinifloatFormat kFp8E4M3Format{4, 3, 7, false, false, true};      // OCP e4m3fn, max 448
inline constexpr MinifloatFormat kFp8E4M3FnuzFormat{4, 3, 8, false, true, false};  // AMD gfx942, max 240

// The code of `value` (round to nearest, ties to even). NaN maps to the
// format's NaN.
uint32_t EncodeMinifloat(double value, const MinifloatFormat& format);
double DecodeMinifloat(uint32_t code, const MinifloatFormat& format);

inline uint16_t FloatToHalf(float value) { return static_cast<uint16_t>(EncodeMinifloat(value, kHalfFormat)); }
inline float HalfToFloat(uint16_t code) { return static_cast<float>(DecodeMinifloat(code, kHalfFormat)); }
inline uint16_t FloatToBfloat16(float value) { return static_cast<uint16_t>(EncodeMinifloat(value, kBfloat16Format)); }
inline float Bfloat16ToFloat(uint16_t code) { return static_cast<float>(DecodeMinifloat(code, kBfloat16Format)); }

}  // namespace primus::benchmark
