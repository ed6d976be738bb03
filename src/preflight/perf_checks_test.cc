#include "preflight/perf_checks.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "processes.h"
#include "util/files.h"
#include "util/strings.h"
#include "wait_for.h"
#include "util/thread_signals.h"

namespace primus::preflight {
namespace {

std::vector<std::string> Names(const std::vector<CheckResult>& results) {
  std::vector<std::string> names;
  for (const CheckResult& r : results) names.push_back(r.name);
  return names;
}

TEST(PerfChecksTest, TestsAsPrimusNamesThem) {
  auto all = ParsePerfTests("all", PerfTests{});
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->gemm && all->all_reduce && all->all_to_all);
  auto some = ParsePerfTests(" GEMM , intra-alltoall", QuickPerfTests());
  ASSERT_TRUE(some.ok()) << some.error().Format();
  EXPECT_TRUE(some->gemm);
  EXPECT_FALSE(some->all_reduce);
  EXPECT_TRUE(some->all_to_all);
  EXPECT_TRUE(some->quick) << "the preset's sizes and iterations stay";
  EXPECT_EQ(some->sizes_mb, (std::vector<int>{64, 1024}));

  auto inter = ParsePerfTests("gemm,inter-allreduce,inter-ring-p2p", PerfTests{});
  ASSERT_TRUE(inter.ok()) << inter.error().Format();
  EXPECT_TRUE(inter->gemm && inter->inter_all_reduce && inter->inter_ring_p2p);
  EXPECT_FALSE(inter->all_reduce || inter->inter_all_to_all || inter->inter_p2p);
  EXPECT_TRUE(all->inter_all_reduce && all->inter_all_to_all && all->inter_p2p && all->inter_ring_p2p);
  EXPECT_TRUE(QuickPerfTests().inter_all_reduce) << "Primus's --quick: gemm, intra-allreduce, inter-allreduce";
  auto typo = ParsePerfTests("intra-allredcue", PerfTests{});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("did you mean 'intra-allreduce'"), std::string::npos) << typo.error().message;
  EXPECT_FALSE(ParsePerfTests(",,", PerfTests{}).ok());
}

TEST(PerfChecksTest, SizesAndDescription) {
  auto sizes = ParseSizesMb("2, 64,1024", "--comm-sizes-mb");
  ASSERT_TRUE(sizes.ok());
  EXPECT_EQ(*sizes, (std::vector<int>{2, 64, 1024}));
  auto bad = ParseSizesMb("64,1.5", "--comm-sizes-mb");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--comm-sizes-mb: '1.5' is not a whole number of MiB"), std::string::npos);
  EXPECT_EQ(DescribePerfTests(PerfTests{}), "gemm (bf16 8192^3, 20 iterations), all-reduce at 64 MiB");
  EXPECT_EQ(DescribePerfTests(QuickPerfTests()),
            "gemm (bf16 8192^3, 10 iterations), all-reduce at 64, 1024 MiB, inter-node all-reduce at 64, 1024 MiB");
  PerfTests split;
  split.intra_sizes_mb = {4, 32};
  split.inter_p2p = split.inter_ring_p2p = true;
  split.ring_sizes_mb = {5, 20};
  EXPECT_EQ(DescribePerfTests(split),
            "gemm (bf16 8192^3, 20 iterations), all-reduce at 4, 32 MiB, inter-node send/recv at 64 MiB, "
            "inter-node ring send/recv at 5, 20 MiB");
}

// One node: nothing between nodes is measured, and it says so.
TEST(PerfChecksTest, InterNodeTestsOnOneNodeAreSkipped) {
  platform::HostInfo cpu_only;
  PerfTests tests;
  tests.gemm = tests.all_reduce = false;
  tests.inter_all_reduce = tests.inter_p2p = true;
  std::vector<CheckResult> results = CheckPerf(cpu_only, "/nonexistent/primus-cli", 5, tests);
  ASSERT_EQ(Names(results), (std::vector<std::string>{"inter-allreduce", "inter-p2p"}));
  EXPECT_EQ(results[0].status, CheckStatus::kSkip);
  EXPECT_NE(results[0].value.find("one node"), std::string::npos) << results[0].value;
}

