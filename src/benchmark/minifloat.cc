#include "benchmark/minifloat.h"

#include <cmath>
#include <limits>

namespace primus::benchmark {
namespace {

uint32_t NanCode(const MinifloatFormat& f) {
  int width = 1 + f.exponent_bits + f.mantissa_bits;
  if (f.fnuz) return 1u << (width - 1);
  uint32_t all_exponent = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
  return all_exponent | ((1u << f.mantissa_bits) - 1);  // quiet NaN with every mantissa bit (e4m3fn: the only NaN)
}

// The largest finite code without its sign.
uint32_t MaxFiniteCode(const MinifloatFormat& f) {
  uint32_t mantissa_all = (1u << f.mantissa_bits) - 1;
  uint32_t exponent_all = (1u << f.exponent_bits) - 1;
  if (f.has_infinity) return ((exponent_all - 1) << f.mantissa_bits) | mantissa_all;
  if (f.e4m3fn) return (exponent_all << f.mantissa_bits) | (mantissa_all - 1);
  return (exponent_all << f.mantissa_bits) | mantissa_all;  // fnuz: every code but 0x80 is a number
}

}  // namespace

uint32_t EncodeMinifloat(double value, const MinifloatFormat& f) {
  if (std::isnan(value)) return NanCode(f);
  uint32_t sign = std::signbit(value) ? 1u << (f.exponent_bits + f.mantissa_bits) : 0;
  double magnitude = std::fabs(value);
  uint32_t max_finite = MaxFiniteCode(f);
  uint32_t infinity = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
  if (std::isinf(magnitude)) return sign | (f.has_infinity ? infinity : max_finite);

  // Codes of one sign are ordered like their magnitudes, and within one
  // binade they are evenly spaced: find the binade, then round the offset.
  int min_normal_exponent = 1 - f.bias;
  int exponent = magnitude > 0 ? std::ilogb(magnitude) : min_normal_exponent;
  if (exponent < min_normal_exponent) exponent = min_normal_exponent;  // subnormal spacing
  double spacing = std::ldexp(1.0, exponent - f.mantissa_bits);
  double steps = std::nearbyint(magnitude / spacing);  // the FPU's default mode: ties to even
  uint64_t code;
  if (magnitude < std::ldexp(1.0, min_normal_exponent)) {
    code = static_cast<uint64_t>(steps);  // subnormal: exponent field 0; a carry makes the smallest normal
  } else {
    uint64_t mantissa = static_cast<uint64_t>(steps) - (1ull << f.mantissa_bits);  // steps in [2^m, 2^(m+1)]
    code = (static_cast<uint64_t>(exponent + f.bias) << f.mantissa_bits) + mantissa;  // a carry moves up a binade
  }
  // Past the largest finite value after rounding: infinity where the format
  // has one (IEEE: ties at the top go to the even infinity), else saturate.
  if (code > max_finite) code = f.has_infinity ? infinity : max_finite;
  if (code == 0 && f.fnuz) sign = 0;  // fnuz has no negative zero (its code is the NaN)
  return sign | static_cast<uint32_t>(code);
}

double DecodeMinifloat(uint32_t code, const MinifloatFormat& f) {
  int width = 1 + f.exponent_bits + f.mantissa_bits;
  bool negative = (code >> (width - 1)) & 1u;
  uint32_t exponent_field = (code >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  uint32_t mantissa = code & ((1u << f.mantissa_bits) - 1);
  uint32_t exponent_all = (1u << f.exponent_bits) - 1;
  if (f.fnuz && code == (1u << (width - 1))) return std::numeric_limits<double>::quiet_NaN();
  if (f.has_infinity && exponent_field == exponent_all) {
    if (mantissa != 0) return std::numeric_limits<double>::quiet_NaN();
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (f.e4m3fn && exponent_field == exponent_all && mantissa == (1u << f.mantissa_bits) - 1) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  double magnitude = exponent_field == 0
                         ? std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits)
                         : std::ldexp(static_cast<double>(mantissa + (1u << f.mantissa_bits)),
                                      static_cast<int>(exponent_field) - f.bias - f.mantissa_bits);
  return negative ? -magnitude : magnitude;
}

}  // namespace primus::benchmark
