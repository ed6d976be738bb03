#include "benchmark/comm_data.h"

#include <cmath>
#include <cstring>

#include "benchmark/minifloat.h"
#include "util/strings.h"

namespace primus::benchmark {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

bool IsUnsigned(DataType type) {
  return type == DataType::kUint8 || type == DataType::kUint32 || type == DataType::kUint64;
}

bool IsFloating(DataType type) {
  return type == DataType::kHalf || type == DataType::kFloat || type == DataType::kDouble || type == DataType::kBfloat16;
}

// Reduction terms: A(i) and B(r).
int64_t IndexTerm(size_t index, uint64_t seed, bool is_unsigned) {
  int64_t value = static_cast<int64_t>(Mix(index * 2 + 1 + (seed << 40)) % 3);
  return is_unsigned ? value : value - 1;
}
int64_t RankTerm(int rank, uint64_t seed, bool is_unsigned) {
  int64_t value = static_cast<int64_t>(Mix(static_cast<uint64_t>(rank) * 2 + (seed << 40)) % (is_unsigned ? 2 : 3));
  return is_unsigned ? value : value - 1;
}

// Stores integer `value` as one element of `type` (integers wrap like the
// collective libraries' own arithmetic).
void Store(DataType type, void* data, size_t index, double value) {
  uint8_t* out = static_cast<uint8_t*>(data) + index * static_cast<size_t>(ElementSize(type));
  auto put = [&](auto typed) { std::memcpy(out, &typed, sizeof(typed)); };
  int64_t integer = static_cast<int64_t>(value);
  switch (type) {
    case DataType::kInt8: put(static_cast<int8_t>(static_cast<uint8_t>(integer))); break;
    case DataType::kUint8: put(static_cast<uint8_t>(integer)); break;
    case DataType::kInt32: put(static_cast<int32_t>(static_cast<uint32_t>(integer))); break;
    case DataType::kUint32: put(static_cast<uint32_t>(integer)); break;
    case DataType::kInt64: put(integer); break;
    case DataType::kUint64: put(static_cast<uint64_t>(integer)); break;
    case DataType::kHalf: put(FloatToHalf(static_cast<float>(value))); break;
    case DataType::kFloat: put(static_cast<float>(value)); break;
    case DataType::kDouble: put(value); break;
    case DataType::kBfloat16: put(FloatToBfloat16(static_cast<float>(value))); break;
  }
}

double Load(DataType type, const void* data, size_t index) {
  const uint8_t* in = static_cast<const uint8_t*>(data) + index * static_cast<size_t>(ElementSize(type));
  auto get = [&](auto typed) {
    std::memcpy(&typed, in, sizeof(typed));
    return typed;
  };
  switch (type) {
    case DataType::kHalf: return HalfToFloat(get(uint16_t{}));
    case DataType::kFloat: return get(float{});
    case DataType::kDouble: return get(double{});
    case DataType::kBfloat16: return Bfloat16ToFloat(get(uint16_t{}));
    default: return 0;  // integers are compared as bytes
  }
}

}  // namespace

std::string_view DataTypeName(DataType type) {
  switch (type) {
    case DataType::kInt8: return "int8";
    case DataType::kUint8: return "uint8";
    case DataType::kInt32: return "int32";
    case DataType::kUint32: return "uint32";
    case DataType::kInt64: return "int64";
    case DataType::kUint64: return "uint64";
    case DataType::kHalf: return "half";
    case DataType::kFloat: return "float";
    case DataType::kDouble: return "double";
    case DataType::kBfloat16: return "bfloat16";
  }
  return "?";
}

const std::vector<std::string>& DataTypeNames() {
  static const std::vector<std::string> names = {"int8",  "uint8", "int32",  "uint32", "int64",
                                                 "uint64", "half", "float", "double", "bfloat16"};
  return names;
}

std::optional<DataType> ParseDataType(std::string_view text) {
  std::string name = ToLower(text);
  for (size_t i = 0; i < DataTypeNames().size(); ++i) {
    if (name == DataTypeNames()[i]) return static_cast<DataType>(i);
  }
  if (name == "char") return DataType::kInt8;
  if (name == "int") return DataType::kInt32;
  if (name == "fp16" || name == "float16" || name == "f16") return DataType::kHalf;
  if (name == "fp32" || name == "float32" || name == "f32") return DataType::kFloat;
  if (name == "fp64" || name == "float64" || name == "f64") return DataType::kDouble;
  if (name == "bf16") return DataType::kBfloat16;
  return std::nullopt;
}

int ElementSize(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUint8: return 1;
    case DataType::kHalf:
    case DataType::kBfloat16: return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat: return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kDouble: return 8;
  }
  return 1;
}

