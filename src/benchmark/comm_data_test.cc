// The expected values of -c against an independent simulation of every
// collective on host arrays, for every type and several rank counts.
#include "benchmark/comm_data.h"

#include <gtest/gtest.h>

#include <cstring>

#include "benchmark/minifloat.h"

namespace primus::benchmark {
namespace {

double Get(DataType type, const std::vector<uint8_t>& data, size_t i) {
  const uint8_t* p = data.data() + i * static_cast<size_t>(ElementSize(type));
  auto read = [&](auto value) {
    std::memcpy(&value, p, sizeof(value));
    return value;
  };
  switch (type) {
    case DataType::kInt8: return read(int8_t{});
    case DataType::kUint8: return read(uint8_t{});
    case DataType::kInt32: return read(int32_t{});
    case DataType::kUint32: return read(uint32_t{});
    case DataType::kInt64: return static_cast<double>(read(int64_t{}));
    case DataType::kUint64: return static_cast<double>(read(uint64_t{}));
    case DataType::kHalf: return HalfToFloat(read(uint16_t{}));
    case DataType::kFloat: return read(float{});
    case DataType::kDouble: return read(double{});
    case DataType::kBfloat16: return Bfloat16ToFloat(read(uint16_t{}));
  }
  return 0;
}

void Put(DataType type, std::vector<uint8_t>& data, size_t i, double value) {
  uint8_t* p = data.data() + i * static_cast<size_t>(ElementSize(type));
  auto write = [&](auto typed) { std::memcpy(p, &typed, sizeof(typed)); };
  auto integer = static_cast<int64_t>(value);
  switch (type) {
    case DataType::kInt8: write(static_cast<int8_t>(integer)); break;
    case DataType::kUint8: write(static_cast<uint8_t>(integer)); break;
    case DataType::kInt32: write(static_cast<int32_t>(integer)); break;
    case DataType::kUint32: write(static_cast<uint32_t>(integer)); break;
    case DataType::kInt64: write(integer); break;
    case DataType::kUint64: write(static_cast<uint64_t>(integer)); break;
    case DataType::kHalf: write(FloatToHalf(static_cast<float>(value))); break;
    case DataType::kFloat: write(static_cast<float>(value)); break;
    case DataType::kDouble: write(value); break;
    case DataType::kBfloat16: write(FloatToBfloat16(static_cast<float>(value))); break;
  }
}

// What rank `rank` receives, computed from every rank's input.
std::vector<uint8_t> Simulate(Collective op, DataType type, int rank, int n, int root,
                              const std::vector<std::vector<uint8_t>>& inputs, const CollectiveCounts& c) {
  std::vector<uint8_t> out(c.recv_count * static_cast<size_t>(ElementSize(type)));
  size_t width = static_cast<size_t>(ElementSize(type));
  for (size_t t = 0; t < c.recv_count; ++t) {
    switch (op) {
      case Collective::kAllReduce:
      case Collective::kReduceScatter: {
        size_t index = op == Collective::kAllReduce ? t : static_cast<size_t>(rank) * c.param_count + t;
        double sum = 0;
        for (int r = 0; r < n; ++r) sum += Get(type, inputs[static_cast<size_t>(r)], index);
        Put(type, out, t, sum);
        break;
      }
      case Collective::kAllGather:
        std::memcpy(&out[t * width], &inputs[t / c.param_count][(t % c.param_count) * width], width);
        break;
      case Collective::kAlltoAll:
        std::memcpy(&out[t * width], &inputs[t / c.param_count][(static_cast<size_t>(rank) * c.param_count + t % c.param_count) * width], width);
        break;
      case Collective::kBroadcast:
        std::memcpy(&out[t * width], &inputs[static_cast<size_t>(root)][t * width], width);
        break;
      case Collective::kSendRecv:
        std::memcpy(&out[t * width], &inputs[static_cast<size_t>((rank - 1 + n) % n)][t * width], width);
        break;
    }
  }
  return out;
}

TEST(CommDataTest, ExpectedValuesMatchASimulationOfEveryCollective) {
  for (Collective op : AllCollectives()) {
    for (size_t type_index = 0; type_index < DataTypeNames().size(); ++type_index) {
      DataType type = static_cast<DataType>(type_index);
      for (int n : {1, 2, 3, 5}) {
        CollectiveCounts counts = CountsFor(op, static_cast<size_t>(37 * n), n);
        int root = n - 1;
        std::vector<std::vector<uint8_t>> inputs;
        for (int r = 0; r < n; ++r) inputs.push_back(MakeInput({op, type, r, n, root, 42, counts}));
        for (int rank = 0; rank < n; ++rank) {
          VerifiableSpec spec{op, type, rank, n, root, 42, counts};
          std::vector<uint8_t> got = Simulate(op, type, rank, n, root, inputs, counts);
          std::vector<uint8_t> expected = MakeExpected(spec);
          ASSERT_EQ(CountWrong(spec, got.data(), expected.data()), 0)
              << CollectiveName(op) << " " << DataTypeName(type) << " n=" << n << " rank " << rank;
          CorruptElement(type, got.data(), 3);
          EXPECT_EQ(CountWrong(spec, got.data(), expected.data()), 1) << CollectiveName(op) << " " << DataTypeName(type);
        }
      }
    }
  }
}

TEST(CommDataTest, DataDependOnRankAndSeedSoMisplacedBlocksShow) {
  CollectiveCounts counts = CountsFor(Collective::kAllGather, 64, 2);
  std::vector<uint8_t> rank0 = MakeInput({Collective::kAllGather, DataType::kFloat, 0, 2, 0, 1, counts});
  std::vector<uint8_t> rank1 = MakeInput({Collective::kAllGather, DataType::kFloat, 1, 2, 0, 1, counts});
  std::vector<uint8_t> other_seed = MakeInput({Collective::kAllGather, DataType::kFloat, 0, 2, 0, 2, counts});
  EXPECT_NE(rank0, rank1);
  EXPECT_NE(rank0, other_seed);
  // A reduction whose result is all zeros would not pass.
  VerifiableSpec spec{Collective::kAllReduce, DataType::kFloat, 0, 3, 0, 7, CountsFor(Collective::kAllReduce, 64, 3)};
  std::vector<uint8_t> zeros(64 * 4, 0);
  EXPECT_GT(CountWrong(spec, zeros.data(), MakeExpected(spec).data()), 20);
}

TEST(CommDataTest, TypeNames) {
  EXPECT_EQ(ParseDataType("bf16"), DataType::kBfloat16);
  EXPECT_EQ(ParseDataType("fp32"), DataType::kFloat);
  EXPECT_EQ(ParseDataType("half"), DataType::kHalf);
  EXPECT_FALSE(ParseDataType("float128"));
  EXPECT_EQ(ElementSize(DataType::kUint64), 8);
  EXPECT_EQ(DataTypeName(DataType::kBfloat16), "bfloat16");
}

}  // namespace
}  // namespace primus::benchmark
