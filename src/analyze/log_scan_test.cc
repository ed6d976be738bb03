#include "analyze/log_scan.h"

#include <gtest/gtest.h>

#include "analyze/log_report.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::analyze {
namespace {

class LogScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db_or = SignatureDb::Builtin();
    ASSERT_TRUE(db_or.ok()) << db_or.error().Format();
    db_ = std::make_unique<SignatureDb>(std::move(*db_or));
  }
  void Write(const std::string& relative, const std::string& text) {
    std::string path = JoinPath(dir_.path(), relative);
    ASSERT_TRUE(MakeDirs(DirName(path)).ok());
    ASSERT_TRUE(WriteFileAtomic(path, text).ok());
  }
  LogScan Scan() {
    auto sources = FindLogSources({dir_.path()});
    EXPECT_TRUE(sources.ok());
    return ScanLogs(*sources, *db_);
  }
  ScopedTempDir dir_{"logscan"};
  std::unique_ptr<SignatureDb> db_;
};

// A worker killed by the OOM killer writes nothing; its peer logs the broken
// connection, twice, even 3 ms before the agent records the kill (as happens
// for real). The agent's endings file names rank 1, and a cause (fatal) wins
// over a symptom (error) whatever the milliseconds say.
TEST_F(LogScanTest, KilledRankIsFirstThoughOnlyItsPeerComplained) {
  Write("logs/attempt_0/node1.rank0.log",
        "2026-11-24T10:00:00.100000 O step 1 loss 5.0\n"
        "2026-11-24T10:00:05.300000 E Traceback (most recent call last):\n"
        "2026-11-24T10:00:05.300100 E RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection "
        "closed by peer [10.0.0.2]:4242\n"
        "2026-11-24T10:00:05.300200 E RuntimeError: [pair.cc:598] Connection closed by peer [10.0.0.2]:4242\n");
  Write("logs/attempt_0/node1.rank1.log", "2026-11-24T10:00:00.100000 O step 1 loss 5.0\n");
  Write("logs/attempt_0/node1.endings.log",
        "2026-11-24T10:00:05.303000 E rank 1: ended with signal 9 (SIGKILL) (local rank 1, pid 77)\n"
        "2026-11-24T10:00:05.400000 E rank 0: ended with exit code 1 (local rank 0, pid 76)\n");
  LogScan scan = Scan();
  EXPECT_EQ(scan.files, 3u);
  EXPECT_EQ(scan.lines, 7u);
  ASSERT_EQ(scan.first_failures.size(), 1u);
  const FirstFailure& first = scan.first_failures[0];
  EXPECT_EQ(first.attempt, 0);
  EXPECT_EQ(first.where.rank, 1);
  EXPECT_EQ(first.where.host, "node1");
  EXPECT_EQ(first.where.file, "logs/attempt_0/node1.endings.log");
  EXPECT_EQ(first.where.line, 1u);
  ASSERT_GE(first.signature, 0);
  EXPECT_EQ(db_->signatures()[first.signature].id, "killed-sigkill");
  // Repeats grouped under one signature, listed by first occurrence.
  ASSERT_EQ(scan.hits.size(), 3u);
  EXPECT_EQ(db_->signatures()[scan.hits[0].signature].id, "gloo-peer-closed");
  EXPECT_EQ(scan.hits[0].count, 2u);
  EXPECT_EQ(scan.hits[0].ranks, (std::vector<int>{0}));
  EXPECT_EQ(scan.hits[0].first.line, 3u);
  EXPECT_EQ(db_->signatures()[scan.hits[1].signature].id, "killed-sigkill");
  EXPECT_EQ(db_->signatures()[scan.hits[2].signature].id, "worker-exit-nonzero");
  // Rank 0 has a known failure, so its traceback line is not listed as unexplained.
  EXPECT_TRUE(scan.unrecognised.empty());
  std::string report = FormatLogReport(scan, *db_);
  EXPECT_NE(report.find("First failure in attempt 0: rank 1 on node1 at 2026-11-24T10:00:05.303"), std::string::npos)
      << report;
  EXPECT_NE(report.find("fix: check `dmesg`"), std::string::npos) << report;
}

TEST_F(LogScanTest, UnknownErrorsStillNameTheFirstRankPerAttempt) {
  Write("run/attempt_0/h.rank0.log", "2026-11-24T10:00:02.000000 E warning: something odd, error code 17\n");
  Write("run/attempt_0/h.rank1.log",
        "2026-11-24T10:00:01.000000 O all fine\n2026-11-24T10:00:01.500000 E fatal: the widget broke\n");
  Write("run/attempt_1/h.rank0.log", "2026-11-24T10:01:00.000000 E CUDA out of memory. Tried to allocate 2 GiB\n");
  LogScan scan = Scan();
  ASSERT_EQ(scan.first_failures.size(), 2u);
  EXPECT_EQ(scan.first_failures[0].attempt, 0);
  EXPECT_EQ(scan.first_failures[0].where.rank, 1);
  EXPECT_EQ(scan.first_failures[0].signature, -1);
  EXPECT_EQ(scan.first_failures[0].where.text, "fatal: the widget broke");
  EXPECT_EQ(scan.first_failures[1].attempt, 1);
  EXPECT_EQ(db_->signatures()[scan.first_failures[1].signature].id, "gpu-out-of-memory");
  EXPECT_EQ(scan.unrecognised.size(), 2u);  // one line each from ranks 0 and 1 of attempt 0
}

// A Slurm job's .out interleaves every rank behind "[host:rank]" prefixes.
TEST_F(LogScanTest, InterleavedConsoleFileAttributesLinesToRanks) {
  Write("slurm-42.out",
        "[node2:5] ModuleNotFoundError: No module named 'apex'\n"
        "[node1:0] RuntimeError: Connection closed by peer [10.0.0.2]:1\n");
  LogScan scan = Scan();
  ASSERT_EQ(scan.first_failures.size(), 1u);
  EXPECT_EQ(scan.first_failures[0].where.rank, 5);  // no times: reading order
  EXPECT_EQ(scan.first_failures[0].where.host, "node2");
  EXPECT_EQ(db_->signatures()[scan.first_failures[0].signature].id, "module-not-found");
}

TEST_F(LogScanTest, MissingPathIsUnavailableNamingIt) {
  auto sources = FindLogSources({JoinPath(dir_.path(), "nope")});
  ASSERT_FALSE(sources.ok());
  EXPECT_EQ(sources.error().code, ExitCode::kUnavailable);
  EXPECT_NE(sources.error().message.find("nope: no such file or directory"), std::string::npos);
}

}  // namespace
}  // namespace primus::analyze
