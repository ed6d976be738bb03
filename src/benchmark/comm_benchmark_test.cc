// The nccl-tests procedure on a one-rank backend that performs every
// collective with memcpy: rows, sizes, counts, checks, the corruption hook
// and the text, without a network (multi-rank runs are the integration
// tests, with real gloo).
#include "benchmark/comm_benchmark.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

#include "util/strings.h"

namespace primus::benchmark {
namespace {

class OneRankBackend : public CommBackend {
 public:
  std::string Describe() const override { return "one-rank memcpy"; }
  RankDevice Device() const override { return {}; }
  Result<void*> Allocate(size_t bytes) override {
    memory_.emplace_back(bytes, 0);
    return static_cast<void*>(memory_.back().data());
  }
  Status Upload(void* buffer, const void* host, size_t bytes) override {
    std::memmove(buffer, host, bytes);
    return Status::Ok();
  }
  Status Download(void* host, const void* buffer, size_t bytes) override {
    std::memmove(host, buffer, bytes);
    return Status::Ok();
  }
  Status Zero(void* buffer, size_t bytes) override {
    std::memset(buffer, 0, bytes);
    return Status::Ok();
  }
  // With one rank every collective copies its input to its output.
  Status Start(Collective op, const void* send, void* recv, size_t count, DataType type, int root) override {
    ++started;
    if (break_results) return Status::Ok();  // leaves the output as it was: a broken library
    std::memmove(recv, send, count * static_cast<size_t>(ElementSize(type)));
    return Status::Ok();
  }
  Status Wait() override { return Status::Ok(); }
  Result<std::vector<double>> AllGather(const std::vector<double>& mine) override { return mine; }

  int started = 0;
  bool break_results = false;

 private:
  std::vector<std::vector<uint8_t>> memory_;
};

CommRequest SmallRequest() {
  CommRequest request;
  request.min_bytes = 64;
  request.max_bytes = 4096;
  request.step_factor = 4;
  request.iters = 3;
  request.warmup = 2;
  request.ops = AllCollectives();
  return request;
}

TEST(CommBenchmarkTest, EveryCollectiveRunsChecksAndPrints) {
  OneRankBackend backend;
  CommRequest request = SmallRequest();
  std::ostringstream out;
  CommRunRequest context;
  context.backend = backend.Describe();
  context.ranks = {{0, 1, "host", {}}};
  context.out = &out;
  auto sections = RunCommBenchmark(backend, request, context);
  ASSERT_TRUE(sections.ok()) << sections.error().message;
  ASSERT_EQ(sections->size(), 6u);
  for (const CommSection& section : *sections) {
    ASSERT_EQ(section.rows.size(), 4u) << "64, 256, 1024, 4096";
    EXPECT_EQ(section.errors, 0);
    EXPECT_EQ(section.rows[1].bytes, 256u);
    EXPECT_EQ(section.rows[1].out_of_place.wrong, 0);
    EXPECT_EQ(section.rows[1].in_place.wrong, InPlaceChecked(section.op) ? 0 : -1);
    EXPECT_GT(section.rows[3].out_of_place.time_us, 0);
  }
  // Per collective: 2 x 2 warm-up, then per row and mode 1 sync + 3 timed + 1
  // checked run (none in place for alltoall and sendrecv, as in nccl-tests).
  EXPECT_EQ(backend.started, 6 * (4 + 4 * 2 * 5) - 2 * 4);
  std::string text = out.str();
  EXPECT_EQ(Split(text, '\n').size() > 6 * 15, true);
  EXPECT_NE(text.find("# Collective test starting: sendrecv_perf"), std::string::npos);
  EXPECT_NE(text.find("# Out of bounds values : 0 OK"), std::string::npos);
}

TEST(CommBenchmarkTest, WrongResultsAreCountedAndCorruptionIsSeen) {
  OneRankBackend broken;
  broken.break_results = true;
  CommRequest request = SmallRequest();
  request.ops = {Collective::kAllReduce};
  CommRunRequest context;
  context.ranks = {{0, 1, "host", {}}};
  auto sections = RunCommBenchmark(broken, request, context);
  ASSERT_TRUE(sections.ok());
  EXPECT_EQ((*sections)[0].errors, 4) << "every out-of-place row; in place the input already is the output";
  EXPECT_GT((*sections)[0].rows[0].out_of_place.wrong, 0);

  OneRankBackend fine;
  context.corrupt_rank = 0;
  auto corrupted = RunCommBenchmark(fine, request, context);
  ASSERT_TRUE(corrupted.ok());
  EXPECT_EQ((*corrupted)[0].errors, 8);
  EXPECT_EQ((*corrupted)[0].rows[2].in_place.wrong, 1);
  EXPECT_EQ((*corrupted)[0].wrong_by_rank, std::vector<int64_t>{8});
}

TEST(CommBenchmarkTest, CheckOffShowsNotAvailable) {
  OneRankBackend backend;
  CommRequest request = SmallRequest();
  request.ops = {Collective::kBroadcast};
  request.check = 0;
  CommRunRequest context;
  context.ranks = {{0, 1, "host", {}}};
  auto sections = RunCommBenchmark(backend, request, context);
  ASSERT_TRUE(sections.ok());
  EXPECT_EQ((*sections)[0].rows[0].out_of_place.wrong, -1);
  EXPECT_EQ((*sections)[0].rows[0].root, 0);
  request.root = 3;
  auto bad_root = RunCommBenchmark(backend, request, context);
  ASSERT_FALSE(bad_root.ok());
  EXPECT_NE(bad_root.error().message.find("root"), std::string::npos);
}

}  // namespace
}  // namespace primus::benchmark
