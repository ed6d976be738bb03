// Element types of `benchmark comm` (nccl-tests' -d names, in NCCL's enum
// order) and the verifiable data of -c: each rank fills its input from a
// formula, and each rank computes what it must receive without seeing the
// other ranks' buffers, so a wrong result is counted per element (#wrong).
//
// Reductions use V(r, i) = A(i) + B(r) with A, B in {-1, 0, 1} ({0, 1, 2} and
// {0, 1} for unsigned types) drawn from a hash: the sum over ranks is
// n*A(i) + sum_r B(r), known in O(count) whatever the rank count, and every
// partial sum is a small integer (exact in fp16/bf16 for a few hundred
// ranks; beyond that 16-bit floats are compared with a rounding allowance).
// Copies (all_gather, alltoall, broadcast, sendrecv) use a hash of (r, i)
// in [-2, 2] so that data landing at the wrong rank's place shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "benchmark/collective.h"

namespace primus::benchmark {

enum class DataType { kInt8, kUint8, kInt32, kUint32, kInt64, kUint64, kHalf, kFloat, kDouble, kBfloat16 };

std::string_view DataTypeName(DataType type);  // nccl-tests' spelling: "float", "bfloat16"
std::optional<DataType> ParseDataType(std::string_view text);
const std::vector<std::string>& DataTypeNames();
int ElementSize(DataType type);
int NcclDataType(DataType type);  // ncclDataType_t: the enum's own order

// The value rank `rank` puts at element `index` of its input for `op`.
int64_t InputValue(Collective op, int rank, size_t index, uint64_t seed, bool is_unsigned);

struct VerifiableSpec {
  Collective op;
  DataType type;
  int rank = 0;
  int nranks = 1;
  int root = 0;
  uint64_t seed = 0;
  CollectiveCounts counts;
};

// Writes `count` input elements of `rank` starting at element `first`.
void FillInput(const VerifiableSpec& spec, void* data, size_t first, size_t count);
// The input this rank sends: send_count elements.
std::vector<uint8_t> MakeInput(const VerifiableSpec& spec);
// What this rank must hold after the collective: recv_count elements.
std::vector<uint8_t> MakeExpected(const VerifiableSpec& spec);
// Elements of `got` that differ from `expected` (both recv_count long).
int64_t CountWrong(const VerifiableSpec& spec, const void* got, const void* expected);
// Alters element `index` of `data` (the test hook PRIMUS_BENCHMARK_CORRUPT_RANK).
void CorruptElement(DataType type, void* data, size_t index);

}  // namespace primus::benchmark
