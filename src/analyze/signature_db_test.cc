#include "analyze/signature_db.h"

#include <gtest/gtest.h>

namespace primus::analyze {
namespace {

std::string IdOf(const SignatureDb& db, const std::string& line) {
  std::vector<int> hits = db.Match(line);
  return hits.empty() ? "" : db.signatures()[hits.front()].id;
}

// The real-world messages quoted in ../shared/reference/hardware.md (and the
// exact text of PyTorch, NCCL, gloo and the kernel), each to its signature.
TEST(SignatureDbTest, BuiltinDatabaseRecognisesTheQuotedMessages) {
  auto db = SignatureDb::Builtin();
  ASSERT_TRUE(db.ok()) << db.error().Format();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, "
       "unhandled system error, NCCL version 2.18.1",
       "nccl-unhandled-system-error"},
      {"RuntimeError: NCCL communicator was aborted on rank 3. Original reason for failure was: remote process exited "
       "or there was a network error",
       "nccl-remote-error"},
      {"node07:1234:1300 [0] NCCL WARN Connect to 10.1.2.3<45678> failed : Connection refused", "nccl-connect-refused"},
      {"torch.distributed.DistNetworkError: The client socket has failed to connect to [node01]:29500 (errno: 111 - "
       "Connection refused).",
       "store-connect-failed"},
      {"RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
       "failed to bind to [::]:29500 (errno: 98 - Address already in use).",
       "port-in-use"},
      {"RuntimeError: CUDA error: invalid device ordinal", "invalid-device-ordinal"},
      {"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "gpu-out-of-memory"},
      {"HIP out of memory. Tried to allocate 1.50 GiB", "gpu-out-of-memory"},
      {"[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=112, OpType=ALLREDUCE, "
       "NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600046 milliseconds before timing out.",
       "nccl-watchdog-timeout"},
      {"node03:88:99 [2] NCCL INFO NET/IB : Got completion from peer 10.0.0.5<37082> with status=12 opcode=0 len=0",
       "nccl-ib-completion-error"},
      {"node03:88:99 [0] NCCL WARN Bootstrap : no socket interface found", "nccl-no-socket-interface"},
      {"Missing \"iommu=pt\" from kernel command line which can lead to system instablity or hang!", "amd-iommu-not-pt"},
      {"NUMA auto balancing enabled which can lead to performance degradation", "amd-numa-balancing"},
      {"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", "no-gpu-code-object"},
      {"ModuleNotFoundError: No module named 'megatron'", "module-not-found"},
      {"Signal 11 (SIGSEGV) received by PID 4242", "segfault"},
      {"NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.", "nvidia-xid-79"},
      {"ended with signal 9 (SIGKILL) (local rank 1, pid 77)", "killed-sigkill"},
      {"ValueError: expected a positive learning rate", "python-exception"},
      {"hung: no output and no heartbeat for 30 s; stopped by the agent (local rank 0, pid 9)", "hang-watchdog"},
      {"ended with exit code 3 (local rank 2, pid 12)", "worker-exit-nonzero"},
  };
  for (const auto& [line, id] : cases) EXPECT_EQ(IdOf(*db, line), id) << line;
  // Ordinary training output matches nothing.
  for (const char* line : {"step 10/200 loss 4.5191 lr 2.00e-03 tok/s 33367", "ended with exit code 0",
                           "NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>", "saved checkpoint step_20.pt"}) {
    EXPECT_EQ(IdOf(*db, line), "") << line;
  }
}

TEST(SignatureDbTest, ErrorsNameTheFileLineAndColumn) {
  auto bad_regex = SignatureDb::Parse(
      "signatures:\n"
      "  - id: ok\n    pattern: 'fine'\n    severity: fatal\n    meaning: m\n    fix: f\n"
      "  - id: broken\n    pattern: 'unclosed ('\n    severity: fatal\n    meaning: m\n    fix: f\n",
      "my.yaml");
  ASSERT_FALSE(bad_regex.ok());
  EXPECT_EQ(bad_regex.error().code, ExitCode::kConfig);
  EXPECT_NE(bad_regex.error().message.find("my.yaml:8:"), std::string::npos) << bad_regex.error().message;
  EXPECT_NE(bad_regex.error().message.find("'broken'"), std::string::npos) << bad_regex.error().message;

  auto no_fix = SignatureDb::Parse("signatures:\n  - id: x\n    pattern: 'a'\n    severity: fatal\n    meaning: m\n",
                                   "my.yaml");
  ASSERT_FALSE(no_fix.ok());
  EXPECT_NE(no_fix.error().message.find("my.yaml:2:"), std::string::npos) << no_fix.error().message;
  EXPECT_NE(no_fix.error().message.find("has no fix"), std::string::npos) << no_fix.error().message;

  auto bad_severity = SignatureDb::Parse(
      "signatures:\n  - id: x\n    pattern: 'a'\n    severity: bad\n    meaning: m\n    fix: f\n", "my.yaml");
  ASSERT_FALSE(bad_severity.ok());
  EXPECT_NE(bad_severity.error().message.find("my.yaml:4:"), std::string::npos) << bad_severity.error().message;

  auto duplicate = SignatureDb::Parse(
      "signatures:\n  - {id: x, pattern: a, severity: fatal, meaning: m, fix: f}\n"
      "  - {id: x, pattern: b, severity: fatal, meaning: m, fix: f}\n",
      "my.yaml");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.error().message.find("also used at my.yaml:2"), std::string::npos) << duplicate.error().message;

  auto empty = SignatureDb::Parse("other: 1\n", "my.yaml");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("no 'signatures:' list"), std::string::npos);
}

TEST(SignatureDbTest, MatchReturnsEveryMatchingSignatureInFileOrder) {
  auto db = SignatureDb::Parse(
      "signatures:\n  - {id: specific, pattern: 'Connection closed by peer', severity: error, meaning: m, fix: f}\n"
      "  - {id: general, pattern: '^RuntimeError: ', severity: fatal, meaning: m, fix: f}\n",
      "t.yaml");
  ASSERT_TRUE(db.ok()) << db.error().Format();
  EXPECT_EQ(db->Match("RuntimeError: [pair.cc:598] Connection closed by peer [10.0.0.2]:4242"),
            (std::vector<int>{0, 1}));
  EXPECT_EQ(db->Match("RuntimeError: other"), (std::vector<int>{1}));
  EXPECT_TRUE(db->Match("nothing here").empty());
}

}  // namespace
}  // namespace primus::analyze