TEST(PerfChecksTest, WithoutGpusEachSelectedTestIsSkipped) {
  platform::HostInfo cpu_only;
  PerfTests tests;
  tests.all_to_all = true;
  std::vector<CheckResult> results = CheckPerf(cpu_only, "/nonexistent/primus-cli", 5, tests);
  EXPECT_EQ(Names(results), (std::vector<std::string>{"gemm", "intra-allreduce", "intra-alltoall"}));
  for (const CheckResult& r : results) EXPECT_EQ(r.status, CheckStatus::kSkip) << r.name;
  tests.gemm = tests.all_reduce = false;
  EXPECT_EQ(Names(CheckPerf(cpu_only, "/nonexistent/primus-cli", 5, tests)), std::vector<std::string>{"intra-alltoall"});
}

// Ctrl-C (here SIGTERM) during a benchmark run: the run ends at once (not at
// its timeout), the tests after it do not run, and the signal comes back.
// The benchmark is a stand-in for this binary that sleeps in a child of its own.
TEST(PerfChecksTest, ASignalEndsTheBenchmarkRunAndTheTests) {
  char dir[] = "/tmp/primus-perf-stop-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string binary = std::string(dir) + "/primus-cli";
  std::string sleeper_file = std::string(dir) + "/sleeper.pid";
  // The pid file appears whole (written aside, then renamed): the test signals
  // once it exists, which must not be while it is still empty.
  ASSERT_TRUE(WriteFileAtomic(binary, "#!/bin/sh\nsleep 60 &\necho $! > " + sleeper_file + ".tmp\nmv " + sleeper_file +
                                          ".tmp " + sleeper_file + "\nwait\n")
                  .ok());
  ASSERT_EQ(::chmod(binary.c_str(), 0755), 0);
  platform::HostInfo host;
  host.gpus.resize(2);
  PerfTests tests;  // gemm, then all-reduce
  std::thread sender([&] {
    BlockAllSignalsInThisThread();  // the signal is the process's, read by CheckPerf
    testing::WaitFor([&] { return PathExists(sleeper_file); }, 5);
    ::kill(::getpid(), SIGTERM);
  });
  int stop_signal = 0;
  auto start = std::chrono::steady_clock::now();
  std::vector<CheckResult> results = CheckPerf(host, binary, 120, tests, &stop_signal);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sender.join();
  EXPECT_EQ(stop_signal, SIGTERM);
  EXPECT_LT(seconds, 10);
  ASSERT_EQ(Names(results), std::vector<std::string>{"gemm"}) << "all-reduce ran after the stop";
  EXPECT_EQ(results[0].status, CheckStatus::kFail);
  EXPECT_EQ(results[0].value, "stopped by SIGTERM before it finished");
  Result<std::string> sleeper = ReadFile(sleeper_file);
  ASSERT_TRUE(sleeper.ok());
  pid_t child = static_cast<pid_t>(std::stol(std::string(Trim(*sleeper))));
  EXPECT_TRUE(testing::WaitFor([&] { return !testing::ProcessAlive(child); }, 5))
      << "the benchmark's child outlived the stop";
  std::filesystem::remove_all(dir);
}

TEST(PerfChecksTest, GemmVerdictAgainstThePeak) {
  EXPECT_EQ(GemmVerdict("gemm GPU0", 700, 1307).status, CheckStatus::kPass);
  EXPECT_EQ(GemmVerdict("gemm GPU0", 600, 1307).status, CheckStatus::kWarn);
  EXPECT_EQ(GemmVerdict("gemm GPU0", 200, 1307).status, CheckStatus::kFail);
}

}  // namespace
}  // namespace primus::preflight