int NcclDataType(DataType type) { return static_cast<int>(type); }

int64_t InputValue(Collective op, int rank, size_t index, uint64_t seed, bool is_unsigned) {
  if (Reduces(op)) {
    return IndexTerm(index, seed, is_unsigned) + RankTerm(rank, seed, is_unsigned);
  }
  int64_t value = static_cast<int64_t>(Mix(Mix(static_cast<uint64_t>(rank) + (seed << 32)) ^ index) % 5);
  return is_unsigned ? value : value - 2;
}

void FillInput(const VerifiableSpec& spec, void* data, size_t first, size_t count) {
  bool is_unsigned = IsUnsigned(spec.type);
  for (size_t t = 0; t < count; ++t) {
    Store(spec.type, data, t, static_cast<double>(InputValue(spec.op, spec.rank, first + t, spec.seed, is_unsigned)));
  }
}

std::vector<uint8_t> MakeInput(const VerifiableSpec& spec) {
  std::vector<uint8_t> input(spec.counts.send_count * static_cast<size_t>(ElementSize(spec.type)));
  FillInput(spec, input.data(), 0, spec.counts.send_count);
  return input;
}

std::vector<uint8_t> MakeExpected(const VerifiableSpec& spec) {
  const CollectiveCounts& c = spec.counts;
  std::vector<uint8_t> expected(c.recv_count * static_cast<size_t>(ElementSize(spec.type)));
  bool is_unsigned = IsUnsigned(spec.type);
  int n = spec.nranks;
  int64_t rank_terms = 0;
  for (int r = 0; r < n; ++r) rank_terms += RankTerm(r, spec.seed, is_unsigned);
  auto sum_at = [&](size_t index) { return n * IndexTerm(index, spec.seed, is_unsigned) + rank_terms; };
  auto value_of = [&](int rank, size_t index) { return InputValue(spec.op, rank, index, spec.seed, is_unsigned); };
  for (size_t t = 0; t < c.recv_count; ++t) {
    int64_t value = 0;
    switch (spec.op) {
      case Collective::kAllReduce: value = sum_at(t); break;
      case Collective::kReduceScatter: value = sum_at(static_cast<size_t>(spec.rank) * c.param_count + t); break;
      case Collective::kAllGather: value = value_of(static_cast<int>(t / c.param_count), t % c.param_count); break;
      case Collective::kAlltoAll:
        value = value_of(static_cast<int>(t / c.param_count), static_cast<size_t>(spec.rank) * c.param_count + t % c.param_count);
        break;
      case Collective::kBroadcast: value = value_of(spec.root, t); break;
      case Collective::kSendRecv: value = value_of((spec.rank - 1 + n) % n, t); break;
    }
    Store(spec.type, expected.data(), t, static_cast<double>(value));
  }
  return expected;
}

int64_t CountWrong(const VerifiableSpec& spec, const void* got, const void* expected) {
  size_t width = static_cast<size_t>(ElementSize(spec.type));
  const uint8_t* a = static_cast<const uint8_t*>(got);
  const uint8_t* b = static_cast<const uint8_t*>(expected);
  // Sums of 16-bit floats over many ranks may round; everything else is exact.
  double allowance = 0;
  if (Reduces(spec.op) && (spec.type == DataType::kHalf || spec.type == DataType::kBfloat16)) {
    int limit = spec.type == DataType::kHalf ? 1024 : 128;  // 2n below 2^(mantissa bits + 1): exact
    if (spec.nranks > limit) allowance = 2.0 * spec.nranks * std::ldexp(1.0, spec.type == DataType::kHalf ? -10 : -7);
  }
  int64_t wrong = 0;
  for (size_t t = 0; t < spec.counts.recv_count; ++t) {
    if (std::memcmp(a + t * width, b + t * width, width) == 0) continue;
    if (allowance > 0 && IsFloating(spec.type)) {
      double x = Load(spec.type, got, t), y = Load(spec.type, expected, t);
      if (std::fabs(x - y) <= allowance) continue;
    }
    ++wrong;
  }
  return wrong;
}

void CorruptElement(DataType type, void* data, size_t index) {
  double value = IsFloating(type) ? Load(type, data, index) : 0;
  if (!IsFloating(type)) {
    int64_t integer = 0;
    std::memcpy(&integer, static_cast<uint8_t*>(data) + index * static_cast<size_t>(ElementSize(type)),
                static_cast<size_t>(ElementSize(type)));
    value = static_cast<double>(integer);
  }
  Store(type, data, index, value + 100);
}

}  // namespace primus::benchmark
